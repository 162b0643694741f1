"""The named fields of the SMO engine's tuples and counters, and the phase timers.

References: the builders themselves (``kernel_data``, ``new_cache``), the kernel's own
parameters, the solver's documented statistics (``stats``) and phases
(``PROFILE_PHASES``), and the CPU time of the solve (the phases add up to at most it)."""

import numpy as np
import pytest

from bisvm.kernels import make_kernel
from bisvm.solvers.dual import _smo_layout as L
from bisvm.solvers.dual._smo_columns import new_cache
from bisvm.solvers.dual.smo import PROFILE_PHASES, csvc_dual, kernel_data, solve_smo
from bisvm.solvers.dual.working_set import PROFILE_PHASES as WS_PHASES
from bisvm.solvers.dual.working_set import solve_working_set


def _names(prefix):
    return {k: v for k, v in vars(L).items() if k.startswith(prefix + "_")}


@pytest.mark.parametrize("prefix", ["KD", "SX", "CACHE", "CTR", "CMP", "PROF", "STAT"])
def test_positions_are_distinct(prefix):
    values = sorted(_names(prefix).values())
    assert len(values) == len(set(values))
    assert values[0] >= 0


def test_kernel_data_fields_hold_what_their_names_say():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    kernel = make_kernel("poly", gamma=0.5, coef0=1.5, degree=3)
    kd, kdiag = kernel_data(X, kernel, n_threads=3)
    assert len(kd) == max(_names("KD").values()) + 1
    np.testing.assert_array_equal(kd[L.KD_X], X)
    np.testing.assert_allclose(kd[L.KD_SQN], (X * X).sum(axis=1), rtol=1e-15)
    assert kd[L.KD_INDPTR].shape[0] == 0  # dense rows
    assert kd[L.KD_KCODE] == kernel.code
    assert kd[L.KD_GAMMA] == 0.5
    assert kd[L.KD_COEF0] == 1.5
    assert kd[L.KD_DEGREE] == 3
    assert kd[L.KD_THREADS] == 3
    np.testing.assert_allclose(kdiag, (0.5 * (X * X).sum(axis=1) + 1.5) ** 3)


def test_sparse_extras_fields():
    import scipy.sparse as sp

    X = sp.random(10, 6, density=0.4, format="csr", random_state=1)
    kd, _ = kernel_data(X, make_kernel("rbf", gamma=0.3))
    sx = kd[L.KD_SX]
    csc = X.tocsc()
    np.testing.assert_array_equal(sx[L.SX_TINDPTR], csc.indptr)
    assert not np.any(sx[L.SX_DOTBUF])  # zero scratch
    assert not np.any(sx[L.SX_MARK])


def test_new_cache_fields_and_counters():
    n = 7
    pool = np.empty(3 * n)
    prof = np.zeros(len(PROFILE_PHASES) + 2, dtype=np.int64)
    cache = new_cache(pool, n, prof)
    assert len(cache) == max(_names("CACHE").values()) + 1
    assert cache[L.CACHE_POOL] is pool
    assert cache[L.CACHE_PROF] is prof
    assert np.all(cache[L.CACHE_SLOT_OF] == -1)
    np.testing.assert_array_equal(cache[L.CACHE_ACT], np.arange(n))
    ctr = cache[L.CACHE_CTR]
    assert ctr.shape[0] == max(_names("CTR").values()) + 1
    assert ctr[L.CTR_WIDTH] == n and ctr[L.CTR_SPACING] == n
    assert ctr[L.CTR_SLOTS] == 3  # a pool of three columns
    assert ctr[L.CTR_USED] == 0 and ctr[L.CTR_COMPUTED] == 0


def test_profile_positions_follow_the_phases():
    for k, name in enumerate(PROFILE_PHASES):
        assert _names("PROF")["PROF_" + {"reconstruction": "REBUILD",
                                          "shrinking": "SHRINK",
                                          "selection": "SELECT"}.get(name, name.upper())] == k
    assert L.PROF_TOTAL == len(PROFILE_PHASES)
    assert L.PROF_TIMED == len(PROFILE_PHASES) + 1


def test_statistics_reach_the_result():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)
    res = solve_smo(csvc_dual(X, y, make_kernel("rbf", gamma=0.5), C=2.0), method="smo")
    assert res.converged and res.n_iter > 0
    assert res.stats["n_kernel_columns"] > 0
    assert 0 < res.stats["mean_active_size"] <= 60
    assert res.stats["nu_multiplier"] == 0.0


@pytest.mark.parametrize("method", ["smo", "working_set"])
def test_phases_are_nonnegative_and_within_the_solve(method):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=400) > 0, 1.0, -1.0)
    pb = csvc_dual(X, y, make_kernel("rbf", gamma=0.4), C=5.0)
    if method == "smo":
        prof = solve_smo(pb, method="smo", cache_size=0.5).stats["profile"]
        phases = PROFILE_PHASES
    else:
        prof = solve_working_set(pb, ws_size=64).stats["profile"]
        phases = WS_PHASES
    assert set(prof) >= set(phases) | {"total"}
    # the working set's subproblem phase is the process clock less the threads' own
    # clocks: two clocks, so allow their granularity below zero
    assert all(prof[p] >= -1e-4 for p in phases)
    assert sum(prof[p] for p in phases) <= prof["total"] * (1 + 1e-9) + 1e-9
