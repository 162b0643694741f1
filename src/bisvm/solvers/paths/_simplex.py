r"""The parametric simplex method for a linear program whose cost is affine in λ,

.. math::
    \min_x\ (c_0 + \lambda c_1)^\top x \quad\text{s.t.}\quad A x = r,\ x \ge 0,

traced from λ = ∞ downwards (Dantzig 1963, ch. 11; the "self-dual parametric" form used
for the 1-norm SVM path by Zhu, Rosset, Hastie & Tibshirani 2004). A basis ``B`` stays
optimal while every reduced cost :math:`d_j(\lambda) = d^0_j + \lambda d^1_j \ge 0`; the
next breakpoint is the largest :math:`-d^0_j/d^1_j` below the current λ, where column ``j``
enters (ratio test for the leaving column; Bland's smallest-index rule among ties, which
excludes cycling at degenerate breakpoints).

The basis inverse is kept explicitly and updated by rank-one pivots, refactorised every
25 pivots to contain rounding growth: :math:`O(n(n + N))` per pivot for ``n`` rows and
``N`` columns.
"""

from __future__ import annotations

import numpy as np

from ..base import warn_cap

__all__ = ["ParametricSimplex"]


class ParametricSimplex:
    """State of the parametric simplex method: basis, explicit basis inverse, basic values.

    Parameters
    ----------
    A : ndarray of shape (n, N)
    c0, c1 : ndarray of shape (N,)
        Cost :math:`c_0 + \\lambda c_1`.
    rhs : ndarray of shape (n,)
    basis : ndarray of shape (n,)
        A starting feasible basis whose matrix is the identity (its basic values are
        ``rhs``).
    eps : float
        Absolute tolerance of the reduced-cost and ratio tests.
    """

    def __init__(self, A, c0, c1, rhs, basis, *, eps):
        self.A, self.c0, self.c1, self.rhs, self.eps = A, c0, c1, rhs, eps
        self.basis = basis
        self.Binv = np.eye(A.shape[0])
        self.xB = rhs.copy()
        self.n_piv = 0

    def reduced_costs(self):
        """``(d0, d1)``: the reduced costs' constant and λ parts (0 on the basis)."""
        p0 = self.Binv.T @ self.c0[self.basis]
        p1 = self.Binv.T @ self.c1[self.basis]
        d0 = self.c0 - self.A.T @ p0
        d1 = self.c1 - self.A.T @ p1
        d0[self.basis] = 0.0
        d1[self.basis] = 0.0
        return d0, d1

    def pivot(self, j):
        """Column ``j`` enters the basis; ``False`` if the ratio test finds no row (the LP
        is unbounded along ``j``)."""
        eps = self.eps
        u = self.Binv @ self.A[:, j]
        rows = np.flatnonzero(u > eps)
        if rows.size == 0:
            return False
        ratios = self.xB[rows] / u[rows]
        rmin = ratios.min()
        ties = rows[ratios <= rmin + eps * max(1.0, abs(rmin))]
        r = int(ties[np.argmin(self.basis[ties])])  # Bland: smallest leaving index
        theta = self.xB[r] / u[r]
        xB = self.xB - theta * u
        xB[r] = theta
        piv = self.Binv[r] / u[r]
        Binv = self.Binv - np.outer(u, piv)
        Binv[r] = piv
        basis = self.basis.copy()
        basis[r] = j
        self.basis = basis
        self.n_piv += 1
        if self.n_piv % 25 == 0:  # refactorise to contain rounding growth
            Binv = np.linalg.inv(self.A[:, basis])
            xB = Binv @ self.rhs
        np.maximum(xB, 0.0, out=xB)
        self.Binv, self.xB = Binv, xB
        return True

    def values(self):
        """The current vertex ``x`` (all ``N`` variables)."""
        x = np.zeros(self.A.shape[1])
        x[self.basis] = self.xB
        return x

    def minimise_constant_part(self, first, max_pivots):
        """The phase at λ = ∞: minimise :math:`c_0^\\top x` over the columns ``first:``
        alone (the others cost +∞ there), smallest index entering first."""
        while self.n_piv < max_pivots:
            d0, _ = self.reduced_costs()
            cand = np.flatnonzero(d0[first:] < -self.eps) + first
            if cand.size == 0 or not self.pivot(int(cand[0])):
                break

    def trace(self, vertex, *, lambda_min, max_pivots):
        r"""Follow the optimal vertex as λ decreases from ∞.

        Parameters
        ----------
        vertex : callable
            ``vertex(x) -> (coef, intercept, loss)`` decodes a vertex.
        lambda_min : float or None
            End of the path; ``None`` means :math:`10^{-3}\lambda_{\max}`.
        max_pivots : int

        Returns
        -------
        breakpoints, coefs, intercepts, losses : lists
            ``coefs[k]`` is optimal on :math:`[\lambda_{k+1}, \lambda_k]`.
        end : float
            The λ down to which the last vertex is known to be optimal.
        """
        eps = self.eps
        bps, coefs, bs, losses = [], [], [], []
        beta, b, loss = vertex(self.values())
        coefs.append(beta)
        bs.append(b)
        losses.append(loss)
        lam = np.inf
        stop = None
        while True:
            if self.n_piv >= max_pivots:
                warn_cap("L1 path tracking", max_pivots, lam, stop or 0.0)
                return bps, coefs, bs, losses, lam
            d0, d1 = self.reduced_costs()
            grow = np.flatnonzero(d1 > eps)
            if grow.size == 0:
                return bps, coefs, bs, losses, 0.0  # no d_j falls with λ: optimal to 0
            lam_j = -d0[grow] / d1[grow]
            lam_next = float(lam_j.max())
            if stop is None:  # λ_max known now: fix the end of the path
                stop = 1e-3 * lam_next if lambda_min is None else float(lambda_min)
            if lam_next <= stop or lam_next <= 0:
                return bps, coefs, bs, losses, stop
            enter = grow[lam_j >= lam_next - eps * max(1.0, abs(lam_next))]
            if not self.pivot(int(enter.min())):
                # unbounded below λ_next: cannot happen for λ > 0
                return bps, coefs, bs, losses, lam_next
            beta_new, b_new, loss_new = vertex(self.values())
            if lam_next < lam - eps * max(1.0, lam if np.isfinite(lam) else 1.0):
                bps.append(lam_next)
                coefs.append(beta_new)
                bs.append(b_new)
                losses.append(loss_new)
            else:  # degenerate pivot at the same λ: the vertex after it replaces the last
                coefs[-1], bs[-1], losses[-1] = beta_new, b_new, loss_new
            lam = lam_next
            if loss_new <= eps:
                # zero loss with the least L1 norm stays optimal down to λ = 0 (the optimal
                # value is concave in λ and this vertex attains the line λ‖β‖₁ through 0)
                return bps, coefs, bs, losses, 0.0
