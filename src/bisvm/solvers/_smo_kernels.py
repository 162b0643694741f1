r"""Compiled hot loops of the SMO solver (see :mod:`bisvm.solvers.smo` for the problem).

Everything that runs once per SMO iteration lives here, in module-level numba functions
that work in place on explicit arrays: kernel-column evaluation, the LRU column cache,
working-set selection, the analytic two-variable step, the gradient update over the active
set, shrinking and gradient reconstruction. :func:`smo_solve` runs the whole loop in one
call, so Python is entered once per solve, not once per iteration.

Variables ``t = 0..l-1`` of the dual are attached to samples ``sidx[t]`` with signs
``y[t] = ±1``; the Hessian is

.. math:: Q_{tu} = y_t y_u k(x_{s_t}, x_{s_u}) + \delta_{tu}\,\mathrm{shift}_t,

so the cache holds *unsigned* kernel columns per sample (length ``n``, float32 or float64)
and ε-SVR's two variables per sample share one column.
"""

from __future__ import annotations

import math

import numpy as np

from bisvm._numba import njit

LOWER, UPPER, FREE = 0, 1, 2
TAU = 1e-12

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


@njit(fastmath=True)
def fill_column(out, s, targets, n_targets, X, sqn, kcode, gamma, coef0, degree):
    """``out[j] = k(x_s, x_j)`` for ``j`` in ``targets[:n_targets]``.

    NumPy equivalent: ``out[T] = kernel(X[s:s+1], X[T])[0]``. For ``PRECOMPUTED`` ``X`` is
    the (symmetric) Gram matrix and the column is its row ``s``.
    """
    d = X.shape[1]
    xs = X[s]
    if kcode == PRECOMPUTED:
        for k in range(n_targets):
            j = targets[k]
            out[j] = X[s, j]
        return
    if kcode == LAPLACIAN:
        for k in range(n_targets):
            j = targets[k]
            xj = X[j]
            acc = 0.0
            for f in range(d):
                acc += abs(xs[f] - xj[f])
            out[j] = math.exp(-gamma * acc)
        return
    sq_s = sqn[s]
    for k in range(n_targets):
        j = targets[k]
        xj = X[j]
        dot = 0.0
        for f in range(d):
            dot += xs[f] * xj[f]
        if kcode == RBF:
            dist = sq_s + sqn[j] - 2.0 * dot
            if dist < 0.0 or j == s:
                dist = 0.0
            out[j] = math.exp(-gamma * dist)
        elif kcode == LINEAR:
            out[j] = dot
        elif kcode == POLY:
            out[j] = _ipow(gamma * dot + coef0, degree)
        else:
            out[j] = math.tanh(gamma * dot + coef0)


@njit
def get_column(s, need_full, cache, slot_of, owner, stamp, full, epoch_of, ctr, act_s, n_act_s,
               all_s, X, sqn, kcode, gamma, coef0, degree):
    """Slot of the kernel column of sample ``s`` in ``cache``, computing it on a miss.

    A column is valid for every sample if ``full[slot]``; otherwise it holds the entries
    of the samples active when it was computed, which stays valid until the active set
    grows again (``epoch`` bump). Eviction is least-recently-used. ``ctr = [clock, epoch,
    n_computed_columns]``.
    """
    n = slot_of.shape[0]
    ctr[0] += 1
    slot = slot_of[s]
    if slot >= 0:
        if full[slot] or (not need_full and epoch_of[slot] == ctr[1]):
            stamp[slot] = ctr[0]
            return slot
    else:
        # evict the least recently used slot
        n_slots = owner.shape[0]
        best = 0
        best_stamp = stamp[0]
        for k in range(n_slots):
            if owner[k] < 0:
                best = k
                break
            if stamp[k] < best_stamp:
                best_stamp = stamp[k]
                best = k
        slot = best
        if owner[slot] >= 0:
            slot_of[owner[slot]] = -1
        owner[slot] = s
        slot_of[s] = slot
    ctr[2] += 1
    if need_full or n_act_s == n:
        fill_column(cache[slot], s, all_s, n, X, sqn, kcode, gamma, coef0, degree)
        full[slot] = True
    else:
        fill_column(cache[slot], s, act_s, n_act_s, X, sqn, kcode, gamma, coef0, degree)
        full[slot] = False
    epoch_of[slot] = ctr[1]
    stamp[slot] = ctr[0]
    return slot


@njit
def _status(a, c):
    if a >= c:
        return UPPER
    if a <= 0.0:
        return LOWER
    return FREE


@njit
def _rebuild_active_samples(active, n_active, sidx, s_mark, act_s):
    """List the samples with at least one active variable (``act_s``); returns the count."""
    n = s_mark.shape[0]
    for s in range(n):
        s_mark[s] = False
    for k in range(n_active):
        s_mark[sidx[active[k]]] = True
    m = 0
    for s in range(n):
        if s_mark[s]:
            act_s[m] = s
            m += 1
    return m


@njit
def smo_solve(X, sqn, kdiag, kcode, gamma, coef0, degree,
              sidx, y, p, C, shift, alpha, G, G_bar,
              cache, slot_of, prefilled,
              tol, second_order, shrinking, max_iter, out_stats):
    r"""Solve :math:`\min_\alpha \tfrac12\alpha^\top Q\alpha + p^\top\alpha` s.t.
    :math:`y^\top\alpha = \text{const}`, :math:`0 \le \alpha_t \le C_t` by SMO.

    ``alpha`` holds a feasible start and is overwritten by the solution; ``G`` receives
    the gradient :math:`Q\alpha + p` and ``G_bar`` :math:`\sum_{u:\alpha_u = C_u} C_u Q_{:u}`.
    ``out_stats`` receives ``[n_iter, converged, gap, rho, n_columns_computed,
    mean_active_size]``.
    """
    n = X.shape[0]
    l = y.shape[0]
    n_slots = cache.shape[0]
    owner = np.full(n_slots, -1, dtype=np.int64)
    stamp = np.zeros(n_slots, dtype=np.int64)
    full = np.zeros(n_slots, dtype=np.bool_)
    epoch_of = np.zeros(n_slots, dtype=np.int64)
    ctr = np.zeros(3, dtype=np.int64)
    if prefilled:
        for s in range(n):
            owner[s] = s
            slot_of[s] = s
            full[s] = True
    all_s = np.arange(n)
    act_s = np.arange(n)
    n_act_s = n
    s_mark = np.zeros(n, dtype=np.bool_)

    QD = np.empty(l)
    status = np.empty(l, dtype=np.int8)
    for t in range(l):
        QD[t] = kdiag[sidx[t]] + shift[t]
        status[t] = _status(alpha[t], C[t])

    active = np.arange(l)
    n_active = l

    # ---- initial gradient G = p + Q alpha, G_bar = sum_{upper} C_u Q_{:u}
    for t in range(l):
        G[t] = p[t]
        G_bar[t] = 0.0
    for u in range(l):
        if alpha[u] > 0.0:
            slot = get_column(sidx[u], True, cache, slot_of, owner, stamp, full, epoch_of, ctr,
                              act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0, degree)
            col = cache[slot]
            au = alpha[u]
            yu = y[u]
            for t in range(l):
                G[t] += au * y[t] * yu * col[sidx[t]]
            G[u] += au * shift[u]
            if status[u] == UPPER:
                cu = C[u]
                for t in range(l):
                    G_bar[t] += cu * y[t] * yu * col[sidx[t]]
                G_bar[u] += cu * shift[u]

    n_iter = 0
    counter = min(l, 1000) + 1
    unshrunk = False
    converged = False
    gap = np.inf
    is_active = np.ones(l, dtype=np.bool_)

    sum_active = 0.0
    next_i = -2  # i of the next selection when found during the gradient update
    next_gmax = 0.0
    while max_iter < 0 or n_iter < max_iter:
        counter -= 1
        if counter == 0:
            counter = min(l, 1000)
            next_i = -2
            if shrinking:
                # ---- shrinking: drop bounded variables that cannot enter a violating pair
                gmax1 = -np.inf
                gmax2 = -np.inf
                for k in range(n_active):
                    t = active[k]
                    if y[t] > 0:
                        if status[t] != UPPER and -G[t] >= gmax1:
                            gmax1 = -G[t]
                        if status[t] != LOWER and G[t] >= gmax2:
                            gmax2 = G[t]
                    else:
                        if status[t] != UPPER and -G[t] >= gmax2:
                            gmax2 = -G[t]
                        if status[t] != LOWER and G[t] >= gmax1:
                            gmax1 = G[t]
                if not unshrunk and gmax1 + gmax2 <= tol * 10.0:
                    unshrunk = True
                    n_active, n_act_s = _reconstruct(
                        X, sqn, kcode, gamma, coef0, degree, sidx, y, p, alpha, G, G_bar, status,
                        active, n_active, is_active, cache, slot_of, owner, stamp, full, epoch_of,
                        ctr, act_s, n_act_s, all_s)
                m = 0
                for k in range(n_active):
                    t = active[k]
                    st = status[t]
                    shrink = False
                    if st == UPPER:
                        if y[t] > 0:
                            shrink = -G[t] > gmax1
                        else:
                            shrink = -G[t] > gmax2
                    elif st == LOWER:
                        if y[t] > 0:
                            shrink = G[t] > gmax2
                        else:
                            shrink = G[t] > gmax1
                    if shrink:
                        is_active[t] = False
                    else:
                        active[m] = t
                        m += 1
                if m < n_active:
                    n_active = m
                    n_act_s = _rebuild_active_samples(active, n_active, sidx, s_mark, act_s)

        # ---- working-set selection
        i, j, gap, slot_i = _select(second_order, y, G, QD, status, active, n_active, sidx,
                                    cache, slot_of, owner, stamp, full, epoch_of, ctr, act_s,
                                    n_act_s, all_s, X, sqn, kcode, gamma, coef0, degree, tol,
                                    next_i, next_gmax)
        if j < 0:
            if n_active < l:
                n_active, n_act_s = _reconstruct(
                    X, sqn, kcode, gamma, coef0, degree, sidx, y, p, alpha, G, G_bar, status,
                    active, n_active, is_active, cache, slot_of, owner, stamp, full, epoch_of,
                    ctr, act_s, n_act_s, all_s)
                i, j, gap, slot_i = _select(second_order, y, G, QD, status, active, n_active,
                                            sidx, cache, slot_of, owner, stamp, full, epoch_of,
                                            ctr, act_s, n_act_s, all_s, X, sqn, kcode, gamma,
                                            coef0, degree, tol, -2, 0.0)
                if j < 0:
                    converged = True
                    break
                counter = 1  # shrink again at the next iteration
            else:
                converged = True
                break

        n_iter += 1
        sum_active += n_active
        si = sidx[i]
        sj = sidx[j]
        if slot_i < 0 or owner[slot_i] != si:
            slot_i = get_column(si, False, cache, slot_of, owner, stamp, full, epoch_of, ctr,
                                act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0, degree)
        slot_j = get_column(sj, False, cache, slot_of, owner, stamp, full, epoch_of, ctr,
                            act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0, degree)
        if owner[slot_i] != si:  # evicted by j's fetch (only with a one-slot cache)
            slot_i = get_column(si, False, cache, slot_of, owner, stamp, full, epoch_of, ctr,
                                act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0, degree)
        col_i = cache[slot_i]
        col_j = cache[slot_j]

        # ---- analytic two-variable step: alpha_i += y_i d, alpha_j -= y_j d, d >= 0
        a = QD[i] + QD[j] - 2.0 * col_i[sj]
        if a <= 0.0:
            a = TAU
        yi = y[i]
        yj = y[j]
        d = (-yi * G[i] + yj * G[j]) / a
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

        # ---- status and G_bar (needs full columns when a variable enters/leaves C);
        # a full fetch of s_i or s_j recomputes the same values in the same slot, so
        # col_i and col_j stay valid for the gradient update below
        for v in (i, j):
            old_st = status[v]
            new_st = _status(alpha[v], C[v])
            status[v] = new_st
            if (old_st == UPPER) != (new_st == UPPER):
                sgn = 1.0 if new_st == UPPER else -1.0
                slot = get_column(sidx[v], True, cache, slot_of, owner, stamp, full, epoch_of,
                                  ctr, act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0,
                                  degree)
                col = cache[slot]
                cv = sgn * C[v] * y[v]
                for t in range(l):
                    G_bar[t] += cv * y[t] * col[sidx[t]]
                G_bar[v] += sgn * C[v] * shift[v]
        col_i = cache[slot_of[si]]
        col_j = cache[slot_of[sj]]

        # ---- gradient update over the active set, G += Q_{:i} da_i + Q_{:j} da_j, fused
        # with the search for the next i = argmax_{I_up} -y_t G_t
        G[i] += shift[i] * (new_ai - old_ai)
        G[j] += shift[j] * (new_aj - old_aj)
        gmax_n = -np.inf
        i_n = -1
        for k in range(n_active):
            t = active[k]
            st = sidx[t]
            g = G[t] + y[t] * (dai * col_i[st] + daj * col_j[st])
            G[t] = g
            if y[t] > 0:
                if status[t] != UPPER and -g >= gmax_n:
                    gmax_n = -g
                    i_n = t
            else:
                if status[t] != LOWER and g >= gmax_n:
                    gmax_n = g
                    i_n = t
        next_i = i_n
        next_gmax = gmax_n

    if n_active < l:
        n_active, n_act_s = _reconstruct(
            X, sqn, kcode, gamma, coef0, degree, sidx, y, p, alpha, G, G_bar, status,
            active, n_active, is_active, cache, slot_of, owner, stamp, full, epoch_of,
            ctr, act_s, n_act_s, all_s)

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
def _select(second_order, y, G, QD, status, active, n_active, sidx, cache, slot_of, owner,
            stamp, full, epoch_of, ctr, act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0,
            degree, tol, pre_i, pre_gmax):
    """Working-set selection; returns ``(i, j, gap, slot_i)`` with ``j = -1`` at optimality.

    ``pre_i >= -1`` passes an ``i`` (and its ``pre_gmax``) already found while updating
    the gradient; ``pre_i = -2`` searches for it here.

    ``i`` maximises :math:`-y_tG_t` over :math:`I_{up}`; ``j`` either minimises it over
    :math:`I_{low}` (maximal violating pair, seed 002 §4.4.2) or minimises the second-order
    decrease :math:`-(m + y_tG_t)^2 / a_{it}` over the violators (LIBSVM's rule). ``gap`` is
    :math:`m(\\alpha) - M(\\alpha)` over the active set.
    """
    gmax = pre_gmax
    i = pre_i
    if pre_i == -2:
        gmax = -np.inf
        i = -1
        for k in range(n_active):
            t = active[k]
            if y[t] > 0:
                if status[t] != UPPER and -G[t] >= gmax:
                    gmax = -G[t]
                    i = t
            else:
                if status[t] != LOWER and G[t] >= gmax:
                    gmax = G[t]
                    i = t
    slot_i = -1
    if second_order and i >= 0:
        slot_i = get_column(sidx[i], False, cache, slot_of, owner, stamp, full, epoch_of, ctr,
                            act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0, degree)
    gmax2 = -np.inf
    j = -1
    best = np.inf
    if i >= 0:
        qd_i = QD[i]
        col_i = cache[max(slot_i, 0)]
        for k in range(n_active):
            t = active[k]
            if y[t] > 0:
                if status[t] == LOWER:
                    continue
                yg = G[t]
            else:
                if status[t] == UPPER:
                    continue
                yg = -G[t]
            if second_order:
                if yg >= gmax2:
                    gmax2 = yg
                gd = gmax + yg
                if gd > 0.0:
                    a = qd_i + QD[t] - 2.0 * col_i[sidx[t]]
                    if a <= 0.0:
                        a = TAU
                    obj = -(gd * gd) / a
                    if obj <= best:
                        best = obj
                        j = t
            else:
                if yg >= gmax2:
                    gmax2 = yg
                    j = t
    gap = gmax + gmax2
    if i < 0 or j < 0 or gap < tol:
        return i, -1, gap, slot_i
    return i, j, gap, slot_i


@njit
def _reconstruct(X, sqn, kcode, gamma, coef0, degree, sidx, y, p, alpha, G, G_bar, status,
                 active, n_active, is_active, cache, slot_of, owner, stamp, full, epoch_of, ctr,
                 act_s, n_act_s, all_s):
    r"""Rebuild :math:`G_t = \bar G_t + p_t + \sum_{u\ \mathrm{free}} \alpha_u Q_{tu}` for the
    shrunk variables, then make every variable active again (new cache epoch)."""
    l = y.shape[0]
    n = X.shape[0]
    if n_active < l:
        n_free = 0
        for k in range(n_active):
            if status[active[k]] == FREE:
                n_free += 1
        for t in range(l):
            if not is_active[t]:
                G[t] = G_bar[t] + p[t]
        if n_free * l > 2 * n_active * (l - n_active):
            # row-wise: one (active-length) column per shrunk variable
            for t in range(l):
                if is_active[t]:
                    continue
                slot = get_column(sidx[t], False, cache, slot_of, owner, stamp, full, epoch_of,
                                  ctr, act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0,
                                  degree)
                col = cache[slot]
                acc = 0.0
                for k in range(n_active):
                    u = active[k]
                    if status[u] == FREE:
                        acc += alpha[u] * y[u] * col[sidx[u]]
                G[t] += y[t] * acc
        else:
            # column-wise: one full column per free variable
            for k in range(n_active):
                u = active[k]
                if status[u] != FREE:
                    continue
                slot = get_column(sidx[u], True, cache, slot_of, owner, stamp, full, epoch_of,
                                  ctr, act_s, n_act_s, all_s, X, sqn, kcode, gamma, coef0,
                                  degree)
                col = cache[slot]
                au = alpha[u] * y[u]
                for t in range(l):
                    if not is_active[t]:
                        G[t] += au * y[t] * col[sidx[t]]
    for t in range(l):
        active[t] = t
        is_active[t] = True
    if n_act_s < n:
        ctr[1] += 1
        for s in range(n):
            act_s[s] = s
    return l, n
