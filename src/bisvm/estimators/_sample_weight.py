"""Row weights of the smoothed-SVM estimators (:class:`ElasticNetSVC`,
:class:`BilevelSVC`): validation at the boundary. The folds that carry them are built by
:func:`bisvm.selection.staged.weighted_folds`."""

from __future__ import annotations

import numpy as np

__all__ = ["checked_sample_weight"]


def checked_sample_weight(sample_weight, y, classes):
    """Validated row weights (None stays None): finite, non-negative, one per row, and
    some positive weight in every class."""
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=float)
    if sw.ndim != 1 or sw.shape[0] != y.shape[0]:
        raise ValueError(f"sample_weight must have shape ({y.shape[0]},), got {sw.shape}")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight must be finite (no NaN or infinity)")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be non-negative")
    for c in classes:
        if not np.any(sw[y == c] > 0):
            raise ValueError(f"sample_weight is zero on every row of class {c!r}: "
                             "give it a non-zero weight or drop the class")
    return sw

