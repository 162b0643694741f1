r"""The smooth penalties of the smoothed elastic-net SVM (González Vallejo 2024,
"Selección de variables a través de máquinas de soporte vectorial dispersas: un enfoque
de optimización binivel"): the ridge :class:`L2`, the weighted group Pseudo-Huber
:class:`GroupPseudoHuber`, their :class:`SumPenalty`, the structured
:class:`BlockDiagonalHessian` of the sum, and the group-index check.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from ..losses import provides
from .interfaces import (
    CurvaturePenalty,
    InPlaceHessianPenalty,
    OnePassPenalty,
    Penalty,
    SmoothPenalty,
    StopAtZeroPenalty,
    StructuredHessianPenalty,
)

__all__ = [
    "STOP_REACH",
    "check_groups",
    "L2",
    "GroupPseudoHuber",
    "SumPenalty",
    "BlockDiagonalHessian",
]

#: The group norm, in units of γ, beyond which a Newton step that carries a group through
#: zero stops it there (:meth:`GroupPseudoHuber.stop_at_zero`): inside it the
#: Pseudo-Huber term is close to quadratic and Newton's model of it holds.
STOP_REACH = 1.0


def check_groups(groups, n_features):
    """Validate a group-index array and return it with its number of groups.

    Parameters
    ----------
    groups : array-like of int, shape (n_features,)
        Group of each coefficient, ``-1`` for an unpenalised coefficient.
    n_features : int

    Returns
    -------
    groups : ndarray of int64
    n_groups : int
    """
    g = np.asarray(groups)
    if g.ndim != 1 or g.shape[0] != n_features:
        raise ValueError(
            f"groups must be a 1-D array of length {n_features}, got shape {g.shape}"
        )
    if not np.issubdtype(g.dtype, np.integer):
        raise TypeError(f"groups must hold integers, got dtype {g.dtype}")
    g = g.astype(np.int64)
    if np.any(g < -1):
        raise ValueError("groups must be >= -1 (-1 marks an unpenalised coefficient)")
    used = np.unique(g[g >= 0])
    n_groups = int(used.max()) + 1 if used.size else 0
    if used.size != n_groups:
        missing = sorted(set(range(n_groups)) - set(used.tolist()))
        raise ValueError(f"groups must number 0..{n_groups - 1} without gaps; empty: {missing}")
    return g, n_groups


@dataclass(frozen=True)
class L2(SmoothPenalty, OnePassPenalty, InPlaceHessianPenalty, CurvaturePenalty):
    r"""Ridge penalty :math:`\frac{\alpha}{2}\sum_j m_j w_j^2` (the ridge part of the elastic net;
    Zou & Hastie 2005, "Regularization and variable selection via the elastic net").

    Parameters
    ----------
    strength : float
        :math:`\alpha \ge 0` (the thesis's α, fixed at 0.01 in its experiments).
    mask : ndarray of bool, shape (d,), optional
        ``m_j``: which coefficients are penalised (all by default).
    """

    strength: float
    mask: np.ndarray | None = None
    _mf: object = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # the mask as floats once: the Newton loops read it at every evaluation
        object.__setattr__(self, "_mf", 1.0 if self.mask is None
                           else np.asarray(self.mask).astype(float))

    def _m(self, w):
        return self._mf

    def value(self, w):
        return 0.5 * self.strength * float(np.sum(self._m(w) * w * w))

    def gradient(self, w):
        return self.strength * self._m(w) * w

    def hessian_diag(self, w):
        if self.mask is None:
            return np.full(w.shape, float(self.strength))
        return self.strength * self._mf

    def hessian(self, w):
        return np.diag(self.hessian_diag(w))

    def value_and_gradient(self, w):
        g = self.gradient(w)
        return 0.5 * float(g @ w), g

    def add_hessian(self, H, w):
        """Add the Hessian to the square matrix ``H`` in place; returns ``H``."""
        H.flat[::H.shape[0] + 1] += self.hessian_diag(w)
        return H

    def curvature(self, w):
        """The Hessian as ``(diagonal, None)``: no rank-one part (see
        :class:`BlockDiagonalHessian`)."""
        return self.hessian_diag(w), None


@dataclass(frozen=True)
class GroupPseudoHuber(SmoothPenalty, OnePassPenalty, InPlaceHessianPenalty,
                       CurvaturePenalty, StopAtZeroPenalty):
    r"""Weighted, smoothed group lasso: the Pseudo-Huber smoothing of the group norm in the
    bilevel sparse SVM of González Vallejo (2024).

    .. math::
        P(w) = \sum_k \beta_k \big(\sqrt{\gamma^2 + \|w_k\|_2^2} - \gamma\big),

    with :math:`s_k = \sqrt{\gamma^2 + \|w_k\|^2}`:

    * gradient, block k: :math:`\beta_k w_k / s_k`;
    * Hessian, block k, exact, with its rank-one term:
      :math:`\beta_k (I/s_k - w_k w_k^\top / s_k^3)`; for singleton groups this is
      :math:`\beta_j \gamma^2 (\gamma^2 + w_j^2)^{-3/2}`;
    * :math:`\partial \nabla_w P / \partial \beta_k` = the block-k gradient
      :math:`w_k / s_k` of the unweighted term, placed in the rows of group k.

    All-singleton groups (one group per feature, not one group for all) give the
    *vector* model of per-feature weights.

    Parameters
    ----------
    weights : ndarray, shape (n_groups,)
        :math:`\beta_k \ge 0`.
    groups : ndarray of int, shape (d,)
        Group of each coefficient, ``-1`` = unpenalised.
    smoothing : float
        The Pseudo-Huber :math:`\gamma > 0` (the thesis's default is 0.01).
    """

    weights: np.ndarray
    groups: np.ndarray
    smoothing: float = 0.01
    n_groups: int = field(init=False)
    _same: np.ndarray = field(init=False, repr=False)
    _pen: np.ndarray = field(init=False, repr=False)
    _gpen: np.ndarray = field(init=False, repr=False)
    _singleton: bool = field(init=False, repr=False)
    _prefix: bool = field(init=False, repr=False)

    def __post_init__(self):
        g, n_groups = check_groups(self.groups, len(self.groups))
        wts = np.asarray(self.weights, dtype=float).reshape(-1)
        if wts.shape[0] != n_groups:
            raise ValueError(f"weights has {wts.shape[0]} entries for {n_groups} groups")
        if not np.all(np.isfinite(wts)) or np.any(wts < 0):
            raise ValueError("penalty weights must be finite and non-negative")
        if not (np.isfinite(self.smoothing) and self.smoothing > 0):
            raise ValueError(f"l1_smoothing must be a positive float, got {self.smoothing!r}")
        object.__setattr__(self, "groups", g)
        object.__setattr__(self, "weights", wts)
        object.__setattr__(self, "n_groups", n_groups)
        pen = np.flatnonzero(g >= 0)
        object.__setattr__(self, "_pen", pen)
        object.__setattr__(self, "_gpen", g[pen])
        # singleton groups (scalar and vector models): diagonal Hessian, no bincount
        object.__setattr__(self, "_singleton", pen.size == n_groups)
        # the vector model's layout (group j is coefficient j, unpenalised ones last):
        # slices instead of index arrays in the Newton loops' hot path
        object.__setattr__(self, "_prefix", bool(self._singleton and np.array_equal(
            pen, np.arange(n_groups)) and np.array_equal(g[pen], pen)))
        if not self._singleton:
            object.__setattr__(self, "_same", (g[:, None] == g[None, :]) & (g[:, None] >= 0))

    def with_weights(self, weights):
        """The same penalty with new weights (groups and smoothing kept); the groups are
        not validated again (the outer loop builds one per trial point)."""
        wts = np.asarray(weights, dtype=float).reshape(-1)
        if wts.shape[0] != self.n_groups:
            raise ValueError(f"weights has {wts.shape[0]} entries for {self.n_groups} groups")
        if not np.all(np.isfinite(wts)) or np.any(wts < 0):
            raise ValueError("penalty weights must be finite and non-negative")
        new = copy.copy(self)
        object.__setattr__(new, "weights", wts)
        return new

    def group_norms(self, w):
        """:math:`\\|w_k\\|_2` for every group k."""
        pen = self.groups >= 0
        sq = np.bincount(self.groups[pen], weights=w[pen] ** 2, minlength=self.n_groups)
        return np.sqrt(sq)

    def _s(self, w):
        if self._prefix:
            wp = w[:self.n_groups]
            return np.sqrt(self.smoothing**2 + wp * wp)
        wp = w[self._pen]
        if self._singleton:
            s = np.empty(self.n_groups)
            s[self._gpen] = np.sqrt(self.smoothing**2 + wp * wp)
            return s
        sq = np.bincount(self._gpen, weights=wp * wp, minlength=self.n_groups)
        return np.sqrt(self.smoothing**2 + sq)

    def per_coordinate(self, v):
        """Spread per-group values ``v`` over the coordinates of each penalised group
        (0 on unpenalised coordinates)."""
        out = np.zeros(self.groups.shape[0])
        if self._prefix:
            out[:self.n_groups] = v
        else:
            out[self._pen] = v[self._gpen]
        return out

    def value(self, w):
        return float(np.dot(self.weights, self._s(w) - self.smoothing))

    def gradient(self, w):
        s = self._s(w)
        return self.per_coordinate(self.weights / s) * w

    def value_and_gradient(self, w):
        s = self._s(w)
        return float(np.dot(self.weights, s - self.smoothing)), self.per_coordinate(
            self.weights / s) * w

    def stop_at_zero(self, w, v, reach=STOP_REACH):
        r"""The trial point ``v`` of a step from ``w`` with every group that starts
        outside the smoothing zone (:math:`\|w_k\| > ` ``reach`` :math:`\gamma`) and
        passes through zero (:math:`w_k^\top v_k < 0`) set to zero.

        Where :math:`\|w_k\| \gg \gamma` the penalty is almost linear and its
        curvature almost zero, so a Newton model sees no kink and steps far past zero,
        where the penalty rises again: the line search then shortens the whole step and
        Newton crawls for many iterations while the sign pattern settles. Stopping such
        groups at zero, the orthant projection of OWL-QN (Andrew & Gao 2007, "Scalable
        training of L1-regularized log-linear models"), lets the other coordinates take
        the full step. Small steps cross nothing, so the path is the ray
        :math:`w + a p` near :math:`a = 0` and Armijo backtracking keeps its
        convergence guarantees; near the solution no group crosses and the step is
        Newton's.
        """
        inner = np.bincount(self._gpen, weights=w[self._pen] * v[self._pen],
                            minlength=self.n_groups)
        stop = (inner < 0) & (self.group_norms(w) > reach * self.smoothing)
        if not stop.any():
            return v
        out = v.copy()
        out[self._pen[stop[self._gpen]]] = 0.0
        return out

    def add_hessian(self, H, w):
        """Add the (block-diagonal) Hessian to the square matrix ``H`` in place."""
        s = self._s(w)
        if self._singleton:
            # beta (1/s - w^2/s^3) = beta gamma^2 / s^3
            H.flat[::H.shape[0] + 1] += self.per_coordinate(self.weights * self.smoothing**2
                                                          / s**3)
            return H
        u = self.per_coordinate(np.sqrt(self.weights / s**3)) * w
        H -= np.outer(u, u) * self._same
        H.flat[::H.shape[0] + 1] += self.per_coordinate(self.weights / s)
        return H

    def hessian(self, w):
        return self.add_hessian(np.zeros((w.shape[0], w.shape[0])), w)

    def curvature(self, w):
        r"""The Hessian as ``(c, u)``: block k is :math:`\mathrm{diag}(c_k) - u_k u_k^\top`
        with :math:`c_k = \beta_k/s_k` and :math:`u_k = \sqrt{\beta_k/s_k^3}\,w_k`;
        for singleton groups the rank-one part is folded into the diagonal,
        :math:`c_j = \beta_j\gamma^2/s_j^3`, and ``u`` is None."""
        s = self._s(w)
        if self._singleton:
            return self.per_coordinate(self.weights * self.smoothing**2 / s**3), None
        return (self.per_coordinate(self.weights / s),
                self.per_coordinate(np.sqrt(self.weights / s**3)) * w)

    def weight_vjp(self, w, lam):
        r""":math:`(\partial\nabla_w P/\partial\beta)^\top\lambda`: entry k is
        :math:`\sum_{j\in G_k}\lambda_j w_j / s_k`,
        in O(d) without the ``(d, n_groups)`` matrix."""
        s = self._s(w)
        pen = self._pen
        return np.bincount(self._gpen, weights=lam[pen] * w[pen],
                           minlength=self.n_groups) / s

    def weight_jvp(self, w, db):
        r""":math:`(\partial\nabla_w P/\partial\beta)\,\delta\beta`: coordinate j of
        group k gets :math:`w_j\,\delta\beta_k / s_k` (0 if unpenalised)."""
        s = self._s(w)
        return self.per_coordinate(np.asarray(db, dtype=float) / s) * w

    def weight_jacobian(self, w):
        r"""The ``(d, n_groups)`` matrix :math:`\partial \nabla_w P / \partial \beta`
        (dense: for small problems and tests; the solvers use :meth:`weight_vjp`)."""
        s = self._s(w)
        Jb = np.zeros((w.shape[0], self.n_groups))
        pen = np.flatnonzero(self.groups >= 0)
        Jb[pen, self.groups[pen]] = w[pen] / s[self.groups[pen]]
        return Jb


@dataclass(frozen=True)
class SumPenalty(SmoothPenalty, OnePassPenalty, InPlaceHessianPenalty,
                 StructuredHessianPenalty, StopAtZeroPenalty):
    """The sum of smooth penalties (e.g. ``L2 + GroupPseudoHuber`` = the smoothed
    elastic net of González Vallejo 2024).

    The sum offers every capability of its terms: a term's one-pass value and gradient,
    its in-place Hessian and its stop at zero are used when the term declares them
    (:class:`OnePassPenalty`, :class:`InPlaceHessianPenalty`, :class:`StopAtZeroPenalty`),
    read once here rather than at every evaluation.

    Parameters
    ----------
    terms : tuple of penalties
        The terms, summed in this order.
    """

    terms: tuple
    _one_pass: tuple = field(init=False, repr=False, compare=False)
    _in_place: tuple = field(init=False, repr=False, compare=False)
    _stoppers: tuple = field(init=False, repr=False, compare=False)
    _no_curvature: object = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        for t in self.terms:
            if not provides(t, Penalty):
                raise TypeError(f"terms must be penalties (a value(w) method), got "
                                f"{type(t).__name__}")
        object.__setattr__(self, "_one_pass", tuple(provides(t, OnePassPenalty)
                                                    for t in self.terms))
        object.__setattr__(self, "_in_place", tuple(provides(t, InPlaceHessianPenalty)
                                                    for t in self.terms))
        object.__setattr__(self, "_stoppers", tuple(t for t in self.terms
                                                    if provides(t, StopAtZeroPenalty)))
        # the first term without curvature, which makes structured_hessian unavailable
        object.__setattr__(self, "_no_curvature", next(
            (t for t in self.terms if not provides(t, CurvaturePenalty)), None))

    def value(self, w):
        return sum(t.value(w) for t in self.terms)

    def gradient(self, w):
        return sum(t.gradient(w) for t in self.terms)

    def hessian(self, w):
        return sum(t.hessian(w) for t in self.terms)

    def value_and_gradient(self, w):
        f, g = 0.0, np.zeros_like(w, dtype=float)
        for t, one_pass in zip(self.terms, self._one_pass):
            if one_pass:
                ft, gt = t.value_and_gradient(w)
            else:
                ft, gt = t.value(w), t.gradient(w)
            f += ft
            g += gt
        return f, g

    def add_hessian(self, H, w):
        """Add every term's Hessian to ``H`` in place."""
        for t, in_place in zip(self.terms, self._in_place):
            if in_place:
                t.add_hessian(H, w)
            else:
                H += t.hessian(w)
        return H

    def stop_at_zero(self, w, v):
        """``v`` with the groups of every term that stops them at zero set to zero
        (:meth:`GroupPseudoHuber.stop_at_zero`)."""
        for t in self._stoppers:
            v = t.stop_at_zero(w, v)
        return v

    def structured_hessian(self, w):
        """The Hessian as a :class:`BlockDiagonalHessian` (every term must provide
        ``curvature``, and at most one of them a rank-one part per group)."""
        diag = np.zeros(w.shape[0])
        u, groups = None, None
        if self._no_curvature is not None:
            raise TypeError(f"a structured Hessian needs the curvature of every term; "
                            f"{type(self._no_curvature).__name__} has none")
        for t in self.terms:
            c, ut = t.curvature(w)
            diag += c
            if ut is not None:
                if u is not None:
                    raise ValueError("at most one grouped penalty term is supported")
                u, groups = ut, t.groups
        return BlockDiagonalHessian(diag, u, groups)


class BlockDiagonalHessian:
    r"""A symmetric block-diagonal matrix :math:`D = \mathrm{diag}(c) - \sum_k u_k u_k^\top`
    whose rank-one terms live on disjoint groups: the Hessian of the smoothed
    elastic-net penalty (:class:`L2` + :class:`GroupPseudoHuber`, with the exact
    rank-one term of each group). Products, the diagonal and the inverse cost O(d);
    nothing d × d is formed.

    The inverse of block k is Sherman-Morrison's
    :math:`(C - uu^\top)^{-1} = C^{-1} + C^{-1}uu^\top C^{-1}/(1 - u^\top C^{-1}u)`
    (positive definite: :math:`1 - u^\top C^{-1}u = (\alpha + \beta\gamma^2/s^3)/c > 0`).
    Coordinates with :math:`c_j = 0` (an unpenalised intercept) are *free*: :meth:`solve`
    returns 0 there (the pseudo-inverse on the penalised coordinates); sample-space
    solvers border them (:mod:`bisvm.solvers.primal.wide`).

    Parameters
    ----------
    diag : ndarray, shape (d,)
        :math:`c \ge 0`.
    u : ndarray, shape (d,), optional
        Rank-one factors, stacked (zero on unpenalised coordinates); None if every block
        is 1 × 1.
    groups : ndarray of int, shape (d,), optional
        Group of each coordinate (-1: none), needed with ``u``.
    """

    def __init__(self, diag, u=None, groups=None):
        self.diag = np.asarray(diag, dtype=float)
        self.u = None if u is None else np.asarray(u, dtype=float)
        self.groups = None if groups is None else np.asarray(groups, dtype=np.int64)
        self.free = np.flatnonzero(self.diag <= 0.0)
        self._pen = None if self.groups is None else np.flatnonzero(self.groups >= 0)
        with np.errstate(divide="ignore"):
            self.inv_diag = np.where(self.diag > 0.0, 1.0 / np.where(self.diag > 0, self.diag,
                                                                       1.0), 0.0)
        if self.u is not None:
            # per group: 1 / (1 - u^T C^{-1} u), the Sherman-Morrison scale
            t = self._group_sum(self.u * self.u * self.inv_diag)
            self._sm = 1.0 / (1.0 - t)

    def _group_sum(self, v):
        return np.bincount(self.groups[self._pen], weights=v[self._pen])

    def _expand(self, per_group):
        out = np.zeros(self.diag.shape[0])
        out[self._pen] = per_group[self.groups[self._pen]]
        return out

    def matvec(self, v):
        """:math:`D v`."""
        out = self.diag * v
        if self.u is not None:
            out -= self.u * self._expand(self._group_sum(self.u * v))
        return out

    def diagonal(self):
        """The diagonal of ``D``."""
        return self.diag if self.u is None else self.diag - self.u * self.u

    def solve(self, v):
        """:math:`D^{-1} v` on the penalised coordinates (0 on free ones)."""
        out = self.inv_diag * v
        if self.u is not None:
            cu = self.u * self.inv_diag
            out += cu * self._expand(self._sm * self._group_sum(cu * v))
        return out

    def with_diagonal(self, extra):
        r"""The matrix :math:`D + \mathrm{diag}(extra)` (a block-Jacobi preconditioner
        adds the loss curvature's diagonal)."""
        return BlockDiagonalHessian(self.diag + extra, self.u, self.groups)

    def inverse_low_rank(self):
        r"""``(v, t)``: :math:`D^{-1} = \mathrm{diag}(1/c) + \sum_k t_k v_k v_k^\top` with
        :math:`v = C^{-1}u` stacked by group (None, None without rank-one terms)."""
        if self.u is None:
            return None, None
        return self.u * self.inv_diag, self._sm

    def dense(self):
        """The full matrix (tests and small problems only)."""
        D = np.diag(self.diag)
        if self.u is not None:
            same = (self.groups[:, None] == self.groups[None, :]) & (self.groups[:, None] >= 0)
            D -= np.outer(self.u, self.u) * same
        return D
