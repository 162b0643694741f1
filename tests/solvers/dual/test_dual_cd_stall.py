"""Dual coordinate descent that never stalls: on nearly collinear columns the squared
losses finish in the primal (checked against LIBLINEAR's converged ``-s 2`` objective and
our own primal solvers), the hinge's duality gap is below ``tol`` when it says converged
(recomputed here from α alone), the cap warning states the gap, and CSR input is read in
place."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning

from bisvm.estimators.linear import LinearSVC
from bisvm.estimators.linear_svr import LinearSVR
from bisvm.losses import Hinge, SquaredEpsilonInsensitive, SquaredHinge
from bisvm.solvers.base import CERTIFICATES
from bisvm.solvers.dual.dual_cd import (
    LinearDesign,
    solve_dual_cd,
    solve_dual_cd_svr,
    svm_primal_objective,
)
from bisvm.solvers.primal.svr_finite_newton import solve_svr_finite_newton
from bisvm.solvers.problems import LinearProblem


def dense_redundant(n=2000, seed=0):
    """200 columns, half of them random mixtures of the other half (which already holds
    make_classification's redundant columns): dual CD crawls on such data."""
    rng = np.random.default_rng(seed)
    X, y = make_classification(n, 100, n_informative=20, n_redundant=30, flip_y=0.05,
                               random_state=seed)
    X = np.c_[X, X @ (rng.normal(size=(100, 100)) / 10.0)]
    return X, 2.0 * y - 1.0


def sparse_redundant(n=3000, d=300, seed=0):
    """CSR: 5 % dense columns and d / 2 sparse mixtures of them."""
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=0.05, random_state=seed, format="csr",
                  data_rvs=rng.standard_normal)
    M = sp.random(d, d // 2, density=0.02, random_state=seed + 1, format="csr",
                  data_rvs=rng.standard_normal)
    X = sp.hstack([A, A @ M]).tocsr()
    y = np.where(A @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def liblinear_objective(X, y, C, solver, eps):
    """LIBLINEAR's own solution (``liblinear-official``), bias feature 1, scored by our
    primal objective."""
    ll = pytest.importorskip("liblinear.liblinearutil",
                             reason="liblinear-official is not installed")
    m = ll.train(ll.problem(y, X, bias=1), f"-s {solver} -c {C} -e {eps} -B 1 -q")
    w = np.array([m.w[j] for j in range(X.shape[1] + 1)])
    if m.get_labels()[0] != 1:  # LIBLINEAR's first label is its positive class
        w = -w
    loss = "hinge" if solver == 3 else "squared_hinge"
    return svm_primal_objective(X, y, w, np.full(len(y), C), loss, 1.0)


def independent_gap(X, y, alpha, C, bias):
    """(P(w(α)) - D(α)) / P(w(α)) of the hinge from α alone: w = Σ α_i y_i x̃_i."""
    Xa = sp.hstack([X, np.full((X.shape[0], 1), bias)]).tocsr() if sp.issparse(X) else (
        np.c_[X, np.full(X.shape[0], bias)])
    w = np.asarray(Xa.T @ (alpha * y)).ravel()
    primal = 0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * (Xa @ w)).sum()
    dual = alpha.sum() - 0.5 * w @ w
    return (primal - dual) / primal


@pytest.mark.parametrize("make", [dense_redundant, sparse_redundant])
def test_squared_hinge_stall_finishes_at_liblinears_optimum(make, capsys):
    X, y = make()
    problem = LinearProblem(X, y, SquaredHinge(), np.ones(len(y)), bias=1.0)
    r = solve_dual_cd(problem, tol=1e-6, stopping="duality_gap", verbose=1)
    assert r.stats["switched_to_primal"] and r.stats["stop"] == "stalled"
    assert r.converged and r.certificate == "relative_gradient_norm"
    assert "switching to the primal finite Newton solver" in capsys.readouterr().out
    ref = liblinear_objective(X, y, 1.0, 2, 1e-8)
    assert r.objective == pytest.approx(ref, rel=1e-6)
    # without the fallback the same epochs stop far from it or take many more epochs
    slow = solve_dual_cd(problem, tol=1e-6, stopping="duality_gap", max_iter=r.n_iter,
                         primal_fallback=False, warn=False)
    assert slow.objective > ref * (1 + 1e-6)


def test_linear_svc_dual_true_reaches_the_optimum_and_names_its_certificate():
    X, y = dense_redundant()
    est = LinearSVC(dual=True, C=1.0, tol=1e-6, random_state=0).fit(X, y)
    ref = liblinear_objective(X, y, 1.0, 2, 1e-8)
    assert est.objective_[0] == pytest.approx(ref, rel=1e-6)
    assert est.certificate_.shape == (1,) and est.certificate_name_.shape == (1,)
    assert est.certificate_name_[0] == "relative_gradient_norm"
    assert est.certificate_[0] <= 1e-6


def test_squared_svr_stall_finishes_at_the_primal_optimum():
    X, t = dense_redundant()
    z = X[:, :20] @ np.linspace(-1, 1, 20) + 0.1 * t
    problem = LinearProblem(X, z, SquaredEpsilonInsensitive(0.1), np.ones(len(z)), bias=1.0)
    r = solve_dual_cd_svr(problem, tol=1e-6, stopping="duality_gap")
    ref = solve_svr_finite_newton(problem, tol=1e-12, max_iter=200)
    assert r.stats["switched_to_primal"]
    assert r.objective == pytest.approx(ref.objective, rel=1e-8)
    # β recovered from the primal optimality conditions: w - Σ β_i x̃_i is the primal
    # gradient, small at the primal solve's accuracy
    resid = np.r_[r.coef - X.T @ r.dual_coef, r.intercept - r.dual_coef.sum()]
    assert np.linalg.norm(resid) <= 1e-3 * np.linalg.norm(r.coef)


@pytest.mark.parametrize("sparse", [False, True])
def test_hinge_duality_gap_is_below_tol_when_converged(sparse):
    X, y = make_classification(800, 30, n_informative=8, random_state=3)
    y = 2.0 * y - 1.0
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    for tol in (1e-3, 1e-6):
        r = solve_dual_cd(LinearProblem(X, y, Hinge(), np.full(len(y), 0.5), bias=1.0),
                          tol=tol, stopping="duality_gap", max_iter=100000)
        assert r.converged and r.certificate == "duality_gap"
        assert r.certificate_value <= tol
        assert independent_gap(X, y, r.dual_coef, 0.5, 1.0) <= tol
        assert r.objective + r.dual_objective <= tol * r.objective


def test_hinge_cap_warning_states_the_gap():
    X, y = dense_redundant(1000)
    with pytest.warns(ConvergenceWarning, match=r"relative duality gap reached [0-9.e+-]+"):
        est = LinearSVC(loss="hinge", dual=True, max_iter=5, random_state=0,
                        stopping="duality_gap").fit(X, y)
    assert est.certificate_name_[0] == "duality_gap" and est.certificate_[0] > est.tol
    with pytest.warns(ConvergenceWarning, match=r"at a relative duality gap of"):
        solve_dual_cd(LinearProblem(X, y, Hinge(), np.ones(len(y))), max_iter=5,
                      stopping="duality_gap")


def test_certificate_per_one_vs_rest_problem():
    X, y = make_classification(600, 10, n_informative=6, n_redundant=0, n_classes=4,
                               random_state=0)
    for kw in (dict(dual=True), dict(dual=True, stopping="projected_gradient"),
               dict(dual=False), dict(loss="hinge", dual=True)):
        est = LinearSVC(random_state=0, **kw).fit(X, y)
        assert est.certificate_.shape == (4,) and est.certificate_name_.shape == (4,)
        assert all(name in CERTIFICATES for name in est.certificate_name_)
    X, z = make_regression(300, 10, noise=1.0, random_state=0)
    svr = LinearSVR(random_state=0, stopping="duality_gap").fit(X, z)
    assert svr.certificate_.shape == (1,) and svr.certificate_name_[0] == "duality_gap"


def test_bad_stopping_is_refused():
    X, y = dense_redundant(200)
    with pytest.raises(ValueError, match="stopping"):
        solve_dual_cd(LinearProblem(X, y, Hinge(), np.ones(len(y))), stopping="gap")
    with pytest.raises(ValueError, match="'stopping' parameter of LinearSVC"):
        LinearSVC(stopping="gap").fit(X, y)


@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_csr_float64_is_read_in_place(itype):
    X, y = make_classification(400, 20, n_informative=6, n_redundant=0, random_state=2)
    X = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    y = 2.0 * y - 1.0
    X = sp.csr_matrix((X.data, X.indices.astype(itype), X.indptr.astype(itype)),
                      shape=X.shape)
    D = LinearDesign(X)
    assert D.data is X.data and D.indices is X.indices and D.indptr is X.indptr
    a = solve_dual_cd(LinearProblem(X, y, Hinge(), np.ones(len(y)), bias=1.0), tol=1e-8,
                      stopping="duality_gap", max_iter=100000)
    b = solve_dual_cd(LinearProblem(X.toarray(), y, Hinge(), np.ones(len(y)), bias=1.0),
                      tol=1e-8, stopping="duality_gap", max_iter=100000)
    assert a.objective == pytest.approx(b.objective, rel=1e-7)
    # the estimator hands CSR float64 (int64 indices too) to the solver as it is
    seen = {}
    import bisvm.estimators.linear as linear

    def spy(est, X_, *args):
        seen["X"] = X_
        return solve_dual_cd(LinearProblem(X_, args[0], Hinge(), args[1], bias=args[2]),
                             max_iter=100000, warn=False)

    original = linear._BINARY_SOLVERS["dual_cd"]
    linear._BINARY_SOLVERS["dual_cd"] = spy
    try:
        LinearSVC(loss="hinge").fit(X, y)
    finally:
        linear._BINARY_SOLVERS["dual_cd"] = original
    assert seen["X"].data is X.data and seen["X"].indices is X.indices


def test_samples_with_zero_rows_and_no_bias_sit_at_their_optimum():
    X, y = make_classification(300, 5, random_state=1)
    X[:10] = 0.0
    y = 2.0 * y - 1.0
    r = solve_dual_cd(LinearProblem(X, y, Hinge(), np.full(len(y), 0.7)), tol=1e-8,
                      stopping="duality_gap", max_iter=100000)
    assert r.converged
    np.testing.assert_allclose(r.dual_coef[:10], 0.7)
    assert independent_gap(X, y, r.dual_coef, 0.7, 0.0) <= 1e-8


def test_hinge_defaults_to_the_duality_gap_and_certifies_it():
    X, y = make_classification(800, 30, n_informative=8, random_state=3)
    y = 2.0 * y - 1.0
    est = LinearSVC(loss="hinge", C=0.5, tol=1e-4, max_iter=100000, random_state=0,
                    warm_start=True).fit(X, y)
    assert est.certificate_name_[0] == "duality_gap" and est.certificate_[0] <= 1e-4
    # weak duality: the dual value of α alone bounds the optimum from below
    assert independent_gap(X, y, est.dual_coef_[0], 0.5, 1.0) <= 1e-4
    parity = LinearSVC(loss="hinge", C=0.5, tol=0.1, stopping="projected_gradient",
                       random_state=0)
    assert parity.fit(X, y).certificate_name_[0] == "projected_gradient_spread"
    X, z = make_regression(300, 10, noise=1.0, random_state=0)
    assert LinearSVR(random_state=0).fit(X, z).certificate_name_[0] == "duality_gap"


def _mirrored_separable(seed, n=20):
    """(x, +1) and (-x, -1): separable, with four free support vectors at C = 1e8 in
    three coordinates (two features and the intercept), so a margin off in its last bit
    costs C times that bit."""
    rng = np.random.RandomState(seed)
    Xp = rng.randn(n, 2)
    Xp[:, 0] = 0.5 + np.abs(Xp[:, 0]) * 2
    return np.r_[Xp, -Xp], np.r_[np.ones(n), -np.ones(n)]


@pytest.mark.parametrize("seed", [0, 1])
def test_huge_C_gap_rule_stops_at_float64_resolution(seed):
    X, y = _mirrored_separable(seed)
    problem = LinearProblem(X, y, Hinge(), np.full(len(y), 1e8), bias=1.0)
    r = solve_dual_cd(problem, tol=1e-8, max_iter=200_000, stopping="duality_gap")
    pg = solve_dual_cd(problem, tol=1e-8, max_iter=200_000)
    assert r.converged and r.n_iter < 200_000
    # every margin is 1 to the last bits: the hard margin, not C times a residual
    Xa = np.c_[X, np.ones(len(y))].astype(np.longdouble)
    w = np.r_[r.coef, r.intercept].astype(np.longdouble)
    m = np.asarray(y * (Xa @ w), dtype=float)
    assert m.min() >= 1 - 1e-14
    assert r.objective <= pg.objective
    # the gap recomputed in extended precision is C times those last bits
    primal = 0.5 * w @ w + 1e8 * np.maximum(0.0, 1.0 - y * (Xa @ w)).sum()
    assert float((primal + r.dual_objective) / primal) <= 1e-6


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("regression", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_loss_sum_rounding_bound_covers_the_exact_loss(squared, regression, sparse):
    """The uncertainty returned with the loss bounds its distance from the loss computed
    in extended precision, at margins placed on the kink."""
    rng = np.random.default_rng(0)
    n, d, bias, eps = 400, 50, 1.0, 0.3
    # columns scaled over ten decades: the bound must follow the terms, not the norms
    X = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-5, 5, d)
    X = np.where(rng.random((n, d)) < 0.3, X, 0.0)
    w = rng.standard_normal(d + 1) / np.r_[np.abs(X).max(axis=0) + 1e-300, 1.0]
    z = X @ w[:d] + bias * w[d]
    y = rng.choice([-1.0, 1.0], n)
    if regression:
        y = z + rng.choice([-eps, eps], n)  # on the kink |y - z| = ε
    else:
        y = np.where(z >= 0, 1.0, -1.0)
        w = w / np.median(np.abs(z))  # margins around 1, some within rounding of it
    cost = np.full(n, 1e9)
    D = LinearDesign(sp.csr_matrix(X) if sparse else X)
    loss, floor = D.loss_sum(w, bias, y, cost, squared=squared, regression=regression,
                             eps=eps)
    Xl = np.c_[X, np.full(n, bias)].astype(np.longdouble)
    zl = Xl @ w.astype(np.longdouble)
    t = (np.abs(y - zl) - eps) if regression else (1 - y * zl)
    t = np.maximum(t, 0)
    exact = float(np.sum(cost * (t * t if squared else t)))
    assert abs(loss - exact) <= floor + 1e-15 * exact
    assert floor <= 1e-9 * max(exact, cost.sum())
