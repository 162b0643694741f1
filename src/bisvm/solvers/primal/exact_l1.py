r"""Exact weighted (group) L1 SVM: the :math:`\gamma = 0` lower level of BiSVM.

The problem (the smoothed elastic-net SVM of González Vallejo 2024 with the Pseudo-Huber
smoothing removed) is

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
support, the unpenalised coordinates and the worst violators of the optimality conditions,
at most doubling in size per update) and solve the problem restricted to :math:`W` by
proximal Newton steps: the smooth part is replaced by its second-order model, the model
plus the exact group norms is minimised by block coordinate descent (each block exactly:
soft-thresholding, or a secular equation in the eigenbasis of the block Hessian), and the
step is damped by an Armijo line search on :math:`E_0` itself (and, if the line search
fails, by Levenberg-Marquardt damping of the model). Once a step leaves the sign pattern
unchanged and the zero groups satisfy their conditions, the steps become Newton steps on
the support, where :math:`E_0` is smooth (quadratic convergence, whatever the
conditioning). Then the optimality conditions are checked on every group and the
violators join :math:`W`. The certificate is the largest KKT violation

.. math::
    \max_k\; \mathrm{dist}\big(-\nabla_k f(w),\; \beta_k\,\partial\|w_{G_k}\|\big),

i.e. :math:`\|\nabla_k f + \beta_k w_k/\|w_k\|\|` on a non-zero group,
:math:`\max(\|\nabla_k f\| - \beta_k, 0)` on a zero group and :math:`|\nabla_j f|` on an
unpenalised coordinate, with :math:`f` the smooth part. A full pass over the data (the
KKT check) costs :math:`O(\mathrm{nnz}(X))` and a CD pass :math:`O(\mathrm{nnz}(X_W))`;
sparse ``X`` is never densified; dense linear algebra is confined to a group's diagonal
block and to the support (:math:`|S| \le 2000`) for the Newton steps.

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
from ...penalties import L2, Penalty, SumPenalty, check_groups
from ..base import (
    ConvergenceRecord,
    ConvergenceWarning,
    SolverResult,
    warn_cap,
)
from ._exact_l1_factor import SupportNewtonFactor, group_l1_weight_jvp, group_l1_weight_vjp
from ._exact_l1_steps import WorkingSet, block_violation, multi_blocks, prox_newton

__all__ = [
    "WeightedL1SVMProblem",
    "WeightedGroupL1",
    "solve_exact_l1",
    "SupportNewtonFactor",
    "group_l1_weight_vjp",
    "group_l1_weight_jvp",
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

    Attributes
    ----------
    n_groups : int
    penalty : SumPenalty
        ``(L2(alpha, mask), WeightedGroupL1(weights, groups))``.

    Notes
    -----
    Inputs are validated and converted once (float64; a CSR ``X`` is also copied once to
    CSC, for the working set's column slices); :meth:`with_weights` reuses all of it, so
    the outer loop's re-solves at new β pay nothing for it.
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
    _bptr: np.ndarray = field(init=False, repr=False)
    _bcoord: np.ndarray = field(init=False, repr=False)
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
        # block of each coordinate: its group, or one block per unpenalised coordinate
        # (numbered after the groups); block b owns _bcoord[_bptr[b]:_bptr[b + 1]]
        unpen = np.flatnonzero(g < 0)
        blk = g.copy()
        blk[unpen] = n_groups + np.arange(unpen.size)
        bcoord = np.argsort(blk, kind="stable")
        bptr = np.zeros(n_groups + unpen.size + 1, dtype=np.int64)
        np.cumsum(np.bincount(blk, minlength=n_groups + unpen.size), out=bptr[1:])
        sets = {"X": X, "y": y, "hinge_smoothing": mu, "l2_penalty": alpha, "l2_mask": mask,
                "weights": wts, "groups": g, "n_groups": n_groups,
                "_Xc": X.tocsc() if sp.issparse(X) else X, "_sn": s / n,
                "_ridge": alpha * mask, "_blk": blk, "_bptr": bptr, "_bcoord": bcoord,
                "_unpen": unpen}
        if self.sample_weight is not None:
            sets["sample_weight"] = s
        for k, v in sets.items():
            object.__setattr__(self, k, v)

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def penalty(self):
        """The penalty as ``SumPenalty((L2(alpha, mask), WeightedGroupL1(beta, groups)))``,
        the same two terms as the smoothed lower level's (``ridge, pen =
        problem.penalty.terms``)."""
        return SumPenalty((L2(self.l2_penalty, self.l2_mask),
                           WeightedGroupL1(self.weights, self.groups)))

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
        return block_violation(g, w, self._blk, nb, self._block_beta())[0]

    def _check_w(self, w):
        return _check_vector("w", w, self.n_features)


@dataclass(frozen=True, eq=False)
class WeightedGroupL1(Penalty):
    r"""The non-smooth weighted group lasso :math:`\sum_k \beta_k\|w_{G_k}\|_2` of
    :math:`E_0`, with the derivatives in its weights that the hypergradient needs (the
    interface of :class:`~bisvm.penalties.GroupPseudoHuber` at :math:`\gamma = 0`, minus
    the gradient and Hessian, which exist only on the support: see
    :class:`SupportNewtonFactor`).

    Parameters
    ----------
    weights : ndarray, shape (n_groups,)
    groups : ndarray of int, shape (d,)
        ``-1`` for an unpenalised coordinate.
    """

    weights: np.ndarray
    groups: np.ndarray
    n_groups: int = field(init=False)

    def __post_init__(self):
        g, n_groups = check_groups(self.groups, len(self.groups))
        object.__setattr__(self, "groups", g)
        object.__setattr__(self, "n_groups", n_groups)
        object.__setattr__(self, "weights", _check_weights(self.weights, n_groups))

    def group_norms(self, w):
        r""":math:`\|w_{G_k}\|_2` for every group k."""
        pen = self.groups >= 0
        return np.sqrt(np.bincount(self.groups[pen], weights=np.asarray(w)[pen] ** 2,
                                   minlength=self.n_groups))

    def value(self, w):
        return float(self.weights @ self.group_norms(w))

    def with_weights(self, weights):
        return WeightedGroupL1(weights, self.groups)

    def weight_vjp(self, w, lam):
        """:func:`group_l1_weight_vjp` at ``w``."""
        return group_l1_weight_vjp(w, self.groups, self.n_groups, lam)

    def weight_jvp(self, w, db):
        """:func:`group_l1_weight_jvp` at ``w``."""
        return group_l1_weight_jvp(w, self.groups, db)


def _check_weights(weights, n_groups):
    wts = np.asarray(weights, dtype=np.float64).reshape(-1)
    if wts.shape[0] != n_groups:
        raise ValueError(f"weights has {wts.shape[0]} entries for {n_groups} groups")
    if not np.all(np.isfinite(wts)) or np.any(wts < 0):
        raise ValueError("weights must be finite and non-negative")
    return wts


def solve_exact_l1(problem, *, w0=None, tol=1e-9, max_iter=500, max_outer=200,
                   ws_start=10, warn=True):
    r"""Minimise :math:`E_0` (module docstring) by working-set proximal Newton.

    Parameters
    ----------
    problem : WeightedL1SVMProblem
    w0 : ndarray, shape (d,), optional
        Warm start. Its support joins the first working set, so a re-solve at nearby
        weights β costs a few Newton steps on the support. Without it the solve starts
        from zero, by continuation when ``hinge_smoothing < 0.125``: stages at
        μ = 0.25, 0.025, ... (each solved to ``max(tol, 1e-6)`` and warm-starting the
        next), as :meth:`~bisvm.selection.bilevel.LowerLevel.solve` does.
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
        ``certificate="kkt_violation"``, ``certificate_value`` the final largest violation,
        ``method="exact_l1"``, ``n_iter`` Newton steps (all stages), ``record`` one entry
        per KKT check on all groups of the final stage (objective, violation, seconds),
        ``factor`` a :class:`SupportNewtonFactor` at the solution, ``active_set`` the
        support (coordinates of the non-zero groups and the unpenalised ones); ``stats``
        holds ``n_outer``, ``ws_sizes``, ``n_cd_passes``, ``continuation`` (the μ stages)
        and ``stopped`` (None, or why it stopped unconverged).
    """
    if not isinstance(problem, WeightedL1SVMProblem):
        raise TypeError(f"problem must be a WeightedL1SVMProblem, got {type(problem)}")
    tol = _check_scalar("tol", tol, positive=True)
    for name, v in (("max_iter", max_iter), ("max_outer", max_outer), ("ws_start", ws_start)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    t0 = time.perf_counter()
    P = problem
    w = (np.zeros(P.n_features) if w0 is None
         else np.array(_check_vector("w0", w0, P.n_features), copy=True))
    stats = {"evals": 0, "steps": 0, "passes": 0}
    stages = []
    if w0 is None:
        # continuation in mu from a cold start, as LowerLevel.solve does: at small mu
        # Newton from zero needs many damped steps (samples far from the kink have no
        # curvature); each stage warm-starts the next, ten times less smooth
        m = 0.25
        while m > 2.0 * P.hinge_smoothing:
            stages.append(m)
            m /= 10.0
    for m in stages:
        stage = copy.copy(P)
        object.__setattr__(stage, "hinge_smoothing", m)
        w = _working_set_loop(stage, w, max(tol, 1e-6), max_iter, max_outer, ws_start,
                              stats, t0)[0]
    w, z, rec, ws_sizes, status, converged = _working_set_loop(
        P, w, tol, max_iter, max_outer, ws_start, stats, t0)
    obj, kkt = rec[-1][:2]
    if not converged and warn:
        _warn_stop(status, stats["steps"] >= max_iter, max_iter, max_outer, kkt, tol)
    support = _support(P, w)
    factor = _support_factor(P, w, support, z)
    obj_arr, kkt_arr, sec = (np.array(c) for c in zip(*rec))
    return SolverResult(
        coef=w, objective=obj, certificate_value=kkt, n_iter=stats["steps"], n_evals=stats["evals"],
        converged=converged, seconds=time.perf_counter() - t0,
        record=ConvergenceRecord(obj_arr, kkt_arr, sec), active_set=support,
        stats={"n_outer": len(rec), "ws_sizes": ws_sizes, "continuation": tuple(stages),
               "n_cd_passes": stats["passes"], "stopped": None if converged else status},
        certificate="kkt_violation", factor=factor, method="exact_l1")


def _working_set_loop(P, w, tol, max_iter, max_outer, ws_start, stats, t0):
    """Working-set updates until the KKT violation is <= ``tol`` (``w`` is updated in
    place); returns ``(w, z, record, ws_sizes, status, converged)``."""
    z = P.X @ w
    loss = SmoothedHinge(P.hinge_smoothing)
    beta, nb = P._block_beta(), P.n_groups + P._unpen.size
    rec, ws_sizes, status = [], [], "ok"
    for _ in range(max_outer):
        val, d1, _d2 = loss.value_derivatives(P.y, z)
        g = P.X.T @ (P._sn * d1) + P._ridge * w
        stats["evals"] += 1
        viol, wn = block_violation(g, w, P._blk, nb, beta)
        kkt = float(np.max(viol))
        obj = float(P._sn @ val) + 0.5 * float(P._ridge @ (w * w)) + float(beta @ wn)
        rec.append((obj, kkt, time.perf_counter() - t0))
        if kkt <= tol:
            return w, z, rec, ws_sizes, status, True
        if status != "ok" or stats["steps"] >= max_iter:
            break
        blocks, outside = _select_blocks(P, viol, wn, ws_start)
        ws = WorkingSet(P._Xc, P.y, P._sn, P.hinge_smoothing, P._ridge, beta, P._bptr,
                        P._bcoord, blocks)
        ws_sizes.append(ws.idx.size)
        w_ws, z, status = prox_newton(ws, w[ws.idx], z, max(tol, 0.3 * outside),
                                       max_iter - stats["steps"], stats)
        # every non-zero group is in the working set, so w is zero outside it
        w[:] = 0.0
        w[ws.idx] = w_ws
        z = ws.matvec(w_ws)  # recomputed from scratch: no drift of the margins
    return w, z, rec, ws_sizes, status, False


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
    blocks = [(loc, float(P.weights[gs[loc[0]]]), w[support[loc]])
              for loc in multi_blocks(gs) if gs[loc[0]] >= 0]
    return SupportNewtonFactor(XS, P._sn * d2, P._ridge[support], blocks, support,
                               P.n_features)


def _support(P, w):
    nzg = P.group_norms(w) > 0
    keep = np.zeros(P.n_features, dtype=bool)
    pen = P.groups >= 0
    keep[pen] = nzg[P.groups[pen]]
    keep[P._unpen] = True
    return np.flatnonzero(keep)
