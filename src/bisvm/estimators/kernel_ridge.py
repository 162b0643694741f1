r"""Kernel ridge regression in closed form, with exact leave-one-out residuals.

With :math:`f(x) = \sum_n \theta_n k(x, x_n)` (+ ``b``),

.. math::
    \min_{\theta, b}\ \sum_n s_n\big(y_n - (K\theta)_n - b\big)^2 + C\,\theta^\top K\theta,

whose solution without intercept is :math:`\theta = (K + C I)^{-1} y` (Saunders,
Gammerman & Vovk 1998, "Ridge regression learning algorithm in dual variables"), and
with an unpenalised intercept :math:`\theta = A^{-1}(y - b\mathbf 1)`,
:math:`b = \mathbf 1^\top A^{-1}y / \mathbf 1^\top A^{-1}\mathbf 1`, :math:`A = K + CI`,
which needs no invertibility of :math:`K`. ``C`` is the parameter ``ridge``
(scikit-learn's ``alpha``). Sample weights :math:`s_n` enter by the change of variables
:math:`\tilde K = SKS`, :math:`\tilde y = Sy`, :math:`S = \mathrm{diag}(\sqrt{s})`.

The fit is linear in ``y``: :math:`\hat y = Hy` with :math:`I - H = C\,\tilde P` and
:math:`\tilde P = A^{-1} - A^{-1}\mathbf 1\mathbf 1^\top A^{-1}/(\mathbf 1^\top A^{-1}
\mathbf 1)` (just :math:`A^{-1}` without intercept), so the leave-one-out residuals are
exact in closed form: :math:`y_i - f^{(-i)}(x_i) = (y_i - \hat y_i)/(1 - H_{ii})
= \theta_i / \tilde P_{ii}` — one Cholesky factorisation serves the fit and all ``n``
held-out residuals. The solve is :func:`bisvm.selection.kernel_ridge_loo.kernel_ridge_fit`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from bisvm.kernels import (
    check_finite_gram,
    check_precomputed,
    make_kernel,
    warn_if_indefinite,
)
from bisvm.selection.kernel_ridge_loo import kernel_ridge_fit

from ._constraints import KERNEL_PARAMETERS, positive
from ._docs import method_doc

__all__ = ["KernelRidge"]


class KernelRidge(RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression by one Cholesky solve, with exact leave-one-out residuals.

    With :math:`f(x) = \sum_n \theta_n k(x, x_n) + b`, it solves

    .. math::
        \min_{\theta, b}\ \sum_n s_n\big(y_n - (K\theta)_n - b\big)^2
        + C\,\theta^\top K\theta,

    whose solution is :math:`\theta = (K + CI)^{-1}(y - b\mathbf 1)`, with
    :math:`b = 0` or, for an unpenalised intercept,
    :math:`b = \mathbf 1^\top A^{-1}y / \mathbf 1^\top A^{-1}\mathbf 1`,
    :math:`A = K + CI` (Saunders, Gammerman & Vovk 1998). The fit is linear in ``y``, so
    the same factorisation gives the exact leave-one-out residuals
    :math:`(y_i - \hat y_i)/(1 - H_{ii})` for all ``n`` rows at no extra cost; they are
    reported as ``loo_residuals_``.

    Parameters
    ----------
    ridge : float > 0, default=1.0
        The penalty :math:`C` on :math:`\theta^\top K\theta` (scikit-learn's ``alpha``).
    kernel : str or callable, default="linear"
        The kernel :math:`k`: ``"linear"``, ``"poly"``, ``"rbf"``, ``"laplacian"``,
        ``"sigmoid"``, a callable returning the Gram block of two sets of samples, or
        ``"precomputed"`` (then ``X`` is the Gram matrix).
    gamma : float > 0, "scale" or "auto", default="scale"
        Kernel coefficient of the poly, rbf, laplacian and sigmoid kernels (``"scale"``:
        :math:`1/(d\,\mathrm{Var}(X))`, ``"auto"``: :math:`1/d`).
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        The constant term of the poly and sigmoid kernels.
    fit_intercept : bool, default=False
        Fit an unpenalised bias :math:`b`.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        :math:`\theta`.
    intercept_ : float or ndarray of shape (n_targets,)
        :math:`b` (0 when ``fit_intercept=False``).
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training data (or the training Gram matrix for ``"precomputed"``).
    loo_residuals_ : ndarray of the shape of ``y``
        Exact leave-one-out residuals :math:`y_i - f^{(-i)}(x_i)`.
    loo_mse_ : float or ndarray of shape (n_targets,)
        Mean squared leave-one-out residual (weighted by ``sample_weight``).

    References
    ----------
    C. Saunders, A. Gammerman and V. Vovk, "Ridge regression learning algorithm in dual
    variables", ICML 1998.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import KernelRidge
    >>> X = np.linspace(0.0, 1.0, 20)[:, None]
    >>> y = np.sin(4.0 * X[:, 0])
    >>> reg = KernelRidge(ridge=1e-3, kernel="rbf", gamma=10.0, fit_intercept=True)
    >>> reg = reg.fit(X, y)
    >>> round(float(reg.predict([[0.5]])[0]), 2)
    0.91
    >>> bool(reg.loo_mse_ < 1e-3)
    True
    """

    # private fitted state that model files must carry (bisvm.persistence)
    _persist_attrs = ("_kernel",)

    _parameter_constraints: dict = {
        "ridge": [positive()],
        **KERNEL_PARAMETERS,
        "fit_intercept": "no_validation",  # read as a truth value
    }

    def __init__(
        self, ridge=1.0, *, kernel="linear", gamma="scale", degree=3, coef0=1.0, fit_intercept=False
    ):
        self.ridge = ridge
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept

    @method_doc(
        "Fit by one Cholesky factorisation of :math:`SKS + C I`.",
        "X_train_gram",
        r"""y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Numeric targets.""",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Non-negative finite weights (``ValueError`` otherwise).""",
        returns=r"""KernelRidge
            The fitted estimator.""",
        extended=r"""Sample weights :math:`s_n` enter by the change of variables
        :math:`\tilde K = SKS`, :math:`\tilde y = Sy`, :math:`S = \mathrm{diag}(\sqrt{s})`.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        y_kind = np.asarray(y).dtype.kind
        if y_kind in "USV":
            # validate_data(y_numeric=True) converts object arrays only; text would reach
            # numpy's ufuncs and fail there without naming the target
            raise ValueError(
                f"the target y must be numeric, got text (dtype {np.asarray(y).dtype})"
            )
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        if self.kernel == "precomputed":
            check_precomputed(X)
            warn_if_indefinite(
                X, "KernelRidge",
                "(K + ridge·I) θ = y is still solved, but the model is no longer the "
                "minimiser of a convex ridge objective",
            )
        self._kernel = make_kernel(
            self.kernel, gamma=self.gamma, coef0=self.coef0, degree=self.degree, X=X
        )
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if not np.any(sw > 0):
            raise ValueError("sample_weight: all samples have zero weight")
        K = check_finite_gram(self._kernel(X), self.kernel, X)
        ravel = y.ndim == 1
        theta, b, loo = kernel_ridge_fit(K, y.reshape(K.shape[0], -1), sw, self.ridge,
                                         self.fit_intercept)
        self.X_fit_ = X
        self.dual_coef_ = theta[:, 0] if ravel else theta
        self.intercept_ = float(b[0]) if ravel else b
        self.loo_residuals_ = loo[:, 0] if ravel else loo
        mse = np.average(loo**2, axis=0, weights=sw)
        self.loo_mse_ = float(mse[0]) if ravel else mse
        return self

    @method_doc(
        r"""Predict :math:`f(x) = \sum_n \theta_n k(x, x_n) + b`.""",
        "X_kernel",
        returns=r"""ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predicted values.""")
    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "precomputed":
            K = check_precomputed(X, n_train=self.X_fit_.shape[0], symmetric=False)
        else:
            K = check_finite_gram(self._kernel(X, self.X_fit_), self.kernel, X)
        return K @ self.dual_coef_ + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.target_tags.multi_output = True
        return tags
