"""The primal L2 solvers at scale: the caller's arrays without a copy, the implicit
intercept against an explicit column, the optimum against scikit-learn's LIBLINEAR,
the one-pass line search against the sorted-breakpoint one, the truncated Newton CG,
and bit-identical iterates for every ``n_jobs``."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC, LinearSVR

from bisvm.losses import SquaredEpsilonInsensitive, SquaredHinge
from bisvm.solvers.primal import linear_design
from bisvm.solvers.primal._linear_kernels import SQUARED_EPSILON_INSENSITIVE, SQUARED_HINGE
from bisvm.solvers.primal.cg import truncated_newton_cg
from bisvm.solvers.primal.finite_newton import exact_line_search, solve_finite_newton
from bisvm.solvers.primal.linear_design import LinearDesign
from bisvm.solvers.primal.svr_finite_newton import solve_svr_finite_newton
from bisvm.solvers.problems import LinearProblem


def _sparse(n=600, d=80, density=0.1, seed=0, index_dtype=np.int32):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed,
                  data_rvs=rng.standard_normal)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    w = rng.standard_normal(d)
    score = X @ w
    y = np.where(score + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, score + 0.1 * rng.standard_normal(n)


def _svm_objective(X, y, w, b, C, bias):
    wb = np.r_[w, b / bias] if bias > 0 else w
    r = np.maximum(0.0, 1.0 - y * (X @ w + b))
    return 0.5 * wb @ wb + C * r @ r


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_float64_reaches_the_solver_without_a_copy(index_dtype, monkeypatch):
    X, y, _ = _sparse(index_dtype=index_dtype)
    seen = []
    init = LinearDesign.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        seen.append(self)

    monkeypatch.setattr(linear_design.LinearDesign, "__init__", spy)
    solve_finite_newton(LinearProblem(X, y, SquaredHinge(), np.ones(len(y)), bias=1.0),
                        tol=1e-8, linear_solver="cg")
    (design,) = seen
    assert not design.copied
    assert design.csr[0] is X.data and design.csr[1] is X.indices
    assert design.csr[2] is X.indptr


def test_dense_c_float64_is_used_in_place_and_others_are_converted():
    X = np.random.default_rng(0).standard_normal((50, 4))
    assert np.shares_memory(LinearDesign(X, 1.0).X, X) and not LinearDesign(X).copied
    assert LinearDesign(np.asfortranarray(X)).copied
    assert LinearDesign(sp.csc_matrix(X)).copied


@pytest.mark.parametrize("solver", ["cholesky", "cg"])
@pytest.mark.parametrize("sparse", [False, True])
def test_implicit_intercept_equals_an_appended_column(solver, sparse):
    X, y, _ = _sparse()
    Xd = X if sparse else X.toarray()
    Xa = sp.hstack([X, np.full((X.shape[0], 1), 2.0)], format="csr")
    Xa = Xa if sparse else Xa.toarray()
    c = np.full(len(y), 0.7)
    a = solve_finite_newton(LinearProblem(Xd, y, SquaredHinge(), c, bias=2.0), tol=1e-12,
                            linear_solver=solver)
    b = solve_finite_newton(LinearProblem(Xa, y, SquaredHinge(), c), tol=1e-12,
                            linear_solver=solver)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.coef, b.coef[:-1], rtol=1e-8, atol=1e-10)
    assert a.intercept == pytest.approx(2.0 * b.coef[-1], rel=1e-8, abs=1e-10)
    assert a.objective == pytest.approx(b.objective, rel=1e-12)


@pytest.mark.parametrize("solver", ["cholesky", "cg"])
def test_squared_hinge_matches_liblinear(solver):
    X, y, _ = _sparse(n=800, d=60)
    C, bias = 0.5, 1.0
    res = solve_finite_newton(LinearProblem(X, y, SquaredHinge(), np.full(len(y), C),
                                            bias=bias), tol=1e-12, linear_solver=solver)
    ref = LinearSVC(C=C, loss="squared_hinge", dual=False, tol=1e-12, max_iter=100000,
                    intercept_scaling=bias).fit(X, y)
    ours = _svm_objective(X, y, res.coef, res.intercept, C, bias)
    theirs = _svm_objective(X, y, ref.coef_.ravel(), ref.intercept_[0], C, bias)
    assert ours == pytest.approx(res.objective, rel=1e-12)
    assert ours <= theirs * (1 + 1e-9)
    assert ours == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("solver", ["cholesky", "cg"])
def test_svr_matches_liblinear(solver):
    X, _, t = _sparse(n=800, d=60)
    C, eps, bias = 2.0, 0.1, 1.0
    res = solve_svr_finite_newton(
        LinearProblem(X, t, SquaredEpsilonInsensitive(eps), np.full(len(t), C), bias=bias),
        tol=1e-10, linear_solver=solver)
    ref = LinearSVR(C=C, epsilon=eps, loss="squared_epsilon_insensitive", dual=False,
                    tol=1e-12, max_iter=100000, intercept_scaling=bias).fit(X, t)

    def objective(w, b):
        r = np.maximum(0.0, np.abs(t - X @ w - b) - eps)
        return 0.5 * (w @ w + (b / bias) ** 2) + C * r @ r

    ours = objective(res.coef, res.intercept)
    theirs = objective(ref.coef_, ref.intercept_[0])
    assert ours <= theirs * (1 + 1e-9) and ours == pytest.approx(theirs, rel=1e-6)
    outside = np.abs(t - X @ res.coef - res.intercept) > eps
    np.testing.assert_array_equal(res.active_set, np.flatnonzero(outside))


@pytest.mark.parametrize("seed", range(5))
def test_line_search_agrees_with_the_sorted_breakpoints(seed):
    rng = np.random.default_rng(seed)
    n = 300
    X = rng.standard_normal((n, 3))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    c = rng.random(n) + 0.1
    design = LinearDesign(X)
    z = 0.8 * rng.standard_normal(n)
    q = rng.standard_normal(n)
    q *= -np.sign(np.sum(c * y * np.maximum(0, 1 - y * z) * q)) or 1.0  # a descent direction
    wRs, sRs = -0.3 * abs(rng.standard_normal()), 2.0 * rng.random() + 0.1
    delta = design.line_search(y, c, z, q, SQUARED_HINGE, 0.0, wRs, sRs)
    ref = exact_line_search(wRs, sRs, 1.0 - y * z, y * q, c)
    assert delta == pytest.approx(ref, rel=1e-10, abs=1e-12)
    # the two-sided loss: its 2n one-sided pieces in the sorted-breakpoint search
    eps = 0.2
    delta = design.line_search(y, c, z, q, SQUARED_EPSILON_INSENSITIVE, eps, wRs, sRs)
    ref = exact_line_search(wRs, sRs, np.r_[(y - eps) - z, z - (y + eps)], np.r_[q, -q],
                            np.r_[c, c])
    assert delta == pytest.approx(ref, rel=1e-10, abs=1e-12)


def test_truncated_newton_cg_solves_the_system_and_decreases_the_model():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((40, 40))
    H = A @ A.T / 40 + np.eye(40)
    g = rng.standard_normal(40)
    M = np.diag(H)

    def model(s):
        return g @ s + 0.5 * s @ H @ s

    best = model(np.linalg.solve(H, -g))
    s, k = truncated_newton_cg(lambda v: H @ v, lambda r: r / M, g, forcing=1e-14)
    assert model(s) - best <= 1e-12 * abs(best)  # the rule bounds the model's value
    s1, k1 = truncated_newton_cg(lambda v: H @ v, lambda r: r / M, g, forcing=0.5)
    assert 1 <= k1 < k
    assert best < model(s1) < 0  # a descent direction of the quadratic model


@pytest.mark.parametrize("sparse", [False, True])
def test_iterates_are_identical_for_every_n_jobs(sparse):
    X, y, t = _sparse(n=5000, d=300, density=0.05)
    Xd = X if sparse else X.toarray()
    c = np.ones(len(y))
    fits = [solve_finite_newton(LinearProblem(Xd, y, SquaredHinge(), c, bias=1.0),
                                tol=1e-10, linear_solver="cg", n_jobs=k) for k in (1, 2)]
    assert LinearDesign(Xd, 1.0).n_blocks > 1
    np.testing.assert_array_equal(fits[0].coef, fits[1].coef)
    assert fits[0].intercept == fits[1].intercept
    np.testing.assert_array_equal(fits[0].record.objective, fits[1].record.objective)
    svr = [solve_svr_finite_newton(LinearProblem(Xd, t, SquaredEpsilonInsensitive(0.1), c),
                                   tol=1e-8, linear_solver="cg", n_jobs=k) for k in (1, 2)]
    np.testing.assert_array_equal(svr[0].coef, svr[1].coef)


def test_bad_n_jobs_and_cost_are_refused():
    X, y, _ = _sparse()
    with pytest.raises(ValueError, match="n_jobs"):
        solve_finite_newton(LinearProblem(X, y, SquaredHinge(), np.ones(len(y))), n_jobs=0)
    with pytest.raises(ValueError, match="cost"):
        solve_finite_newton(LinearProblem(X, y, SquaredHinge(), -np.ones(len(y))))
    with pytest.raises(ValueError, match="cost"):
        solve_finite_newton(LinearProblem(X, y, SquaredHinge(), np.ones(3)))


def test_verbose_shows_progress_on_stderr(capsys):
    X, y, _ = _sparse()
    solve_finite_newton(LinearProblem(X, y, SquaredHinge(), np.ones(len(y))), tol=1e-8,
                        linear_solver="cg", verbose=1)
    captured = capsys.readouterr()
    assert "finite Newton" in captured.err and "grad" in captured.err
    assert captured.out == ""
