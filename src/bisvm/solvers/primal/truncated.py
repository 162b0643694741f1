r"""Truncated Newton with preconditioned conjugate gradients, for large (sparse) X.

For :math:`F(w) = \frac1n\sum_i s_i\ell(y_i, x_i^\top w) + P(w)` the Hessian
:math:`H = X^\top C X + D` (:math:`C = \mathrm{diag}(s\ell''/n)`, :math:`D` the penalty's
block-diagonal Hessian, :class:`~bisvm.penalties.BlockDiagonalHessian`) is only ever
applied, :math:`Hv = X^\top(c\odot Xv) + Dv`, at :math:`O(\mathrm{nnz}(X) + d)` per
product. The Newton step is the preconditioned CG solution of :math:`Hp = -\nabla F`
stopped at the forcing term of :func:`~bisvm.solvers.newton.newton_loop`
(Dembo, Eisenstat & Steihaug 1982; Nocedal & Wright §7.1). The preconditioner is block
Jacobi: :math:`D + \mathrm{diag}(X^{\circ 2\top} c)`, inverted exactly per group by
Sherman-Morrison. It matters here: coordinates pinned near zero by the pseudo-Huber
curvature :math:`\beta_j/\gamma` have a diagonal orders of magnitude larger than the
free ones, and the preconditioner removes that spread, so CG effectively works on the
support.

The same operator solves the adjoint system of the hypergradient
(:class:`CGFactor.solve` with a warm start: the previous outer iteration's multiplier).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._linalg import preconditioned_cg, structured_hessian_matvec
from ..base import NewtonFactor
from ..newton import newton_loop

__all__ = ["CGFactor", "cg_system", "solve_truncated_newton", "weighted_column_squares"]


def weighted_column_squares(X, c):
    r""":math:`\sum_i c_i x_{ij}^2` for every column j, in one pass and without a copy of
    ``X`` (the diagonal of :math:`X^\top\mathrm{diag}(c)X`)."""
    if sp.issparse(X):
        Xr = X.tocsr()
        v = np.repeat(c, np.diff(Xr.indptr))
        v *= Xr.data
        v *= Xr.data
        return np.bincount(Xr.indices, weights=v, minlength=X.shape[1])
    return np.einsum("ij,ij,i->j", X, X, c)


class CGFactor(NewtonFactor):
    r"""The Newton system :math:`H = D + X^\top CX` as an operator solved by
    preconditioned CG.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    c : ndarray, shape (n,)
        Per-sample curvature weights.
    D : BlockDiagonalHessian
    rtol : float
        Default relative residual of :meth:`solve`.
    """

    direct = False

    def __init__(self, X, c, D, rtol=1e-10):
        self.X, self.c, self.D, self.rtol = X, np.asarray(c, dtype=float), D, rtol
        extra = weighted_column_squares(X, self.c)
        prec_diag = D.diag + extra
        # a free coordinate with no curvature at all (an all-zero unpenalised column)
        # would make the preconditioner singular; its exact value does not matter
        tiny = 1e-12 * max(float(np.max(prec_diag)), 1e-300)
        self._P = D.with_diagonal(np.where(prec_diag > tiny, extra, tiny - D.diag))
        self.n_matvec = 0
        self.last_residual = 0.0

    def matvec(self, v):
        """:math:`Hv` in O(nnz)."""
        return structured_hessian_matvec(self.X, self.c, self.D, v)

    def solve(self, rhs, x0=None, rtol=None):
        """:math:`H^{-1}` ``rhs`` by PCG from ``x0`` to the relative residual ``rtol``."""
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim == 2:
            return np.column_stack([self.solve(rhs[:, j], rtol=rtol)
                                    for j in range(rhs.shape[1])])
        x, k, res = preconditioned_cg(self.matvec, self._P.solve, rhs, x0=x0,
                                      rtol=self.rtol if rtol is None else rtol)
        self.n_matvec += k
        self.last_residual = res
        return x


def cg_system(problem, w, d2):
    """The Newton system of ``problem`` at ``w`` as a :class:`CGFactor`."""
    return CGFactor(problem.X, problem.sample_curvature(d2), problem.penalty_hessian(w))


def solve_truncated_newton(problem, *, w0=None, tol=1e-8, max_iter=100):
    r"""Truncated (Newton-CG) Newton on a smooth problem, Hessian-free.

    Parameters
    ----------
    problem : SmoothProblem
        Its penalty must provide ``structured_hessian``; ``X`` dense or sparse.
    w0 : ndarray, optional
        Warm start (zeros by default).
    tol : float
        Stop when :math:`\|\nabla F\|_2 \le` ``tol``.
    max_iter : int
        Cap on Newton steps.

    Returns
    -------
    SolverResult
        ``method="cg"``; ``extra["n_matvec"]`` counts Hessian-vector products; ``factor``
        is the :class:`CGFactor` at the solution.
    """
    x0 = np.zeros(problem.n_features) if w0 is None else w0
    return newton_loop(problem, x0, cg_system, tol=tol, max_iter=max_iter, method="cg")
