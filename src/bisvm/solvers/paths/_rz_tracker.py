r"""State of the Rosset–Zhu path tracker (:mod:`bisvm.solvers.paths.rz_path`): the point
:math:`(\beta, b)` at the current λ, the active set with its signs, the assignment of the
samples to the pieces of the loss (the *zone*), the reduced matrix
:math:`M = \alpha\tilde R_{AA} + C\tilde Z_A^\top D\tilde Z_A` with its inverse, and the
breakpoint records. The mathematics is in the module docstring of ``rz_path``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...losses import ModifiedHuber, SquaredHinge

__all__ = ["LOSSES", "Direction", "RZTracker", "ReducedSystem", "loss_value_derivative"]

_LOSSES = {"squared_hinge": SquaredHinge(), "modified_huber": ModifiedHuber()}
LOSSES = tuple(_LOSSES)


def loss_value_derivative(loss, t, z):
    r"""Value :math:`\ell(z_i, t_i)` and derivative :math:`\partial\ell/\partial z_i`, per
    sample, of the squared hinge :math:`\max(0, 1 - tz)^2` or of the modified Huber loss
    (scikit-learn's convention: :math:`\max(0, 1 - tz)^2` for :math:`tz \ge -1`, else
    :math:`-4tz`).

    Parameters
    ----------
    loss : {"squared_hinge", "modified_huber"}
    t : ndarray of shape (n,)
        Labels ±1.
    z : ndarray of shape (n,)
        Decision values.

    Returns
    -------
    value, derivative : ndarray of shape (n,)
    """
    value, derivative, _ = _LOSSES[loss].value_derivatives(t, z)
    return value, derivative


class ReducedSystem:
    """The reduced matrix ``M`` over [b?] + A, with an explicit inverse kept by
    low-rank updates and rebuilt when a residual check fails."""

    def __init__(self, M):
        self.M = np.array(M, dtype=float)
        self._rebuild()

    def _rebuild(self):
        M = self.M
        k = M.shape[0]
        self.singular = False
        if k == 0:
            self.Minv = np.zeros((0, 0))
            return
        w, V = np.linalg.eigh(0.5 * (M + M.T))
        top = max(float(np.abs(w).max()), 1e-300)
        keep = w > 1e-12 * top
        self.singular = not bool(keep.all())
        self.Minv = (V[:, keep] / w[keep]) @ V[:, keep].T

    def add(self, m, mjj):
        """Border ``M`` with column ``m`` and diagonal ``mjj``."""
        k = self.M.shape[0]
        M = np.empty((k + 1, k + 1))
        M[:k, :k] = self.M
        M[:k, k] = m
        M[k, :k] = m
        M[k, k] = mjj
        self.M = M
        if self.singular:
            self._rebuild()
            return
        u = self.Minv @ m
        s = mjj - m @ u
        if s <= 1e-12 * max(abs(mjj), 1e-300):
            self._rebuild()
            return
        Minv = np.empty((k + 1, k + 1))
        Minv[:k, :k] = self.Minv + np.outer(u, u) / s
        Minv[:k, k] = -u / s
        Minv[k, :k] = -u / s
        Minv[k, k] = 1.0 / s
        self.Minv = Minv

    def remove(self, pos):
        """Delete row and column ``pos`` (Schur complement of the inverse)."""
        keep = np.r_[0:pos, pos + 1:self.M.shape[0]]
        self.M = self.M[np.ix_(keep, keep)]
        if self.singular:
            self._rebuild()
            return
        r = self.Minv[pos, pos]
        q = self.Minv[keep, pos]
        if r <= 0:
            self._rebuild()
            return
        self.Minv = self.Minv[np.ix_(keep, keep)] - np.outer(q, q) / r

    def rank1(self, v, sigma):
        """``M += sigma v v'`` (Sherman–Morrison)."""
        self.M += sigma * np.outer(v, v)
        if self.singular:
            self._rebuild()
            return
        u = self.Minv @ v
        den = 1.0 + sigma * (v @ u)
        if den <= 1e-10:
            self._rebuild()
            return
        self.Minv -= (sigma / den) * np.outer(u, u)

    def solve(self, rhs):
        """``M⁻¹ rhs`` (the minimum-norm solution when ``M`` is singular)."""
        if rhs.size == 0:
            return rhs.copy()
        x = self.Minv @ rhs
        if self.singular:
            return x
        # the explicit inverse is not backward stable: two steps of iterative refinement
        # bring the residual (= the KKT residual of the path) to rounding level; if they
        # do not, the inverse is rebuilt from M
        for attempt in range(2):
            for _ in range(2):
                x += self.Minv @ (rhs - self.M @ x)
            res = np.abs(self.M @ x - rhs).max()
            scale = np.abs(self.M).max() * np.abs(x).max() + np.abs(rhs).max()
            if res <= 1e-12 * max(scale, 1e-300) or attempt == 1:
                break
            self._rebuild()
            x = self.Minv @ rhs
            if self.singular:
                break
        return x


class Direction(NamedTuple):
    """Derivatives along the path as λ decreases: of ``b`` (``vb``), of :math:`\\beta_A`
    (``vA``), of :math:`Z\\beta` (``dzeta``), of ``z`` (``dz``) and of the gradient
    (``dG``)."""

    vb: float
    vA: np.ndarray
    dzeta: np.ndarray
    dz: np.ndarray
    dG: np.ndarray


class RZTracker:
    r"""The moving point of the Rosset–Zhu path and everything updated with it.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        ``X`` (linear case) or :math:`K\,\mathrm{diag}(t)` (kernel case).
    t : ndarray of shape (n,)
        Labels ±1.
    C, alpha : float
        Loss weight and ridge weight α.
    loss : {"squared_hinge", "modified_huber"}
    fit_intercept : bool
    K : ndarray of shape (n, n) or None
        The Gram matrix in the kernel case (then :math:`R = Q = \mathrm{diag}(t) K
        \mathrm{diag}(t)`); ``None`` in the linear case (:math:`R = I`).

    The tracker starts at β = 0 with the intercept at its optimum for β = 0, in closed
    form :math:`b_0 = (n_+ - n_-)/n` (argmin of :math:`\sum(1 - t_i b)^2`, :math:`|b_0| <
    1`), λ = :math:`\lambda_{\max} = \max_j |g_j|` and the argmax active.
    """

    def __init__(self, Z, t, *, C, alpha, loss, fit_intercept, K=None):
        n, p = Z.shape
        self.Z, self.t, self.K = Z, t, K
        self.C, self.alpha, self.loss = C, alpha, loss
        self.n, self.p = n, p
        self.huber = loss == "modified_huber"
        self.nb = 1 if fit_intercept else 0
        npos = float((t > 0).sum())
        self.b = (2.0 * npos - n) / n if fit_intercept else 0.0
        self.beta = np.zeros(p)
        self.zeta = np.zeros(n)  # Zβ
        self.act: list[int] = []
        self.sgn: dict[int, float] = {}
        self.G, self.z = self.grad(self.zeta, self.b, [])
        self.zone = self.zones_of(t * self.z)
        self.lam = float(np.abs(self.G).max())
        self.lam_max = self.lam
        self.D = self.dvec()
        M0 = np.array([[C * self.D.sum()]]) if self.nb else np.zeros((0, 0))
        self.red = ReducedSystem(M0)
        # Z_A kept as the leading columns of a buffer (in the order of ``act``), so the
        # products with it are BLAS calls on a view, not copies of fancy-indexed columns
        self.zbuf = np.empty((n, min(p, 16)))
        self.bps, self.coefs, self.bs, self.nact, self.evs, self.losses = (
            [], [], [], [], [], [])
        j0 = int(np.argmax(np.abs(self.G)))
        self.add_var(j0, -float(np.sign(self.G[j0])) or 1.0)
        self.record("start")

    # ---- R = α I (linear) or α Q (kernel) -----------------------------------------------
    def r_dir(self, act, v, dzeta):
        """:math:`R_{:,A} v` over all ``p`` coefficients (``dzeta`` = :math:`Z_A v`)."""
        if self.K is None:
            out = np.zeros(self.p)
            out[act] = self.alpha * v
            return out
        return self.alpha * self.t * dzeta  # Q_{:,A} v = t ∘ (Z_A v)

    def r_entry(self, rows, j):
        """Entries :math:`R_{rows, j}`."""
        if self.K is None:
            return self.alpha * (np.asarray(rows) == j).astype(float)
        return self.alpha * self.t[rows] * self.t[j] * self.K[rows, j]

    def zt(self, w):
        """:math:`Z^\\top w`."""
        if self.K is None:
            return self.Z.T @ w
        return self.t * (self.K @ w)

    # ---- zones, gradient --------------------------------------------------------------
    def zones_of(self, m):
        """Piece of the loss per margin: 1 quadratic, 0 flat, 2 linear (modified Huber)."""
        zo = np.where(m < 1.0, 1, 0)
        if self.huber:
            zo = np.where(m <= -1.0, 2, zo)
        return zo

    def dvec(self):
        """:math:`D_i \\in \\{0, 2\\}`, the loss curvature of the current zone."""
        return np.where(self.zone == 1, 2.0, 0.0)

    def grad(self, zeta, b, act):
        """Gradient ``G`` of the smooth part over all coefficients, and ``z = ζ + b``."""
        z = zeta + b
        _, der = loss_value_derivative(self.loss, self.t, z)
        G = self.C * self.zt(der)
        if self.alpha > 0 and len(act):
            G += self.r_dir(act, self.beta[act], zeta)
        return G, z

    def refresh(self):
        """Exact re-evaluation of ζ, ``z`` and ``G`` at the vertex (no drift accumulates
        along the path)."""
        self.zeta = self.ZA() @ self.beta[self.act] if self.act else np.zeros(self.n)
        self.G, self.z = self.grad(self.zeta, self.b, self.act)

    # ---- the active set ---------------------------------------------------------------
    def ZA(self):
        """:math:`Z_A`, a view of the buffer."""
        return self.zbuf[:, :len(self.act)]

    def ztilde_rows(self, idx_samples):
        """Rows of [1, Z_A] for the given samples."""
        zr = self.zbuf[idx_samples, :len(self.act)]
        if self.nb:
            zr = np.hstack([np.ones((len(idx_samples), 1)), zr])
        return zr

    def add_var(self, j, s):
        """``j`` joins ``A`` with sign ``s``: border ``M``."""
        Z, D, C, act = self.Z, self.D, self.C, self.act
        Dj = D * Z[:, j]
        m = C * (self.ZA().T @ Dj) + (self.r_entry(act, j) if act else np.zeros(0))
        if self.nb:
            m = np.r_[C * Dj.sum(), m]
        mjj = C * (Z[:, j] @ Dj) + float(self.r_entry([j], j)[0])
        self.red.add(m, mjj)
        k = len(act)
        if k == self.zbuf.shape[1]:
            grown = np.empty((self.n, min(self.p, 2 * k)))
            grown[:, :k] = self.zbuf
            self.zbuf = grown
        self.zbuf[:, k] = Z[:, j]
        act.append(j)
        self.sgn[j] = s

    def remove_var(self, j):
        """``j`` leaves ``A`` (β_j = 0)."""
        act = self.act
        pos = act.index(j)
        self.red.remove(self.nb + pos)
        k = len(act)
        self.zbuf[:, pos:k - 1] = self.zbuf[:, pos + 1:k]
        act.pop(pos)
        del self.sgn[j]
        self.beta[j] = 0.0

    def flip(self, i, new):
        """Move sample ``i`` to piece ``new``: ``M`` changes by ±2C z̃_i z̃_iᵀ."""
        old = self.zone[i]
        if old == new:
            return
        self.zone[i] = new
        dD = (2.0 if new == 1 else 0.0) - (2.0 if old == 1 else 0.0)
        self.D[i] += dD
        if dD != 0.0:
            zr = self.ztilde_rows([i])[0]
            if zr.size:
                self.red.rank1(zr, self.C * dD)

    # ---- moving along the path --------------------------------------------------------
    def direction(self):
        """:math:`\\gamma = M^{-1}[0; s_A]` and the derivatives it implies."""
        act, nb = self.act, self.nb
        rhs = np.r_[np.zeros(nb), [self.sgn[j] for j in act]]
        v = self.red.solve(rhs)
        vb = float(v[0]) if nb else 0.0
        vA = v[nb:]
        dzeta = self.ZA() @ vA if act else np.zeros(self.n)
        dz = dzeta + vb
        dG = self.C * self.zt(self.D * dz)
        if self.alpha > 0 and act:
            dG += self.r_dir(act, vA, dzeta)
        return Direction(vb, vA, dzeta, dz, dG)

    def advance(self, step, d):
        """Move by ``step`` in λ (downwards) along direction ``d``."""
        self.beta[self.act] += step * d.vA
        self.b += step * d.vb
        self.zeta += step * d.dzeta
        self.z = self.zeta + self.b
        self.G += step * d.dG
        self.lam = max(self.lam - step, 0.0)

    def polish(self):
        """Re-solve the optimality system of the current zone at the vertex, so rounding
        does not accumulate from one segment to the next (skipped when M is singular:
        the minimiser is then not unique and the stepped point is kept)."""
        act, nb, t, C = self.act, self.nb, self.t, self.C
        if self.red.singular or not act:
            return
        zone = self.zone
        e = np.where(zone == 1, -2.0 * t, np.where(zone == 2, -4.0 * t, 0.0))
        s_A = np.array([self.sgn[j] for j in act])
        rhs = np.r_[np.full(nb, -C * e.sum()), -self.lam * s_A - C * (self.ZA().T @ e)]
        x = self.red.solve(rhs)
        xa = x[nb:]
        bb = float(x[0]) if nb else self.b
        big = 1.0 + np.abs(x).max()
        if np.any(s_A * xa < -1e-8 * big):
            return  # a sign would flip: inconsistent active set, keep the stepped point
        m_new = t * (self.ZA() @ xa + bb)
        far = (np.abs(m_new - 1.0) > 1e-7 * big) & (np.abs(m_new + 1.0) > 1e-7 * big)
        if np.any((self.zones_of(m_new) != zone) & far):
            return  # a margin would change piece: inconsistent zone
        self.beta[act] = s_A * np.maximum(s_A * xa, 0.0)
        self.b = bb

    # ---- records ----------------------------------------------------------------------
    def record(self, event):
        """Append the current vertex to the breakpoint records."""
        self.bps.append(self.lam)
        self.coefs.append(self.beta.copy())
        self.bs.append(self.b)
        self.nact.append(len(self.act))
        self.evs.append(event)
        self.losses.append(float(loss_value_derivative(self.loss, self.t, self.z)[0].sum()))

    def amend_last(self, event):
        """A zero-length event: update the last vertex's record in place."""
        self.evs[-1] = self.evs[-1] + "+" + event if self.evs[-1] != "start" else "start"
        self.nact[-1] = len(self.act)
