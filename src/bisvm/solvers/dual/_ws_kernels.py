r"""Compiled pieces of the working-set solver (:mod:`bisvm.solvers.dual.working_set`).

* :func:`transform_into`: kernel rows from a float32 block of their inner products
  (the RBF exponential by a Cody–Waite reduction and a polynomial in float32 arithmetic,
  so that the loop vectorises);
* :func:`update_and_scan` and :func:`merge_selection`: the gradient update from the
  per-sample sums fused with a scan for the global violation :math:`m(\alpha) -
  M(\alpha)` and the candidates (bounded heaps, per range of variables), then the new
  members of the working set, the most violating variables of :math:`I_{up}` and
  :math:`I_{low}` taken in turn by :math:`-y_tG_t` (first order);
* :func:`inner_smo`: SMO with LIBSVM's second-order pair selection on the
  :math:`q`-variable subproblem, the other variables fixed;
* :func:`column_sums`: the per-sample sums :math:`\sum_a y_a\Delta\alpha_a
  k(x_{s_a}, x_s)` of the gradient update over the kernel rows of the working set
  (float64 sums of the float32 rows, on ranges of samples, one per thread).

Every function is compiled with ``nogil``: the solver runs them on its own threads
(:mod:`bisvm.solvers.dual.working_set`).
"""

from __future__ import annotations

import math

import numpy as np

from ..._numba import njit

LINEAR, POLY, RBF, SIGMOID = 0, 1, 2, 3
TAU = 1e-12
# Cody–Waite split of log(2) for float32: LN2_HI has 9 significant bits, so k * LN2_HI is
# exact for |k| < 2**15 (Cephes' expf constants)
LN2_HI = np.float32(0.693359375)
LN2_LO = np.float32(-2.12194440e-4)
LOG2E = np.float32(1.44269504088896341)
#: 1.5 * 2**23: adding and subtracting it rounds a float32 to the nearest integer
ROUND = np.float32(12582912.0)
#: arguments of the exponential below this give 0 (float32 underflow)
EXP_FLOOR = np.float32(-87.0)
#: columns per chunk of the RBF transform (its scratch stays in the L1 cache)
CHUNK = 512


@njit
def _rbf_chunk(src, dst, sqn, sa, g, bits):
    r"""``dst[u] = exp(-g max(0, sa + sqn[u] - 2 src[u]))`` in float32 (a chunk of a row;
    ``dst`` must not overlap ``src``: with overlap, LLVM's runtime alias check takes the
    scalar loop instead of the vectorised one).

    :math:`e^v = 2^k e^r` with :math:`k = \mathrm{round}(v/\log 2)` (by the float32
    rounding constant :data:`ROUND`), :math:`r = v - k\log 2` (Cody–Waite) and
    :math:`e^r` by its Taylor polynomial of degree 7 (truncation below :math:`2\cdot
    10^{-8}` on :math:`|r| \le \tfrac12\log 2`); :math:`2^k` by writing the exponent field
    into ``bits``. Every operation vectorises (no libm call)."""
    two = np.float32(2.0)
    zero = np.float32(0.0)
    nb = src.shape[0]
    for u in range(nb):
        dist = sa + sqn[u] - two * src[u]
        v = -g * max(dist, zero)
        v = max(v, EXP_FLOOR)
        t = (v * LOG2E + ROUND) - ROUND
        r = (v - t * LN2_HI) - t * LN2_LO
        p = np.float32(1.0 / 5040.0)
        p = p * r + np.float32(1.0 / 720.0)
        p = p * r + np.float32(1.0 / 120.0)
        p = p * r + np.float32(1.0 / 24.0)
        p = p * r + np.float32(1.0 / 6.0)
        p = p * r + np.float32(0.5)
        p = p * r + np.float32(1.0)
        p = p * r + np.float32(1.0)
        dst[u] = p
        bits[u] = (np.int32(t) + np.int32(127)) << np.int32(23)
    scale = bits.view(np.float32)
    for u in range(nb):
        dst[u] *= scale[u]


@njit
def _transform_row(src, dst, sqn, sa, kcode, gamma, coef0, ideg, bits):
    """One row of kernel values from its inner products, ``src`` into ``dst`` (float32,
    the same length, not overlapping); ``sqn`` the squared norms of its columns."""
    if kcode == RBF:
        g = np.float32(gamma)
        w = src.shape[0]
        for u0 in range(0, w, CHUNK):
            u1 = min(w, u0 + CHUNK)
            _rbf_chunk(src[u0:u1], dst[u0:u1], sqn[u0:u1], sa, g, bits)
    elif kcode == POLY:
        for u in range(src.shape[0]):
            b = gamma * np.float64(src[u]) + coef0
            acc = 1.0
            for _ in range(ideg):
                acc *= b
            dst[u] = np.float32(acc)
    elif kcode == SIGMOID:
        for u in range(src.shape[0]):
            dst[u] = np.float32(math.tanh(gamma * np.float64(src[u]) + coef0))
    else:
        for u in range(src.shape[0]):
            dst[u] = src[u]


@njit
def transform_into(T, R, r0, c0, sq_rows, sqn, kcode, gamma, coef0, degree):
    r"""Kernel values of the inner products ``T`` (float32, :math:`m \times w`, a block of
    columns ``c0:c0 + w``) into ``R[r0:r0 + m, c0:c0 + w]``: RBF :math:`e^{-\gamma\max(0,
    \lVert x_a\rVert^2 + \lVert x_u\rVert^2 - 2T)}` (``sq_rows``, ``sqn``: float32 squared
    norms of the rows' and the columns' samples), poly :math:`(\gamma T + c_0)^p`, sigmoid
    :math:`\tanh(\gamma T + c_0)`, linear :math:`T`. The product is written to a small
    contiguous block that stays in the core's cache, and the rows are written once
    (a product written straight into the strided rows of ``R`` would leave the cache
    for every row)."""
    w = T.shape[1]
    bits = np.empty(CHUNK, dtype=np.int32)
    for a in range(T.shape[0]):
        _transform_row(T[a], R[r0 + a, c0:c0 + w], sqn[c0:c0 + w], sq_rows[a], kcode,
                       gamma, coef0, int(degree), bits)


@njit(inline="always")
def _in_up(y, a, c):
    return (y > 0 and a < c) or (y < 0 and a > 0.0)


@njit(inline="always")
def _in_low(y, a, c):
    return (y > 0 and a > 0.0) or (y < 0 and a < c)


@njit(inline="always")
def _worse(k1, i1, k2, i2):
    """Whether candidate ``(k1, i1)`` ranks below ``(k2, i2)``: a smaller key, or the same
    key and a larger index (a total order, so that the choice does not depend on how the
    variables were split over threads)."""
    return k1 < k2 or (k1 == k2 and i1 > i2)


@njit
def _offer(hk, hi, n, k, key, idx):
    """Offer ``(key, idx)`` to the ``k`` best candidates kept in the heap ``hk[:n]``,
    ``hi[:n]`` (its root the worst, :func:`_worse`); returns the new size. Most offers
    are turned away by one comparison with the root, a branch the CPU predicts.

    A full heap replaces its root and sifts the new entry down; a heap with room places
    it at the end and sifts it up. Either way the entries on the path move by one level
    and the new one lands in the hole left at ``j``."""
    if n == k:
        if not _worse(hk[0], hi[0], key, idx):
            return n
        j = 0
        while True:
            c = 2 * j + 1
            if c >= n:
                break
            if c + 1 < n and _worse(hk[c + 1], hi[c + 1], hk[c], hi[c]):
                c += 1
            if not _worse(hk[c], hi[c], key, idx):
                break
            hk[j] = hk[c]
            hi[j] = hi[c]
            j = c
    else:
        j = n
        n += 1
        while j > 0:
            par = (j - 1) >> 1
            if not _worse(key, idx, hk[par], hi[par]):
                break
            hk[j], hi[j] = hk[par], hi[par]
            j = par
    hk[j] = key
    hi[j] = idx
    return n


@njit
def update_and_scan(G, y, sample_index, d, add, alpha, upper, in_ws, k, lo, hi,
                    uk, ui, lk, li):
    r"""Variables ``lo:hi``: :math:`G_t \mathrel{+}= y_t d_{s_t}` (when ``add``), then
    their part of the selection. Returns ``(m, M, n_up, n_low)``: :math:`m = \max
    -y_tG_t` over :math:`I_{up}`, :math:`M = \min` over :math:`I_{low}` (every variable),
    and, among the variables not in the working set (``in_ws``), the ``k`` largest
    :math:`f = -y_tG_t` of :math:`I_{up}` (heap ``uk``, ``ui``) and the ``k`` smallest of
    :math:`I_{low}` (heap ``lk``, ``li`` of :math:`-f`); :func:`merge_selection` combines
    the ranges."""
    m = -np.inf
    M = np.inf
    # typed counters, not literals: one compiled _offer
    nu = np.int64(0)
    nl = np.int64(0)
    for t in range(lo, hi):
        g = G[t]
        if add:
            g += y[t] * d[sample_index[t]]
            G[t] = g
        f = -y[t] * g
        up = _in_up(y[t], alpha[t], upper[t])
        low = _in_low(y[t], alpha[t], upper[t])
        if up and f > m:
            m = f
        if low and f < M:
            M = f
        if in_ws[t]:
            continue
        # the root test here: most candidates stop at it, without a call
        if up and (nu < k or _worse(uk[0], ui[0], f, t)):
            nu = _offer(uk, ui, nu, k, f, t)
        if low and (nl < k or _worse(lk[0], li[0], -f, t)):
            nl = _offer(lk, li, nl, k, -f, t)
    return m, M, nu, nl


@njit
def _ranked(keys, idx, counts, bound, k):
    """The candidates of every range with ``key > bound``, best first (key, then index),
    at most ``k``."""
    total = 0
    for r in range(counts.shape[0]):
        total += counts[r]
    ck = np.empty(total)
    ci = np.empty(total, dtype=np.int64)
    c = 0
    for r in range(counts.shape[0]):
        for j in range(counts[r]):
            if keys[r, j] > bound:
                ck[c] = keys[r, j]
                ci[c] = idx[r, j]
                c += 1
    by_index = np.argsort(ci[:c])
    ck = ck[:c][by_index]
    ci = ci[:c][by_index]
    order = np.argsort(-ck, kind="mergesort")[:k]
    return ci[order]


@njit(inline="always")
def _take_next(cands, pos, in_ws, out, cnt):
    """Append the next candidate from ``cands[pos:]`` not yet chosen to ``out``; the new
    read position and count."""
    while pos < cands.shape[0]:
        t = cands[pos]
        pos += 1
        if not in_ws[t]:
            in_ws[t] = True
            out[cnt] = t
            return pos, cnt + 1
    return pos, cnt


@njit
def merge_selection(m, M, uk, ui, nus, lk, li, nls, in_ws, n_new, out):
    r"""New working-set members into ``out`` from the ranges' candidates
    (:func:`update_and_scan`); returns their count.

    With :math:`f_t = -y_tG_t`, the largest :math:`f` of :math:`I_{up}` and the smallest
    of :math:`I_{low}` are taken in turn (ThunderSVM's first-order rule), skipping
    variables that violate no pair (:math:`f_t \le M` in :math:`I_{up}`, :math:`f_t \ge
    m` in :math:`I_{low}`) and variables already taken, until ``n_new`` are chosen."""
    if n_new <= 0:
        return 0
    ups = _ranked(uk, ui, nus, M, n_new)
    lows = _ranked(lk, li, nls, -m, n_new)
    cnt = 0
    a = 0
    b = 0
    # a free variable is in both lists: marked in in_ws while chosen, unmarked after
    while cnt < n_new and (a < ups.shape[0] or b < lows.shape[0]):
        a, cnt = _take_next(ups, a, in_ws, out, cnt)
        if cnt >= n_new:
            break
        b, cnt = _take_next(lows, b, in_ws, out, cnt)
    for c in range(cnt):
        in_ws[out[c]] = False
    return cnt


@njit
def _first(v, target):
    """The first index of ``v`` equal to ``target``."""
    for k in range(v.shape[0]):
        if v[k] == target:
            return k
    return -1


@njit
def _status(yw, aw, cw, k, upo, lowo):
    r"""``upo[k]``, ``lowo[k]``: 0 when ``k`` is in :math:`I_{up}` (:math:`I_{low}`), else
    :math:`\mp\infty` (added to :math:`f` so that the searches need no branch)."""
    upo[k] = 0.0 if _in_up(yw[k], aw[k], cw[k]) else -np.inf
    lowo[k] = 0.0 if _in_low(yw[k], aw[k], cw[k]) else np.inf


@njit
def _pick_j(i, gmax, f, lowo, yw, Q, kd, gain):
    r"""LIBSVM's second-order choice of ``j`` for ``i``: ``(j, min_{I_low} f)``; ``j = -1``
    when no :math:`j \in I_{low}` has :math:`f_j < f_i`. The gains are computed for every
    member (masked by ``lowo``) so that the loop vectorises."""
    q = f.shape[0]
    yi = yw[i]
    qi = Q[i]
    kdi = kd[i]
    gmin = np.inf
    best = np.inf
    for b in range(q):
        fb = f[b] + lowo[b]
        gmin = min(gmin, fb)
        gd = gmax - fb
        # curvature of the pair along (y_i, -y_j): K_ii + K_jj - 2 K_ij (+ shifts)
        curv = kdi + kd[b] - 2.0 * yi * yw[b] * qi[b]
        curv = curv if curv > 0.0 else TAU
        g = -(gd * gd) / curv if gd > 0.0 else np.inf
        gain[b] = g
        best = min(best, g)
    if best == np.inf:
        return -1, gmin
    return _first(gain, best), gmin


@njit
def inner_smo(Q, kd, yw, aw, cw, Gw, tol, max_inner):
    r"""SMO on the working set: :math:`\min \tfrac12\alpha_W^\top Q_{WW}\alpha_W +
    G_W^\top\alpha_W` over the box with :math:`y_W^\top\alpha_W` fixed.

    ``Q`` is :math:`Q_{WW}` without the diagonal shift, ``kd`` its diagonal with the shift.
    The pair is LIBSVM's WSS 3 (:math:`i` the largest :math:`f = -y G` of :math:`I_{up}`,
    :math:`j` the second-order choice); each step moves :math:`\alpha_i \mathrel{+}= y_i
    t`, :math:`\alpha_j \mathrel{-}= y_j t` with :math:`t = \min(b/a, \text{box})`,
    :math:`b = f_i - f_j`, :math:`a` the pair's curvature. Stops when the local gap is at
    most :math:`\max(\text{tol}, \tfrac1{10}` the first local gap) (ThunderSVM's local
    rule) or after ``max_inner`` steps. ``aw`` and ``Gw`` are updated in place; returns
    the number of steps."""
    q = Gw.shape[0]
    f = np.empty(q)
    upo = np.empty(q)
    lowo = np.empty(q)
    gain = np.empty(q)
    for k in range(q):
        f[k] = -yw[k] * Gw[k]
        _status(yw, aw, cw, k, upo, lowo)
    eps = -1.0
    it = 0
    while it < max_inner:
        gmax = -np.inf
        for k in range(q):
            gmax = max(gmax, f[k] + upo[k])
        if gmax == -np.inf:
            break
        i = 0
        while f[i] + upo[i] != gmax:
            i += 1
        j, gmin = _pick_j(i, gmax, f, lowo, yw, Q, kd, gain)
        if eps < 0.0:
            eps = max(tol, 0.1 * (gmax - gmin))
        if j < 0 or gmax - gmin <= eps:
            break
        curv = kd[i] + kd[j] - 2.0 * yw[i] * yw[j] * Q[i, j]
        t = (f[i] - f[j]) / (curv if curv > 0.0 else TAU)
        # the box: alpha_i + y_i t and alpha_j - y_j t within [0, C]
        lim_i = cw[i] - aw[i] if yw[i] > 0 else aw[i]
        lim_j = aw[j] if yw[j] > 0 else cw[j] - aw[j]
        t = min(t, lim_i, lim_j)
        if not t > 0.0:
            break
        da_i = yw[i] * t
        da_j = -yw[j] * t
        aw[i] += da_i
        aw[j] += da_j
        # snap to the bounds the step was clipped at (no 1e-17 residues)
        if t == lim_i:
            aw[i] = cw[i] if yw[i] > 0 else 0.0
        if t == lim_j:
            aw[j] = 0.0 if yw[j] > 0 else cw[j]
        # G_k += Q_ki da_i + Q_kj da_j (Q symmetric: its contiguous rows i and j)
        qi = Q[i]
        qj = Q[j]
        for k in range(q):
            g = Gw[k] + (qi[k] * da_i + qj[k] * da_j)
            Gw[k] = g
            f[k] = -yw[k] * g
        Gw[i] += (kd[i] - Q[i, i]) * da_i
        Gw[j] += (kd[j] - Q[j, j]) * da_j
        f[i] = -yw[i] * Gw[i]
        f[j] = -yw[j] * Gw[j]
        _status(yw, aw, cw, i, upo, lowo)
        _status(yw, aw, cw, j, upo, lowo)
        it += 1
    return it


@njit
def build_q(Kw, var, sample_index, y, kdiag, shift, Q, kd, lo, hi):
    r"""Rows ``lo:hi`` of :math:`Q_{ab} = y_ay_b\,k(x_{s_a}, x_{s_b})` on the working set
    ``var`` from its float32 kernel block ``Kw``, with the exact diagonal
    :math:`k(x_s, x_s)` (plus the shift in ``kd``)."""
    q = var.shape[0]
    yv = np.empty(q)
    for b in range(q):
        yv[b] = y[var[b]]
    for a in range(lo, hi):
        ya = yv[a]
        ka = Kw[a]
        qa = Q[a]
        for b in range(q):
            qa[b] = ya * yv[b] * np.float64(ka[b])
        s = sample_index[var[a]]
        qa[a] = kdiag[s]
        kd[a] = kdiag[s] + shift[var[a]]


@njit
def column_sums(R, rows, c, nz, out, u0, u1):
    """``out[u0:u1] = sum_k c[k] R[rows[k], u0:u1]`` over ``k < nz`` in float64 (eight
    rows per pass over the range; one range per thread). The rows are sliced so that the
    loop vectorises (offset indices defeat the vectoriser)."""
    acc = np.zeros(u1 - u0)
    w = u1 - u0
    k = 0
    while k + 8 <= nz:
        r0 = R[rows[k]][u0:u1]
        r1 = R[rows[k + 1]][u0:u1]
        r2 = R[rows[k + 2]][u0:u1]
        r3 = R[rows[k + 3]][u0:u1]
        r4 = R[rows[k + 4]][u0:u1]
        r5 = R[rows[k + 5]][u0:u1]
        r6 = R[rows[k + 6]][u0:u1]
        r7 = R[rows[k + 7]][u0:u1]
        c0, c1, c2, c3 = c[k], c[k + 1], c[k + 2], c[k + 3]
        c4, c5, c6, c7 = c[k + 4], c[k + 5], c[k + 6], c[k + 7]
        for u in range(w):
            acc[u] += (((c0 * np.float64(r0[u]) + c1 * np.float64(r1[u]))
                        + (c2 * np.float64(r2[u]) + c3 * np.float64(r3[u])))
                       + ((c4 * np.float64(r4[u]) + c5 * np.float64(r5[u]))
                          + (c6 * np.float64(r6[u]) + c7 * np.float64(r7[u]))))
        k += 8
    while k < nz:
        rk = R[rows[k]][u0:u1]
        ck = c[k]
        for u in range(w):
            acc[u] += ck * np.float64(rk[u])
        k += 1
    out[u0:u1] = acc


@njit
def moved(rows, var, delta, y):
    r"""``(rows, c, nz)``: the rows of the members that moved and their
    :math:`y_a\Delta\alpha_a`."""
    q = var.shape[0]
    nz_rows = np.empty(q, dtype=np.int64)
    c = np.empty(q)
    nz = 0
    for a in range(q):
        if delta[a] != 0.0:
            nz_rows[nz] = rows[a]
            c[nz] = y[var[a]] * delta[a]
            nz += 1
    return nz_rows, c, nz
