"""Lower-level solvers of the smoothed L2L1-SVM against scipy's L-BFGS-B."""

import numpy as np
import pytest
import scipy.optimize as so

from bisvm.losses import Logistic, SmoothedHinge, Squared
from bisvm.penalties import L2, GroupPseudoHuber, SumPenalty
from bisvm.solvers import SmoothProblem, solve_lbfgs, solve_newton


def _problem(loss, groups, seed=0, n=120, d=6):
    rng = np.random.default_rng(seed)
    X = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    y = np.sign(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n))
    g = np.asarray(groups)
    n_groups = int(g.max()) + 1
    weights = rng.uniform(0.05, 0.5, size=n_groups)
    pen = SumPenalty((L2(0.01), GroupPseudoHuber(weights, g, 0.01)))
    return SmoothProblem(X, y, loss, pen)


GROUPINGS = {
    "vector": np.arange(7),
    "group": np.array([0, 0, 0, 1, 1, 2, 3]),
}


@pytest.mark.parametrize("loss", [SmoothedHinge(0.25), SmoothedHinge(0.05), Logistic(), Squared()])
@pytest.mark.parametrize("grouping", sorted(GROUPINGS))
def test_lbfgs_and_newton_agree_with_scipy(loss, grouping):
    P = _problem(loss, GROUPINGS[grouping])
    ref = so.minimize(P.value_and_gradient, np.zeros(7), jac=True, method="L-BFGS-B",
                      options=dict(gtol=1e-13, ftol=1e-16, maxiter=20000, maxcor=20))
    r_lb = solve_lbfgs(P, tol=1e-8)
    r_nt = solve_newton(P, tol=1e-8)
    for r in (r_lb, r_nt):
        assert r.converged and r.certificate_value <= 1e-8
        assert np.linalg.norm(P.gradient(r.coef)) <= 1e-8
        # strong convexity (alpha = 0.01) turns a 1e-8 gradient into a 1e-6 distance bound
        assert np.max(np.abs(r.coef - ref.x)) < 1e-5
        assert r.objective <= ref.fun + 1e-12


def test_gradient_and_hessian_match_finite_differences():
    P = _problem(SmoothedHinge(0.25), GROUPINGS["group"], seed=3)
    rng = np.random.default_rng(1)
    w = rng.normal(size=7) * 0.3
    g = P.gradient(w)
    H = P.hessian(w)
    h = 1e-6
    E = np.eye(7)
    g_fd = np.array([(P.value(w + h * e) - P.value(w - h * e)) / (2 * h) for e in E])
    H_fd = np.array([(P.gradient(w + h * e) - P.gradient(w - h * e)) / (2 * h) for e in E]).T
    np.testing.assert_allclose(g, g_fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(H, H.T, atol=1e-14)


def test_lbfgs_warns_on_iteration_cap():
    from sklearn.exceptions import ConvergenceWarning

    P = _problem(SmoothedHinge(0.25), GROUPINGS["vector"])
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        r = solve_lbfgs(P, tol=1e-12, max_iter=2)
    assert not r.converged and r.n_iter == 2


def test_hessian_with_a_bare_l2_penalty():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.sign(rng.normal(size=30))
    P = SmoothProblem(X, y, Logistic(), L2(0.5))
    w = rng.normal(size=3)
    h = 1e-6
    H_fd = np.array([(P.gradient(w + h * e) - P.gradient(w - h * e)) / (2 * h)
                     for e in np.eye(3)]).T
    np.testing.assert_allclose(P.hessian(w), H_fd, rtol=1e-6, atol=1e-8)
    assert solve_newton(P, tol=1e-10).converged
