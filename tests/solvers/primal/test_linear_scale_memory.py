"""Peak memory of the primal linear solvers on a 200,000 x 20,000 CSR problem (10 nonzeros
a row), each fit in its own process: the resident set may grow by at most half the CSR
data's bytes during the fit (the L1 solver: plus its one column-major copy).

The figure is the process's peak resident set size (``VmHWM``, reset through
``/proc/self/clear_refs`` just before the fit, so that building the data does not count)
minus the resident set size at the start of the fit; the compiled kernels are loaded by a
small fit beforehand and freed heap pages are returned to the system
(``malloc_trim``), so that only the fit's own allocations count. The four fits run one
after the other in one child process (the measure is reset before each), apart from the
test runner's memory. Linux only."""

import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import ctypes, gc, json, resource
    import numpy as np, scipy.sparse as sp
    from bisvm.losses import SquaredEpsilonInsensitive, SquaredHinge
    from bisvm.solvers.problems import LinearProblem
    from bisvm.solvers.primal.finite_newton import solve_finite_newton
    from bisvm.solvers.primal.l1_cd import solve_l1_cd
    from bisvm.solvers.primal.svr_finite_newton import solve_svr_finite_newton

    n, d, k = 200_000, 20_000, 10
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random(n * k) + 0.1, rng.integers(0, d, n * k),
                       np.arange(0, n * k + 1, k)), shape=(n, d))
    score = X @ rng.standard_normal(d)
    score -= np.median(score)
    y = np.where(score + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    t = score + 0.1 * rng.standard_normal(n)
    cost = np.ones(n)

    def fit(kind, X, rows):  # the caller's arrays themselves for the measured fit
        Xs, ys, ts, cs = (X, y, t, cost) if rows == n else (X[:rows], y[:rows], t[:rows],
                                                            cost[:rows])
        if kind == "squared_hinge":
            return solve_finite_newton(LinearProblem(Xs, ys, SquaredHinge(), cs, bias=1.0),
                                       tol=1e-4, max_iter=1000)
        if kind == "svr":
            return solve_svr_finite_newton(
                LinearProblem(Xs, ts, SquaredEpsilonInsensitive(0.1), cs, bias=1.0),
                tol=1e-4, max_iter=1000)
        return solve_l1_cd(LinearProblem(Xs, ys, SquaredHinge(), cs, bias=1.0), tol=1e-2)

    def measure(kind, X):
        fit(kind, X, 2000)  # loads the compiled kernels
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        with open("/proc/self/statm") as f:
            base = int(f.read().split()[1]) * resource.getpagesize()
        res = fit(kind, X, n)
        with open("/proc/self/status") as f:
            hwm = int(f.read().split("VmHWM:")[1].split()[0]) * 1024
        return {"kind": kind, "growth": hwm - base, "converged": bool(res.converged),
                "data": X.data.nbytes + X.indices.nbytes + X.indptr.nbytes,
                "csc": X.data.nbytes + 4 * X.nnz + 8 * (d + 2),
                "index_dtype": str(X.indices.dtype)}

    out = [measure(kind, X) for kind in ("squared_hinge", "svr", "l1")]
    # scipy keeps int32 indices whenever they fit: int64 ones are set by hand
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    out.append(measure("squared_hinge", X))
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def measured():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pytest.skip("the peak resident set size cannot be reset here (/proc/self/clear_refs)")
    out = subprocess.run([sys.executable, "-c", SCRIPT], check=True, capture_output=True,
                         text=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", [0, 1, 3])
def test_l2_primal_fit_grows_by_at_most_half_the_data(measured, case):
    r = measured[case]
    assert r["converged"]
    assert r["growth"] <= 0.5 * r["data"], r


def test_int64_indices_are_measured(measured):
    assert [r["index_dtype"] for r in measured] == ["int32"] * 3 + ["int64"]


def test_l1_fit_grows_by_at_most_its_column_copy_and_half_the_data(measured):
    r = measured[2]
    assert r["kind"] == "l1" and r["converged"]
    assert r["growth"] <= r["csc"] + 0.5 * r["data"], r
