r"""Block coordinate descent on a smooth problem (Tseng 2001, "Convergence of a block
coordinate descent method for nondifferentiable minimization"; Wright 2015, "Coordinate
descent algorithms").

Each step optimises a subset of the variables with the others fixed. The coefficients are split into
blocks :math:`B_1, \dots, B_m`; a sweep visits every block once and minimises
:math:`F(w) = \sum_i s_i\,\ell(y_i, x_i^\top w) + P(w)` over :math:`w_B` with the other
blocks fixed, approximately, by one damped Newton step on the block:

.. math::
    H_{BB}\, p_B = -\nabla_B F(w), \qquad
    H_{BB} = X_B^\top \operatorname{diag}(s\,\ell'') X_B + \nabla^2_{BB} P(w),

followed by Armijo backtracking. The margins :math:`z = Xw` are kept up to date
incrementally (:math:`z \mathrel{+}= \eta X_B p_B`), so a sweep costs :math:`O(n d\,b)` for
blocks of size :math:`b` instead of a full Newton step's :math:`O(n d^2 + d^3)`. The sweeps
stop when the full gradient norm falls to ``tol``. With blocks of size one this is
coordinate descent with one-dimensional Newton steps; with one block it is Newton's
method.
"""

from __future__ import annotations

import numpy as np

from .._linalg import cholesky_solve
from .._linesearch import armijo
from .._record import IterationLog, check_tol_max_iter
from ._driver import finish

__all__ = ["solve_block_coordinate_descent", "make_blocks"]


def make_blocks(n_features, block_size):
    """Contiguous blocks of ``block_size`` coefficients (the last may be smaller)."""
    if int(block_size) != block_size or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    return [np.arange(i, min(i + int(block_size), n_features))
            for i in range(0, n_features, int(block_size))]


def solve_block_coordinate_descent(problem, *, w0=None, tol=1e-8, max_iter=5000,
                                   blocks=None, block_size=1, c1=1e-4, rho=0.5, max_ls=50,
                                   warn=True):
    r"""Minimise a :class:`~bisvm.solvers.base.SmoothProblem` by block coordinate descent.

    Parameters
    ----------
    problem : SmoothProblem
    w0 : ndarray, optional
        Warm start (zeros by default).
    tol : float
        Stop when :math:`\|\nabla F\|_2 \le` ``tol`` after a sweep.
    max_iter : int
        Cap on sweeps (one sweep visits every block once).
    blocks : list of index arrays, optional
        A partition of the coefficients; default contiguous blocks of ``block_size``.
    block_size : int
    c1, rho : float
        Armijo constant and backtracking factor.

    Returns
    -------
    SolverResult
        ``n_iter`` counts sweeps, ``n_evals`` objective evaluations;
        ``stats["evals_per_sweep"]`` the cumulative evaluations after each sweep,
        ``stats["n_blocks"]`` the number of blocks.
    """
    check_tol_max_iter(tol, max_iter)
    X, y, loss, pen = problem.X, problem.y, problem.loss, problem.penalty
    d = problem.n_features
    if blocks is None:
        blocks = make_blocks(d, block_size)
    else:
        blocks = [np.asarray(b, dtype=np.int64).reshape(-1) for b in blocks]
        cover = np.sort(np.concatenate(blocks)) if blocks else np.array([], dtype=np.int64)
        if cover.shape[0] != d or np.any(cover != np.arange(d)):
            raise ValueError("blocks must partition range(n_features) exactly")
    s = problem.sample_scale() * np.ones(X.shape[0])
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=float, copy=True)
    z = X @ w

    def objective(z, w):
        return float(s @ loss.value(y, z)) + pen.value(w)

    def full_grad(z, w):
        return X.T @ (s * loss.derivative(y, z)) + pen.gradient(w)

    f = objective(z, w)
    g = full_grad(z, w)
    log = IterationLog(f, g)
    n_evals, k = 1, 0
    evals_per_sweep = [1]
    converged = log.value <= tol
    while not converged and k < max_iter:
        for B in blocks:
            XB = X[:, B]
            dl = s * loss.derivative(y, z)
            gB = XB.T @ dl + pen.gradient(w)[B]
            h = s * loss.second_derivative(y, z)
            HB = (XB.T * h) @ XB + pen.hessian(w)[np.ix_(B, B)]
            pB = -cholesky_solve(HB, gB)
            d0 = float(gB @ pB)
            if not d0 < 0:
                pB, d0 = -gB, -float(gB @ gB)
            if d0 == 0.0:
                continue
            q = XB @ pB

            def phi(a, w=w, z=z, B=B, pB=pB, q=q):
                w_try = w.copy()
                w_try[B] += a * pB
                z_try = z + a * q
                return objective(z_try, w_try), w_try, z_try

            a, out, ev = armijo(phi, f, d0, c1=c1, rho=rho, max_ls=max_ls)
            n_evals += ev
            if a is not None:  # else no decrease on this block: the sweep moves on
                f, w, z = out
        g = full_grad(z, w)
        k += 1
        evals_per_sweep.append(n_evals)
        log.add(f, g)
        converged = log.value <= tol
        if not converged and len(log.objs) > 2 and log.objs[-1] >= log.objs[-2]:
            break  # a whole sweep without decrease: stalled at working precision
    return finish(log, w, k, n_evals, converged, max_iter=max_iter, tol=tol,
                  name="block coordinate descent", warn=warn, stats={
        "n_blocks": len(blocks), "evals_per_sweep": np.array(evals_per_sweep)})
