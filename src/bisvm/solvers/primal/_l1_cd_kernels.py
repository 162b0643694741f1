r"""Compiled passes of the coordinate descent of :mod:`bisvm.solvers.primal.l1_cd`.

The columns are a column-major (CSC) copy of the design with the labels folded in,
:math:`v_{ij} = y_i x_{ij}`, made once by :func:`scaled_csc` (int32 row indices when the
rows fit). The intercept is an implicit last coordinate ``j = d`` whose column is the
constant ``bias`` (times :math:`y_i`), never stored. ``b`` holds
:math:`b_i = 1 - y_i \tilde x_i^\top w`, updated along each coordinate's column. Every
array index in the column loops is unsigned: numba tests each signed index for negative
wraparound, which in loops this short costs about as much as their arithmetic.

A column's rows are ascending but far apart, so each :math:`b_i` it reads or updates is a
cache miss once ``b`` outgrows the cache; the column loops prefetch the :math:`b_i` of the
entry ``_AHEAD`` places ahead (the row indices are read sequentially, so that address is
known early), which overlaps those misses with the arithmetic. The iterates are unchanged.
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit, prefetch

__all__ = ["rng_state", "scaled_csc", "column_sq_norms", "cd_pass", "zero_violation",
           "recompute_b",
           "objective", "MAX_LINESEARCH"]

#: Halvings of a coordinate step before the residuals are recomputed from scratch
MAX_LINESEARCH = 20
# entries of a column ahead whose b_i is prefetched (a few cache-miss latencies of work)
_AHEAD = 16
# Armijo's sufficient-decrease constant of the coordinate line search
_SIGMA = 0.01


def rng_state(seed):
    """State (one uint64) of the permutation generator: explicit, so that concurrent fits
    in threads do not share numba's global stream."""
    return np.array([int(seed) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


@njit
def _next(state, bound):
    """A draw in ``[0, bound)`` (SplitMix64, Steele, Lea & Flood 2014)."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z % np.uint64(bound))


@njit
def scaled_csc(data, indices, indptr, y, d, index_dtype_sample):
    r"""The CSC arrays ``(cdata, cindices, cindptr)`` of :math:`v_{ij} = y_i x_{ij}` from CSR
    ``X`` (rows in ascending order within each column); ``cindices`` takes the dtype of
    ``index_dtype_sample``."""
    n = indptr.shape[0] - 1
    nnz = indptr[n]
    cindptr = np.zeros(d + 1, dtype=np.int64)
    for k in range(nnz):
        cindptr[indices[k] + 1] += 1
    for j in range(d):
        cindptr[j + 1] += cindptr[j]
    fill = cindptr[:d].copy()
    cindices = np.empty(nnz, dtype=index_dtype_sample.dtype)
    cdata = np.empty(nnz)
    for i in range(n):
        yi = y[i]
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = np.uint64(indices[k])
            p = fill[j]
            cindices[p] = i
            cdata[p] = yi * data[k]
            fill[j] = p + 1
    return cdata, cindices, cindptr


@njit
def column_sq_norms(cdata, cindices, cindptr, c, y, bias, out):
    r"""``out[j]`` :math:`= \sum_i c_i v_{ij}^2` (the curvature bound of the approximate
    line-search test), the intercept's last."""
    d = cindptr.shape[0] - 1
    for j in range(d):
        s = 0.0
        for k in range(np.uint64(cindptr[j]), np.uint64(cindptr[j + 1])):
            s += c[np.uint64(cindices[k])] * cdata[k] * cdata[k]
        out[j] = s
    if bias > 0.0:
        s = 0.0
        for i in range(np.uint64(y.shape[0])):
            s += c[i] * bias * bias * y[i] * y[i]
        out[d] = s


@njit(inline="always")
def _cost(c, cu, i):
    """``c_i``: read from ``c`` unless all costs equal ``cu > 0`` (which spares a random
    access per nonzero)."""
    return cu if cu > 0.0 else c[i]


@njit
def _grad_hess(cdata, cindices, y, c, cu, b, bias, dense, lo, hi):
    r"""The loss's derivative :math:`-\sum_{b_i > 0} c_i v_{ij} b_i` and curvature
    :math:`\sum_{b_i > 0} c_i v_{ij}^2` along one column (halved)."""
    G = 0.0
    H = 0.0
    if dense:
        for i in range(np.uint64(lo), np.uint64(hi)):
            if b[i] > 0.0:
                v = bias * y[i]
                cv = _cost(c, cu, i) * v
                G -= cv * b[i]
                H += cv * v
        return G, H
    for t in range(np.uint64(lo), np.uint64(hi)):
        prefetch(b, cindices[min(t + _AHEAD, hi - 1)])
        i = np.uint64(cindices[t])
        bi = b[i]
        # a multiply by 0 or 1, not a branch: whether b_i > 0 is unpredictable near the
        # optimum, and adding a zero term leaves both sums bit-identical
        on = 1.0 if bi > 0.0 else 0.0
        cv = _cost(c, cu, i) * cdata[t] * on
        G -= cv * bi
        H += cv * cdata[t]
    return G, H


@njit
def _shift(cdata, cindices, y, b, bias, dense, lo, hi, step):
    """``b += step · v_j`` along one column."""
    if dense:
        for i in range(np.uint64(lo), np.uint64(hi)):
            b[i] += step * bias * y[i]
        return
    for t in range(np.uint64(lo), np.uint64(hi)):
        prefetch(b, cindices[min(t + _AHEAD, hi - 1)])
        b[np.uint64(cindices[t])] += step * cdata[t]


@njit
def _shift_loss(cdata, cindices, y, c, cu, b, bias, dense, lo, hi, step, with_old):
    """``b += step · v_j`` along one column; returns the column's squared-hinge loss
    after, and before when ``with_old``."""
    old = 0.0
    new = 0.0
    for t in range(np.uint64(lo), np.uint64(hi)):
        if dense:
            i = t
            v = bias * y[i]
        else:
            i = np.uint64(cindices[t])
            v = cdata[t]
        bi = b[i]
        ci = _cost(c, cu, i)
        if with_old and bi > 0.0:
            old += ci * bi * bi
        bi += step * v
        b[i] = bi
        if bi > 0.0:
            new += ci * bi * bi
    return old, new


@njit
def _newton_step(G, H, wj):
    r"""The minimiser of :math:`G d + \tfrac12 H d^2 + |w_j + d|` (soft thresholding)."""
    Gp = G + 1.0
    Gn = G - 1.0
    if Gp < H * wj:
        return -Gp / H
    if Gn > H * wj:
        return -Gn / H
    return -wj


@njit
def _line_search(cdata, cindices, y, c, cu, b, bias, dense, lo, hi, wj, dj, G_loss, xsq):
    r"""Armijo backtracking along one coordinate (Tseng & Yun 2009; Yuan et al. 2010,
    Alg. 3); updates ``b`` and returns ``(accepted step, halvings)``. The bound
    :math:`\Delta L \le G d + (\sum_i c_i v_{ij}^2) d^2` of the squared hinge accepts most
    steps without touching the column (the "approximate condition" of Yuan et al.)."""
    delta = abs(wj + dj) - abs(wj) + (G_loss * dj)
    d_old = 0.0
    loss_old = 0.0
    k = 0
    while k < MAX_LINESEARCH:
        d_diff = d_old - dj
        cond = abs(wj + dj) - abs(wj) - _SIGMA * delta
        if xsq * dj * dj + G_loss * dj + cond <= 0.0:
            _shift(cdata, cindices, y, b, bias, dense, lo, hi, d_diff)
            return dj, k
        old, loss_new = _shift_loss(cdata, cindices, y, c, cu, b, bias, dense, lo, hi,
                                    d_diff, k == 0)
        if k == 0:
            loss_old = old
        if cond + loss_new - loss_old <= 0.0:
            return dj, k
        d_old = dj
        dj *= 0.5
        delta *= 0.5
        k += 1
    # every halving failed: b holds b_old - d_old v; undo it
    _shift(cdata, cindices, y, b, bias, dense, lo, hi, d_old)
    return 0.0, k


@njit
def cd_pass(cdata, cindices, cindptr, y, c, cu, bias, w, b, xsq, index, active_size,
            gmax_old, n_rows, state):
    r"""One pass of coordinate descent with Newton steps over ``index[:active_size]`` in a
    fresh random order, with shrinking; ``cu > 0`` when every cost equals it.

    Returns ``(gmax, gnorm1, active_size, n_failed)``: the largest and the summed
    violation (the magnitude of the minimum-norm subgradient) over the visited
    coordinates, the new number of active coordinates and the number of coordinates whose
    line search failed (their step is dropped; the caller recomputes ``b`` to clear the
    rounding of the undone trials).
    """
    d = cindptr.shape[0] - 1
    n = y.shape[0]
    for s in range(active_size):
        r = s + _next(state, active_size - s)
        index[s], index[r] = index[r], index[s]
    gmax = 0.0
    gnorm1 = 0.0
    n_failed = 0
    s = 0
    while s < active_size:
        j = index[s]
        dense = j == d
        lo = 0 if dense else cindptr[j]
        hi = n if dense else cindptr[j + 1]
        G_loss, H = _grad_hess(cdata, cindices, y, c, cu, b, bias, dense, lo, hi)
        G_loss *= 2.0
        H = max(2.0 * H, 1e-12)
        Gp = G_loss + 1.0
        Gn = G_loss - 1.0
        wj = w[j]
        if wj == 0.0:
            if Gp < 0.0:
                violation = -Gp
            elif Gn > 0.0:
                violation = Gn
            else:
                violation = 0.0
                if Gp > gmax_old / n_rows and Gn < -gmax_old / n_rows:
                    active_size -= 1
                    index[s], index[active_size] = index[active_size], index[s]
                    continue
        elif wj > 0.0:
            violation = abs(Gp)
        else:
            violation = abs(Gn)
        gmax = max(gmax, violation)
        gnorm1 += violation
        dj = _newton_step(G_loss, H, wj)
        if abs(dj) >= 1e-12:
            step, k = _line_search(cdata, cindices, y, c, cu, b, bias, dense, lo, hi, wj, dj,
                                   G_loss, xsq[j])
            w[j] = wj + step
            if k >= MAX_LINESEARCH:
                n_failed += 1
        s += 1
    return gmax, gnorm1, active_size, n_failed


@njit
def zero_violation(cdata, cindices, cindptr, y, c, cu, bias):
    r"""The summed violation :math:`\sum_j \max(0, |\partial_j L(0)| - 1)` at
    :math:`w = 0` (where every :math:`b_i = 1`): the scale of the stopping rule for a
    warm start, whose own first pass may already be near the optimum."""
    d = cindptr.shape[0] - 1
    total = 0.0
    for j in range(d):
        G = 0.0
        for t in range(np.uint64(cindptr[j]), np.uint64(cindptr[j + 1])):
            G -= _cost(c, cu, np.uint64(cindices[t])) * cdata[t]
        total += max(0.0, abs(2.0 * G) - 1.0)
    if bias > 0.0:
        G = 0.0
        for i in range(y.shape[0]):
            G -= _cost(c, cu, i) * bias * y[i]
        total += max(0.0, abs(2.0 * G) - 1.0)
    return total


@njit
def recompute_b(cdata, cindices, cindptr, y, bias, w, b):
    r""":math:`b_i = 1 - \sum_j w_j v_{ij}` from scratch (clears accumulated rounding)."""
    d = cindptr.shape[0] - 1
    b[:] = 1.0
    for j in range(d):
        wj = w[j]
        if wj != 0.0:
            for k in range(np.uint64(cindptr[j]), np.uint64(cindptr[j + 1])):
                b[np.uint64(cindices[k])] -= wj * cdata[k]
    if bias > 0.0 and w[d] != 0.0:
        for i in range(y.shape[0]):
            b[i] -= w[d] * bias * y[i]


@njit
def objective(w, b, c):
    r""":math:`\|w\|_1 + \sum_i c_i \max(0, b_i)^2`."""
    f = 0.0
    for j in range(w.shape[0]):
        f += abs(w[j])
    for i in range(b.shape[0]):
        if b[i] > 0.0:
            f += c[i] * b[i] * b[i]
    return f
