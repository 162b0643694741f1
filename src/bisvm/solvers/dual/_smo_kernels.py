r"""Compiled hot loops of the SMO solver (see :mod:`bisvm.solvers.dual.smo` for the problem).

Everything that runs once per SMO iteration lives here, in module-level numba functions
that work in place on explicit arrays: working-set selection (LIBSVM's ``Solver`` and
``Solver_NU`` rules), the analytic two-variable step, the gradient update over the active
set, shrinking and the bias. Kernel columns, their cache and the gradient reconstruction
come from :mod:`bisvm.solvers.dual._smo_columns`. :func:`smo_solve` runs the whole loop in one
call, so Python is entered once per solve, not once per iteration.

Variables ``t = 0..l-1`` of the dual are attached to samples ``sidx[t]`` with signs
``y[t] = ±1``; the Hessian is

.. math:: Q_{tu} = y_t y_u k(x_{s_t}, x_{s_u}) + \delta_{tu}\,\mathrm{shift}_t,

so the cache holds *unsigned* kernel columns per sample and ε-SVR's two variables per
sample share one column. Shrunk variables' gradients are rebuilt by one kernel-vector
product over the variables that moved since the last full gradient (a snapshot
``ref = (alpha_ref, G_ref)``, :func:`~bisvm.solvers.dual._smo_columns.gradient_since`), which
replaces LIBSVM's :math:`\bar G` bookkeeping and its full-length column per bound
change.

The ν formulations (``nu=True``) carry a second equality constraint
:math:`e^\top\alpha = \text{const}` besides :math:`y^\top\alpha = \text{const}`; a pair
moves along :math:`(y_i, -y_j)` without breaking either only when :math:`y_i = y_j`, so
the working set is chosen within one sign class (Chang & Lin 2001, "Training
ν-support vector classifiers", §4; LIBSVM's ``Solver_NU``), shrinking uses the per-sign
violations, and the stopping gap is the larger of the two per-sign gaps.
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit
from ._smo_columns import (
    cached_offset,
    get_column,
    gradient_from_scratch,
    gradient_since,
    new_cache,
    reset_cache,
    restrict_cache,
    still_cached,
)
from ._smo_layout import (
    CACHE_CTR,
    CACHE_POS_OF,
    CACHE_PROF,
    CMP_G,
    CMP_POS,
    CMP_VAR,
    CTR_COMPUTED,
    KD_THREADS,
    KD_X,
    PROF_REBUILD,
    PROF_SELECT,
    PROF_SHRINK,
    PROF_TIMED,
    PROF_TOTAL,
    PROF_UPDATE,
    STAT_COLUMNS,
    STAT_CONVERGED,
    STAT_GAP,
    STAT_ITER,
    STAT_MEAN_ACTIVE,
    STAT_NU_R,
    STAT_RHO,
)
from ._smo_select import (
    fetch,
    first_i,
    pick_j,
    pick_j_contiguous,
    pick_j_second_order,
    select_nu,
    update_contiguous,
    update_max,
)
from ._smo_threads import MIN_PARALLEL, TAU, parallel_pick_j, parallel_update, signed_update
from ._smo_timer import PROFILE, charge, phase_start, phase_stop, tick

LOWER, UPPER, FREE = 0, 1, 2
#: one iteration in this many has its selection and step timed: counter reads cost time too
PROFILE_STRIDE = 16


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
def _compact(active, n_active, y, G, QD, flags, apos, cmp):
    """Copy the active variables' data into contiguous arrays (LIBSVM keeps them in place
    by swapping; copies are simpler and cost O(l) per shrink)."""
    ya, Ga, qa, fa, pa, va = cmp
    for k in range(n_active):
        t = active[k]
        va[k] = t
        ya[k] = y[t]
        Ga[k] = G[t]
        qa[k] = QD[t]
        fa[k] = flags[t]
        pa[k] = apos[t]


@njit
def _in_column_order(pa, n_active):
    """Whether active entry ``k`` sits at position ``k`` of the cached columns for every
    ``k`` (one variable per sample, as in C-SVC): the per-iteration loops then read the
    columns contiguously, without the gather through ``pa``."""
    for k in range(n_active):
        if pa[k] != k:
            return False
    return True


@njit
def _scatter(n_active, cmp, G):
    Ga = cmp[CMP_G]
    va = cmp[CMP_VAR]
    for k in range(n_active):
        G[va[k]] = Ga[k]


@njit
def _max_violations(cmp, n_active, nu):
    """Per sign ``(up+, low+, up-, low-)`` with ``up`` the largest :math:`-y_tG_t` over
    :math:`I_{up}` and ``low`` the largest :math:`y_tG_t` over :math:`I_{low}`; without
    ``nu`` both signs get the overall maxima."""
    ya, Ga, qa, fa, pa, va = cmp
    m = np.full(4, -np.inf)
    for k in range(n_active):
        yg = ya[k] * Ga[k]
        o = 0 if ya[k] > 0 else 2
        if fa[k] & 1 and -yg >= m[o]:
            m[o] = -yg
        if fa[k] & 2 and yg >= m[o + 1]:
            m[o + 1] = yg
    if not nu:
        up = max(m[0], m[2])
        low = max(m[1], m[3])
        m[0] = up
        m[2] = up
        m[1] = low
        m[3] = low
    return m


@njit
def _shrink(kd, sidx, y, ref, shift, alpha, G, status, flags, apos, QD, active, n_active,
            is_active, cmp, cache, tol, nu, unshrunk):
    """Drop bounded variables that cannot enter a violating pair (LIBSVM's rule, per sign
    class for ν); once the gap is within ``10 tol`` every variable comes back once first.
    Returns ``(n_active, unshrunk)``."""
    l = y.shape[0]
    m = _max_violations(cmp, n_active, nu)
    _scatter(n_active, cmp, G)
    if n_active == l:
        # every gradient is current: a newer snapshot shortens the next rebuild's product
        a_ref, G_ref = ref
        a_ref[:] = alpha
        G_ref[:] = G
    stale = False
    if not unshrunk and max(m[0] + m[1], m[2] + m[3]) <= tol * 10.0:
        unshrunk = True
        if n_active < l:
            # every variable back, the cache still in the old layout: the shrink below
            # usually keeps a subset of the old active samples, so the cached columns can
            # be compacted instead of recomputed
            inactive = np.logical_not(is_active)
            t0 = tick()
            _rebuild(inactive, kd, sidx, y, shift, alpha, G, ref)
            charge(cache[CACHE_PROF], PROF_REBUILD, t0)
            for t in range(l):
                active[t] = t
                is_active[t] = True
            n_active = l
            stale = True
    kept = 0
    for k in range(n_active):
        t = active[k]
        shrink = False
        if status[t] != FREE:
            yg = y[t] * G[t]
            o = 0 if y[t] > 0 else 2
            if flags[t] & 1:  # only in I_up: useless if -yG < M
                shrink = -yg < -m[o + 1]
            else:  # only in I_low: useless if -yG > m
                shrink = -yg > m[o]
        if shrink:
            is_active[t] = False
        else:
            active[kept] = t
            kept += 1
    if kept < n_active or stale:
        n_active = kept
        restrict_cache(cache, active, n_active, sidx, kd)
        pos_of = cache[CACHE_POS_OF]
        for k in range(n_active):
            t = active[k]
            apos[t] = pos_of[sidx[t]]
    _compact(active, n_active, y, G, QD, flags, apos, cmp)
    return n_active, unshrunk


@njit
def _rebuild(which, kd, sidx, y, shift, alpha, G, ref):
    """Gradients of ``which`` from the snapshot ``ref``, after which ``G`` is the full
    gradient and becomes the new snapshot (the active entries must be scattered first)."""
    a_ref, G_ref = ref
    gradient_since(which, kd, sidx, y, shift, alpha, a_ref, G_ref, G)
    a_ref[:] = alpha
    G_ref[:] = G


@njit
def _grow(kd, sidx, y, ref, shift, alpha, G, active, is_active, apos, cache):
    """Rebuild the shrunk variables' gradients, make every variable active again and
    empty the cache. Returns the number of active variables."""
    l = y.shape[0]
    inactive = np.logical_not(is_active)
    _rebuild(inactive, kd, sidx, y, shift, alpha, G, ref)
    for t in range(l):
        active[t] = t
        is_active[t] = True
        apos[t] = sidx[t]
    reset_cache(cache, kd)
    return l


@njit(inline="always")
def _two_variable_update(ai, aj, gi, gj, same_sign, a, ci, cj):
    r"""New ``(alpha_i, alpha_j)`` minimising the dual along the pair's feasible line and
    clipped to the box ``[0, c_i] x [0, c_j]`` (Fan, Chen & Lin 2005, §6).

    Along the line one quantity is conserved: :math:`\alpha_i + \alpha_j` when
    :math:`y_i = y_j`, :math:`\alpha_i - \alpha_j` otherwise. The unconstrained
    minimiser moves by :math:`\delta = (\mp G_i - G_j)/a` (raw gradients); a coordinate
    that leaves the box is set to its bound and the other recovered from the conserved
    quantity, so that a variable clipped to a bound sits exactly on it and the other
    carries all the rounding (LIBSVM's arithmetic, which decides whether a variable is
    free when the solution is degenerate, and with it the bias)."""
    if not same_sign:
        delta = (-gi - gj) / a
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0.0:
            if aj < 0.0:
                aj = 0.0
                ai = diff
        elif ai < 0.0:
            ai = 0.0
            aj = -diff
        if diff > ci - cj:
            if ai > ci:
                ai = ci
                aj = ci - diff
        elif aj > cj:
            aj = cj
            ai = cj + diff
    else:
        delta = (gi - gj) / a
        total = ai + aj
        ai -= delta
        aj += delta
        if total > ci:
            if ai > ci:
                ai = ci
                aj = total - ci
        elif aj < 0.0:
            aj = 0.0
            ai = total
        if total > cj:
            if aj > cj:
                aj = cj
                ai = total - cj
        elif ai < 0.0:
            ai = 0.0
            aj = total
    return ai, aj


@njit(inline="always")
def _step(ki, kj, base_i, base_j, ya, Ga, qa, fa, pa, va, n_active, C, shift, alpha, status,
          flags, pool, n_threads, nu, contiguous, scratch):
    """Analytic two-variable step (:func:`_two_variable_update`) and the gradient update
    :math:`G \\mathrel{+}= Q_{:i}\\Delta\\alpha_i + Q_{:j}\\Delta\\alpha_j` over the active
    set, fused with the search for the next ``i``. Returns ``(kp, gp, kn, gn)``, the
    per-sign maximisers of :math:`-y_tG_t` over :math:`I_{up}`. The compact arrays come
    one by one (see :func:`~bisvm.solvers.dual._smo_select.pick_j`)."""
    i = va[ki]
    j = va[kj]
    a = qa[ki] + qa[kj] - 2.0 * pool[base_i + pa[kj]]
    if a <= 0.0:
        a = TAU
    yi = ya[ki]
    yj = ya[kj]
    old_ai = alpha[i]
    old_aj = alpha[j]
    new_ai, new_aj = _two_variable_update(old_ai, old_aj, Ga[ki], Ga[kj], yi == yj, a, C[i],
                                          C[j])
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
    Ga[ki] += shift[i] * (new_ai - old_ai)
    Ga[kj] += shift[j] * (new_aj - old_aj)
    if n_threads > 1 and n_active >= MIN_PARALLEL:
        return parallel_update(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, n_active,
                               n_threads)
    if not nu:
        if contiguous:
            k, g = update_contiguous(Ga, ya, fa, pool[base_i:base_i + n_active],
                                      pool[base_j:base_j + n_active], dai, daj, n_active,
                                      scratch)
        else:
            k, g = update_max(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, n_active)
        return k, g, -1, -np.inf
    return signed_update(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, 0, n_active)


@njit
def bias(y, G, status, sign, use_y):
    """Mean of :math:`v_t` over the free variables of a sign class (``sign`` 0: all), or
    the midpoint of the feasible interval when none is free (LIBSVM), with
    :math:`v_t = y_tG_t` (``use_y``) or :math:`G_t` (``Solver_NU``, one class at a time)."""
    ub = np.inf
    lb = -np.inf
    n_free = 0
    sum_free = 0.0
    for t in range(y.shape[0]):
        if sign != 0 and y[t] != sign:
            continue
        v = y[t] * G[t] if use_y else G[t]
        # in y_tG_t terms a bound variable of sign -1 limits the other side
        flip = use_y and y[t] < 0
        if status[t] == UPPER:
            if flip:
                ub = min(ub, v)
            else:
                lb = max(lb, v)
        elif status[t] == LOWER:
            if flip:
                lb = max(lb, v)
            else:
                ub = min(ub, v)
        else:
            n_free += 1
            sum_free += v
    if n_free > 0:
        return sum_free / n_free
    r = 0.5 * (ub + lb)
    if not np.isfinite(r):
        r = ub if np.isfinite(ub) else (lb if np.isfinite(lb) else 0.0)
    return r


@njit
def libsvm_rho(y, G, alpha, upper):
    r""":func:`bias` over all variables (C-SVC, ε-SVR) with each variable's status read from
    ``alpha`` and its bound ``upper``: LIBSVM's :math:`\rho`."""
    status = np.empty(y.shape[0], dtype=np.int8)
    for t in range(y.shape[0]):
        status[t] = _status(alpha[t], upper[t])
    return bias(y, G, status, 0.0, np.bool_(True))  # typed: one compiled bias


@njit
def _initial_state(kd, kdiag, sidx, y, p, C, shift, alpha, G, pool, prof, t_start):
    r"""The solver's state at a feasible start: the empty column cache, the diagonal of
    :math:`Q`, each variable's status, flags and column position, every variable active,
    ``G`` the gradient :math:`Q\alpha + p` (one kernel-vector product over the support
    when ``alpha`` is not zero), its snapshot ``ref`` and the compact copies ``cmp``.
    Returns ``(cache, QD, status, flags, apos, active, is_active, cmp, ref)``."""
    n = kd[KD_X].shape[0]
    l = y.shape[0]
    cache = new_cache(pool, n, prof)
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
    is_active = np.ones(l, dtype=np.bool_)
    cmp = (np.empty(l), np.empty(l), np.empty(l), np.empty(l, dtype=np.int8),
           np.empty(l, dtype=np.int64), np.empty(l, dtype=np.int64))
    G[:] = p
    if np.any(alpha > 0.0):
        gradient_from_scratch(is_active, kd, sidx, y, p, shift, alpha, G)
        charge(prof, PROF_REBUILD, t_start)
    ref = (alpha.copy(), G.copy())
    _compact(active, l, y, G, QD, flags, apos, cmp)
    return cache, QD, status, flags, apos, active, is_active, cmp, ref


@njit
def _shrink_phase(kd, sidx, y, ref, shift, alpha, G, status, flags, apos, QD, active,
                  n_active, is_active, cmp, cache, tol, nu, unshrunk, prof):
    """:func:`_shrink` with its cycle count (without its columns and reconstruction,
    counted in their own phases). Returns ``(n_active, unshrunk, contiguous)``.

    A call of its own (the tuples are taken once per shrink, every 1000 iterations),
    not inlined into the per-iteration path of :func:`smo_solve`."""
    mark = phase_start(prof)
    n_active, unshrunk = _shrink(kd, sidx, y, ref, shift, alpha, G, status, flags, apos, QD,
                                 active, n_active, is_active, cmp, cache, tol, nu, unshrunk)
    contiguous = _in_column_order(cmp[CMP_POS], n_active)
    phase_stop(prof, PROF_SHRINK, mark)
    return n_active, unshrunk, contiguous


@njit
def _unshrink(kd, sidx, y, ref, shift, alpha, G, QD, flags, apos, active, is_active,
              n_active, cmp, cache, prof):
    """Every variable active again, its gradient rebuilt (counted as reconstruction), when
    the active set is optimal but the whole problem may not be. Returns ``(n_active,
    contiguous)``."""
    t0 = tick()
    _scatter(n_active, cmp, G)
    n_active = _grow(kd, sidx, y, ref, shift, alpha, G, active, is_active, apos, cache)
    _compact(active, n_active, y, G, QD, flags, apos, cmp)
    contiguous = _in_column_order(cmp[CMP_POS], n_active)
    charge(prof, PROF_REBUILD, t0)
    return n_active, contiguous


@njit
def smo_solve(kd, kdiag, sidx, y, p, C, shift, alpha, G, pool, tol, second_order, shrinking, nu,
              max_iter, out_stats, prof):
    r"""Solve :math:`\min_\alpha \tfrac12\alpha^\top Q\alpha + p^\top\alpha` s.t.
    :math:`y^\top\alpha = \text{const}` (and :math:`e^\top\alpha = \text{const}` when
    ``nu``), :math:`0 \le \alpha_t \le C_t` by SMO.

    ``kd``: the kernel-data tuple of :mod:`bisvm.solvers.dual._smo_columns`; ``kdiag``:
    :math:`k(x_s, x_s)`; ``alpha``: a feasible start, overwritten by the solution; ``G``
    receives :math:`Q\alpha + p`; ``pool``: the column cache. ``out_stats`` and ``prof``
    (CPU cycles per phase) are described at :func:`_finish`. The active variables' data
    live in the compact copies ``cmp`` of :func:`_initial_state`.
    """
    l = y.shape[0]
    t_start = tick()
    cache, QD, status, flags, apos, active, is_active, cmp, ref = _initial_state(
        kd, kdiag, sidx, y, p, C, shift, alpha, G, pool, prof, t_start)
    n_active = l
    n_iter = 0
    counter = min(l, 1000) + 1
    # typed, not a literal: one compiled _shrink_phase and select_nu, not two
    unshrunk = np.bool_(False)
    converged, gap, sum_active = False, np.inf, 0.0
    # the per-iteration path reads these arrays directly: a call taking the cache, kernel
    # data or cmp tuples (misses, shrinking, ν) takes a reference to each of their arrays
    pool, slot_of, owner, stamp, ctr, act_s, pos_of, prof_c, spec, sgen, runs = cache
    ya, Ga, qa, fa, pa, va = cmp
    nth = kd[KD_THREADS]
    scratch, scratch2 = np.empty(l), np.empty(l)
    contiguous = _in_column_order(pa, n_active)
    # the next i per sign class when found during the gradient update (kp = -2: not found)
    pre = (np.int64(-2), 0.0, np.int64(-1), 0.0)
    mark = phase_start(prof)
    while max_iter < 0 or n_iter < max_iter:
        timed = PROFILE and n_iter % PROFILE_STRIDE == 0
        counter -= 1
        if counter == 0:
            counter = min(l, 1000)
            pre = (np.int64(-2), 0.0, np.int64(-1), 0.0)
            if shrinking:
                n_active, unshrunk, contiguous = _shrink_phase(
                    kd, sidx, y, ref, shift, alpha, G, status, flags, apos, QD, active,
                    n_active, is_active, cmp, cache, tol, nu, unshrunk, prof)
        for attempt in range(2):
            if timed:
                mark = phase_start(prof)
            if nu:
                ki, kj, gap, base_i = select_nu(second_order, cmp, n_active, sidx, cache, kd,
                                                tol, pre)
            else:
                kp, gp, kn, gn = pre
                # the overall last maximiser: the later of the two classes' on a tie
                if gp > gn or (gp == gn and kp > kn) or kp == -2:
                    ki, gmax = first_i(kp, gp, ya, Ga, fa, n_active)
                else:
                    ki, gmax = kn, gn
                base_i = -1
                if second_order and ki >= 0:
                    si = sidx[va[ki]]
                    base_i = cached_offset(si, slot_of, stamp, ctr, spec, sgen)
                    if base_i < 0:
                        base_i = fetch(si, cache, kd, cmp, n_active, sidx)
                if nth > 1 and n_active >= MIN_PARALLEL:
                    kj, _, gmax2 = parallel_pick_j(ki, max(base_i, 0), gmax, 0.0, cmp,
                                                   n_active, pool, second_order, nth)
                elif second_order and ki >= 0 and contiguous:
                    kj, _, gmax2 = pick_j_contiguous(ki, pool[base_i:base_i + n_active], gmax,
                                                     ya, Ga, qa, fa, n_active, scratch,
                                                     scratch2)
                elif second_order and ki >= 0:
                    kj, _, gmax2 = pick_j_second_order(ki, base_i, gmax, ya, Ga, qa, fa, pa,
                                                       n_active, pool)
                else:
                    kj, _, gmax2 = pick_j(ki, max(base_i, 0), gmax, 0.0, ya, Ga, qa, fa, pa,
                                          n_active, pool, second_order)
                gap = gmax + gmax2
                if ki < 0 or gap < tol:
                    kj = -1
            if timed:
                phase_stop(prof, PROF_SELECT, mark)
            if kj >= 0 or n_active == l or attempt == 1:
                break
            # optimal on the active set: bring every variable back and check again
            n_active, contiguous = _unshrink(kd, sidx, y, ref, shift, alpha, G, QD, flags,
                                             apos, active, is_active, n_active, cmp, cache,
                                             prof)
            pre = (np.int64(-2), 0.0, np.int64(-1), 0.0)
            counter = 1  # shrink again at the next iteration
        if kj < 0:
            converged = True
            break

        n_iter += 1
        sum_active += n_active
        if timed:
            mark = phase_start(prof)
        si = sidx[va[ki]]
        sj = sidx[va[kj]]
        if base_i < 0 or not still_cached(si, base_i, slot_of, ctr):
            base_i = cached_offset(si, slot_of, stamp, ctr, spec, sgen)
            if base_i < 0:
                base_i = get_column(si, cache, kd)
        base_j = cached_offset(sj, slot_of, stamp, ctr, spec, sgen)
        if base_j < 0:
            base_j = fetch(sj, cache, kd, cmp, n_active, sidx)
            if not still_cached(si, base_i, slot_of, ctr):  # evicted (one-slot cache only)
                base_i = get_column(si, cache, kd)
        pre = _step(ki, kj, base_i, base_j, ya, Ga, qa, fa, pa, va, n_active, C, shift, alpha,
                    status, flags, pool, nth, nu, contiguous, scratch)
        if timed:  # the step and its columns' cache hits
            phase_stop(prof, PROF_UPDATE, mark)
            prof[PROF_TIMED] += 1

    _finish(kd, sidx, y, ref, shift, alpha, G, active, is_active, apos, n_active, cmp, cache,
            status, nu, n_iter, converged, gap, sum_active, out_stats, prof, t_start)


@njit
def _finish(kd, sidx, y, ref, shift, alpha, G, active, is_active, apos, n_active, cmp, cache,
            status, nu, n_iter, converged, gap, sum_active, out_stats, prof, t_start):
    """The full gradient in ``G`` (the shrunk variables' rebuilt), the bias and the
    statistics: ``out_stats = [n_iter, converged, gap, rho, n_columns_computed,
    mean_active_size, r]`` (``r``: ``Solver_NU``'s second multiplier, 0 otherwise);
    ``prof`` (int64, length 7) holds the CPU cycles of the kernel columns, the selection
    (without its columns) and the gradient update (timed on one iteration in
    :data:`PROFILE_STRIDE`, extrapolated), shrinking, the gradient reconstruction, the
    whole solve and the number of timed iterations."""
    _scatter(n_active, cmp, G)
    if n_active < y.shape[0]:
        t0 = tick()
        _grow(kd, sidx, y, ref, shift, alpha, G, active, is_active, apos, cache)
        charge(prof, PROF_REBUILD, t0)
    if nu:  # the bias: two per-class averages for ν
        r1 = bias(y, G, status, 1.0, not nu)  # use_y False, typed (one compiled bias)
        r2 = bias(y, G, status, -1.0, not nu)
        rho = 0.5 * (r1 - r2)
        out_stats[STAT_NU_R] = 0.5 * (r1 + r2)
    else:
        rho = bias(y, G, status, 0.0, not nu)
        out_stats[STAT_NU_R] = 0.0
    out_stats[STAT_ITER], out_stats[STAT_CONVERGED] = n_iter, 1.0 if converged else 0.0
    out_stats[STAT_GAP], out_stats[STAT_RHO] = gap, rho
    out_stats[STAT_COLUMNS] = cache[CACHE_CTR][CTR_COMPUTED]
    out_stats[STAT_MEAN_ACTIVE] = sum_active / max(n_iter, 1)
    if prof[PROF_TIMED] > 0:  # the timed iterations extrapolated to all of them
        sampled = prof[PROF_SELECT:PROF_UPDATE + 1]
        sampled[:] = (sampled * (n_iter / prof[PROF_TIMED])).astype(np.int64)
    charge(prof, PROF_TOTAL, t_start)
