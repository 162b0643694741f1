"""The working-set solver (many variables per outer iteration) against scikit-learn's
LIBSVM: the same dual optimum (objective to 1e-6 relative, the same support set up to
marginal vectors, close decision values), its certificate, warm starts, the cap, the
contract, and ``solve_smo``'s dispatch."""

import numpy as np
import pytest
from contract import check_contract
from sklearn.datasets import make_classification, make_regression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from bisvm.kernels import make_kernel
from bisvm.solvers.base import ConvergenceWarning
from bisvm.solvers.dual.smo import csvc_dual, dense_hessian, epsilon_svr_dual, solve_smo
from bisvm.solvers.dual.working_set import solve_working_set

TOL = 1e-4


@pytest.fixture(scope="module")
def clf_data():
    X, y = make_classification(n_samples=2000, n_features=10, n_informative=6,
                               flip_y=0.05, random_state=0)
    return StandardScaler().fit_transform(X), np.where(y > 0, 1.0, -1.0)


@pytest.fixture(scope="module")
def reg_data():
    X, z = make_regression(n_samples=1500, n_features=8, n_informative=5, noise=10.0,
                           random_state=0)
    return StandardScaler().fit_transform(X), (z - z.mean()) / z.std()


def _kernel(name, X):
    gamma = 1.0 / (X.shape[1] * X.var())
    return make_kernel(name, gamma=gamma, coef0=1.0, degree=3), {
        "kernel": name, "gamma": gamma, "coef0": 1.0, "degree": 3}


def _libsvm_objective(K, support, coef, lin):
    """:math:`\\tfrac12 c^\\top K_{SS} c + \\text{lin}` from a model's expansion."""
    Ks = K[np.ix_(support, support)]
    return 0.5 * float(coef @ Ks @ coef) + lin


def _agree(res, ref_support, ref_obj, K, X, ref_decision, pb):
    sup = np.flatnonzero(res.coef != 0)
    diff = set(sup) ^ set(ref_support)
    # marginal vectors (alpha at 0 by a hair on one side) may differ: at most 0.5 %
    assert len(diff) <= max(1, int(0.005 * len(ref_support))), len(diff)
    assert abs(res.objective - ref_obj) <= 1e-6 * abs(ref_obj)
    dec = K @ res.coef + res.intercept
    scale = np.abs(ref_decision).max()
    np.testing.assert_allclose(dec, ref_decision, atol=2e-3 * scale)
    assert res.converged and res.certificate_value <= TOL


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_csvc_matches_libsvm(clf_data, kernel):
    X, y = clf_data
    ker, params = _kernel(kernel, X)
    ref = SVC(C=1.0, tol=TOL, **params).fit(X, y)
    K = ker(X)
    coef = ref.dual_coef_.ravel()
    ref_obj = _libsvm_objective(K, ref.support_, coef, -np.abs(coef).sum())
    pb = csvc_dual(X, y, ker, 1.0)
    res = solve_working_set(pb, tol=TOL, ws_size=256)
    assert res.stats["n_outer"] > 2
    _agree(res, ref.support_, ref_obj, K, X, ref.decision_function(X), pb)


def test_class_weights_match_libsvm(clf_data):
    """Per-variable upper bounds C w_t from class weights."""
    X, y = clf_data
    ker, params = _kernel("rbf", X)
    ref = SVC(C=2.0, tol=TOL, class_weight={-1.0: 0.5, 1.0: 3.0}, **params).fit(X, y)
    K = ker(X)
    coef = ref.dual_coef_.ravel()
    ref_obj = _libsvm_objective(K, ref.support_, coef, -np.abs(coef).sum())
    pb = csvc_dual(X, y, ker, 2.0, weights=np.where(y > 0, 3.0, 0.5))
    res = solve_working_set(pb, tol=TOL, ws_size=256)
    assert np.all(res.dual_coef <= pb.upper)
    _agree(res, ref.support_, ref_obj, K, X, ref.decision_function(X), pb)


def test_epsilon_svr_matches_libsvm(reg_data):
    X, z = reg_data
    ker, params = _kernel("rbf", X)
    ref = SVR(C=1.0, epsilon=0.1, tol=TOL, **params).fit(X, z)
    K = ker(X)
    beta = ref.dual_coef_.ravel()
    sup = ref.support_
    ref_obj = _libsvm_objective(K, sup, beta, -float(z[sup] @ beta) + 0.1 * np.abs(beta).sum())
    pb = epsilon_svr_dual(X, z, ker, 1.0, 0.1)
    res = solve_working_set(pb, tol=TOL, ws_size=256)
    _agree(res, sup, ref_obj, K, X, ref.predict(X), pb)


def test_gradient_and_feasibility(clf_data):
    """G is Q alpha + p (up to the float32 kernel rows), y'alpha = 0 and the box holds."""
    X, y = clf_data
    X, y = X[:600], y[:600]
    ker, _ = _kernel("rbf", X)
    pb = csvc_dual(X, y, ker, 1.0)
    res = solve_working_set(pb, tol=1e-5, ws_size=64)
    a = res.dual_coef
    np.testing.assert_allclose(res.stats["dual_gradient"], dense_hessian(pb) @ a + pb.p,
                               atol=1e-5)
    assert abs(y @ a) < 1e-10 and a.min() >= 0 and a.max() <= 1.0
    ref = solve_smo(pb, tol=1e-5, method="smo")
    assert abs(res.objective - ref.objective) <= 1e-7 * abs(ref.objective)


def test_warm_start_feasible_and_same_optimum(clf_data):
    X, y = clf_data
    ker, _ = _kernel("rbf", X)
    pb = csvc_dual(X, y, ker, 1.0)
    rough = solve_smo(pb, tol=0.5, method="smo").dual_coef
    cold = solve_working_set(pb, tol=TOL)
    warm = solve_working_set(pb, alpha0=rough, tol=TOL)
    assert warm.converged and warm.certificate_value <= TOL
    assert abs(warm.dual_coef @ y) < 1e-9
    assert abs(warm.objective - cold.objective) <= 1e-6 * abs(cold.objective)
    assert warm.n_iter < cold.n_iter
    with pytest.raises(ValueError, match="alpha0"):
        solve_working_set(pb, alpha0=-rough - 1.0)


@pytest.mark.parametrize("kind", ["csvc", "svr"])
def test_contract(clf_data, reg_data, kind):
    X, y = clf_data
    ker, _ = _kernel("rbf", X)
    pb = csvc_dual(X[:300], y[:300], ker, 1.0) if kind == "csvc" else epsilon_svr_dual(
        reg_data[0][:300], reg_data[1][:300], ker, 1.0, 0.1)
    res = solve_smo(pb, tol=1e-4, method="working_set")
    check_contract(res, certificate="max_violating_pair", tol=1e-4, dual=True,
                   active_set=True)
    assert set(res.stats) >= {"dual_gradient", "n_kernel_columns", "profile"}
    assert set(res.stats["profile"]) >= {"selection", "rows", "subproblem", "update",
                                         "other", "total"}
    np.testing.assert_allclose(
        res.coef, np.bincount(pb.sample_index, pb.y * res.dual_coef, minlength=300))


def test_cap_warns(clf_data):
    X, y = clf_data
    ker, _ = _kernel("rbf", X)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = solve_working_set(csvc_dual(X, y, ker, 1.0), max_iter=20)
    assert not res.converged and res.certificate_value > 1e-3


def test_dispatch(clf_data):
    X, y = clf_data
    ker, _ = _kernel("rbf", X)
    pb = csvc_dual(X[:400], y[:400], ker, 1.0)
    with pytest.raises(ValueError, match="'thunder'"):
        solve_smo(pb, method="thunder")
    # small problems keep SMO's iterates bit for bit under "auto"
    auto, smo = solve_smo(pb), solve_smo(pb, method="smo")
    np.testing.assert_array_equal(auto.dual_coef, smo.dual_coef)
    assert "reconstruction" in auto.stats["profile"]
    assert "subproblem" in solve_smo(pb, method="working_set").stats["profile"]
    with pytest.raises(ValueError, match="nu constraint"):
        from bisvm.solvers.dual.nu_smo import nu_svc_dual

        solve_smo(nu_svc_dual(X[:50], y[:50], ker, 0.3), method="working_set")


def test_two_threads_same_optimum(clf_data):
    """n_jobs=2 splits the products, the update and the scan: the same optimum. Bit for bit
    on some CPUs; where the vector kernels' reduction order depends on the split (seen on
    an AMD EPYC without AVX-512), the iterates differ by rounding and both runs stop within
    the tolerance of the same optimum."""
    X, y = clf_data
    ker, _ = _kernel("rbf", X)
    pb = csvc_dual(X, y, ker, 1.0)
    one = solve_working_set(pb, tol=TOL, ws_size=192)
    two = solve_working_set(pb, tol=TOL, ws_size=192, n_jobs=2)
    assert one.converged and two.converged
    np.testing.assert_allclose(two.objective, one.objective, rtol=1e-6)
    np.testing.assert_allclose(two.dual_coef, one.dual_coef, atol=1e-3)


def test_auto_rule():
    """'auto' takes the working-set solver for dense RBF problems from 3,000 samples only;
    its rows fit in the cache size."""
    import scipy.sparse as sp

    from bisvm.solvers.dual.working_set import working_set_size, working_set_suits

    X = np.random.default_rng(0).normal(size=(3000, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    rbf = make_kernel("rbf", gamma=0.5)
    assert working_set_suits(csvc_dual(X, y, rbf, 1.0))
    assert not working_set_suits(csvc_dual(X[:2999], y[:2999], rbf, 1.0))
    assert not working_set_suits(csvc_dual(sp.csr_matrix(X), y, rbf, 1.0))
    assert not working_set_suits(csvc_dual(X, y, make_kernel("poly", gamma=0.5, degree=3), 1.0))
    pb = csvc_dual(X, y, rbf, 1.0)
    assert working_set_size(pb, 200.0) == 768
    assert working_set_size(pb, 4.0) * 4 * 3000 <= 4.0 * 2**20


@pytest.mark.parametrize("n_ranges", [1, 3])
def test_selection_against_brute_force(n_ranges):
    """The fused update and scan, over one or three ranges, then the merge, choose what a
    sort of every variable chooses: the most violating of I_up and I_low in turn, ranked
    by -yG then by index, skipping members and non-violators; G gains y * d[s]."""
    from bisvm.solvers.dual._ws_kernels import merge_selection, update_and_scan

    rng = np.random.default_rng(1)
    l, n, k = 3000, 1500, 40
    y = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    upper = np.full(l, 2.0)
    alpha = rng.choice([0.0, 1.0, 2.0], size=l)
    G0 = np.round(rng.normal(size=l), 1)  # many ties
    sidx = np.arange(l) % n
    d = np.round(rng.normal(size=n), 1)
    in_ws = rng.random(l) < 0.1
    G = G0.copy()
    cuts = np.linspace(0, l, n_ranges + 1).astype(int)
    uk, lk = np.empty((n_ranges, k)), np.empty((n_ranges, k))
    ui, li = (np.empty((n_ranges, k), dtype=np.int64) for _ in range(2))
    res = [update_and_scan(G, y, sidx, d, True, alpha, upper, in_ws, k, cuts[r], cuts[r + 1],
                           uk[r], ui[r], lk[r], li[r]) for r in range(n_ranges)]
    m, M = max(r[0] for r in res), min(r[1] for r in res)
    nus = np.array([r[2] for r in res])
    nls = np.array([r[3] for r in res])
    out = np.empty(k, dtype=np.int64)
    cnt = merge_selection(m, M, uk, ui, nus, lk, li, nls, in_ws, k, out)

    np.testing.assert_array_equal(G, G0 + y * d[sidx])
    f = -y * G
    up = ((y > 0) & (alpha < upper)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < upper))
    assert m == f[up].max() and M == f[low].min()
    assert np.unique(f).size < l // 10  # ties: the index decides
    t = np.arange(l)
    ups = [i for i in np.lexsort((t, -f)) if up[i] and not in_ws[i] and f[i] > M][:k]
    lows = [i for i in np.lexsort((t, f)) if low[i] and not in_ws[i] and f[i] < m][:k]
    want, seen, a, b = [], set(), 0, 0
    while len(want) < k and (a < len(ups) or b < len(lows)):
        for lst, pos in ((ups, "a"), (lows, "b")):
            if len(want) >= k:
                break
            i = a if pos == "a" else b
            while i < len(lst) and lst[i] in seen:
                i += 1
            if i < len(lst):
                want.append(lst[i])
                seen.add(lst[i])
                i += 1
            a, b = (i, b) if pos == "a" else (a, i)
    assert cnt == len(want) == k
    np.testing.assert_array_equal(out[:cnt], want)
    assert not np.any(in_ws[out[:cnt]])  # the chosen are unmarked after the merge
