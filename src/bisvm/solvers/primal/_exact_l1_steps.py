r"""The steps of the exact weighted (group) L1 solver on one working set
(:mod:`.exact_l1`): the working set's data, proximal Newton steps by block CD on the
model, Newton steps on the support, and the line search.

Blocks are numbered as in :class:`~.exact_l1.WeightedL1SVMProblem`: the groups, then one
block per unpenalised coordinate (weight 0).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ...losses import SmoothedHinge
from .._linesearch import armijo
from ._exact_l1_kernels import block_curvature, cd_quadratic

__all__ = ["WorkingSet", "prox_newton", "block_violation", "multi_blocks"]


def block_violation(g, w, blk, n_blk, beta):
    """Per-block KKT violation and block norms of ``w`` (blocks given by ``blk``)."""
    wn = np.sqrt(np.bincount(blk, weights=w * w, minlength=n_blk))
    nz = wn > 0
    scale = np.where(nz, beta / np.where(nz, wn, 1.0), 0.0)
    r = g + scale[blk] * w
    rn = np.sqrt(np.bincount(blk, weights=r * r, minlength=n_blk))
    return np.where(nz, rn, np.maximum(rn - beta, 0.0)), wn


class WorkingSet:
    r"""The columns of a working set laid out block by block, and their data.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSC matrix, shape (n, d)
        The design matrix (sparse: in CSC, for cheap column slices).
    y, sample_scale : ndarray, shape (n,)
        Labels and :math:`s_i/n`.
    hinge_smoothing : float
    ridge, block_weight : ndarray
        :math:`\alpha m_j` per coordinate and :math:`\beta` per block.
    block_ptr, block_coord : ndarray of int
        Block b owns the coordinates ``block_coord[block_ptr[b]:block_ptr[b + 1]]``.
    blocks : ndarray of int
        The blocks of the working set.
    """

    def __init__(self, X, y, sample_scale, hinge_smoothing, ridge, block_weight, block_ptr,
                 block_coord, blocks):
        sizes = block_ptr[blocks + 1] - block_ptr[blocks]
        self.blk_ptr = np.zeros(blocks.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.blk_ptr[1:])
        # block b's coordinates, concatenated without a Python loop over blocks
        self.idx = block_coord[np.repeat(block_ptr[blocks] - self.blk_ptr[:-1], sizes)
                               + np.arange(self.blk_ptr[-1])]
        self.beta = block_weight[blocks]
        self.local_blk = np.repeat(np.arange(blocks.size), sizes)
        self.ridge = ridge[self.idx]
        self.y, self.sn = y, sample_scale
        self.loss = SmoothedHinge(hinge_smoothing)
        self.dense = not sp.issparse(X)
        if self.dense:
            self.XT = np.ascontiguousarray(X[:, self.idx].T)
            self.csc = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0))
        else:
            XW = X[:, self.idx].tocsc()
            self.XW = XW
            self.XT = np.zeros((0, 0))
            self.csc = (XW.indptr, XW.indices, XW.data)

    def matvec(self, v):
        return self.XT.T @ v if self.dense else self.XW @ v

    def rmatvec(self, r):
        return self.XT @ r if self.dense else self.XW.T @ r

    def penalty(self, v):
        return float(self.beta @ np.sqrt(np.bincount(self.local_blk, weights=v * v,
                                                     minlength=self.beta.size)))

    def penalty_change(self, v, delta):
        r""":math:`\sum_b\beta_b(\|v_b+\delta_b\| - \|v_b\|)` without cancellation: each
        difference as :math:`(2v_b^\top\delta_b + \|\delta_b\|^2)/(\|v_b+\delta_b\|+\|v_b\|)`
        (near the optimum the model decrease is far below the rounding of the penalty)."""
        nb, lb = self.beta.size, self.local_blk
        num = np.bincount(lb, weights=delta * (2.0 * v + delta), minlength=nb)
        den = (np.sqrt(np.bincount(lb, weights=v * v, minlength=nb))
               + np.sqrt(np.bincount(lb, weights=(v + delta) ** 2, minlength=nb)))
        return float(self.beta @ np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0))

    def violation(self, g, v):
        """Per-block KKT violation and block norms."""
        return block_violation(g, v, self.local_blk, self.beta.size, self.beta)


#: largest support on which the Newton system is formed and factored densely
_NEWTON_MAX_SUPPORT = 2000
#: cap on block-CD passes over the proximal-Newton model (inexact steps are fine: the
#: line search and the next step correct them; ill-conditioned models would else spend
#: thousands of passes per step)
_MAX_PASS = 100


def prox_newton(ws, v, z, eps_in, budget, stats):
    r"""Proximal Newton on the working set until its KKT violation is <= ``eps_in``.

    Two kinds of steps, both damped by an Armijo line search on :math:`E_0`:

    * a *proximal Newton* step (:func:`_model_step`): block CD on the model, which sets
      blocks to exactly zero and brings violators in;
    * once a step has left the sign pattern unchanged and every zero block satisfies its
      condition, a *support Newton* step (:func:`_support_step`): Newton's method on
      :math:`E_0` restricted to the support, smooth there, with the exact Hessian
      :math:`H_{SS}` -- quadratic convergence whatever the conditioning, where CD on an
      ill-conditioned model (small hinge smoothing) would crawl.

    Returns ``(v, z, status)`` with status ``"ok"``, ``"cap"`` (``budget`` steps spent)
    or ``"stall"`` (the line search cannot decrease :math:`E_0` any more: rounding)."""
    loss, y, sn = ws.loss, ws.y, ws.sn
    damp = [0.0]
    prev = None
    for it in range(budget + 1):
        val, d1, d2 = loss.value_derivatives(y, z)
        g = ws.rmatvec(sn * d1) + ws.ridge * v
        stats["evals"] += 1
        bviol, bnorm = ws.violation(g, v)
        viol = float(np.max(bviol))
        if viol <= eps_in:
            return v, z, "ok"
        if it == budget:
            return v, z, "cap"
        D = sn * d2
        f0 = float(sn @ val) + 0.5 * float(ws.ridge @ (v * v)) + float(ws.beta @ bnorm)
        pattern = np.sign(v)
        step = None
        zero_ok = not np.any(bviol[bnorm == 0] > eps_in)
        if (zero_ok and prev is not None and np.array_equal(pattern, prev)
                and np.count_nonzero(v) <= _NEWTON_MAX_SUPPORT):
            step = _support_step(ws, v, z, g, D, bnorm, f0, stats)
        if step is None:
            step = _model_step(ws, v, z, g, D, f0, viol, eps_in, damp, stats)
            if step is None:
                return v, z, "stall"
        t, delta, u = step
        prev = pattern
        v, z = v + t * delta, z + t * u
        stats["steps"] += 1
    return v, z, "cap"  # pragma: no cover - the loop returns


def _model_step(ws, v, z, g, D, f0, viol, eps_in, damp, stats):
    r"""A proximal Newton step: block CD on the model, then the line search.

    The model's Hessian is damped by :math:`\nu I` (Levenberg-Marquardt, ``damp[0]``):
    :math:`\nu = 0` while full steps pass, raised when the line search fails or needs a
    tiny step -- at small hinge smoothing samples far from the kink have
    :math:`\ell_\mu'' \approx 0` and an unpenalised intercept can have no curvature.
    Returns ``(t, delta, u)`` with ``u = X_W delta``, or ``None`` when no step decreases
    :math:`E_0` (rounding)."""
    # inexact Newton forcing term: the model is solved to viol * min(0.1, viol)
    tol_cd = max(viol * min(0.1, viol), 1e-3 * eps_in)
    for _ in range(30):
        ridge = ws.ridge + damp[0]
        ev, Q, qptr = block_curvature(ws.dense, ws.XT, *ws.csc, D, ridge, ws.blk_ptr)
        vn, u, npass = cd_quadratic(ws.dense, ws.XT, *ws.csc, D, ridge, g, v,
                                    ws.blk_ptr, ws.beta, ev, Q, qptr, _MAX_PASS, tol_cd)
        stats["passes"] += npass
        delta = vn - v
        dec = float(g @ delta) + ws.penalty_change(v, delta)
        if dec > 0:  # block CD only lowers the model: this is rounding
            return None
        t = _armijo(ws, v, z, delta, u, f0, dec, stats)
        if t > 0:
            break
        damp[0] = max(10.0 * damp[0], 1e-6 * max(float(np.max(ev)), 1e-300))
    else:
        return None
    hmax = float(np.max(ev))
    if t == 1.0:
        damp[0] = damp[0] / 10.0 if damp[0] >= 1e-12 * hmax else 0.0
    elif t < 0.07:
        damp[0] = max(4.0 * damp[0], 1e-6 * hmax)
    return t, delta, u


def _support_step(ws, v, z, g, D, bnorm, f0, stats):
    r"""Newton's step on :math:`E_0` restricted to the support :math:`S` of ``v``:
    :math:`\delta_S = -H_{SS}^{-1}\nabla_S E_0` with :math:`H_{SS}` as in
    :class:`SupportNewtonFactor`, then the line search. ``None`` if it fails."""
    S = np.flatnonzero(bnorm[ws.local_blk] > 0)
    S = np.union1d(S, np.flatnonzero(ws.beta[ws.local_blk] == 0))
    blk = ws.local_blk[S]
    scale = np.where(bnorm > 0, ws.beta / np.where(bnorm > 0, bnorm, 1.0), 0.0)
    grad = g[S] + scale[blk] * v[S]
    if ws.dense:
        XS = ws.XT[S]
        H = XS @ (XS * D).T
    else:
        XS = ws.XW[:, S]
        H = (XS.T @ sp.diags(D) @ XS).toarray()
    # group curvature beta (I/||w|| - w w^T/||w||^3); it vanishes on a singleton
    multi = np.diff(ws.blk_ptr)[blk] > 1
    H[np.diag_indices_from(H)] += ws.ridge[S] + np.where(multi, scale[blk], 0.0)
    for loc in multi_blocks(blk):
        b = blk[loc[0]]
        if ws.beta[b] == 0:  # no curvature from the penalty (and maybe a zero block)
            continue
        ub = v[S[loc]] / bnorm[b]  # w/||w||^3 = u/||w||: no underflow of ||w||^3
        H[np.ix_(loc, loc)] -= (ws.beta[b] / bnorm[b]) * np.outer(ub, ub)
    if not np.all(np.isfinite(H)):
        return None
    # unshifted on purpose (not _linalg.shifted_cho_factor): a support Hessian that is
    # not positive definite means no Newton step on the support, and the caller takes
    # the damped proximal model step (_model_step) instead
    try:
        dS = -cho_solve(cho_factor(H, check_finite=False), grad, check_finite=False)
    except LinAlgError:
        return None
    if not np.all(np.isfinite(dS)):
        return None
    delta = np.zeros_like(v)
    delta[S] = dS
    u = XS.T @ dS if ws.dense else XS @ dS
    dec = float(grad @ dS)  # the directional derivative of E_0 (zero blocks stay zero)
    if not dec < 0:
        return None
    t = _armijo(ws, v, z, delta, u, f0, dec, stats)
    return (t, delta, u) if t > 0 else None


def _armijo(ws, v, z, delta, u, f0, dec, stats):
    r"""Backtracking step on :math:`E_0` along ``delta`` (0 when none of 30 halvings
    passes the proximal Armijo test :math:`E_0(v + t\delta) \le E_0(v) + c\,t\,dec`)."""
    def phi(t):
        vt = v + t * delta
        with np.errstate(over="ignore", invalid="ignore"):  # a wild trial step is only
            return (float(ws.sn @ ws.loss.value_derivatives(ws.y, z + t * u)[0])  # rejected
                    + 0.5 * float(ws.ridge @ (vt * vt)) + ws.penalty(vt),)

    # the slack absorbs rounding once the model decrease is at machine precision
    t, _, n_evals = armijo(phi, f0, dec, max_ls=30, slack=1e-15 * abs(f0))
    stats["evals"] += n_evals
    return 0.0 if t is None else t


def multi_blocks(labels):
    """Positions of each label that occurs more than once (sorting, no quadratic scan)."""
    order = np.argsort(labels, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(labels[order]) != 0])
    ends = np.r_[starts[1:], labels.size]
    keep = ends - starts > 1
    return [order[a:b] for a, b in zip(starts[keep], ends[keep])]
