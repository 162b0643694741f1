r"""The kernel-column provider of the SMO solver: kernel values on dense or CSR rows,
the LRU column cache, and blocked kernel-vector products (numba).

Every routine reaches the data through one *kernel-data tuple* ``kd`` built by
:func:`bisvm.solvers.smo.kernel_data`::

    kd = (X, sqn, data, indices, indptr, work, kcode, gamma, coef0, degree, sx)
    sx = (tdata, tindices, tindptr, base, dotbuf, mark, touched)

* dense rows: ``X`` is the ``(n, d)`` matrix (or the ``(n, n)`` Gram matrix for
  ``PRECOMPUTED``) and ``indptr`` is empty;
* CSR rows: ``X`` is an empty ``(n, 0)`` array that only carries ``n``, and
  ``data, indices, indptr`` are the CSR arrays (no duplicate entries; the column indices
  of a row need not be sorted);
* ``sqn`` holds :math:`\lVert x_s\rVert_2^2`, ``work`` is a zero vector of length ``d``
  (sparse only) that a kernel evaluation fills with one row and clears again;
* ``sx`` (sparse only) holds the same matrix in CSC form ``(tdata, tindices, tindptr)``,
  ``base[s]`` (:math:`e^{-\gamma\lVert x_s\rVert^2}` for the RBF kernel), and
  scratch arrays of length ``n`` (``dotbuf`` zero, ``mark`` false, ``touched``).

Sparse kernel values. For the inner-product kernels (linear, polynomial, RBF, sigmoid) a
column :math:`k(x_s, \cdot)` needs :math:`\langle x_s, x_j\rangle` only for the rows
:math:`j` that share a feature with :math:`x_s`: walking the CSC columns of the features
of :math:`x_s` gives all of them in :math:`\sum_{f \in x_s} \mathrm{nnz}(X_{:f})`
operations (about :math:`|x_s|^2 n / d` on uniform data, against :math:`n|x_s|` for one
sparse dot product per row and :math:`2n|x_s|` for LIBSVM's merge of sorted index
lists). Every other row has inner product 0, so its kernel value is a constant
(:math:`\kappa(0)`: 0, :math:`c_0^p`, :math:`\tanh c_0`) or, for the RBF kernel,
:math:`e^{-\gamma\lVert x_s\rVert^2}e^{-\gamma\lVert x_j\rVert^2}` from the
precomputed ``base``. The same split makes a kernel-vector product :math:`\sum_c a_c
k(x_r, x_c)` a rank-one term plus a correction over the rows sharing features with
:math:`x_r`. The Laplacian kernel scatters :math:`x_s` into ``work`` and uses
:math:`\lVert x_s - x_j\rVert_1 = \lVert x_s\rVert_1 + \sum_{k\in\mathrm{nnz}(x_j)}
(|x_{sk} - x_{jk}| - |x_{sk}|)`. :func:`fill_column` is the single entry point that
computes one column; a blocked column computation can replace it without touching the
cache or the solver.
"""

from __future__ import annotations

import math

import numpy as np

from bisvm._numba import njit

BLOCK = 256

# kernel codes, as in bisvm.kernels.KERNEL_CODES
LINEAR, POLY, RBF, SIGMOID, LAPLACIAN, PRECOMPUTED = 0, 1, 2, 3, 4, 5


@njit(inline="always")
def _ipow(base, degree):
    """``base ** degree`` for a non-negative integer ``degree`` by repeated squaring
    (``pow`` with a float exponent costs several times more per kernel entry)."""
    result = 1.0
    e = int(degree)
    while e > 0:
        if e & 1:
            result *= base
        base *= base
        e >>= 1
    return result


@njit(inline="always")
def from_dot(kcode, dot, sq_a, sq_b, same, gamma, coef0, degree):
    """Kernel value from an inner product (all kernels but Laplacian / precomputed)."""
    if kcode == RBF:
        dist = sq_a + sq_b - 2.0 * dot
        if dist < 0.0 or same:
            dist = 0.0
        return math.exp(-gamma * dist)
    if kcode == LINEAR:
        return dot
    if kcode == POLY:
        return _ipow(gamma * dot + coef0, degree)
    return math.tanh(gamma * dot + coef0)


@njit(fastmath=True)
def _fill_dense(out, s, targets, n_targets, X, sqn, kcode, gamma, coef0, degree):
    d = X.shape[1]
    xs = X[s]
    if kcode == PRECOMPUTED:
        for q in range(n_targets):
            out[q] = X[s, targets[q]]
        return
    if kcode == LAPLACIAN:
        for q in range(n_targets):
            xj = X[targets[q]]
            acc = 0.0
            for f in range(d):
                acc += abs(xs[f] - xj[f])
            out[q] = math.exp(-gamma * acc)
        return
    sq_s = sqn[s]
    for q in range(n_targets):
        j = targets[q]
        xj = X[j]
        dot = 0.0
        for f in range(d):
            dot += xs[f] * xj[f]
        out[q] = from_dot(kcode, dot, sq_s, sqn[j], j == s, gamma, coef0, degree)


@njit(inline="always")
def _scatter_row(s, data, ind, ptr, work):
    """``work[indices of x_s] = x_s``; returns :math:`\\lVert x_s\\rVert_1`."""
    l1 = 0.0
    for k in range(ptr[s], ptr[s + 1]):
        work[ind[k]] = data[k]
        l1 += abs(data[k])
    return l1


@njit(inline="always")
def _clear_row(s, ind, ptr, work):
    for k in range(ptr[s], ptr[s + 1]):
        work[ind[k]] = 0.0


@njit(inline="always")
def _sparse_value(j, s, data, ind, ptr, work, l1_s, sqn, kcode, gamma, coef0, degree):
    """:math:`k(x_s, x_j)` with :math:`x_s` scattered in ``work``."""
    if kcode == LAPLACIAN:
        acc = l1_s
        for k in range(ptr[j], ptr[j + 1]):
            v = work[ind[k]]
            acc += abs(v - data[k]) - abs(v)
        if acc < 0.0 or j == s:
            acc = 0.0
        return math.exp(-gamma * acc)
    dot = 0.0
    for k in range(ptr[j], ptr[j + 1]):
        dot += data[k] * work[ind[k]]
    return from_dot(kcode, dot, sqn[s], sqn[j], j == s, gamma, coef0, degree)


@njit(inline="always")
def _dots_by_columns(s, data, ind, ptr, sx):
    """``dotbuf[j] = <x_s, x_j>`` and ``mark[j] = True`` for every row ``j`` sharing a
    feature with ``x_s`` (listed in ``touched[:m]``); returns ``m``."""
    tdata, tind, tptr, base, dotbuf, mark, touched = sx
    m = 0
    for k in range(ptr[s], ptr[s + 1]):
        f = ind[k]
        v = data[k]
        for kk in range(tptr[f], tptr[f + 1]):
            j = tind[kk]
            if not mark[j]:
                mark[j] = True
                touched[m] = j
                m += 1
            dotbuf[j] += v * tdata[kk]
    return m


@njit(inline="always")
def _clear_dots(m, sx):
    dotbuf = sx[4]
    mark = sx[5]
    touched = sx[6]
    for q in range(m):
        j = touched[q]
        dotbuf[j] = 0.0
        mark[j] = False


@njit(inline="always")
def _value_at_zero(kcode, coef0, degree):
    r""":math:`\kappa(0)`: the kernel value of two rows without a common feature (for
    the RBF kernel the factor :math:`e^{-\gamma\lVert x\rVert^2}` per row, see
    ``base``)."""
    if kcode == LINEAR:
        return 0.0
    if kcode == POLY:
        return _ipow(coef0, degree)
    if kcode == SIGMOID:
        return math.tanh(coef0)
    return 1.0


@njit(fastmath=True)
def _fill_sparse_dots(out, s, targets, n_targets, data, ind, ptr, sqn, kcode, gamma, coef0,
                      degree, sx):
    base = sx[3]
    dotbuf = sx[4]
    mark = sx[5]
    m = _dots_by_columns(s, data, ind, ptr, sx)
    zero = _value_at_zero(kcode, coef0, degree)
    if kcode == RBF:
        zero = base[s]
    for q in range(n_targets):
        j = targets[q]
        if mark[j]:
            out[q] = from_dot(kcode, dotbuf[j], sqn[s], sqn[j], j == s, gamma, coef0, degree)
        elif kcode == RBF:
            out[q] = 1.0 if j == s else zero * base[j]
        else:
            out[q] = zero
    _clear_dots(m, sx)


@njit(fastmath=True)
def _fill_sparse(out, s, targets, n_targets, data, ind, ptr, work, sqn, kcode, gamma, coef0,
                 degree):
    l1_s = _scatter_row(s, data, ind, ptr, work)
    for q in range(n_targets):
        out[q] = _sparse_value(targets[q], s, data, ind, ptr, work, l1_s, sqn, kcode, gamma,
                               coef0, degree)
    _clear_row(s, ind, ptr, work)


@njit
def fill_column(out, s, targets, n_targets, kd):
    """``out[q] = k(x_s, x_{targets[q]})`` for ``q < n_targets`` (compact order).

    NumPy equivalent: ``out[:m] = kernel(X[s:s+1], X[targets[:m]])[0]``. For
    ``PRECOMPUTED`` ``X`` is the symmetric Gram matrix and the column is read from row s.
    """
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx = kd
    if ptr.shape[0] > 0 and kcode != LAPLACIAN:
        _fill_sparse_dots(out, s, targets, n_targets, data, ind, ptr, sqn, kcode, gamma,
                          coef0, degree, sx)
    elif ptr.shape[0] > 0:
        _fill_sparse(out, s, targets, n_targets, data, ind, ptr, work, sqn, kcode, gamma,
                     coef0, degree)
    else:
        _fill_dense(out, s, targets, n_targets, X, sqn, kcode, gamma, coef0, degree)


@njit(fastmath=True)
def _matvec_sparse_dots(rows, n_rows, cols, coef, data, ind, ptr, sqn, kcode, gamma, coef0,
                        degree, sx, out):
    r"""Rank-one part plus correction: :math:`\sum_c a_c k(x_r, x_c) = z_r\sum_c a_c z_c
    + \sum_{c \sim r} a_c (k(x_r, x_c) - z_rz_c)` with :math:`z = ` ``base`` (RBF) or
    :math:`z_rz_c = \kappa(0)`, the correction over the columns sharing a feature with
    :math:`x_r`."""
    base = sx[3]
    dotbuf = sx[4]
    touched = sx[6]
    n = sqn.shape[0]
    a = np.zeros(n)
    is_col = np.zeros(n, dtype=np.bool_)
    rbf = kcode == RBF
    zero = _value_at_zero(kcode, coef0, degree)
    total = 0.0
    for c in range(cols.shape[0]):
        sc = cols[c]
        a[sc] += coef[c]
        is_col[sc] = True
        total += coef[c] * (base[sc] if rbf else zero)
    for r in range(n_rows):
        sr = rows[r]
        zr = base[sr] if rbf else 1.0
        acc = zr * total
        m = _dots_by_columns(sr, data, ind, ptr, sx)
        for q in range(m):
            j = touched[q]
            if is_col[j]:
                k = from_dot(kcode, dotbuf[j], sqn[sr], sqn[j], j == sr, gamma, coef0, degree)
                acc += a[j] * (k - (zr * base[j] if rbf else zero))
        if rbf and is_col[sr] and not sx[5][sr]:  # an empty row: k(x, x) = 1, not base^2
            acc += a[sr] * (1.0 - zr * base[sr])
        out[r] = acc
        _clear_dots(m, sx)


@njit
def _matvec_sparse(rows, n_rows, cols, coef, kd, out):
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx = kd
    m = cols.shape[0]
    if kcode == LINEAR:
        # <x_r, sum_c coef_c x_c>: one pass over the support vectors, one over the rows
        for c in range(m):
            sc = cols[c]
            for k in range(ptr[sc], ptr[sc + 1]):
                work[ind[k]] += coef[c] * data[k]
        for r in range(n_rows):
            sr = rows[r]
            acc = 0.0
            for k in range(ptr[sr], ptr[sr + 1]):
                acc += data[k] * work[ind[k]]
            out[r] = acc
        for c in range(m):
            _clear_row(cols[c], ind, ptr, work)
        return
    if kcode != LAPLACIAN:
        _matvec_sparse_dots(rows, n_rows, cols, coef, data, ind, ptr, sqn, kcode, gamma,
                            coef0, degree, sx, out)
        return
    for r in range(n_rows):
        sr = rows[r]
        l1_r = _scatter_row(sr, data, ind, ptr, work)
        acc = 0.0
        for c in range(m):
            acc += coef[c] * _sparse_value(cols[c], sr, data, ind, ptr, work, l1_r, sqn, kcode,
                                           gamma, coef0, degree)
        out[r] = acc
        _clear_row(sr, ind, ptr, work)


@njit
def _matvec_dense(rows, n_rows, cols, coef, kd, out):
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx = kd
    m = cols.shape[0]
    if kcode == PRECOMPUTED:
        for r in range(n_rows):
            row = X[rows[r]]
            acc = 0.0
            for c in range(m):
                acc += coef[c] * row[cols[c]]
            out[r] = acc
        return
    d = X.shape[1]
    if kcode == LAPLACIAN:
        for r in range(n_rows):
            xr = X[rows[r]]
            acc = 0.0
            for c in range(m):
                xc = X[cols[c]]
                dist = 0.0
                for f in range(d):
                    dist += abs(xr[f] - xc[f])
                acc += coef[c] * math.exp(-gamma * dist)
            out[r] = acc
        return
    XC = np.empty((m, d))
    for c in range(m):
        XC[c] = X[cols[c]]
    XCt = np.ascontiguousarray(XC.T)
    XR = np.empty((BLOCK, d))
    for r0 in range(0, n_rows, BLOCK):
        nb = min(BLOCK, n_rows - r0)
        for r in range(nb):
            XR[r] = X[rows[r0 + r]]
        D = np.dot(XR[:nb], XCt)
        for r in range(nb):
            sr = rows[r0 + r]
            acc = 0.0
            for c in range(m):
                sc = cols[c]
                acc += coef[c] * from_dot(kcode, D[r, c], sqn[sr], sqn[sc], sr == sc, gamma,
                                          coef0, degree)
            out[r0 + r] = acc


@njit
def kernel_matvec(rows, n_rows, cols, coef, kd, out):
    """``out[r] = sum_c coef[c] k(x_{rows[r]}, x_{cols[c]})`` (dense rows: blocks of BLAS
    products; CSR rows: scattered rows, and for the linear kernel one scattered
    :math:`w = \\sum_c` ``coef[c]`` :math:`x_c`).

    NumPy equivalent: ``out[:n_rows] = kernel(X[rows[:n_rows]], X[cols]) @ coef``.
    """
    for r in range(n_rows):
        out[r] = 0.0
    if cols.shape[0] == 0 or n_rows == 0:
        return
    if kd[4].shape[0] > 0:
        _matvec_sparse(rows, n_rows, cols, coef, kd, out)
    else:
        _matvec_dense(rows, n_rows, cols, coef, kd, out)


@njit
def new_cache(pool, n):
    """Empty column cache over the pool, every sample active.

    ``cache = (pool, slot_of, owner, stamp, ctr, act_s, pos_of)``: ``slot_of[s]`` is the
    slot of sample ``s``'s column (-1: not cached), ``owner[k]`` the sample of slot ``k``,
    ``stamp`` the LRU clock values, ``ctr = [clock, W, n_computed_columns, n_slots]``
    with ``W`` the column length (number of active samples), ``act_s`` the active samples
    in increasing order and ``pos_of[s]`` the position of sample ``s`` in a column."""
    ctr = np.zeros(4, dtype=np.int64)
    ctr[1] = n
    ctr[3] = min(n, pool.shape[0] // max(n, 1))
    return (pool, np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64),
            np.zeros(n, dtype=np.int64), ctr, np.arange(n), np.arange(n))


@njit
def get_column(s, cache, kd):
    """Offset in ``pool`` of the (active-sample) kernel column of sample ``s``, computed on
    a miss with least-recently-used eviction."""
    pool, slot_of, owner, stamp, ctr, act_s, pos_of = cache
    W = ctr[1]
    ctr[0] += 1
    slot = slot_of[s]
    if slot >= 0:
        stamp[slot] = ctr[0]
        return slot * W
    best = 0
    best_stamp = stamp[0]
    for k in range(ctr[3]):
        if owner[k] < 0:
            best = k
            break
        if stamp[k] < best_stamp:
            best_stamp = stamp[k]
            best = k
    if owner[best] >= 0:
        slot_of[owner[best]] = -1
    owner[best] = s
    slot_of[s] = best
    fill_column(pool[best * W:(best + 1) * W], s, act_s, W, kd)
    ctr[2] += 1
    stamp[best] = ctr[0]
    return best * W


@njit
def is_cached(s, base, cache):
    """Whether the column at pool offset ``base`` still belongs to sample ``s``."""
    slot = cache[1][s]
    return slot >= 0 and slot * cache[4][1] == base


@njit
def clear_cache(cache):
    """Forget every cached column."""
    slot_of = cache[1]
    owner = cache[2]
    for k in range(owner.shape[0]):
        if owner[k] >= 0:
            slot_of[owner[k]] = -1
            owner[k] = -1


@njit
def gradient_from_scratch(which, kd, sidx, y, p, shift, alpha, G):
    r"""``G_t = p_t + y_t \sum_s c_s k(x_{s_t}, x_s) + shift_t alpha_t`` for ``which[t]``,
    with :math:`c_s = \sum_{u: s_u = s}\alpha_u y_u` (one kernel-vector product over the
    support vectors)."""
    n = kd[0].shape[0]
    l = y.shape[0]
    c = np.zeros(n)
    for u in range(l):
        if alpha[u] > 0.0:
            c[sidx[u]] += alpha[u] * y[u]
    m = 0
    for s in range(n):
        if c[s] != 0.0:
            m += 1
    cols = np.empty(m, dtype=np.int64)
    coef = np.empty(m)
    m = 0
    for s in range(n):
        if c[s] != 0.0:
            cols[m] = s
            coef[m] = c[s]
            m += 1
    need = np.zeros(n, dtype=np.bool_)
    for t in range(l):
        if which[t]:
            need[sidx[t]] = True
    rows = np.empty(n, dtype=np.int64)
    n_rows = 0
    for s in range(n):
        if need[s]:
            rows[n_rows] = s
            n_rows += 1
    v = np.empty(n_rows)
    kernel_matvec(rows, n_rows, cols, coef, kd, v)
    row_of = np.full(n, -1, dtype=np.int64)
    for r in range(n_rows):
        row_of[rows[r]] = r
    for t in range(l):
        if which[t]:
            G[t] = p[t] + y[t] * v[row_of[sidx[t]]] + shift[t] * alpha[t]


@njit
def restrict_cache(cache, active, n_active, sidx):
    """Make the samples of the variables ``active[:n_active]`` the active samples.

    When they are a subset of the previous active samples every cached column is compacted
    in place (a forward copy is safe: new offsets never pass the old ones) and the freed
    room becomes new slots, so the cache holds more columns as the active set shrinks
    (LIBSVM obtains the same effect by swapping indices); otherwise the cache is emptied.
    Returns the new column length ``W``."""
    pool, slot_of, owner, stamp, ctr, act_s, pos_of = cache
    n = slot_of.shape[0]
    W = ctr[1]
    old_pos = pos_of.copy()
    mark = np.zeros(n, dtype=np.bool_)
    for k in range(n_active):
        mark[sidx[active[k]]] = True
    m = 0
    for s in range(n):
        pos_of[s] = -1
        if mark[s]:
            act_s[m] = s
            pos_of[s] = m
            m += 1
    subset = True
    for q in range(m):
        if old_pos[act_s[q]] < 0:
            subset = False
            break
    if not subset:
        clear_cache(cache)
    elif m < W:
        for k in range(ctr[3]):
            if owner[k] < 0:
                continue
            ob = k * W
            nb = k * m
            for q in range(m):
                pool[nb + q] = pool[ob + old_pos[act_s[q]]]
    ctr[1] = m
    ctr[3] = min(n, pool.shape[0] // max(m, 1))
    return m


@njit
def reset_cache(cache):
    """Every sample active again, the cache emptied (its columns cover fewer samples)."""
    n = cache[1].shape[0]
    act_s = cache[5]
    pos_of = cache[6]
    for s in range(n):
        act_s[s] = s
        pos_of[s] = s
    clear_cache(cache)
    cache[4][1] = n
    cache[4][3] = min(n, cache[0].shape[0] // max(n, 1))
