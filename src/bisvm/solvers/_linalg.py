r"""Linear algebra the solvers share, written once: a Cholesky factorisation with a
diagonal shift for numerically singular matrices, preconditioned conjugate gradients,
and a Newton system solved at the solution by CG preconditioned with the last Newton
step's factor.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.linalg.lapack import dpotrf, dpotrs

__all__ = [
    "euclidean_norm",
    "cholesky_factor",
    "cholesky_factor_solve",
    "NewtonFactor",
    "shifted_cho_factor",
    "cholesky_solve",
    "DenseFactor",
    "LazyFactor",
    "preconditioned_cg",
    "RefinedFactor",
    "structured_hessian_matvec",
]


def euclidean_norm(v):
    """``np.linalg.norm(v)`` of a real 1-D array, the same ``sqrt(v.dot(v))`` and the
    same bits, without its dispatch: Newton loops on small problems take it several
    times per iteration."""
    if not v.flags.c_contiguous:
        v = v.ravel(order="K")
    return math.sqrt(float(v.dot(v)))


def cholesky_factor(M, lower=False):
    """``scipy.linalg.cho_factor(M, lower=lower, check_finite=False)``, the same LAPACK
    ``potrf`` call and the same bits, without scipy's per-call wrappers: the Newton
    loops of small problems factor thousands of tiny matrices, where those wrappers
    cost more than the factorisation. Raises ``LinAlgError`` if ``M`` is not positive
    definite."""
    M = np.asarray(M)
    if M.dtype != np.float64 or M.ndim != 2:
        return cho_factor(M, lower=lower, check_finite=False)
    c, info = dpotrf(M, lower=lower, clean=False, overwrite_a=False)
    if info > 0:
        raise LinAlgError(f"{info}-th leading minor of the array is not positive definite")
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK potrf")
    return c, lower


def cholesky_factor_solve(factor, b):
    """``scipy.linalg.cho_solve(factor, b, check_finite=False)`` for a ``factor`` of
    :func:`cholesky_factor` (the same LAPACK ``potrs`` call and bits, without scipy's
    per-call wrappers)."""
    c, lower = factor
    b = np.asarray(b)
    if c.dtype != np.float64 or b.dtype != np.float64 or b.ndim not in (1, 2) \
            or b.shape[0] != c.shape[0]:
        return cho_solve(factor, b, check_finite=False)
    x, info = dpotrs(c, b, lower=lower, overwrite_b=False)
    if info != 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK potrs")
    return x


def shifted_cho_factor(M, *, lower=False, rel_shift=1e-12, tries=14):
    r"""``scipy.linalg.cho_factor`` of a symmetric positive (semi-)definite ``M``; if the
    factorisation fails, the smallest of :math:`\delta I`, :math:`\delta = 10^k\,` ``rel_shift``
    :math:`\max|M_{ii}|`, that makes it succeed is added (Levenberg damping: the
    matrix is singular only to rounding, as for an unpenalised intercept with no
    curvature).

    Returns
    -------
    (c, lower)
        As ``cho_factor``, for ``cho_solve``.
    """
    shift = 0.0
    scale = max(float(np.max(np.abs(np.diag(M)))), 1e-300)
    for _ in range(tries):
        try:
            return cholesky_factor(M + shift * np.eye(M.shape[0]) if shift else M,
                                   lower=lower)
        except LinAlgError:
            shift = max(shift * 10.0, rel_shift * scale)
    raise LinAlgError("matrix is not positive definite even after diagonal shifting")


class NewtonFactor:
    r"""The interface of a Newton system :math:`H = \nabla^2 E(\hat w)` handed out by a
    solver in :attr:`SolverResult.factor`.

    ``solve(rhs, x0=None)`` returns :math:`H^{-1} r` for a vector (or, where the
    implementation says so, a matrix) ``rhs``; ``x0`` is a warm start that iterative
    implementations use (the previous adjoint, for instance) and direct ones ignore.
    ``matvec(v)`` returns :math:`H v`. For a problem solved on a support (exact
    weighted L1), :math:`H` is the Hessian restricted to the support and the solution is
    zero off it. ``n_matvec`` counts Hessian-vector products spent so far (0 for a
    direct factorisation); ``direct`` says whether ``solve`` is exact (a factorisation)
    rather than iterative.
    """

    n_matvec = 0
    direct = False

    def solve(self, rhs, x0=None):  # pragma: no cover - interface
        raise NotImplementedError

    def matvec(self, v):  # pragma: no cover - interface
        raise NotImplementedError


def cholesky_solve(H, b):
    """Solve ``H x = b`` (``b`` a vector or a matrix of right-hand sides) for symmetric
    positive definite ``H`` by Cholesky, never forming an inverse; a tiny diagonal shift
    is added if ``H`` is numerically singular."""
    return cholesky_factor_solve(shifted_cho_factor(H, tries=12), b)


class DenseFactor(NewtonFactor):
    """A Cholesky factor of a dense symmetric positive definite ``H`` (shifted if
    numerically singular, as :func:`cholesky_solve`), computed once and reused."""

    direct = True

    def __init__(self, H):
        self.H = H
        self._c = shifted_cho_factor(H, tries=12)

    def solve(self, rhs, x0=None, rtol=None):
        """:math:`H^{-1}` ``rhs`` (a vector or a matrix of right-hand sides)."""
        return cholesky_factor_solve(self._c, rhs)

    def matvec(self, v):
        return self.H @ v


class LazyFactor(NewtonFactor):
    """Builds the factor at the solution on first use: a caller that never solves with
    the Hessian (a plain fit) does not pay for it."""

    def __init__(self, build):
        self._build = build
        self._f = None

    @property
    def built(self):
        if self._f is None:
            self._f = self._build()
        return self._f

    @property
    def n_matvec(self):
        return 0 if self._f is None else self._f.n_matvec

    @property
    def direct(self):
        """Whether the built factor solves exactly (builds it)."""
        return self.built.direct

    def solve(self, rhs, x0=None, rtol=None):
        return self.built.solve(rhs, x0=x0, rtol=rtol)

    def matvec(self, v):
        return self.built.matvec(v)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.built, name)


def structured_hessian_matvec(X, c, D, v):
    r""":math:`Hv = Dv + X^\top(c\odot Xv)` for the Hessian of a margin loss plus a
    structured penalty (:class:`~bisvm.penalties.BlockDiagonalHessian` ``D``), in
    O(nnz(X) + d); X dense or sparse."""
    return D.matvec(v) + np.asarray(X.T @ (c * np.asarray(X @ v)))


def preconditioned_cg(matvec, precond, b, *, x0=None, rtol=1e-10, max_iter=None):
    r"""Preconditioned conjugate gradients for a symmetric positive definite system
    :math:`Ax = b` (Hestenes & Stiefel 1952; Nocedal & Wright Alg. 5.3).

    Stops when :math:`\|b - Ax\|_2 \le` ``rtol`` :math:`\|b\|_2` or after ``max_iter``
    iterations (default :math:`\min(d, \max(200, 4\sqrt d))`).

    Returns
    -------
    x : ndarray
    n_iter : int
        Matrix-vector products spent.
    residual : float
        Final relative residual.
    """
    d = b.shape[0]
    bn = float(np.linalg.norm(b))
    if bn == 0.0:
        return np.zeros(d), 0, 0.0
    if max_iter is None:
        max_iter = min(d, max(200, int(4 * np.sqrt(d))))
    n_mv = 0
    if x0 is None:
        x = np.zeros(d)
        r = b.copy()
    else:
        x = np.array(x0, dtype=float, copy=True)
        r = b - matvec(x)
        n_mv += 1
    rn = float(np.linalg.norm(r))
    if rn <= rtol * bn:
        return x, n_mv, rn / bn
    z = precond(r)
    p = z.copy()
    rz = float(r @ z)
    for _ in range(max_iter):
        Ap = matvec(p)
        n_mv += 1
        pAp = float(p @ Ap)
        if not pAp > 0:
            break  # numerically singular direction: keep the current iterate
        a = rz / pAp
        x += a * p
        r -= a * Ap
        rn = float(np.linalg.norm(r))
        if rn <= rtol * bn:
            break
        z = precond(r)
        rz_new = float(r @ z)
        p *= rz_new / rz
        p += z
        rz = rz_new
    return x, n_mv, rn / bn


class RefinedFactor(NewtonFactor):
    r"""The Newton system at a solution :math:`\hat w`, solved by CG with the exact
    Hessian-vector product at :math:`\hat w` and the direct factor of the last Newton
    step (at :math:`w_{k-1}`, one step away) as preconditioner.

    Near convergence :math:`H(w_{k-1})^{-1}H(\hat w) = I + O(\|\hat w - w_{k-1}\|)`, so
    CG needs two or three products instead of a new factorisation: the hypergradient
    then costs :math:`O(\mathrm{nnz} + n^2)` rather than :math:`O(n^2 d)`. If CG stalls
    (a long last step), ``rebuild()`` factors the system at :math:`\hat w` exactly.

    Parameters
    ----------
    matvec : callable
        :math:`v \mapsto H(\hat w)v`.
    preconditioner : NewtonFactor
        A direct factor near :math:`\hat w`.
    rebuild : callable
        Returns the exact factor at :math:`\hat w` (used on a stall).
    """

    direct = False

    def __init__(self, matvec, preconditioner, rebuild, max_iter=30):
        self.matvec = matvec
        self._pre = preconditioner
        self._rebuild = rebuild
        self._exact = None
        self.max_iter = max_iter
        self.n_matvec = 0

    def solve(self, rhs, x0=None, rtol=1e-10):
        """:math:`H(\\hat w)^{-1}` ``rhs`` to the relative residual ``rtol``."""
        rhs = np.asarray(rhs, dtype=float)
        if rhs.ndim == 2:
            return np.column_stack([self.solve(rhs[:, j], rtol=rtol)
                                    for j in range(rhs.shape[1])])
        rtol = 1e-10 if rtol is None else rtol
        if self._exact is None:
            x, k, res = preconditioned_cg(self.matvec, self._pre.solve, rhs, x0=x0,
                                          rtol=rtol, max_iter=self.max_iter)
            self.n_matvec += k
            if res <= rtol:
                return x
            self._exact = self._rebuild()
        return self._exact.solve(rhs, x0=x0, rtol=rtol)
