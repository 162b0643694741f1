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
changes the time, never the result. Short loops (fewer than :data:`MIN_PARALLEL`
variables) stay serial: below that a thread launch costs more than it saves.

The first threaded fit compiles these functions (about half a minute; the machine code is
then cached on disk).
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
    _parallel_column(out, s, pos_s, W, X, sqn, XT, sqa, act_s, sx[4], sparse, kcode, gamma,
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
    _parallel_columns4(pool, bases, rows, nr, pos, W, kd[0], kd[1], kd[11], kd[12], kd[6],
                       kd[7], kd[8], kd[9])


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
    _parallel_gemm(rows, n_rows, cols, coef, kd[0], kd[1], kd[2], kd[3], kd[4], kd[5], kd[6],
                   kd[7], kd[8], kd[9], XCt, sqc, out)


@njit(parallel=True)
def _update_chunks(Ga, ya, fa, pa, pool, base_i, base_j, dai, daj, n_active, res, idx):
    n_chunks = idx.shape[0] // 2
    size = (n_active + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        gp = -np.inf
        gn = -np.inf
        kp = -1
        kn = -1
        for k in range(c * size, min(n_active, (c + 1) * size)):
            q = pa[k]
            yk = ya[k]
            g = Ga[k] + yk * (dai * pool[base_i + q] + daj * pool[base_j + q])
            Ga[k] = g
            if fa[k] & 1:
                v = -yk * g
                if yk > 0:
                    if v >= gp:
                        gp = v
                        kp = k
                elif v >= gn:
                    gn = v
                    kn = k
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
    qd_i = qa[k_i] if k_i >= 0 else 0.0
    for c in prange(n_chunks):
        gmax2 = -np.inf
        kg = -1
        kj = -1
        best = np.inf
        for k in range(c * size, min(n_active, (c + 1) * size)):
            if not (fa[k] & 2) or (sign != 0 and ya[k] != sign):
                continue
            yg = ya[k] * Ga[k]
            if yg >= gmax2:
                gmax2 = yg
                kg = k
            if second_order and k_i >= 0:
                gd = gmax + yg
                if gd > 0.0:
                    a = qd_i + qa[k] - 2.0 * pool[base_i + pa[k]]
                    obj = second_order_gain(gd, a)
                    if obj <= best:
                        best = obj
                        kj = k
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
    if not second_order:
        kj = kg
        best = -(gmax + gmax2)
    if k_i < 0:
        kj = -1
    return kj, best, gmax2
