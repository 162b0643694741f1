r"""Implicit (KKT) hypergradient of a smooth, strongly convex lower level.

With :math:`\nabla_w E(\hat w, \beta) = 0` and :math:`G = \nabla^2_{ww} E(\hat w,\beta)`
positive definite, the multiplier of the single-level reformulation is
:math:`\hat\lambda = -G^{-1}\nabla_w J` and the hypergradient is
:math:`\nabla_\beta J = (\nabla_{w\beta} E)^\top \hat\lambda`, the same as the
implicit-function formula :math:`\partial\hat w/\partial\beta = -G^{-1}\nabla_{w\beta}E`
(González Vallejo 2024; Pedregosa 2016, "Hyperparameter optimization with approximate
gradient"). ``G`` is factored by Cholesky; no inverse is formed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..solvers._linalg import cholesky_solve

__all__ = ["implicit_hypergradient", "adjoint_hypergradient", "Hypergradient",
           "ImplicitAdjoint"]


@runtime_checkable
class Hypergradient(Protocol):
    """The *hypergradient* role of the bilevel engine.

    ``gradient`` turns one fold's lower-level solution (``result`` of ``model.solve`` on
    ``problem``) and the criterion's gradient ``dJ`` into the gradient in β of the
    :class:`~bisvm.selection.model.HyperModel` ``hyper``, returning also the adjoint
    multipliers (the next call's warm start) and the Newton factor it used; ``predict``
    is the first-order prediction of the solution after a change of the weights."""

    def gradient(self, model, hyper, problem, result, dJ, tol, lam0=None): ...

    def predict(self, model, problem, w, factor, db, dl2): ...


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
        :math:`\beta_k`.

    sensitivity : bool
        Also return :math:`\partial\hat w/\partial\beta = -G^{-1}\nabla_{w\beta}E`,
        from the same factorisation.

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
    hyperparameters: :math:`\hat\lambda = -G^{-1}\nabla_w J` with the
    lower-level solver's Newton factor, then
    :math:`\nabla_b J = (\nabla_{wb}E)^\top\hat\lambda` as a vector-Jacobian product
    (sparse-ho's "implicit" mode).

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


@dataclass(frozen=True)
class ImplicitAdjoint:
    r"""Implicit differentiation by one adjoint solve per fold (sparse-ho's "implicit"
    mode), with the lower-level solver's Newton factor and
    HOAG's tolerance coupling (Pedregosa 2016, "Hyperparameter optimization with
    approximate gradient"): the adjoint residual is solved to the lower level's gradient
    tolerance relative to :math:`\|\nabla_w J\|`."""

    def gradient(self, model, hyper, problem, result, dJ, tol, lam0=None):
        """``(grad in β, multipliers, factor)`` of one fold (class docstring)."""
        w = result.coef
        factor = model.newton_factor(problem, result)
        # HOAG: the adjoint residual matches the lower level's gradient tolerance, an
        # absolute bound like the lower level's
        rtol = min(1e-2, max(1e-10, tol / max(float(np.linalg.norm(dJ)), 1e-300)))
        g_w, lam = adjoint_hypergradient(factor, dJ,
                                         lambda v: model.weight_vjp(problem, w, v),
                                         lam0=lam0, rtol=rtol)
        grad = hyper.reduce(g_w, model.l2_vjp(problem, w, lam)) if hyper.learn_l2 \
            else hyper.reduce(g_w)
        return grad, lam, factor

    def predict(self, model, problem, w, factor, db, dl2):
        r"""The implicit function theorem's first-order solution after the weights move
        by ``db`` (and α by ``dl2``): :math:`\hat w - H^{-1}(\nabla_{wb}E)\,\Delta b`
        one directional solve with the factor."""
        rhs = model.weight_jvp(problem, w, db)
        if dl2:
            rhs = rhs + model.l2_jvp(problem, w, dl2)
        return w - factor.solve(rhs, rtol=1e-3)
