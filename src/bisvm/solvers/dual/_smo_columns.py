r"""The kernel-column provider of the SMO solver: the LRU column cache, the dispatch of
kernel columns and kernel-vector products, and the gradient rebuilt from them (numba).

Every routine reaches the data through one *kernel-data tuple* ``kd`` built by
:func:`bisvm.solvers.dual.smo.kernel_data`::

    kd = (X, sqn, data, indices, indptr, work, kcode, gamma, coef0, degree, sx,
          XT, sqa, act, n_threads)
    sx = (tdata, tindices, tindptr, unused, dotbuf, mark, touched)

Their positions are named ``KD_*`` and ``SX_*`` in :mod:`bisvm.solvers.dual._smo_layout`.

* dense rows: ``X`` is the ``(n, d)`` matrix (or the ``(n, n)`` Gram matrix for
  ``PRECOMPUTED``) and ``indptr`` is empty;
* CSR rows: ``X`` is an empty ``(n, 0)`` array that only carries ``n``, and
  ``data, indices, indptr`` are the canonical CSR arrays (sorted indices, no duplicate or
  stored zero entries);
* ``sqn`` holds :math:`\lVert x_s\rVert_2^2` (summed sequentially, see
  :mod:`bisvm.solvers.dual._smo_blocks`), ``work`` is a zero vector of length ``d`` (sparse
  Laplacian only) that a kernel evaluation fills with one row and clears again;
* ``sx`` (sparse only) holds the same matrix in CSC form ``(tdata, tindices, tindptr)``
  and scratch arrays of length ``n`` (``dotbuf`` zero, ``mark`` false, ``touched``);
* ``XT`` (dense inner-product kernels) is the transpose of the active rows, ``sqa`` their
  norms and ``act`` their samples, compacted with the cache (:func:`restrict_cache`);
* ``n_threads > 1`` sends columns and kernel-vector products to
  :mod:`bisvm.solvers.dual._smo_threads`.

The inner-product kernels (linear, polynomial, RBF, sigmoid) are computed in blocks by
:mod:`bisvm.solvers.dual._smo_blocks`, bit-identically for dense and sparse rows; the
Laplacian and precomputed kernels entry by entry by
:mod:`bisvm.solvers.dual._smo_direct`.
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit
from ._smo_blocks import (
    block_column,
    block_columns4,
    block_matvec,
    compact_active,
)
from ._smo_direct import (
    LAPLACIAN,
    PRECOMPUTED,
    fill_dense,
    fill_sparse,
    matvec_dense_direct,
    matvec_laplacian_sparse,
)
from ._smo_layout import (
    CACHE_ACT,
    CACHE_CTR,
    CACHE_OWNER,
    CACHE_POOL,
    CACHE_POS_OF,
    CACHE_SLOT_OF,
    CACHE_SPEC,
    CTR_CLOCK,
    CTR_COMPUTED,
    CTR_GENERATION,
    CTR_GUESSED,
    CTR_GUESSES_USED,
    CTR_RUNS,
    CTR_SLOTS,
    CTR_SPACING,
    CTR_USED,
    CTR_WIDTH,
    KD_INDPTR,
    KD_KCODE,
    KD_THREADS,
    KD_X,
    PROF_COLUMNS,
)
from ._smo_threads import (
    parallel_block_column,
    parallel_block_columns4,
    parallel_block_matvec,
)
from ._smo_timer import charge, tick


@njit
def fill_column(out, s, pos_s, W, kd):
    """``out[q] = k(x_s, x_{act_s[q]})`` for the ``W`` active samples (compact order);
    ``pos_s`` is the position of ``s`` among them (-1: inactive).

    NumPy equivalent: ``out[:W] = kernel(X[s:s+1], X[act_s[:W]])[0]``. The inner-product
    kernels are computed in blocks (:mod:`bisvm.solvers.dual._smo_blocks`, threaded when
    ``kd[KD_THREADS] > 1``); for ``PRECOMPUTED`` ``X`` is the symmetric Gram matrix and the
    column is read from row ``s``.
    """
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, act_s, nth = kd
    if kcode == LAPLACIAN and ptr.shape[0] > 0:
        fill_sparse(out, s, act_s, W, data, ind, ptr, work, sqn, kcode, gamma, coef0, degree)
    elif kcode == LAPLACIAN or kcode == PRECOMPUTED:
        fill_dense(out, s, act_s, W, X, sqn, kcode, gamma, coef0, degree)
    elif nth > 1:
        parallel_block_column(out, s, pos_s, W, kd)
    else:
        block_column(out, s, pos_s, W, kd)


@njit
def kernel_matvec(rows, n_rows, cols, coef, kd, out):
    """``out[r] = sum_c coef[c] k(x_{rows[r]}, x_{cols[c]})``: the inner-product kernels
    by the blocked products of :mod:`bisvm.solvers.dual._smo_blocks` (identical for dense and
    sparse rows, threaded when ``kd[KD_THREADS] > 1``), the others entry by entry.

    NumPy equivalent: ``out[:n_rows] = kernel(X[rows[:n_rows]], X[cols]) @ coef``.
    """
    for r in range(n_rows):
        out[r] = 0.0
    if cols.shape[0] == 0 or n_rows == 0:
        return
    kcode = kd[KD_KCODE]
    if kcode == LAPLACIAN and kd[KD_INDPTR].shape[0] > 0:
        matvec_laplacian_sparse(rows, n_rows, cols, coef, kd, out)
    elif kcode == LAPLACIAN or kcode == PRECOMPUTED:
        matvec_dense_direct(rows, n_rows, cols, coef, kd, out)
    elif kd[KD_THREADS] > 1:
        parallel_block_matvec(rows, n_rows, cols, coef, kd, out)
    else:
        block_matvec(rows, n_rows, cols, coef, kd, out)


#: guessed columns that may go unused before guessing stops (about three batches: a
#: guess is only counted as used when it is read, some iterations later)
SPEC_SLACK = 12
#: compactions a cached column may lag behind before all are applied at once
MAX_GENERATIONS = 32


@njit
def new_cache(pool, n, prof):
    """Empty column cache over the pool, every sample active.

    ``cache = (pool, slot_of, owner, stamp, ctr, act_s, pos_of, prof, spec, sgen, runs)``
    (positions named ``CACHE_*`` in :mod:`bisvm.solvers.dual._smo_layout`):
    ``slot_of[s]`` is the slot of sample ``s``'s column (-1: not cached), ``owner[k]`` the
    sample of slot ``k``, ``stamp`` the LRU clock values, ``ctr`` the counters named
    ``CTR_*`` (the clock, the column length ``W``, the columns computed, the slots that
    fit and those in use, the guesses made and read, the slot spacing ``S >= W`` with
    slot ``k`` at offset ``k S``, the layout generation and the number of compaction
    runs), ``act_s`` the active samples in increasing order, ``pos_of[s]`` the position of
    sample ``s`` in a column, ``prof`` the profile counters (``prof[PROF_COLUMNS]``: cycles
    spent computing columns), ``spec[s]`` whether the cached column of ``s`` was a guess
    (:func:`get_column_batch`) not read yet, ``sgen[k]`` the layout generation of slot
    ``k``'s column and ``runs = (src, dst, length, first)`` the compactions between
    generations (see :func:`restrict_cache`)."""
    ctr = np.zeros(10, dtype=np.int64)
    ctr[CTR_WIDTH] = n
    ctr[CTR_SLOTS] = min(n, pool.shape[0] // max(n, 1))
    ctr[CTR_SPACING] = n
    runs = (np.empty(n + MAX_GENERATIONS + 1, dtype=np.int64),
            np.empty(n + MAX_GENERATIONS + 1, dtype=np.int64),
            np.empty(n + MAX_GENERATIONS + 1, dtype=np.int64),
            np.zeros(MAX_GENERATIONS + 2, dtype=np.int64))
    return (pool, np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64),
            np.zeros(n, dtype=np.int64), ctr, np.arange(n), np.arange(n), prof,
            np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int64), runs)


@njit
def _slot(s, cache):
    """A slot for sample ``s``: the next free one (occupied slots are always a prefix,
    ``ctr[CTR_USED]`` long), else the least recently used one, whose column is evicted."""
    pool, slot_of, owner, stamp, ctr, act_s, pos_of, prof, spec, sgen, runs = cache
    if ctr[CTR_USED] < ctr[CTR_SLOTS]:
        best = ctr[CTR_USED]
        ctr[CTR_USED] += 1
    else:
        best = 0
        best_stamp = stamp[0]
        for k in range(ctr[CTR_SLOTS]):
            if stamp[k] < best_stamp:
                best_stamp = stamp[k]
                best = k
        slot_of[owner[best]] = -1
        spec[owner[best]] = False
    owner[best] = s
    slot_of[s] = best
    stamp[best] = ctr[CTR_CLOCK]
    sgen[best] = ctr[CTR_GENERATION]  # about to be computed in the current layout
    return best


@njit
def get_column(s, cache, kd):
    """Offset in ``pool`` of the (active-sample) kernel column of sample ``s``, computed on
    a miss with least-recently-used eviction."""
    pool, slot_of, owner, stamp, ctr, act_s, pos_of, prof, spec, sgen, runs = cache
    W = ctr[CTR_WIDTH]
    S = ctr[CTR_SPACING]
    ctr[CTR_CLOCK] += 1
    slot = slot_of[s]
    if slot >= 0:
        stamp[slot] = ctr[CTR_CLOCK]
        if spec[s]:  # a guessed column is used
            spec[s] = False
            ctr[CTR_GUESSES_USED] += 1
        if sgen[slot] != ctr[CTR_GENERATION]:  # compactions deferred by restrict_cache
            t0 = tick()
            _catch_up(slot, cache, ctr[CTR_GENERATION])
            charge(prof, PROF_COLUMNS, t0)
        return slot * S
    best = _slot(s, cache)
    t0 = tick()
    fill_column(pool[best * S:best * S + W], s, pos_of[s], W, kd)
    charge(prof, PROF_COLUMNS, t0)
    ctr[CTR_COMPUTED] += 1
    return best * S


@njit(inline="always")
def cached_offset(s, slot_of, stamp, ctr, spec, sgen):
    """The hit path of :func:`get_column` on the cache's own arrays: the pool offset of
    the column of ``s`` when it is cached in the current layout (LRU clock, stamp and
    guess accounting updated exactly as :func:`get_column` does), else -1 with nothing
    changed, so that the caller falls back to :func:`get_column`.

    Why: a numba call that takes the cache or kernel-data tuple takes a reference to
    every array in it on entry and drops it on exit (two atomic operations per array,
    some thirty arrays), which on a small active set costs more than the iteration's
    arithmetic; the hit path touches five arrays only."""
    slot = slot_of[s]
    if slot < 0 or sgen[slot] != ctr[CTR_GENERATION]:
        return -1
    ctr[CTR_CLOCK] += 1
    stamp[slot] = ctr[CTR_CLOCK]
    if spec[s]:
        spec[s] = False
        ctr[CTR_GUESSES_USED] += 1
    return slot * ctr[CTR_SPACING]


@njit(inline="always")
def still_cached(s, base, slot_of, ctr):
    """:func:`is_cached` on the cache's own arrays (see :func:`cached_offset`)."""
    slot = slot_of[s]
    return slot >= 0 and slot * ctr[CTR_SPACING] == base


@njit
def batchable(kd):
    """Whether columns can be computed four at a time: dense rows, inner-product kernel."""
    return kd[KD_INDPTR].shape[0] == 0 and kd[KD_KCODE] != LAPLACIAN and kd[KD_KCODE] != PRECOMPUTED


@njit
def guessing(cache):
    """Whether a miss may also compute guessed columns: while at least about half of the
    guesses so far were used. With fewer (small or polynomial problems, where the next
    working set is harder to foresee) a guess costs more than it saves (its share of the
    four-column pass and of the transform); guessing resumes once enough earlier guesses
    are read.
    The iterates do not depend on it (a column has the same values either way)."""
    ctr = cache[CACHE_CTR]
    return 2 * ctr[CTR_GUESSES_USED] + SPEC_SLACK >= ctr[CTR_GUESSED]


@njit
def get_column_batch(s, cache, kd, cand, n_cand):
    """:func:`get_column`, and on a miss the columns of the candidates ``cand[:n_cand]``
    (samples likely to be needed soon, not cached) computed in the same pass over the
    data, into free slots only (a guess never evicts a column)."""
    pool, slot_of, owner, stamp, ctr, act_s, pos_of, prof, spec, sgen, runs = cache
    if slot_of[s] >= 0 or n_cand == 0 or not batchable(kd) or ctr[CTR_USED] + 1 >= ctr[CTR_SLOTS]:
        return get_column(s, cache, kd)
    if not guessing(cache):
        return get_column(s, cache, kd)
    W = ctr[CTR_WIDTH]
    S = ctr[CTR_SPACING]
    ctr[CTR_CLOCK] += 1
    rows = np.empty(4, dtype=np.int64)
    bases = np.empty(4, dtype=np.int64)
    pos = np.empty(4, dtype=np.int64)
    rows[0] = s
    bases[0] = _slot(s, cache) * S
    # typed counters, not literals: numba would compile the callees once more for the
    # literal value the first pass of its type inference sees
    nr = np.int64(1)
    for c in range(n_cand):
        t = cand[c]
        if nr < 4 and slot_of[t] < 0 and ctr[CTR_USED] < ctr[CTR_SLOTS]:
            rows[nr] = t
            bases[nr] = _slot(t, cache) * S
            spec[t] = True
            ctr[CTR_GUESSED] += 1
            nr += 1
    for u in range(4):
        if u >= nr:
            rows[u] = rows[nr - 1]
        pos[u] = pos_of[rows[u]]
    t0 = tick()
    if kd[KD_THREADS] > 1:
        parallel_block_columns4(pool, bases, rows, nr, pos, W, kd)
    else:
        block_columns4(pool, bases, rows, nr, pos, W, kd)
    charge(prof, PROF_COLUMNS, t0)
    ctr[CTR_COMPUTED] += nr
    return bases[0]


@njit
def is_cached(s, base, cache):
    """Whether the column at pool offset ``base`` still belongs to sample ``s``."""
    slot = cache[CACHE_SLOT_OF][s]
    return slot >= 0 and slot * cache[CACHE_CTR][CTR_SPACING] == base


@njit
def clear_cache(cache):
    """Forget every cached column."""
    slot_of = cache[CACHE_SLOT_OF]
    owner = cache[CACHE_OWNER]
    spec = cache[CACHE_SPEC]
    for k in range(owner.shape[0]):
        if owner[k] >= 0:
            slot_of[owner[k]] = -1
            spec[owner[k]] = False
            owner[k] = -1
    cache[CACHE_CTR][CTR_USED] = 0
    cache[CACHE_CTR][CTR_GENERATION] = 0  # no column left to catch up
    cache[CACHE_CTR][CTR_RUNS] = 0


@njit
def gradient_from_scratch(which, kd, sidx, y, p, shift, alpha, G):
    r"""``G_t = p_t + y_t \sum_s c_s k(x_{s_t}, x_s) + shift_t alpha_t`` for ``which[t]``,
    with :math:`c_s = \sum_{u: s_u = s}\alpha_u y_u` (one kernel-vector product over the
    support vectors): :func:`gradient_since` from the snapshot :math:`(\alpha, G) = (0, p)`."""
    gradient_since(which, kd, sidx, y, shift, alpha, np.zeros_like(alpha), p, G)


@njit
def gradient_since(which, kd, sidx, y, shift, alpha, alpha_ref, G_ref, G):
    r"""Bring ``G_t`` for ``which[t]`` from a snapshot to the current ``alpha``:

    .. math:: G_t = G^{\text{ref}}_t + y_t \sum_s c_s k(x_{s_t}, x_s)
              + \text{shift}_t(\alpha_t - \alpha^{\text{ref}}_t),\qquad
              c_s = \sum_{u: s_u = s}(\alpha_u - \alpha^{\text{ref}}_u) y_u,

    exact because the gradient :math:`Q\alpha + p` is affine in :math:`\alpha`
    (``G_ref`` must be the full gradient at ``alpha_ref``). One kernel-vector product over
    the samples whose coefficient moved since the snapshot only. This plays the part of
    LIBSVM's :math:`\bar G` (Chang & Lin 2011, §5.1), which keeps
    :math:`\sum_{\alpha_j = C_j} C_jQ_{tj}` for every ``t`` so that only the free
    variables enter the rebuild: between two rebuilds of a converging solve, the
    variables that move are essentially the free ones, and no full-length column is
    needed each time a variable reaches or leaves its upper bound."""
    n = kd[KD_X].shape[0]
    l = y.shape[0]
    c = np.zeros(n)
    for u in range(l):
        if alpha[u] != alpha_ref[u]:
            c[sidx[u]] += (alpha[u] - alpha_ref[u]) * y[u]
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
    n_rows = np.int64(0)  # typed, not a literal (see get_column_batch)
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
            G[t] = G_ref[t] + y[t] * v[row_of[sidx[t]]] + shift[t] * (alpha[t] - alpha_ref[t])


@njit
def _move(pool, ob, nb, src, dst, length, r0, r1):
    """Runs ``r0 .. r1-1`` of a compaction applied to the column at offset ``ob``, written
    at ``nb <= ob``: a forward copy (``dst <= src``), so no entry is overwritten before it
    is read."""
    for r in range(r0, r1):
        a = ob + src[r]
        b = nb + dst[r]
        for q in range(length[r]):
            pool[b + q] = pool[a + q]


@njit
def _catch_up(slot, cache, g):
    """Bring the column of ``slot`` from its layout generation to generation ``g``."""
    pool, slot_of, owner, stamp, ctr, act_s, pos_of, prof, spec, sgen, runs = cache
    src, dst, length, first = runs
    base = slot * ctr[CTR_SPACING]
    for h in range(sgen[slot] + 1, g + 1):
        _move(pool, base, base, src, dst, length, first[h], first[h + 1])
    sgen[slot] = g


@njit
def _compaction_runs(act_s, old_pos, m, src, dst, length, at):
    """The kept entries as runs of consecutive old positions, written from index ``at``
    of ``(src, dst, length)``; returns the number of runs (a column is then moved run by
    run, in contiguous copies, instead of gathered entry by entry)."""
    n_runs = 0
    for q in range(m):
        o = old_pos[act_s[q]]
        r = at + n_runs - 1
        if q == 0 or o != src[r] + (q - dst[r]):
            src[at + n_runs] = o
            dst[at + n_runs] = q
            n_runs += 1
    for r in range(at, at + n_runs - 1):
        length[r] = dst[r + 1] - dst[r]
    if n_runs > 0:
        length[at + n_runs - 1] = m - dst[at + n_runs - 1]
    return n_runs


@njit
def restrict_cache(cache, active, n_active, sidx, kd):
    """Make the samples of the variables ``active[:n_active]`` the active samples.

    When they are a subset of the previous active samples the cached columns are
    compacted in place (LIBSVM obtains the same effect by swapping indices); otherwise the
    cache is emptied. When the cache is at least three quarters full, every column is
    compacted now and the slots are packed closer (spacing ``S = W``), so that the freed
    room becomes new slots. Otherwise the compaction is recorded as a new layout
    generation and applied to a column only when it is next read (:func:`get_column`,
    counted as column time): moving every cached column at every shrink would dominate
    the shrinking time, and a column never read again is then never moved. A cache with a
    slot for every sample (all columns fit) always defers: packing gains it nothing.
    The transposed active rows of the blocked columns are compacted now.
    Returns the new column length ``W``."""
    pool, slot_of, owner, stamp, ctr, act_s, pos_of, prof, spec, sgen, runs = cache
    n = slot_of.shape[0]
    W = ctr[CTR_WIDTH]
    old_pos = pos_of.copy()
    mark = np.zeros(n, dtype=np.bool_)
    for k in range(n_active):
        mark[sidx[active[k]]] = True
    m = np.int64(0)  # typed, not a literal (see get_column_batch)
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
    compact_active(kd, act_s, old_pos, m, not subset)
    ctr[CTR_WIDTH] = m
    if not subset:
        clear_cache(cache)
        ctr[CTR_SPACING] = m
    elif m < W:
        src, dst, length, first = runs
        g = ctr[CTR_GENERATION]
        at = ctr[CTR_RUNS]
        n_runs = _compaction_runs(act_s, old_pos, m, src, dst, length, at)
        # packing the slots closer only helps a cache that lacks a slot for some sample;
        # one that has n slots (every column fits) defers every compaction
        roomy = 4 * ctr[CTR_USED] < 3 * ctr[CTR_SLOTS] or ctr[CTR_SLOTS] >= n
        if roomy and g < MAX_GENERATIONS and at + n_runs <= src.shape[0]:
            first[g + 1] = at
            first[g + 2] = at + n_runs
            ctr[CTR_GENERATION] = g + 1
            ctr[CTR_RUNS] = at + n_runs
            return m
        S = ctr[CTR_SPACING]
        for k in range(ctr[CTR_USED]):
            if owner[k] < 0:
                continue
            if sgen[k] != g:
                _catch_up(k, cache, g)
            _move(pool, k * S, k * m, src, dst, length, at, at + n_runs)
            sgen[k] = 0
        ctr[CTR_SPACING] = m
        ctr[CTR_GENERATION] = 0
        ctr[CTR_RUNS] = 0
    ctr[CTR_SLOTS] = min(n, pool.shape[0] // max(ctr[CTR_SPACING], 1))
    return m


@njit
def reset_cache(cache, kd):
    """Every sample active again, the cache emptied (its columns cover fewer samples)."""
    n = cache[CACHE_SLOT_OF].shape[0]
    act_s = cache[CACHE_ACT]
    pos_of = cache[CACHE_POS_OF]
    for s in range(n):
        act_s[s] = s
        pos_of[s] = s
    compact_active(kd, act_s, pos_of, n, np.bool_(True))
    clear_cache(cache)
    cache[CACHE_CTR][CTR_WIDTH] = n
    cache[CACHE_CTR][CTR_SPACING] = n
    cache[CACHE_CTR][CTR_SLOTS] = min(n, cache[CACHE_POOL].shape[0] // max(n, 1))
