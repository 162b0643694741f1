r"""Multi-threaded pieces of the SMO solver (numba ``prange``) and the thread count.

``n_jobs > 1`` splits the three loops of an SMO iteration that run over the active set:

* a kernel column (:func:`parallel_block_column`): its blocks of
  :data:`~bisvm.solvers.dual._smo_blocks.BQ` targets are independent;
* the gradient update fused with the search for the next ``i``
  (:func:`parallel_update`) and the choice of ``j`` (:func:`parallel_pick_j`): each chunk
  of the active set finds its own best candidate, and the chunks' winners are combined
  in order with the serial loop's tie rule (the *last* maximiser), so the threaded
  solver picks the same working sets and returns the same iterate as the serial one;
* the gradient reconstruction over the support vectors (:func:`parallel_block_matvec`,
  dense data; sparse rows share one scatter buffer and stay serial).

Every entry is computed by the same arithmetic as in the serial code, so threading
changes the time, never the result: a chunk runs the serial loop itself over its range
(:func:`signed_update`, :func:`pick_range`, inlined into both the serial and the
threaded callers). Short loops (fewer than :data:`MIN_PARALLEL` variables) stay serial:
below that a thread launch costs more than it saves.

The first threaded fit compiles these functions, which takes a while; the machine code is
then cached on disk.
"""

from __future__ import annotations

import os
from numbers import Integral

import numba
import numpy as np

from ..._numba import njit, prange
from ._smo_blocks import (
    BQ,
    BQ4,
    GEMM_ROWS,
    acc4,
    block_matvec,
    clear_dots,
    column_block,
    columns4_block,
    csc_dots,
    gemm_operands,
    gemm_rows,
    use_gemm,
)
from ._smo_layout import (
    KD_COEF0,
    KD_DEGREE,
    KD_GAMMA,
    KD_KCODE,
    KD_SQA,
    KD_SQN,
    KD_X,
    KD_XT,
    SX_DOTBUF,
)

__all__ = ["resolve_n_jobs", "threaded_smo_solve"]

#: active-set length below which the per-iteration loops stay serial
MIN_PARALLEL = 4096
#: chunks of the active set per thread in the reductions
CHUNKS_PER_THREAD = 2
TAU = 1e-12


@njit(inline="always")
def second_order_gain(gd, a):
    """LIBSVM's second-order working-set gain -(b²)/a for the pair's curvature ``a``,
    with a non-positive curvature (indefinite kernels) replaced by τ (Fan, Chen & Lin
    2005, WSS 3)."""
    if a <= 0.0:
        a = TAU
    return -(gd * gd) / a


@njit(inline="always")
def gradient_entry(k, Ga, ya, pa, pool, base_i, base_j, dai, daj):
    """``G_k += y_k (Q_{ik} da_i + Q_{jk} da_j)`` in place (unsigned kernel columns at
    ``pool[base + pa[k]]``); returns :math:`-y_kG_k`."""
    q = pa[k]
    yk = ya[k]
    g = Ga[k] + yk * (dai * pool[base_i + q] + daj * pool[base_j + q])
    Ga[k] = g
    return -yk * g


@njit(inline="always")
def keep_signed(k, v, yk, kp, gp, kn, gn):
    """The per-sign running maxima ``(kp, gp, kn, gn)`` with entry ``k`` of value ``v``
    and sign ``yk`` taken in, the later index on a tie (LIBSVM's scan order)."""
    if yk > 0:
        if v >= gp:
            return k, v, kn, gn
    elif v >= gn:
        return kp, gp, k, v
    return kp, gp, kn, gn


@njit(inline="always")
def signed_update(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, lo, hi):
    """The gradient update (:func:`gradient_entry`) of the entries ``lo <= k < hi``, fused
    with the per-sign maximisers ``(kp, gp, kn, gn)`` of :math:`-y_kG_k` over
    :math:`I_{up}`: the next ``i`` of each sign class for the ν solver, and one chunk's
    candidates for :func:`parallel_update`."""
    gp = -np.inf
    gn = -np.inf
    kp = -1
    kn = -1
    for k in range(lo, hi):
        v = gradient_entry(k, Ga, ya, pa, pool, base_i, base_j, dai, daj)
        if fa[k] & 1:
            kp, gp, kn, gn = keep_signed(k, v, ya[k], kp, gp, kn, gn)
    return kp, gp, kn, gn


@njit(inline="always")
def keep_second_order(k, gd, qd_i, base_i, qa, pa, pool, kj, best):
    """``(kj, best)`` with entry ``k`` taken in when it violates (``gd > 0``) and its
    gain :func:`second_order_gain` is the smallest so far (the later on a tie); ``qd_i``
    and ``pool[base_i:]`` are :math:`Q_{ii}` and the column of ``i``."""
    if gd > 0.0:
        a = qd_i + qa[k] - 2.0 * pool[base_i + pa[k]]
        obj = second_order_gain(gd, a)
        if obj <= best:
            return k, obj
    return kj, best


@njit(inline="always")
def pick_range(k_i, base_i, gmax, sign, ya, Ga, qa, fa, pa, pool, second_order, lo, hi):
    """The candidates for ``j`` among the entries ``lo <= k < hi`` of :math:`I_{low}`
    (``sign`` 0: any sign, else only ``y_k = sign``): ``(kg, gmax2, kj, best)`` with
    ``gmax2`` the largest :math:`y_kG_k` at ``kg`` and, under the second-order rule,
    ``best`` the smallest gain :func:`second_order_gain` at ``kj`` (the last on a tie)."""
    gmax2 = -np.inf
    kg = -1
    kj = -1
    best = np.inf
    qd_i = qa[k_i] if k_i >= 0 else 0.0
    for k in range(lo, hi):
        if not (fa[k] & 2) or (sign != 0 and ya[k] != sign):
            continue
        yg = ya[k] * Ga[k]
        if yg >= gmax2:
            gmax2 = yg
            kg = k
        if second_order and k_i >= 0:
            kj, best = keep_second_order(k, gmax + yg, qd_i, base_i, qa, pa, pool, kj, best)
    return kg, gmax2, kj, best


@njit(inline="always")
def pick_result(k_i, gmax, kg, gmax2, kj, best, second_order):
    """``(kj, best, gmax2)`` of the scan for ``j``: under the first-order rule ``j`` is the
    maximiser of :math:`y_tG_t` and ``best`` :math:`-(m + y_jG_j)`; none without an
    ``i``."""
    if not second_order:
        kj = kg
        best = -(gmax + gmax2)
    if k_i < 0:
        kj = -1
    return kj, best, gmax2


def readonly(a):
    """A read-only view of ``a`` (no copy).

    Why: numba compiles a function once per argument type, and a read-only array is a
    type of its own; the data reach the compiled solvers read-only whether or not the
    caller's array was (a read-only memory map, a broadcast), so one compiled variant
    serves every call."""
    view = a.view()
    view.flags.writeable = False
    return view


def resolve_n_jobs(n_jobs):
    """Number of threads for ``n_jobs``: ``None`` → 1, ``-1`` → every core, ``-k`` →
    all but ``k - 1`` cores (joblib's convention); capped by numba's thread pool
    (``NUMBA_NUM_THREADS``)."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a nonzero integer, got {n_jobs!r}")
    # os.cpu_count only for a negative n_jobs: it reads /proc on every call
    n = int(n_jobs) if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))
    return max(1, min(n, numba.config.NUMBA_NUM_THREADS))


def threaded_smo_solve(solve, args, n_threads):
    """Run the compiled SMO loop ``solve(*args)`` with numba's pool set to ``n_threads``
    (restored afterwards; the count travels in the kernel-data tuple)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n_threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        return solve(*args)
    finally:
        numba.set_num_threads(previous)


@njit(parallel=True)
def _parallel_column(out, s, pos_s, W, X, sqn, XT, sqa, act_s, dotbuf, sparse, kcode, gamma,
                     coef0, degree):
    n_blocks = (W + BQ - 1) // BQ
    for b in prange(n_blocks):
        acc = np.empty(BQ)
        bits = np.empty(BQ, dtype=np.int64)
        q0 = b * BQ
        column_block(out, s, pos_s, q0, min(BQ, W - q0), X, sqn, XT, sqa, act_s, dotbuf,
                     sparse, kcode, gamma, coef0, degree, acc, bits)


@njit
def parallel_block_column(out, s, pos_s, W, kd):
    """:func:`~bisvm.solvers.dual._smo_blocks.block_column` with its blocks on threads (the
    sparse inner products are scattered first, on one thread)."""
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, act_s, nth = kd
    sparse = ptr.shape[0] > 0
    m = csc_dots(s, data, ind, ptr, sx) if sparse else 0
    _parallel_column(out, s, pos_s, W, X, sqn, XT, sqa, act_s, sx[SX_DOTBUF], sparse, kcode, gamma,
                     coef0, degree)
    if sparse:
        clear_dots(m, sx)


@njit(parallel=True)
def _parallel_columns4(pool, bases, rows, nr, pos, W, X, sqn, XT, sqa, kcode, gamma, coef0,
                       degree):
    n_blocks = (W + BQ4 - 1) // BQ4
    for b in prange(n_blocks):
        acc = acc4(np.int64(BQ4))
        bits = np.empty(BQ4, dtype=np.int64)
        q0 = b * BQ4
        columns4_block(pool, bases, rows, nr, pos, q0, min(BQ4, W - q0), X, sqn, XT, sqa,
                       kcode, gamma, coef0, degree, acc, bits)


@njit
def parallel_block_columns4(pool, bases, rows, nr, pos, W, kd):
    """:func:`~bisvm.solvers.dual._smo_blocks.block_columns4` with its blocks on threads."""
    _parallel_columns4(pool, bases, rows, nr, pos, W, kd[KD_X], kd[KD_SQN], kd[KD_XT],
                       kd[KD_SQA], kd[KD_KCODE], kd[KD_GAMMA], kd[KD_COEF0], kd[KD_DEGREE])


@njit(parallel=True)
def _parallel_gemm(rows, n_rows, cols, coef, X, sqn, data, ind, ptr, work, kcode, gamma, coef0,
                   degree, XCt, sqc, out):
    n_blocks = (n_rows + GEMM_ROWS - 1) // GEMM_ROWS
    for b in prange(n_blocks):
        kd = (X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree)
        XR = np.empty((GEMM_ROWS, XCt.shape[0]))
        r0 = b * GEMM_ROWS
        gemm_rows(rows, r0, min(GEMM_ROWS, n_rows - r0), cols, coef, kd, XCt, sqc, XR, out)


@njit
def parallel_block_matvec(rows, n_rows, cols, coef, kd, out):
    """:func:`~bisvm.solvers.dual._smo_blocks.block_matvec` with blocks of rows on threads
    (the BLAS path; the other one stays on one thread)."""
    if not use_gemm(kd, cols):
        block_matvec(rows, n_rows, cols, coef, kd, out)
        return
    XCt, sqc = gemm_operands(kd, cols)
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, act_s, nth = kd
    _parallel_gemm(rows, n_rows, cols, coef, X, sqn, data, ind, ptr, work, kcode, gamma, coef0,
                   degree, XCt, sqc, out)


@njit(parallel=True)
def _update_chunks(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, n_active, res, idx):
    n_chunks = idx.shape[0] // 2
    size = (n_active + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        kp, gp, kn, gn = signed_update(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj,
                                       c * size, min(n_active, (c + 1) * size))
        res[2 * c] = gp
        res[2 * c + 1] = gn
        idx[2 * c] = kp
        idx[2 * c + 1] = kn


@njit
def parallel_update(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, n_active, n_threads):
    """The gradient update of :func:`bisvm.solvers.dual._smo_kernels._step` on threads;
    returns the per-sign maximisers ``(kp, gp, kn, gn)`` of :math:`-y_tG_t` over
    :math:`I_{up}` with the serial loop's tie rule (the last maximiser)."""
    n_chunks = max(1, n_threads * CHUNKS_PER_THREAD)
    res = np.empty(2 * n_chunks)
    idx = np.empty(2 * n_chunks, dtype=np.int64)
    _update_chunks(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, n_active, res, idx)
    gp = -np.inf
    gn = -np.inf
    kp = -1
    kn = -1
    for c in range(n_chunks):
        if idx[2 * c] >= 0 and res[2 * c] >= gp:
            gp = res[2 * c]
            kp = idx[2 * c]
        if idx[2 * c + 1] >= 0 and res[2 * c + 1] >= gn:
            gn = res[2 * c + 1]
            kn = idx[2 * c + 1]
    return kp, gp, kn, gn


@njit(parallel=True)
def _pick_chunks(k_i, base_i, gmax, sign, cmp, n_active, pool, second_order, res, idx):
    ya, Ga, qa, fa, pa, va = cmp
    n_chunks = idx.shape[0] // 2
    size = (n_active + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        kg, gmax2, kj, best = pick_range(k_i, base_i, gmax, sign, ya, Ga, qa, fa, pa, pool,
                                         second_order, c * size,
                                         min(n_active, (c + 1) * size))
        res[2 * c] = gmax2
        res[2 * c + 1] = best
        idx[2 * c] = kg
        idx[2 * c + 1] = kj


@njit
def parallel_pick_j(k_i, base_i, gmax, sign, cmp, n_active, pool, second_order, n_threads):
    """:func:`bisvm.solvers.dual._smo_select.pick_j` on threads (same result, same ties)."""
    n_chunks = max(1, n_threads * CHUNKS_PER_THREAD)
    res = np.empty(2 * n_chunks)
    idx = np.empty(2 * n_chunks, dtype=np.int64)
    _pick_chunks(k_i, base_i, gmax, sign, cmp, n_active, pool, second_order, res, idx)
    gmax2 = -np.inf
    kg = -1
    kj = -1
    best = np.inf
    for c in range(n_chunks):
        if idx[2 * c] >= 0 and res[2 * c] >= gmax2:
            gmax2 = res[2 * c]
            kg = idx[2 * c]
        if idx[2 * c + 1] >= 0 and res[2 * c + 1] <= best:
            best = res[2 * c + 1]
            kj = idx[2 * c + 1]
    return pick_result(k_i, gmax, kg, gmax2, kj, best, second_order)
