"""The per-iteration loops of SMO: every variant makes the sequential scan's choice.

References: plain numpy scans (last maximiser, gradient update), the sequential
``pick_j`` (LIBSVM's second-order rule one entry at a time), the same problem with its
samples stored in another order (the gathered loops against the contiguous ones: the
same iterate to the last bit) and LIBSVM through ``sklearn.svm.SVC`` (the optimum of a
two-feature problem at a large C, where the solve takes many cheap iterations)."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC as SkSVC

from bisvm.kernels import make_kernel
from bisvm.solvers.dual._smo_select import (
    last_max,
    pick_j,
    pick_j_contiguous,
    pick_j_second_order,
    update_contiguous,
    update_max,
)
from bisvm.solvers.dual.smo import DualProblem, csvc_dual, dense_hessian, solve_smo


def _last_maximiser(v):
    if v.size == 0:
        return -1, -np.inf
    m = v.max()
    return int(np.flatnonzero(v == m)[-1]), m


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 8, 13, 64])
def test_last_max_is_the_last_maximiser(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        v = rng.integers(-3, 3, size=n).astype(float)  # many ties
        v[rng.random(n) < 0.2] = -np.inf
        k, m = last_max(v, n)
        ref_k, ref_m = _last_maximiser(v)
        if n and np.all(v == -np.inf):
            ref_k = n - 1
        assert (k, m) == (ref_k, ref_m)


def _random_active(rng, n, ties):
    ya = rng.choice([-1.0, 1.0], size=n)
    Ga = (rng.integers(-4, 4, size=n) / 4.0) if ties else rng.normal(size=n)
    qa = rng.uniform(0.5, 1.5, size=n)
    fa = rng.choice(np.array([1, 2, 3], dtype=np.int8), size=n)
    return ya, Ga, qa, fa


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n", [1, 2, 5, 7, 16, 33])
def test_second_order_variants_choose_the_sequential_j(n, ties):
    rng = np.random.default_rng(100 * n + ties)
    for _ in range(25):
        ya, Ga, qa, fa = _random_active(rng, n, ties)
        col = rng.uniform(-1.0, 1.0, size=n)
        if ties:
            col = np.round(col, 1)
        k_i = int(rng.integers(n))
        gmax = float(-ya[k_i] * Ga[k_i]) + float(rng.uniform(0, 1))
        pa = np.arange(n)
        ref = pick_j(k_i, 0, gmax, 0.0, ya, Ga, qa, fa, pa, n, col, True)
        got = pick_j_contiguous(k_i, col, gmax, ya, Ga, qa, fa, n, np.empty(n),
                                np.empty(n))
        assert got == ref
        # the same column stored at other positions, read through pa
        perm = rng.permutation(n)
        pool = np.empty(n + 3)
        pool[3 + perm] = col
        got = pick_j_second_order(k_i, 3, gmax, ya, Ga, qa, fa, perm, n, pool)
        assert got == ref


@pytest.mark.parametrize("n", [1, 3, 4, 9, 40])
def test_update_variants_equal_the_sequential_update(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        ya, Ga, qa, fa = _random_active(rng, n, ties=True)
        if rng.random() < 0.2:
            fa[:] = 2  # I_up empty
        ci = rng.uniform(-1, 1, size=n)
        cj = rng.uniform(-1, 1, size=n)
        dai, daj = rng.normal(size=2)
        G_ref = Ga + ya * (dai * ci + daj * cj)
        up = np.flatnonzero(fa & 1)  # I_up: only these may become the next i
        k_up, ref_m = _last_maximiser(-ya[up] * G_ref[up])
        ref_k = int(up[k_up]) if k_up >= 0 else -1
        G1 = Ga.copy()
        assert update_contiguous(G1, ya, fa, ci, cj, dai, daj, n, np.empty(n)) == (
            ref_k, ref_m)
        np.testing.assert_array_equal(G1, G_ref)
        perm = rng.permutation(n)
        pool = np.empty(2 * n)
        pool[perm] = ci
        pool[n + perm] = cj
        G2 = Ga.copy()
        assert update_max(G2, ya, fa, perm, pool, 0, n, dai, daj, n) == (ref_k, ref_m)
        np.testing.assert_array_equal(G2, G_ref)


def _two_feature_problem(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_gathered_and_contiguous_loops_give_the_same_iterate():
    X, y = _two_feature_problem()
    kernel = make_kernel("rbf", gamma=2.0)
    # without shrinking: the gradient reconstruction's BLAS products may round
    # differently when the rows come in another order, the kernel columns never do
    a = solve_smo(csvc_dual(X, y, kernel, C=1000.0), method="smo", shrinking=False)
    # the same dual with the samples stored in another order: every column position
    # differs from the variable's, so the gathered loops run
    perm = np.random.default_rng(1).permutation(X.shape[0])
    inv = np.argsort(perm)
    n = X.shape[0]
    problem = DualProblem(X[perm], kernel, inv, y, -np.ones(n), np.full(n, 1000.0),
                          np.zeros(n))
    np.testing.assert_array_equal(dense_hessian(problem), dense_hessian(
        csvc_dual(X, y, kernel, C=1000.0)))
    b = solve_smo(problem, method="smo", shrinking=False)
    assert a.n_iter == b.n_iter > 1000
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    assert a.intercept == b.intercept


@pytest.mark.parametrize("C", [10.0, 1000.0])
@pytest.mark.parametrize("shrinking", [True, False])
def test_two_features_at_large_C_reach_libsvm_optimum(C, shrinking):
    X, y = _two_feature_problem(seed=2)
    gamma = 3.0
    res = solve_smo(csvc_dual(X, y, make_kernel("rbf", gamma=gamma), C=C),
                    shrinking=shrinking, method="smo")
    sk = SkSVC(C=C, gamma=gamma, tol=1e-3, shrinking=shrinking).fit(X, y)
    K = rbf_kernel(X, X, gamma=gamma)

    def dual_objective(beta):  # beta = y * alpha
        return 0.5 * beta @ K @ beta - np.sum(np.abs(beta))

    beta_sk = np.zeros(X.shape[0])
    beta_sk[sk.support_] = sk.dual_coef_[0]
    beta_sk *= -1.0 if sk.classes_[0] == 1.0 else 1.0  # LIBSVM's first class is +1
    f_ref = dual_objective(beta_sk)
    f = dual_objective(y * res.dual_coef)
    assert abs(f - f_ref) <= 1e-3 * abs(f_ref)
    assert np.all(res.dual_coef >= 0) and np.all(res.dual_coef <= C)
    assert abs(y @ res.dual_coef) <= 1e-9 * C * X.shape[0]
    assert res.certificate_value <= 1e-3
