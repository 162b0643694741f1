r"""Compiled epoch of the Crammer–Singer sequential dual method
(:mod:`bisvm.solvers.dual.crammer_singer`).

One call runs one epoch in place: a pass over the active samples in a fresh random order
(the generator and shuffle of :mod:`bisvm.solvers.dual._dual_cd_kernels`), each sample's block
of ``k`` dual variables optimised exactly over its active classes. ``X`` is either dense
(row-major, ``dense=True``) or CSR; the intercept is an implicit last feature of value
``bias``. ``W`` has shape ``(d + 1, k)`` so that the ``k`` scores of one feature are
contiguous: one pass over a row's nonzeros gives all class scores.
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit, prefetch
from ._dual_cd_kernels import rng_state, shuffle_prefix
from ._smo_timer import cycles

__all__ = ["cs_epoch", "cs_run", "cs_subproblem", "cs_dual_objective", "rng_state"]


@njit
def cs_subproblem(A, B, yi, Cy, na, out, D):
    r"""Exact minimiser of :math:`\tfrac{A}{2}\|a\|^2 + B^\top a` subject to
    :math:`\sum_m a_m = 0`, :math:`a_m \le C_m` (:math:`C_{y_i} = C_i`, 0 for the other
    classes) over the ``na`` active entries (``yi`` the position of the true class,
    ``>= na`` when it was shrunk).

    KKT: :math:`a_m = \min(C_m, (\beta - B_m)/A)` with the multiplier ``β`` fixed by
    :math:`\sum_m a_m = 0`. With :math:`D_m = B_m + A C_m` (the value of ``β`` above which
    :math:`a_m` sits at its bound), ``β`` is the average of :math:`(\sum_{m \le r} D_m -
    A C_{y_i})` over the ``r`` largest ``D`` that stay below their bound (Keerthi et al.
    2008, §4; Crammer & Singer 2001, Fig. 2)."""
    for m in range(na):
        D[m] = B[m]
    if yi < na:
        D[yi] += A * Cy
    # descending insertion sort in place: k is small, and no allocation per sample
    for m in range(1, na):
        v = D[m]
        j = m - 1
        while j >= 0 and D[j] < v:
            D[j + 1] = D[j]
            j -= 1
        D[j + 1] = v
    beta = D[0] - A * Cy
    r = 1
    while r < na and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    for m in range(na):
        bound = Cy if m == yi else 0.0
        out[m] = min(bound, (beta - B[m]) / A)


@njit
def _gather_row(dense, X, data, indices, indptr, i, d, cols, vals):
    """The nonzeros of row ``i`` into ``cols[:nnz]``, ``vals[:nnz]`` in increasing column
    order (dense: the entries that are not 0; CSR: the stored entries); returns ``nnz``.
    Read once per visited sample, the row then serves the scores and the update of ``W``
    whatever its layout."""
    nnz = 0
    if dense:
        for j in range(d):
            v = X[i, j]
            if v != 0.0:
                cols[nnz] = j
                vals[nnz] = v
                nnz += 1
    else:
        for p in range(indptr[i], indptr[i + 1]):
            cols[nnz] = indices[p]
            vals[nnz] = data[p]
            nnz += 1
    return nnz


@njit(fastmath=True)
def _scores(cols, vals, nnz, d, bias, W, ax, na, G, full):
    """``G[m] += w_{ax[m]}^T x_i`` for the ``na`` active classes, over the row's nonzeros
    ``cols[:nnz]``, ``vals[:nnz]`` (:func:`_gather_row`). While at least half the classes
    are active, all ``k`` scores are accumulated in ``full`` over contiguous rows of
    ``W`` (a vectorisable loop) and then gathered; once most are shrunk, only the active
    ones are computed (an indirect loop over ``ax``)."""
    k = W.shape[1]
    if 2 * na < k:
        for p in range(nnz):
            j = cols[p]
            v = vals[p]
            for m in range(na):
                G[m] += W[j, ax[m]] * v
        if bias > 0.0:
            for m in range(na):
                G[m] += W[d, ax[m]] * bias
        return
    for m in range(k):
        full[m] = 0.0
    for p in range(nnz):
        j = cols[p]
        v = vals[p]
        for m in range(k):
            full[m] += W[j, m] * v
    if bias > 0.0:
        for m in range(k):
            full[m] += W[d, m] * bias
    for m in range(na):
        G[m] += full[ax[m]]


@njit(fastmath=True)
def _update(cols, vals, nnz, d, bias, W, cls, delta, nz):
    """``w_{cls[t]} += delta[t] x_i`` for the ``nz`` classes that moved, over the row's
    nonzeros (:func:`_gather_row`)."""
    for p in range(nnz):
        j = cols[p]
        v = vals[p]
        for t in range(nz):
            W[j, cls[t]] += delta[t] * v
    if bias > 0.0:
        for t in range(nz):
            W[d, cls[t]] += delta[t] * bias


@njit
def _prefetch_sample(dense, X, data, indices, indptr, index, s, active_size, alpha, aidx):
    """Hint the cache lines of the sample visited 4 steps ahead (random order makes each
    of them a miss otherwise); no effect on the iterates."""
    if s + 4 < active_size:
        i = index[s + 4]
        k = alpha.shape[1]
        prefetch(alpha, i * k)
        prefetch(aidx, i * k)
        if dense:
            d = X.shape[1]
            for j in range(0, min(d, 32), 8):
                prefetch(X, i * d + j)
        else:
            p0 = indptr[i]
            p1 = indptr[i + 1]
            for p in range(p0, p1, 8):
                prefetch(data, p)
            for p in range(p0, p1, 16):
                prefetch(indices, p)
    if s + 8 < active_size:
        prefetch(indptr, index[s + 8])


@njit
def _shrink_classes(alpha_i, ax, G, na, yidx, Cy, minG):
    """Move behind ``na`` the classes at their bound whose gradient is below ``minG``
    (they cannot become the most violating class again soon); returns ``(na, yidx)``."""
    m = 0
    while m < na:
        bound = Cy if m == yidx else 0.0
        if alpha_i[ax[m]] == bound and G[m] < minG:
            na -= 1
            while na > m:
                bound = Cy if na == yidx else 0.0
                if not (alpha_i[ax[na]] == bound and G[na] < minG):
                    t = ax[m]
                    ax[m] = ax[na]
                    ax[na] = t
                    g = G[m]
                    G[m] = G[na]
                    G[na] = g
                    if yidx == na:
                        yidx = m
                    elif yidx == m:
                        yidx = na
                    break
                na -= 1
        m += 1
    return na, yidx


@njit(fastmath=True)
def cs_epoch(dense, X, data, indices, indptr, d, bias, W, alpha, QD, y, cost, aidx,
             n_act_cls, yidx, index, active_size, state):
    """One epoch; returns ``(active_size, stopping)`` with ``stopping`` the largest
    ``max G - min G`` over the visited samples (−inf when none was visited).

    ``alpha`` is ``(n, k)``; ``aidx[i]`` orders sample ``i``'s classes, its first
    ``n_act_cls[i]`` being active; ``yidx[i]`` is the position of ``y_i`` in it."""
    k = W.shape[1]
    G = np.empty(k)
    B = np.empty(k)
    D = np.empty(k)
    new = np.empty(k)
    full = np.empty(k)
    cls = np.empty(k, dtype=np.int64)
    delta = np.empty(k)
    # room for the longest row (a CSR row may store more entries than d columns)
    width = d
    if not dense:
        for r in range(indptr.shape[0] - 1):
            width = max(width, indptr[r + 1] - indptr[r])
    cols = np.empty(width, dtype=np.int64)
    vals = np.empty(width)
    shuffle_prefix(index, active_size, state)
    stopping = -np.inf
    s = 0
    while s < active_size:
        _prefetch_sample(dense, X, data, indices, indptr, index, s, active_size, alpha, aidx)
        i = index[s]
        A = QD[i]
        ax = aidx[i]
        na = n_act_cls[i]
        yi = yidx[i]
        Cy = cost[i]
        alpha_i = alpha[i]
        for m in range(na):
            G[m] = 1.0
        if yi < na:
            G[yi] = 0.0
        nnz = _gather_row(dense, X, data, indices, indptr, i, d, cols, vals)
        _scores(cols, vals, nnz, d, bias, W, ax, na, G, full)
        minG = np.inf
        maxG = -np.inf
        for m in range(na):
            if alpha_i[ax[m]] < 0.0 and G[m] < minG:
                minG = G[m]
            if G[m] > maxG:
                maxG = G[m]
        if yi < na and alpha_i[y[i]] < Cy and G[yi] < minG:
            minG = G[yi]
        na, yi = _shrink_classes(alpha_i, ax, G, na, yi, Cy, minG)
        n_act_cls[i] = na
        yidx[i] = yi
        if na <= 1:
            active_size -= 1
            index[s] = index[active_size]
            index[active_size] = i
            continue
        s += 1
        if maxG - minG <= 1e-12:
            continue
        stopping = max(stopping, maxG - minG)
        for m in range(na):
            B[m] = G[m] - A * alpha_i[ax[m]]
        cs_subproblem(A, B, yi, Cy, na, new, D)
        nz = 0
        for m in range(na):
            dm = new[m] - alpha_i[ax[m]]
            alpha_i[ax[m]] = new[m]
            if abs(dm) > 1e-12:
                cls[nz] = ax[m]
                delta[nz] = dm
                nz += 1
        _update(cols, vals, nnz, d, bias, W, cls, delta, nz)
    return active_size, stopping


@njit
def cs_dual_objective(W, alpha, y):
    """½‖W‖² − Σ_i α_i^{y_i} (the dual, to be minimised; Σ_m α_i^m = 0 turns the
    linear term Σ_{m≠y_i} α_i^m into −α_i^{y_i})."""
    s = 0.0
    for j in range(W.shape[0]):
        for m in range(W.shape[1]):
            s += W[j, m] * W[j, m]
    t = 0.0
    for i in range(alpha.shape[0]):
        t += alpha[i, y[i]]
    return 0.5 * s - t


@njit
def _reset(aidx, n_cls, yidx, y, k):
    for i in range(aidx.shape[0]):
        for m in range(k):
            aidx[i, m] = m
        n_cls[i] = k
        yidx[i] = y[i]


@njit
def cs_run(dense, X, data, indices, indptr, d, bias, W, alpha, QD, y, cost, index, tol,
           max_iter, state, objs, certs, ticks, verbose):
    """Epochs until convergence or ``max_iter`` (the loop of the module docstring of
    :mod:`bisvm.solvers.dual.crammer_singer`, compiled so that the thousands of cheap epochs a
    shrunk problem takes pay no interpreter overhead). Fills ``certs`` per epoch,
    ``ticks`` (the CPU's cycle counter after each epoch, from ``ticks[0]`` at the start;
    one more entry than epochs) and ``objs`` per epoch when ``verbose > 1`` (NaN
    otherwise); returns ``(epochs, converged, last stopping value)``."""
    n, k = alpha.shape
    aidx = np.empty((n, k), dtype=np.int64)
    n_cls = np.empty(n, dtype=np.int64)
    yidx = np.empty(n, dtype=np.int64)
    _reset(aidx, n_cls, yidx, y, k)
    n_act = index.shape[0]
    active_size = n_act
    eps_shrink = max(10.0 * tol, 1.0)
    start_from_all = True
    stopping = np.inf
    it = 0
    ticks[0] = cycles()
    while it < max_iter:
        active_size, stopping = cs_epoch(dense, X, data, indices, indptr, d, bias, W, alpha,
                                         QD, y, cost, aidx, n_cls, yidx, index, active_size,
                                         state)
        # the dual objective costs O(n + dk), more than a late (shrunk) epoch: it is
        # recorded per epoch only when printed, and always after the last one
        objs[it] = cs_dual_objective(W, alpha, y) if verbose > 1 else np.nan
        certs[it] = stopping
        it += 1
        ticks[it] = cycles()
        if verbose > 1:
            print("Crammer-Singer: epoch", it, "max violation", stopping, "active",
                  active_size, "dual objective", objs[it - 1])
        if stopping < eps_shrink:
            if stopping < tol and start_from_all:
                return it, True, stopping
            # undo all shrinking, tighten the threshold, confirm on everything
            active_size = n_act
            _reset(aidx, n_cls, yidx, y, k)
            eps_shrink = max(eps_shrink / 2.0, tol)
            start_from_all = True
        else:
            start_from_all = False
    return it, False, stopping
