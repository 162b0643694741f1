"""Dual Newton solver of Angulo Yauri 2020 (Algorithm A) and the μ path (Algorithm B) against an
independent primal solver (FISTA with restarts on the same objective) and closed forms."""

import warnings

import numpy as np
import pytest

from bisvm.penalties import SelectiveRidge
from bisvm.solvers.base import ConvergenceWarning
from bisvm.solvers.selective import (
    SelectiveNewtonFactor,
    SelectiveProblem,
    selective_loss,
    selectivity_grid,
    selectivity_max,
    solve_dual_newton,
    solve_selectivity_path,
)

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def primal_fista(X, y, loss, ridge, mu, r=None, fit_intercept=False, tol=1e-13,
                 max_iter=30000):
    """Accelerated proximal gradient with function-value restarts on J(a, b)."""
    N, n = X.shape
    r = np.ones(N) if r is None else r
    Xa = np.c_[X, np.ones(N)] if fit_intercept else X
    mask = np.r_[np.ones(n, bool), [False]] if fit_intercept else np.ones(n, bool)
    pen = SelectiveRidge(mu, ridge, mask)
    lq = 2.0 if loss == "squared" else 0.25
    step = 1.0 / (lq * np.linalg.norm(Xa * np.sqrt(r)[:, None], 2) ** 2)

    def F(w):
        return float(np.sum(r * selective_loss(loss, y, Xa @ w)[0])) + pen.value(w)

    w = np.zeros(Xa.shape[1])
    v, t, f_old = w.copy(), 1.0, F(w)
    for _ in range(max_iter):
        g = Xa.T @ (r * selective_loss(loss, y, Xa @ v)[1])
        w_new = pen.prox(v - step * g, step)
        f_new = F(w_new)
        if f_new > f_old:
            if t == 1.0 and np.array_equal(v, w):
                # a plain proximal step from w no longer decreases J (rounding): every
                # further iteration would repeat this one, so w is what max_iter returns
                break
            t, v = 1.0, w.copy()
            continue
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        v = w_new + (t - 1) / t_new * (w_new - w)
        if np.max(np.abs(w_new - w)) < tol * max(1.0, np.max(np.abs(w_new))):
            w = w_new
            break
        w, t, f_old = w_new, t_new, f_new
    return (w[:n], w[n]) if fit_intercept else (w, 0.0)


def _data(loss, N, n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n))
    a = np.zeros(n)
    a[:3] = [2.0, -1.5, 1.0]
    y = X @ a + 0.5 * rng.normal(size=N) + shift
    if loss == "logistic":
        y = np.where(y > 0, 1.0, -1.0)
    return X, y


CASES = [
    ("squared", False, 40, 15), ("squared", True, 30, 60),
    ("logistic", False, 40, 15), ("logistic", True, 40, 15), ("logistic", False, 30, 60),
]


@pytest.mark.parametrize("loss,fit_intercept,N,n", CASES)
@pytest.mark.parametrize("frac", [0.5, 0.1, 0.02])
def test_dual_newton_equals_primal_reference(loss, fit_intercept, N, n, frac):
    X, y = _data(loss, N, n, seed=N + n, shift=1.0 if fit_intercept else 0.0)
    gam = 0.3
    mu = frac * selectivity_max(X, y, loss, gam, None, fit_intercept)[0]
    P = SelectiveProblem(X, y, loss, gam, mu, None, fit_intercept)
    res = solve_dual_newton(P)
    assert res.converged
    a_ref, b_ref = primal_fista(X, y, loss, gam, mu, fit_intercept=fit_intercept)
    assert np.max(np.abs(res.coef - a_ref)) < 1e-6
    assert abs(res.intercept - b_ref) < 1e-6
    assert P.primal_value(res.coef, res.intercept) <= P.primal_value(a_ref, b_ref) + 1e-9
    # exact dual with the -mu^2 terms: zero duality gap at the solution
    assert res.certificate == "duality_gap"
    assert res.certificate_value < 1e-8 * max(1.0, abs(res.dual_objective))
    # the primal-dual map (25) on the ridge part, kinks in 0 < |a| <= mu
    s = X.T @ res.dual_coef
    free, kink = res.partition.free, res.partition.kink
    np.testing.assert_allclose(res.coef[free], s[free], rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(res.coef[kink]) <= mu * (1 + 1e-8))
    assert np.all(np.abs(s[~free & ~kink]) <= mu * (1 + 1e-10))


def test_weighted_problem_matches_primal_reference():
    X, y = _data("logistic", 40, 12, seed=5)
    r = np.random.default_rng(2).uniform(0.3, 2.0, size=40)
    mu = 0.1 * selectivity_max(X, y, "logistic", 0.5, r)[0]
    res = solve_dual_newton(SelectiveProblem(X, y, "logistic", 0.5, mu, r))
    a_ref, _ = primal_fista(X, y, "logistic", 0.5, mu, r=r)
    assert np.max(np.abs(res.coef - a_ref)) < 1e-6


@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_selectivity_max_gives_the_empty_model(loss, fit_intercept):
    X, y = _data(loss, 50, 30, seed=3, shift=0.7)
    mu_max, lam, b = selectivity_max(X, y, loss, 0.2, None, fit_intercept)
    # closed forms of the notes: y/gamma, y/(4 gamma) (no intercept)
    if not fit_intercept:
        np.testing.assert_allclose(lam, y / 0.2 if loss == "squared" else y / 0.8)
    for mu in (mu_max, 1.5 * mu_max):
        res = solve_dual_newton(SelectiveProblem(X, y, loss, 0.2, mu, None, fit_intercept))
        assert not np.any(res.coef)
        assert abs(res.intercept - b) < 1e-8
    # just below mu_max the feature attaining it enters
    res = solve_dual_newton(SelectiveProblem(X, y, loss, 0.2, 0.98 * mu_max, None,
                                             fit_intercept))
    assert res.coef[np.argmax(np.abs(X.T @ lam))] != 0


def test_path_grid_and_warm_starts():
    X, y = _data("logistic", 60, 40, seed=11)
    mus, results, mu_max = solve_selectivity_path(X, y, "logistic", 0.5, n_mu=12)
    np.testing.assert_allclose(mus, selectivity_grid(mu_max, 12, 1e-8))
    np.testing.assert_allclose(mus[1] / mus[0], 10 ** (-8 / 11))
    assert not np.any(results[0].coef)
    assert all(r.converged for r in results)
    # warm-started path equals cold solves
    for l in (3, 7):
        cold = solve_dual_newton(SelectiveProblem(X, y, "logistic", 0.5, mus[l]))
        np.testing.assert_allclose(results[l].coef, cold.coef, atol=1e-8)
    nact = [int(np.sum(r.coef != 0)) for r in results]
    assert nact[-1] == 40 and nact[0] == 0


def test_woodbury_equals_direct_newton_matrix():
    rng = np.random.default_rng(0)
    for nF in (3, 25):
        XF = rng.normal(size=(20, nF))
        c = rng.uniform(0.1, 2.0, size=20)
        v = rng.normal(size=(20, 2))
        A = XF @ XF.T + np.diag(c)
        np.testing.assert_allclose(SelectiveNewtonFactor(XF, c).solve(v), np.linalg.solve(A, v),
                                   rtol=1e-10, atol=1e-12)
        assert SelectiveNewtonFactor(XF, c).woodbury == (nF < 20)


def test_ridge_limit_mu_zero_is_closed_form_ridge():
    X, y = _data("squared", 30, 10, seed=1)
    res = solve_dual_newton(SelectiveProblem(X, y, "squared", 0.7, 0.0))
    a = np.linalg.solve(X.T @ X + 0.7 * np.eye(10), X.T @ y)
    np.testing.assert_allclose(res.coef, a, rtol=1e-10)


def test_thesis_golden_section_variant_and_cap_warning():
    X, y = _data("squared", 40, 15, seed=7)
    mu = 0.3 * selectivity_max(X, y, "squared", 0.3)[0]
    P = SelectiveProblem(X, y, "squared", 0.3, mu)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = solve_dual_newton(P, line_search="golden", max_iter=50)
    exact = solve_dual_newton(P)
    # the printed iteration has no kink set: it either stops on its cap / cycles, with a
    # ConvergenceWarning, or (when no coefficient lies in (0, mu]) reaches the optimum
    if np.any(exact.partition.kink):
        assert any(issubclass(w.category, ConvergenceWarning) for w in rec)
        assert not res.converged
    assert res.dual_objective >= exact.dual_objective - 1e-9
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        solve_dual_newton(P, max_iter=1, fallback=False)
    # the primal fallback finishes what the capped Newton iteration left
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fb = solve_dual_newton(P, max_iter=1)
    assert fb.converged and fb.stats["fallback_sweeps"] is not None
    np.testing.assert_allclose(fb.coef, exact.coef, atol=1e-8)


def test_bad_input():
    X, y = _data("squared", 10, 3, seed=0)
    with pytest.raises(ValueError, match="ridge"):
        SelectiveProblem(X, y, "squared", 0.0, 1.0)
    with pytest.raises(ValueError, match="selectivity"):
        SelectiveProblem(X, y, "squared", 1.0, -1.0)
    with pytest.raises(ValueError, match="loss"):
        SelectiveProblem(X, y, "hinge", 1.0, 1.0)
    with pytest.raises(ValueError, match="line_search"):
        solve_dual_newton(SelectiveProblem(X, y, "squared", 1.0, 1.0), line_search="armijo")


def test_thesis_sized_logistic_path_and_warm_loo_refit_converge():
    # the thesis's experiment shape (200 x 400, 2 informative features): every fit of the
    # 50-point path and the warm-started leave-one-out refit at a hard point (where
    # the face solutions stop decreasing W because a degenerate feature changes set)
    # converge, with a zero duality gap, and the refit equals the primal reference
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 400))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        mus, res, _ = solve_selectivity_path(X, y, "logistic", 1.0, n_mu=50)
        assert all(r.converged and r.certificate_value < 1e-9 for r in res)
        assert max(r.n_iter for r in res) <= 30
        l, j = 17, 50
        keep = np.arange(200) != j
        P = SelectiveProblem(X[keep], y[keep], "logistic", 1.0, mus[l])
        warm = solve_dual_newton(P, alpha0=res[l].dual_coef[keep],
                                 partition0=res[l].partition)
    assert warm.converged and warm.n_iter <= 15
    assert warm.active_set.size > 200  # more active features than objects
    a, _ = primal_fista(X[keep], y[keep], "logistic", 1.0, mus[l], max_iter=30000)
    np.testing.assert_allclose(warm.coef, a, atol=1e-6)
    assert warm.objective <= P.primal_value(a) + 1e-10


def test_coarse_grid_and_fixed_mu_fits_converge_by_continuation():
    # far from the warm start the first guessed face can ask for more kink constraints
    # than objects; the path inserts intermediate mu (continuation) and the fixed-mu
    # estimator fits along such a path from mu_max
    from bisvm import SelectiveLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 400))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        mus8, res8, _ = solve_selectivity_path(X, y, "logistic", 1.0, n_mu=8)
        mus50, res50, _ = solve_selectivity_path(X, y, "logistic", 1.0, n_mu=50)
        est = SelectiveLogisticRegression(selectivity=mus50[12], fit_intercept=False)
        est.fit(X, np.where(y > 0, 1, 0))
    assert all(r.converged and r.certificate_value < 1e-9 for r in res8)
    np.testing.assert_allclose(mus8, mus50[::7])
    for l8 in range(8):  # the same optimum as the fine path's fit at the same mu
        np.testing.assert_allclose(res8[l8].coef, res50[7 * l8].coef, atol=1e-8)
    np.testing.assert_allclose(est.coef_, res50[12].coef, atol=1e-8)
    assert est.duality_gap_ < 1e-9
    with pytest.raises(ValueError, match="max_step_ratio"):
        solve_selectivity_path(X, y, "logistic", 1.0, n_mu=3, max_step_ratio=1.0)
