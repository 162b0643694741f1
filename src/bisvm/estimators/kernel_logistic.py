r"""Kernel logistic regression trained in the primal expansion form.

Binary objective (labels :math:`y_i = \pm 1`, sample weights :math:`s_i`):

.. math::
    \min_{\beta, b}\ \tfrac12 \beta^\top K \beta
    + C \sum_i s_i \log\bigl(1 + e^{-y_i f(x_i)}\bigr),\qquad
    f(x) = \sum_j \beta_j k(x, x_j) + b ,

the kernel logistic regression of Zhu & Hastie (2005, "Kernel logistic regression and
the import vector machine") with the labels folded into β. The intercept ``b`` is not
penalised, so with the linear kernel the model is scikit-learn's
``LogisticRegression(C=C)``. It is solved by Newton's method (default; quadratic
convergence, one :math:`O(n^3)` solve per step,
:func:`~bisvm.solvers.primal.kernel.solve_kernel_newton`) or L-BFGS, both on
:class:`~bisvm.solvers.problems.KernelExpansionProblem`.

:math:`P(y = +1 \mid x) = \sigma(f(x))`. Multiclass is one-vs-rest; the class
probabilities are the ``K`` sigmoids normalised to sum to one, so ``predict`` (the largest
decision value) always agrees with the largest probability.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..kernels import (
    check_finite_gram,
    check_precomputed,
    indefinite_spectrum,
    kernel_label,
    make_kernel,
)
from ..losses import Logistic
from ..solvers.primal.kernel import KernelExpansionProblem, solve_kernel_newton
from ..solvers.primal.lbfgs import minimize_lbfgs
from ._constraints import KERNEL_PARAMETERS, MAX_ITER, TOL, positive
from ._docs import method_doc
from ._verbose import print_solve

__all__ = ["KernelLogisticRegression"]

# An indefinite K makes the objective unbounded below: L-BFGS follows the negative
# curvature to -inf and Newton stops at a saddle point, so anything beyond rounding
# (about n·eps·‖K‖, 2e-12 at n = 8192) is refused. The check costs one Cholesky
# factorisation, less than one Newton step.
_INDEFINITE_RTOL = 1e-10
_INDEFINITE_MAX_N = 8192


class KernelLogisticRegression(ClassifierMixin, BaseEstimator):
    r"""Kernel logistic regression with probabilities, trained in the primal.

    Binary objective (labels :math:`y_i = \pm 1`, sample weights :math:`s_i`):

    .. math::
        \min_{\beta, b}\ \tfrac12 \beta^\top K \beta
        + C \sum_i s_i \log\bigl(1 + e^{-y_i f(x_i)}\bigr),\qquad
        f(x) = \sum_j \beta_j k(x, x_j) + b,

    the kernel logistic regression of Zhu & Hastie (2005) in the expansion over the
    training points. The intercept is not penalised, so with the linear kernel the model
    is scikit-learn's ``LogisticRegression(C=C)``. :math:`P(y = +1 \mid x) =
    \sigma(f(x))`; a multiclass target is learned one-vs-rest and the ``K`` sigmoids are
    normalised to sum to one, so that :meth:`predict` agrees with the largest
    probability.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the logistic loss, :math:`C > 0` (larger = less regularisation).
    kernel : str or callable, default="rbf"
        ``"linear"``, ``"poly"``, ``"rbf"``, ``"laplacian"``, ``"sigmoid"``,
        ``"precomputed"`` (then ``X`` is the Gram matrix) or a callable returning the Gram
        block of two sets of samples. The objective is unbounded below when the Gram
        matrix is indefinite, so a kernel that is not positive semi-definite on every
        data set ("sigmoid", "precomputed", a callable, "poly" with ``coef0 < 0``) is
        checked by one Cholesky factorisation (up to 8192 rows) and an indefinite one
        (smallest eigenvalue below ``-1e-10`` times the largest in magnitude) raises a
        ``ValueError`` naming the eigenvalues; larger matrices are caught when the
        solver's objective becomes negative. ``SVC(probability=True)`` accepts indefinite
        kernels, as LIBSVM does.
    gamma : float, "scale" or "auto", default="scale"
        Kernel width (see :func:`bisvm.kernels.make_kernel`).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.0
        The constant term of the poly and sigmoid kernels.
    fit_intercept : bool, default=True
        Fit an unpenalised bias :math:`b`.
    solver : {"newton", "lbfgs"}, default="newton"
        Newton's method (quadratic convergence, one :math:`O(n^3)` solve per step) or
        L-BFGS.
    tol : float, default=1e-8
        Stop when the gradient norm falls below ``tol`` times its value at
        :math:`\beta = 0`.
    max_iter : int, default=100
        Cap on Newton iterations (20 times as many for L-BFGS) per binary problem.
    verbose : int, default=0
        When positive, print to stdout each binary problem's iterations (objective and
        gradient norm) and a summary line once it is solved.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    dual_coef_ : ndarray of shape (n_problems, n_train)
        :math:`\beta` of each binary problem (one for two classes, one per class
        otherwise).
    intercept_ : ndarray of shape (n_problems,)
        :math:`b` of each binary problem.
    X_fit_ : ndarray of shape (n_train, n_features)
        Training inputs (the expansion points).
    n_iter_ : ndarray of shape (n_problems,)
        Solver iterations per binary problem.
    objective_ : ndarray of shape (n_problems,)
        Final objective per binary problem.
    n_features_in_ : int
        Number of features seen in :meth:`fit`.

    References
    ----------
    J. Zhu and T. Hastie, "Kernel logistic regression and the import vector machine",
    Journal of Computational and Graphical Statistics 14, 2005.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from bisvm import KernelLogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = KernelLogisticRegression(C=1.0, kernel="rbf").fit(X, y)
    >>> clf.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> round(float(clf.predict_proba(X[:1]).sum()), 6)
    1.0
    """

    _parameter_constraints: dict = {
        "C": [positive()],
        **KERNEL_PARAMETERS,
        "fit_intercept": "no_validation",  # read as a truth value
        "solver": [StrOptions({"newton", "lbfgs"})],
        "tol": TOL,
        "max_iter": MAX_ITER,
        "verbose": "no_validation",  # read as a level (> 0 prints)
    }

    def __init__(self, C=1.0, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 fit_intercept=True, solver="newton", tol=1e-8, max_iter=100, verbose=0):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    def _may_be_indefinite(self):
        """Kernels that are not positive semi-definite for every data set."""
        name = self.kernel_.name
        return name in ("sigmoid", "precomputed", "callable") or (
            name == "poly" and self.kernel_.coef0 < 0)

    def _indefinite_message(self, evidence):
        kernel = kernel_label(self.kernel)
        remedy = ("project it onto the positive semi-definite cone (clip its negative "
                  "eigenvalues)" if self.kernel == "precomputed" else
                  "use a positive semi-definite kernel ('rbf', 'laplacian', 'linear', or "
                  "'poly' with coef0 >= 0)")
        return (f"KernelLogisticRegression: the kernel matrix of kernel={kernel} is "
                f"indefinite on these data ({evidence}), so the objective "
                "1/2 b'Kb + C sum log(1 + exp(-y f)) is unbounded below and has no minimiser; "
                f"{remedy}, or use SVC(kernel={kernel}, probability=True), which accepts "
                "indefinite kernels as LIBSVM does")

    def _refuse_negative_objective(self, r, K):
        """F >= 0 for every (β, b) when K is positive semi-definite, so a negative
        objective proves negative curvature (for a matrix too large for the spectrum
        check) -- unless it is within the rounding error n·eps·|β|ᵀ|K||β| of the
        quadratic term, which only a badly scaled kernel reaches."""
        beta = np.abs(r.coef[:K.shape[0]])
        scale = float(beta.max()) if beta.size else 0.0
        if scale > 0:
            beta = beta / scale  # compare in units of max|β|² (β may be ~1e154)
        rounding = K.shape[0] * np.finfo(float).eps * float(beta @ (np.abs(K) @ beta))
        if np.isnan(r.objective) or -r.objective / max(scale, 1.0) / max(scale, 1.0) <= rounding:
            raise ValueError(
                "KernelLogisticRegression: the objective is lost to rounding (it reached "
                f"{r.objective:.3g}); the kernel matrix has entries up to "
                f"{float(np.max(np.abs(K))):.3g} -- standardise the features X (e.g. "
                "bisvm.Scaler)")
        raise ValueError(self._indefinite_message(
            f"the solver reached objective {r.objective:.3g} < 0"))

    def _gram(self, X, fit):
        if self.kernel == "precomputed":
            if fit:
                return check_precomputed(X)
            return check_precomputed(X, n_train=self.n_train_, symmetric=False)
        return check_finite_gram(self.kernel_(X, self.X_fit_), self.kernel, X)

    @method_doc(
        "Fit one binary problem, or one per class (one-vs-rest).",
        "X_train_gram",
        "y_labels",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows' losses.""",
        returns=r"""KernelLogisticRegression
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError("KernelLogisticRegression needs samples of at least 2 classes; "
                             f"the data contains only one class: {self.classes_[0]!r}")
        # a negative weight would make its loss term concave (non-convex objective)
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if np.unique(y[sw > 0]).size < 2:
            raise ValueError("KernelLogisticRegression needs samples of at least 2 classes "
                             "with positive sample_weight; only one class is left")
        self.X_fit_ = X
        self.n_train_ = X.shape[0]
        self.kernel_ = make_kernel(self.kernel, gamma=self.gamma, coef0=self.coef0,
                                   degree=self.degree, X=X)
        K = self._gram(X, fit=True)
        K = 0.5 * (K + K.T)
        if self._may_be_indefinite():
            spec = indefinite_spectrum(K, rtol=_INDEFINITE_RTOL, max_n=_INDEFINITE_MAX_N)
            if spec is not None:
                raise ValueError(self._indefinite_message(
                    f"smallest eigenvalue {spec[0]:.3g}, largest {spec[1]:.3g}"))
        y_ind = np.searchsorted(self.classes_, y)
        targets = ([np.where(y_ind == 1, 1.0, -1.0)] if self.classes_.size == 2 else
                   [np.where(y_ind == k, 1.0, -1.0) for k in range(self.classes_.size)])
        betas, bs, iters, objs = [], [], [], []
        for k, yk in enumerate(targets):
            P = KernelExpansionProblem(K, yk, Logistic(), C=float(self.C),
                                       fit_intercept=self.fit_intercept, sample_weight=sw)
            theta0 = np.zeros(P.n_features)
            tol = self.tol * max(1.0, float(np.linalg.norm(P.gradient(theta0))))
            if self.solver == "newton":
                try:
                    r = solve_kernel_newton(P, w0=theta0, tol=tol, max_iter=self.max_iter,
                                            name="KernelLogisticRegression Newton")
                except np.linalg.LinAlgError as exc:
                    # I + C D K is non-singular in exact arithmetic, but with kernel
                    # entries ~1e16 and beyond the identity is lost to rounding
                    raise ValueError(
                        "KernelLogisticRegression: the Newton system I + C·D·K is "
                        f"numerically singular ({exc}); the kernel matrix has entries up "
                        f"to {float(np.max(np.abs(K))):.3g} -- standardise the features "
                        "X (e.g. bisvm.Scaler)") from exc
            else:
                r = minimize_lbfgs(P.value_and_gradient, theta0, tol=tol,
                                   max_iter=20 * self.max_iter,
                                   name="KernelLogisticRegression L-BFGS")
            if not r.objective >= -1e-8 * float(self.C) * float(sw.sum()):
                self._refuse_negative_objective(r, K)
            if self.verbose:
                c = self.classes_
                task = (f"{c[1]} vs {c[0]}" if c.size == 2 else f"{c[k]} vs rest")
                print_solve(f"KernelLogisticRegression ({self.solver}) {task}", r)
            n = K.shape[0]
            betas.append(r.coef[:n])
            bs.append(float(r.coef[n]) if self.fit_intercept else 0.0)
            iters.append(r.n_iter)
            objs.append(r.objective)
        self.dual_coef_ = np.vstack(betas)
        self.intercept_ = np.array(bs)
        self.n_iter_ = np.array(iters)
        self.objective_ = np.array(objs)
        return self

    @method_doc(
        r"""Evaluate :math:`f(x) = \sum_j \beta_j k(x, x_j) + b`.""",
        "X_kernel",
        returns=r"""ndarray of shape (n_samples,) or (n_samples, n_classes)
            The decision value (two classes; positive means ``classes_[1]``) or the
            one-vs-rest values.""")
    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        F = self._gram(X, fit=False) @ self.dual_coef_.T + self.intercept_
        return F[:, 0] if self.classes_.size == 2 else F

    @method_doc(
        "Estimate the class probabilities.",
        "X_kernel",
        returns="proba",
        extended=r""":math:`\sigma(f)` for two classes, else the one-vs-rest sigmoids normalised to
        sum to one.""")
    def predict_proba(self, X):
        F = self.decision_function(X)
        if self.classes_.size == 2:
            p = expit(F)
            return np.c_[1.0 - p, p]
        P = expit(F)
        return P / P.sum(axis=1, keepdims=True)

    @method_doc(
        "Estimate the logarithm of the class probabilities.",
        "X_kernel",
        returns="log_proba")
    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @method_doc(
        "Predict the class with the largest decision value.",
        "X_kernel",
        returns="labels")
    def predict(self, X):
        F = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
