r""":class:`StabilitySelection`: complementary-pairs stability selection around any
selecting estimator (Meinshausen & Bühlmann 2010; Shah & Samworth 2013), a scikit-learn
selector that predicts with its estimator refitted on the stable features.

The subsamples, frequencies and bounds are in :mod:`bisvm.selection.stability`; this
module holds the estimator and the two intercept-only models it falls back on when no
feature is stable (:class:`PriorClassifier`, :class:`MeanRegressor`).
"""

from __future__ import annotations

import inspect
import time
import warnings
from copy import deepcopy
from numbers import Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    RegressorMixin,
    clone,
    is_classifier,
)
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    has_fit_parameter,
    validate_data,
)

from ..selection.stability import (
    complementary_pairs,
    false_selection_bound,
    fit_subsample,
    unimodal_false_selection_bound,
)
from ._constraints import N_JOBS, NumberInterval, int_at_least
from ._docs import method_doc

__all__ = ["StabilitySelection", "PriorClassifier", "MeanRegressor", "default_estimator"]


def default_estimator():
    """The estimator ``StabilitySelection(estimator=None)`` runs on each subsample:
    bisvm's :class:`~bisvm.estimators.sparse.BilevelSVC` with its defaults."""
    from .sparse import BilevelSVC

    return BilevelSVC()


def _weights(sample_weight, n):
    """Validated row weights (None stays None): finite, non-negative, one per row, some
    positive."""
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=float)
    if sw.ndim != 1 or sw.shape[0] != n:
        raise ValueError(f"sample_weight must have shape ({n},), got {sw.shape}")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight must be finite (no NaN or infinity)")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be non-negative")
    if not np.any(sw > 0):
        raise ValueError("sample_weight is zero on every row")
    return sw


class PriorClassifier(ClassifierMixin, BaseEstimator):
    """The classifier without features: it predicts the (weighted) majority class and
    the class shares as probabilities, whatever the row.

    :class:`StabilitySelection` fits it as ``estimator_`` when no feature is stable, as
    glmnet returns its intercept-only model at :math:`\\lambda_{\\max}`. X is read only
    for its number of rows (it may have no column).

    Attributes
    ----------
    classes_ : ndarray
    class_prior_ : ndarray of shape (n_classes,)
        Share of each class in the (weighted) training rows.
    """

    def fit(self, X, y, sample_weight=None):
        """Store the classes and their (weighted) shares; returns self."""
        X = check_array(X, accept_sparse=True, ensure_min_features=0, dtype=None)
        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
        counts = np.bincount(codes.ravel(), weights=sw, minlength=self.classes_.size)
        self.class_prior_ = counts / counts.sum()
        return self

    def _rows(self, X):
        check_is_fitted(self, "class_prior_")
        return check_array(X, accept_sparse=True, ensure_min_features=0, dtype=None).shape[0]

    def predict_proba(self, X):
        """The class shares, on every row."""
        return np.tile(self.class_prior_, (self._rows(X), 1))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def decision_function(self, X):
        """The log-odds of the class shares: :math:`\\log(\\pi_1/\\pi_0)` for two
        classes (shape (n,)), else :math:`\\log\\pi_k` (shape (n, n_classes))."""
        with np.errstate(divide="ignore"):
            logp = np.log(self.class_prior_)
        n = self._rows(X)
        if self.classes_.size == 2:
            return np.full(n, logp[1] - logp[0])
        return np.tile(logp, (n, 1))

    def predict(self, X):
        """The majority class (the first in ``classes_`` on a tie), on every row."""
        return np.full(self._rows(X), self.classes_[np.argmax(self.class_prior_)])


class MeanRegressor(RegressorMixin, BaseEstimator):
    """The regressor without features: it predicts the (weighted) mean target.

    Attributes
    ----------
    constant_ : float
    """

    def fit(self, X, y, sample_weight=None):
        """Store the (weighted) mean of y; returns self."""
        check_array(X, accept_sparse=True, ensure_min_features=0, dtype=None)
        self.constant_ = float(np.average(np.asarray(y, dtype=float), weights=sample_weight))
        return self

    def predict(self, X):
        """The mean, on every row."""
        check_is_fitted(self, "constant_")
        n = check_array(X, accept_sparse=True, ensure_min_features=0, dtype=None).shape[0]
        return np.full(n, self.constant_)


def _delegates(method):
    """``available_if`` test: the fitted ``estimator_`` (else the estimator to be fitted)
    has ``method``."""

    def check(self):
        est = getattr(self, "estimator_", None)
        if est is None:
            est = self._base()
        getattr(est, method)
        return True

    return check


class StabilitySelection(SelectorMixin, MetaEstimatorMixin, BaseEstimator):
    r"""Complementary-pairs stability selection around a selecting estimator.

    The estimator is fitted on :math:`2B` subsamples drawn in :math:`B` = ``n_pairs``
    pairs of disjoint halves of the rows (:math:`\lfloor n/2\rfloor` rows each; by class
    for a classifier, by sample ``groups`` when given;
    :func:`~bisvm.selection.stability.complementary_pairs`). A feature's selection
    frequency is the share of the :math:`2B` fits that select it, and the stable set is
    the features of frequency at least :math:`\tau` = ``threshold`` (Shah & Samworth
    2013, "Variable selection with error control: another look at stability selection";
    Meinshausen & Bühlmann 2010, "Stability selection"). The estimator is then refitted
    on all rows, restricted to the stable features, so that the selector predicts.

    Why: a selection made once depends on the sample; one made on many half-samples
    keeps the features that do not, and its expected number of false selections is
    bounded by :math:`q^2/((2\tau - 1)p)` (``false_selection_bound_``) for any
    selecting procedure that meets the assumptions stated there.

    Parameters
    ----------
    estimator : estimator, default=None
        Fitted on each subsample (a clone); what it selects is read from
        ``get_support()``, ``support_``, the nonzero columns of ``coef_`` or the
        positive ``feature_importances_``, or, for a Pipeline, from its last step
        traced back through steps that keep or select columns
        (:func:`~bisvm.selection.stability.selected_features`). None:
        :func:`default_estimator`, bisvm's ``BilevelSVC()`` (see the Notes). When its
        ``random_state`` is None, each fit gets its own seed drawn from
        ``random_state``.
    n_pairs : int, default=50
        :math:`B`, the number of complementary pairs (:math:`2B` fits).
    threshold : float in (0.5, 1], default=0.7
        :math:`\tau`: a feature is stable when selected by at least this share of the
        fits. The bounds need :math:`\tau > 1/2`; Meinshausen & Bühlmann advise
        :math:`\tau \in [0.6, 0.9]`, where the selection varies little. The default
        0.7 halves the false-selection bound of 0.6 and was chosen on tuning data apart
        from the evaluation data (see the estimator notes of the documentation).
    sample_fraction : float in (0, 0.5], default=0.5
        Share of the rows (or groups) in each subsample. Below 1/2 the two subsamples
        of a pair stay disjoint but leave rows out; the bounds then hold with :math:`q`
        measured at that subsample size (their proof needs only two disjoint subsamples
        of equal size).
    n_jobs : int, default=None
        Subsample fits run in parallel through joblib (``-1``: all cores; a Dask
        backend can run them, :mod:`bisvm.parallel`). Each fit runs with one BLAS
        thread and its own seed, so the result is identical for every ``n_jobs``.
    random_state : int, RandomState or None, default=None
        Draws the pairs and the estimator's seeds.
    verbose : int, default=0
        1: one line per stage on stdout; 2: one line per pair.

    Attributes
    ----------
    selection_frequency_ : ndarray of shape (n_features,)
        :math:`\hat\Pi_B(k)`, the share of the :math:`2B` fits selecting each feature.
    support_ : ndarray of bool, shape (n_features,)
        The stable set, ``selection_frequency_ >= threshold``.
    estimator_ : estimator
        A clone of ``estimator`` refitted on all rows of ``X[:, support_]``; or, when no
        feature is stable, a :class:`PriorClassifier` (classifier) or
        :class:`MeanRegressor` (otherwise) with a ``UserWarning``: the model without
        features, as glmnet's intercept-only fit.
    average_selected_ : float
        :math:`\hat q`, the mean number of features selected per subsample.
    false_selection_bound_ : float
        :math:`\hat q^2/((2\tau - 1)p)`: Shah & Samworth's bound on the expected number
        of falsely selected features (their Theorem 1 with :math:`\theta = q/p`), valid
        when the noise features' selections are exchangeable and the estimator does no
        worse than random guessing (Meinshausen & Bühlmann's assumptions; it is then
        their bound); :func:`~bisvm.selection.stability.false_selection_bound`.
    false_selection_bound_unimodal_ : float
        Shah & Samworth's tighter bound :math:`C(\tau, B)\hat q^2/p` when, in addition,
        the share of pairs selecting a noise feature on both halves has a unimodal
        distribution; NaN where it is not stated
        (:func:`~bisvm.selection.stability.unimodal_false_selection_bound`).
    subsamples_ : list of ndarray
        Row indices of the :math:`2B` subsamples; entries :math:`2j` and :math:`2j+1`
        are the two halves of pair :math:`j`.
    subsample_supports_ : ndarray of bool, shape (2 * n_pairs, n_features)
        What each subsample's fit selected (row :math:`j` for ``subsamples_[j]``).
    n_features_in_ : int
        Number of features seen in :meth:`fit`.
    feature_names_in_ : ndarray of str
        The column names, when X has string column names.

    Notes
    -----
    The default estimator is ``BilevelSVC()`` as it stands: on a half-sample whose
    features outnumber the training rows of a fold it resolves to the scalar model with
    the one-standard-error rule (one L1 weight for all features, the sparsest within one
    standard error of the best), the Lasso-like procedure stability selection was built
    around; on tall data to the vector model. The cost is :math:`2B + 1` fits (the refit
    included), spread over ``n_jobs`` processes. Any selecting estimator can replace it,
    e.g. ``BilevelSVC(model="scalar")`` to fix the scalar model on tall data too.

    Rows of zero ``sample_weight`` are left out of the subsamples and of the refit (a
    zero weight removes the row); the other weights are passed to the estimator's
    ``fit``, which must accept them. ``groups`` decide the subsamples and are passed on
    to the estimator's ``fit`` when it takes a ``groups`` argument (its own
    cross-validation then splits by them too). The warnings raised by the :math:`2B`
    fits are summarised as one warning per category.

    A model file stores the estimator as data (:mod:`bisvm.persistence`): with bisvm's
    estimators it saves and loads as is; another library's estimator class must be
    registered (:func:`bisvm.register_estimator`).

    References
    ----------
    N. Meinshausen and P. Bühlmann, "Stability selection", JRSS B 72, 2010.

    R. D. Shah and R. J. Samworth, "Variable selection with error control: another look
    at stability selection", JRSS B 75, 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import LinearSVC, StabilitySelection
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(120, 6))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> base = LinearSVC(penalty="l1", dual=False, C=0.05)
    >>> sel = StabilitySelection(base, n_pairs=10, random_state=0).fit(X, y)
    >>> sel.get_support(indices=True)
    array([0, 1])
    >>> sel.selection_frequency_.shape
    (6,)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "n_pairs": [int_at_least(1)],
        "threshold": [NumberInterval(Real, 0.5, 1, closed="right")],
        "sample_fraction": [NumberInterval(Real, 0, 0.5, closed="right")],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, estimator=None, *, n_pairs=50, threshold=0.7, sample_fraction=0.5,
                 n_jobs=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.n_pairs = n_pairs
        self.threshold = threshold
        self.sample_fraction = sample_fraction
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _base(self):
        return default_estimator() if self.estimator is None else self.estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self._base())
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = deepcopy(sub.classifier_tags)
        tags.regressor_tags = deepcopy(sub.regressor_tags)
        tags.target_tags.required = True
        tags.input_tags.sparse = sub.input_tags.sparse
        tags.input_tags.allow_nan = sub.input_tags.allow_nan
        return tags

    def _fit_params(self, base, sample_weight, groups):
        """Per-row arrays passed to the estimator's ``fit``."""
        params = {}
        if sample_weight is not None:
            if not has_fit_parameter(base, "sample_weight"):
                raise TypeError(f"sample_weight was given but {type(base).__name__}.fit "
                                "does not accept sample_weight")
            params["sample_weight"] = sample_weight
        if groups is not None and "groups" in inspect.signature(base.fit).parameters:
            params["groups"] = groups
        return params

    @method_doc(
        "Fit on the complementary pairs, keep the stable features and refit on them.",
        "X_train_sparse",
        r"""y : array-like of shape (n_samples,)
            Targets, as the estimator takes them.""",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Passed to the estimator's fits; zero-weight rows are left out.""",
        r"""groups : array-like of shape (n_samples,), default=None
            Sample groups: each group's rows stay on one side of every pair.""",
        returns=r"""StabilitySelection
            The fitted selector.""")
    def fit(self, X, y, sample_weight=None, groups=None):
        t0 = time.perf_counter()
        self._validate_params()
        base = self._base()
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype="numeric",
                             ensure_all_finite=not get_tags(base).input_tags.allow_nan)
        sw = _weights(sample_weight, X.shape[0])
        if groups is not None:
            groups = np.asarray(groups)
            if groups.shape != (X.shape[0],):
                raise ValueError(f"groups must have shape ({X.shape[0]},), got {groups.shape}")
        # a zero weight removes the row: it takes no place in the subsamples or the refit
        keep = np.arange(X.shape[0]) if sw is None else np.flatnonzero(sw > 0)
        fit_params = self._fit_params(base, sw, groups)
        rng = check_random_state(self.random_state)
        pairs = complementary_pairs(
            keep.size, self.n_pairs, labels=y[keep] if is_classifier(base) else None,
            groups=None if groups is None else groups[keep],
            sample_fraction=self.sample_fraction, random_state=rng)
        self.subsamples_ = [keep[rows] for pair in pairs for rows in pair]
        seeds = rng.randint(2**31 - 1, size=len(self.subsamples_) + 1)
        masks = self._fit_subsamples(base, X, y, fit_params, seeds[:-1])
        self.subsample_supports_ = masks
        self.selection_frequency_ = masks.mean(axis=0)
        self.support_ = self.selection_frequency_ >= self.threshold
        self.average_selected_ = float(masks.sum(axis=1).mean())
        p = X.shape[1]
        self.false_selection_bound_ = false_selection_bound(
            self.average_selected_, p, self.threshold)
        self.false_selection_bound_unimodal_ = unimodal_false_selection_bound(
            self.average_selected_, p, self.threshold, self.n_pairs)
        self.estimator_ = self._refit(base, X, y, keep, fit_params, int(seeds[-1]))
        if self.verbose:
            print(f"StabilitySelection: {int(self.support_.sum())} of {p} features stable "
                  f"(threshold {self.threshold}), {self.average_selected_:.2f} selected per "
                  f"subsample, expected false selections <= "
                  f"{self.false_selection_bound_:.3g}; {time.perf_counter() - t0:.1f} s")
        return self

    def _fit_subsamples(self, base, X, y, fit_params, seeds):
        from ..parallel import map_tasks

        n_fits = len(self.subsamples_)
        if self.verbose:
            print(f"StabilitySelection: {n_fits} fits of {type(base).__name__} on "
                  f"{self.n_pairs} complementary pairs of "
                  f"{len(self.subsamples_[0])} rows (n_jobs={self.n_jobs})")
        done = [0]

        def progress(k):
            done[0] += k
            if self.verbose >= 2 and done[0] % 2 == 0:
                print(f"StabilitySelection: pair {done[0] // 2}/{self.n_pairs} fitted")

        tasks = [(clone(base), X, y, rows, fit_params, seed)
                 for rows, seed in zip(self.subsamples_, seeds)]
        out = map_tasks(fit_subsample, tasks, n_jobs=self.n_jobs, progress=progress)
        self._summarise_warnings([w for _, caught in out for w in caught], n_fits)
        return np.array([mask for mask, _ in out], dtype=bool)

    @staticmethod
    def _summarise_warnings(caught, n_fits):
        """One warning per category for the subsample fits, with a count and the first
        message (2B repeats of one warning would bury it)."""
        seen = {}
        for category, message in caught:
            count, first = seen.get(category, (0, message))
            seen[category] = (count + 1, first)
        for category, (count, first) in seen.items():
            warnings.warn(f"StabilitySelection: {count} warnings from the {n_fits} subsample "
                          f"fits, the first: {first}", category, stacklevel=4)

    def _refit(self, base, X, y, rows, fit_params, seed):
        X, y = X[rows], y[rows]
        fit_params = {k: np.asarray(v)[rows] for k, v in fit_params.items()}
        if not self.support_.any():
            model = PriorClassifier() if is_classifier(base) else MeanRegressor()
            warnings.warn(
                f"StabilitySelection: no feature was selected by at least "
                f"{self.threshold:g} of the {len(self.subsamples_)} subsample fits (highest "
                f"frequency {self.selection_frequency_.max():.2f}); estimator_ is the model "
                f"without features ({type(model).__name__}). Lower threshold, or check "
                "that the estimator selects features on half of the rows.",
                UserWarning, stacklevel=3)
            return model.fit(X[:, :0], y, sample_weight=fit_params.get("sample_weight"))
        est = clone(base)
        if "random_state" in est.get_params(deep=False) and est.random_state is None:
            est.set_params(random_state=seed)
        return est.fit(X[:, self.support_], y, **fit_params)

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def _restricted(self, X):
        check_is_fitted(self, "estimator_")
        X = validate_data(self, X, reset=False, accept_sparse=("csr", "csc"), dtype="numeric",
                          ensure_all_finite=not get_tags(self).input_tags.allow_nan)
        return X[:, self.support_]

    @property
    def classes_(self):
        """The classes of ``estimator_`` (classifiers)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.classes_

    @available_if(_delegates("predict"))
    @method_doc(
        "Predict with ``estimator_`` on the stable features.",
        "X_all_features",
        returns=r"""ndarray of shape (n_samples,)
            ``estimator_.predict`` of the restricted samples.""")
    def predict(self, X):
        Xs = self._restricted(X)
        return self.estimator_.predict(Xs)

    @available_if(_delegates("decision_function"))
    @method_doc(
        "Evaluate ``estimator_.decision_function`` on the stable features.",
        "X_all_features",
        returns=r"""ndarray of shape (n_samples,) or (n_samples, n_classes)
            The decision values of the restricted samples.""")
    def decision_function(self, X):
        Xs = self._restricted(X)
        return self.estimator_.decision_function(Xs)

    @available_if(_delegates("predict_proba"))
    @method_doc(
        "Estimate class probabilities with ``estimator_`` on the stable features.",
        "X_all_features",
        returns=r"""ndarray of shape (n_samples, n_classes)
            ``estimator_.predict_proba`` of the restricted samples.""")
    def predict_proba(self, X):
        Xs = self._restricted(X)
        return self.estimator_.predict_proba(Xs)

    @available_if(_delegates("predict_log_proba"))
    @method_doc(
        "Estimate log-probabilities with ``estimator_`` on the stable features.",
        "X_all_features",
        returns=r"""ndarray of shape (n_samples, n_classes)
            ``estimator_.predict_log_proba`` of the restricted samples.""")
    def predict_log_proba(self, X):
        Xs = self._restricted(X)
        return self.estimator_.predict_log_proba(Xs)

    @available_if(_delegates("score"))
    @method_doc(
        "Score ``estimator_`` on the stable features.",
        "X_all_features",
        r"""y : array-like of shape (n_samples,)
            True targets.""",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples in the score.""",
        returns=r"""float
            ``estimator_.score`` of the restricted samples (accuracy or R²).""")
    def score(self, X, y, sample_weight=None):
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        Xs = self._restricted(X)
        return self.estimator_.score(Xs, y, **kw)
