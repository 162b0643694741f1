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

:class:`AutoSVR` then checks the kernel ridge it learned against the L1-loss ε-SVR (the
absolute ε-insensitive loss, robust to large residuals) at and near the learned values,
by a short warm-started k-fold scan, and keeps the model of smaller validation error
(:mod:`bisvm.selection.kernel_l1_stage`).

Per-feature widths are automatic relevance determination (Chapelle, Vapnik, Bousquet &
Mukherjee 2002, "Choosing multiple parameters for support vector machines"), as in
:class:`~bisvm.estimators.auto_svc.AutoSVC`.

Beyond :data:`NYSTROEM_MIN_ROWS` rows (``approximation="auto"``) either lower level runs
on a Nyström approximation of the kernel (Williams & Seeger 2001, "Using the Nyström
method to speed up kernel machines"): kernel ridge on the features with its exact
leave-one-out error (:mod:`bisvm.solvers.nystroem`), or the linear L2-loss ε-SVR on
them with its k-fold hypergradient through the features' dependence on the widths
(:mod:`bisvm.selection.kernel_nystroem`).
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import KFold, check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..data.standardize import weighted_column_stats
from ..selection.kernel_l1_stage import SMO_TOL as L1_SMO_TOL
from ..selection.kernel_l1_stage import l1_stage
from ..selection.kernel_nystroem import nystroem_svr_folds
from ..selection.kernel_ridge_tune import tune_kernel_ridge
from ..selection.kernel_svr_tune import tune_kernel_svr
from ..solvers.dual.kernel_lower_level import rbf_gram
from ..solvers.dual.kernel_svr_lower_level import SVRFold, solve_l2svr
from ..solvers.dual.smo import resolve_n_jobs
from ..solvers.nystroem import (
    DEFAULT_COMPONENTS,
    landmark_coef,
    nystroem_blocks,
    nystroem_ridge_coef,
    select_landmarks,
    solve_piecewise_l2,
)
from ._constraints import positive
from ._docs import method_doc
from .auto_svc import set_learned_widths
from .kernel_ridge import KernelRidge
from .svm import SVR

__all__ = ["AutoSVR", "KERNEL_RIDGE_MAX_ROWS", "NYSTROEM_MIN_ROWS", "NYSTROEM_COMPONENTS"]

#: With ``approximation=None``, ``lower="auto"`` runs kernel ridge up to this many rows
#: and the ε-SVR beyond. One leave-one-out step of kernel ridge (a Cholesky
#: factorisation of the n×n system and two n×n products, about :math:`2.3n^3` flops)
#: replaces the k fold solves of a k-fold step and is smooth in every hyperparameter
#: (no free set changes); the ε-SVR's fold solves factor only their free sets, of at
#: most :math:`(1 - 1/k)n` rows, and its cost grows more slowly with n. Measured on
#: two real tables (``benchmarks/results/kernel_autotune_regression_sizes.md``), kernel
#: ridge is the cheaper at every size run (up to 2,000 rows), by a factor that falls as
#: n grows, at the same test R²; the threshold is where that trend reaches 1, an
#: extrapolation, as the exact fits were not run beyond 2,000 rows.
KERNEL_RIDGE_MAX_ROWS = 3000

#: ``approximation="auto"`` tunes the lower level on a Nyström approximation beyond this
#: many rows (with a warning), the exact kernel up to it: measured on the same tables
#: for kernel ridge, the approximation of rank :data:`NYSTROEM_COMPONENTS` matches the
#: exact kernel's test R² from 1,000 rows on and is as fast there, and several times
#: faster from 2,000. The exact ε-SVR costs more than exact kernel ridge at every size
#: measured, so the approximation pays off for it no later; the same threshold applies.
NYSTROEM_MIN_ROWS = 1500

#: Default rank of the Nyström approximation (landmark rows).
NYSTROEM_COMPONENTS = DEFAULT_COMPONENTS


class AutoSVR(SelectorMixin, RegressorMixin, BaseEstimator):
    r"""RBF kernel regressor whose widths and regularisation are learned.

    Two lower levels share one interface: kernel ridge regression, whose ridge and RBF
    widths are learned on its exact leave-one-out mean squared error by closed-form
    gradients (Cawley & Talbot 2007), at one Cholesky factorisation per step and no
    folds; or the L2-loss ε-SVR, whose C, ε and widths are learned on a k-fold
    validation error by the adjoint of its free-set KKT system (Keerthi, Sindhwani &
    Chapelle 2007). The kernel ridge model is then checked against the L1-loss ε-SVR,
    robust to large residuals, near the learned values, and the model of smaller
    validation error is refitted on all rows. Per-feature widths select features, as in
    :class:`~bisvm.AutoSVC`; beyond
    :data:`~bisvm.estimators.auto_svr.NYSTROEM_MIN_ROWS` rows either lower level runs on
    a Nyström approximation of the kernel.

    Parameters
    ----------
    lower : {"auto", "kernel_ridge", "svr"}, default="auto"
        The lower-level model. ``"auto"`` is kernel ridge -- exact up
        to :data:`NYSTROEM_MIN_ROWS` rows, on the Nyström approximation beyond (with
        ``approximation="auto"``) -- and, with ``approximation=None``, kernel ridge up
        to :data:`KERNEL_RIDGE_MAX_ROWS` rows and the ε-SVR beyond. :attr:`lower_` says
        which ran.
    widths : {"shared", "per_feature"}, default="shared"
        One RBF width for all features, or one per feature (a width learned near 0
        removes its feature from the kernel: nonlinear feature selection).
    standardize : bool, default=True
        Divide each feature by its standard deviation before the kernel (the RBF kernel
        is translation invariant); the widths are then in units of standard deviations.
        The target is always standardised inside, and predictions are in its units.
    cv : int, cross-validation generator or iterable, default=5
        Folds of the ε-SVR's validation criterion and of the L1 stage (kernel ridge is
        tuned on its exact leave-one-out error, without folds); an int is k-fold, with k
        reduced to the number of rows when that is smaller.
    max_iter : int, default=50
        BiSVM L-BFGS iterations per stage.
    tol : float, default=1e-4
        Outer stopping tolerance on the gradient norm in log-parameters.
    select : {"1se", "none"}, default="1se"
        With per-feature widths: which features ``support_`` keeps -- the smallest top-k
        set by relevance whose criterion is within one standard error of the full
        model's (:func:`~bisvm.selection.kernel_bilevel.width_support`), or all.
    approximation : {"auto", "nystroem"} or None, default="auto"
        The lower level on the rank-``n_components`` Nyström approximation of the
        kernel, :math:`\Phi = K(X, Z)K(Z, Z)^{-1/2}` for landmark rows Z: kernel ridge
        with its exact leave-one-out error and gradient (:mod:`bisvm.solvers.nystroem`),
        or the linear L2-loss ε-SVR on Φ with its k-fold hypergradient through Φ's
        dependence on the widths (:mod:`bisvm.selection.kernel_nystroem`); both at
        :math:`O(nm^2)` per step instead of :math:`O(n^3)`, and :math:`O(nm)` memory
        instead of :math:`O(n^2)`. ``"auto"`` uses it beyond :data:`NYSTROEM_MIN_ROWS`
        rows and says so by a ``UserWarning``; None keeps the exact kernel.
    l1_stage : bool, default=True
        After exact kernel ridge (``lower_ == "kernel_ridge"``, no approximation): scan
        the L1-loss ε-SVR over the learned widths times (1/2, 1, 2), three tube
        half-widths and three C around the value matched to the learned ridge, on the
        folds of ``cv``, and keep it if its validation error is below kernel ridge's on
        the same folds (:mod:`bisvm.selection.kernel_l1_stage`;
        :data:`~bisvm.selection.kernel_l1_stage.N_SCAN` SMO solves per fold, warm-started,
        and k kernel ridge solves). :attr:`final_model_` says which was kept. Its SMO
        solves at the large C a small learned ridge implies grow faster with n than
        kernel ridge's factorisations; ``False`` skips it.
    n_components : int, default=NYSTROEM_COMPONENTS
        Rank m of the Nyström approximation (landmark rows).
    landmarks : {"kmeans++", "uniform"}, default="kmeans++"
        How the landmark rows are drawn
        (:func:`~bisvm.solvers.nystroem.select_landmarks`).
    random_state : int, RandomState instance or None, default=None
        Seeds the landmarks and the fresh folds of the support rule.
    n_jobs : int or None, default=None
        Threads of the BLAS products and factorisations of the tuning and refit.

    Attributes
    ----------
    lower_ : str
        ``"kernel_ridge"`` or ``"svr"``: the lower level that ran.
    approximation_ : str or None
        ``"nystroem"`` when the kernel was approximated (then ``lower_`` ran on the
        Nyström features), else None.
    final_model_ : str
        The model refitted: ``lower_``, or ``"epsilon_svr"`` when the L1 stage kept the
        L1-loss ε-SVR (``l1_stage``).
    ridge_ : float or None
        Learned ridge of the kernel ridge model (on the standardised target).
    C_, epsilon_ : float or None
        C and tube half-width of the ε-SVR refitted (ε in the target's units): those
        learned for the L2-loss ε-SVR, or those the L1 stage chose; None when the final
        model is kernel ridge.
    gamma_ : float or ndarray of shape (n_features,)
        Widths of the final model on the standardised features (per feature: 0 outside
        ``support_``); the L1 stage may have multiplied the learned ones by a factor.
    learned_gamma_ : float or ndarray
        The widths the outer loop ended at, before the support rule.
    scale_ : ndarray of shape (n_features,)
        Column multipliers :math:`\sqrt{\gamma_j}/\sigma_j` applied before
        ``estimator_`` (an RBF kernel of width 1 on the rescaled columns).
    estimator_ : KernelRidge, SVR or None
        The exact kernel ridge model, or the L1-loss :class:`~bisvm.SVR` the L1 stage
        kept, refitted on all rows of the rescaled columns, on the standardised target
        (None for the L2-loss ε-SVR and the Nyström approximation, whose model is the
        kernel expansion :attr:`dual_coef_`, :attr:`intercept_`, :attr:`X_fit_`).
    X_fit_ : ndarray
        The rescaled rows of the expansion: the ε-SVR's support vectors (its free set)
        or the landmark rows (Nyström).
    landmark_indices_ : ndarray of int
        Nyström only: the training rows chosen as landmarks.
    dual_coef_, intercept_ : ndarray, float
        ε-SVR and Nyström: :math:`f(x) = \sum_k a_k\exp(-\lVert x - x_k\rVert^2) + b`
        over the rows :math:`x_k` of :attr:`X_fit_`, on the rescaled columns and the
        standardised target.
    y_mean_, y_scale_ : float
        The target's standardisation.
    feature_importances_ : ndarray of shape (n_features,)
        Relevances :math:`\gamma_j\,\mathrm{var}(x_j)` normalised to sum to 1 (equal for
        a shared width).
    support_ : ndarray of bool, shape (n_features,)
        The selected features (all for a shared width).
    threshold_ : float
        Relevance at and above which a feature is kept.
    cv_value_ : float
        The criterion (leave-one-out or k-fold mean squared error, standardised target)
        at the learned hyperparameters.
    stage_values_ : dict or None
        The L1 stage's k-fold mean squared errors (standardised target) of
        ``"kernel_ridge"`` and of the best ``"epsilon_svr"``; None when it did not run.
    stage_scan_ : ndarray of shape (N_SCAN, 4) or None
        Every point of the L1 stage: width factor, C, ε (standardised target), k-fold
        error.
    n_solves_ : int
        Lower-level fits of the tuning (factorisations or SVR fold solves) and of the L1
        stage.
    n_iter_ : int
        Accepted BiSVM L-BFGS iterates over the stages (each stage's start included).
    tuning_ : KernelTuneResult
        Start, scan, outer histories and support tests.

    Notes
    -----
    **The refit.** Kernel ridge is refitted as :class:`~bisvm.KernelRidge` (with its
    intercept, ``gamma=1``) on the rescaled columns. The L2-loss ε-SVR is the L1-loss
    ε-SVR with :math:`C = \infty` on the kernel :math:`K + I/C` (its dual, module
    :mod:`~bisvm.solvers.dual.kernel_svr_lower_level`); it is refitted on all rows by
    the exact free-set solver the tuning used
    (:func:`~bisvm.solvers.dual.kernel_svr_lower_level.solve_l2svr`), not by SMO on
    :math:`K + I/C`, which at the large C often learned is so ill-conditioned that it
    takes millions of steps. The C of the squared loss is not the C of the L1
    ε-insensitive loss, so refitting the plain L1-loss SVR at the learned C would fit a
    model that was never validated.

    **The L1 stage** (``l1_stage``) is refitted as a plain :class:`~bisvm.SVR`
    (``kernel="rbf"``, ``gamma=1``) at the chosen C and ε on the columns rescaled by the
    chosen widths, with the sample weights: the model k-fold validation compared, on all
    rows.

    **The Nyström refit** is the tuned model on all rows' features of the same
    landmarks at the learned values, :math:`f(x) = k(x, Z)^\top a + b`: kernel ridge
    (:func:`~bisvm.solvers.nystroem.nystroem_ridge_coef`), whose leave-one-out error was
    minimised, or the linear L2-loss ε-SVR on the features
    (:func:`~bisvm.solvers.nystroem.solve_piecewise_l2`), whose k-fold error was.

    **Memory and sparse input.** The exact lower levels hold dense n×n Gram matrices
    (per fold for the ε-SVR, and the refit's; about 8 n² bytes each), so they take
    sparse input as a dense copy, which is smaller than one such matrix whenever d < n.
    The Nyström approximation keeps sparse rows sparse and holds n×m blocks.

    References
    ----------
    G. C. Cawley and N. L. C. Talbot, "Preventing over-fitting during model selection
    via Bayesian regularisation of the hyper-parameters", JMLR 8, 2007.

    S. S. Keerthi, V. Sindhwani and O. Chapelle, "An efficient method for gradient-based
    adaptation of hyperparameters in SVM models", NIPS 2007.

    O. Chapelle, V. Vapnik, O. Bousquet and S. Mukherjee, "Choosing multiple parameters
    for support vector machines", Machine Learning 46, 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import AutoSVR
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-2, 2, size=(80, 4))
    >>> y = np.sin(X[:, 0]) + 0.5 * X[:, 1]
    >>> reg = AutoSVR(widths="per_feature", random_state=0).fit(X, y)
    >>> reg.get_support(indices=True)
    array([0, 1])
    >>> bool(reg.score(X, y) > 0.95)
    True
    """

    _parameter_constraints: dict = {
        "lower": [StrOptions({"auto", "kernel_ridge", "svr"})],
        "widths": [StrOptions({"shared", "per_feature"})],
        "standardize": ["boolean"],
        "cv": ["cv_object"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [positive()],
        "select": [StrOptions({"1se", "none"})],
        "approximation": [StrOptions({"auto", "nystroem"}), None],
        "l1_stage": ["boolean"],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "landmarks": [StrOptions({"kmeans++", "uniform"})],
        "random_state": ["random_state"],
        "n_jobs": [None, Integral],
    }

    def __init__(self, lower="auto", widths="shared", standardize=True, cv=5, max_iter=50,
                 tol=1e-4, select="1se", approximation="auto", l1_stage=True,
                 n_components=NYSTROEM_COMPONENTS, landmarks="kmeans++", random_state=None,
                 n_jobs=None):
        self.lower = lower
        self.widths = widths
        self.standardize = standardize
        self.cv = cv
        self.max_iter = max_iter
        self.tol = tol
        self.select = select
        self.approximation = approximation
        self.l1_stage = l1_stage
        self.n_components = n_components
        self.landmarks = landmarks
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _resolve(self, n):
        """The lower level and the approximation that run on ``n`` rows."""
        lower, approx = self.lower, self.approximation
        if lower == "auto":
            lower = "kernel_ridge" if (n <= KERNEL_RIDGE_MAX_ROWS or approx is not None) \
                else "svr"
        if approx == "auto":
            approx = "nystroem" if n > NYSTROEM_MIN_ROWS else None
            if approx is not None:
                name = "kernel ridge" if lower == "kernel_ridge" else "the L2-loss ε-SVR"
                warnings.warn(
                    f"{type(self).__name__}: {n} rows > {NYSTROEM_MIN_ROWS}, so {name} "
                    f"is tuned and fitted on a Nyström approximation of rank "
                    f"{min(self.n_components, n)} (approximation='auto'); pass "
                    f"approximation=None for the exact kernel", UserWarning, stacklevel=3)
        return lower, approx

    @method_doc(
        "Learn the hyperparameters, then refit on all rows.",
        "X_train_sparse",
        "y_values",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights: kernel ridge weighs each squared error (and its
            leave-one-out residual) by it, the ε-SVR multiplies the row's C by it, and
            the standardisation uses weighted moments. Rows of weight 0 are left out.""",
        returns=r"""AutoSVR
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             y_numeric=True)
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                  ensure_non_negative=True)
        keep = sw > 0
        n_all = X.shape[0]
        if not keep.all():
            X, y, sw = X[keep], y[keep], sw[keep]
        n, d = X.shape
        if n < 3:
            raise ValueError(f"{type(self).__name__} needs at least 3 samples of positive "
                             f"weight for its validation criterion; got {n} sample"
                             + "s" * (n != 1))
        sw = None if sample_weight is None else sw
        _, std, const = weighted_column_stats(X, sw)
        sigma = np.where(const | ~(std > 0), 1.0, std) if self.standardize else np.ones(d)
        Xs = self._scaled(X, 1.0 / sigma)
        w = np.full(n, 1.0 / n) if sw is None else sw / sw.sum()
        self.y_mean_ = float(w @ y)
        ys = float(np.sqrt(w @ (y - self.y_mean_) ** 2))
        self.y_scale_ = ys if ys > 0 else 1.0
        yz = (y - self.y_mean_) / self.y_scale_
        lower, approx = self._resolve(n)
        self.lower_, self.approximation_ = lower, approx
        with threadpool_limits(limits=resolve_n_jobs(self.n_jobs), user_api="blas"):
            res = self._tune(Xs, yz, sw, lower, approx, keep if n < n_all else None)
        self.tuning_ = res
        self.n_solves_ = res.n_solves
        self.n_iter_ = int(sum(len(h) for h in res.history))
        self.ridge_, self.C_ = res.ridge, res.C
        self.epsilon_ = None if res.epsilon is None else res.epsilon * self.y_scale_
        set_learned_widths(self, res, std, sigma)
        self.cv_value_ = float(res.value)
        self.final_model_ = lower
        self.stage_values_ = self.stage_scan_ = None
        stage = None
        if self.l1_stage and lower == "kernel_ridge" and approx is None:
            with threadpool_limits(limits=resolve_n_jobs(self.n_jobs), user_api="blas"):
                stage = self._run_l1_stage(X, yz, sw, res, keep if n < n_all else None)
        if stage is not None and stage.model == "epsilon_svr":
            self._refit_l1(X, yz, sw, stage)
        else:
            self._refit(X, yz, sw, res)
        return self

    def _run_l1_stage(self, X, yz, sw, res, keep):
        """The L1 stage (``l1_stage``): its result; sets :attr:`final_model_` and, when
        the ε-SVR is kept, its C, ε and widths."""
        Xr = self._scaled(X, self.scale_)
        if sp.issparse(Xr):  # the stage holds n×n Gram matrices: n×d dense is less
            Xr = Xr.toarray()
        splits = self._splits(Xr, yz, keep)
        out = l1_stage(rbf_gram(Xr, Xr, 1.0), yz, splits, res.ridge, res.value, sw)
        self.n_solves_ += out.n_solves
        self.stage_values_ = {"kernel_ridge": out.reference, "epsilon_svr": out.value}
        self.stage_scan_ = out.scan
        if out.model == "epsilon_svr":
            self.final_model_ = "epsilon_svr"
            self.C_, self.epsilon_ = out.C, out.epsilon * self.y_scale_
            self.gamma_ = self.gamma_ * out.width_factor
            self.scale_ = self.scale_ * np.sqrt(out.width_factor)
        return out

    def _refit_l1(self, X, yz, sw, stage):
        """The L1-loss ε-SVR the L1 stage kept, on all rows (Notes)."""
        Xr = self._scaled(X, self.scale_)
        if sp.issparse(Xr):
            Xr = Xr.toarray()
        self.estimator_ = SVR(kernel="rbf", gamma=1.0, C=stage.C, epsilon=stage.epsilon,
                              tol=L1_SMO_TOL, n_jobs=self.n_jobs).fit(Xr, yz, sample_weight=sw)

    @staticmethod
    def _scaled(X, factors):
        """Columns multiplied by ``factors`` (sparse stays CSR)."""
        if sp.issparse(X):
            return sp.csr_matrix(X @ sp.diags(factors))
        return X * factors

    def _tune(self, Xs, yz, sw, lower, approx, keep=None):
        """The tuning result of the lower level (``keep``: which of the rows given to
        :meth:`fit` remain after those of weight 0 are left out)."""
        rule = "1se" if self.select == "1se" else "none"
        Z = None
        if approx == "nystroem":
            rng = check_random_state(self.random_state)
            idx = select_landmarks(Xs, int(self.n_components), self.landmarks,
                                   rng.randint(2**31 - 1))
            self.landmark_indices_ = idx
            Z = Xs[idx].toarray() if sp.issparse(Xs) else Xs[idx]
        if lower == "kernel_ridge":
            return tune_kernel_ridge(Xs, yz, sw=sw, widths=self.widths,
                                     max_iter=self.max_iter, tol=self.tol,
                                     support_rule=rule, landmarks=Z)
        splits = self._splits(Xs, yz, keep)
        return tune_kernel_svr(Xs, yz, splits, sw=sw, widths=self.widths,
                               max_iter=self.max_iter, tol=self.tol, support_rule=rule,
                               support_splits=self._fresh(len(splits), Xs), landmarks=Z)

    def _splits(self, Xs, yz, keep):
        """Folds over the rows kept. An int ``cv`` above n is leave-one-out; folds
        given by the caller index the rows given to :meth:`fit`, so they are mapped to
        the rows of positive weight (a fold left without validation rows is dropped)."""
        n = Xs.shape[0]
        if isinstance(self.cv, Integral):
            return list(KFold(min(int(self.cv), n)).split(Xs))
        if keep is None:
            return list(check_cv(self.cv, yz, classifier=False).split(Xs, yz))
        pos = np.cumsum(keep) - 1
        full = np.zeros(keep.size)
        out = []
        for tr, va in check_cv(self.cv, full, classifier=False).split(full, full):
            tr, va = np.asarray(tr), np.asarray(va)
            tr, va = pos[tr[keep[tr]]], pos[va[keep[va]]]
            if va.size and tr.size:
                out.append((tr, va))
        return out

    def _refit(self, X, yz, sw, res):
        """The final model on all rows at the learned values (Notes)."""
        Xr = self._scaled(X, self.scale_)
        if self.approximation_ == "nystroem":
            Z = Xr[self.landmark_indices_]
            self.X_fit_ = Z.toarray() if sp.issparse(Z) else Z
            self.estimator_ = None
            if self.lower_ == "kernel_ridge":
                self.dual_coef_, self.intercept_ = nystroem_ridge_coef(
                    Xr, self.X_fit_, yz, res.ridge, 1.0, sw)
                return
            _, _, L, Phi = nystroem_blocks(Xr, self.X_fit_, 1.0)
            mc = nystroem_svr_folds(yz, [(np.arange(yz.size), np.arange(1))], sw)[0][0]
            sol = solve_piecewise_l2(Phi, *mc.pieces(res.epsilon), res.C)
            self.dual_coef_ = landmark_coef(L, sol.theta)
            self.intercept_ = float(sol.theta[0])
            return
        if sp.issparse(Xr):  # the exact models hold n×n matrices: n×d dense is less
            Xr = Xr.toarray()
        if self.lower_ == "kernel_ridge":
            self.estimator_ = KernelRidge(ridge=res.ridge, kernel="rbf", gamma=1.0,
                                          fit_intercept=True).fit(Xr, yz, sample_weight=sw)
            return
        # the exact free-set solution of the L2-loss epsilon-SVR on all rows, by the
        # solver the tuning validated; SMO on K + I/C with C = inf (the plain SVR form
        # of the same problem) needs millions of steps at the large C often learned
        sol = solve_l2svr(SVRFold.build(Xr, yz, Xr[:1], yz[:1], sw_train=sw), res.C,
                          res.epsilon, np.array([1.0]))
        self.X_fit_ = Xr[sol.free]
        self.dual_coef_, self.intercept_ = sol.beta[sol.free], sol.bias
        self.estimator_ = None

    def _fresh(self, k, X):
        """Folds of the support rule: a fresh shuffled split into as many folds."""
        if self.widths != "per_feature" or self.select != "1se":
            return None
        seed = check_random_state(self.random_state).randint(2**31 - 1)
        return list(KFold(k, shuffle=True, random_state=seed).split(X))

    @method_doc(
        "Predict the target of each sample, in the target's units.",
        "X_original",
        returns="values")
    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        Xr = self._scaled(X, self.scale_)
        if self.estimator_ is None:  # a kernel expansion: Nyström or the L2-loss SVR
            out = rbf_gram(Xr, self.X_fit_, 1.0) @ self.dual_coef_ + self.intercept_
            return out * self.y_scale_ + self.y_mean_
        if sp.issparse(Xr):
            Xr = Xr.toarray()
        return self.estimator_.predict(Xr) * self.y_scale_ + self.y_mean_

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_
