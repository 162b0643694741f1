r"""The hypergradient pieces of the exact weighted (group) L1 SVM (:mod:`.exact_l1`).

On the support :math:`S` of :math:`\hat w` (non-zero groups and unpenalised coordinates)
the optimality condition :math:`\nabla_S E_0(\hat w;\beta) = 0` is smooth in
:math:`(w_S, \beta)`, and off :math:`S` the solution stays exactly zero under a small
change of β when the zero groups satisfy their conditions strictly. The implicit function
theorem then gives :math:`\partial\hat w_S/\partial\beta = -H_{SS}^{-1}
\partial_\beta\nabla_S E_0` (Bertrand et al. 2020, "Implicit differentiation of
Lasso-type models for hyperparameter optimization", for the Lasso; González Vallejo 2024
for the smooth case), so the hypergradient of a criterion :math:`J(\hat w)` is
:math:`(\partial_\beta\nabla_w E_0)^\top\lambda` with
:math:`\lambda = -H_{SS}^{-1}\nabla_S J` (zero off :math:`S`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError
from scipy.sparse.linalg import LinearOperator, cg

from .._linalg import cholesky_factor_solve, shifted_cho_factor
from ..base import NewtonFactor

__all__ = ["SupportNewtonFactor", "group_l1_weight_vjp", "group_l1_weight_jvp"]


def group_l1_weight_vjp(w, groups, n_groups, lam):
    r"""The product :math:`(\partial\nabla_w P/\partial\beta)^\top\lambda` for
    :math:`P(w) = \sum_k \beta_k\|w_{G_k}\|_2`.

    :math:`\partial\nabla_{w_{G_k}} P/\partial\beta_k = w_{G_k}/\|w_{G_k}\|`, so entry k is
    :math:`\sum_{j\in G_k} \lambda_j w_j/\|w_{G_k}\|` (0 for a zero group, off the support
    where the adjoint vanishes). With :math:`\lambda = -H_{SS}^{-1}\nabla_w J`
    (:meth:`SupportNewtonFactor.solve`) it is the hypergradient :math:`\nabla_\beta J`.

    Parameters
    ----------
    w : ndarray, shape (d,)
    groups : ndarray of int, shape (d,)
        ``-1`` for an unpenalised coordinate.
    n_groups : int
    lam : ndarray, shape (d,) or (d, m)

    Returns
    -------
    ndarray, shape (n_groups,) or (n_groups, m)
    """
    w = np.asarray(w, dtype=np.float64)
    g = np.asarray(groups)
    lam = np.asarray(lam, dtype=np.float64)
    if w.ndim != 1 or g.shape != w.shape or lam.ndim not in (1, 2) or lam.shape[0] != w.size:
        raise ValueError(f"w, groups and lam must have matching first dimensions, got "
                         f"{w.shape}, {g.shape}, {lam.shape}")
    if not np.issubdtype(g.dtype, np.integer):
        raise TypeError(f"groups must hold integers, got dtype {g.dtype}")
    if isinstance(n_groups, bool) or not isinstance(n_groups, (int, np.integer)) or (
            n_groups < 0 or (g.size and g.max() >= n_groups)):
        raise ValueError(f"n_groups must be an integer > max(groups), got {n_groups!r}")
    pen = np.flatnonzero(g >= 0)
    gp = g[pen]
    nrm = np.sqrt(np.bincount(gp, weights=w[pen] ** 2, minlength=n_groups))
    inv = np.where(nrm > 0, 1.0 / np.where(nrm > 0, nrm, 1.0), 0.0)
    coef = w[pen] * inv[gp]
    if lam.ndim == 1:
        return np.bincount(gp, weights=coef * lam[pen], minlength=n_groups)
    out = np.zeros((n_groups, lam.shape[1]))
    np.add.at(out, gp, coef[:, None] * lam[pen])
    return out


def group_l1_weight_jvp(w, groups, db):
    r"""The product :math:`(\partial\nabla_w P/\partial\beta)\,\delta\beta` for
    :math:`P(w) = \sum_k \beta_k\|w_{G_k}\|_2`: coordinate j of group k gets
    :math:`w_j\,\delta\beta_k/\|w_{G_k}\|` (0 in a zero group and on an unpenalised
    coordinate). With :meth:`SupportNewtonFactor.solve` it gives the first-order change
    of :math:`\hat w` under a change :math:`\delta\beta` of the weights,
    :math:`\delta\hat w = -H_{SS}^{-1}(\partial\nabla_w P/\partial\beta)\,\delta\beta`.

    Parameters
    ----------
    w : ndarray, shape (d,)
    groups : ndarray of int, shape (d,)
    db : ndarray, shape (n_groups,)

    Returns
    -------
    ndarray, shape (d,)
    """
    w = np.asarray(w, dtype=np.float64)
    g = np.asarray(groups)
    db = np.asarray(db, dtype=np.float64)
    if w.ndim != 1 or g.shape != w.shape or db.ndim != 1:
        raise ValueError(f"w and groups must be 1-D of one length and db 1-D, got "
                         f"{w.shape}, {g.shape}, {db.shape}")
    if not np.issubdtype(g.dtype, np.integer):
        raise TypeError(f"groups must hold integers, got dtype {g.dtype}")
    if g.size and g.max() >= db.size:
        raise ValueError(f"db has {db.size} entries for groups up to {g.max()}")
    pen = np.flatnonzero(g >= 0)
    gp = g[pen]
    nrm = np.sqrt(np.bincount(gp, weights=w[pen] ** 2, minlength=db.size))
    out = np.zeros_like(w)
    out[pen] = w[pen] * np.where(nrm > 0, db / np.where(nrm > 0, nrm, 1.0), 0.0)[gp]
    return out


class SupportNewtonFactor(NewtonFactor):
    r"""The Hessian of :math:`E_0` restricted to the support :math:`S`,

    .. math::
        H_{SS} = X_S^\top\mathrm{diag}(c) X_S + \mathrm{diag}(r_S)
                 + \sum_{k\subset S}\beta_k\Big(\frac{I}{\|w_k\|}
                   - \frac{w_k w_k^\top}{\|w_k\|^3}\Big),

    with :math:`c_i = s_i\ell_\mu''/n` and :math:`r = \alpha m` (the exact group-lasso
    curvature; zero for singleton groups, which are therefore not listed).
    ``solve(rhs)`` returns ``x`` with :math:`x_S = H_{SS}^{-1} r_S` and ``x = 0`` off
    :math:`S`: by Cholesky of the :math:`|S|\times|S|` matrix, formed and factored once,
    on first use, when :math:`|S| \le` ``max_dense``; otherwise by conjugate gradients
    with a Jacobi preconditioner on products with the data (``x0`` then warm-starts it,
    ``n_matvec`` counts the products). ``matvec(v)`` is the same restricted product,
    from the data (:math:`O(\mathrm{nnz}(X_S))`).

    Parameters
    ----------
    XS : ndarray or scipy.sparse matrix, shape (n, |S|)
        The support columns of ``X``.
    curvature : ndarray, shape (n,)
        :math:`c_i`.
    ridge : ndarray, shape (|S|,)
        :math:`\alpha m_S`.
    group_blocks : sequence of (ndarray of int, float, ndarray)
        For every group of two or more coordinates in :math:`S`: its positions within
        :math:`S`, :math:`\beta_k` and :math:`w_k`.
    support : ndarray of int, shape (|S|,)
        :math:`S`, as coordinates of ``w``.
    n_features : int
    max_dense : int
        Largest support factored densely.
    rtol : float
        Relative residual of the CG solves.
    """

    def __init__(self, XS, curvature, ridge, group_blocks, support, n_features, *,
                 max_dense=4000, rtol=1e-10):
        self.support = np.asarray(support, dtype=np.int64)
        self.n_features = int(n_features)
        self.max_dense = int(max_dense)
        self.rtol = float(rtol)
        self.n_matvec = 0
        self._XS, self._c, self._ridge = XS, curvature, ridge
        self._blocks = [(np.asarray(loc), float(b), np.asarray(wk), float(np.linalg.norm(wk)))
                        for loc, b, wk in group_blocks]
        self._chol = None
        self._H = None

    @property
    def direct(self):
        """Whether ``solve`` factors :math:`H_{SS}` (else it runs CG)."""
        return self.support.size <= self.max_dense

    def hessian(self):
        """The dense :math:`|S|\\times|S|` matrix :math:`H_{SS}`."""
        if self._H is None:
            XS = self._XS
            if sp.issparse(XS):
                H = (XS.T @ sp.diags(self._c) @ XS).toarray()
            else:
                H = XS.T @ (XS * self._c[:, None])
            H.flat[::H.shape[0] + 1] += self._ridge
            for loc, b, wk, nk in self._blocks:
                uk = wk / nk
                H[np.ix_(loc, loc)] += (b / nk) * (np.eye(loc.size) - np.outer(uk, uk))
            self._H = H
        return self._H

    def _factor(self):
        if self._chol is None:
            # shifted only if singular to rounding (alpha = 0 and collinear columns)
            self._chol = shifted_cho_factor(self.hessian(), tries=12)
        return self._chol

    def _product(self, vs):
        hs = self._XS.T @ (self._c * (self._XS @ vs)) + self._ridge * vs
        for loc, b, wk, nk in self._blocks:
            uk = wk / nk
            hs[loc] += (b / nk) * (vs[loc] - uk * (uk @ vs[loc]))
        return hs

    def _diagonal(self):
        XS = self._XS
        sq = XS.multiply(XS) if sp.issparse(XS) else XS * XS
        diag = np.asarray(sq.T @ self._c).reshape(-1) + self._ridge
        for loc, b, wk, nk in self._blocks:
            diag[loc] += (b / nk) * (1.0 - (wk / nk) ** 2)
        return diag

    def _cg(self, r, x0, rtol):
        m = self.support.size

        def product(v):
            self.n_matvec += 1
            return self._product(v)

        A = LinearOperator((m, m), matvec=product, dtype=np.float64)
        dinv = 1.0 / np.maximum(self._diagonal(), 1e-300)
        M = LinearOperator((m, m), matvec=lambda v: dinv * v, dtype=np.float64)
        x, info = cg(A, r, x0=x0, rtol=rtol, atol=0.0, maxiter=10 * m + 100, M=M)
        if info != 0:
            raise LinAlgError(f"CG on H_SS did not reach rtol={rtol:g} "
                              f"in {info} iterations")
        return x

    def solve(self, rhs, x0=None, rtol=None):
        """``x`` with :math:`x_S = H_{SS}^{-1}` ``rhs``:math:`_S`, 0 off :math:`S`, for a
        vector or a matrix ``rhs``; ``x0`` and ``rtol`` (default ``self.rtol``) steer the
        CG solves and are ignored by the direct one."""
        r = np.asarray(rhs, dtype=np.float64)
        if r.ndim not in (1, 2) or r.shape[0] != self.n_features:
            raise ValueError(f"rhs must have {self.n_features} rows, got shape {r.shape}")
        out = np.zeros(r.shape)
        S = self.support
        if not S.size:
            return out
        if self.direct:
            out[S] = cholesky_factor_solve(self._factor(), r[S])
            self._check_finite(out)
            return out
        x0s = None if x0 is None else np.asarray(x0, dtype=np.float64)[S]
        rtol = self.rtol if rtol is None else float(rtol)
        if r.ndim == 1:
            out[S] = self._cg(r[S], x0s, rtol)
        else:
            for j in range(r.shape[1]):
                out[S, j] = self._cg(r[S, j], None if x0s is None else x0s[:, j], rtol)
        self._check_finite(out)
        return out

    @staticmethod
    def _check_finite(x):
        if not np.all(np.isfinite(x)):
            raise LinAlgError(
                "H_SS is singular to machine precision: a coordinate of the support has "
                "no curvature (an unpenalised coordinate outside l2_mask whose samples "
                "all sit far from the hinge's kink, e.g. an intercept when one class is "
                "missing); penalise it or raise hinge_smoothing")

    def matvec(self, v):
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (self.n_features,):
            raise ValueError(f"v must have shape ({self.n_features},), got {v.shape}")
        out = np.zeros(self.n_features)
        out[self.support] = self._product(v[self.support])
        return out
