"""Named positions of the fields of the SMO engine's tuples and counter arrays.

The compiled SMO loop passes its state as plain tuples of arrays and scalars (the
kernel data ``kd``, the column cache, the compact active copies ``cmp``) and keeps its
counters in small integer arrays. A numba function compiles a module-level integer as a
constant, so ``kd[KD_THREADS]`` is the same static tuple access as a literal index, and
the names cost nothing at run time. Named tuples would carry the names in the type
instead, but the tuples are unpacked and indexed inside loops that run once per
iteration, and plain tuples keep the types that the compiled-kernel manifest of the
test-suite already lists.
"""

from __future__ import annotations

# the kernel-data tuple ``kd`` (built by bisvm.solvers.dual.smo.kernel_data)
#: rows: the (n, d) matrix, the (n, n) Gram matrix (precomputed) or an (n, 0) shape carrier
KD_X = 0
#: squared norms of the rows
KD_SQN = 1
#: CSR values, column indices and row pointers (``KD_INDPTR`` empty for dense rows)
KD_DATA = 2
KD_INDICES = 3
KD_INDPTR = 4
#: a zero vector of length d (sparse Laplacian scratch)
KD_WORK = 5
#: the kernel's code and parameters
KD_KCODE = 6
KD_GAMMA = 7
KD_COEF0 = 8
KD_DEGREE = 9
#: the sparse extras tuple ``sx`` (CSC copy and scratch)
KD_SX = 10
#: transpose of the active rows, their norms and their samples (dense inner products)
KD_XT = 11
KD_SQA = 12
KD_ACT = 13
#: number of threads of the per-iteration loops
KD_THREADS = 14

# the sparse extras ``sx = kd[KD_SX]``
SX_TDATA = 0
SX_TINDICES = 1
SX_TINDPTR = 2
#: zero scratch of length n for scattered inner products
SX_DOTBUF = 4
#: false scratch of length n marking the touched entries of ``SX_DOTBUF``
SX_MARK = 5
#: the touched entries, to clear them again
SX_TOUCHED = 6

# the column cache (built by bisvm.solvers.dual._smo_columns.new_cache)
CACHE_POOL = 0
CACHE_SLOT_OF = 1
CACHE_OWNER = 2
CACHE_STAMP = 3
CACHE_CTR = 4
CACHE_ACT = 5
CACHE_POS_OF = 6
CACHE_PROF = 7
CACHE_SPEC = 8
CACHE_SGEN = 9
CACHE_RUNS = 10

# the cache's counters ``ctr = cache[CACHE_CTR]``
#: the LRU clock
CTR_CLOCK = 0
#: the column length (number of active samples)
CTR_WIDTH = 1
#: kernel columns computed so far
CTR_COMPUTED = 2
#: slots that fit in the pool, slots in use
CTR_SLOTS = 3
CTR_USED = 4
#: columns computed as guesses, guesses read later
CTR_GUESSED = 5
CTR_GUESSES_USED = 6
#: spacing of the slots in the pool (at least the column length)
CTR_SPACING = 7
#: layout generation and number of recorded compaction runs
CTR_GENERATION = 8
CTR_RUNS = 9

# the compact copies of the active variables ``cmp``
CMP_Y = 0
CMP_G = 1
CMP_QD = 2
CMP_FLAGS = 3
CMP_POS = 4
CMP_VAR = 5

# the profile counters ``prof`` (CPU cycles per phase)
PROF_COLUMNS = 0
PROF_SELECT = 1
PROF_UPDATE = 2
PROF_SHRINK = 3
PROF_REBUILD = 4
PROF_TOTAL = 5
#: number of timed iterations
PROF_TIMED = 6

# the statistics ``out_stats`` of one SMO solve
STAT_ITER = 0
STAT_CONVERGED = 1
STAT_GAP = 2
STAT_RHO = 3
STAT_COLUMNS = 4
STAT_MEAN_ACTIVE = 5
STAT_NU_R = 6
