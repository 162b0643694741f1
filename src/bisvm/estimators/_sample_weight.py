"""Row weights of the smoothed-SVM estimators (:class:`ElasticNetSVC`,
:class:`BilevelSVC`): validation at the boundary, and the folds that carry them."""

from __future__ import annotations

import numpy as np

from ..selection.bilevel import Fold

__all__ = ["checked_sample_weight", "weighted_folds"]


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


def weighted_folds(X, y, sw, splits):
    """The :class:`Fold` of each (training rows, validation rows) pair, with the rows'
    weights; a side whose weights are all zero is refused (it has no loss or no
    criterion)."""
    if sw is None:
        return tuple(Fold(X[tr], y[tr], X[va], y[va]) for tr, va in splits)
    for tr, va in splits:
        if not (sw[tr].sum() > 0 and sw[va].sum() > 0):
            raise ValueError("sample_weight is zero on every training or every validation "
                             "row of a fold: give some weight to more rows, or use fewer "
                             "folds (cv) or a larger validation_fraction")
    return tuple(Fold(X[tr], y[tr], X[va], y[va], sw[tr], sw[va]) for tr, va in splits)
