"""Primal coordinate-descent fallback of the dual Newton solver (squared loss): the exact
1-D minimiser against scipy, the fallback's solution against the FISTA reference of
test_dual_newton.py, its certificate, and the LOO criteria computed from it."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from test_dual_newton import primal_fista  # the FISTA reference

from bisvm.selection.loo import CHEAP_CRITERIA, cheap_criteria, leverage_factors
from bisvm.solvers.base import ConvergenceWarning
from bisvm.solvers.selective import (
    SelectiveProblem,
    selective_scalar_min,
    selectivity_max,
    solve_dual_newton,
)

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _pen(a, mu):
    a = np.abs(a)
    return np.where(a <= mu, 2.0 * mu * a, mu * mu + a * a)


def test_scalar_closed_form_equals_brute_force_minimisation():
    rng = np.random.default_rng(0)
    for _ in range(400):
        h = 10 ** rng.uniform(-2, 2)
        z = rng.normal() * 10 ** rng.uniform(-2, 1)
        mu = 10 ** rng.uniform(-3, 0.5)
        gam = 10 ** rng.uniform(-3, 1)

        def f(a, h=h, z=z, mu=mu, gam=gam):
            return 0.5 * h * (a - z) ** 2 + gam * float(_pen(a, mu))

        a = float(selective_scalar_min(h, z, mu, gam))
        ref = minimize_scalar(f, bounds=(-abs(z) - 1.0, abs(z) + 1.0), method="bounded",
                              options=dict(xatol=1e-13)).x
        assert f(a) <= f(ref) + 1e-12 * (1.0 + abs(f(ref)))
        assert abs(a - ref) <= 1e-6 * (1.0 + abs(z))
    # the three regions, hit on purpose: zero, soft threshold (0 < |a| <= mu), ridge
    h, gam, mu = 2.0, 0.5, 1.0  # kappa = 2 gam mu / h = 0.5
    np.testing.assert_allclose(selective_scalar_min(h, np.array([0.3, -0.5, 1.2, -1.5, 3.0]),
                                                    mu, gam),
                               [0.0, 0.0, 0.7, -1.0, 2.0 * 3.0 / 3.0])


def _lasso_like(seed=0, N=40, n=90):
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(N, 3))
    X = F @ rng.normal(size=(3, n)) + 0.7 * rng.normal(size=(N, n))
    a = np.zeros(n)
    a[[3, 17, 40, 41]] = [1.0, -0.8, 0.6, 0.5]
    y = X @ a + 0.05 * rng.normal(size=N)
    return X, y


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("frac", [0.05, 0.005])
def test_forced_fallback_equals_primal_reference_and_newton(fit_intercept, frac):
    X, y = _lasso_like()
    if fit_intercept:
        y = y + 2.0
    gam = 1e-3
    mu = frac * selectivity_max(X, y, "squared", gam, None, fit_intercept)[0]
    P = SelectiveProblem(X, y, "squared", gam, mu, None, fit_intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = solve_dual_newton(P, max_iter=1, fallback=20000)
    assert res.converged and res.stats["fallback_sweeps"] is not None
    assert res.factor is None
    a_ref, b_ref = primal_fista(X, y, "squared", gam, mu, fit_intercept=fit_intercept,
                                max_iter=5000, tol=1e-15)
    assert np.max(np.abs(res.coef - a_ref)) < 1e-6
    assert abs(res.intercept - b_ref) < 1e-6
    assert P.primal_value(res.coef, res.intercept) <= \
        P.primal_value(a_ref, b_ref) + 1e-9 * max(1.0, P.primal_value(a_ref, b_ref))
    W = res.dual_objective
    assert abs(W - P.dual_value(res.dual_coef)) <= 1e-12 * max(1.0, abs(W))
    gap = P.duality_gap(res.dual_coef, res.coef, res.intercept)
    assert res.certificate_value == abs(gap)
    assert -1e-9 * max(1.0, abs(W)) <= gap <= 1e-9 * max(1.0, abs(W))
    # the same structure as a Newton solve: lambda from the residuals, a = X^T lambda on
    # the ridge set, kinks in (0, mu], zeros with |s| <= mu
    z = X @ res.coef + res.intercept
    np.testing.assert_allclose(res.dual_coef, (y - z) / gam)
    s = X.T @ res.dual_coef
    free, kink = res.partition.free, res.partition.kink
    zero = ~free & ~kink
    assert not np.any(free & kink) and np.all(res.coef[zero] == 0)
    np.testing.assert_allclose(res.coef[free], s[free], rtol=1e-6, atol=1e-8)
    assert np.all(np.abs(res.coef[kink]) <= mu) and np.all(res.coef[kink] != 0)
    assert np.all(np.abs(s[zero]) <= mu * (1 + 1e-6))
    fs, sg = res.partition.free, res.partition.kink_sign
    np.testing.assert_array_equal(fs, free)
    np.testing.assert_array_equal(sg[kink], np.sign(res.coef[kink]))
    # where the dual Newton converges on its own, the criteria agree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        newt = solve_dual_newton(P, fallback=False)
    if newt.converged:
        np.testing.assert_allclose(res.coef, newt.coef, atol=1e-6)
        np.testing.assert_array_equal(res.partition.free,
                                      newt.partition.free & (newt.coef != 0))
        c_fb = cheap_criteria(P, res, CHEAP_CRITERIA)
        c_nw = cheap_criteria(P, newt, CHEAP_CRITERIA)
        for name in CHEAP_CRITERIA:
            np.testing.assert_allclose(c_fb[name], c_nw[name], rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(leverage_factors(P, res).h, leverage_factors(P, newt).h,
                                   atol=1e-6)


def test_fallback_warns_only_when_it_fails_and_is_optional():
    X, y = _lasso_like(seed=1)
    mu = 0.01 * selectivity_max(X, y, "squared", 1e-3)[0]
    P = SelectiveProblem(X, y, "squared", 1e-3, mu)
    with pytest.warns(ConvergenceWarning, match="coordinate-descent fallback after 1 sweeps"):
        res = solve_dual_newton(P, max_iter=1, fallback=1)
    assert not res.converged
    with pytest.warns(ConvergenceWarning, match="max_iter=1 iterations at selectivity"):
        res = solve_dual_newton(P, max_iter=1, fallback=False)
    assert res.stats["fallback_sweeps"] is None
    for bad in (-1, 0.5, "yes"):
        with pytest.raises(ValueError, match="fallback"):
            solve_dual_newton(P, fallback=bad)
