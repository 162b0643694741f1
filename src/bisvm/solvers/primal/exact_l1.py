r"""Exact weighted (group) L1 SVM: the :math:`\gamma = 0` lower level of BiSVM.

The problem (seed-000 (1.6)-(1.7) and §1.5 with the Pseudo-Huber smoothing removed) is

.. math::
    E_0(w) = \frac1n\sum_{i=1}^n s_i\,\ell_\mu(1 - y_i x_i^\top w)
             + \frac{\alpha}{2}\sum_j m_j w_j^2 + \sum_k \beta_k \|w_{G_k}\|_2,

with the softplus hinge :math:`\ell_\mu(u) = \mu\log(1 + e^{u/\mu})`
(:class:`~bisvm.losses.SmoothedHinge`), ``y`` in {-1, +1}, the bias as the last column of
``X``, the L2 mask ``m`` and the groups :math:`G_k` of an integer array (``-1`` for an
unpenalised coordinate; singleton groups give the thesis's scalar and vector models). It
is the limit :math:`\gamma \to 0` of the smoothed problem solved by
:class:`~bisvm.selection.bilevel.LowerLevel`, with exact zeros.

Method (the working-set proximal Newton of glmnet / newGLMNET and skglm; Friedman et al.
2010, Yuan et al. 2012, Bertrand et al. 2022): keep a working set :math:`W` of groups (the
support, the unpenalised coordinates and the worst violators of the optimality conditions)
and solve the problem restricted to :math:`W` by proximal Newton steps: the smooth part is
replaced by its second-order model, the model plus the exact group norms is minimised by
block coordinate descent (each block exactly: soft-thresholding, or a secular equation in
the eigenbasis of the block Hessian), and the step is damped by an Armijo line search on
:math:`E_0` itself. Then the optimality conditions are checked on every group and the
violators join :math:`W`. The certificate is the largest KKT violation

.. math::
    \max_k\; \mathrm{dist}\big(-\nabla_k f(w),\; \beta_k\,\partial\|w_{G_k}\|\big),

i.e. :math:`\|\nabla_k f + \beta_k w_k/\|w_k\|\|` on a non-zero group,
:math:`\max(\|\nabla_k f\| - \beta_k, 0)` on a zero group and :math:`|\nabla_j f|` on an
unpenalised coordinate, with :math:`f` the smooth part. A pass over the data costs
:math:`O(\mathrm{nnz}(X))` (sparse ``X`` is never densified); dense linear algebra happens
only on a group's diagonal block.

On the support :math:`S` (non-zero groups and unpenalised coordinates) the optimality
condition is smooth, so the implicit function theorem gives the sensitivity of
:math:`\hat w_S` to β as for the Lasso (sparse-ho, Bertrand et al. 2020):
:class:`SupportNewtonFactor` holds :math:`H_{SS}` and :func:`group_l1_weight_vjp` the
product with :math:`\partial\nabla_w E/\partial\beta`.
"""

from __future__ import annotations

import copy
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ...losses import SmoothedHinge
from ...penalties import check_groups
from ..base import (
    ConvergenceRecord,
    ConvergenceWarning,
    SolverResult,
    warn_cap,
)
from ._exact_l1_factor import SupportNewtonFactor, group_l1_weight_vjp
from ._exact_l1_kernels import block_curvature, cd_quadratic

__all__ = [
    "WeightedL1SVMProblem",
    "solve_exact_l1",
    "SupportNewtonFactor",
    "group_l1_weight_vjp",
]


def _check_X(X):
    if sp.issparse(X):
        if X.format not in ("csr", "csc"):
            raise TypeError(f"a sparse X must be CSR or CSC, got format {X.format!r}")
        X = X.astype(np.float64, copy=False)
        if not np.all(np.isfinite(X.data)):
            raise ValueError("X contains NaN or infinity")
        return X
    if not isinstance(X, np.ndarray):
        raise TypeError(f"X must be a numpy array or a scipy CSR/CSC matrix, got {type(X)}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    if not (np.issubdtype(X.dtype, np.floating) or np.issubdtype(X.dtype, np.integer)):
        raise TypeError(f"X must hold real numbers, got dtype {X.dtype}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    return X


def _check_vector(name, v, n, *, dtype=np.float64):
    a = np.asarray(v)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"{name} must be a 1-D array of length {n}, got shape {a.shape}")
    if dtype is np.float64:
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
            raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
        a = a.astype(np.float64)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} contains NaN or infinity")
    return a


def _check_scalar(name, v, *, positive):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {v!r}")
    v = float(v)
    if not np.isfinite(v) or v < 0 or (positive and v == 0):
        raise ValueError(f"{name} must be a finite float {'> 0' if positive else '>= 0'}, "
                         f"got {v!r}")
    return v


@dataclass(frozen=True, eq=False)
class WeightedL1SVMProblem:
    r"""Frozen record of the exact weighted (group) L1 SVM :math:`E_0` (module docstring).

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR/CSC matrix, shape (n, d)
        Design matrix with the bias column of ones last; never densified.
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    hinge_smoothing : float
        The thesis's :math:`\mu > 0` of the softplus hinge.
    l2_penalty : float
        The thesis's :math:`\alpha \ge 0` (``> 0`` makes :math:`E_0` strongly convex and
        :math:`H_{SS}` positive definite).
    l2_mask : ndarray of bool, shape (d,), or None
        :math:`m_j`: which coordinates the ridge penalises (all when ``None``).
    weights : ndarray, shape (n_groups,)
        :math:`\beta_k \ge 0`.
    groups : ndarray of int, shape (d,)
        Group of each coordinate, ``-1`` for an unpenalised one (numbered 0..n_groups-1).
    sample_weight : ndarray, shape (n,), optional
        :math:`s_i \ge 0` (ones by default); the loss is :math:`\frac1n\sum_i s_i\ell_i`.
    """

    X: object
    y: np.ndarray
    hinge_smoothing: float
    l2_penalty: float
    l2_mask: np.ndarray | None
    weights: np.ndarray
    groups: np.ndarray
    sample_weight: np.ndarray | None = None
    n_groups: int = field(init=False)
    _Xc: object = field(init=False, repr=False)
    _sn: np.ndarray = field(init=False, repr=False)
    _ridge: np.ndarray = field(init=False, repr=False)
    _blk: np.ndarray = field(init=False, repr=False)
    _gptr: np.ndarray = field(init=False, repr=False)
    _gcoord: np.ndarray = field(init=False, repr=False)
    _unpen: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        X = _check_X(self.X)
        n, d = X.shape
        if n == 0 or d == 0:
            raise ValueError(f"X must have at least one row and one column, got {X.shape}")
        y = _check_vector("y", self.y, n)
        if not np.all((y == 1.0) | (y == -1.0)):
            raise ValueError("y must hold labels in {-1, +1}")
        mu = _check_scalar("hinge_smoothing", self.hinge_smoothing, positive=True)
        alpha = _check_scalar("l2_penalty", self.l2_penalty, positive=False)
        if self.l2_mask is None:
            mask = np.ones(d, dtype=bool)
        else:
            mask = np.asarray(self.l2_mask)
            if mask.ndim != 1 or mask.shape[0] != d:
                raise ValueError(f"l2_mask must be a 1-D array of length {d}, got shape "
                                 f"{mask.shape}")
            if mask.dtype != bool:
                raise TypeError(f"l2_mask must be boolean, got dtype {mask.dtype}")
        g, n_groups = check_groups(self.groups, d)
        wts = _check_weights(self.weights, n_groups)
        if self.sample_weight is None:
            s = np.ones(n)
        else:
            s = _check_vector("sample_weight", self.sample_weight, n)
            if np.any(s < 0) or not np.any(s > 0):
                raise ValueError("sample_weight must be non-negative and not all zero")
        # coordinates grouped: group k owns _gcoord[_gptr[k]:_gptr[k + 1]]
        pen = np.flatnonzero(g >= 0)
        order = pen[np.argsort(g[pen], kind="stable")]
        gptr = np.zeros(n_groups + 1, dtype=np.int64)
        np.cumsum(np.bincount(g[pen], minlength=n_groups), out=gptr[1:])
        unpen = np.flatnonzero(g < 0)
        # block of each coordinate: its group, or one block per unpenalised coordinate
        blk = g.copy()
        blk[unpen] = n_groups + np.arange(unpen.size)
        sets = {"X": X, "y": y, "hinge_smoothing": mu, "l2_penalty": alpha, "l2_mask": mask,
                "weights": wts, "groups": g, "n_groups": n_groups,
                "_Xc": X.tocsc() if sp.issparse(X) else X, "_sn": s / n,
                "_ridge": alpha * mask, "_blk": blk, "_gptr": gptr, "_gcoord": order,
                "_unpen": unpen}
        if self.sample_weight is not None:
            sets["sample_weight"] = s
        for k, v in sets.items():
            object.__setattr__(self, k, v)

    @property
    def n_features(self):
        return self.X.shape[1]

    def with_weights(self, weights):
        """The same problem with new weights β (data checks and copies reused: cheap)."""
        new = copy.copy(self)
        object.__setattr__(new, "weights", _check_weights(weights, self.n_groups))
        return new

    def _block_beta(self):
        return np.concatenate([self.weights, np.zeros(self._unpen.size)])

    def value(self, w):
        """:math:`E_0(w)`."""
        w = self._check_w(w)
        z = self.X @ w
        loss = SmoothedHinge(self.hinge_smoothing).value(self.y, z)
        return (float(self._sn @ loss) + 0.5 * float(self._ridge @ (w * w))
                + float(self.weights @ self.group_norms(w)))

    def smooth_gradient(self, w):
        r"""Gradient of the smooth part :math:`f` (loss and ridge) at ``w``."""
        w = self._check_w(w)
        d1 = SmoothedHinge(self.hinge_smoothing).derivative(self.y, self.X @ w)
        return self.X.T @ (self._sn * d1) + self._ridge * w

    def group_norms(self, w):
        r""":math:`\|w_{G_k}\|_2` for every group k."""
        pen = self.groups >= 0
        return np.sqrt(np.bincount(self.groups[pen], weights=w[pen] ** 2,
                                   minlength=self.n_groups))

    def kkt_violation(self, w, grad=None):
        """Per-block KKT violation (groups first, then the unpenalised coordinates) at
        ``w``; ``grad`` is the smooth gradient there if already at hand."""
        w = self._check_w(w)
        g = self.smooth_gradient(w) if grad is None else grad
        nb = self.n_groups + self._unpen.size
        return _block_violation(g, w, self._blk, nb, self._block_beta())[0]

    def _check_w(self, w):
        return _check_vector("w", w, self.n_features)


def _check_weights(weights, n_groups):
    wts = np.asarray(weights, dtype=np.float64).reshape(-1)
    if wts.shape[0] != n_groups:
        raise ValueError(f"weights has {wts.shape[0]} entries for {n_groups} groups")
    if not np.all(np.isfinite(wts)) or np.any(wts < 0):
        raise ValueError("weights must be finite and non-negative")
    return wts


def _block_violation(g, w, blk, n_blk, beta):
    """Per-block KKT violation and block norms of ``w`` (blocks given by ``blk``)."""
    wn = np.sqrt(np.bincount(blk, weights=w * w, minlength=n_blk))
    nz = wn > 0
    scale = np.where(nz, beta / np.where(nz, wn, 1.0), 0.0)
    r = g + scale[blk] * w
    rn = np.sqrt(np.bincount(blk, weights=r * r, minlength=n_blk))
    return np.where(nz, rn, np.maximum(rn - beta, 0.0)), wn


class _WorkingSet:
    """The columns of a working set laid out block by block, and their data."""

    def __init__(self, problem, blocks):
        P = problem
        coords, ptr = [], [0]
        for b in blocks:
            c = (P._gcoord[P._gptr[b]:P._gptr[b + 1]] if b < P.n_groups
                 else P._unpen[b - P.n_groups:b - P.n_groups + 1])
            coords.append(c)
            ptr.append(ptr[-1] + c.size)
        self.idx = np.concatenate(coords)
        self.blk_ptr = np.asarray(ptr, dtype=np.int64)
        self.beta = P._block_beta()[blocks]
        self.local_blk = np.repeat(np.arange(len(blocks)), np.diff(self.blk_ptr))
        self.ridge = P._ridge[self.idx]
        self.dense = not sp.issparse(P.X)
        if self.dense:
            self.XT = np.ascontiguousarray(P.X[:, self.idx].T)
            self.csc = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0))
        else:
            XW = P._Xc[:, self.idx].tocsc()
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
        return _block_violation(g, v, self.local_blk, self.beta.size, self.beta)[0]


def _prox_newton(P, ws, v, z, eps_in, budget, stats):
    r"""Proximal Newton on the working set until its KKT violation is <= ``eps_in``.

    Returns ``(v, z, status)`` with status ``"ok"``, ``"cap"`` (``budget`` steps spent)
    or ``"stall"`` (the line search cannot decrease :math:`E_0` any more: rounding)."""
    loss = SmoothedHinge(P.hinge_smoothing)
    y, sn = P.y, P._sn
    for it in range(budget + 1):
        val, d1, d2 = loss.value_derivatives(y, z)
        g = ws.rmatvec(sn * d1) + ws.ridge * v
        stats["evals"] += 1
        viol = float(np.max(ws.violation(g, v)))
        if viol <= eps_in:
            return v, z, "ok"
        if it == budget:
            return v, z, "cap"
        D = sn * d2
        ev, Q, qptr = block_curvature(ws.dense, ws.XT, *ws.csc, D, ws.ridge, ws.blk_ptr)
        # inexact Newton forcing term: the model is solved to viol * min(0.1, viol)
        tol_cd = max(viol * min(0.1, viol), 1e-3 * eps_in)
        vn, u, npass = cd_quadratic(ws.dense, ws.XT, *ws.csc, D, ws.ridge, g, v,
                                    ws.blk_ptr, ws.beta, ev, Q, qptr, 2000, tol_cd)
        stats["passes"] += npass
        delta = vn - v
        pen0 = ws.penalty(v)
        f0 = float(sn @ val) + 0.5 * float(ws.ridge @ (v * v)) + pen0
        dec = float(g @ delta) + ws.penalty_change(v, delta)
        if dec > 0:
            return v, z, "stall"
        t, accepted = 1.0, False
        for _ in range(60):
            vt = v + t * delta
            ft = (float(sn @ loss.value_derivatives(y, z + t * u)[0])
                  + 0.5 * float(ws.ridge @ (vt * vt)) + ws.penalty(vt))
            stats["evals"] += 1
            # the slack absorbs rounding once the model decrease is at machine precision
            if ft <= f0 + 1e-4 * t * dec + 1e-15 * abs(f0):
                accepted = True
                break
            t *= 0.5
        if not accepted:
            return v, z, "stall"
        v, z = vt, z + t * u
        stats["steps"] += 1
    return v, z, "cap"  # pragma: no cover - the loop returns


def solve_exact_l1(problem, *, w0=None, tol=1e-9, max_iter=500, max_outer=200,
                   ws_start=10, warn=True):
    r"""Minimise :math:`E_0` (module docstring) by working-set proximal Newton.

    Parameters
    ----------
    problem : WeightedL1SVMProblem
    w0 : ndarray, shape (d,), optional
        Warm start (zeros by default). Its support joins the first working set, so a
        re-solve at nearby weights β costs a few proximal Newton steps on the support.
    tol : float
        Stop when the largest KKT violation (the certificate) is <= ``tol``.
    max_iter : int
        Cap on proximal Newton steps, summed over the working sets.
    max_outer : int
        Cap on working-set updates (each costs one full gradient, :math:`O(\mathrm{nnz})`).
    ws_start : int
        Number of zero groups the working set may take in at least, per update (it also
        takes up to as many as there are non-zero groups, so it at most doubles).
    warn : bool
        Warn with ``ConvergenceWarning`` when a cap stops the solver.

    Returns
    -------
    SolverResult
        ``certificate="kkt_violation"``, ``grad_norm`` the final largest violation,
        ``method="exact_l1"``, ``n_iter`` proximal Newton steps, ``record`` one entry per
        KKT check on all groups (objective, violation, seconds), ``factor`` a
        :class:`SupportNewtonFactor` at the solution; ``extra`` holds ``support``
        (coordinates of the non-zero groups and the unpenalised ones), ``n_outer``,
        ``ws_sizes`` and ``n_cd_passes``.
    """
    if not isinstance(problem, WeightedL1SVMProblem):
        raise TypeError(f"problem must be a WeightedL1SVMProblem, got {type(problem)}")
    tol = _check_scalar("tol", tol, positive=True)
    for name, v in (("max_iter", max_iter), ("max_outer", max_outer), ("ws_start", ws_start)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    t0 = time.perf_counter()
    P = problem
    d = P.n_features
    w = np.zeros(d) if w0 is None else np.array(_check_vector("w0", w0, d), copy=True)
    z = P.X @ w
    loss = SmoothedHinge(P.hinge_smoothing)
    beta, nb = P._block_beta(), P.n_groups + P._unpen.size
    stats = {"evals": 0, "steps": 0, "passes": 0}
    rec, ws_sizes, status, converged = [], [], "ok", False
    for _ in range(max_outer):
        val, d1, _d2 = loss.value_derivatives(P.y, z)
        g = P.X.T @ (P._sn * d1) + P._ridge * w
        stats["evals"] += 1
        viol, wn = _block_violation(g, w, P._blk, nb, beta)
        kkt = float(np.max(viol))
        obj = float(P._sn @ val) + 0.5 * float(P._ridge @ (w * w)) + float(beta @ wn)
        rec.append((obj, kkt, time.perf_counter() - t0))
        if kkt <= tol:
            converged = True
            break
        if status != "ok" or stats["steps"] >= max_iter:
            break
        blocks, outside = _select_blocks(P, viol, wn, ws_start)
        ws = _WorkingSet(P, blocks)
        ws_sizes.append(ws.idx.size)
        w_ws, z, status = _prox_newton(P, ws, w[ws.idx], z, max(tol, 0.3 * outside),
                                       max_iter - stats["steps"], stats)
        # every non-zero group is in the working set, so w is zero outside it
        w[:] = 0.0
        w[ws.idx] = w_ws
        z = ws.matvec(w_ws)  # recomputed from scratch: no drift of the margins
    if not converged and warn:
        _warn_stop(status, stats["steps"] >= max_iter, max_iter, max_outer, kkt, tol)
    support = _support(P, w)
    factor = _support_factor(P, w, support, z)
    obj_arr, kkt_arr, sec = (np.array(c) for c in zip(*rec))
    return SolverResult(
        coef=w, objective=obj, grad_norm=kkt, n_iter=stats["steps"], n_evals=stats["evals"],
        converged=converged, seconds=time.perf_counter() - t0,
        record=ConvergenceRecord(obj_arr, kkt_arr, sec),
        extra={"support": support, "n_outer": len(rec), "ws_sizes": ws_sizes,
               "n_cd_passes": stats["passes"], "stopped": None if converged else status},
        certificate="kkt_violation", factor=factor, method="exact_l1")


def _warn_stop(status, capped, max_iter, max_outer, kkt, tol):
    if status == "stall":
        warnings.warn(
            f"solve_exact_l1 stopped: the line search cannot decrease the objective any "
            f"more (rounding) at a KKT violation of {kkt:.3g} > tol={tol:.3g}; tol is "
            "below the attainable precision", ConvergenceWarning, stacklevel=3)
    elif capped:
        warn_cap("solve_exact_l1", max_iter, kkt, tol)
    else:
        warnings.warn(
            f"solve_exact_l1 stopped after max_outer={max_outer} working-set updates with "
            f"a KKT violation of {kkt:.3g} > tol={tol:.3g}; increase max_outer or tol",
            ConvergenceWarning, stacklevel=3)


def _select_blocks(P, viol, wn, ws_start):
    """Working set: unpenalised coordinates, non-zero groups and the worst violators.

    Returns the block indices and the largest violation left outside."""
    G = P.n_groups
    nz = np.flatnonzero(wn[:G] > 0)
    cand = np.flatnonzero((wn[:G] == 0) & (viol[:G] > 0))
    k = max(ws_start, nz.size)
    if cand.size > k:
        part = np.argpartition(-viol[cand], k)
        outside = float(np.max(viol[cand[part[k:]]]))
        cand = cand[part[:k]]
    else:
        outside = 0.0
    blocks = np.concatenate([np.sort(np.concatenate([nz, cand])), np.arange(G, viol.size)])
    return blocks.astype(np.int64), outside


def _support_factor(P, w, support, z):
    """The :class:`SupportNewtonFactor` of :math:`E_0` at ``w`` (margins ``z = Xw``)."""
    d2 = SmoothedHinge(P.hinge_smoothing).second_derivative(P.y, z)
    XS = P._Xc[:, support] if sp.issparse(P.X) else P.X[:, support]
    gs = P.groups[support]
    blocks = []
    for k in np.unique(gs[gs >= 0]):
        loc = np.flatnonzero(gs == k)
        if loc.size > 1:
            blocks.append((loc, float(P.weights[k]), w[support[loc]]))
    return SupportNewtonFactor(XS, P._sn * d2, P._ridge[support], blocks, support,
                               P.n_features)


def _support(P, w):
    nzg = P.group_norms(w) > 0
    keep = np.zeros(P.n_features, dtype=bool)
    pen = P.groups >= 0
    keep[pen] = nzg[P.groups[pen]]
    keep[P._unpen] = True
    return np.flatnonzero(keep)
