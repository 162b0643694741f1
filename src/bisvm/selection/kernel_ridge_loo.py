r"""Kernel ridge regression in closed form with its exact leave-one-out residuals
(Shawe-Taylor & Cristianini 2004, *Kernel Methods for Pattern Analysis*): the solver behind
:class:`bisvm.estimators.kernel_ridge.KernelRidge`.

With :math:`f(x) = \sum_n \theta_n k(x, x_n)` (+ ``b``) and sample weights :math:`s_n`,

.. math::
    \min_{\theta, b}\ \sum_n s_n\big(y_n - (K\theta)_n - b\big)^2 + C\,\theta^\top K\theta .

By the change of variables :math:`\tilde K = SKS`, :math:`\tilde y = Sy`,
:math:`S = \mathrm{diag}(\sqrt{s})` and :math:`A = \tilde K + CI`: without intercept
:math:`\tilde\theta = A^{-1}\tilde y`; with one,
:math:`b = \sqrt{s}^\top A^{-1}\tilde y / \sqrt{s}^\top A^{-1}\sqrt{s}` and
:math:`\tilde\theta = A^{-1}(\tilde y - b\sqrt{s})`; then :math:`\theta = S\tilde\theta`.
The fit is linear in ``y`` with :math:`I - H = C\tilde P`,
:math:`\tilde P = A^{-1} - uu^\top/(\sqrt{s}^\top u)`, :math:`u = A^{-1}\sqrt{s}` (just
:math:`A^{-1}` without intercept), so the leave-one-out residuals are exact:
:math:`y_i - f^{(-i)}(x_i) = \tilde\theta_i/(\tilde P_{ii}\sqrt{s_i})`. One Cholesky
factorisation serves the fit and all ``n`` held-out residuals.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.linalg

__all__ = ["KernelRidgeFit", "kernel_ridge_fit"]


class KernelRidgeFit(NamedTuple):
    r"""Solution of :func:`kernel_ridge_fit`.

    Attributes
    ----------
    theta : ndarray, shape (n, k)
        The expansion coefficients :math:`\theta`.
    intercept : ndarray, shape (k,)
        ``b`` (zeros without intercept).
    loo_residuals : ndarray, shape (n, k)
        Exact leave-one-out residuals :math:`y_i - f^{(-i)}(x_i)`; a zero-weight sample
        gets its in-sample residual (it does not move the fit).
    """

    theta: np.ndarray
    intercept: np.ndarray
    loo_residuals: np.ndarray


def kernel_ridge_fit(K, Y, sw, ridge, fit_intercept):
    r"""Kernel ridge coefficients and exact leave-one-out residuals (module docstring).

    Parameters
    ----------
    K : ndarray, shape (n, n)
        The Gram matrix (checked finite by the caller).
    Y : ndarray, shape (n, k)
        Targets, one column per output.
    sw : ndarray, shape (n,)
        Non-negative sample weights :math:`s`, not all zero.
    ridge : float
        :math:`C > 0`.
    fit_intercept : bool
        Fit the unpenalised ``b``.

    Returns
    -------
    KernelRidgeFit

    Warns
    -----
    UserWarning
        When :math:`A` is not positive definite (an indefinite kernel): the system is then
        solved with a symmetric pseudo-inverse. This is not the shifted Cholesky of the
        solvers: shifting would change the model, while ``pinvh`` keeps
        :math:`(K + CI)\theta = y` on the range of :math:`A`.
    """
    n = K.shape[0]
    s = np.sqrt(sw)
    A = s[:, None] * K * s[None, :]
    A[np.diag_indices(n)] += float(ridge)
    try:
        factor = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
        Ainv = scipy.linalg.cho_solve(factor, np.eye(n), check_finite=False)
    except np.linalg.LinAlgError:
        lam = float(scipy.linalg.eigvalsh(A, subset_by_index=[0, 0], check_finite=False)[0])
        warnings.warn(
            "K + ridge*I is not positive definite (smallest eigenvalue "
            f"{lam:.3g}; the kernel is not positive semi-definite on these data); "
            "solved with a symmetric pseudo-inverse",
            UserWarning,
            stacklevel=3,  # the estimator's caller
        )
        Ainv = scipy.linalg.pinvh(A)
    Yt = s[:, None] * Y
    if fit_intercept:
        u = Ainv @ s
        b = (s @ (Ainv @ Yt)) / (s @ u)
        theta_t = Ainv @ (Yt - np.outer(s, b))
        P_diag = np.diag(Ainv) - u * u / (s @ u)
    else:
        b = np.zeros(Y.shape[1])
        theta_t = Ainv @ Yt
        P_diag = np.diag(Ainv)
    theta = s[:, None] * theta_t
    fitted = K @ theta + b
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = theta_t / (P_diag[:, None] * np.where(s > 0, s, 1.0)[:, None])
    zero = s == 0
    loo[zero] = (Y - fitted)[zero]  # a zero-weight sample does not move the fit
    return KernelRidgeFit(theta, b, loo)
