r"""Primal active-set QP solver for small SVM duals.

The method of Nocedal & Wright 2006, "Numerical Optimization", §16.5.

Solves the same problem as :mod:`bisvm.solvers.dual.smo`,

.. math::
    \min_\alpha\ \tfrac12\alpha^\top Q\alpha + p^\top\alpha
    \quad\text{s.t.}\quad y^\top\alpha = \Delta,\quad 0 \le \alpha_t \le C_t,

but with an explicit ``Q`` and a finite method, so that it serves as an independent check
of SMO. Variables are split into three groups: O (``α = 0``), C
(``α = C_t``) and the free set A. Each iteration solves the equality-constrained QP on A,

.. math::
    \begin{pmatrix} Q_{AA} & y_A \\ y_A^\top & 0\end{pmatrix}
    \begin{pmatrix} d_A \\ b \end{pmatrix} =
    \begin{pmatrix} -g_A \\ 0\end{pmatrix},\qquad g = Q\alpha + p,

for a step ``d`` from the current feasible point (the feasible-direction form of the
method, which cannot cycle through infeasible points as the "move the first violator"
variant can). If the full step leaves the box, the step is shortened to the first
blocking bound, which joins O or C. If it is feasible, the multipliers of the bounds,
:math:`r_t = g_t + b\,y_t` (the KKT conditions of the dual: :math:`r_t \ge 0` at 0,
:math:`r_t \le 0` at :math:`C_t`), are checked and the most violating variable is
released into A (the classical rule: one constraint leaves the working set per step).
When ``Q_AA`` is singular along the constraint, a null-space descent direction is taken
instead. The bias is :math:`\rho = -b`.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg

from ..base import ConvergenceRecord, SolverResult, warn_cap
from .smo import dense_hessian

__all__ = ["active_set_qp", "solve_active_set"]


def _eqp(Q, y, g, F):
    """Step on the free set F and the equality multiplier b; ``ray`` flags a descent ray."""
    nF = F.size
    if nF == 0:
        return np.zeros(0), None, False
    K = np.zeros((nF + 1, nF + 1))
    K[:nF, :nF] = Q[np.ix_(F, F)]
    K[:nF, nF] = y[F]
    K[nF, :nF] = y[F]
    rhs = np.concatenate([-g[F], [0.0]])
    sol, *_ = np.linalg.lstsq(K, rhs, rcond=None)
    scale = max(1.0, float(np.max(np.abs(rhs))))
    if np.linalg.norm(K @ sol - rhs) <= 1e-9 * scale * (nF + 1):
        return sol[:nF], float(sol[nF]), False
    # singular and inconsistent: the objective decreases without bound along a direction
    # in null([Q_FF; y_F^T]); take the projected negative gradient there
    N = scipy.linalg.null_space(np.vstack([Q[np.ix_(F, F)], y[F][None, :]]))
    d = -N @ (N.T @ g[F])
    return d, None, True


def solve_active_set(problem, *, alpha0=None, tol=1e-10, max_iter=None):
    """Solve a :class:`~bisvm.solvers.problems.DualProblem` by the active-set method, with
    its full ``Q`` (:func:`~bisvm.solvers.dual.smo.dense_hessian`: small problems only).

    Parameters
    ----------
    problem : DualProblem
    alpha0 : ndarray, shape (l,), optional
        Feasible start; ``problem.alpha_start`` or zero (Δ = 0) by default.
    tol, max_iter
        As in :func:`active_set_qp`.

    Returns
    -------
    SolverResult
        As :func:`active_set_qp`, with ``coef`` the kernel expansion over the training
        samples, :math:`\\sum_{t: s_t = s} y_t\\alpha_t` (as
        :func:`~bisvm.solvers.dual.smo.solve_smo`).
    """
    if alpha0 is None:
        alpha0 = problem.alpha_start
    res = active_set_qp(dense_hessian(problem), problem.p, problem.y, problem.upper,
                        alpha0=alpha0, tol=tol, max_iter=max_iter)
    n = problem.X.shape[0]
    coef = np.bincount(problem.sample_index, weights=problem.y * res.dual_coef, minlength=n)
    return SolverResult(
        coef=coef, intercept=res.intercept, dual_coef=res.dual_coef,
        active_set=res.active_set, objective=res.objective, certificate_value=res.certificate_value,
        certificate=res.certificate, n_iter=res.n_iter, converged=res.converged,
        seconds=res.seconds, record=res.record)


def active_set_qp(Q, p, y, upper, *, alpha0=None, tol=1e-10, max_iter=None):
    """Solve the box- and equality-constrained dual QP with an explicit Hessian.

    Parameters
    ----------
    Q : ndarray, shape (l, l)
        Symmetric positive semi-definite Hessian.
    p, y, upper : ndarray, shape (l,)
        Linear term, ±1 signs, upper bounds (``inf`` allowed).
    alpha0 : ndarray, optional
        Feasible start (zero by default, so Δ = 0).
    tol : float
        Tolerance on the bound multipliers, relative to ``max(1, max|g|)``.
    max_iter : int, optional
        Defaults to ``50 * l + 100``.

    Returns
    -------
    SolverResult
        ``dual_coef`` = α; ``intercept`` = :math:`-\\rho = b`, the multiplier of
        :math:`y^\\top\\alpha = \\Delta` (as in :func:`~bisvm.solvers.dual.smo.solve_smo`);
        ``coef`` = :math:`y \\circ \\alpha` (one entry per variable);
        ``objective`` :math:`\\tfrac12\\alpha^\\top Q\\alpha + p^\\top\\alpha`;
        certificate ``"kkt_violation"``: the largest violation of the bound multipliers'
        signs (0 when every variable is free); ``active_set`` the indices with
        :math:`\\alpha_t > 0`; ``record`` one entry.
    """
    t0 = time.perf_counter()
    Q = np.asarray(Q, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    C = np.asarray(upper, dtype=np.float64)
    l = p.shape[0]
    if Q.shape != (l, l):
        raise ValueError(f"Q must have shape ({l}, {l}), got {Q.shape}")
    alpha = np.zeros(l) if alpha0 is None else np.array(alpha0, dtype=np.float64)
    if max_iter is None:
        max_iter = 50 * l + 100
    # working set: -1 at zero, +1 at upper bound, 0 free
    state = np.where(alpha <= 0, -1, np.where(alpha >= C, 1, 0))
    b = 0.0
    converged = False
    viol = np.inf
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007
        g = Q @ alpha + p
        F = np.flatnonzero(state == 0)
        d, bF, ray = _eqp(Q, y, g, F)
        scale = max(1.0, float(np.max(np.abs(g))))
        if F.size and (ray or np.max(np.abs(d)) > 1e-12 * max(1.0, float(np.max(alpha)))):
            # step to the first blocking bound
            aF = alpha[F]
            with np.errstate(divide="ignore", invalid="ignore"):
                lim = np.where(d < 0, -aF / d, np.where(d > 0, (C[F] - aF) / d, np.inf))
            k = int(np.argmin(lim))
            step = float(lim[k])
            if not ray and step >= 1.0:
                alpha[F] = aF + d
                continue
            if not np.isfinite(step):
                raise ValueError("the dual QP is unbounded below (C = inf and singular Q)")
            alpha[F] = aF + step * d
            t = F[k]
            if d[k] < 0:
                alpha[t], state[t] = 0.0, -1
            else:
                alpha[t], state[t] = C[t], 1
            continue
        # stationary on the free set: check the multipliers of the bounds
        W = np.flatnonzero(state != 0)
        if W.size == 0:
            converged, viol, b = True, 0.0, (bF if bF is not None else 0.0)
            break
        gW, yW, sW = g[W], y[W], state[W]
        if bF is None:
            # no free variable fixes b: choose it inside the interval the bounds allow
            lo, hi = -np.inf, np.inf
            for gt, yt, st in zip(gW, yW, sW, strict=True):
                # need st*(gt + b*yt) <= 0, i.e. -st*yt*b >= st*gt
                cb = -st * yt
                if cb > 0:
                    lo = max(lo, st * gt / cb)
                else:
                    hi = min(hi, st * gt / cb)
            if lo <= hi:
                b = 0.5 * (lo + hi) if np.isfinite(lo + hi) else (lo if np.isfinite(lo) else hi)
                if not np.isfinite(b):
                    b = 0.0
            else:
                b = 0.5 * (lo + hi)
        else:
            b = bF
        r = gW + b * yW
        violation = np.maximum(sW * r, 0.0)  # at 0 (s=-1): r >= 0; at C (s=+1): r <= 0
        viol = float(np.max(violation))
        if viol <= tol * scale:
            converged = True
            break
        state[W[int(np.argmax(violation))]] = 0
    else:
        warn_cap("active-set QP", max_iter, viol, tol)
    objective = 0.5 * float(alpha @ Q @ alpha) + float(p @ alpha)
    seconds = time.perf_counter() - t0
    return SolverResult(
        coef=y * alpha, intercept=float(b), dual_coef=alpha,
        active_set=np.flatnonzero(alpha > 0), objective=objective, certificate_value=float(viol),
        certificate="kkt_violation", n_iter=n_iter, converged=converged, seconds=seconds,
        record=ConvergenceRecord(np.array([objective]), np.array([float(viol)]),
                                 np.array([seconds])))
