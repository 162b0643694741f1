r"""Working-set selection of the SMO solver (LIBSVM's ``Solver`` and ``Solver_NU`` rules).

On the compact active arrays ``cmp = (ya, Ga, qa, fa, pa, va)`` of
:mod:`bisvm.solvers.dual._smo_kernels` (signs, gradients, diagonal of :math:`Q`, the
:math:`I_{up}/I_{low}` flags, column positions, variable indices):

* ``i`` maximises :math:`-y_tG_t` over :math:`I_{up}` (usually found during the previous
  gradient update and passed in);
* ``j`` either minimises :math:`-y_tG_t` over :math:`I_{low}` (the maximal violating pair,
  seed 002 §4.4.2) or minimises the second-order decrease
  :math:`-(m + y_tG_t)^2/a_{it}` over the violators, with
  :math:`a_{it} = Q_{ii} + Q_{tt} - 2y_iy_tQ_{it}` (Fan, Chen & Lin 2005, LIBSVM's rule,
  which needs the kernel column of ``i``);
* with ν (a second equality constraint) the pair is chosen within one sign class (Chang
  & Lin 2001, §4).

The scan for ``j`` runs on threads when the kernel-data tuple asks for them
(:func:`bisvm.solvers.dual._smo_threads.parallel_pick_j`, same result).
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit
from ._smo_columns import get_column, get_column_batch, guessing, is_cached
from ._smo_threads import TAU, second_order_gain


@njit
def candidates(cmp, n_active, sidx, cache, s, cand):
    r"""Up to three active samples other than ``s`` whose columns are not cached, of
    largest violation (:math:`-y_tG_t` over :math:`I_{up}`, :math:`y_tG_t` over
    :math:`I_{low}`): the likeliest next working-set members. Returns their number."""
    ya, Ga, qa, fa, pa, va = cmp
    slot_of = cache[1]
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
    if cache[1][s] >= 0 or not guessing(cache):
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
    gmax2 = -np.inf
    kj = -1
    best = np.inf
    qd_i = qa[k_i] if k_i >= 0 else 0.0
    for k in range(n_active):
        if not (fa[k] & 2) or (sign != 0 and ya[k] != sign):
            continue
        yg = ya[k] * Ga[k]
        if yg >= gmax2:
            gmax2 = yg
            if not second_order:
                kj = k
                best = -(gmax + yg)
        if second_order and k_i >= 0:
            gd = gmax + yg
            if gd > 0.0:
                a = qd_i + qa[k] - 2.0 * pool[base_i + pa[k]]
                obj = second_order_gain(gd, a)
                if obj <= best:
                    best = obj
                    kj = k
    if k_i < 0:
        kj = -1
    return kj, best, gmax2


#: relative slack of the division-free test of :func:`pick_j_second_order`: more than the
#: two roundings between the quotient and the product, so the test never rejects a
#: candidate the exact comparison would take
FILTER_SLACK = 1.0 - 1e-15


@njit
def pick_j_second_order(k_i, base_i, gmax, ya, Ga, qa, fa, pa, n_active, pool):
    r""":func:`pick_j` for the second-order rule over both signs, the same ``(kj, best,
    gmax2)`` with fewer divisions and branches.

    A violator :math:`t` beats the best gain :math:`-B` so far when
    :math:`\mathrm{fl}(d_t^2/a_t) \ge B` (``d`` the gradient difference, ``a`` the
    curvature). That needs :math:`d_t^2 \ge B a_t (1 - 10^{-15})`, a test without a
    division; only the rare candidates that pass it are divided and compared exactly as
    in :func:`pick_j`, so the choice is the same to the last bit (Fan, Chen & Lin 2005,
    WSS 3, evaluated lazily). The largest :math:`y_tG_t` over :math:`I_{low}` is kept
    with a select, not a branch, since which variables qualify varies at random."""
    gmax2 = -np.inf
    kj = -1
    best = np.inf
    bound = -np.inf  # B (1 - slack): -best, shrunk by the slack
    qd_i = qa[k_i]
    for k in range(n_active):
        low = (fa[k] & 2) != 0
        yg = ya[k] * Ga[k]
        gmax2 = yg if (low and yg >= gmax2) else gmax2
        gd = gmax + yg
        a = qd_i + qa[k] - 2.0 * pool[base_i + pa[k]]
        a = a if a > 0.0 else TAU
        if low and gd > 0.0 and gd * gd >= bound * a:
            obj = -(gd * gd) / a
            if obj <= best:
                best = obj
                kj = k
                bound = -best * FILTER_SLACK
    return kj, best, gmax2


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
                v = -ya[k] * Ga[k]
                if ya[k] > 0:
                    if v >= gp:
                        gp = v
                        kp = k
                elif v >= gn:
                    gn = v
                    kn = k
    bp = -1
    bn = -1
    if second_order:
        if kp >= 0:
            bp = get_column(sidx[va[kp]], cache, kd)
        if kn >= 0:
            bn = get_column(sidx[va[kn]], cache, kd)
            if kp >= 0 and not is_cached(sidx[va[kp]], bp, cache):
                bp = get_column(sidx[va[kp]], cache, kd)  # evicted (tiny cache only)
    pool = cache[0]
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
            if gd > 0.0:
                a = q_i + qa[k] - 2.0 * pool[b_i + pa[k]]
                obj = second_order_gain(gd, a)
                if obj <= best:
                    best = obj
                    kj = k
        elif -gd <= best:
            best = -gd
            kj = k
    gap = max(gp + gp2, gn + gn2)
    if gap < tol or kj < 0:
        return -1, -1, gap, -1
    if ya[kj] > 0:
        return kp, kj, gap, bp
    return kn, kj, gap, bn
