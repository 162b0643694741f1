"""What ``bisvm select`` shares between its classification path
(:mod:`bisvm.cli.select`) and its regression path (:mod:`bisvm.cli.select_regression`):
the run record, the input record, the listing of named entries and the size limits.
Standard library at import (``bisvm --help`` must not load numpy)."""

from __future__ import annotations

import dataclasses

from . import common

__all__ = ["LIST_ALL_FEATURES_MAX", "PLOT_FEATURES_MAX", "SelectRun", "input_record",
           "listed_by_name", "frequency_plots"]

# JSON records list a value per feature (coefficients, penalty weights, scores) for every
# feature up to this many features, for the selected ones beyond (an svmlight file can
# have millions of features).
LIST_ALL_FEATURES_MAX = 1000

# Plots draw at most this many features (importance bars, regularisation paths): a
# figure of thousands of bars or lines shows nothing.
PLOT_FEATURES_MAX = 40


@dataclasses.dataclass(frozen=True)
class SelectRun:
    """What :func:`run_select` returns: the JSON-able ``result`` record and, for
    ``bisvm report``, the fitted estimator, the grid (None under ``no_grid`` and for
    regression), the feature names, the scaled splits, the ±1 target's labels (None for
    regression) and the fitted StabilitySelection (None without ``stability``). The
    record's ``task`` says which it was."""

    result: dict
    estimator: object
    grid: object
    names: list
    X_train: object
    X_test: object
    y_train: object
    y_test: object
    binary_target: object
    stability: object = None


def input_record(X, X_model):
    """What was read and what the estimator was given (its type: a sparse X must reach
    the estimator as a sparse matrix)."""
    import scipy.sparse as sp

    n, d = X.shape
    rec = {"sparse": bool(sp.issparse(X)), "estimator_input": type(X_model).__name__}
    if sp.issparse(X):
        rec.update(format=X.format, stored_values=int(X.nnz), density=X.nnz / (n * d))
    return rec


def listed_by_name(keys, values, d, order, names, group_names):
    """``{name: value}`` of an estimator record keyed by its names (``x{j}`` for feature
    ``j``, group names, ``intercept``), with the user's feature names; above
    :data:`LIST_ALL_FEATURES_MAX` features only the selected features (indices ``order``)
    and the entries that are not features."""
    import numpy as np

    values = np.ravel(values)
    pairs = list(zip(keys, values))
    if d > LIST_ALL_FEATURES_MAX and len(keys) > LIST_ALL_FEATURES_MAX:
        keep = {f"x{j}" for j in order}
        pairs = [(k, v) for k, v in pairs
                 if k in keep or not (str(k)[:1] == "x" and str(k)[1:].isdigit())]
    return {common.feature_key(k, names, group_names): float(v) for k, v in pairs}


def frequency_plots(est, names, stability, out, bar, *, tick_always=False):
    """``selection_frequency.png`` (the fold models' selection frequencies, when the
    estimator has them) and ``stability.png`` (with a stability selection); ``bar(1)``
    after each (after each slot with ``tick_always``). Returns the paths written."""
    from .. import plots

    written = []
    freq = getattr(est, "selection_frequency_", None)
    if freq is not None:
        ax = plots.plot_selection_frequency(names, freq, max_bars=PLOT_FEATURES_MAX,
                                            title="Selection frequency over the fold models")
        written.append(str(plots.save(ax, out / "selection_frequency.png")))
    if freq is not None or tick_always:
        bar(1)
    if stability is not None:
        ax = plots.plot_selection_frequency(names, stability.selection_frequency_,
                                            threshold=stability.threshold,
                                            max_bars=PLOT_FEATURES_MAX,
                                            title="Stability selection")
        written.append(str(plots.save(ax, out / "stability.png")))
    if stability is not None or tick_always:
        bar(1)
    return written
