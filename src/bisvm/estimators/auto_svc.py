r"""A kernel SVM that tunes itself: :class:`AutoSVC` learns C and its RBF widths -- one
shared width, or one per feature -- by hypergradient descent of a k-fold validation
criterion, then refits a plain :class:`~bisvm.SVC` at the learned values.

The lower level is the L2-SVM (squared hinge)

.. math::
    \min_{w,b}\ \tfrac12\lVert w\rVert^2 + \tfrac C2\sum_i\max(0, 1 - y_if(x_i))^2,
    \qquad k(x, x') = \exp\Bigl(-\sum_j\gamma_j(x_j - x'_j)^2\Bigr),

solved by bisvm's SMO, whose solution is differentiable in :math:`(C, \gamma)` wherever
its free support vectors do not change; the hypergradient is the adjoint of their KKT
system (Keerthi, Sindhwani & Chapelle 2007, "An efficient method for gradient-based
adaptation of hyperparameters in SVM models"; per-feature widths as in Chapelle, Vapnik,
Bousquet & Mukherjee 2002, "Choosing multiple parameters for support vector machines").
The stages are those of :mod:`bisvm.selection.kernel_fit`.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..data.standardize import weighted_column_stats
from ..selection.kernel_bilevel import KERNEL_CRITERIA
from ..selection.kernel_fit import SCAN_C, tune_kernel_svc
from ..solvers.dual.kernel_lower_level import KernelL2SVM
from ..solvers.dual.smo import resolve_n_jobs
from ._constraints import positive
from .svm import SVC

__all__ = ["AutoSVC"]


class AutoSVC(SelectorMixin, ClassifierMixin, BaseEstimator):
    r"""RBF support vector classifier whose C and kernel widths are learned.

    Parameters
    ----------
    widths : {"shared", "per_feature"}, default="shared"
        One RBF width γ for all features, or one width :math:`\gamma_j` per feature
        (automatic relevance determination: a width learned near 0 removes its feature
        from the kernel, which is nonlinear feature selection).
    standardize : bool, default=True
        Divide each feature by its standard deviation before the kernel (the RBF kernel
        is translation invariant, so centring is not needed and sparse input stays
        sparse); the widths are then in units of standard deviations.
    cv : int, cross-validation generator or iterable, default=5
        Folds of the validation criterion (scikit-learn's ``cv``; an int means
        stratified k-fold, reduced to the smallest class count when that is smaller).
    criterion : {"scaled_squared_hinge", "squared_hinge", "logistic"}, \
            default="scaled_squared_hinge"
        Validation loss of the fold outputs :math:`f_V`
        (:mod:`bisvm.selection.criteria`): the mean squared hinge
        :math:`\tfrac12\max(0, 1 - s y f)^2` at the best output scale s (the loss the
        L2-SVM minimises, judged on unseen rows after the rescaling a Platt calibration
        would make). Why scale-free: the raw squared hinge (``"squared_hinge"``) and the
        logistic loss (``"logistic"``) also reward larger outputs, which only a larger C
        gives, so they drive C towards the hard margin (and SMO into its slowest range)
        even where the classes overlap.
    multiclass : {"ovo", "ovr"}, default="ovo"
        Binary machines as in :class:`~bisvm.SVC`; one set of hyperparameters for all,
        learned on the mean of the machines' criteria.
    max_iter : int, default=50
        BiSVM L-BFGS iterations per stage.
    tol : float, default=1e-4
        Outer stopping tolerance on the gradient norm in log-parameters.
    select : {"1se", "none"}, default="1se"
        With per-feature widths: which features ``support_`` keeps (see Notes) -- the
        one-standard-error rule, or all of them.
    random_state : int, RandomState or None
        Seed of the fresh folds of the support rule and of the probability calibration.
    probability, shrinking, cache_size, n_jobs
        As in :class:`~bisvm.SVC` (``n_jobs``: threads of the SMO kernel engine in every
        solve; the folds run one after the other, so the two never compete for cores).

    Attributes
    ----------
    C_ : float
        Learned C (of the squared-hinge loss, as :class:`~bisvm.SVC` with
        ``loss="squared_hinge"`` uses it).
    gamma_ : float or ndarray of shape (n_features,)
        Widths of the final model on the standardised features (per feature: 0 for the
        features outside ``support_``).
    learned_gamma_ : float or ndarray
        The widths the outer loop ended at, before the support rule.
    scale_ : ndarray of shape (n_features,)
        Column multipliers :math:`\sqrt{\gamma_j}/\sigma_j` applied before
        ``estimator_`` (an RBF kernel of width 1 on the rescaled columns).
    estimator_ : SVC
        The refitted :class:`~bisvm.SVC` (``loss="squared_hinge"``, ``gamma=1``) on all
        rows; ``estimator_.support_`` holds the support vectors.
    feature_importances_ : ndarray of shape (n_features,)
        Relevances :math:`\gamma_j\,\mathrm{var}(x_j)` (inverse squared length scales in
        the features' own units), normalised to sum to 1; equal for a shared width.
    support_ : ndarray of bool, shape (n_features,)
        Selected features (all for a shared width).
    threshold_ : float
        Relevance at and above which a feature is kept.
    cv_value_ : float
        The k-fold criterion at the learned hyperparameters.
    n_solves_ : int
        L2-SVM solves made by the tuning (one per binary problem and fold each).
    n_iter_ : int
        Accepted BiSVM L-BFGS iterates over the stages (each stage's start included).
    tuning_ : KernelTuneResult
        Start, scan, outer histories and support tests.

    Notes
    -----
    **Why the refit is the L2-SVM.** The learned C is the optimum of the squared-hinge
    machine's validation criterion; C has a different scale for the hinge loss, and
    transferring it would refit a model that was never validated.

    **Support rule** (``select="1se"``): features are ranked by relevance, and
    ``support_`` is the smallest top-k set whose model (the other widths set to 0) has a
    k-fold criterion within one standard error of the full model's, found by bisection
    on k (:func:`~bisvm.selection.kernel_bilevel.width_support`), on a fresh shuffled
    split into the same number of folds: judged on the folds that tuned them, weak
    widths fitted to those rows would look significant. It costs
    :math:`\lceil\log_2 d\rceil + 1` L2-SVM solves per binary problem and fold. γ is
    learned on a log scale: "dropped" means outside this set, not a width of exactly
    zero; the final model sets those widths to 0.
    """

    _parameter_constraints: dict = {
        "widths": [StrOptions({"shared", "per_feature"})],
        "standardize": ["boolean"],
        "cv": ["cv_object"],
        "criterion": [StrOptions(set(KERNEL_CRITERIA))],
        "multiclass": [StrOptions({"ovo", "ovr"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [positive()],
        "select": [StrOptions({"1se", "none"})],
        "probability": ["boolean"],
        "shrinking": ["boolean"],
        "cache_size": [positive()],
        "random_state": ["random_state"],
        "n_jobs": [None, Integral],
    }

    def __init__(self, widths="shared", standardize=True, cv=5, criterion="scaled_squared_hinge",
                 multiclass="ovo", max_iter=50, tol=1e-4, select="1se", probability=False,
                 shrinking=True, cache_size=200, random_state=None, n_jobs=None):
        self.widths = widths
        self.standardize = standardize
        self.cv = cv
        self.criterion = criterion
        self.multiclass = multiclass
        self.max_iter = max_iter
        self.tol = tol
        self.select = select
        self.probability = probability
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _splits(self, X, y_enc):
        """The folds: an int ``cv`` is stratified k-fold, with k reduced to the smallest
        class count (at least 2 rows per class are needed)."""
        cv = self.cv
        if isinstance(cv, Integral):
            m = int(np.bincount(y_enc).min())
            if m < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least 2 samples of every class for its "
                    f"cross-validated criterion; the smallest class has {m}")
            cv = min(int(cv), m)
        return list(check_cv(cv, y_enc, classifier=True).split(X, y_enc))

    def fit(self, X, y):
        """Learn C and the widths on k folds, then refit on all rows.

        Parameters
        ----------
        X : array or sparse matrix of shape (n_samples, n_features)
        y : array of shape (n_samples,)
        """
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        classes, y_enc = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"got 1 class ({classes[0]!r})")
        self.classes_ = classes
        d = X.shape[1]
        _, std, const = weighted_column_stats(X)
        sigma = np.where(const | ~(std > 0), 1.0, std) if self.standardize else np.ones(d)
        Xs = X @ sp.diags(1.0 / sigma) if sp.issparse(X) else X / sigma
        if sp.issparse(Xs):
            Xs = sp.csr_matrix(Xs)
        lower = KernelL2SVM(shrinking=bool(self.shrinking), cache_size=float(self.cache_size),
                            n_jobs=self.n_jobs)
        splits = self._splits(Xs, y_enc)
        fresh = None
        if self.widths == "per_feature" and self.select == "1se":
            seed = check_random_state(self.random_state).randint(2**31 - 1)
            fresh = list(StratifiedKFold(len(splits), shuffle=True, random_state=seed)
                         .split(Xs, y_enc))
        # the Gram products and Cholesky factors of the tuning use as many BLAS threads
        # as n_jobs gives the kernel engine (one by default), as SVC's solves do
        with threadpool_limits(limits=resolve_n_jobs(self.n_jobs), user_api="blas"):
            res = tune_kernel_svc(Xs, y_enc, classes.size, splits, widths=self.widths,
                                  loss=self.criterion, multiclass=self.multiclass, Cs=SCAN_C,
                                  max_iter=self.max_iter, tol=self.tol, lower=lower,
                                  support_rule="1se" if self.select == "1se" else "none",
                                  support_splits=fresh)
        self.tuning_ = res
        self.C_ = res.C
        set_learned_widths(self, res, std, sigma)
        self.cv_value_ = res.value
        self.n_solves_ = res.n_solves
        self.n_iter_ = int(sum(len(h) for h in res.history))
        self.estimator_ = SVC(C=self.C_, kernel="rbf", gamma=1.0, loss="squared_hinge",
                              multiclass=self.multiclass, probability=self.probability,
                              shrinking=self.shrinking, cache_size=self.cache_size,
                              random_state=self.random_state, n_jobs=self.n_jobs)
        self.estimator_.fit(self._rescale(X), y)
        return self

    def _rescale(self, X):
        """Columns multiplied by :attr:`scale_` (sparse stays sparse)."""
        if sp.issparse(X):
            return sp.csr_matrix(X @ sp.diags(self.scale_))
        return X * self.scale_

    def _checked(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self._rescale(X)

    def decision_function(self, X):
        """Decision values of :attr:`estimator_` (as :meth:`bisvm.SVC.decision_function`)."""
        Xr = self._checked(X)
        return self.estimator_.decision_function(Xr)

    def predict(self, X):
        """Predicted labels."""
        Xr = self._checked(X)
        return self.estimator_.predict(Xr)

    def _has_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Platt-calibrated class probabilities of :attr:`estimator_`."""
        Xr = self._checked(X)
        return self.estimator_.predict_proba(Xr)

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_


def set_learned_widths(est, res, std, sigma):
    """Set the width attributes of a self-tuning kernel estimator from its tuning result
    ``res``: ``gamma_`` (pruned to the support), ``learned_gamma_``, ``scale_`` (the
    column factors of the refit), ``feature_importances_`` (relevance
    :math:`\\gamma_j\\operatorname{var}(x_j)` in the features' own units, normalised),
    ``support_`` and ``threshold_``. ``std`` are the columns' standard deviations and
    ``sigma`` the scales the widths were learned on."""
    d = std.size
    per = est.widths == "per_feature"
    est.gamma_ = res.gamma_support.copy() if per else float(res.gamma[0])
    est.learned_gamma_ = res.gamma.copy() if per else float(res.gamma[0])
    g = np.broadcast_to(np.asarray(est.gamma_, dtype=float), (d,))
    est.scale_ = np.sqrt(g) / sigma
    # a width g on x / sigma is g / sigma^2 in the feature's units
    rel = np.broadcast_to(np.asarray(est.learned_gamma_, float), (d,)) * (std / sigma) ** 2
    tot = float(rel.sum())
    est.feature_importances_ = rel / tot if tot > 0 else np.full(d, 1.0 / d)
    mask = np.ones(d, dtype=bool)
    if per and res.support is not None:
        mask[:] = False
        mask[res.support] = True
    est.support_ = mask
    est.threshold_ = float(est.feature_importances_[mask].min()) if per else 0.0
