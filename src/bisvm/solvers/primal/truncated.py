r"""Truncated Newton with preconditioned conjugate gradients, for large (sparse) X.

For :math:`F(w) = \frac1n\sum_i s_i\ell(y_i, x_i^\top w) + P(w)` the Hessian
:math:`H = X^\top C X + D` (:math:`C = \mathrm{diag}(s\ell''/n)`, :math:`D` the penalty's
block-diagonal Hessian, :class:`~bisvm.penalties.BlockDiagonalHessian`) is only ever
applied, :math:`Hv = X^\top(c\odot Xv) + Dv`, at :math:`O(\mathrm{nnz}(X) + d)` per
product. The Newton step is the preconditioned CG solution of :math:`Hp = -\nabla F`
stopped at the forcing term of :func:`~bisvm.solvers.primal.newton.newton_loop`
(Dembo, Eisenstat & Steihaug 1982; Nocedal & Wright §7.1). The preconditioner is block
Jacobi: :math:`D + \mathrm{diag}(X^{\circ 2\top} c)`, inverted exactly per group by
Sherman-Morrison. It matters here: coordinates pinned near zero by the pseudo-Huber
curvature :math:`\beta_j/\gamma` have a diagonal orders of magnitude larger than the
free ones, and the preconditioner removes that spread, so CG effectively works on the
support.

On tall dense X (n ≫ d, d ≤ 2000) the block-Jacobi diagonal ignores correlated
features; :func:`prepare_cg_data` then sketches the feature correlation R once from
4d random rows, and every system is preconditioned by the Cholesky factor of
:math:`D + S^{1/2} R S^{1/2}` (:math:`S` the exact weighted column squares): a d × d
factorisation per Newton step (d ≤ n, so never larger than the data) that halves the
CG iterations on correlated features.

The same operator solves the adjoint system of the hypergradient
(:class:`CGFactor.solve` with a warm start: the previous outer iteration's multiplier).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._linalg import (
    cholesky_factor_solve,
    preconditioned_cg,
    shifted_cho_factor,
    structured_hessian_matvec,
)
from ..base import NewtonFactor
from .newton import newton_loop

__all__ = ["CGData", "CGFactor", "cg_system", "prepare_cg_data", "solve_truncated_newton",
           "weighted_column_squares"]

# the correlation preconditioner: a d x d Cholesky per Newton step pays up to this d
_CORRELATION_MAX_D = 2000
# rows of the correlation sketch per feature (sampling error of R ~ sqrt(1/4))
_SKETCH_ROWS_PER_FEATURE = 4


@dataclass(frozen=True)
class CGData:
    r"""What the truncated Newton solver precomputes once from a dense X.

    Attributes
    ----------
    X_lowp : ndarray or None
        float32 copy of X for mixed-precision Hessian-vector products.
    correlation : ndarray or None, shape (d, d)
        Feature correlation sketched from random rows, for the preconditioner.
    sketch_rows : ndarray of int or None, shape (m,)
        The sketch's rows, when they cover every nonzero column of X.
    sketch_squares : ndarray or None, shape (m, d)
        Their squared entries: the preconditioner's diagonal
        :math:`\sum_i c_i x_{ij}^2` is estimated as
        :math:`(n/m)\sum_{i\in S} c_i x_{ij}^2` (one small product instead of a pass
        over X per Newton step).
    """

    X_lowp: np.ndarray | None = None
    correlation: np.ndarray | None = None
    sketch_rows: np.ndarray | None = None
    sketch_squares: np.ndarray | None = None

    def column_squares(self, c):
        r"""The unbiased sketch estimate of :math:`\sum_i c_i x_{ij}^2`."""
        n = c.shape[0]
        return self.sketch_squares.T @ c[self.sketch_rows] * (n / self.sketch_rows.size)


def prepare_cg_data(X, *, mixed_precision=True, correlation=True, seed=0):
    r"""The :class:`CGData` of a dense ``X`` (None for sparse X, which keeps its
    block-Jacobi preconditioner and float64 products).

    The correlation :math:`R = \mathrm{diag}(G)^{-1/2}G\,\mathrm{diag}(G)^{-1/2}`,
    :math:`G = X_S^\top X_S` over :math:`|S| = \min(n, 4d)` rows drawn without
    replacement (a sketch: :math:`O(d^3)` flops once, against :math:`O(nd^2)` for the
    exact Gram), is kept when :math:`d \le 2000` and :math:`n \ge 4d`.
    """
    if sp.issparse(X):
        return None
    X = np.asarray(X)
    n, d = X.shape
    lowp = np.asarray(X, dtype=np.float32) if mixed_precision else None
    R = rows = squares = None
    m = _SKETCH_ROWS_PER_FEATURE * d
    if correlation and d <= _CORRELATION_MAX_D and n >= m:
        rows = np.sort(np.random.default_rng(seed).choice(n, m, replace=False))
        XS = X[rows]
        G = XS.T @ XS
        scale = np.sqrt(np.diag(G))
        # a column that is zero on the sketch: uncorrelated (identity row)
        ok = scale > 0
        scale[~ok] = 1.0
        R = G / np.outer(scale, scale)
        R[~ok, :] = 0.0
        R[:, ~ok] = 0.0
        R[np.diag_indices(d)] = 1.0
        # the diagonal estimate needs every nonzero column seen on the sketch (rare
        # nonzeros, as one-hot columns, would get a zero estimate)
        if ok.all() or not np.any(X[:, ~ok]):
            squares = XS * XS
        else:
            rows = None
    if lowp is None and R is None:
        return None
    return CGData(lowp, R, rows, squares)


def weighted_column_squares(X, c):
    r""":math:`\sum_i c_i x_{ij}^2` for every column j, in one pass and without a copy of
    ``X`` (the diagonal of :math:`X^\top\mathrm{diag}(c)X`)."""
    if sp.issparse(X):
        Xr = X.tocsr()
        v = np.repeat(c, np.diff(Xr.indptr))
        v *= Xr.data
        v *= Xr.data
        return np.bincount(Xr.indices, weights=v, minlength=X.shape[1])
    if X.dtype == np.float32:
        # BLAS on squared row blocks: faster than einsum in float32
        out = np.zeros(X.shape[1], dtype=np.float32)
        c = np.asarray(c, dtype=np.float32)
        for s in range(0, X.shape[0], 2048):
            Xb = X[s:s + 2048]
            out += (Xb * Xb).T @ c[s:s + 2048]
        return out
    return np.einsum("ij,ij,i->j", X, X, c)


class CGFactor(NewtonFactor):
    r"""The Newton system :math:`H = D + X^\top CX` as an operator solved by
    preconditioned CG.

    With a float32 copy ``X_lowp`` of a dense X, CG runs on the float32 product (half
    the memory traffic and about half the time of a float64 ``gemv``) inside mixed
    precision iterative refinement (Wilkinson; Higham, *Accuracy and Stability of
    Numerical Algorithms*, ch. 12): the residual :math:`r = b - Hx` is recomputed with
    the float64 product, CG solves :math:`H\delta = r` to a relative
    :math:`10^{-5}` with float32 products, and :math:`x \leftarrow x + \delta` until
    the float64 residual meets ``rtol``. Each round gains about five digits, so a
    loose Newton step costs no more than plain CG and a tight adjoint keeps float64
    accuracy.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    c : ndarray, shape (n,)
        Per-sample curvature weights.
    D : BlockDiagonalHessian
    rtol : float
        Default relative residual of :meth:`solve`.
    data : CGData, optional
        float32 copy of a dense ``X`` for the inner products and the sketched feature
        correlation for the preconditioner.
    """

    direct = False
    # the relative residual one float32 CG round is asked for: float32 products carry
    # ~1e-7 relative error, and the recursive residual stops tracking the true one
    # near 1e-6 in float32, so a round asks for 1e-5
    _ROUND_RTOL = 1e-5

    def __init__(self, X, c, D, rtol=1e-10, data=None):
        self.X, self.c, self.D, self.rtol = X, np.asarray(c, dtype=float), D, rtol
        self.X_lowp = None if data is None else data.X_lowp
        if self.X_lowp is not None:
            self._c32 = self.c.astype(np.float32)
        if data is not None and data.sketch_rows is not None:
            extra = data.column_squares(self.c)
        elif self.X_lowp is not None:
            extra = weighted_column_squares(self.X_lowp, self._c32).astype(float)
        else:
            extra = weighted_column_squares(X, self.c)
        prec_diag = D.diag + extra
        # a free coordinate with no curvature at all (an all-zero unpenalised column)
        # would make the preconditioner singular; its exact value does not matter
        tiny = 1e-12 * max(float(np.max(prec_diag)), 1e-300)
        extra = np.where(prec_diag > tiny, extra, tiny - D.diag)
        if data is not None and data.correlation is not None:
            s = np.sqrt(extra)
            M = data.correlation * np.outer(s, s)
            M += D.dense()
            cf = shifted_cho_factor(M, tries=12)
            self._precond = lambda r: cholesky_factor_solve(cf, r)
        else:
            self._precond = D.with_diagonal(extra).solve
        self.n_matvec = 0
        self.last_residual = 0.0

    def matvec(self, v):
        """:math:`Hv` in O(nnz)."""
        return structured_hessian_matvec(self.X, self.c, self.D, v)

    def _matvec_lowp(self, v):
        Xl = self.X_lowp
        z = Xl @ v.astype(np.float32)
        z *= self._c32
        return self.D.matvec(v) + (Xl.T @ z).astype(float)

    def solve(self, rhs, x0=None, rtol=None):
        """:math:`H^{-1}` ``rhs`` by PCG from ``x0`` to the relative residual ``rtol``
        (with iterative refinement when products run in float32)."""
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim == 2:
            return np.column_stack([self.solve(rhs[:, j], rtol=rtol)
                                    for j in range(rhs.shape[1])])
        rtol = self.rtol if rtol is None else rtol
        if self.X_lowp is None:
            x, k, res = preconditioned_cg(self.matvec, self._precond, rhs, x0=x0, rtol=rtol)
            self.n_matvec += k
            self.last_residual = res
            return x
        return self._solve_refined(rhs, x0, rtol)

    def _solve_refined(self, rhs, x0, rtol):
        bn = float(np.linalg.norm(rhs))
        if bn == 0.0:
            return np.zeros_like(rhs)
        x = np.zeros_like(rhs) if x0 is None else np.array(x0, dtype=float, copy=True)
        r = rhs - self.matvec(x) if x0 is not None else rhs.copy()
        self.n_matvec += x0 is not None
        rn = float(np.linalg.norm(r))
        for _ in range(12):
            if rn <= rtol * bn:
                break
            # the round's own target: what is left to gain, at most four digits
            inner = min(0.5, max(self._ROUND_RTOL, rtol * bn / rn))
            delta, k, _ = preconditioned_cg(self._matvec_lowp, self._precond, r, rtol=inner)
            self.n_matvec += k
            x += delta
            if inner > self._ROUND_RTOL:
                # a loose solve (an early Newton step) needs no float64 check: the
                # float32 residual is accurate far beyond the asked 'inner'
                rn = inner * rn
                break
            r = rhs - self.matvec(x)
            self.n_matvec += 1
            rn = float(np.linalg.norm(r))
        self.last_residual = rn / bn
        return x


def cg_system(problem, w, d2):
    """The Newton system of ``problem`` at ``w`` as a :class:`CGFactor` (with the
    problem's precomputed :class:`CGData`, if any)."""
    return CGFactor(problem.X, problem.sample_curvature(d2), problem.penalty_hessian(w),
                    data=problem.cg_data)


def solve_truncated_newton(problem, *, w0=None, tol=1e-8, max_iter=100):
    r"""Truncated (Newton-CG) Newton on a smooth problem, Hessian-free.

    Parameters
    ----------
    problem : SmoothProblem
        Its penalty must provide ``structured_hessian``; ``X`` dense or sparse.
    w0, tol, max_iter
        Warm start(s), tolerance and cap of
        :func:`~bisvm.solvers.primal.newton.newton_loop`.

    Returns
    -------
    SolverResult
        ``method="cg"``; ``stats["n_matvec"]`` counts Hessian-vector products; ``factor``
        is the :class:`CGFactor` at the solution.
    """
    return newton_loop(problem, cg_system, w0=w0, tol=tol, max_iter=max_iter, method="cg")
