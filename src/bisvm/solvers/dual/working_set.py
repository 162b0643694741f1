r"""Working-set decomposition of many variables for the SVM dual (ThunderSVM's scheme).

The problem is the generic dual of :mod:`bisvm.solvers.dual.smo`,

.. math::
    \min_{\alpha}\ \tfrac12\,\alpha^\top Q\,\alpha + p^\top\alpha
    \quad\text{s.t.}\quad y^\top\alpha = \Delta,\qquad 0 \le \alpha_t \le C_t,

:math:`Q_{tu} = y_ty_u\,k(x_{s_t}, x_{s_u}) + \delta_{tu}\,\mathrm{shift}_t`. Instead of
SMO's two variables per step, each *outer* iteration (Joachims 1999; Wen et al., "ThunderSVM:
a fast SVM library on GPUs and CPUs", JMLR 19, 2018; oneDAL's ``thunder`` method):

1. computes the violation :math:`m(\alpha) - M(\alpha)` (:math:`m = \max_{I_{up}}
   -y_tG_t`, :math:`M = \min_{I_{low}} -y_tG_t`, :math:`G = Q\alpha + p`) and stops when it
   is at most ``tol``: the certificate of :func:`~bisvm.solvers.dual.smo.solve_smo`;
2. picks a working set :math:`W` of :math:`q` variables (768 by default): the members
   chosen at the last two iterations are kept and the oldest third is replaced (first in,
   first out) by the most violating variables by :math:`-y_tG_t` not in :math:`W`, taken
   in turn from the top of :math:`I_{up}` and the bottom of :math:`I_{low}` (first order);
3. computes the kernel rows :math:`k(x_{s_a}, x_u)`, :math:`a \in W` new, over all samples
   by blocks of samples: a float32 matrix product (BLAS) into a block that stays in the
   core's cache, then the kernel's transform into the rows (the RBF kernel from
   :math:`\lVert x_a\rVert^2 + \lVert x_u\rVert^2 - 2\langle x_a, x_u\rangle`);
4. solves the subproblem in :math:`\alpha_W` (the others fixed) by SMO with LIBSVM's
   second-order pair selection on :math:`Q_{WW}`, stopping when the local violation is at
   most :math:`\max(\text{tol}, \tfrac1{10}` its first value) (ThunderSVM's local rule);
5. updates the whole gradient, :math:`G \mathrel{+}= Q_{:W}\,\Delta\alpha_W`, from the
   same rows (float64 sums), and in the same pass over the variables computes the next
   violation and keeps the best candidates of step 2 in bounded heaps (ranked by
   :math:`-y_tG_t`, then by index).

There is no shrinking, hence no gradient reconstruction; memory is the :math:`q \times n`
float32 rows plus :math:`O(l)`. The kernel values carry float32 rounding (as LIBSVM's
cache does); :math:`G` is kept in float64. The bias is LIBSVM's (the mean of
:math:`y_tG_t` over free variables, else the midpoint of the feasible interval).

With ``n_jobs`` threads the products and transforms are split by samples, and the
gradient update and the scan of step 5 by variables (numba's ``nogil`` functions and
numpy's products on a thread pool, BLAS itself on one thread). The new rows, needed only
by the gradient update, are computed on the pool while the calling thread builds
:math:`Q_{WW}` (from ``X``), runs the inner SMO and sums the kept members' part of the
update, :math:`\sum_{a\ \mathrm{kept}} y_a\Delta\alpha_a k(x_{s_a}, \cdot)`; then it
joins the pool on the rows left, and the new members' part is summed on all threads. The
kept part streams rows computed at earlier iterations from memory, and one thread
already takes about the whole memory bandwidth, so that part is overlapped with the
products (compute-bound) instead of split. Every sum
is made in the same order whatever the number of threads, and the candidates are ranked
by a total order: the iterates do not depend on ``n_jobs``.

Dense ``X`` and the linear, polynomial, RBF and sigmoid kernels, without the ν constraint;
the other cases stay with :func:`~bisvm.solvers.dual.smo.solve_smo`, which takes this
solver under ``method="auto"`` for the RBF kernel from :data:`AUTO_MIN_SAMPLES` samples
(and, with ``max_outer``, hands a long solve on to SMO when every kernel column fits in
SMO's cache).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp

from ...kernels import KERNEL_CODES
from ..base import warn_cap
from ._dual_result import dual_result
from ._smo_blocks import kernel_diag, sq_norms_dense
from ._smo_kernels import libsvm_rho
from ._smo_threads import readonly, resolve_n_jobs
from ._ws_kernels import (
    build_q,
    column_sums,
    inner_smo,
    merge_selection,
    moved,
    transform_into,
    update_and_scan,
)

__all__ = ["solve_working_set", "supports_working_set", "working_set_suits",
           "working_set_size", "PROFILE_PHASES"]

#: samples from which ``solve_smo(method="auto")`` takes this solver for the RBF kernel:
#: below it SMO, whose per-iteration cost falls with the active set, is as fast or faster
#: (the measurements are in the design notes on the dual solvers)
AUTO_MIN_SAMPLES = 3000
#: working-set size (smaller when its rows would not fit in the cache size) and the
#: share of it renewed per outer iteration: the pair that computed the fewest kernel rows
#: on the RBF workloads of ``benchmarks/bench_kernel_speed.py``
WS_SIZE = 768
NEW_SHARE = 3
#: samples (columns) per block of the kernel rows: the block's float32 product, 768 x
#: 2,048 at most, stays in the cache of the core that transforms it
COL_BLOCK = 2048

#: phases of ``stats["profile"]``: selection (the first scan and the choice of the new
#: members), rows (kernel rows: product and transform), subproblem (Q_WW and the inner
#: SMO), update (the gradient, with the scan for the next selection fused in)
PROFILE_PHASES = ("selection", "rows", "subproblem", "update")
SELECTION, ROWS, SUBPROBLEM, UPDATE = range(len(PROFILE_PHASES))

_CODES = (KERNEL_CODES["linear"], KERNEL_CODES["poly"], KERNEL_CODES["rbf"],
          KERNEL_CODES["sigmoid"])


def supports_working_set(problem):
    """Whether :func:`solve_working_set` solves ``problem``: dense ``X``, an inner-product
    kernel given by name, no ν constraint."""
    k = problem.kernel
    return (not problem.nu and not sp.issparse(problem.X)
            and getattr(k, "function", None) is None and k.code in _CODES)


def working_set_suits(problem):
    """Whether ``solve_smo(method="auto")`` takes this solver: it solves the problem, the
    kernel is RBF and there are at least :data:`AUTO_MIN_SAMPLES` samples (where it is
    faster than SMO; below, LIBSVM's iterates are kept)."""
    return (supports_working_set(problem) and problem.kernel.name == "rbf"
            and problem.X.shape[0] >= AUTO_MIN_SAMPLES)


def working_set_size(problem, cache_size):
    """:data:`WS_SIZE`, or less (at least 96) so that the float32 kernel rows of the working
    set fit in ``cache_size`` MB."""
    n = problem.X.shape[0]
    fit = int(float(cache_size) * 2**20 // (4 * n))
    return max(96, min(WS_SIZE, fit))


class _Rows:
    """The kernel rows of the working set (``q`` float32 rows of ``n`` entries, a ring of
    blocks, see :func:`_loop`) and the products made from them, split by samples (the
    rows, the gradient) or by rows (:math:`Q_{WW}`) over ``n_threads`` threads (BLAS itself
    on one thread)."""

    def __init__(self, X, kernel, q, n_threads):
        self.X32 = np.ascontiguousarray(X, dtype=np.float32)
        # the norms of the float32 rows whose products are taken (an exact distance 0
        # from a row to itself, up to the product's rounding)
        self.sqn = np.einsum("ij,ij->i", self.X32, self.X32, dtype=np.float64).astype(
            np.float32)
        self.R = np.empty((q, X.shape[0]), dtype=np.float32)
        self.W = np.empty(q * q, dtype=np.float32)
        self.d = np.empty(X.shape[0])
        self.d_new = np.empty(X.shape[0])
        self.args = (int(kernel.code), float(kernel.gamma), float(kernel.coef0),
                     float(kernel.degree))
        self.n_threads = n_threads
        self.pool = ThreadPoolExecutor(n_threads) if n_threads > 1 else None
        self.local = threading.local()

    def _cuts(self, n):
        """Bounds of the ranges of ``range(n)``, one per thread (one range on one thread
        or when ``n`` is short)."""
        k = 1 if self.pool is None or n < 2 * self.n_threads else self.n_threads
        return np.linspace(0, n, k + 1).astype(int)

    def _run(self, job, cuts):
        """``job(j, lo, hi)`` over the ranges ``cuts`` (:meth:`_cuts`): the pool's threads
        take all but the last, which the calling thread takes instead of waiting."""
        k = cuts.size - 1
        futures = [self.pool.submit(job, r, cuts[r], cuts[r + 1]) for r in range(k - 1)]
        job(k - 1, cuts[k - 1], cuts[k])
        for f in futures:
            f.result()

    def compute(self, samples, r0, wait=True):
        """Rows of ``samples`` into ``R[r0:r0 + len(samples)]``, by blocks of at most
        :data:`COL_BLOCK` samples (columns): each block's product goes to a scratch block
        of the thread (in its cache), whose transform writes the rows. With ``wait=False``
        (and threads) they are computed in the background, the blocks taken in turn by
        ``n_threads - 1`` of the pool's threads (the calling thread has the subproblem to
        solve); :meth:`finish` lets the calling thread take the blocks left, waits, and
        gives the CPU seconds the rows took. The values do not depend on the threads."""
        A = self.X32[samples]
        sa = self.sqn[samples]
        n = self.R.shape[1]
        background = not wait and self.pool is not None and n >= 4 * self.n_threads
        k = max(-(-n // COL_BLOCK), 4 * self.n_threads if background else 1)
        cuts = np.linspace(0, n, k + 1).astype(int)
        chunks = list(zip(cuts[:-1], cuts[1:]))

        def job(lo, hi):
            self._kernel_block(A, sa, self.X32[lo:hi], self.sqn, self.R, r0, lo)

        if not background:
            for lo, hi in chunks:
                job(lo, hi)
            return None
        left = iter(range(len(chunks)))
        lock = threading.Lock()

        def worker():
            c0 = time.thread_time()
            while True:
                with lock:
                    i = next(left, None)
                if i is None:
                    return time.thread_time() - c0
                job(*chunks[i])

        return [self.pool.submit(worker) for _ in range(self.n_threads - 1)], worker

    def _kernel_block(self, A, sa, B, sb, dst, r0, c0):
        """Kernel values of the rows ``A`` (squared norms ``sa``) against the rows ``B``
        into ``dst[r0:r0 + len(A), c0:c0 + len(B)]`` (``sb``: the squared norms of the
        columns of ``dst``): the product goes to this thread's scratch (in its cache),
        :func:`transform_into` writes the block once."""
        T = self._scratch(A.shape[0] * B.shape[0]).reshape(A.shape[0], B.shape[0])
        np.matmul(A, B.T, out=T)
        transform_into(T, dst, r0, c0, sa, sb, *self.args)

    def _scratch(self, size):
        """This thread's float32 scratch of at least ``size`` entries."""
        buf = getattr(self.local, "buf", None)
        if buf is None or buf.size < size:
            buf = self.local.buf = np.empty(size, dtype=np.float32)
        return buf[:size]

    @staticmethod
    def finish(pending):
        """CPU seconds of the background rows, after helping with them and waiting."""
        if pending is None:
            return 0.0
        futures, worker = pending
        return worker() + sum(f.result() for f in futures)

    def subproblem(self, var, sidx, y, kdiag, shift, Q, kd, serial=False):
        """:math:`Q_{WW}` of the working set ``var`` into ``Q`` (diagonal with the shift in
        ``kd``) from the kernel block of its samples (float32, the rows' arithmetic)."""
        samples = sidx[var]
        m = samples.shape[0]
        Xw = self.X32[samples]
        sq = self.sqn[samples]
        W = self.W[:m * m].reshape(m, m)

        def job(lo, hi):
            self._kernel_block(Xw[lo:hi], sq[lo:hi], Xw, sq, W, lo, 0)
            build_q(W, var, sidx, y, kdiag, shift, Q, kd, lo, hi)

        # serial: the threads are busy with the rows
        self._run(lambda _, lo, hi: job(lo, hi), np.array([0, m]) if serial else self._cuts(m))

    def sums(self, rws, var, delta, y, out, serial=False):
        r"""``out`` :math:`= \sum_a y_a\Delta\alpha_a k(x_{s_a}, \cdot)` over the members
        ``var`` that moved (rows ``rws``), split by samples unless ``serial``; returns
        how many moved (``out`` is left as it was when none did)."""
        nz_rows, c, nz = moved(rws, var, delta, y)
        if nz == 0:
            return 0
        cuts = np.array([0, out.size]) if serial else self._cuts(out.size)
        self._run(lambda _, lo, hi: column_sums(self.R, nz_rows, c, nz, out, lo, hi), cuts)
        return nz

    def member_sums(self, rws, var, delta, y, summed=None):
        r"""``self.d`` :math:`= \sum_a y_a\Delta\alpha_a k(x_{s_a}, \cdot)` over the
        members ``var`` (rows ``rws``); whether any moved. ``summed = (mask, nz)``: the
        members of ``mask`` were summed into ``self.d`` already (:meth:`sums`, ``nz`` of
        them moved); the others are added to them."""
        if summed is None:
            return bool(self.sums(rws, var, delta, y, self.d))
        mask, nz_done = summed
        rest = ~mask
        nz = self.sums(rws[rest], var[rest], delta[rest], y,
                       self.d_new if nz_done else self.d)
        if nz_done and nz:
            self.d += self.d_new
        return bool(nz_done or nz)

    def scan(self, G, y, sidx, add, alpha, upper, in_ws, k):
        r""":math:`G_t \mathrel{+}= y_t d_{s_t}` (when ``add``, ``d = self.d``) fused with
        the scan for the selection (:func:`update_and_scan`), split by variables; returns
        the arguments of :func:`merge_selection` before ``in_ws``."""
        cuts = self._cuts(G.shape[0])
        r = cuts.size - 1
        uk, lk = np.empty((r, k)), np.empty((r, k))
        ui, li = np.empty((r, k), dtype=np.int64), np.empty((r, k), dtype=np.int64)
        res = np.empty((r, 2))
        counts = np.zeros((r, 2), dtype=np.int64)

        def job(j, lo, hi):
            mj, Mj, counts[j, 0], counts[j, 1] = update_and_scan(
                G, y, sidx, self.d, add, alpha, upper, in_ws, k, lo, hi, uk[j], ui[j],
                lk[j], li[j])
            res[j] = mj, Mj

        self._run(job, cuts)
        return (res[:, 0].max(), res[:, 1].min(), uk, ui, counts[:, 0].copy(), lk, li,
                counts[:, 1].copy())

    def close(self):
        if self.pool is not None:
            self.pool.shutdown()


def _initial_gradient(rows, alpha, y, p, shift, sample_index, q):
    r""":math:`G = Q\alpha + p` from the rows of the support (blocks of ``q`` rows)."""
    G = np.array(p, dtype=np.float64)
    sv = np.flatnonzero(alpha > 0)
    for b0 in range(0, sv.size, q):
        var = sv[b0:b0 + q]
        # on threads the pool and this thread share the rows (nothing else to do here)
        rows.finish(rows.compute(sample_index[var], 0, wait=False))
        if rows.member_sums(np.arange(var.size), var, alpha[var], y):
            G += y * rows.d[sample_index]
        G[var] += shift[var] * alpha[var]
    return G


def solve_working_set(problem, *, alpha0=None, tol=1e-3, max_iter=-1, n_jobs=None,
                      ws_size=WS_SIZE, n_new=None, max_inner=None, max_outer=None,
                      progress=None):
    """Solve a :class:`~bisvm.solvers.problems.DualProblem` by working sets of many variables.

    Parameters
    ----------
    problem : DualProblem
        Dense ``X``, a linear, poly, RBF or sigmoid kernel, ``nu`` false
        (:func:`supports_working_set`).
    alpha0 : ndarray of shape (l,), optional
        Feasible warm start (``0 <= alpha0 <= upper``; its ``y @ alpha0`` fixes Δ).
    tol : float > 0
        Stop when :math:`m(\\alpha) - M(\\alpha) \\le` ``tol``.
    max_iter : int
        Cap on the total number of inner SMO steps (``-1``: max(10⁷, 100·l), as
        :func:`~bisvm.solvers.dual.smo.solve_smo`); stopping on it warns with
        ``ConvergenceWarning``.
    n_jobs : int or None
        Threads for the kernel rows (BLAS and the transform) and the gradient update.
    ws_size : int
        Working-set size :math:`q` (even; at most ``l``).
    n_new : int, optional
        New members per outer iteration (``q // 3`` by default; ``q`` is rounded down to
        a multiple of it).
    max_inner : int, optional
        Cap on the inner SMO steps per subproblem (default ``10 q``).
    max_outer : int, optional
        Stop after this many outer iterations, without a warning (unconverged unless the
        violation is already within ``tol``; ``stats["n_outer"]`` says where it
        stopped): :func:`~bisvm.solvers.dual.smo.solve_smo` hands such a solve on to
        SMO.
    progress : callable, optional
        Called after each outer iteration as ``progress(1, violation=...)`` with the
        violation :math:`m - M` then reached (a :class:`bisvm.progress.Progress`).

    Returns
    -------
    SolverResult
        As :func:`~bisvm.solvers.dual.smo.solve_smo`: certificate
        ``"max_violating_pair"``; ``n_iter`` the inner SMO steps; ``stats``:
        ``dual_gradient``, ``n_kernel_columns`` (kernel rows computed), ``n_outer``
        (outer iterations), ``mean_active_size`` (``l``: no shrinking),
        ``nu_multiplier`` (0) and ``profile`` (CPU seconds of the process per phase,
        :data:`PROFILE_PHASES`, plus ``other`` and ``total``; with threads, the sum over
        them).
    """
    if not supports_working_set(problem):
        raise ValueError("the working-set solver needs dense X, a linear, poly, rbf or "
                         "sigmoid kernel and no nu constraint")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    start = time.perf_counter()
    cpu0 = time.process_time()
    l = problem.n_variables
    y = np.ascontiguousarray(problem.y, dtype=np.float64)
    p = np.ascontiguousarray(problem.p, dtype=np.float64)
    upper = np.ascontiguousarray(problem.upper, dtype=np.float64)
    shift = np.ascontiguousarray(problem.shift, dtype=np.float64)
    sidx = np.ascontiguousarray(problem.sample_index, dtype=np.int64)
    alpha = start_alpha(problem, alpha0, upper)
    X = readonly(np.ascontiguousarray(problem.X, dtype=np.float64))  # one compiled variant
    n = X.shape[0]
    k = problem.kernel
    sqn = np.empty(n)
    sq_norms_dense(X, sqn)
    kdiag = kernel_diag(sqn, int(k.code), float(k.gamma), float(k.coef0), float(k.degree))
    q = max(2, min(int(ws_size), l))
    nb = max(1, q // NEW_SHARE) if n_new is None else int(n_new)
    if not 1 <= nb <= q:
        raise ValueError(f"n_new must be in [1, ws_size={q}], got {n_new!r}")
    q = nb * (q // nb)
    cap = int(max_iter) if max_iter >= 0 else max(10_000_000, 100 * l)
    max_inner = 10 * q if max_inner is None else int(max_inner)
    n_threads = resolve_n_jobs(n_jobs)
    rows = _Rows(X, k, q, n_threads)
    try:
        with _single_thread_blas():
            G = _initial_gradient(rows, alpha, y, p, shift, sidx, q)
            out = _loop(rows, G, alpha, y, upper, shift, sidx, kdiag, q, nb, float(tol),
                        cap, max_inner, progress, max_outer)
    finally:
        rows.close()
    return _result(problem, alpha, G, out, (start, cpu0), n, cap, tol, upper, y,
                   warn=max_outer is None or out[1] < max_outer)


def start_alpha(problem, alpha0, upper):
    """The feasible start of a dual solve: ``alpha0``, else ``problem.alpha_start``, else
    zero (a copy the solver may overwrite); ``ValueError`` if ``alpha0`` is infeasible."""
    l = problem.n_variables
    if alpha0 is None and problem.alpha_start is not None:
        alpha0 = problem.alpha_start
    if alpha0 is None:
        return np.zeros(l)
    alpha = np.array(alpha0, dtype=np.float64)
    if alpha.shape != (l,):
        raise ValueError(f"alpha0 must have shape ({l},), got {alpha.shape}")
    if np.any(alpha < 0) or np.any(alpha > upper):
        raise ValueError("alpha0 must satisfy 0 <= alpha0 <= upper")
    return alpha


class _single_thread_blas:
    """BLAS on one thread for the solve (restored after): the solver splits its products
    over its own threads, and idle BLAS threads would spin against them."""

    def __enter__(self):
        import scipy.linalg.cython_blas  # noqa: F401  (load the BLAS numpy uses)
        from threadpoolctl import threadpool_limits

        self.limits = threadpool_limits(limits=1, user_api="blas")
        return self

    def __exit__(self, *exc):
        self.limits.restore_original_limits()


def _loop(rows, G, alpha, y, upper, shift, sidx, kdiag, q, nb, tol, cap, max_inner,
          progress=None, max_outer=None):
    """The outer iterations; returns ``(n_inner, n_outer, converged, gap, n_rows, prof)``.

    ``R`` is a ring of ``q // nb`` blocks of ``nb`` rows: the first iteration fills them
    all, each later one overwrites the oldest block with ``nb`` new members (first in,
    first out) and keeps the members of the others. The scan for the next selection is
    fused with the gradient update (:meth:`_Rows.scan`): it skips the members the next
    iteration keeps."""
    l = G.shape[0]
    n_blocks = q // nb
    in_ws = np.zeros(l, dtype=np.bool_)
    new = np.empty(q, dtype=np.int64)
    blocks = [np.empty(0, dtype=np.int64) for _ in range(n_blocks)]
    Qbuf = np.empty(q * q)
    kdbuf = np.empty(q)
    clock = _PhaseClock()
    n_inner = n_outer = n_rows = 0
    converged = False
    scan = rows.scan(G, y, sidx, False, alpha, upper, in_ws, q)
    clock.lap(SELECTION)
    while True:
        clock.restart()
        oldest = n_outer % n_blocks
        gap = scan[0] - scan[1]
        cnt = merge_selection(*scan, in_ws, q if n_outer == 0 else nb, new)
        clock.lap(SELECTION)
        if gap <= tol:
            converged = True
            break
        if n_inner >= cap or (max_outer is not None and n_outer >= max_outer):
            break
        fresh = new[:cnt].copy()
        # the new rows are not needed before the gradient update: on threads they are
        # computed while this thread solves the subproblem (its Q_WW comes from X)
        pending = rows.compute(sidx[fresh], 0 if n_outer == 0 else oldest * nb, wait=False)
        if n_outer == 0:
            blocks = [fresh[b * nb:(b + 1) * nb] for b in range(n_blocks)]
        else:
            blocks[oldest] = fresh
        n_rows += cnt
        clock.lap(ROWS)
        var = np.concatenate(blocks)
        rws = np.concatenate([b * nb + np.arange(blocks[b].size) for b in range(n_blocks)])
        m = var.size
        Q = Qbuf[:m * m].reshape(m, m)
        kd = kdbuf[:m]
        rows.subproblem(var, sidx, y, kdiag, shift, Q, kd, serial=pending is not None)
        aw = alpha[var]
        a_old = aw.copy()
        Gw = G[var]
        steps = inner_smo(Q, kd, y[var], aw, upper[var], Gw, tol,
                          min(max_inner, max(1, cap - n_inner)))
        n_inner += steps
        delta = aw - a_old
        summed = None
        kept_cpu = time.thread_time()
        if n_outer > 0:
            # the kept members' rows exist: on threads their part of the update,
            # memory-bound, runs here while the pool computes the new rows (on one thread
            # too, so that the sums, hence the iterates, do not depend on the threads)
            kept = rws // nb != oldest
            summed = (kept, rows.sums(rws[kept], var[kept], delta[kept], y, rows.d,
                                      serial=True))
        kept_cpu = time.thread_time() - kept_cpu
        row_cpu = rows.finish(pending)
        # CPU of the rows: the whole call on one thread, the jobs' own clocks on threads
        clock.lap(SUBPROBLEM, row_cpu, kept_cpu)
        clock.charge(ROWS, row_cpu)
        clock.charge(UPDATE, kept_cpu)
        alpha[var] = aw
        add = rows.member_sums(rws, var, delta, y, summed)
        G[var] += shift[var] * delta
        # the next iteration keeps every block but its oldest
        nxt = [blocks[b] for b in range(n_blocks) if b != (n_outer + 1) % n_blocks]
        for mem in nxt:
            in_ws[mem] = True
        scan = rows.scan(G, y, sidx, add, alpha, upper, in_ws, nb)
        for mem in nxt:
            in_ws[mem] = False
        clock.lap(UPDATE)
        n_outer += 1
        if progress is not None:
            progress(1, violation=f"{scan[0] - scan[1]:.3g}")
        if steps == 0 and cnt == 0:
            break  # stalled: no new member and no step (rounding); reported unconverged
    return n_inner, n_outer, converged, gap, n_rows, clock.seconds


class _PhaseClock:
    """Process CPU seconds per phase of the outer loop (:data:`PROFILE_PHASES`): each lap
    charges the time since the previous mark to one phase, so the phases add up to the
    loop's time. A handful of clock reads per outer iteration, against the kernel rows
    of a whole working set, so the loop is always timed."""

    def __init__(self):
        self.seconds = np.zeros(len(PROFILE_PHASES))
        self.mark = time.process_time()

    def restart(self):
        """Start the next lap now."""
        self.mark = time.process_time()

    def lap(self, phase, *elsewhere):
        """Charge the time since the mark to ``phase``, less the seconds ``elsewhere``
        that are charged to other phases, and start the next lap."""
        now = time.process_time()
        spent = now - self.mark
        for seconds in elsewhere:
            spent -= seconds
        self.seconds[phase] += spent
        self.mark = now

    def charge(self, phase, seconds):
        """Add ``seconds`` measured by another clock (the threads' own) to ``phase``."""
        self.seconds[phase] += seconds


def _result(problem, alpha, G, out, start, n_samples, cap, tol, upper, y, warn=True):
    n_inner, n_outer, converged, gap, n_rows, prof = out
    seconds = time.perf_counter() - start[0]
    cpu = time.process_time() - start[1]
    if not converged and warn:
        warn_cap("working-set SMO", cap, float(gap), float(tol))
    rho = libsvm_rho(y, G, alpha, upper)
    profile = {name: float(prof[i]) for i, name in enumerate(PROFILE_PHASES)}
    profile["other"] = max(0.0, cpu - sum(profile.values()))
    profile["total"] = cpu
    return dual_result(
        problem, alpha, G, rho=rho, gap=max(gap, 0.0), n_iter=n_inner, converged=converged,
        seconds=seconds, n_samples=n_samples,
        stats={"dual_gradient": G, "n_kernel_columns": int(n_rows), "n_outer": int(n_outer),
               "mean_active_size": float(G.shape[0]), "nu_multiplier": 0.0,
               "profile": MappingProxyType(profile)})
