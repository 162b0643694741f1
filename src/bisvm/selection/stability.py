r"""Complementary-pairs stability selection: the subsamples, the selection frequencies
and the error bounds behind :class:`bisvm.StabilitySelection`.

Stability selection (Meinshausen & Bühlmann 2010, "Stability selection", JRSS-B 72:417)
runs a feature-selection procedure :math:`\hat S` on many random subsamples of about
half the rows and keeps the features selected on a share at least :math:`\tau` of them.
Its complementary-pairs form (Shah & Samworth 2013, "Variable selection with error
control: another look at stability selection", JRSS-B 75:55) draws the subsamples in
:math:`B` pairs :math:`(A_{2j-1}, A_{2j})` of disjoint sets of :math:`\lfloor n/2\rfloor`
rows each and reads the selection frequency

.. math::
    \hat\Pi_B(k) = \frac{1}{2B}\sum_{j=1}^{2B} \mathbf 1\{k \in \hat S(A_j)\},
    \qquad \hat S^{\rm CPSS}_\tau = \{k : \hat\Pi_B(k) \ge \tau\}.

Why pairs: two disjoint halves of i.i.d. rows give independent selections, so the
share of pairs selecting :math:`k` on *both* halves, :math:`\tilde\Pi_B(k)`, has mean
:math:`p_k^2` where :math:`p_k = P(k \in \hat S(A))` on :math:`\lfloor n/2\rfloor` rows.
Since :math:`\hat\Pi_B(k) \le (1 + \tilde\Pi_B(k))/2`, Markov's inequality gives
:math:`P(\hat\Pi_B(k) \ge \tau) \le p_k^2/(2\tau - 1)` for :math:`\tau \in (1/2, 1]`,
with no assumption on the procedure or the model and for every :math:`B \ge 1`.

This module holds the pieces that do not depend on an estimator: the pairs
(:func:`complementary_pairs`, stratified by class, or drawn by sample groups), the
selected features of one fitted estimator (:func:`selected_features`), the fit of one
subsample (:func:`fit_subsample`, a joblib task) and the two bounds
(:func:`false_selection_bound`, :func:`unimodal_false_selection_bound`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.pipeline import Pipeline

__all__ = [
    "complementary_pairs",
    "selected_features",
    "fit_subsample",
    "effective_threshold",
    "false_selection_bound",
    "unimodal_false_selection_bound",
]


def _strata_of_units(labels, unit_index, n_units):
    """Stratum code per sampling unit: its class when every row of the unit has one
    class, else one shared code for the mixed units (``labels=None``: one stratum)."""
    if labels is None:
        return np.zeros(n_units, dtype=np.intp)
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.ravel()
    lo = np.full(n_units, np.iinfo(np.intp).max)
    hi = np.full(n_units, -1)
    np.minimum.at(lo, unit_index, codes)
    np.maximum.at(hi, unit_index, codes)
    mixed = int(codes.max()) + 1
    return np.where(lo == hi, lo, mixed)


def complementary_pairs(n_samples, n_pairs, *, labels=None, groups=None, sample_fraction=0.5,
                        random_state=None):
    r"""Draw ``n_pairs`` pairs of disjoint subsamples of the rows.

    Each subsample holds :math:`m = \lfloor f N \rfloor` sampling units (rows, or sample
    groups when ``groups`` is given), with :math:`f` = ``sample_fraction``; for
    :math:`f = 1/2` the two halves of a pair are complementary (with an odd count, one
    unit is in neither), as in Shah & Samworth (2013). A pair is drawn by systematic
    stratified sampling: the units are ordered by stratum (the strata in a random order)
    and at random within each stratum, :math:`2m` of them are taken at evenly spaced
    positions :math:`\lfloor (i + u) N/(2m) \rfloor` (one uniform offset :math:`u`), and
    they are dealt alternately to the two subsamples. Every stratum (class) thus gets
    :math:`f` of its units in each subsample, up to one, and every unit is equally
    likely to be in either.

    Parameters
    ----------
    n_samples : int
    n_pairs : int
        :math:`B`.
    labels : array-like of shape (n_samples,), optional
        Class labels to stratify by (classification); None: no strata (regression).
    groups : array-like of shape (n_samples,), optional
        Sample groups (e.g. patients with several samples): the sampling unit becomes
        the group, so no group has rows on both sides of a pair, which keeps the two
        selections of a pair independent when rows of a group are not. The strata are
        then the groups' classes (a group whose rows hold several classes goes to a
        shared stratum), and the subsample sizes in rows are only about :math:`fN`.
    sample_fraction : float in (0, 1/2]
        :math:`f`. Below 1/2 the pairs stay disjoint but no longer cover the rows.
    random_state : int, RandomState or None

    Returns
    -------
    list of tuple (ndarray, ndarray)
        For each pair, the sorted row indices of its two subsamples.
    """
    from sklearn.utils import check_random_state

    rng = check_random_state(random_state)
    if groups is None:
        unit_index = np.arange(n_samples)
        n_units = n_samples
        what = "samples"
    else:
        groups = np.asarray(groups)
        if groups.shape != (n_samples,):
            raise ValueError(
                f"groups must hold one group per sample ({n_samples}), got shape {groups.shape}"
            )
        _, unit_index = np.unique(groups, return_inverse=True)
        unit_index = unit_index.ravel()
        n_units = int(unit_index.max()) + 1 if n_samples else 0
        what = "sample groups"
    if not 0 < sample_fraction <= 0.5:
        raise ValueError(f"sample_fraction must be in (0, 0.5], got {sample_fraction!r}")
    m = int(math.floor(sample_fraction * n_units))
    if m < 1:
        raise ValueError(
            f"stability selection needs at least {math.ceil(1 / sample_fraction)} "
            f"{what} to draw two disjoint subsamples with sample_fraction={sample_fraction}; "
            f"got {n_units} {what[:-1] if n_units == 1 else what}"
        )
    strata = _strata_of_units(labels, unit_index, n_units)
    n_strata = int(strata.max()) + 1
    # rows of each unit, in row order, to expand a set of units into rows
    row_order = np.argsort(unit_index, kind="stable")
    bounds = np.searchsorted(unit_index[row_order], np.arange(n_units + 1))
    step = n_units / (2 * m)
    pairs = []
    for _ in range(n_pairs):
        stratum_rank = rng.permutation(n_strata)[strata]
        order = np.lexsort((rng.random(n_units), stratum_rank))
        pos = np.floor((np.arange(2 * m) + rng.random()) * step).astype(np.intp)
        chosen = order[pos]
        halves = []
        for units in (chosen[0::2], chosen[1::2]):
            rows = np.concatenate([row_order[bounds[u]:bounds[u + 1]] for u in units])
            halves.append(np.sort(rows))
        pairs.append(tuple(halves))
    return pairs


def selected_features(estimator, n_features):
    """Boolean mask of the features a fitted estimator selected.

    Read, in this order, from ``get_support()`` (scikit-learn selectors, bisvm's
    sparse estimators), ``support_``, the nonzero columns of ``coef_`` (in any class
    row), or the positive ``feature_importances_``. A :class:`~sklearn.pipeline.Pipeline`
    is read from its last step, whose columns are traced back to the input through the
    earlier steps' ``get_feature_names_out``: this holds for steps that keep or select
    columns (scalers, imputers, selectors), not for steps that mix them (PCA), which are
    refused.

    Raises
    ------
    TypeError
        When the estimator exposes none of them.
    """
    mask = None
    if hasattr(estimator, "get_support"):
        mask = np.asarray(estimator.get_support(), dtype=bool)
    elif hasattr(estimator, "support_"):
        mask = np.asarray(estimator.support_, dtype=bool)
    elif hasattr(estimator, "coef_"):
        coef = estimator.coef_
        coef = coef.toarray() if sp.issparse(coef) else np.asarray(coef)
        mask = np.any(np.atleast_2d(coef) != 0, axis=0)
    elif hasattr(estimator, "feature_importances_"):
        mask = np.asarray(estimator.feature_importances_) > 0
    elif isinstance(estimator, Pipeline):
        mask = _pipeline_selection(estimator, n_features)
    else:
        raise TypeError(
            f"{type(estimator).__name__} exposes no selection: stability selection needs "
            "an estimator with get_support(), support_, coef_ or feature_importances_"
        )
    if mask.shape != (n_features,):
        raise ValueError(
            f"{type(estimator).__name__} reports a selection of shape {mask.shape} for "
            f"{n_features} features"
        )
    return mask


_CONTROLLER = []


def _thread_controller():
    """This process's thread-pool controller, found once: finding the libraries reads
    the process's memory map, which costs more than a small fit."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def fit_subsample(estimator, X, y, rows, fit_params, seed):
    """Fit one subsample and return what was selected (a joblib task).

    ``estimator`` is a fresh clone; ``seed`` (an int, or None to leave it alone) is set
    as its ``random_state`` when that parameter exists and is None, so that the fit is a
    pure function of its arguments whatever process runs it. BLAS is held to one thread
    during the fit: the parallelism of stability selection is across subsamples, and the
    same thread count in every process keeps the floating-point results identical for
    every ``n_jobs``. ``fit_params`` holds arrays with one entry per row (sliced here).

    Returns
    -------
    mask : ndarray of bool, shape (n_features,)
    caught : list of (category, str)
        The warnings the fit raised (first line of each), for the caller to summarise.
    """
    if seed is not None and "random_state" in estimator.get_params(deep=False) \
            and estimator.get_params(deep=False)["random_state"] is None:
        estimator.set_params(random_state=int(seed))
    params = {k: np.asarray(v)[rows] for k, v in fit_params.items()}
    with warnings.catch_warnings(record=True) as caught, \
            _thread_controller().limit(limits=1, user_api="blas"):
        warnings.simplefilter("always")
        estimator.fit(X[rows], y[rows], **params)
    mask = selected_features(estimator, X.shape[1])
    return mask, [(w.category, str(w.message).split("\n")[0]) for w in caught]


def effective_threshold(threshold, n_pairs):
    r"""The smallest frequency :math:`\hat\Pi_B` can take that is at least ``threshold``:
    :math:`\lceil 2B\tau\rceil/(2B)`. It selects exactly the features ``threshold``
    selects (the frequencies are multiples of :math:`1/(2B)`)."""
    k = math.ceil(2 * n_pairs * threshold - 1e-9)
    return k / (2 * n_pairs)


def false_selection_bound(average_selected, n_features, threshold):
    r"""Shah & Samworth's (2013) bound on the expected number of falsely selected
    features, under Meinshausen & Bühlmann's (2010) assumptions.

    .. math::
        E\,|\hat S^{\rm CPSS}_\tau \cap N| \le \frac{q^2}{(2\tau - 1)\,p},
        \qquad \tau \in (1/2, 1],

    with :math:`q = E|\hat S(A)|` the mean number of features the procedure selects on
    :math:`\lfloor n/2\rfloor` rows, :math:`p` the number of features and :math:`N` the
    noise features. Shah & Samworth's Theorem 1 holds with no assumption:
    :math:`E|\hat S^{\rm CPSS}_\tau \cap L_\theta| \le \theta\,E|\hat S(A) \cap
    L_\theta|/(2\tau - 1)` for the features :math:`L_\theta = \{k : p_k \le \theta\}`
    selected on a half-sample with probability at most :math:`\theta`. Taking
    :math:`\theta = q/p` and Meinshausen & Bühlmann's two assumptions (the selections of
    the noise features are exchangeable, and the procedure is not worse than random
    guessing), every noise feature has :math:`p_k \le q/p`, so :math:`N \subseteq
    L_{q/p}`; with :math:`E|\hat S(A) \cap L_\theta| \le q` this is the bound above, the
    same as Meinshausen & Bühlmann's Theorem 1, now for the complementary pairs and any
    number of pairs :math:`B`. The estimator passes the empirical :math:`\hat q` of its
    :math:`2B` subsamples for :math:`q`.

    Parameters
    ----------
    average_selected : float
        :math:`q`.
    n_features : int
        :math:`p`.
    threshold : float in (0.5, 1]
        :math:`\tau`.
    """
    if not 0.5 < threshold <= 1:
        raise ValueError(f"threshold must be in (0.5, 1] for the bound, got {threshold!r}")
    return float(average_selected) ** 2 / ((2 * threshold - 1) * n_features)


def unimodal_false_selection_bound(average_selected, n_features, threshold, n_pairs):
    r"""Shah & Samworth's (2013) tighter bound when the simultaneous selection
    proportions are unimodal, under the same assumptions as
    :func:`false_selection_bound`.

    If, for every feature of :math:`L_\theta`, the distribution of
    :math:`\tilde\Pi_B(k)` (the share of pairs selecting :math:`k` on both halves) is
    unimodal, Shah & Samworth show
    :math:`E|\hat S^{\rm CPSS}_\tau \cap L_\theta| \le C(\tau, B)\,\theta\,E|\hat S(A)
    \cap L_\theta|` with

    .. math::
        C(\tau, B) = \begin{cases}
        \dfrac{1}{2(2\tau - 1 - 1/(2B))} & \text{if } \tau \in
            \big(\min(\tfrac12 + \theta^2, \tfrac12 + \tfrac1{2B} + \tfrac34\theta^2),
            \tfrac34\big], \\[1ex]
        \dfrac{4(1 - \tau + 1/(2B))}{1 + 1/B} & \text{if } \tau \in (\tfrac34, 1],
        \end{cases}

    for :math:`\theta \le 1/\sqrt3`. With :math:`\theta = q/p` as in
    :func:`false_selection_bound` this bounds the expected number of false selections by
    :math:`C(\tau, B)\,q^2/p`. :math:`\tau` is first raised to
    :func:`effective_threshold` (the same selected set), the grid of values
    :math:`\hat\Pi_B` takes on which the bound is stated.

    Returns
    -------
    float
        The bound, or NaN when :math:`\tau` or :math:`\theta` is outside the range
        where it is stated.
    """
    if not 0.5 < threshold <= 1:
        raise ValueError(f"threshold must be in (0.5, 1] for the bound, got {threshold!r}")
    q, p, B = float(average_selected), int(n_features), int(n_pairs)
    theta = q / p
    tau = effective_threshold(threshold, B)
    if theta > 1 / math.sqrt(3):
        return math.nan
    if tau <= 0.75:
        low = min(0.5 + theta**2, 0.5 + 1 / (2 * B) + 0.75 * theta**2)
        if tau <= low:
            return math.nan
        c = 1 / (2 * (2 * tau - 1 - 1 / (2 * B)))
    else:
        c = 4 * (1 - tau + 1 / (2 * B)) / (1 + 1 / B)
    return c * q**2 / p


def _pipeline_selection(pipeline, n_features):
    """The last step's selection of a fitted ``pipeline``, as a mask over its input
    columns: the earlier steps' output names must all be input column names."""
    names = getattr(pipeline, "feature_names_in_", None)
    if names is None:
        names = np.asarray([f"x{j}" for j in range(n_features)], dtype=object)
    names = np.asarray(names, dtype=object)
    try:
        out = np.asarray(pipeline[:-1].get_feature_names_out(names), dtype=object)
    except (AttributeError, TypeError, ValueError) as exc:
        raise TypeError(
            "a Pipeline's selection is read from its last step, traced back through the "
            "earlier steps' get_feature_names_out, which failed: " + str(exc)
        ) from exc
    column = {name: j for j, name in enumerate(names)}
    unknown = [str(name) for name in out if name not in column]
    if unknown:
        raise TypeError(
            "a Pipeline's selection can be read only through steps that keep or select "
            f"input columns; its steps make new features ({', '.join(unknown[:3])})"
        )
    inner = selected_features(pipeline[-1], len(out))
    mask = np.zeros(n_features, dtype=bool)
    mask[[column[name] for name in out[inner]]] = True
    return mask
