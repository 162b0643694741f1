"""The blocked kernel columns, the threaded SMO and the profile.

References: scikit-learn's pairwise kernels (columns), numpy's exp, LIBSVM through
``sklearn.svm.SVC`` (dual objective and support set), the serial solver (threads change
nothing), and the dense form of the same data (sparse columns and fits bit-identical)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import (
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
    sigmoid_kernel,
)
from sklearn.svm import SVC as SkSVC

import bisvm.kernel_checks as kernel_checks
from bisvm import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from bisvm.kernels import make_kernel, resolve_gamma
from bisvm.solvers.dual._smo_blocks import block_column, block_matvec, exp_block
from bisvm.solvers.dual.smo import PROFILE_PHASES, csvc_dual, kernel_data, resolve_n_jobs, solve_smo

KERNELS = {
    "rbf": lambda A, B, g, c: rbf_kernel(A, B, gamma=g),
    "poly": lambda A, B, g, c: polynomial_kernel(A, B, degree=3, gamma=g, coef0=c),
    "linear": lambda A, B, g, c: linear_kernel(A, B),
    "sigmoid": lambda A, B, g, c: sigmoid_kernel(A, B, gamma=g, coef0=c),
}


def _sparse_data(n, d, seed, density=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) > density] = 0.0
    return X


def _columns(X, kernel, rows, n_threads=1):
    kd, _ = kernel_data(X, kernel, n_threads)
    n = X.shape[0]
    out = np.empty((len(rows), n))
    for r, s in enumerate(rows):
        block_column(out[r], s, s, n, kd)
    return out


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_blocked_columns_equal_the_direct_kernel(name):
    # n > BQ so that several blocks and a partial one are exercised
    X = _sparse_data(2500, 13, 0)
    ker = make_kernel(name, gamma=0.3, coef0=0.5, degree=3)
    rows = [0, 1, 1024, 2499]
    ref = KERNELS[name](X[rows], X, 0.3, 0.5)
    for data in (X, sp.csr_matrix(X)):
        got = _columns(data, ker, rows)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_dense_and_sparse_columns_are_bit_identical(name):
    X = _sparse_data(1500, 40, 1, density=0.2)
    ker = make_kernel(name, gamma=0.05, coef0=1.0, degree=3)
    rows = [0, 7, 1499]
    dense = _columns(X, ker, rows)
    sparse = _columns(sp.csr_matrix(X), ker, rows)
    assert np.array_equal(dense, sparse)
    # the gradient reconstruction's kernel-vector products too
    cols = np.arange(0, 1500, 3)
    coef = np.random.default_rng(2).normal(size=cols.size)
    outs = []
    for data in (X, sp.csr_matrix(X)):
        kd, _ = kernel_data(data, ker)
        v = np.empty(1500)
        block_matvec(np.arange(1500), 1500, cols, coef, kd, v)
        outs.append(v)
    assert np.array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[0], KERNELS[name](X, X[cols], 0.05, 1.0) @ coef,
                               rtol=1e-10, atol=1e-10)


def test_exp_block_matches_numpy():
    rng = np.random.default_rng(3)
    x = np.concatenate([-rng.exponential(20.0, 5000), [0.0, -1e-300, -700.0, -708.5, -1e4]])
    y = x.copy()
    exp_block(y, y.size, np.empty(y.size, dtype=np.int64))
    ref = np.exp(x)
    big = ref > 1e-307
    np.testing.assert_allclose(y[big], ref[big], rtol=4e-16)
    assert y[x.size - 5] == 1.0 and np.all(y[~big] <= 3e-308)


@pytest.mark.parametrize("est", [
    SVC(kernel="rbf", C=3.0), SVC(kernel="poly", degree=3, coef0=1.0, class_weight="balanced"),
    SVR(kernel="rbf", C=2.0), NuSVC(kernel="rbf"), NuSVR(kernel="rbf"),
    OneClassSVM(kernel="rbf", nu=0.2)])
def test_sparse_and_dense_fits_are_identical(est):
    """The same kernel values give the same SMO steps: identical dual coefficients
    (gamma='scale' included: the variance is the same number for both forms)."""
    from sklearn.base import clone

    X = _sparse_data(300, 12, 4, density=0.3)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    if isinstance(est, (SVR, NuSVR)):
        y = X[:, 0] - 2 * X[:, 2]
    a = clone(est).fit(X, y) if not isinstance(est, OneClassSVM) else clone(est).fit(X)
    b = clone(est).fit(sp.csr_matrix(X), y) if not isinstance(est, OneClassSVM) else \
        clone(est).fit(sp.csr_matrix(X))
    assert np.array_equal(a.support_, b.support_)
    assert np.array_equal(a.dual_coef_, b.dual_coef_.toarray())
    assert np.array_equal(a.intercept_, b.intercept_)


def _classification(n, d, seed):
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n_samples=n, n_features=d, n_informative=d // 2,
                               flip_y=0.05, random_state=seed)
    return StandardScaler().fit_transform(X), y


def _dual_objective_sklearn(m, X, gamma):
    coef = m.dual_coef_.ravel()
    K = rbf_kernel(X[m.support_], X[m.support_], gamma=gamma)
    return 0.5 * coef @ K @ coef - np.abs(coef).sum()


def test_two_threads_give_the_serial_iterate_and_libsvm_model():
    # 4,500 rows: the active set exceeds the threshold of the threaded scans
    X, y = _classification(4500, 10, 3)
    ys = np.where(y == 0, 1.0, -1.0)  # LIBSVM's sign: the first class is +1
    ker = make_kernel("rbf", gamma="scale", X=X)
    pb = csvc_dual(X, ys, ker, 2.0)
    # SMO's threads (from 3,000 dense RBF rows "auto" takes the working-set solver, whose
    # threads are tested in test_working_set.py)
    one = solve_smo(pb, n_jobs=1, method="smo")
    two = solve_smo(pb, n_jobs=2, method="smo")
    assert one.n_iter == two.n_iter
    assert np.array_equal(one.dual_coef, two.dual_coef)
    assert one.objective == two.objective
    ref = SkSVC(kernel="rbf", C=2.0, gamma="scale").fit(X, y)
    assert np.array_equal(np.flatnonzero(two.dual_coef > 0), np.sort(ref.support_))
    assert two.objective == pytest.approx(_dual_objective_sklearn(ref, X, ker.gamma), rel=1e-6)
    # the estimator's threaded fit on sparse data: the same model
    est = SVC(kernel="rbf", C=2.0, n_jobs=2).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(np.sort(est.support_), np.flatnonzero(one.dual_coef > 0))


def test_profile_phases_are_present_and_add_up():
    X, y = _classification(1500, 8, 6)
    pb = csvc_dual(X, np.where(y > 0, 1.0, -1.0), make_kernel("rbf", gamma=0.1), 1.0)
    prof = solve_smo(pb, cache_size=1.0).stats["profile"]
    assert set(prof) == set(PROFILE_PHASES) | {"other", "total"}
    assert all(v >= 0.0 for v in prof.values())
    assert prof["columns"] > 0.0 and prof["update"] > 0.0 and prof["selection"] > 0.0
    parts = sum(v for k, v in prof.items() if k != "total")
    assert parts == pytest.approx(prof["total"], rel=1e-6)
    with pytest.raises(TypeError):
        prof["columns"] = 0.0


def test_n_jobs_resolution_and_errors():
    assert resolve_n_jobs(None) == 1
    assert resolve_n_jobs(1) == 1
    assert 1 <= resolve_n_jobs(-1) <= max(1, __import__("os").cpu_count())
    X, y = _classification(60, 4, 7)
    for bad in (0, 1.5, "2", True):
        with pytest.raises(ValueError, match="n_jobs"):
            SVC(n_jobs=bad).fit(X, y)
    assert SVC(n_jobs=-1).get_params()["n_jobs"] == -1
    for cls in (SVR, NuSVC, NuSVR, OneClassSVM):
        assert cls().get_params()["n_jobs"] is None


def test_sparse_gamma_scale_is_the_exact_variance(monkeypatch):
    X = _sparse_data(400, 25, 8, density=0.1) + 0.0
    X[X != 0] += 1e4  # a large mean: E[x^2] - mean^2 would cancel
    S = sp.csr_matrix(X)
    assert resolve_gamma("scale", S) == resolve_gamma("scale", X)
    monkeypatch.setattr(kernel_checks, "SPARSE_VAR_DENSE_BYTES", 0)  # the no-copy path
    vals = X.ravel().tolist()
    mean = math.fsum(vals) / len(vals)
    var = math.fsum((v - mean) ** 2 for v in vals) / len(vals)
    assert resolve_gamma("scale", S) == pytest.approx(1.0 / (25 * var), rel=1e-15)


def test_four_columns_in_one_pass_equal_single_columns():
    from bisvm.solvers.dual._smo_blocks import block_columns4

    X = _sparse_data(2100, 17, 9, density=0.7)
    for name in sorted(KERNELS):
        ker = make_kernel(name, gamma=0.1, coef0=0.5, degree=3)
        kd, _ = kernel_data(X, ker)
        rows = np.array([5, 2099, 0, 1000])
        for nr in (2, 4):
            pool = np.empty(4 * 2100)
            bases = np.arange(4) * 2100
            r = rows.copy()
            r[nr:] = r[nr - 1]
            block_columns4(pool, bases, r, nr, r.copy(), 2100, kd)
            single = _columns(X, ker, list(rows[:nr]))
            assert np.array_equal(pool[:nr * 2100].reshape(nr, 2100), single)


def test_one_feature_data_is_not_modified_and_refits_identically():
    """With one feature X.T is already contiguous: the solver's compacted transpose must
    still be a copy, never the caller's X."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(34, 1))
    y = (X[:, 0] + rng.normal(size=34) > 0).astype(int)
    X0 = X.copy()
    a = SVC().fit(X, y)
    assert np.array_equal(X, X0)
    b = SVC().fit(X, y)
    assert np.array_equal(a.dual_coef_, b.dual_coef_)
    ref = SkSVC().fit(X0, y)
    np.testing.assert_array_equal(np.sort(a.support_), np.sort(ref.support_))


def test_no_limit_stops_at_libsvm_safeguard():
    """max_iter=-1 is LIBSVM's cap max(1e7, 100 l): a linear kernel on features near 1e150
    makes the tolerance unreachable in floating point (it ran without end before)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SVR(kernel="linear").fit(X * 1e150, y)
    assert model.n_iter_ == 10_000_000
    assert any(issubclass(w.category, ConvergenceWarning) and "max_iter=10000000"
               in str(w.message) for w in caught)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_gradient_from_a_snapshot_equals_the_dense_gradient(n_threads):
    # Q alpha + p is affine in alpha, so the snapshot (alpha_ref, Q alpha_ref + p) plus the
    # moved coefficients must give the dense gradient; two variables per sample (as
    # epsilon-SVR) and a diagonal shift exercise the sample sums and the shift term
    from bisvm.solvers.dual import _smo_columns as cols

    rng = np.random.default_rng(5)
    n, d = 700, 6
    X = rng.normal(size=(n, d))
    ker = make_kernel("rbf", gamma=0.2)
    kd, _ = kernel_data(X, ker, n_threads)
    sidx = np.concatenate([np.arange(n), np.arange(n)])
    y = np.concatenate([np.ones(n), -np.ones(n)])
    shift = np.full(2 * n, 0.3)
    p = rng.normal(size=2 * n)
    C = 2.0
    K = rbf_kernel(X, X, gamma=0.2)
    Q = np.outer(y, y) * K[np.ix_(sidx, sidx)] + np.diag(shift)
    free = rng.uniform(0, C, 2 * n) * (rng.random(2 * n) < 0.3)
    a_ref = np.where(rng.random(2 * n) < 0.3, C, free)
    alpha = a_ref.copy()
    move = rng.random(2 * n) < 0.1
    alpha[move] = rng.uniform(0, C, move.sum())
    G_ref = Q @ a_ref + p
    which = rng.random(2 * n) < 0.6
    G = np.full(2 * n, np.nan)
    cols.gradient_since(which, kd, sidx, y, shift, alpha, a_ref, G_ref, G)
    np.testing.assert_allclose(G[which], (Q @ alpha + p)[which], rtol=1e-11, atol=1e-11)
    assert np.all(np.isnan(G[~which]))
    # from scratch: the snapshot (0, p)
    G2 = np.full(2 * n, np.nan)
    cols.gradient_from_scratch(which, kd, sidx, y, p, shift, alpha, G2)
    np.testing.assert_allclose(G2[which], (Q @ alpha + p)[which], rtol=1e-11, atol=1e-11)


def test_guessed_columns_stop_without_changing_the_iterate():
    """On poly-3 data fewer than half of the guessed kernel columns are read, so the dense
    solve stops guessing (fewer columns than with guessing throughout, 2,492 on the same
    data); its iterate is still bit for bit the sparse one, which never guesses."""
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n_samples=3750, n_features=20, n_informative=10,
                               random_state=0)
    X = StandardScaler().fit_transform(X)
    ker = make_kernel("poly", gamma=1.0 / (X.shape[1] * X.var()), coef0=1.0, degree=3)
    yb = np.where(y > 0, 1.0, -1.0)
    dense = solve_smo(csvc_dual(X, yb, ker, 1.0))
    sparse = solve_smo(csvc_dual(sp.csr_matrix(X), yb, ker, 1.0))
    np.testing.assert_array_equal(dense.dual_coef, sparse.dual_coef)
    assert dense.intercept == sparse.intercept
    assert dense.stats["n_kernel_columns"] < 2000


@pytest.mark.parametrize("n_slots", [6, 40, 200])
def test_cached_columns_follow_every_shrink_of_the_active_set(n_slots):
    """The column cache compacts its columns when the active samples shrink, now (a full
    cache) or when a column is next read (a layout generation per shrink, more shrinks
    than generations kept): every column read equals, bit for bit, the full column
    restricted to the current active samples, whether it was cached many shrinks ago or
    computed just now."""
    from bisvm.solvers.dual._smo_columns import (
        MAX_GENERATIONS,
        get_column,
        new_cache,
        restrict_cache,
    )

    n = 200
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, 4))
    kd, _ = kernel_data(X, make_kernel("rbf", gamma=0.3))
    K = _columns(X, make_kernel("rbf", gamma=0.3), range(n))  # every full column
    assert np.allclose(K, rbf_kernel(X, X, gamma=0.3), rtol=1e-14, atol=0)
    pool = np.empty(n_slots * n)
    cache = new_cache(pool, n, np.zeros(6, dtype=np.int64))
    active = np.arange(n)
    sidx = np.arange(n)
    for s in range(0, n, 7):
        get_column(s, cache, kd)
    n_shrinks = 0
    while active.size > 20:
        # drop a few scattered samples (never one of the first 20, read below)
        drop = rng.choice(np.arange(20, active.size), size=min(3, active.size - 20),
                          replace=False)
        active = np.delete(active, drop)
        restrict_cache(cache, active, active.size, sidx, kd)
        n_shrinks += 1
        for s in rng.choice(active, size=2, replace=False):
            base = get_column(s, cache, kd)
            assert np.array_equal(pool[base:base + active.size], K[s, active])
    assert n_shrinks > MAX_GENERATIONS
    for s in active[:20]:
        base = get_column(s, cache, kd)
        assert np.array_equal(pool[base:base + active.size], K[s, active])
