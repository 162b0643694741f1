r"""Implicit (KKT) hypergradient of a smooth, strongly convex lower level (seed-000
§2.3-2.7).

With :math:`\nabla_w E(\hat w, \beta) = 0` and :math:`G = \nabla^2_{ww} E(\hat w,\beta)`
positive definite, the multiplier of the single-level reformulation is
:math:`\hat\lambda = -G^{-1}\nabla_w J` (4.11) and the hypergradient is
:math:`\nabla_\beta J = (\nabla_{w\beta} E)^\top \hat\lambda` (4.12)-(4.13), the same as
the implicit-function formula (4.8). ``G`` is factored by Cholesky; no inverse is formed.
"""

from __future__ import annotations

import numpy as np

from ..solvers._linalg import cholesky_solve

__all__ = ["implicit_hypergradient", "adjoint_hypergradient"]


def implicit_hypergradient(hessian, dJ_dw, weight_jacobian, *, sensitivity=False):
    r"""Hypergradient :math:`(\nabla_{w\beta}E)^\top \hat\lambda`,
    :math:`\hat\lambda = -G^{-1}\nabla_w J`.

    Parameters
    ----------
    hessian : ndarray, shape (d, d)
        :math:`G = \nabla^2_{ww} E(\hat w, \beta)`, symmetric positive definite.
    dJ_dw : ndarray, shape (d,)
        :math:`\nabla_w J(\hat w)`.
    weight_jacobian : ndarray, shape (d, k)
        :math:`\nabla_{w\beta} E`, column k = derivative of :math:`\nabla_w E` in
        :math:`\beta_k` (seed-000 Lemmas 2d, 3d, 4d; erratum 2 for groups).

    sensitivity : bool
        Also return :math:`\partial\hat w/\partial\beta = -G^{-1}\nabla_{w\beta}E`
        (seed-000 (4.7)), from the same factorisation.

    Returns
    -------
    grad : ndarray, shape (k,)
    lam : ndarray, shape (d,)
        The KKT multiplier :math:`\hat\lambda`.
    dw_dbeta : ndarray, shape (d, k)
        Only with ``sensitivity=True``.
    """
    if not sensitivity:
        lam = -cholesky_solve(hessian, dJ_dw)
        return weight_jacobian.T @ lam, lam
    sol = cholesky_solve(hessian, np.c_[dJ_dw, weight_jacobian])
    lam = -sol[:, 0]
    return weight_jacobian.T @ lam, lam, -sol[:, 1:]


def adjoint_hypergradient(factor, dJ_dw, weight_vjp, *, lam0=None, rtol=1e-10):
    r"""Hypergradient by one adjoint solve, at a cost independent of the number of
    hyperparameters: :math:`\hat\lambda = -G^{-1}\nabla_w J` (seed-000 (4.11)) with the
    lower-level solver's Newton factor, then
    :math:`\nabla_b J = (\nabla_{wb}E)^\top\hat\lambda` as a vector-Jacobian product
    (seed-000 (4.12)-(4.13); sparse-ho's "implicit" mode).

    Parameters
    ----------
    factor : NewtonFactor
        :math:`G = \nabla^2_{ww}E(\hat w)`: a direct factor (dense Cholesky, Woodbury)
        or an iterative one (preconditioned CG), which is warm-started at ``lam0``.
    dJ_dw : ndarray, shape (d,)
    weight_vjp : callable
        ``v -> (∇_{wb}E)^T v``, e.g. ``GroupPseudoHuber.weight_vjp`` at :math:`\hat w`.
    lam0 : ndarray, optional
        Warm start of the multiplier (the previous outer iteration's).
    rtol : float
        Relative residual of an iterative adjoint solve.

    Returns
    -------
    grad : ndarray
    lam : ndarray, shape (d,)
    """
    x0 = None if lam0 is None else -np.asarray(lam0)
    lam = -factor.solve(dJ_dw, x0=x0, rtol=rtol)
    return weight_vjp(lam), lam
