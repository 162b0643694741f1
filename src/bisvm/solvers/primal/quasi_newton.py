r"""BFGS quasi-Newton method (Nocedal & Wright 2006, "Numerical optimization", Alg. 6.1).

A quasi-Newton method builds an approximation of the inverse Hessian from the gradients
seen over the iterations. BFGS keeps the dense inverse
approximation :math:`H_k` and updates it with the pair
:math:`s_k = \theta_{k+1} - \theta_k`, :math:`y_k = \nabla E_{k+1} - \nabla E_k`:

.. math::
    H_{k+1} = (I - \rho_k s_k y_k^\top) H_k (I - \rho_k y_k s_k^\top) + \rho_k s_k s_k^\top,
    \qquad \rho_k = 1 / (y_k^\top s_k),

with the scaled start :math:`H_0 = (s_0^\top y_0 / y_0^\top y_0) I` applied after the first
step (N&W eq. 6.20). The strong-Wolfe line search guarantees :math:`y_k^\top s_k > 0`; a pair
violating it is skipped. Its weakness is the :math:`O(d^2)` memory; the
limited-memory variant is :func:`bisvm.solvers.primal.lbfgs.minimize_lbfgs` (not duplicated here).
"""

from __future__ import annotations

import numpy as np

from .._linesearch import line_search
from .._record import check_tol_max_iter
from ._driver import descent_loop, solve_on_problem

__all__ = ["minimize_bfgs", "solve_bfgs"]


def minimize_bfgs(fun_grad, x0, *, tol=1e-8, max_iter=2000, c1=1e-4, c2=0.9, max_ls=40,
                  name="BFGS", warn=True):
    r"""Minimise a smooth function by BFGS with a strong-Wolfe line search.

    Parameters
    ----------
    fun_grad, x0, tol, max_iter, c1, c2, max_ls, name, warn
        The common parameters (:mod:`bisvm.solvers.primal._driver`).

    Returns
    -------
    SolverResult
        ``stats["inverse_hessian"]`` holds the final :math:`H_k`.
    """
    check_tol_max_iter(tol, max_iter)
    d = np.shape(x0)[0]
    state = {"H": np.eye(d), "scaled": False}

    def step(x, f, g):
        H = state["H"]
        p = -H @ g
        if not float(g @ p) < 0:  # lost positive definiteness numerically: restart
            H = state["H"] = np.eye(d)
            state["scaled"] = False
            p = -g
        a1 = 1.0 if state["scaled"] else min(1.0, 1.0 / max(float(np.max(np.abs(g))),
                                                              1e-300))
        a, f_new, x_new, g_new, ev = line_search(fun_grad, x, f, g, p, a1,
                                                 c1=c1, c2=c2, max_ls=max_ls)
        if a is None:
            return None, ev
        s, yv = x_new - x, g_new - g
        sy = float(s @ yv)
        if sy > 1e-12 * float(yv @ yv):
            if not state["scaled"]:
                H *= sy / float(yv @ yv)
                state["scaled"] = True
            rho = 1.0 / sy
            Hy = H @ yv
            # (I - ρ s yᵀ) H (I - ρ y sᵀ) + ρ s sᵀ, expanded to two rank-one corrections
            H += (rho * rho * float(yv @ Hy) + rho) * np.outer(s, s)
            H -= rho * (np.outer(Hy, s) + np.outer(s, Hy))
        return (x_new, f_new, g_new), ev

    return descent_loop(fun_grad, x0, step, tol=tol, max_iter=max_iter, name=name,
                        warn=warn, stats=lambda: {"inverse_hessian": state["H"]})


def solve_bfgs(problem, *, w0=None, tol=1e-8, max_iter=2000, **kwargs):
    """BFGS on a :class:`~bisvm.solvers.base.SmoothProblem` (warm start ``w0``, zeros by
    default). See :func:`minimize_bfgs`."""
    return solve_on_problem(minimize_bfgs, problem, w0, tol=tol, max_iter=max_iter,
                            **kwargs)
