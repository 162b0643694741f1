"""Leave-one-out criteria of Angulo Yauri (2020) (DiffLOO as printed, exact derivative, IJ, ALO,
exact LOO, k-fold) and the ALO of a smooth SVM, against finite differences of weighted
refits, refits without the object and closed forms."""

import dataclasses

import numpy as np
import pytest

from bisvm.losses import SmoothedHinge, Squared
from bisvm.penalties import L2, GroupPseudoHuber, SumPenalty
from bisvm.selection.loo import (
    alo_outputs,
    alo_path_scores,
    alo_smooth,
    cheap_criteria,
    criterion_path,
    exact_loo,
    exact_loo_smooth,
    leverage_factors,
)
from bisvm.solvers import SmoothProblem, solve_newton
from bisvm.solvers.selective import (
    SelectiveProblem,
    selective_loss,
    selectivity_max,
    solve_dual_newton,
)

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _data(loss, N, n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n))
    a = np.zeros(n)
    a[:3] = [2.0, -1.5, 1.0]
    y = X @ a + 0.5 * rng.normal(size=N) + shift
    if loss == "logistic":
        y = np.where(y > 0, 1.0, -1.0)
    return X, y


def _fit(loss, fit_intercept, N, n, seed=3, frac=0.15, gam=0.5):
    X, y = _data(loss, N, n, seed, shift=0.5 if fit_intercept else 0.0)
    mu = frac * selectivity_max(X, y, loss, gam, None, fit_intercept)[0]
    P = SelectiveProblem(X, y, loss, gam, mu, None, fit_intercept)
    return P, solve_dual_newton(P, tol=1e-13)


CASES = [("squared", False, 30, 12), ("squared", True, 25, 40),
         ("logistic", False, 40, 12), ("logistic", True, 30, 50)]


@pytest.mark.parametrize("loss,fit_intercept,N,n", CASES)
def test_derivative_criteria_equal_finite_differences_of_weighted_refits(
        loss, fit_intercept, N, n):
    P, res = _fit(loss, fit_intercept, N, n)
    f = leverage_factors(P, res)
    p = 1e-5
    fd = np.empty(N)
    for j in range(N):
        qs = []
        for sgn in (1.0, -1.0):
            r = np.ones(N)
            r[j] = 1.0 - sgn * p
            rr = solve_dual_newton(
                SelectiveProblem(P.X, P.y, loss, P.ridge, P.selectivity, r, fit_intercept),
                alpha0=res.dual_coef, partition0=res.partition, tol=1e-14)
            zj = P.X[j] @ rr.coef + rr.intercept
            qs.append(selective_loss(loss, P.y[j:j + 1], np.array([zj]))[0][0])
        fd[j] = (qs[0] - qs[1]) / (2 * p)
    growth = 2 * (P.y - f.z) ** 2 if loss == "squared" else np.exp(-P.y * f.z)
    an = f.h * growth
    np.testing.assert_allclose(an, fd, rtol=1e-5, atol=1e-9 * np.max(np.abs(fd)))
    crit = cheap_criteria(P, res)
    np.testing.assert_allclose(crit["diffloo_exact"], np.mean(fd), rtol=1e-5)
    np.testing.assert_allclose(crit["ij"], np.mean(f.q) + np.mean(fd), rtol=1e-5)
    # the printed (121)/(123) is not this derivative: factor 2 (regression), the missing
    # per-object weight q'' (logistic), and kink features counted as ridge features
    assert abs(crit["diffloo"] - np.mean(fd)) > 1e-3 * np.mean(fd)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_rank_one_update_equals_fixed_set_refit_without_the_object(fit_intercept):
    P, res = _fit("squared", fit_intercept, 30, 40)
    free, kink = res.partition.free, res.partition.kink
    assert kink.any()
    X, y, gam, mu = P.X, P.y, P.ridge, P.selectivity
    cols = [X[:, free], X[:, kink]] + ([np.ones((30, 1))] if fit_intercept else [])
    Xt = np.hstack(cols)
    pen = np.r_[np.ones(free.sum()), np.zeros(Xt.shape[1] - free.sum())]
    lin = np.r_[np.zeros(free.sum()), np.sign(res.coef[kink]),
                np.zeros(Xt.shape[1] - free.sum() - kink.sum())]
    z_alo = alo_outputs(P, res)
    for j in range(30):
        keep = np.arange(30) != j
        A = Xt[keep].T @ Xt[keep] + gam * np.diag(pen)
        theta = np.linalg.solve(A, Xt[keep].T @ y[keep] - gam * mu * lin)
        assert abs(Xt[j] @ theta - z_alo[j]) < 1e-10 * max(1.0, abs(z_alo[j]))
    # PRESS form: y - z_loo = (y - z)/(1 - h)
    f = leverage_factors(P, res)
    np.testing.assert_allclose(y - z_alo, (y - f.z) / (1 - f.h), rtol=1e-10)


def test_alo_equals_exact_loo_when_no_active_set_changes():
    P, res = _fit("squared", False, 30, 12, frac=0.3)
    val, z_loo = exact_loo(P, res)
    z_alo = alo_outputs(P, res)
    f = leverage_factors(P, res)
    same = []
    for j in range(30):
        keep = np.arange(30) != j
        rr = solve_dual_newton(SelectiveProblem(P.X[keep], P.y[keep], "squared", P.ridge,
                                                P.selectivity))
        s_ok = np.array_equal(rr.partition.free, res.partition.free) and \
            np.array_equal(rr.partition.kink, res.partition.kink)
        same.append(s_ok)
        if s_ok:
            assert abs(z_loo[j] - z_alo[j]) < 1e-9
    assert sum(same) > 10
    assert val == pytest.approx(np.mean(selective_loss("squared", P.y, z_loo)[0]))
    assert np.all((f.h >= 0) & (f.h < 1))


def test_printed_criterion_is_zero_at_the_empty_model():
    X, y = _data("logistic", 40, 12, seed=1)
    cp = criterion_path(X, y, "logistic", 0.5, n_mu=6)
    assert cp.n_active[0] == 0
    assert cp.values["diffloo"][0] == 0.0 and cp.values["diffloo_exact"][0] == 0.0
    assert np.argmin(cp.values["diffloo"]) == 0  # the trivial minimum at the empty model
    assert np.all(cp.values["diffloo"][1:] > 0)
    # the LOO estimates are not degenerate at the empty model
    assert cp.values["ij"][0] == pytest.approx(np.log(2.0))


@pytest.mark.parametrize("loss,fit_intercept,N,n", CASES + [("logistic", False, 30, 10)])
def test_leverages_equal_the_primal_hat_matrix(loss, fit_intercept, N, n):
    # the leverages are read off the solver's final Newton factor (dual form, Woodbury
    # when few ridge features); reference: the primal hat matrix of the local problem
    P, res = _fit(loss, fit_intercept, N, n)
    F = res.partition.free & (res.coef != 0)
    assert np.array_equal(res.factor.free_index, np.flatnonzero(F))  # reusable
    K = res.partition.kink & (res.coef != 0)
    q2 = selective_loss(loss, P.y, P.X @ res.coef + res.intercept)[2]
    Xt = np.hstack([P.X[:, F], P.X[:, K]] + ([np.ones((N, 1))] if fit_intercept else []))
    H = (Xt.T * q2) @ Xt + np.diag(np.r_[2 * P.ridge * np.ones(F.sum()),
                                         np.zeros(Xt.shape[1] - F.sum())])
    L_ref = np.einsum("ij,ji->i", Xt, np.linalg.solve(H, Xt.T))
    XS = P.X[:, F | K]
    Hth = (XS.T * (q2 / 2)) @ XS + P.ridge * np.eye(XS.shape[1])
    hth_ref = q2 / 2 * np.einsum("ij,ji->i", XS, np.linalg.solve(Hth, XS.T))
    for fit in (res, dataclasses.replace(res, factor=None)):  # reused factor, and formed
        f = leverage_factors(P, fit)                          # from scratch
        np.testing.assert_allclose(f.h, q2 * L_ref, rtol=1e-7, atol=1e-12)
        np.testing.assert_allclose(f.h_thesis, hth_ref, rtol=1e-7, atol=1e-12)


def test_criterion_path_kfold_and_loo_columns():
    X, y = _data("squared", 30, 8, seed=2)
    cp = criterion_path(X, y, "squared", 0.5, n_mu=5,
                        criteria=("alo", "loo", "kfold", "ij"), n_splits=3)
    assert set(cp.values) == {"alo", "loo", "kfold", "ij"}
    assert all(v.shape == (5,) for v in cp.values.values())
    assert all(np.all(np.isfinite(v)) for v in cp.values.values())
    # cheap columns equal their one-fit definitions
    P = SelectiveProblem(X, y, "squared", 0.5, cp.selectivities[2])
    assert cp.values["alo"][2] == pytest.approx(
        cheap_criteria(P, cp.results[2], ("alo",))["alo"], rel=1e-12)
    assert cp.values["loo"][2] == pytest.approx(exact_loo(P, cp.results[2])[0], rel=1e-8)
    with pytest.raises(ValueError, match="criterion"):
        criterion_path(X, y, "squared", 0.5, criteria=("aic",))


# ---- ALO for the smoothed L2L1-SVM (a SmoothProblem) ---------------------------------
def _svm_problem(seed=0, n=60, d=5, hinge=0.25):
    rng = np.random.default_rng(seed)
    X = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    y = np.sign(X[:, 0] - X[:, 1] + 0.7 * rng.normal(size=n))
    groups = np.r_[np.arange(d), -1]
    pen = SumPenalty((L2(0.05, mask=groups >= 0), GroupPseudoHuber(0.05 * np.ones(d), groups,
                                                                  0.01)))
    return SmoothProblem(X, y, SmoothedHinge(hinge), pen)


def test_alo_smooth_is_exact_for_a_quadratic_problem():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 4))
    y = rng.normal(size=25)
    # (a SumPenalty: L2.add_hessian alone returns None at the time of writing)
    P = SmoothProblem(X, y, Squared(), SumPenalty((L2(0.3),)))
    w = solve_newton(P, tol=1e-13).coef
    np.testing.assert_allclose(alo_smooth(P, w), exact_loo_smooth(P, w, tol=1e-13),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("hinge", [0.5, 0.25])
def test_alo_smooth_tracks_exact_refits_of_the_smoothed_hinge_svm(hinge):
    P = _svm_problem(hinge=hinge)
    w = solve_newton(P, tol=1e-12).coef
    z = P.X @ w
    z_exact = exact_loo_smooth(P, w, tol=1e-12)
    z_alo = alo_smooth(P, w)
    # ALO removes most of the in-sample optimism, object by object
    err_alo = np.abs(z_alo - z_exact)
    err_insample = np.abs(z - z_exact)
    assert np.median(err_alo) < 0.1 * np.median(err_insample)
    assert np.max(err_alo) < 0.05 * max(1.0, np.max(np.abs(z_exact)))
    # the path scorer reads the same numbers
    err = alo_path_scores([P], [w], scoring="error")[0]
    assert err == pytest.approx(np.mean(P.y * z_alo <= 0))
    with pytest.raises(ValueError, match="scoring"):
        alo_path_scores([P], [w], scoring="auc")
