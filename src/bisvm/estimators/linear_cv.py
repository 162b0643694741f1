r"""A linear SVM whose ``C`` is chosen by cross-validation along a warm-started path.

For each fold, :class:`~bisvm.estimators.linear.LinearSVC` is fitted on an *ascending*
grid of ``C`` with ``warm_start=True``: each fit starts from the previous solution, its
dual variables multiplied by :math:`C_{k+1}/C_k` and clipped to the new box. The
solution :math:`w(C)` moves continuously with ``C`` (for the hinge it is piecewise
linear, Hastie, Rosset, Tibshirani & Zhu 2004, "The entire regularization path for the
support vector machine"), and the samples at the bound :math:`\alpha_i = C` stay there
with their scaled value, so each fit starts close to its solution; solving a grid this
way costs less than independent fits, the practice of glmnet's paths (Friedman, Hastie &
Tibshirani 2010) and of warm-started dual coordinate descent (Hsieh et al. 2008).

:func:`linear_svc_path` is the path alone, for a recipe with any scorer;
:class:`LinearSVCCV` is the scikit-learn CV estimator (``cv`` splitter, ``scoring``,
``refit``, ``cv_results_``), the tool for users of ``GridSearchCV`` over ``C``, whose
independent fits cannot share a solution between grid points.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model._base import LinearClassifierMixin, SparseCoefMixin
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _check_sample_weight, indexable, validate_data

from ._constraints import N_JOBS, NumberInterval
from ._docs import method_doc
from .linear import LinearSVC

__all__ = ["LinearSVCCV", "LinearSVCPath", "linear_svc_path"]


class LinearSVCPath(NamedTuple):
    """The solutions of :func:`linear_svc_path`, one per ``C`` in ascending order.

    Attributes
    ----------
    Cs : ndarray of shape (n_Cs,)
    coefs : ndarray of shape (n_Cs, n_problems, n_features)
    intercepts : ndarray of shape (n_Cs, n_problems)
    objectives : ndarray of shape (n_Cs, n_problems)
        Primal objective of each binary problem.
    certificates : ndarray of shape (n_Cs, n_problems)
        The final stopping certificate of each fit (``LinearSVC.certificate_``).
    n_iter : ndarray of shape (n_Cs,)
    """

    Cs: np.ndarray
    coefs: np.ndarray
    intercepts: np.ndarray
    objectives: np.ndarray
    certificates: np.ndarray
    n_iter: np.ndarray


def _ascending(Cs):
    Cs = np.sort(np.asarray(Cs, dtype=float).ravel())
    if Cs.size == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
        raise ValueError(f"Cs must be positive finite values, got {Cs!r}")
    return Cs


def _walk(estimator, X, y, Cs, sample_weight, visit):
    """Fit ``estimator`` (warm-started) at each ``C`` of ascending ``Cs`` and call
    ``visit(k, fitted, seconds)``; returns the last fit and how many fits stopped on
    ``max_iter`` (their warnings are summed up by the caller, not repeated per fit)."""
    est = clone(estimator).set_params(warm_start=True)
    capped = 0
    for k, C in enumerate(Cs):
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            est.set_params(C=float(C)).fit(X, y, sample_weight=sample_weight)
        capped += any(issubclass(w.category, ConvergenceWarning) for w in caught)
        visit(k, est, time.perf_counter() - t0)
    return est, capped


def _warn_capped(capped, total, max_iter):
    if capped:
        warnings.warn(f"{capped} of {total} fits along the path of C stopped on "
                      f"max_iter={max_iter} before tol; increase max_iter or tol",
                      ConvergenceWarning, stacklevel=3)


def linear_svc_path(X, y, Cs, *, sample_weight=None, **params):
    """Fit :class:`LinearSVC` along an ascending grid of ``C`` with warm starts.

    The solution :math:`w(C)` moves continuously with ``C``, so each fit starts from the
    previous one, its dual variables multiplied by :math:`C_{k+1}/C_k` and clipped to the
    new box; the grid costs less than independent fits (Hsieh et al. 2008).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training samples.
    y : array-like of shape (n_samples,)
        Class labels.
    Cs : array-like of positive floats
        The grid of ``C``, sorted ascending before use.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights multiplying ``C`` per sample.
    **params
        Other :class:`LinearSVC` parameters (``loss``, ``dual``, ``tol``, ...).

    Returns
    -------
    LinearSVCPath
        Each fit's coefficients, intercepts, objectives, certificates and iterations.

    References
    ----------
    C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan, "A dual
    coordinate descent method for large-scale linear SVM", ICML 2008.

    Examples
    --------
    Scoring a path on a held-out set with any metric:

    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from bisvm import linear_svc_path
    >>> X, y = make_classification(200, 5, n_informative=2, n_redundant=0,
    ...                            class_sep=2.0, random_state=0)
    >>> path = linear_svc_path(X[:150], y[:150], [0.01, 0.1, 1.0], loss="hinge")
    >>> path.coefs.shape
    (3, 1, 5)
    >>> scores = [np.mean((X[150:] @ w[0] + b[0] > 0) == y[150:])
    ...           for w, b in zip(path.coefs, path.intercepts)]
    >>> len(scores)
    3
    """
    Cs = _ascending(Cs)
    if "C" in params or "warm_start" in params:
        raise ValueError("linear_svc_path sets C and warm_start itself; pass Cs instead")
    rows = []
    base = LinearSVC(**params)
    _, capped = _walk(base, X, y, Cs, sample_weight,
                      lambda k, est, s: rows.append((est.coef_.copy(), est.intercept_.copy(),
                                                     est.objective_.copy(),
                                                     est.certificate_.copy(), est.n_iter_)))
    _warn_capped(capped, Cs.size, base.max_iter)
    coefs, intercepts, objs, certs, n_iter = zip(*rows, strict=True)
    return LinearSVCPath(Cs, np.array(coefs), np.array(intercepts), np.array(objs),
                         np.array(certs), np.array(n_iter))


def _fold_path(estimator, X, y, sample_weight, train, test, Cs, scorer):
    """The validation scores of one fold along the path, the fit times and the number
    of fits stopped on ``max_iter``."""
    scores = np.empty(Cs.size)
    times = np.empty(Cs.size)
    sw = None if sample_weight is None else sample_weight[train]
    X_test, y_test = X[test], y[test]

    def visit(k, est, seconds):
        scores[k] = scorer(est, X_test, y_test)
        times[k] = seconds

    _, capped = _walk(estimator, X[train], y[train], Cs, sw, visit)
    return scores, times, capped


#: The fitted attributes copied from the refitted :class:`LinearSVC`.
_COPIED = ("coef_", "intercept_", "classes_", "n_iter_", "objective_", "certificate_",
           "certificate_name_")


class LinearSVCCV(LinearClassifierMixin, SparseCoefMixin, BaseEstimator):
    r"""Linear SVM with ``C`` chosen by cross-validation along warm-started paths.

    Each fold fits :class:`~bisvm.LinearSVC` along an ascending grid of ``C``, each fit
    starting from the previous solution (:func:`~bisvm.linear_svc_path`), which costs
    less than the independent fits of ``GridSearchCV``. The ``C`` of the best mean
    validation score is refitted on all the data (``refit=True``) and this estimator
    then predicts as that :class:`~bisvm.LinearSVC`.

    Parameters
    ----------
    Cs : int or array-like, default=10
        The grid: an int ``k`` means ``np.logspace(-4, 4, k)`` (scikit-learn's
        ``LogisticRegressionCV`` convention), an array the values themselves (sorted
        ascending before use).
    cv : int, cross-validation generator or iterable, default=None
        As scikit-learn's CV estimators: None is 5-fold stratified.
    scoring : str, callable or None, default=None
        A scikit-learn scorer; None is the estimator's accuracy.
    refit : bool, default=True
        Refit on all the data at ``best_C_``.
    n_jobs : int or None, default=None
        Folds run in parallel (joblib); the scores do not depend on it.
    penalty : {"l2", "l1"}, default="l2"
        The penalty :math:`\Omega(w)` of every fit: :math:`\tfrac12\lVert w\rVert_2^2` or
        :math:`\lVert w\rVert_1`.
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        The loss of the margins, :math:`\max(0, 1 - y_iw^\top x_i)` or its square.
    dual : "auto" or bool, default="auto"
        Solve the dual or the primal; ``"auto"`` picks the primal when
        ``n_samples >= n_features`` and the primal is available.
    tol : float, default=1e-4
        Stopping tolerance of each fit, measured by ``stopping`` for the dual solver.
    multi_class : {"ovr", "crammer_singer"}, default="ovr"
        One-vs-rest binary problems, or Crammer and Singer's joint multiclass SVM.
    fit_intercept : bool, default=True
        Fit an intercept, as the weight of a constant feature.
    intercept_scaling : float, default=1.0
        Value of the constant intercept feature (LIBLINEAR's ``-B``).
    class_weight : dict, "balanced" or None, default=None
        Multiplies ``C`` for the samples of each class; ``"balanced"`` is
        :math:`n / (K n_c)`.
    verbose : int, default=0
        1 prints a summary of each solve, 2 also the solvers' iterations.
    random_state : int, RandomState or None, default=None
        Seed of the coordinate orders of the coordinate-descent solvers.
    max_iter : int, default=1000
        Cap on epochs (dual) or iterations (primal) of each fit.
    shrinking : bool, default=True
        Shrinking of the coordinate-descent solvers.
    stopping : {"duality_gap", "projected_gradient"}, default="duality_gap"
        Stopping rule of the dual coordinate descent: the relative duality gap, or
        LIBLINEAR's projected-gradient spread.

    Attributes
    ----------
    Cs_ : ndarray of shape (n_Cs,)
        The grid, ascending.
    cv_results_ : dict of ndarrays
        ``param_C``, ``params``, ``split{k}_test_score``, ``mean_test_score``,
        ``std_test_score``, ``rank_test_score`` (1 is best), ``mean_fit_time``,
        ``std_fit_time`` (seconds per fit along the warm path), as ``GridSearchCV``.
    best_index_ : int
        The best mean score; ties go to the smallest ``C`` (the most regularised model).
    best_C_ : float
        The chosen ``C``.
    best_score_ : float
        Its mean validation score.
    best_estimator_ : LinearSVC
        Refitted on all the data along the warm path up to ``best_C_`` (``refit=True``
        only).
    n_splits_ : int
        Number of cross-validation splits.
    coef_, intercept_, classes_, n_iter_, objective_, certificate_, certificate_name_
        Those of ``best_estimator_`` (``refit=True`` only).
    n_features_in_ : int
        Number of features seen in :meth:`fit`.

    References
    ----------
    T. Hastie, S. Rosset, R. Tibshirani and J. Zhu, "The entire regularization path for
    the support vector machine", JMLR 5, 2004.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from bisvm import LinearSVCCV
    >>> X, y = make_classification(300, 10, random_state=0)
    >>> est = LinearSVCCV(Cs=[0.01, 0.1, 1.0], loss="hinge", random_state=0).fit(X, y)
    >>> float(est.best_C_) in (0.01, 0.1, 1.0)
    True
    >>> est.cv_results_["rank_test_score"].shape
    (3,)
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in LinearSVC._parameter_constraints.items()
           if k not in ("C", "warm_start")},
        "Cs": [NumberInterval(Integral, 1, None, closed="left"), "array-like"],
        "cv": ["cv_object"],
        "scoring": [StrOptions(set(get_scorer_names())), callable, None],
        "refit": ["boolean"],
        "n_jobs": N_JOBS,
    }

    def __init__(self, Cs=10, *, cv=None, scoring=None, refit=True, n_jobs=None,
                 penalty="l2", loss="squared_hinge", dual="auto", tol=1e-4,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, verbose=0, random_state=None, max_iter=1000,
                 shrinking=True, stopping="duality_gap"):
        self.Cs = Cs
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.stopping = stopping

    def _grid(self):
        if isinstance(self.Cs, int | np.integer):
            return np.logspace(-4, 4, int(self.Cs))
        return _ascending(self.Cs)

    def _base(self):
        params = {k: getattr(self, k) for k in LinearSVC().get_params()
                  if k not in ("C", "warm_start")}
        return LinearSVC(**params)

    @method_doc(
        "Score every ``C`` on every fold along warm paths; refit at the best.",
        "X_train_sparse",
        "y_labels",
        "sample_weight_C",
        r"""groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter (``cv``).""",
        returns=r"""LinearSVCCV
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None, groups=None):
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C",
                             accept_large_sparse=True)
        X, y, groups = indexable(X, y, groups)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
        Cs = self._grid()
        base = self._base()
        splitter = check_cv(self.cv, y, classifier=True)
        folds = list(splitter.split(X, y, groups))
        scorer = check_scoring(base, scoring=self.scoring)
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_path)(base, X, y, sample_weight, train, test, Cs, scorer)
            for train, test in folds)
        scores = np.array([s for s, _, _ in out])  # (n_splits, n_Cs)
        times = np.array([t for _, t, _ in out])
        _warn_capped(sum(c for _, _, c in out), Cs.size * len(folds), self.max_iter)
        self.Cs_ = Cs
        self.n_splits_ = len(folds)
        self.cv_results_ = _results(Cs, scores, times)
        mean = self.cv_results_["mean_test_score"]
        self.best_index_ = int(np.flatnonzero(mean == np.max(mean))[0])
        self.best_C_ = float(Cs[self.best_index_])
        self.best_score_ = float(mean[self.best_index_])
        if self.refit:
            # along the warm path up to best_C_: cheaper and closer to the optimum than a
            # cold fit at a large C
            path = Cs[:self.best_index_ + 1]
            best, capped = _walk(base, X, y, path, sample_weight, lambda *a: None)
            _warn_capped(capped, path.size, self.max_iter)
            self.best_estimator_ = best.set_params(warm_start=False)
            if hasattr(best, "dual_coef_"):  # kept by a warm-started fit only
                del best.dual_coef_
            for name in _COPIED:
                setattr(self, name, getattr(self.best_estimator_, name))
        return self

    @method_doc(
        "Evaluate the decision function of the refitted model (``refit=True`` only).",
        "X_sparse",
        returns=r"""ndarray of shape (n_samples,) or (n_samples, n_classes)
            :math:`x^\top w + b` of each binary problem, as
            :meth:`bisvm.LinearSVC.decision_function`.""")
    def decision_function(self, X):
        if not hasattr(self, "coef_"):
            raise NotFittedError("LinearSVCCV predicts only when fitted with refit=True")
        return super().decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _results(Cs, scores, times):
    """``cv_results_`` in ``GridSearchCV``'s layout (ranks: 1 best, ties share the
    lowest rank)."""
    mean = scores.mean(axis=0)
    order = np.argsort(-mean, kind="stable")
    rank = np.empty(Cs.size, dtype=np.int32)
    rank[order] = np.arange(1, Cs.size + 1)
    for k in range(1, Cs.size):  # equal means share the better rank
        if mean[order[k]] == mean[order[k - 1]]:
            rank[order[k]] = rank[order[k - 1]]
    res = {"param_C": Cs.copy(), "params": [{"C": float(c)} for c in Cs]}
    for k, row in enumerate(scores):
        res[f"split{k}_test_score"] = row
    res.update(mean_test_score=mean, std_test_score=scores.std(axis=0),
               rank_test_score=rank, mean_fit_time=times.mean(axis=0),
               std_fit_time=times.std(axis=0))
    return res
