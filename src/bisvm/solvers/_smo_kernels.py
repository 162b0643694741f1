r"""Compiled hot loops of the SMO solver (see :mod:`bisvm.solvers.smo` for the problem).

Everything that runs once per SMO iteration lives here, in module-level numba functions
that work in place on explicit arrays: kernel-column evaluation, the LRU column cache,
working-set selection, the analytic two-variable step, the gradient update over the active
set, shrinking and gradient reconstruction. :func:`smo_solve` runs the whole loop in one
call, so Python is entered once per solve, not once per iteration.

Variables ``t = 0..l-1`` of the dual are attached to samples ``sidx[t]`` with signs
``y[t] = ±1``; the Hessian is

.. math:: Q_{tu} = y_t y_u k(x_{s_t}, x_{s_u}) + \delta_{tu}\,\mathrm{shift}_t,

so the cache holds *unsigned* kernel columns per sample and ε-SVR's two variables per
sample share one column.

Cache layout. A column holds :math:`k(x_s, x_{a_q})` for the *active samples*
:math:`a_0 < a_1 < \dots < a_{W-1}` only (the samples of the unshrunk variables), packed
in one flat pool of ``cache_size`` bytes: slot ``k`` is ``pool[k W:(k+1) W]``. When
shrinking removes samples, every cached column is compacted in place and the freed room
becomes new slots, so the cache holds more columns as the active set shrinks (LIBSVM
obtains the same effect by swapping indices). When the active set grows back (before the
final optimality check) the cache is emptied. Shrunk variables' gradients are rebuilt
from scratch, :math:`G_t = p_t + y_t\sum_{s} c_s k(x_{s_t}, x_s) + \mathrm{shift}_t
\alpha_t` with :math:`c_s = \sum_{u:s_u = s}\alpha_u y_u`, by blocked matrix products
(BLAS) over the support vectors, which replaces LIBSVM's :math:`\bar G` bookkeeping and its
full-length column per bound change.
"""

from __future__ import annotations

import math

import numpy as np

from bisvm._numba import njit

LOWER, UPPER, FREE = 0, 1, 2
TAU = 1e-12
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
def _from_dot(kcode, dot, sq_a, sq_b, same, gamma, coef0, degree):
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
def fill_column(out, s, targets, n_targets, X, sqn, kcode, gamma, coef0, degree):
    """``out[q] = k(x_s, x_{targets[q]})`` for ``q < n_targets`` (compact order).

    NumPy equivalent: ``out[:m] = kernel(X[s:s+1], X[targets[:m]])[0]``. For
    ``PRECOMPUTED`` ``X`` is the symmetric Gram matrix and the column is read from row s.
    """
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
        out[q] = _from_dot(kcode, dot, sq_s, sqn[j], j == s, gamma, coef0, degree)


@njit
def kernel_matvec(rows, n_rows, cols, coef, X, sqn, kcode, gamma, coef0, degree, out):
    """``out[r] = sum_c coef[c] k(x_{rows[r]}, x_{cols[c]})`` by blocks of BLAS products.

    NumPy equivalent: ``out[:n_rows] = kernel(X[rows[:n_rows]], X[cols]) @ coef``.
    """
    m = cols.shape[0]
    for r in range(n_rows):
        out[r] = 0.0
    if m == 0 or n_rows == 0:
        return
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
                acc += coef[c] * _from_dot(kcode, D[r, c], sqn[sr], sqn[sc], sr == sc, gamma,
                                           coef0, degree)
            out[r0 + r] = acc


@njit
def get_column(s, pool, W, n_slots, slot_of, owner, stamp, ctr, act_s, X, sqn, kcode, gamma,
               coef0, degree):
    """Slot of the (active-sample) kernel column of sample ``s``, computed on a miss with
    least-recently-used eviction. ``ctr = [clock, unused, n_computed_columns]``."""
    ctr[0] += 1
    slot = slot_of[s]
    if slot >= 0:
        stamp[slot] = ctr[0]
        return slot
    best = 0
    best_stamp = stamp[0]
    for k in range(n_slots):
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
    fill_column(pool[best * W:(best + 1) * W], s, act_s, W, X, sqn, kcode, gamma, coef0,
                degree)
    ctr[2] += 1
    stamp[best] = ctr[0]
    return best


@njit
def _status(a, c):
    if a >= c:
        return UPPER
    if a <= 0.0:
        return LOWER
    return FREE


@njit(inline="always")
def _flags(st, yt):
    """Bit 1: t is in I_up (can move along +y_t); bit 2: t is in I_low."""
    if st == FREE:
        return 3
    if (st == LOWER) == (yt > 0):
        return 1
    return 2


@njit
def _clear_cache(slot_of, owner):
    for k in range(owner.shape[0]):
        if owner[k] >= 0:
            slot_of[owner[k]] = -1
            owner[k] = -1


@njit
def _gradient_from_scratch(which, X, sqn, kcode, gamma, coef0, degree, sidx, y, p, shift,
                           alpha, G):
    r"""``G_t = p_t + y_t \sum_s c_s k(x_{s_t}, x_s) + shift_t alpha_t`` for ``which[t]``."""
    n = X.shape[0]
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
    kernel_matvec(rows, n_rows, cols, coef, X, sqn, kcode, gamma, coef0, degree, v)
    row_of = np.full(n, -1, dtype=np.int64)
    for r in range(n_rows):
        row_of[rows[r]] = r
    for t in range(l):
        if which[t]:
            G[t] = p[t] + y[t] * v[row_of[sidx[t]]] + shift[t] * alpha[t]


@njit
def _set_active_samples(active, n_active, sidx, s_mark, act_s, pos_of):
    """``act_s`` = sorted samples with an active variable, ``pos_of`` their positions."""
    n = s_mark.shape[0]
    for s in range(n):
        s_mark[s] = False
        pos_of[s] = -1
    for k in range(n_active):
        s_mark[sidx[active[k]]] = True
    m = 0
    for s in range(n):
        if s_mark[s]:
            act_s[m] = s
            pos_of[s] = m
            m += 1
    return m


@njit
def _select(second_order, ya, Ga, qa, fa, pa, n_active, va, sidx, pool, W, n_slots, slot_of,
            owner, stamp, ctr, act_s, X, sqn, kcode, gamma, coef0, degree, tol, pre_k,
            pre_gmax):
    r"""Working-set selection on the compact active arrays; returns
    ``(ki, kj, gap, slot_i)`` (compact positions) with ``kj = -1`` at optimality.

    ``i`` maximises :math:`-y_tG_t` over :math:`I_{up}`; ``j`` either minimises it over
    :math:`I_{low}` (maximal violating pair, seed 002 §4.4.2) or minimises the second-order
    decrease :math:`-(m + y_tG_t)^2 / a_{it}` over the violators (LIBSVM's rule). ``gap`` is
    :math:`m(\alpha) - M(\alpha)` over the active set. ``pre_k >= -1`` passes an ``i``
    already found during the gradient update; ``pre_k = -2`` searches for it here.
    """
    gmax = pre_gmax
    ki = pre_k
    if pre_k == -2:
        gmax = -np.inf
        ki = -1
        for k in range(n_active):
            if fa[k] & 1:
                v = -ya[k] * Ga[k]
                if v >= gmax:
                    gmax = v
                    ki = k
    slot_i = -1
    if second_order and ki >= 0:
        slot_i = get_column(sidx[va[ki]], pool, W, n_slots, slot_of, owner, stamp, ctr, act_s,
                            X, sqn, kcode, gamma, coef0, degree)
    gmax2 = -np.inf
    kj = -1
    best = np.inf
    if ki >= 0:
        qd_i = qa[ki]
        base = max(slot_i, 0) * W
        for k in range(n_active):
            if not (fa[k] & 2):
                continue
            yg = ya[k] * Ga[k]
            if yg >= gmax2:
                gmax2 = yg
                if not second_order:
                    kj = k
            if second_order:
                gd = gmax + yg
                if gd > 0.0:
                    a = qd_i + qa[k] - 2.0 * pool[base + pa[k]]
                    if a <= 0.0:
                        a = TAU
                    obj = -(gd * gd) / a
                    if obj <= best:
                        best = obj
                        kj = k
    gap = gmax + gmax2
    if ki < 0 or kj < 0 or gap < tol:
        return ki, -1, gap, slot_i
    return ki, kj, gap, slot_i


@njit
def _compact(active, n_active, y, G, QD, flags, apos, ya, Ga, qa, fa, pa, va):
    """Copy the active variables' data into contiguous arrays (LIBSVM keeps them in place
    by swapping; copies are simpler and cost O(l) per shrink)."""
    for k in range(n_active):
        t = active[k]
        va[k] = t
        ya[k] = y[t]
        Ga[k] = G[t]
        qa[k] = QD[t]
        fa[k] = flags[t]
        pa[k] = apos[t]


@njit
def _scatter(n_active, va, Ga, G):
    for k in range(n_active):
        G[va[k]] = Ga[k]


@njit
def smo_solve(X, sqn, kdiag, kcode, gamma, coef0, degree, sidx, y, p, C, shift, alpha, G,
              pool, tol, second_order, shrinking, max_iter, out_stats):
    r"""Solve :math:`\min_\alpha \tfrac12\alpha^\top Q\alpha + p^\top\alpha` s.t.
    :math:`y^\top\alpha = \text{const}`, :math:`0 \le \alpha_t \le C_t` by SMO.

    ``alpha`` holds a feasible start and is overwritten by the solution; ``G`` receives
    the gradient :math:`Q\alpha + p`; ``pool`` is the column cache (its size is the cache
    budget). ``out_stats`` receives ``[n_iter, converged, gap, rho, n_columns_computed,
    mean_active_size]``. While iterating, the active variables' signs, gradients,
    diagonal, flags and column positions live in contiguous copies (``ya, Ga, qa, fa,
    pa``; ``va`` maps back), written back to ``G`` whenever the active set changes.
    """
    n = X.shape[0]
    l = y.shape[0]
    P = pool.shape[0]
    slot_of = np.full(n, -1, dtype=np.int64)
    owner = np.full(n, -1, dtype=np.int64)
    stamp = np.zeros(n, dtype=np.int64)
    ctr = np.zeros(3, dtype=np.int64)
    act_s = np.arange(n)
    pos_of = np.arange(n)
    old_pos = np.empty(n, dtype=np.int64)
    s_mark = np.zeros(n, dtype=np.bool_)
    W = n
    n_slots = min(n, P // max(W, 1))

    QD = np.empty(l)
    status = np.empty(l, dtype=np.int8)
    flags = np.empty(l, dtype=np.int8)
    apos = np.empty(l, dtype=np.int64)
    for t in range(l):
        QD[t] = kdiag[sidx[t]] + shift[t]
        status[t] = _status(alpha[t], C[t])
        flags[t] = _flags(status[t], y[t])
        apos[t] = sidx[t]
    active = np.arange(l)
    n_active = l
    is_active = np.ones(l, dtype=np.bool_)
    ya = np.empty(l)
    Ga = np.empty(l)
    qa = np.empty(l)
    fa = np.empty(l, dtype=np.int8)
    pa = np.empty(l, dtype=np.int64)
    va = np.empty(l, dtype=np.int64)

    # ---- initial gradient G = p + Q alpha
    any_pos = False
    for t in range(l):
        G[t] = p[t]
        if alpha[t] > 0.0:
            any_pos = True
    if any_pos:
        _gradient_from_scratch(is_active, X, sqn, kcode, gamma, coef0, degree, sidx, y, p,
                               shift, alpha, G)
    _compact(active, n_active, y, G, QD, flags, apos, ya, Ga, qa, fa, pa, va)

    n_iter = 0
    counter = min(l, 1000) + 1
    unshrunk = False
    converged = False
    gap = np.inf
    sum_active = 0.0
    next_k = -2  # compact position of the next i when found during the gradient update
    next_gmax = 0.0
    while max_iter < 0 or n_iter < max_iter:
        counter -= 1
        if counter == 0:
            counter = min(l, 1000)
            next_k = -2
            if shrinking:
                # ---- shrinking: drop bounded variables that cannot enter a violating pair
                gmax1 = -np.inf
                gmax2 = -np.inf
                for k in range(n_active):
                    yg = ya[k] * Ga[k]
                    if fa[k] & 1 and -yg >= gmax1:
                        gmax1 = -yg
                    if fa[k] & 2 and yg >= gmax2:
                        gmax2 = yg
                _scatter(n_active, va, Ga, G)
                stale = False
                if not unshrunk and gmax1 + gmax2 <= tol * 10.0:
                    unshrunk = True
                    if n_active < l:
                        # every variable back, the cache still in the old layout: the
                        # shrink below usually keeps a subset of the old active samples,
                        # so the cached columns can be compacted instead of recomputed
                        _rebuild_shrunk(X, sqn, kcode, gamma, coef0, degree, sidx, y, p,
                                        shift, alpha, G, is_active)
                        for t in range(l):
                            active[t] = t
                            is_active[t] = True
                        n_active = l
                        stale = True
                m = 0
                for k in range(n_active):
                    t = active[k]
                    shrink = False
                    if status[t] != FREE:
                        yg = y[t] * G[t]
                        if flags[t] & 1:  # only in I_up: useless if -yG < M
                            shrink = -yg < -gmax2
                        else:  # only in I_low: useless if -yG > m
                            shrink = -yg > gmax1
                    if shrink:
                        is_active[t] = False
                    else:
                        active[m] = t
                        m += 1
                if m < n_active or stale:
                    n_active = m
                    for s in range(n):
                        old_pos[s] = pos_of[s]
                    W_new = _set_active_samples(active, n_active, sidx, s_mark, act_s, pos_of)
                    subset = True
                    for q in range(W_new):
                        if old_pos[act_s[q]] < 0:
                            subset = False
                            break
                    if not subset:
                        _clear_cache(slot_of, owner)
                    elif W_new < W:
                        # compact every cached column in place (forward copy is safe:
                        # new offsets never pass the old ones)
                        for k in range(n_slots):
                            if owner[k] < 0:
                                continue
                            ob = k * W
                            nb = k * W_new
                            for q in range(W_new):
                                pool[nb + q] = pool[ob + old_pos[act_s[q]]]
                    W = W_new
                    n_slots = min(n, P // max(W, 1))
                    for k in range(n_active):
                        t = active[k]
                        apos[t] = pos_of[sidx[t]]
                _compact(active, n_active, y, G, QD, flags, apos, ya, Ga, qa, fa, pa, va)

        # ---- working-set selection
        ki, kj, gap, slot_i = _select(second_order, ya, Ga, qa, fa, pa, n_active, va, sidx,
                                      pool, W, n_slots, slot_of, owner, stamp, ctr, act_s, X,
                                      sqn, kcode, gamma, coef0, degree, tol, next_k,
                                      next_gmax)
        if kj < 0:
            if n_active < l:
                _scatter(n_active, va, Ga, G)
                n_active, W = _grow(X, sqn, kcode, gamma, coef0, degree, sidx, y, p, shift,
                                    alpha, G, active, is_active, act_s, pos_of, apos, slot_of,
                                    owner)
                n_slots = min(n, P // max(W, 1))
                _compact(active, n_active, y, G, QD, flags, apos, ya, Ga, qa, fa, pa, va)
                ki, kj, gap, slot_i = _select(second_order, ya, Ga, qa, fa, pa, n_active, va,
                                              sidx, pool, W, n_slots, slot_of, owner, stamp,
                                              ctr, act_s, X, sqn, kcode, gamma, coef0, degree,
                                              tol, -2, 0.0)
                if kj < 0:
                    converged = True
                    break
                counter = 1  # shrink again at the next iteration
            else:
                converged = True
                break

        n_iter += 1
        sum_active += n_active
        i = va[ki]
        j = va[kj]
        si = sidx[i]
        sj = sidx[j]
        if slot_i < 0 or owner[slot_i] != si:
            slot_i = get_column(si, pool, W, n_slots, slot_of, owner, stamp, ctr, act_s, X,
                                sqn, kcode, gamma, coef0, degree)
        slot_j = get_column(sj, pool, W, n_slots, slot_of, owner, stamp, ctr, act_s, X, sqn,
                            kcode, gamma, coef0, degree)
        if owner[slot_i] != si:  # evicted by j's fetch (only with a one-slot cache)
            slot_i = get_column(si, pool, W, n_slots, slot_of, owner, stamp, ctr, act_s, X,
                                sqn, kcode, gamma, coef0, degree)
        bi_ = slot_i * W
        bj_ = slot_j * W

        # ---- analytic two-variable step: alpha_i += y_i d, alpha_j -= y_j d, d >= 0
        a = qa[ki] + qa[kj] - 2.0 * pool[bi_ + pa[kj]]
        if a <= 0.0:
            a = TAU
        yi = ya[ki]
        yj = ya[kj]
        d = (-yi * Ga[ki] + yj * Ga[kj]) / a
        bi = C[i] - alpha[i] if yi > 0 else alpha[i]
        bj = alpha[j] if yj > 0 else C[j] - alpha[j]
        old_ai = alpha[i]
        old_aj = alpha[j]
        if d >= bi or d >= bj:
            if bi <= bj:
                d = bi
                new_ai = C[i] if yi > 0 else 0.0
                new_aj = old_aj - yj * d
                if bi == bj:
                    new_aj = 0.0 if yj > 0 else C[j]
            else:
                d = bj
                new_aj = 0.0 if yj > 0 else C[j]
                new_ai = old_ai + yi * d
        else:
            new_ai = old_ai + yi * d
            new_aj = old_aj - yj * d
        if new_ai < 0.0:
            new_ai = 0.0
        if new_aj < 0.0:
            new_aj = 0.0
        alpha[i] = new_ai
        alpha[j] = new_aj
        dai = (new_ai - old_ai) * yi
        daj = (new_aj - old_aj) * yj
        status[i] = _status(new_ai, C[i])
        flags[i] = _flags(status[i], yi)
        fa[ki] = flags[i]
        status[j] = _status(new_aj, C[j])
        flags[j] = _flags(status[j], yj)
        fa[kj] = flags[j]

        # ---- gradient update over the active set, G += Q_{:i} da_i + Q_{:j} da_j, fused
        # with the search for the next i = argmax_{I_up} -y_t G_t
        Ga[ki] += shift[i] * (new_ai - old_ai)
        Ga[kj] += shift[j] * (new_aj - old_aj)
        gmax_n = -np.inf
        k_n = -1
        for k in range(n_active):
            q = pa[k]
            yk = ya[k]
            g = Ga[k] + yk * (dai * pool[bi_ + q] + daj * pool[bj_ + q])
            Ga[k] = g
            if fa[k] & 1:
                v = -yk * g
                if v >= gmax_n:
                    gmax_n = v
                    k_n = k
        next_k = k_n
        next_gmax = gmax_n

    _scatter(n_active, va, Ga, G)
    if n_active < l:
        n_active, W = _grow(X, sqn, kcode, gamma, coef0, degree, sidx, y, p, shift, alpha, G,
                            active, is_active, act_s, pos_of, apos, slot_of, owner)

    # ---- bias: average of y_t G_t over free variables, LIBSVM's midpoint otherwise
    ub = np.inf
    lb = -np.inf
    n_free = 0
    sum_free = 0.0
    for t in range(l):
        yg = y[t] * G[t]
        if status[t] == UPPER:
            if y[t] < 0:
                ub = min(ub, yg)
            else:
                lb = max(lb, yg)
        elif status[t] == LOWER:
            if y[t] > 0:
                ub = min(ub, yg)
            else:
                lb = max(lb, yg)
        else:
            n_free += 1
            sum_free += yg
    if n_free > 0:
        rho = sum_free / n_free
    else:
        rho = 0.5 * (ub + lb)
        if not np.isfinite(rho):
            rho = ub if np.isfinite(ub) else (lb if np.isfinite(lb) else 0.0)

    out_stats[0] = n_iter
    out_stats[1] = 1.0 if converged else 0.0
    out_stats[2] = gap
    out_stats[3] = rho
    out_stats[4] = ctr[2]
    out_stats[5] = sum_active / max(n_iter, 1)


@njit
def _rebuild_shrunk(X, sqn, kcode, gamma, coef0, degree, sidx, y, p, shift, alpha, G,
                    is_active):
    """Recompute the gradient of every shrunk variable from scratch."""
    l = y.shape[0]
    inactive = np.empty(l, dtype=np.bool_)
    for t in range(l):
        inactive[t] = not is_active[t]
    _gradient_from_scratch(inactive, X, sqn, kcode, gamma, coef0, degree, sidx, y, p, shift,
                           alpha, G)


@njit
def _grow(X, sqn, kcode, gamma, coef0, degree, sidx, y, p, shift, alpha, G, active,
          is_active, act_s, pos_of, apos, slot_of, owner):
    """Rebuild the shrunk variables' gradients, make every variable active again and
    empty the cache (its columns cover only the old active samples). Returns
    ``(n_active, W)``."""
    l = y.shape[0]
    n = X.shape[0]
    _rebuild_shrunk(X, sqn, kcode, gamma, coef0, degree, sidx, y, p, shift, alpha, G,
                    is_active)
    for t in range(l):
        active[t] = t
        is_active[t] = True
        apos[t] = sidx[t]
    for s in range(n):
        act_s[s] = s
        pos_of[s] = s
    _clear_cache(slot_of, owner)
    return l, n
