r"""Sample-space (Woodbury) Newton for wide data, d > n.

The Hessian of a smooth problem :math:`F(w) = \frac1n\sum_i s_i\ell(y_i, x_i^\top w) + P(w)`
(:class:`~bisvm.solvers.base.SmoothProblem`) with the smoothed elastic-net penalty of
González Vallejo (2024) is a block-diagonal matrix plus a rank-n term,

.. math::
    H = D + X^\top C X,\qquad C = \mathrm{diag}(s_i\ell''_i/n),

with :math:`D` diagonal (scalar and vector models) or block-diagonal with one rank-one
term per group (group model; :class:`~bisvm.penalties.BlockDiagonalHessian`). For
:math:`d > n` the Newton system is solved in the sample space by the Sherman-Morrison-
Woodbury identity,

.. math::
    (D + X^\top C X)^{-1} = D^{-1} - D^{-1}X^\top C^{1/2}\,
    (I_n + C^{1/2} X D^{-1} X^\top C^{1/2})^{-1}\,C^{1/2} X D^{-1},

whose n × n capacitance matrix has eigenvalues >= 1 (well conditioned whatever the
curvature). Forming it costs :math:`O(n^2 d)` (or a sparse product for CSR X), a solve
:math:`O(\mathrm{nnz}(X) + n^2)`; nothing d × d is formed. Coordinates that the penalty
leaves free (an unpenalised intercept: :math:`D_{jj} = 0`) are bordered by a Schur
complement of their size.

The linear-algebra identity is standard (Golub & Van Loan, *Matrix Computations* §2.1.4);
its use for the Newton step of a wide ridge-type problem is the primal counterpart of
solving in the dual (the kernel trick on the Newton system).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import dsyrk as syrk

from .._linalg import (
    cholesky_factor,
    cholesky_factor_solve,
    shifted_cho_factor,
    structured_hessian_matvec,
)
from ..base import NewtonFactor
from .newton import newton_loop

__all__ = ["WoodburyFactor", "woodbury_system", "solve_woodbury_newton"]


class WoodburyFactor(NewtonFactor):
    r"""The Newton system :math:`H = D + X^\top C X` factored in the sample space.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    c : ndarray, shape (n,)
        Per-sample curvature weights :math:`c_i \ge 0`.
    D : BlockDiagonalHessian
        The penalty's Hessian; its free coordinates (zero curvature) are bordered.
    """

    direct = True

    def __init__(self, X, c, D):
        self.X, self.c, self.D = X, np.asarray(c, dtype=float), D
        n, d = X.shape
        self._sc = sc = np.sqrt(np.maximum(self.c, 0.0))
        dinv = D.inv_diag
        if sp.issparse(X):
            K = (X.multiply(dinv[None, :]).tocsr() @ X.T).toarray()
            M = sc[:, None] * K * sc[None, :]
        else:
            # C^{1/2} X D^{-1/2}, then one symmetric rank-d update: half a general product
            A = np.multiply(X, sc[:, None])
            A *= np.sqrt(dinv)
            M = syrk(1.0, A.T, trans=1, lower=0)
        v, t = D.inverse_low_rank()
        if v is not None:
            pen = np.flatnonzero(D.groups >= 0)
            V = sp.csc_matrix((v[pen], (pen, D.groups[pen])), shape=(d, t.shape[0]))
            Q = X @ V
            Q = sc[:, None] * (Q.toarray() if sp.issparse(Q) else np.asarray(Q))
            M += (Q * t) @ Q.T
        M.flat[::M.shape[0] + 1] += 1.0
        # only the upper triangle is referenced (syrk fills no more)
        self._M = cholesky_factor(M)
        self.free = D.free
        if self.free.size:
            XF = X[:, self.free]
            XF = XF.toarray() if sp.issparse(XF) else np.asarray(XF)
            B = np.asarray(X.T @ (self.c[:, None] * XF))
            CF = B[self.free].copy()
            B[self.free] = 0.0
            W = np.column_stack([self._ainv(B[:, j]) for j in range(B.shape[1])])
            self._B, self._W = B, W
            self._S = shifted_cho_factor(CF - B.T @ W, rel_shift=1e-13)

    def _ainv(self, r):
        r""":math:`(D + X^\top CX)^{-1}` on the penalised coordinates (free ones ignored)."""
        y = self.D.solve(r)
        t = self._sc * np.asarray(self.X @ y)
        t = self._sc * cholesky_factor_solve(self._M, t)
        return y - self.D.solve(np.asarray(self.X.T @ t))

    def solve(self, rhs, x0=None, rtol=None):
        """:math:`H^{-1}` ``rhs`` (direct: ``x0`` and ``rtol`` are ignored)."""
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim == 2:
            return np.column_stack([self.solve(rhs[:, j]) for j in range(rhs.shape[1])])
        if not self.free.size:
            return self._ainv(rhs)
        rP = rhs.copy()
        rP[self.free] = 0.0
        a = self._ainv(rP)
        xF = cholesky_factor_solve(self._S, rhs[self.free] - self._B.T @ a)
        x = a - self._W @ xF
        x[self.free] = xF
        return x

    def matvec(self, v):
        r""":math:`H v = Dv + X^\top(c \odot Xv)` in O(nnz)."""
        return structured_hessian_matvec(self.X, self.c, self.D, v)


def woodbury_system(problem, w, d2):
    """The Newton system of ``problem`` at ``w`` as a :class:`WoodburyFactor`."""
    return WoodburyFactor(problem.X, problem.sample_curvature(d2), problem.penalty_hessian(w))


def solve_woodbury_newton(problem, *, w0=None, tol=1e-8, max_iter=100):
    r"""Damped Newton on a smooth problem with the step solved in the sample space.

    Parameters
    ----------
    problem : SmoothProblem
        Its penalty must provide ``structured_hessian`` (e.g. ``L2 + GroupPseudoHuber``);
        ``X`` dense or sparse.
    w0 : ndarray or list of ndarray, optional
        Warm start (zeros by default), or candidate starts
        (see :func:`~bisvm.solvers.primal.newton.newton_loop`).
    tol : float
        Stop when :math:`\|\nabla F\|_2 \le` ``tol``.
    max_iter : int

    Returns
    -------
    SolverResult
        ``method="woodbury"``; ``factor`` is the :class:`WoodburyFactor` at the solution
        (built on first use).
    """
    return newton_loop(problem, woodbury_system, w0=w0, tol=tol, max_iter=max_iter,
                       method="woodbury")
