r"""A kernel regressor that tunes itself: :class:`AutoSVR` learns its RBF widths -- one
shared width, or one per feature -- and its regularisation by gradient descent of a
validation criterion, then refits a plain bisvm estimator at the learned values.

Two lower levels, one interface:

* ``"kernel_ridge"``: kernel ridge regression, whose ridge and widths are learned on its
  *exact* leave-one-out mean squared error by closed-form gradients
  (:mod:`bisvm.selection.kernel_ridge_tune`; Cawley & Talbot 2007, "Preventing
  over-fitting during model selection via Bayesian regularisation of the
  hyper-parameters"): one Cholesky factorisation per outer step, :math:`O(n^3 + n^2d)`,
  and no folds;
* ``"svr"``: the L2-loss ε-SVR (squared ε-insensitive loss), whose C, ε and widths are
  learned on a k-fold validation mean squared error by the adjoint of its free-set KKT
  system (:mod:`bisvm.selection.kernel_svr_tune`; Keerthi, Sindhwani & Chapelle 2007,
  "An efficient method for gradient-based adaptation of hyperparameters in SVM models").

Per-feature widths are automatic relevance determination (Chapelle, Vapnik, Bousquet &
Mukherjee 2002, "Choosing multiple parameters for support vector machines"), as in
:class:`~bisvm.estimators.auto_svc.AutoSVC`.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import KFold, check_cv
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..selection.kernel_ridge_tune import tune_kernel_ridge
from ..selection.kernel_svr_tune import tune_kernel_svr
from ..solvers.dual.kernel_lower_level import rbf_gram
from ..solvers.dual.smo import resolve_n_jobs
from ._constraints import positive
from .auto_svc import set_learned_widths
from .kernel_ridge import KernelRidge
from .svm import SVR

__all__ = ["AutoSVR", "KERNEL_RIDGE_MAX_ROWS"]

#: ``lower="auto"`` runs kernel ridge up to this many rows and the ε-SVR beyond. One
#: leave-one-out step of kernel ridge (a Cholesky factorisation of the n×n system and
#: two n×n products, about :math:`2.3n^3` flops and four n×n matrices) replaces the k
#: fold solves of a k-fold step and is smooth in every hyperparameter (no free set
#: changes); the ε-SVR's fold solves factor only their free sets, which a tube of
#: learned width keeps below n, so beyond a few thousand rows they are the cheaper of
#: the two.
KERNEL_RIDGE_MAX_ROWS = 3000


class AutoSVR(SelectorMixin, RegressorMixin, BaseEstimator):
    r"""RBF kernel regressor whose widths and regularisation are learned.

    Parameters
    ----------
    lower : {"auto", "kernel_ridge", "svr"}, default="auto"
        The lower-level model (module docstring); ``"auto"`` is kernel ridge up to
        :data:`KERNEL_RIDGE_MAX_ROWS` rows and the ε-SVR beyond. :attr:`lower_` says
        which ran.
    widths : {"shared", "per_feature"}, default="shared"
        One RBF width for all features, or one per feature (a width learned near 0
        removes its feature from the kernel: nonlinear feature selection).
    standardize : bool, default=True
        Divide each feature by its standard deviation before the kernel (the RBF kernel
        is translation invariant); the widths are then in units of standard deviations.
        The target is always standardised inside, and predictions are in its units.
    cv : int, cross-validation generator or iterable, default=5
        Folds of the ε-SVR's validation criterion (kernel ridge uses its exact
        leave-one-out error and no folds); an int is k-fold, with k reduced to the
        number of rows when that is smaller.
    max_iter : int, default=50
        BiSVM L-BFGS iterations per stage.
    tol : float, default=1e-4
        Outer stopping tolerance on the gradient norm in log-parameters.
    select : {"1se", "none"}, default="1se"
        With per-feature widths: which features ``support_`` keeps -- the smallest top-k
        set by relevance whose criterion is within one standard error of the full
        model's (:func:`~bisvm.selection.kernel_bilevel.width_support`), or all.
    shrinking, cache_size, n_jobs
        As in :class:`~bisvm.SVR` (``n_jobs``: threads of the kernel engine and of the
        BLAS products of the tuning).

    Attributes
    ----------
    lower_ : str
        ``"kernel_ridge"`` or ``"svr"``: the lower level that ran.
    ridge_ : float or None
        Learned ridge of the kernel ridge model (on the standardised target).
    C_, epsilon_ : float or None
        Learned C and tube half-width of the L2-loss ε-SVR (ε in the target's units).
    gamma_ : float or ndarray of shape (n_features,)
        Widths of the final model on the standardised features (per feature: 0 outside
        ``support_``).
    learned_gamma_ : float or ndarray
        The widths the outer loop ended at, before the support rule.
    scale_ : ndarray of shape (n_features,)
        Column multipliers :math:`\sqrt{\gamma_j}/\sigma_j` applied before
        ``estimator_`` (an RBF kernel of width 1 on the rescaled columns).
    estimator_ : KernelRidge or SVR
        The refitted model on all rows, on the standardised target.
    X_fit_ : ndarray
        The rescaled training rows (``lower_ == "svr"`` only: the precomputed kernel's
        columns).
    y_mean_, y_scale_ : float
        The target's standardisation.
    feature_importances_ : ndarray of shape (n_features,)
        Relevances :math:`\gamma_j\,\mathrm{var}(x_j)` normalised to sum to 1 (equal for
        a shared width).
    support_ : ndarray of bool, shape (n_features,)
    threshold_ : float
        Relevance at and above which a feature is kept.
    cv_value_ : float
        The criterion (leave-one-out or k-fold mean squared error, standardised target)
        at the learned hyperparameters.
    n_fits_ : int
        Lower-level fits of the tuning (factorisations or SVR solves).
    n_iter_ : int
        Accepted BiSVM L-BFGS iterates over the stages (each stage's start included).
    tuning_ : KernelRidgeTuneResult or KernelSVRTuneResult
        Start, scan, outer histories and support tests.

    Notes
    -----
    **The refit.** Kernel ridge is refitted as :class:`~bisvm.KernelRidge` (with its
    intercept, ``gamma=1``) on the rescaled columns. The L2-loss ε-SVR is the L1-loss
    ε-SVR with :math:`C = \infty` on the kernel :math:`K + I/C` (its dual, module
    :mod:`~bisvm.solvers.dual.kernel_svr_lower_level`), so it is refitted as
    :class:`~bisvm.SVR` (``kernel="precomputed"``, ``C=inf``, the learned ε) on that
    Gram matrix of the rescaled training rows ``X_fit_``; :meth:`predict` hands it the
    RBF block between new rows and ``X_fit_`` (the :math:`I/C` term lives on the
    training diagonal only). The C of the squared loss is not the C of the L1
    ε-insensitive loss, so refitting the plain L1-loss SVR at the learned C would fit a
    model that was never validated.

    **Memory.** Both lower levels hold dense n×n Gram matrices (per fold for the
    ε-SVR, and the refit's precomputed kernel), so the input is dense and the rows are
    limited by memory (about 8 n² bytes per matrix).
    """

    _parameter_constraints: dict = {
        "lower": [StrOptions({"auto", "kernel_ridge", "svr"})],
        "widths": [StrOptions({"shared", "per_feature"})],
        "standardize": ["boolean"],
        "cv": ["cv_object"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [positive()],
        "select": [StrOptions({"1se", "none"})],
        "shrinking": ["boolean"],
        "cache_size": [positive()],
        "n_jobs": [None, Integral],
    }

    def __init__(self, lower="auto", widths="shared", standardize=True, cv=5, max_iter=50,
                 tol=1e-4, select="1se", shrinking=True, cache_size=200, n_jobs=None):
        self.lower = lower
        self.widths = widths
        self.standardize = standardize
        self.cv = cv
        self.max_iter = max_iter
        self.tol = tol
        self.select = select
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Learn the hyperparameters, then refit on all rows.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        y : array of shape (n_samples,)
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        n, d = X.shape
        if n < 3:
            raise ValueError(f"{type(self).__name__} needs at least 3 samples for its "
                             f"validation criterion; got {n} sample" + "s" * (n != 1))
        std = X.std(axis=0)
        sigma = np.where(std > 0, std, 1.0) if self.standardize else np.ones(d)
        Xs = X / sigma
        self.y_mean_ = float(y.mean())
        ys = float(y.std())
        self.y_scale_ = ys if ys > 0 else 1.0
        yz = (y - self.y_mean_) / self.y_scale_
        lower = self.lower
        if lower == "auto":
            lower = "kernel_ridge" if n <= KERNEL_RIDGE_MAX_ROWS else "svr"
        self.lower_ = lower
        rule = "1se" if self.select == "1se" else "none"
        with threadpool_limits(limits=resolve_n_jobs(self.n_jobs), user_api="blas"):
            if lower == "kernel_ridge":
                res = tune_kernel_ridge(Xs, yz, widths=self.widths, max_iter=self.max_iter,
                                        tol=self.tol, support_rule=rule)
                self.ridge_, self.C_, self.epsilon_ = res.ridge, None, None
                self.n_fits_ = res.n_fits
            else:
                # an int cv above n is reduced to leave-one-out
                cv = min(int(self.cv), n) if isinstance(self.cv, Integral) else self.cv
                splits = list(check_cv(cv, yz, classifier=False).split(Xs, yz))
                res = tune_kernel_svr(Xs, yz, splits, widths=self.widths,
                                      max_iter=self.max_iter, tol=self.tol, support_rule=rule,
                                      support_splits=self._fresh(len(splits), Xs))
                self.ridge_, self.C_ = None, res.C
                self.epsilon_ = res.epsilon * self.y_scale_
                self.n_fits_ = res.n_solves
        self.tuning_ = res
        self.n_iter_ = int(sum(len(h) for h in res.history))
        set_learned_widths(self, res, std, sigma)
        self.cv_value_ = float(res.value)
        Xr = X * self.scale_
        if lower == "kernel_ridge":
            self.estimator_ = KernelRidge(ridge=res.ridge, kernel="rbf", gamma=1.0,
                                          fit_intercept=True).fit(Xr, yz)
        else:
            # the L2-loss epsilon-SVR is the L1-loss one with C = inf on K + I/C
            self.X_fit_ = Xr
            A = rbf_gram(Xr, Xr, 1.0)
            A[np.diag_indices(n)] += 1.0 / res.C
            self.estimator_ = SVR(kernel="precomputed", C=np.inf, epsilon=res.epsilon,
                                  tol=1e-6, shrinking=self.shrinking,
                                  cache_size=self.cache_size, n_jobs=self.n_jobs).fit(A, yz)
        return self

    def _fresh(self, k, X):
        """Folds of the support rule: a fresh shuffled split into as many folds."""
        if self.widths != "per_feature" or self.select != "1se":
            return None
        return list(KFold(k, shuffle=True, random_state=0).split(X))

    def predict(self, X):
        """Predictions of :attr:`estimator_` in the target's units."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Xr = X * self.scale_
        if self.lower_ == "svr":
            Xr = rbf_gram(Xr, self.X_fit_, 1.0)
        return self.estimator_.predict(Xr) * self.y_scale_ + self.y_mean_

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_
