r"""Working-set selection of the SMO solver (LIBSVM's ``Solver`` and ``Solver_NU`` rules)
and the gradient update that finds the next ``i`` on the way.

On the compact active arrays ``cmp = (ya, Ga, qa, fa, pa, va)`` of
:mod:`bisvm.solvers.dual._smo_kernels` (signs, gradients, diagonal of :math:`Q`, the
:math:`I_{up}/I_{low}` flags, column positions, variable indices):

* ``i`` maximises :math:`-y_tG_t` over :math:`I_{up}` (usually found during the previous
  gradient update and passed in);
* ``j`` either minimises :math:`-y_tG_t` over :math:`I_{low}` (the maximal violating pair,
  Keerthi et al. 2001, "Improvements to Platt's SMO algorithm for SVM classifier
  design") or minimises the second-order decrease
  :math:`-(m + y_tG_t)^2/a_{it}` over the violators, with
  :math:`a_{it} = Q_{ii} + Q_{tt} - 2y_iy_tQ_{it}` (Fan, Chen & Lin 2005, LIBSVM's rule,
  which needs the kernel column of ``i``);
* with ν (a second equality constraint) the pair is chosen within one sign class (Chang
  & Lin 2001, §4).

The scan for ``j`` runs on threads when the kernel-data tuple asks for them
(:func:`bisvm.solvers.dual._smo_threads.parallel_pick_j`, same result).

Why the loops look as they do. An SMO iteration on a small active set (low-dimensional
data at a large C: many cheap iterations) costs what its loops cost per entry and per
call, not its arithmetic, so the per-iteration functions (a) take arrays one by one,
never the cache, kernel-data or ``cmp`` tuples (a numba call takes a reference to every
array of a tuple argument on entry and drops it on exit, two atomic operations each),
and run without reference counting (``_nrt=False``: they allocate nothing); (b) keep
running maxima in four interleaved lanes, so that no chain of dependent compares sets
the pace; (c) when each active entry sits at its own position in the cached columns
(C-SVC), compute the update and the second-order ratios in passes without loop-carried
dependencies, which the compiler vectorises, and pick the maximiser in a second pass.
Every variant chooses the same ``i`` and ``j`` as the plain sequential scans, ties
included, so the iterates do not depend on which one runs.
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit
from ._smo_columns import get_column, get_column_batch, guessing, is_cached
from ._smo_layout import CACHE_POOL, CACHE_SLOT_OF
from ._smo_threads import (
    TAU,
    gradient_entry,
    keep_second_order,
    keep_signed,
    pick_range,
    pick_result,
)


@njit
def candidates(cmp, n_active, sidx, cache, s, cand):
    r"""Up to three active samples other than ``s`` whose columns are not cached, of
    largest violation (:math:`-y_tG_t` over :math:`I_{up}`, :math:`y_tG_t` over
    :math:`I_{low}`): the likeliest next working-set members. Returns their number."""
    ya, Ga, qa, fa, pa, va = cmp
    slot_of = cache[CACHE_SLOT_OF]
    score = np.full(3, -np.inf)
    n_c = 0
    for k in range(n_active):
        t = sidx[va[k]]
        if t == s or slot_of[t] >= 0:
            continue
        yg = ya[k] * Ga[k]
        v = -np.inf
        if fa[k] & 1:
            v = -yg
        if fa[k] & 2 and yg > v:
            v = yg
        if v <= score[2]:
            continue
        dup = False
        for c in range(n_c):
            if cand[c] == t:
                dup = True
        if dup:
            continue
        # insert into the sorted top three
        c = min(n_c, 2)
        while c > 0 and score[c - 1] < v:
            score[c] = score[c - 1]
            cand[c] = cand[c - 1]
            c -= 1
        score[c] = v
        cand[c] = t
        n_c = min(n_c + 1, 3)
    return n_c


@njit
def fetch(s, cache, kd, cmp, n_active, sidx):
    """The pool offset of the column of sample ``s``; on a miss with dense data, the
    columns of :func:`candidates` are computed in the same pass."""
    if cache[CACHE_SLOT_OF][s] >= 0 or not guessing(cache):
        return get_column(s, cache, kd)
    cand = np.empty(3, dtype=np.int64)
    n_c = candidates(cmp, n_active, sidx, cache, s, cand)
    return get_column_batch(s, cache, kd, cand, n_c)


@njit
def pick_j(k_i, base_i, gmax, sign, ya, Ga, qa, fa, pa, n_active, pool, second_order):
    """Best ``j`` in :math:`I_{low}` for the given ``i`` (``sign`` 0: any sign, else only
    variables with ``y_t = sign``); returns ``(kj, best, gmax2)`` with ``gmax2`` the
    largest :math:`y_tG_t` over those :math:`I_{low}` variables. Takes the compact arrays
    one by one, not as the ``cmp`` tuple: it runs once per iteration, and a tuple argument
    costs a reference count operation per member on entry and exit."""
    kg, gmax2, kj, best = pick_range(k_i, base_i, gmax, sign, ya, Ga, qa, fa, pa, pool,
                                     second_order, 0, n_active)
    return pick_result(k_i, gmax, kg, gmax2, kj, best, second_order)


#: relative slack of the division-free test of :func:`pick_j_second_order`: more than the
#: two roundings between the quotient and the product, so the test never rejects a
#: candidate the exact comparison would take
FILTER_SLACK = 1.0 - 1e-15


@njit(inline="always")
def _j_candidate(k, qd_i, gmax, base_i, ya, Ga, qa, fa, pa, pool):
    """``(low, yg, gd, a)`` of entry ``k`` for :func:`pick_j_second_order`."""
    low = (fa[k] & 2) != 0
    yg = ya[k] * Ga[k]
    a = qd_i + qa[k] - 2.0 * pool[base_i + pa[k]]
    a = a if a > 0.0 else TAU
    return low, yg, gmax + yg, a


@njit(_nrt=False)
def pick_j_second_order(k_i, base_i, gmax, ya, Ga, qa, fa, pa, n_active, pool):
    r""":func:`pick_j` for the second-order rule over both signs, the same ``(kj, best,
    gmax2)`` with fewer divisions and no chain of dependent compares.

    A violator :math:`t` beats the best gain :math:`-B` so far when
    :math:`\mathrm{fl}(d_t^2/a_t) \ge B` (``d`` the gradient difference, ``a`` the
    curvature). That needs :math:`d_t^2 \ge B a_t (1 - 10^{-15})`, a test without a
    division; only the rare candidates that pass it are divided and compared exactly as
    in :func:`pick_j`, in the order of ``k``, so the choice is the same to the last bit
    (Fan, Chen & Lin 2005, WSS 3, evaluated lazily). The largest :math:`y_tG_t` over
    :math:`I_{low}` is a value only, kept in four interleaved maxima."""
    m0 = m1 = m2 = m3 = -np.inf
    kj = -1
    best = np.inf
    bound = -np.inf  # B (1 - slack): -best, shrunk by the slack
    qd_i = qa[k_i]
    n4 = n_active - n_active % 4
    for k in range(0, n4, 4):
        low0, yg0, gd0, a0 = _j_candidate(k, qd_i, gmax, base_i, ya, Ga, qa, fa, pa, pool)
        low1, yg1, gd1, a1 = _j_candidate(k + 1, qd_i, gmax, base_i, ya, Ga, qa, fa, pa, pool)
        low2, yg2, gd2, a2 = _j_candidate(k + 2, qd_i, gmax, base_i, ya, Ga, qa, fa, pa, pool)
        low3, yg3, gd3, a3 = _j_candidate(k + 3, qd_i, gmax, base_i, ya, Ga, qa, fa, pa, pool)
        m0 = yg0 if low0 & (yg0 >= m0) else m0
        m1 = yg1 if low1 & (yg1 >= m1) else m1
        m2 = yg2 if low2 & (yg2 >= m2) else m2
        m3 = yg3 if low3 & (yg3 >= m3) else m3
        if low0 & (gd0 > 0.0) & (gd0 * gd0 >= bound * a0):
            obj = -(gd0 * gd0) / a0
            if obj <= best:
                best, kj, bound = obj, k, -obj * FILTER_SLACK
        if low1 & (gd1 > 0.0) & (gd1 * gd1 >= bound * a1):
            obj = -(gd1 * gd1) / a1
            if obj <= best:
                best, kj, bound = obj, k + 1, -obj * FILTER_SLACK
        if low2 & (gd2 > 0.0) & (gd2 * gd2 >= bound * a2):
            obj = -(gd2 * gd2) / a2
            if obj <= best:
                best, kj, bound = obj, k + 2, -obj * FILTER_SLACK
        if low3 & (gd3 > 0.0) & (gd3 * gd3 >= bound * a3):
            obj = -(gd3 * gd3) / a3
            if obj <= best:
                best, kj, bound = obj, k + 3, -obj * FILTER_SLACK
    for k in range(n4, n_active):
        low, yg, gd, a = _j_candidate(k, qd_i, gmax, base_i, ya, Ga, qa, fa, pa, pool)
        m0 = yg if low & (yg >= m0) else m0
        if low & (gd > 0.0) & (gd * gd >= bound * a):
            obj = -(gd * gd) / a
            if obj <= best:
                best, kj, bound = obj, k, -obj * FILTER_SLACK
    return kj, best, max(max(m0, m1), max(m2, m3))


@njit(_nrt=False)
def pick_j_contiguous(k_i, ci, gmax, ya, Ga, qa, fa, n_active, ratio, lowv):
    r""":func:`pick_j_second_order` when the active entries of a column are its first
    ``n_active`` entries in order (``ci`` = the column of ``i``; every C-SVC solve): the
    same ``(kj, best, gmax2)`` to the last bit.

    One pass without loop-carried dependencies computes, for every entry, the ratio
    :math:`\mathrm{fl}(d_t^2)/a_t` of the violators (-1 elsewhere) and :math:`y_tG_t` of
    :math:`I_{low}` (:math:`-\infty` elsewhere) into the scratch arrays ``ratio`` and
    ``lowv``; the compiler vectorises it (LIBSVM's scalar loop does the division one
    violator at a time). A second pass takes the maxima, with the last maximiser of the
    ratio on a tie, which is the last minimiser of :math:`-d_t^2/a_t` that
    :func:`pick_j` keeps (Fan, Chen & Lin 2005, WSS 3)."""
    qd_i = qa[k_i]
    for k in range(n_active):
        yg = ya[k] * Ga[k]
        low = (fa[k] & 2) != 0
        gd = gmax + yg
        a = qd_i + qa[k] - 2.0 * ci[k]
        a = a if a > 0.0 else TAU
        r = (gd * gd) / a
        ratio[k] = r if low & (gd > 0.0) else -1.0
        lowv[k] = yg if low else -np.inf
    kj, r = last_max(ratio, n_active)
    g0, g1, g2, g3 = lowv_max(lowv, n_active)
    gmax2 = max(max(g0, g1), max(g2, g3))
    if r < 0.0:
        return -1, np.inf, gmax2
    return kj, -r, gmax2


@njit(inline="always")
def lowv_max(v, n):
    """Four interleaved maxima of ``v[:n]`` (independent chains of compares)."""
    m0 = m1 = m2 = m3 = -np.inf
    n4 = n - n % 4
    for k in range(0, n4, 4):
        m0 = v[k] if v[k] > m0 else m0
        m1 = v[k + 1] if v[k + 1] > m1 else m1
        m2 = v[k + 2] if v[k + 2] > m2 else m2
        m3 = v[k + 3] if v[k + 3] > m3 else m3
    for k in range(n4, n):
        m0 = v[k] if v[k] > m0 else m0
    return m0, m1, m2, m3


@njit(_nrt=False)
def last_max(v, n):
    """``(k, v[k])`` for the last maximiser of ``v[:n]`` (NaN entries ignored; ``(-1,
    -inf)`` when there is none),
    by four interleaved running maxima: the overall last maximiser is the largest index
    among the lanes that reach the maximum."""
    m0 = m1 = m2 = m3 = -np.inf
    k0 = k1 = k2 = k3 = -1
    n4 = n - n % 4
    for k in range(0, n4, 4):
        if v[k] >= m0:
            m0 = v[k]
            k0 = k
        if v[k + 1] >= m1:
            m1 = v[k + 1]
            k1 = k + 1
        if v[k + 2] >= m2:
            m2 = v[k + 2]
            k2 = k + 2
        if v[k + 3] >= m3:
            m3 = v[k + 3]
            k3 = k + 3
    for k in range(n4, n):
        if v[k] >= m0:
            m0 = v[k]
            k0 = k
    return _last_of_lanes(m0, k0, m1, k1, m2, k2, m3, k3)


@njit(inline="always")
def first_i(pre_k, pre_gmax, ya, Ga, fa, n_active):
    r"""``(ki, gmax)``: ``i`` maximises :math:`-y_tG_t` over :math:`I_{up}` (the last
    maximiser on a tie, as LIBSVM); ``pre_k >= -1`` passes an ``i`` already found during
    the gradient update, ``pre_k = -2`` searches for it here."""
    if pre_k != -2:
        return pre_k, pre_gmax
    gmax = -np.inf
    ki = -1
    for k in range(n_active):
        if fa[k] & 1:
            v = -ya[k] * Ga[k]
            if v >= gmax:
                gmax = v
                ki = k
    return ki, gmax


@njit
def select_nu(second_order, cmp, n_active, sidx, cache, kd, tol, pre):
    """LIBSVM's ``Solver_NU`` selection: for each sign class ``i`` maximises
    :math:`-y_tG_t` over its :math:`I_{up}` and ``j`` is chosen in the same class as in
    :func:`select` (one pass over both classes); the pair of the class with the better
    ``j`` is returned and ``gap`` is the larger per-class gap. ``pre = (kp, gp, kn, gn)``
    passes the two ``i`` found during the gradient update (``kp = -2``: search here)."""
    ya, Ga, qa, fa, pa, va = cmp
    kp, gp, kn, gn = pre
    if kp == -2:
        gp = -np.inf
        gn = -np.inf
        kp = -1
        kn = -1
        for k in range(n_active):
            if fa[k] & 1:
                kp, gp, kn, gn = keep_signed(k, -ya[k] * Ga[k], ya[k], kp, gp, kn, gn)
    bp = -1
    bn = -1
    if second_order:
        if kp >= 0:
            bp = get_column(sidx[va[kp]], cache, kd)
        if kn >= 0:
            bn = get_column(sidx[va[kn]], cache, kd)
            if kp >= 0 and not is_cached(sidx[va[kp]], bp, cache):
                bp = get_column(sidx[va[kp]], cache, kd)  # evicted (tiny cache only)
    pool = cache[CACHE_POOL]
    qp = qa[kp] if kp >= 0 else 0.0
    qn = qa[kn] if kn >= 0 else 0.0
    gp2 = -np.inf
    gn2 = -np.inf
    kj = -1
    best = np.inf
    for k in range(n_active):
        if not (fa[k] & 2):
            continue
        yg = ya[k] * Ga[k]
        if ya[k] > 0:
            if yg >= gp2:
                gp2 = yg
            g_i, k_i, q_i, b_i = gp, kp, qp, bp
        else:
            if yg >= gn2:
                gn2 = yg
            g_i, k_i, q_i, b_i = gn, kn, qn, bn
        if k_i < 0:
            continue
        gd = g_i + yg
        if second_order:
            kj, best = keep_second_order(k, gd, q_i, b_i, qa, pa, pool, kj, best)
        elif -gd <= best:
            best = -gd
            kj = k
    gap = max(gp + gp2, gn + gn2)
    if gap < tol or kj < 0:
        return -1, -1, gap, -1
    if ya[kj] > 0:
        return kp, kj, gap, bp
    return kn, kj, gap, bn


@njit(_nrt=False)
def update_max(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, n_active):
    """The gradient update of the SMO step
    (:func:`bisvm.solvers.dual._smo_kernels.smo_solve`) with one equality constraint,
    fused with the search for the next ``i``: the last maximiser of :math:`-y_tG_t` over
    :math:`I_{up}` whatever its sign (the per-sign maxima of the ν solver give the same
    one, the later on a tie).

    The running maximum is a chain of dependent compares, which would cost a compare's
    latency per entry; four interleaved maxima (entries ``k = u mod 4``) run
    independently, and the overall last maximiser is the largest index among the lanes
    that reach the maximum, the same index as one sequential scan."""
    m0 = m1 = m2 = m3 = -np.inf
    k0 = k1 = k2 = k3 = -1
    n4 = n_active - n_active % 4
    for k in range(0, n4, 4):
        v0 = gradient_entry(k, Ga, ya, pa, pool, base_i, base_j, dai, daj)
        v1 = gradient_entry(k + 1, Ga, ya, pa, pool, base_i, base_j, dai, daj)
        v2 = gradient_entry(k + 2, Ga, ya, pa, pool, base_i, base_j, dai, daj)
        v3 = gradient_entry(k + 3, Ga, ya, pa, pool, base_i, base_j, dai, daj)
        if ((fa[k] & 1) != 0) & (v0 >= m0):
            m0 = v0
            k0 = k
        if ((fa[k + 1] & 1) != 0) & (v1 >= m1):
            m1 = v1
            k1 = k + 1
        if ((fa[k + 2] & 1) != 0) & (v2 >= m2):
            m2 = v2
            k2 = k + 2
        if ((fa[k + 3] & 1) != 0) & (v3 >= m3):
            m3 = v3
            k3 = k + 3
    for k in range(n4, n_active):
        v = gradient_entry(k, Ga, ya, pa, pool, base_i, base_j, dai, daj)
        if ((fa[k] & 1) != 0) & (v >= m0):
            m0 = v
            k0 = k
    return _last_of_lanes(m0, k0, m1, k1, m2, k2, m3, k3)


@njit(_nrt=False)
def update_contiguous(Ga, ya, fa, ci, cj, dai, daj, n_active, v):
    """:func:`update_max` when the active entries of the columns ``ci``, ``cj`` are their
    first ``n_active`` entries in order (every C-SVC solve): the same update and the same
    ``(k, m)``. The update and :math:`-y_kG_k` over :math:`I_{up}` (NaN elsewhere,
    into the scratch ``v``) have no loop-carried dependency, so the compiler
    vectorises them; the last maximiser is then found by
    :func:`last_max`."""
    for k in range(n_active):
        yk = ya[k]
        g = Ga[k] + yk * (dai * ci[k] + daj * cj[k])
        Ga[k] = g
        # NaN outside I_up: never a maximiser (a comparison with NaN is false), so an
        # empty I_up gives (-1, -inf) as the sequential scan does
        v[k] = -yk * g if (fa[k] & 1) != 0 else np.nan
    return last_max(v, n_active)


@njit(inline="always")
def _last_of_lanes(m0, k0, m1, k1, m2, k2, m3, k3):
    """``(k, m)``: the largest of four lane maxima, and on a tie the largest index."""
    m = max(max(m0, m1), max(m2, m3))
    k = -1
    if m0 == m and k0 > k:
        k = k0
    if m1 == m and k1 > k:
        k = k1
    if m2 == m and k2 > k:
        k = k2
    if m3 == m and k3 > k:
        k = k3
    return k, m
