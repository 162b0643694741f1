r"""``LinearSVR``: linear support vector regression with scikit-learn's parameters,
trained by this package's solvers (LIBLINEAR's formulations).

Objective (per-sample cost :math:`C_i = C\cdot` sample weight), with the intercept, when
fitted, as LIBLINEAR's constant feature of value ``intercept_scaling`` — penalised like
the other coefficients, exactly as in scikit-learn's ``LinearSVR``:

.. math::
    \min_w\ \tfrac12\|w\|_2^2 + \sum_i C_i\,\xi_i(w),\qquad
    \xi_i = \max(0, |y_i - w^\top x_i| - \epsilon)\ \text{or its square}.

=============================  =====  ==================================================
loss                           dual   solver
=============================  =====  ==================================================
epsilon_insensitive            True   dual coordinate descent
                                      (:func:`bisvm.solvers.dual.dual_cd.solve_dual_cd_svr`)
squared_epsilon_insensitive    True   dual coordinate descent
squared_epsilon_insensitive    False  finite Newton, exact line search
                                      (:mod:`bisvm.solvers.svr_primal`)
=============================  =====  ==================================================

The ε-insensitive loss is not differentiable, so its primal has no Newton solver here, as
in LIBLINEAR (``dual=False`` is refused with it).
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearModel
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _check_sample_weight, validate_data

from ..losses import EpsilonInsensitive, SquaredEpsilonInsensitive
from ..solvers.dual.dual_cd import STOPPING_RULES, solve_dual_cd_svr, svr_primal_objective
from ..solvers.primal.svr_finite_newton import solve_svr_finite_newton
from ..solvers.problems import LinearProblem
from ._constraints import DUAL, MAX_ITER, TOL, check_intercept_scaling, non_negative, positive
from ._docs import method_doc

__all__ = ["LinearSVR"]

_LOSSES = ("epsilon_insensitive", "squared_epsilon_insensitive")


class LinearSVR(RegressorMixin, LinearModel):
    r"""Linear support vector regression with LIBLINEAR's formulations.

    Minimises :math:`\tfrac12\|w\|^2 + C\sum_i s_i \xi_i(w)` with the ε-insensitive loss
    :math:`\xi_i = \max(0, |y_i - w^\top x_i| - \epsilon)` or its square (Ho & Lin 2012).
    The intercept is LIBLINEAR's constant feature of value ``intercept_scaling``,
    penalised like the other coefficients, as in :class:`sklearn.svm.LinearSVR`. The dual
    is solved by coordinate descent; the squared loss's primal by the finite Newton
    method. The ε-insensitive loss is not differentiable, so its primal has no Newton
    solver (``dual=False`` is refused with it), as in LIBLINEAR.

    Parameters
    ----------
    epsilon : float, default=0.0
        Half-width :math:`\epsilon \ge 0` of the insensitive tube (in the units of ``y``).
    tol : float, default=1e-4
        Stopping tolerance: the relative duality gap :math:`(P(w) - D(\beta))/P(w)`
        (dual, the default ``stopping``: ``tol`` bounds the relative excess of the
        returned objective over the optimum) or LIBLINEAR's summed violation of the dual
        optimality conditions relative to the first epoch
        (``stopping="projected_gradient"``), gradient norm relative to its value at 0
        (primal).
    C : float, default=1.0
        Cost of the losses, :math:`C > 0`.
    loss : {"epsilon_insensitive", "squared_epsilon_insensitive"}, default="epsilon_insensitive"
        The loss of the residuals outside the tube: linear or squared.
    fit_intercept : bool, default=True
        Fit an intercept, as the weight of a constant feature of value
        ``intercept_scaling``.
    intercept_scaling : float, default=1.0
        Value of the constant intercept feature (LIBLINEAR's ``-B``).
    dual : "auto" or bool, default="auto"
        "auto" picks the primal when ``n_samples >= n_features`` and the loss is squared,
        as scikit-learn does.
    verbose : int, default=0
        1 prints a summary of the solve, 2 also one line per epoch or Newton iteration
        (stdout).
    random_state : int, RandomState or None, default=None
        Seed of the dual solver's per-epoch permutations.
    max_iter : int, default=1000
        Cap on epochs (dual) or Newton iterations (primal).
    stopping : {"duality_gap", "projected_gradient"}, default="duality_gap"
        Stopping rule of the dual coordinate descent: the relative duality gap
        :math:`(P(w) - D(\beta))/P(w) \le` ``tol``, which bounds how far the primal
        objective is from its optimum (the ε-insensitive loss has no smooth primal to
        certify by its gradient), or LIBLINEAR's relative violation (the rule of
        scikit-learn's ``LinearSVR``, for parity). With the squared loss a dual solve that stalls or
        reaches ``max_iter`` is finished by the primal finite Newton method; ``verbose``
        says so.
    warm_start : bool, default=False
        Start from the previous fit's solution when refitting on data of the same shape:
        its dual variables times the ratio of the new ``C`` to the old, clipped to the
        new box (dual), or its ``w`` (primal).
    n_jobs : int or None, default=None
        Threads for the primal solver's products with ``X`` (gradients, Hessian-vector
        products and line searches over a row partition fixed by the data). The iterates,
        and so the model, are identical for every value; None means 1, -1 all cores.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights :math:`w`.
    intercept_ : ndarray of shape (1,)
        The intercept (0 when ``fit_intercept=False``).
    n_iter_ : int
        Epochs (dual) or Newton iterations (primal).
    objective_ : float
        Primal objective at the solution.
    certificate_ : ndarray of shape (1,)
        The final value of the stopping certificate, named by ``certificate_name_``
        (``"duality_gap"``, ``"relative_violation"`` or ``"relative_gradient_norm"``,
        keys of :data:`bisvm.solvers.base.CERTIFICATES`); one entry, as
        :class:`LinearSVC` has one per binary problem.
    certificate_name_ : ndarray of str, shape (1,)
        The name of the certificate.
    dual_coef_ : ndarray of shape (n_samples,) or None
        The dual variables :math:`\beta` (``w = Σ β_i x_i``) when the dual was solved.
    n_features_in_ : int
        Number of features seen in :meth:`fit`.

    References
    ----------
    C.-H. Ho and C.-J. Lin, "Large-scale linear support vector regression", JMLR 13,
    2012.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import LinearSVR
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(50, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 1.0
    >>> reg = LinearSVR(C=10.0, epsilon=0.0).fit(X, y)
    >>> np.round(reg.coef_, 2)
    array([ 1. , -2. ,  0.5])
    >>> np.round(reg.intercept_, 2)
    array([1.])
    """

    _parameter_constraints: dict = {
        "epsilon": [non_negative()],
        "tol": TOL,
        "C": [positive()],
        "loss": [StrOptions(set(_LOSSES))],
        "fit_intercept": "no_validation",  # read as a truth value
        # checked (by check_intercept_scaling) only when fit_intercept
        "intercept_scaling": "no_validation",
        # the (loss, dual) combination is checked in _solve_dual
        "dual": DUAL,
        "verbose": "no_validation",  # read by the solvers as a level
        "random_state": "no_validation",  # checked by check_random_state in fit
        "max_iter": MAX_ITER,
        "stopping": [StrOptions(set(STOPPING_RULES))],
        "warm_start": ["boolean"],
        "n_jobs": [None, Integral],  # -1 or positive, checked by the primal solver
    }

    def __init__(self, *, epsilon=0.0, tol=1e-4, C=1.0, loss="epsilon_insensitive",
                 fit_intercept=True, intercept_scaling=1.0, dual="auto", verbose=0,
                 random_state=None, max_iter=1000, stopping="duality_gap",
                 warm_start=False, n_jobs=None):
        self.epsilon = epsilon
        self.tol = tol
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.dual = dual
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.stopping = stopping
        self.warm_start = warm_start
        self.n_jobs = n_jobs

    def _solve_dual(self, X):
        """Whether the dual is solved on ``X``; refuses the primal of the non-smooth loss
        (and ``intercept_scaling`` <= 0 with an intercept), which the constraints, one
        parameter each, cannot express."""
        check_intercept_scaling(self.fit_intercept, self.intercept_scaling)
        squared = self.loss == "squared_epsilon_insensitive"
        dual = self.dual
        if dual == "auto":
            dual = not squared or X.shape[0] < X.shape[1]
        if not dual and not squared:
            raise ValueError(
                f"Unsupported set of arguments: penalty='l2', loss='{self.loss}', "
                "dual=False: the epsilon-insensitive loss is not differentiable and is "
                "solved in the dual only; use dual=True")
        return bool(dual)

    @method_doc(
        "Fit the regression.",
        "X_train_sparse",
        "y_values",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Multiplies ``C`` per sample; samples of weight 0 are left out.""",
        returns=r"""LinearSVR
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        previous = getattr(self, "_warm", None) if self.warm_start else None
        # CSR float64 with int32 or int64 indices reaches the solvers as it is
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C",
                             y_numeric=True, accept_large_sparse=True)
        dual = self._solve_dual(X)
        if previous is not None and (previous[1] != X.shape or previous[2] != dual):
            previous = None
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        cost = float(self.C) * sw
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if dual:
                seed = int(check_random_state(self.random_state).randint(
                    np.iinfo(np.int32).max))
                eps = float(self.epsilon)
                loss = (EpsilonInsensitive(eps) if self.loss == "epsilon_insensitive"
                        else SquaredEpsilonInsensitive(eps))
                start = None
                if previous is not None and getattr(self, "dual_coef_", None) is not None:
                    start = self.dual_coef_ * (float(self.C) / previous[0])
                r = solve_dual_cd_svr(
                    LinearProblem(X, y, loss, cost, bias=bias), alpha0=start, tol=self.tol,
                    max_iter=self.max_iter, random_state=seed, stopping=self.stopping,
                    warn=False, verbose=self.verbose)
                self.dual_coef_ = r.dual_coef
                coef, intercept = r.coef, r.intercept
            else:
                problem = LinearProblem(X, y, SquaredEpsilonInsensitive(float(self.epsilon)),
                                        cost, bias=bias)
                start = None
                if previous is not None:
                    start = (np.r_[self.coef_, self.intercept_[0] / bias] if bias > 0
                             else self.coef_)
                r = solve_svr_finite_newton(problem, w0=start, tol=self.tol,
                                            max_iter=self.max_iter, warn=False,
                                            verbose=int(self.verbose) >= 2,
                                            n_jobs=self.n_jobs)
                if self.verbose:
                    print(f"LinearSVR (primal finite Newton): {r.n_iter} iterations, "
                          f"objective {r.objective:.10g}, relative gradient norm "
                          f"{r.certificate_value:.3e}")
                self.dual_coef_ = None
                coef, intercept = r.coef, r.intercept
        if not r.converged:
            gap = r.stats.get("relative_gap")
            reached = "" if gap is None else f", relative duality gap reached {gap:.3g}"
            warnings.warn(f"LinearSVR ({'dual' if dual else 'primal'}) stopped on "
                          f"max_iter={self.max_iter} before tol={self.tol}{reached}; "
                          "increase max_iter", ConvergenceWarning, stacklevel=2)
        self.coef_ = np.ascontiguousarray(coef)
        self.intercept_ = np.array([intercept]) if self.fit_intercept else np.zeros(1)
        self.n_iter_ = int(r.n_iter)
        self.objective_ = float(r.objective)
        self.certificate_ = np.array([r.certificate_value], dtype=float)
        self.certificate_name_ = np.array([r.certificate])
        self._warm = (float(self.C), X.shape, dual)
        return self

    @method_doc(
        "Evaluate the primal objective of the fitted model on ``(X, y)``.",
        "X_sparse",
        r"""y : array-like of shape (n_samples,)
            Their targets.""",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Per-sample multipliers of ``C``.""",
        returns=r"""float
            :math:`\tfrac12\lVert w\rVert^2 + C\sum_i s_i\xi_i(w)`, the intercept's
            feature included in :math:`w`.""")
    def primal_objective(self, X, y, sample_weight=None):
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        w = np.r_[self.coef_, self.intercept_[0] / bias] if bias > 0 else self.coef_
        sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight)
        return svr_primal_objective(X, np.asarray(y, dtype=float), w, float(self.C) * sw,
                                    self.loss, float(self.epsilon), bias)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
