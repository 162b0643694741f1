"""Line-search primal methods (and the finite Newton method) against scipy's
L-BFGS-B and against each other, on strongly convex problems."""

import numpy as np
import pytest
import scipy.optimize as so
from sklearn.exceptions import ConvergenceWarning

from bisvm.losses import Logistic, SmoothedHinge, Squared, SquaredHinge
from bisvm.penalties import L2, GroupPseudoHuber, SumPenalty
from bisvm.solvers import SmoothProblem, solve_lbfgs, solve_newton
from bisvm.solvers.primal.cg import conjugate_gradient, solve_nonlinear_cg
from bisvm.solvers.primal.coordinate import solve_block_coordinate_descent
from bisvm.solvers.primal.gradient import solve_gradient_descent
from bisvm.solvers.primal.quasi_newton import solve_bfgs
from bisvm.solvers.problems import LinearProblem

LOSSES = {
    "squared_hinge": SquaredHinge(),
    "logistic": Logistic(),
    "smoothed_hinge": SmoothedHinge(0.25),
    "squared": Squared(),
}

SOLVERS = {
    "gradient_descent": solve_gradient_descent,
    "bfgs": solve_bfgs,
    "lbfgs": solve_lbfgs,
    "newton": solve_newton,
    "cg_pr+": solve_nonlinear_cg,
    "cg_fr": lambda P, **k: solve_nonlinear_cg(P, beta="FR", **k),
    "cg_hs": lambda P, **k: solve_nonlinear_cg(P, beta="HS", **k),
    "bcd_1": solve_block_coordinate_descent,
    "bcd_3": lambda P, **k: solve_block_coordinate_descent(P, block_size=3, **k),
}


def _problem(loss, penalty="l2", seed=0, n=150, d=8):
    rng = np.random.default_rng(seed)
    X = np.c_[rng.normal(size=(n, d)) * np.linspace(0.5, 2.0, d), np.ones(n)]
    y = np.sign(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n))
    if penalty == "l2":
        pen = L2(0.05)
    else:  # the smoothed elastic net, groups of two
        groups = np.r_[np.repeat(np.arange(d // 2), 2), -1]
        pen = SumPenalty((L2(0.05), GroupPseudoHuber(np.full(d // 2, 0.02), groups, 0.1)))
    return SmoothProblem(X, y, loss, pen)


def _reference(P):
    return so.minimize(P.value_and_gradient, np.zeros(P.n_features), jac=True,
                       method="L-BFGS-B",
                       options=dict(gtol=1e-13, ftol=1e-16, maxiter=20000, maxcor=20))


@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_every_solver_reaches_the_scipy_optimum(loss, penalty):
    P = _problem(LOSSES[loss], penalty)
    ref = _reference(P)
    objs = {}
    for name, solve in SOLVERS.items():
        r = solve(P, tol=1e-8)
        gap = (r.objective - ref.fun) / abs(ref.fun)
        assert abs(gap) <= 1e-8, (name, gap)
        # either the gradient test was met, or the solver stopped because the objective
        # was flat to working precision (gradient still tiny)
        assert r.converged or r.certificate_value <= 1e-6, (name, r.certificate_value)
        assert r.objective == pytest.approx(P.value(r.coef), rel=1e-14)
        assert np.max(np.abs(r.coef - ref.x)) < 1e-4, name
        # the convergence record is complete and the objective never increases
        assert r.record.objective.shape == (r.n_iter + 1,)
        assert np.all(np.diff(r.record.objective) <= 1e-12 * abs(ref.fun)), name
        objs[name] = r.objective
    vals = np.array(list(objs.values()))
    assert np.ptp(vals) <= 1e-8 * abs(ref.fun)


def test_warm_start_at_the_optimum_stops_at_once():
    P = _problem(Logistic())
    r = solve_bfgs(P, tol=1e-8)
    for solve in (solve_gradient_descent, solve_bfgs, solve_nonlinear_cg,
                  solve_block_coordinate_descent):
        r2 = solve(P, w0=r.coef, tol=1e-6)
        assert r2.converged and r2.n_iter == 0


def test_linear_cg_solves_spd_system_in_at_most_d_steps():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 30))
    P = A @ A.T + 0.1 * np.eye(30)
    b = rng.normal(size=30)
    x, k, res = conjugate_gradient(lambda v: P @ v, b, tol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(P, b), rtol=1e-8, atol=1e-10)
    assert res <= 1e-12 * np.linalg.norm(b) * 10
    # conjugate directions: finite termination (a few extra steps for rounding)
    assert k <= 60


def test_bfgs_inverse_hessian_approximates_the_true_one_on_a_quadratic():
    P = _problem(Squared())
    r = solve_bfgs(P, tol=1e-10)
    H = np.linalg.inv(P.hessian(r.coef))
    Happ = r.stats["inverse_hessian"]
    # inexact (Wolfe) line searches: close, not exact; and positive definite throughout
    assert np.linalg.norm(Happ - H) / np.linalg.norm(H) < 0.2
    assert np.all(np.linalg.eigvalsh(Happ) > 0)


@pytest.mark.parametrize("solve", [solve_gradient_descent, solve_bfgs, solve_nonlinear_cg,
                                   solve_block_coordinate_descent])
def test_iteration_cap_warns(solve):
    P = _problem(SmoothedHinge(0.25))
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        r = solve(P, tol=1e-12, max_iter=2)
    assert not r.converged and r.n_iter == 2


def test_bad_parameters_are_rejected():
    P = _problem(Logistic())
    with pytest.raises(ValueError, match="tol"):
        solve_bfgs(P, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        solve_gradient_descent(P, max_iter=0)
    with pytest.raises(ValueError, match="beta"):
        solve_nonlinear_cg(P, beta="XY")
    with pytest.raises(ValueError, match="partition"):
        solve_block_coordinate_descent(P, blocks=[[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="block_size"):
        solve_block_coordinate_descent(P, block_size=0)


# --- finite Newton method ----------------------------------------------------------------

from bisvm.solvers.primal.finite_newton import (  # noqa: E402
    exact_line_search,
    greedy_kernel_finite_newton,
    solve_finite_newton,
    solve_finite_newton_problem,
)


@pytest.mark.parametrize("penalty", ["l2", "masked"])
def test_finite_newton_reaches_the_scipy_optimum_in_few_steps(penalty):
    P = _problem(SquaredHinge())
    if penalty == "masked":  # unpenalised intercept
        P = SmoothProblem(P.X, P.y, P.loss, L2(0.05, mask=np.r_[np.ones(8, bool), False]))
    ref = _reference(P)
    for solver in ("cholesky", "cg"):
        r = solve_finite_newton_problem(P, linear_solver=solver)
        assert r.converged and r.n_iter <= 15
        assert abs(r.objective - ref.fun) <= 1e-8 * abs(ref.fun)
        assert np.linalg.norm(P.gradient(r.coef)) <= 1e-8
        # agreement with the smooth solvers of the common interface
        assert r.objective == pytest.approx(solve_newton(P, tol=1e-10).objective, rel=1e-10)


def test_finite_newton_sparse_equals_dense():
    import scipy.sparse as sp

    P = _problem(SquaredHinge())
    X = np.where(np.abs(P.X) > 0.5, P.X, 0.0)
    c = np.full(len(P.y), 0.3)
    a = solve_finite_newton(LinearProblem(X, P.y, SquaredHinge(), c, quadratic=1.0))
    b = solve_finite_newton(LinearProblem(sp.csr_matrix(X), P.y, SquaredHinge(), c,
                                          quadratic=1.0))
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-10)


def test_exact_line_search_is_the_minimiser_of_the_piecewise_quadratic():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = 50
        a, b, c = rng.normal(size=n), rng.normal(size=n), rng.uniform(0.1, 2, size=n)
        wRd, dRd = rng.normal(), rng.uniform(0.0, 1.0)

        def phi(t, a=a, b=b, c=c, wRd=wRd, dRd=dRd):
            return t * wRd + 0.5 * t * t * dRd + np.sum(c * np.maximum(0, a - t * b) ** 2)

        t = exact_line_search(wRd, dRd, a, b, c)
        ref = so.minimize_scalar(phi, bounds=(0.0, 1e3), method="bounded",
                                 options=dict(xatol=1e-12))
        assert t >= 0
        assert phi(t) <= ref.fun + 1e-10
        assert phi(t) <= phi(0.0) + 1e-14


def _moons(n=120):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.25, random_state=0)
    return X, 2.0 * y - 1.0


def test_greedy_kernel_finite_newton_reaches_the_full_kernel_solution():
    from bisvm.kernels import make_kernel

    X, y = _moons(60)
    k = make_kernel("rbf", gamma=1.0)
    K = k(X, X)
    n = len(y)
    R = np.pad(K, ((0, 1), (0, 1)))
    full = solve_finite_newton(LinearProblem(np.c_[K, np.ones(n)], y, SquaredHinge(),
                                             np.ones(n), quadratic=R))
    out = greedy_kernel_finite_newton(k, X, y, C=1.0, n_basis=n, n_candidates=n,
                                      random_state=0)
    obj = out.record.objective
    assert np.all(np.diff(obj) <= 1e-9 * obj[0])  # adding a basis function never hurts
    assert obj[-1] == pytest.approx(full.objective, rel=1e-6)
    # a small basis is already close (Keerthi, Chapelle & DeCoste 2006)
    assert obj[14] <= 1.05 * full.objective
    assert sorted(out.active_set.tolist()) == list(range(n))


def test_greedy_kernel_finite_newton_random_candidates_and_errors():
    from bisvm.kernels import make_kernel

    X, y = _moons(150)
    k = make_kernel("rbf", gamma=1.0)
    a = greedy_kernel_finite_newton(k, X, y, n_basis=12, random_state=1)
    b = greedy_kernel_finite_newton(k, X, y, n_basis=12, random_state=1)
    np.testing.assert_array_equal(a.active_set, b.active_set)
    z = k(X, X[a.active_set]) @ a.coef + a.intercept
    assert np.mean(np.sign(z) == y) >= 0.85
    with pytest.raises(ValueError, match="n_basis"):
        greedy_kernel_finite_newton(k, X, y, n_basis=0)
    with pytest.raises(ValueError, match="SquaredHinge"):
        solve_finite_newton_problem(_problem(Logistic()))
