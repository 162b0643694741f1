r"""Conjugate directions and conjugate gradient (Nocedal & Wright 2006, chapter 5).

*Linear* CG (:func:`conjugate_gradient`) minimises the quadratic model
:math:`E(\theta) = \tfrac12\theta^\top P\theta - q^\top\theta` with :math:`P` symmetric
positive definite, i.e. solves :math:`P\theta = q`, using only products :math:`Pv`. The
directions are :math:`P`-conjugate, :math:`d_{k+1} = -\nabla E_{k+1} + \beta_k d_k` with
:math:`\beta_k = r_{k+1}^\top r_{k+1} / r_k^\top r_k` chosen so that
:math:`d_{k+1}^\top P d_k = 0` (Hestenes & Stiefel 1952, "Methods of conjugate
gradients for solving linear systems"), and the exact line
search :math:`\eta_k = r_k^\top r_k / d_k^\top P d_k`; at most ``d`` steps in exact
arithmetic. The finite Newton method uses it for its linear systems when ``d`` is large.

*Nonlinear* CG (:func:`minimize_nonlinear_cg`) applies the same recursion to a general
smooth :math:`E` with a strong-Wolfe line search (:math:`c_2 = 0.1`, so that the step is
close to the exact minimiser along the direction) and one of the classical
:math:`\beta_k`: Polak-Ribière+ (default, :math:`\max(0, g_{k+1}^\top(g_{k+1}-g_k)/
g_k^\top g_k)`), Fletcher-Reeves, or Hestenes-Stiefel. It restarts along :math:`-\nabla E`
every ``restart`` iterations (default ``d``) and whenever the direction is not a descent
direction.
"""

from __future__ import annotations

import numpy as np

from .._linalg import preconditioned_cg
from .._linesearch import line_search
from .._record import check_tol_max_iter
from ._driver import descent_loop, solve_on_problem

__all__ = ["conjugate_gradient", "truncated_newton_cg", "minimize_nonlinear_cg",
           "solve_nonlinear_cg"]

_BETAS = ("PR+", "FR", "HS")


def conjugate_gradient(matvec, b, x0=None, *, tol=1e-10, max_iter=None):
    r"""Solve :math:`P x = b` for symmetric positive definite :math:`P` by linear CG.

    Parameters
    ----------
    matvec : callable
        ``matvec(v) -> P v``.
    b : ndarray
    x0 : ndarray, optional
        Warm start (zeros by default).
    tol : float
        Stop when :math:`\|b - Px\|_2 \le` ``tol`` :math:`\cdot \|b\|_2`.
    max_iter : int, optional
        Default ``10 * len(b)``.

    Returns
    -------
    x : ndarray
    n_iter : int
    residual_norm : float
    """
    b = np.asarray(b, dtype=float)
    max_iter = 10 * b.shape[0] if max_iter is None else max_iter
    # plain CG is the identity-preconditioned case of the shared implementation
    x, k, rel = preconditioned_cg(matvec, lambda r: r, b, x0=x0, rtol=tol, max_iter=max_iter)
    return x, k, rel * float(np.linalg.norm(b))


def truncated_newton_cg(hess_vec, precond, grad, *, forcing=0.5, max_iter=None):
    r"""The inexact Newton direction of a truncated Newton method: preconditioned CG on
    :math:`H s = -g` stopped by the quadratic-model rule of Nash & Sofer (1990,
    "Assessing a search direction within a truncated-Newton method"), as LIBLINEAR's
    Newton solver stops its CG (Hsia, Chiang & Lin 2018).

    With :math:`Q(s) = g^\top s + \tfrac12 s^\top H s` and :math:`s_i` the i-th CG
    iterate, CG stops when the last iteration's decrease is small beside the average:
    :math:`i\,(Q(s_{i-1}) - Q(s_i)) \le \eta\,(-Q(s_i))`. A residual test stops
    early: on the first iterate the quadratic is far from explored even when the
    residual already looks small (a steepest-descent-like step), so a rule on the
    residual alone either stops there or asks for many products near the optimum.

    Parameters
    ----------
    hess_vec : callable
        ``hess_vec(v) -> H v`` for symmetric positive (semi-)definite ``H``.
    precond : callable
        ``precond(r) -> M^{-1} r`` for a symmetric positive definite ``M``.
    grad : ndarray
    forcing : float
        :math:`\eta` above.
    max_iter : int, optional
        Default ``len(grad)``.

    Returns
    -------
    s : ndarray
    n_iter : int
        Products with ``H``.
    """
    g = np.asarray(grad, dtype=float)
    max_iter = g.shape[0] if max_iter is None else int(max_iter)
    s = np.zeros_like(g)
    r = -g
    zr = precond(r)
    p = zr.copy()
    rz = float(r @ zr)
    Q = 0.0
    k = 0
    while k < max_iter and rz > 0:
        Hp = hess_vec(p)
        k += 1
        pHp = float(p @ Hp)
        if not pHp > 0:
            break  # no curvature left along p: keep the current iterate
        alpha = rz / pHp
        s += alpha * p
        r -= alpha * Hp
        Q_new = -0.5 * float(s @ (r - g))
        if Q_new - Q >= 0 or k * (Q_new - Q) >= forcing * Q_new:
            break
        Q = Q_new
        zr = precond(r)
        rz_new = float(r @ zr)
        p *= rz_new / rz
        p += zr
        rz = rz_new
    return s, k


def minimize_nonlinear_cg(fun_grad, x0, *, tol=1e-8, max_iter=10000, beta="PR+",
                          restart=None, c1=1e-4, c2=0.1, max_ls=40,
                          name="nonlinear conjugate gradient", warn=True):
    r"""Minimise a smooth function by nonlinear conjugate gradient.

    Parameters
    ----------
    fun_grad, x0, tol, max_iter, max_ls, name, warn
        The common parameters (:mod:`bisvm.solvers.primal._driver`).
    beta : {"PR+", "FR", "HS"}
        Formula for :math:`\beta_k`.
    restart : int, optional
        Restart along the steepest descent every ``restart`` iterations (default ``d``).
    c1, c2 : float
        Strong-Wolfe constants (:math:`c_2 < 1/2` is needed by Fletcher-Reeves).

    Returns
    -------
    SolverResult
    """
    check_tol_max_iter(tol, max_iter)
    if beta not in _BETAS:
        raise ValueError(f"beta must be one of {_BETAS}, got {beta!r}")
    restart = np.shape(x0)[0] if restart is None else int(restart)
    st = {"p": None, "a1": None, "since_restart": 0}

    def step(x, f, g):
        if st["p"] is None:  # the first iteration: steepest descent
            st["p"], st["a1"] = -g, min(1.0, 1.0 / max(float(np.max(np.abs(g))), 1e-300))
        p, evals = st["p"], 0
        while True:
            gp = float(g @ p)
            if not gp < 0:
                p, gp, st["since_restart"] = -g, -float(g @ g), 0
            a, f_new, x_new, g_new, ev = line_search(fun_grad, x, f, g, p, st["a1"],
                                                     c1=c1, c2=c2, max_ls=max_ls)
            evals += ev
            if a is not None:
                break
            if st["since_restart"] == 0:
                return None, evals
            p, st["since_restart"] = -g, 0  # retry once along the steepest descent
        b = _beta(beta, g, g_new, p)
        st["since_restart"] += 1
        if st["since_restart"] >= restart:
            b, st["since_restart"] = 0.0, 0
        p_new = -g_new + b * p
        # N&W (5.43)-style initial step: keep the first-order change of the last step
        st["a1"] = a * gp / float(g_new @ p_new) if float(g_new @ p_new) < 0 else 1.0
        st["p"] = p_new
        return (x_new, f_new, g_new), evals

    return descent_loop(fun_grad, x0, step, tol=tol, max_iter=max_iter, name=name,
                        warn=warn)


def _beta(beta, g, g_new, p):
    r"""The :math:`\beta_k` of Fletcher-Reeves, Hestenes-Stiefel or Polak-Ribière+."""
    gg = float(g @ g)
    yv = g_new - g
    if beta == "FR":
        return float(g_new @ g_new) / gg
    if beta == "HS":
        return max(0.0, float(g_new @ yv) / float(p @ yv)) if float(p @ yv) != 0 else 0.0
    return max(0.0, float(g_new @ yv) / gg)


def solve_nonlinear_cg(problem, *, w0=None, tol=1e-8, max_iter=10000, **kwargs):
    """Nonlinear CG on a :class:`~bisvm.solvers.base.SmoothProblem` (warm start ``w0``,
    zeros by default). See :func:`minimize_nonlinear_cg`."""
    return solve_on_problem(minimize_nonlinear_cg, problem, w0, tol=tol, max_iter=max_iter,
                            **kwargs)
