"""The exact weighted (group) L1 SVM (solvers/primal/exact_l1.py).

References: scipy's L-BFGS-B on the split variables w = w+ - w- (vector model); the
smoothed problem of bisvm's dense Newton (LowerLevel) extrapolated to l1_smoothing -> 0
(group model); finite differences of the gradient (the support Hessian) and of the
validation criterion (the hypergradient); GroupPseudoHuber.weight_jacobian (the VJP).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from bisvm.losses import SmoothedHinge
from bisvm.penalties import GroupPseudoHuber
from bisvm.selection.bilevel import LowerLevel
from bisvm.selection.hypergradient import adjoint_hypergradient
from bisvm.solvers.base import ConvergenceWarning, NewtonFactor
from bisvm.solvers.primal.exact_l1 import (
    SupportNewtonFactor,
    WeightedL1SVMProblem,
    group_l1_weight_jvp,
    group_l1_weight_vjp,
    solve_exact_l1,
)

MU, ALPHA = 0.25, 0.01


def _data(n=90, d=15, seed=0, density=None):
    """Labels from a sparse linear model; bias column of ones last."""
    rng = np.random.default_rng(seed)
    if density is None:
        X = rng.standard_normal((n, d))
    else:
        X = sp.random(n, d, density=density, random_state=rng,
                      data_rvs=rng.standard_normal).toarray()
    wt = np.zeros(d)
    wt[: max(3, d // 5)] = rng.standard_normal(max(3, d // 5))
    y = np.where(X @ wt + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return np.c_[X, np.ones(n)], y


def _groups(d, sizes):
    """Groups of the given sizes over the first d coordinates, intercept last."""
    g = np.repeat(np.arange(len(sizes)), sizes)
    assert g.size == d
    return g


def _problem(X, y, groups, beta, *, penalize_intercept, sample_weight=None):
    d = X.shape[1]
    g = np.r_[groups, groups.max() + 1] if penalize_intercept else np.r_[groups, -1]
    mask = np.ones(d, bool)
    mask[-1] = penalize_intercept
    n_groups = int(g.max()) + 1
    b = np.r_[beta, np.mean(beta)] if penalize_intercept else np.asarray(beta)
    assert b.size == n_groups
    return WeightedL1SVMProblem(X, y, MU, ALPHA, mask, b, g, sample_weight)


def _smooth_grad(P, w):
    """Gradient of the loss and ridge, written out here from the losses module."""
    s = np.ones(len(P.y)) if P.sample_weight is None else P.sample_weight
    d1 = SmoothedHinge(MU).derivative(P.y, P.X @ w)
    return P.X.T @ (s * d1) / len(P.y) + ALPHA * P.l2_mask * w


def _lbfgsb_reference(P):
    """min E0 over (w+, w-) >= 0 for the penalised coordinates (singleton groups only)."""
    pen = np.flatnonzero(P.groups >= 0)
    free = np.flatnonzero(P.groups < 0)
    beta = P.weights[P.groups[pen]]
    k = pen.size

    def unpack(v):
        w = np.zeros(P.n_features)
        w[pen] = v[:k] - v[k:2 * k]
        w[free] = v[2 * k:]
        return w

    def fg(v):
        w = unpack(v)
        s = np.ones(len(P.y)) if P.sample_weight is None else P.sample_weight
        f = (np.mean(s * SmoothedHinge(MU).value(P.y, P.X @ w))
             + 0.5 * ALPHA * np.sum(P.l2_mask * w * w) + beta @ (v[:k] + v[k:2 * k]))
        g = _smooth_grad(P, w)
        return f, np.r_[g[pen] + beta, -g[pen] + beta, g[free]]

    bounds = [(0, None)] * (2 * k) + [(None, None)] * free.size
    res = minimize(fg, np.zeros(2 * k + free.size), jac=True, method="L-BFGS-B",
                   bounds=bounds, options=dict(ftol=1e-16, gtol=1e-13, maxiter=20000,
                                               maxcor=30))
    return unpack(res.x)


@pytest.mark.parametrize("penalize_intercept,weighted", [(False, False), (True, True)])
def test_vector_model_matches_split_lbfgsb(penalize_intercept, weighted):
    X, y = _data(seed=1)
    d = X.shape[1] - 1
    rng = np.random.default_rng(2)
    s = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    P = _problem(X, y, np.arange(d), rng.uniform(0.02, 0.08, d),
                 penalize_intercept=penalize_intercept, sample_weight=s)
    r = solve_exact_l1(P, tol=1e-12)
    ref = _lbfgsb_reference(P)
    assert r.converged and r.certificate_value <= 1e-12
    # L-BFGS-B on the split problem stops on its relative-decrease test around 1e-9
    np.testing.assert_allclose(r.coef, ref, atol=1e-6)
    supp = np.flatnonzero(r.coef)
    np.testing.assert_array_equal(supp, np.flatnonzero(np.abs(ref) > 1e-7))
    assert 2 < supp.size < d and np.min(np.abs(r.coef[supp])) > 1e-4  # a real selection
    assert r.objective <= P.value(ref) + 1e-12


def test_group_model_matches_extrapolated_smoothed_newton():
    X, y = _data(seed=3, d=12)
    groups = _groups(12, [3, 3, 3, 2, 1])
    beta = np.array([0.05, 0.1, 0.08, 0.12, 0.03])
    P = _problem(X, y, groups, beta, penalize_intercept=False)
    r = solve_exact_l1(P, tol=1e-12)
    pg = P.groups

    def smoothed(gamma):
        ll = LowerLevel(l2_penalty=ALPHA, hinge_smoothing=MU, l1_smoothing=gamma,
                        penalize_intercept=False)
        res = ll.solve(ll.problem(X, y, pg, P.weights), tol=1e-12)
        assert res.converged
        return res.coef

    # the smoothed minimiser is off by O(gamma) (zero groups open to ~gamma); Richardson
    # extrapolation 2 w(g) - w(2g) cancels that term and leaves O(gamma^2)
    gamma = 1e-6
    w1, w2 = smoothed(gamma), smoothed(2 * gamma)
    assert np.max(np.abs(w1 - r.coef)) < 100 * gamma
    np.testing.assert_allclose(2 * w1 - w2, r.coef, atol=1e-7)
    zero = P.group_norms(r.coef) == 0
    assert zero.any() and (~zero).sum() >= 2
    assert np.all(P.group_norms(w1)[zero] < 100 * gamma)


def _assert_kkt(P, w, tol):
    """The optimality conditions, checked from a gradient computed here."""
    g = _smooth_grad(P, w)
    unpen = P.groups < 0
    assert np.all(np.abs(g[unpen]) <= tol)
    for k in range(P.n_groups):
        idx = P.groups == k
        nk = np.linalg.norm(w[idx])
        if nk == 0:
            assert np.linalg.norm(g[idx]) <= P.weights[k] + tol
        else:
            assert np.linalg.norm(g[idx] + P.weights[k] * w[idx] / nk) <= tol


@pytest.mark.parametrize("penalize_intercept", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_dense_csr_csc_agree_and_certificate(penalize_intercept, weighted):
    X, y = _data(n=120, d=24, seed=4, density=0.3)
    groups = _groups(24, [1] * 10 + [2] * 4 + [3] * 2)
    rng = np.random.default_rng(5)
    beta = rng.uniform(0.01, 0.06, groups.max() + 1)
    s = rng.integers(0, 4, len(y)).astype(float) if weighted else None
    res = []
    for Xf in (X, sp.csr_matrix(X), sp.csc_matrix(X)):
        P = _problem(Xf, y, groups, beta, penalize_intercept=penalize_intercept,
                     sample_weight=s)
        r = solve_exact_l1(P, tol=1e-10)
        assert r.converged and r.certificate == "kkt_violation" and r.method == "exact_l1"
        assert r.certificate_value <= 1e-10
        assert r.certificate_value == pytest.approx(np.max(P.kkt_violation(r.coef)), abs=1e-14)
        assert r.record.grad_norm[-1] == r.certificate_value and r.record.objective.size == \
            r.stats["n_outer"]
        assert r.objective == pytest.approx(P.value(r.coef), rel=1e-13)
        assert isinstance(r.factor, NewtonFactor)
        _assert_kkt(P, r.coef, 1e-9)
        res.append(r.coef)
    np.testing.assert_allclose(res[1], res[0], atol=1e-10)
    np.testing.assert_allclose(res[2], res[0], atol=1e-10)
    zeros = res[0] == 0.0  # exact zeros, and the same ones in all three
    assert zeros.sum() >= 3
    assert np.array_equal(res[1] == 0.0, zeros) and np.array_equal(res[2] == 0.0, zeros)
    # minimality: no random perturbation (zero coordinates included) does better
    P = _problem(X, y, groups, beta, penalize_intercept=penalize_intercept, sample_weight=s)
    f0 = P.value(res[0])
    for _ in range(20):
        assert P.value(res[0] + 1e-4 * rng.standard_normal(res[0].size)) > f0


def test_zero_weight_group_equals_unpenalised_coordinates():
    X, y = _data(n=80, d=12, seed=24)
    groups = _groups(12, [3, 3, 3, 3])
    beta = np.array([0.05, 0.0, 0.08, 0.04])
    P = _problem(X, y, groups, beta, penalize_intercept=False)
    g_free = np.where(groups == 1, -1, np.where(groups > 1, groups - 1, groups))
    Q = _problem(X, y, g_free, beta[[0, 2, 3]], penalize_intercept=False)
    r, q = solve_exact_l1(P, tol=1e-11), solve_exact_l1(Q, tol=1e-11)
    np.testing.assert_allclose(r.coef, q.coef, atol=1e-10)
    np.testing.assert_array_equal(r.active_set, q.active_set)
    np.testing.assert_allclose(r.factor.hessian(), q.factor.hessian(), rtol=1e-9,
                               atol=1e-12)


def test_integer_sample_weights_equal_row_duplication():
    X, y = _data(n=60, d=10, seed=6)
    rng = np.random.default_rng(7)
    c = rng.integers(1, 4, len(y))
    groups = _groups(10, [2] * 5)
    beta = np.full(5, 0.04)
    Xd, yd = np.repeat(X, c, axis=0), np.repeat(y, c)
    # (1/n) sum s_i l_i = (1/n') sum over duplicated rows when s = c n / n'
    Pw = _problem(X, y, groups, beta, penalize_intercept=False,
                  sample_weight=c * len(y) / len(yd))
    Pd = _problem(Xd, yd, groups, beta, penalize_intercept=False)
    np.testing.assert_allclose(solve_exact_l1(Pw).coef, solve_exact_l1(Pd).coef, atol=1e-9)


def test_warm_starts_are_cheap():
    X, y = _data(n=150, d=60, seed=8)
    rng = np.random.default_rng(9)
    P = _problem(X, y, np.arange(60), np.full(60, 0.03), penalize_intercept=False)
    cold = solve_exact_l1(P)
    again = solve_exact_l1(P, w0=cold.coef)
    assert again.converged and again.n_iter == 0 and again.stats["n_outer"] == 1
    np.testing.assert_array_equal(again.coef, cold.coef)
    for beta in (P.weights * 1.01, P.weights * np.exp(0.02 * rng.standard_normal(61)[:60])):
        P2 = P.with_weights(beta)
        warm = solve_exact_l1(P2, w0=cold.coef)
        ref = solve_exact_l1(P2)
        assert warm.converged and warm.n_iter <= 3 < cold.n_iter
        np.testing.assert_allclose(warm.coef, ref.coef, atol=1e-9)


def test_iteration_cap_warns():
    X, y = _data(n=150, d=60, seed=8)
    P = _problem(X, y, np.arange(60), np.full(60, 0.01), penalize_intercept=False)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        r = solve_exact_l1(P, max_iter=1)
    assert not r.converged and r.n_iter == 1 and r.certificate_value > 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solve_exact_l1(P, max_iter=1, warn=False)


def test_large_weights_give_the_intercept_only_model():
    X, y = _data(seed=10)
    groups = _groups(15, [3] * 5)
    P = _problem(X, y, groups, np.full(5, 100.0), penalize_intercept=False)
    r = solve_exact_l1(P)
    assert np.all(r.coef[:-1] == 0.0) and r.coef[-1] != 0.0
    np.testing.assert_array_equal(r.active_set, [15])
    # beta_max,k = ||grad_k f|| at the intercept-only model: just above it w stays 0,
    # just below it group k enters (alone)
    g = _smooth_grad(P, r.coef)
    gn = np.array([np.linalg.norm(g[P.groups == k]) for k in range(5)])
    assert np.all(solve_exact_l1(P.with_weights(gn * 1.001), w0=r.coef).coef[:-1] == 0)
    k = int(np.argmax(gn))
    below = gn * 1.2  # the others well above their threshold
    below[k] = gn[k] * 0.99
    w = solve_exact_l1(P.with_weights(below), w0=r.coef).coef
    assert np.flatnonzero(w[:-1]).tolist() == np.flatnonzero(groups == k).tolist()


def test_small_hinge_smoothing_by_continuation():
    X, y = _data(n=150, d=30, seed=17)
    groups = _groups(30, [1] * 10 + [2] * 5 + [5] * 2)
    P = WeightedL1SVMProblem(X, y, 1e-3, ALPHA, np.r_[np.ones(30, bool), False],
                             np.full(17, 0.02), np.r_[groups, -1])
    r = solve_exact_l1(P, tol=1e-11)
    assert r.converged and r.stats["continuation"] == (0.25, 0.025, 0.0025)
    s = np.ones(len(y))
    g = P.X.T @ (s * SmoothedHinge(1e-3).derivative(y, X @ r.coef)) / len(y) \
        + ALPHA * P.l2_mask * r.coef
    assert np.all(np.abs(g[P.groups < 0]) <= 1e-11)
    for k in range(P.n_groups):
        idx = P.groups == k
        nk = np.linalg.norm(r.coef[idx])
        res = g[idx] + (P.weights[k] * r.coef[idx] / nk if nk else 0.0)
        assert (np.linalg.norm(res) <= 1e-11 if nk else
                np.linalg.norm(g[idx]) <= P.weights[k] + 1e-11)
    # the minimiser is unique (alpha-strongly convex): any start reaches it
    other = solve_exact_l1(P, w0=np.full(31, 0.3), tol=1e-11)
    assert other.stats["continuation"] == ()
    np.testing.assert_allclose(other.coef, r.coef, atol=1e-8)


def test_group_shrink_solves_the_block_problem():
    from bisvm.solvers.primal._exact_l1_kernels import group_shrink

    rng = np.random.default_rng(18)
    for m in (2, 3, 6):
        A = rng.standard_normal((m, 2 * m))
        lam = np.sort(np.linalg.eigvalsh(A @ A.T / m + 1e-3 * np.eye(m)))
        for beta in (0.0, 0.3, 2.0):
            c = rng.standard_normal(m)
            v = group_shrink(lam, c, beta)
            if np.linalg.norm(c) <= beta:
                assert np.all(v == 0.0)
                continue
            # optimality of 1/2 v'Lv - c'v + beta ||v||: L v - c + beta v/||v|| = 0
            res = lam * v - c + (beta * v / np.linalg.norm(v) if beta else 0.0)
            assert np.linalg.norm(res) <= 1e-12 * max(1.0, np.linalg.norm(c))


def _hypergradient_case(model, sparse=False):
    X, y = _data(n=100, d=18, seed=11)
    groups = np.arange(18) if model == "vector" else _groups(18, [3] * 4 + [2] * 3)
    rng = np.random.default_rng(12)
    beta = rng.uniform(0.02, 0.07, groups.max() + 1)
    P = _problem(sp.csr_matrix(X) if sparse else X, y, groups, beta,
                 penalize_intercept=False)
    V, eta = rng.standard_normal((40, 19)), rng.standard_normal(40)
    return P, V, eta


@pytest.mark.parametrize("model,sparse", [("vector", False), ("group", False),
                                          ("group", True)])
def test_hypergradient_matches_finite_differences(model, sparse):
    P, V, eta = _hypergradient_case(model, sparse)

    def J(w):
        return 0.5 * np.sum((V @ w - eta) ** 2) / len(eta)

    r = solve_exact_l1(P, tol=1e-13)
    dJ = V.T @ (V @ r.coef - eta) / len(eta)
    lam = -r.factor.solve(dJ)
    hg = group_l1_weight_vjp(r.coef, P.groups, P.n_groups, lam)
    fd = np.empty(P.n_groups)
    for k in range(P.n_groups):
        h = 1e-4 * P.weights[k]
        vals = []
        for sgn in (1, -1):
            b = P.weights.copy()
            b[k] += sgn * h
            rk = solve_exact_l1(P.with_weights(b), w0=r.coef, tol=1e-13)
            assert np.array_equal(rk.active_set, r.active_set)
            vals.append(J(rk.coef))
        fd[k] = (vals[0] - vals[1]) / (2 * h)
    # the same through the package's adjoint hypergradient and the problem's penalty terms
    ridge, pen = P.penalty.terms
    hg2, lam2 = adjoint_hypergradient(r.factor, dJ, lambda v: pen.weight_vjp(r.coef, v))
    np.testing.assert_allclose(hg2, hg, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(lam2, lam, rtol=1e-12, atol=1e-15)
    zero = P.group_norms(r.coef) == 0
    assert zero.any() and not zero.all()
    assert np.all(hg[zero] == 0.0) and np.all(np.abs(fd[zero]) < 1e-10)
    np.testing.assert_allclose(hg, fd, rtol=1e-5, atol=1e-5 * np.max(np.abs(fd)))


def test_directional_derivative_of_the_solution():
    # dw = -H_SS^{-1} (d grad_w P / d beta) db, against central differences of w(beta)
    P, _, _ = _hypergradient_case("group", sparse=True)
    r = solve_exact_l1(P, tol=1e-13)
    db = np.random.default_rng(19).uniform(-1, 1, P.n_groups) * P.weights
    dw = -r.factor.solve(group_l1_weight_jvp(r.coef, P.groups, db), rtol=1e-12)
    h = 1e-5
    wp, wm = (solve_exact_l1(P.with_weights(P.weights + s * h * db), w0=r.coef,
                             tol=1e-13).coef for s in (1, -1))
    np.testing.assert_allclose(dw, (wp - wm) / (2 * h), atol=1e-6 * np.max(np.abs(dw)))
    assert np.all(dw[r.coef == 0] == 0.0)


def test_support_factor_is_the_hessian_on_the_support():
    P, _, _ = _hypergradient_case("group")
    r = solve_exact_l1(P, tol=1e-13)
    w, S = r.coef, r.active_set

    def grad_E(w):  # smooth on the support: loss, ridge and beta_k w_k / ||w_k||
        norms = P.group_norms(w)
        pen = P.groups >= 0
        g = _smooth_grad(P, w)
        g[pen] += (P.weights / np.where(norms > 0, norms, 1.0))[P.groups[pen]] * w[pen]
        return g

    h = 1e-6
    H_fd = np.empty((S.size, S.size))
    for a, j in enumerate(S):
        e = np.zeros_like(w)
        e[j] = h
        H_fd[:, a] = (grad_E(w + e) - grad_E(w - e))[S] / (2 * h)
    H = r.factor.hessian()
    np.testing.assert_allclose(H, H_fd, atol=1e-6 * np.max(np.abs(H)))
    rng = np.random.default_rng(13)
    v = rng.standard_normal(w.size)
    Hv = r.factor.matvec(v)
    np.testing.assert_allclose(Hv[S], H @ v[S], rtol=1e-12, atol=1e-14)
    assert np.all(np.delete(Hv, S) == 0.0)
    x = r.factor.solve(Hv)
    np.testing.assert_allclose(x[S], v[S], rtol=1e-9, atol=1e-9)
    assert np.all(np.delete(x, S) == 0.0)
    # a matrix right-hand side, and the CG path used for large supports
    B = rng.standard_normal((w.size, 3))
    X2 = r.factor.solve(B)
    assert r.factor.direct
    r.factor.max_dense = 0
    assert not r.factor.direct
    np.testing.assert_allclose(r.factor.solve(B), X2, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(r.factor.solve(B[:, 0], x0=X2[:, 0]), X2[:, 0], atol=1e-9)
    assert r.factor.n_matvec > 0


def test_weight_vjp_matches_the_pseudo_huber_jacobian():
    rng = np.random.default_rng(14)
    groups = np.r_[np.repeat(np.arange(6), [1, 3, 2, 2, 1, 3]), -1, -1]
    w = rng.standard_normal(groups.size)
    w[groups == 2] = 0.0
    w[groups == 4] = 0.0
    # gamma^2 = 1e-300 vanishes next to ||w_k||^2: w_k / sqrt(gamma^2 + ||w_k||^2) = w_k / ||w_k||
    jac = GroupPseudoHuber(np.ones(6), groups, smoothing=1e-150).weight_jacobian(w)
    lam = rng.standard_normal((groups.size, 4))
    np.testing.assert_allclose(group_l1_weight_vjp(w, groups, 6, lam), jac.T @ lam,
                               rtol=1e-14)
    np.testing.assert_allclose(group_l1_weight_vjp(w, groups, 6, lam[:, 0]),
                               jac.T @ lam[:, 0], rtol=1e-14)
    db = rng.standard_normal(6)
    np.testing.assert_allclose(group_l1_weight_jvp(w, groups, db), jac @ db, rtol=1e-14)
    hub = GroupPseudoHuber(np.ones(6), groups, smoothing=1e-150)
    np.testing.assert_allclose(group_l1_weight_jvp(w, groups, db), hub.weight_jvp(w, db),
                               rtol=1e-14)
    with pytest.raises(ValueError, match="db has"):
        group_l1_weight_jvp(w, groups, db[:3])
    with pytest.raises(ValueError, match="matching"):
        group_l1_weight_vjp(w, groups, 6, lam[:-1])
    with pytest.raises(ValueError, match="n_groups"):
        group_l1_weight_vjp(w, groups, 5, lam)


def test_smoothed_solutions_approach_the_exact_one():
    X, y = _data(seed=15, d=12)
    groups = _groups(12, [2] * 4 + [1] * 4)
    beta = np.full(8, 0.06)
    P = _problem(X, y, groups, beta, penalize_intercept=False)
    w0 = solve_exact_l1(P, tol=1e-12).coef
    gaps, vals = [], []
    for gamma in (1e-1, 1e-2, 1e-3, 1e-4):
        ll = LowerLevel(l2_penalty=ALPHA, hinge_smoothing=MU, l1_smoothing=gamma,
                        penalize_intercept=False)
        wg = ll.solve(ll.problem(X, y, P.groups, beta), tol=1e-11).coef
        gaps.append(np.linalg.norm(wg - w0))
        vals.append(P.value(wg))
    assert all(a > b for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-3 and gaps[-1] / gaps[-2] < 0.2  # O(gamma) convergence
    assert all(v >= P.value(w0) for v in vals)  # w0 minimises E0
    assert all(a >= b for a, b in zip(vals, vals[1:]))


def test_factor_is_a_newton_factor():
    assert issubclass(SupportNewtonFactor, NewtonFactor)


def test_penalty_terms_mirror_the_smoothed_lower_level():
    X, y = _data(seed=20)
    groups = _groups(15, [3] * 5)
    P = _problem(X, y, groups, np.linspace(0.01, 0.05, 5), penalize_intercept=False)
    w = np.random.default_rng(21).standard_normal(16)
    w[P.groups == 1] = 0.0
    ridge, pen = P.penalty.terms
    loss = np.mean(SmoothedHinge(MU).value(y, X @ w))
    assert P.value(w) == pytest.approx(loss + P.penalty.value(w), rel=1e-14)
    np.testing.assert_allclose(ridge.gradient(w), ALPHA * P.l2_mask * w)
    np.testing.assert_array_equal(pen.group_norms(w), P.group_norms(w))
    lam = np.random.default_rng(22).standard_normal(16)
    np.testing.assert_array_equal(pen.weight_vjp(w, lam),
                                  group_l1_weight_vjp(w, P.groups, P.n_groups, lam))
    assert pen.with_weights(np.ones(5)).value(w) == pytest.approx(P.group_norms(w).sum())


def _bad(**kw):
    X, y = _data(n=20, d=4, seed=16)
    args = dict(X=X, y=y, hinge_smoothing=MU, l2_penalty=ALPHA, l2_mask=None,
                weights=np.full(4, 0.1), groups=np.r_[np.arange(4), -1])
    args.update(kw)
    return WeightedL1SVMProblem(**args)


X20 = _data(n=20, d=4, seed=16)[0]


@pytest.mark.parametrize("kw,err,match", [
    (dict(X=np.where(np.eye(20, 5) > 0, np.nan, X20)), ValueError, "NaN"),
    (dict(X=X20[:, 0]), ValueError, "2-D"),
    (dict(X=X20.tolist()), TypeError, "numpy array"),
    (dict(X=sp.coo_matrix(X20)), TypeError, "CSR or CSC"),
    (dict(X=X20.astype(str)), TypeError, "real numbers"),
    (dict(y=np.zeros(20)), ValueError, "-1, \\+1"),
    (dict(y=np.ones(19)), ValueError, "length 20"),
    (dict(hinge_smoothing=0.0), ValueError, "hinge_smoothing"),
    (dict(l2_penalty=-1.0), ValueError, "l2_penalty"),
    (dict(l2_penalty="a"), TypeError, "l2_penalty"),
    (dict(l2_mask=np.ones(4, bool)), ValueError, "l2_mask"),
    (dict(l2_mask=np.ones(5)), TypeError, "l2_mask"),
    (dict(weights=np.full(3, 0.1)), ValueError, "weights"),
    (dict(weights=np.array([0.1, -0.1, 0.1, 0.1])), ValueError, "non-negative"),
    (dict(groups=np.array([0, 2, 2, 3, -1])), ValueError, "without gaps"),
    (dict(groups=np.arange(4)), ValueError, "groups"),
    (dict(sample_weight=-np.ones(20)), ValueError, "sample_weight"),
    (dict(sample_weight=np.ones(3)), ValueError, "sample_weight"),
])
def test_bad_problem_input(kw, err, match):
    with pytest.raises(err, match=match):
        _bad(**kw)


def test_singular_support_hessian_is_reported():
    # one class and a free, unridged intercept: E0 has no minimiser (the intercept
    # drifts to +inf), the solver stops at a tiny gradient, H_SS is singular
    X, _ = _data(n=30, d=4, seed=23)
    P = WeightedL1SVMProblem(X, np.ones(30), 0.01, ALPHA, np.r_[np.ones(4, bool), False],
                             np.full(4, 1.0), np.r_[np.arange(4), -1])
    r = solve_exact_l1(P)
    assert r.converged and r.coef[-1] > 1.0
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        r.factor.solve(np.ones(5))


def test_bad_solver_input():
    P = _bad()
    with pytest.raises(TypeError, match="WeightedL1SVMProblem"):
        solve_exact_l1("problem")
    with pytest.raises(ValueError, match="tol"):
        solve_exact_l1(P, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        solve_exact_l1(P, max_iter=0)
    with pytest.raises(ValueError, match="w0"):
        solve_exact_l1(P, w0=np.zeros(3))
    with pytest.raises(ValueError, match="w0"):
        solve_exact_l1(P, w0=np.full(5, np.inf))
    with pytest.raises(ValueError, match="weights"):
        P.with_weights(np.ones(2))
    r = solve_exact_l1(P)
    with pytest.raises(ValueError, match="rhs"):
        r.factor.solve(np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        r.factor.matvec(np.ones(3))
