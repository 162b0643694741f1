r"""Conjugate directions and conjugate gradient (seed 002 §3.3-§3.4).

*Linear* CG (:func:`conjugate_gradient`) minimises the quadratic model of seed 002 §3.3,
:math:`E(\theta) = \tfrac12\theta^\top P\theta - q^\top\theta` with :math:`P` symmetric
positive definite, i.e. solves :math:`P\theta = q`, using only products :math:`Pv`. The
directions are :math:`P`-conjugate, :math:`d_{k+1} = -\nabla E_{k+1} + \beta_k d_k` with
:math:`\beta_k = r_{k+1}^\top r_{k+1} / r_k^\top r_k` chosen so that
:math:`d_{k+1}^\top P d_k = 0` (the formula seed 002 leaves implicit), and the exact line
search :math:`\eta_k = r_k^\top r_k / d_k^\top P d_k`; at most ``d`` steps in exact
arithmetic. The finite Newton method uses it for its linear systems when ``d`` is large.

*Nonlinear* CG (:func:`minimize_nonlinear_cg`) applies the same recursion to a general
smooth :math:`E` with a strong-Wolfe line search (:math:`c_2 = 0.1`, so that the step is
close to the exact minimiser seed 002 §3.4 asks for) and one of the classical
:math:`\beta_k`: Polak-Ribière+ (default, :math:`\max(0, g_{k+1}^\top(g_{k+1}-g_k)/
g_k^\top g_k)`), Fletcher-Reeves, or Hestenes-Stiefel. It restarts along :math:`-\nabla E`
every ``restart`` iterations (default ``d``) and whenever the direction is not a descent
direction.
"""

from __future__ import annotations

import numpy as np

from ._linalg import preconditioned_cg
from ._linesearch import line_search
from ._record import IterationLog as IterLog
from ._record import check_tol_max_iter as _check_common
from .base import warn_cap

__all__ = ["conjugate_gradient", "minimize_nonlinear_cg", "solve_nonlinear_cg"]

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


def minimize_nonlinear_cg(fun_grad, x0, *, tol=1e-8, max_iter=10000, beta="PR+",
                          restart=None, c1=1e-4, c2=0.1, max_ls=40,
                          name="nonlinear conjugate gradient", warn=True):
    r"""Minimise a smooth function by nonlinear conjugate gradient.

    Parameters
    ----------
    fun_grad : callable
        ``fun_grad(x) -> (f, g)``.
    x0 : ndarray
    tol : float
        Stop when :math:`\|\nabla E\|_2 \le` ``tol``.
    max_iter : int
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
    _check_common(tol, max_iter)
    if beta not in _BETAS:
        raise ValueError(f"beta must be one of {_BETAS}, got {beta!r}")
    x = np.array(x0, dtype=float, copy=True)
    restart = x.shape[0] if restart is None else int(restart)
    f, g = fun_grad(x)
    log = IterLog(f, g)
    p = -g
    a1 = min(1.0, 1.0 / max(float(np.max(np.abs(g))), 1e-300))
    n_evals, k, since_restart = 1, 0, 0
    converged = log.gns[-1] <= tol
    while not converged and k < max_iter:
        gp = float(g @ p)
        if not gp < 0:
            p, gp, since_restart = -g, -float(g @ g), 0
        a, f_new, x_new, g_new, ev = line_search(fun_grad, x, f, g, p, a1,
                                                 c1=c1, c2=c2, max_ls=max_ls)
        n_evals += ev
        if a is None:
            if since_restart == 0:
                break
            p, since_restart = -g, 0  # retry once along the steepest descent
            continue
        gg = float(g @ g)
        yv = g_new - g
        if beta == "FR":
            b = float(g_new @ g_new) / gg
        elif beta == "HS":
            b = max(0.0, float(g_new @ yv) / float(p @ yv)) if float(p @ yv) != 0 else 0.0
        else:
            b = max(0.0, float(g_new @ yv) / gg)
        since_restart += 1
        if since_restart >= restart:
            b, since_restart = 0.0, 0
        p_new = -g_new + b * p
        # N&W (5.43)-style initial step: keep the first-order change of the last step
        a1 = a * gp / float(g_new @ p_new) if float(g_new @ p_new) < 0 else 1.0
        x, f, g, p = x_new, f_new, g_new, p_new
        k += 1
        log.add(f, np.linalg.norm(g))
        converged = log.gns[-1] <= tol
        if log.stalled:
            break
    if not converged and k >= max_iter and warn:
        warn_cap(name, max_iter, log.gns[-1], tol)
    return log.result(x, k, n_evals, converged)


def solve_nonlinear_cg(problem, *, w0=None, tol=1e-8, max_iter=10000, **kwargs):
    """Nonlinear CG on a :class:`~bisvm.solvers.base.SmoothProblem` (warm start ``w0``,
    zeros by default). See :func:`minimize_nonlinear_cg`."""
    x0 = np.zeros(problem.n_features) if w0 is None else w0
    return minimize_nonlinear_cg(problem.value_and_gradient, x0, tol=tol,
                                 max_iter=max_iter, **kwargs)
