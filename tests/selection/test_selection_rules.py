"""Selection rules and safeguards of the Selective*CV estimators: the
one-standard-error rule against a hand computation, the empty-model warning, and the BLAS
thread limit seen through threadpoolctl while the path runs."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_info

import bisvm.selection.loo as loo_mod
from bisvm.estimators.selective import (
    EmptyModelWarning,
    SelectiveLogisticRegressionCV,
    SelectiveRegressionCV,
)
from bisvm.selection.loo import exact_loo, select_index
from bisvm.selection.threads import SMALL_DENSE, blas_threads, limit_blas
from bisvm.solvers.selective import SelectiveProblem, selective_loss


def _reg(seed=0, N=40, n=15, k=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n))
    y = X[:, :k] @ np.array([2.0, -1.5, 1.0]) + 0.8 * rng.normal(size=N)
    return X, y


def test_select_index_by_hand():
    vals = np.array([5.0, 3.0, 2.5, 2.0, 2.2, 2.1])
    se = np.array([0.1, 0.1, 0.1, 0.6, 0.1, 0.1])
    assert select_index(vals, se, "min") == 3
    # threshold 2.0 + 0.6 = 2.6: the first (sparsest) point below it is index 2
    assert select_index(vals, se, "1se") == 2
    # a NaN point is never chosen, and does not break the rule
    vals2 = np.array([np.nan, 3.0, 2.0, 1.9])
    assert select_index(vals2, np.full(4, 0.2), "1se") == 2
    with pytest.raises(ValueError, match="selection_rule"):
        select_index(vals, se, "2se")
    with pytest.raises(ValueError, match="NaN"):
        select_index(np.full(3, np.nan), se[:3], "min")


def test_one_se_rule_on_exact_loo_path_by_hand():
    X, y = _reg()
    est = SelectiveRegressionCV("loo", selection_rule="1se", n_mu=8, ridge=0.5).fit(X, y)
    # the standard error of each criterion value, recomputed from exact LOO refits
    for l in (2, 5):
        mu = est.selectivity_path_[l]
        P = SelectiveProblem(X, y, "squared", 0.5, float(mu), None, True)
        ref = SelectiveRegressionCV("alo", n_mu=8, ridge=0.5).fit(X, y)
        assert ref.selectivity_path_[l] == pytest.approx(mu)
        from bisvm.solvers.selective import solve_dual_newton
        res = solve_dual_newton(P, tol=1e-12)
        _, z_loo = exact_loo(P, res)
        terms = selective_loss("squared", y, z_loo)[0]
        assert est.criterion_path_[l] == pytest.approx(terms.mean(), rel=1e-5)
        assert est.criterion_se_path_[l] == pytest.approx(
            terms.std(ddof=1) / np.sqrt(y.size), rel=1e-5)
    c, s = est.criterion_path_, est.criterion_se_path_
    best = int(np.argmin(c))
    hand = min(l for l in range(c.size) if c[l] <= c[best] + s[best])
    assert est.selection_index_ == hand
    assert est.selectivity_ == est.selectivity_path_[hand]
    # the 1-SE model is never denser than the minimum's (the grid runs sparse to dense)
    mn = SelectiveRegressionCV("loo", n_mu=8, ridge=0.5).fit(X, y)
    assert est.n_active_path_[hand] <= mn.n_active_path_[mn.selection_index_]
    assert np.sum(est.coef_ != 0) <= np.sum(mn.coef_ != 0)


@pytest.mark.parametrize("criterion", ["alo", "kfold"])
def test_one_se_rule_kfold_and_alo(criterion):
    X, y = _reg(seed=3, N=60, n=20)
    est = SelectiveRegressionCV(criterion, selection_rule="1se", n_mu=10).fit(X, y)
    c, s = est.criterion_path_, est.criterion_se_path_
    assert np.all(s > 0)
    best = int(np.argmin(c))
    assert est.selection_index_ == int(np.flatnonzero(c <= c[best] + s[best])[0])


def test_selection_rule_rejected():
    X, y = _reg()
    with pytest.raises(ValueError, match="selection_rule"):
        SelectiveRegressionCV(selection_rule="median").fit(X, y)
    with pytest.raises(ValueError, match="blas_threads"):
        SelectiveRegressionCV(blas_threads=0).fit(X, y)


def _breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_diffloo_empty_model_warns_and_names_alo():
    X, y = _breast_cancer()
    # every fourth row (143) shows the same degeneracy as the whole set at a fraction of
    # the path's cost: DiffLOO's minimum at the empty model, ALO's inside the path
    X, y = X[::4], y[::4]
    with pytest.warns(EmptyModelWarning, match=r"criterion='diffloo'.*criterion='alo'"):
        est = SelectiveLogisticRegressionCV("diffloo", n_mu=8, min_ratio=1e-2).fit(X, y)
    assert not est.support_.any()
    assert np.any(est.n_active_path_ > 0)
    # ALO on the same data keeps features and says nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmptyModelWarning)
        alo = SelectiveLogisticRegressionCV("alo", n_mu=8, min_ratio=1e-2).fit(X, y)
    assert alo.support_.sum() > 0


def _blas_threads_now():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_blas_threads_limited_during_the_path(monkeypatch):
    if not _blas_threads_now():
        pytest.skip("no BLAS pool visible to threadpoolctl")
    seen = []
    orig = loo_mod.leverage_factors

    def spy(problem, result):
        seen.append(_blas_threads_now())
        return orig(problem, result)

    monkeypatch.setattr(loo_mod, "leverage_factors", spy)
    X, y = _reg()
    with limit_blas(2):  # a known outer setting, restored after each fit
        est = SelectiveRegressionCV(n_mu=5).fit(X, y)
        assert est.blas_threads_ == 1
        assert seen and all(t == [1] * len(t) for t in seen)
        assert _blas_threads_now() == [2] * len(_blas_threads_now())
        seen.clear()
        SelectiveRegressionCV(n_mu=5, blas_threads=None).fit(X, y)
        assert seen and all(t == [2] * len(t) for t in seen)


def test_blas_threads_by_size():
    assert blas_threads(80, 60) == 1
    assert blas_threads(SMALL_DENSE, 10 * SMALL_DENSE) == 1
    assert blas_threads(SMALL_DENSE + 1, SMALL_DENSE + 1) is None
    assert blas_threads(5000, 5000, threads=3) == 3
    assert blas_threads(10, 10, threads=None) is None
    for bad in ("many", 0, True, 1.5):
        with pytest.raises(ValueError, match="blas_threads"):
            blas_threads(10, 10, threads=bad)


def _two_informative(seed, N=200, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n))
    return X, np.where(X[:, 0] + X[:, 1] > 0, 1, 0)


def test_error_scoring_is_the_alo_misclassification_rate():
    from bisvm.selection.loo import alo_outputs

    X, y = _two_informative(0, N=80, n=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SelectiveLogisticRegressionCV("alo", scoring="error", n_mu=12,
                                            min_ratio=1e-3).fit(X, y)
        ref = loo_mod.criterion_path(X, np.where(y == 1, 1.0, -1.0), "logistic", 1.0,
                                     criteria=("alo",), n_mu=12, min_ratio=1e-3,
                                     fit_intercept=True)
    ys = np.where(y == 1, 1.0, -1.0)
    for l in (3, 8):
        P = SelectiveProblem(X, ys, "logistic", 1.0, float(ref.selectivities[l]), None, True)
        wrong = (ys * alo_outputs(P, ref.results[l]) <= 0).astype(float)
        assert est.criterion_path_[l] == pytest.approx(wrong.mean())
        assert est.criterion_se_path_[l] == pytest.approx(wrong.std(ddof=1) / np.sqrt(80))


def test_one_se_error_rule_recovers_the_two_informative_features():
    X, y = _two_informative(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SelectiveLogisticRegressionCV(selection_rule="1se", scoring="error").fit(X, y)
        by_loss = SelectiveLogisticRegressionCV(selection_rule="1se").fit(X, y)
    assert set(np.flatnonzero(est.coef_)) == {0, 1}
    assert by_loss.support_.sum() > 2  # the log-loss keeps spurious features


def test_error_scoring_rejected_where_it_has_no_meaning():
    X, y = _reg()
    with pytest.raises(ValueError, match="scoring"):
        SelectiveRegressionCV(scoring="error").fit(X, y)
    Xc, yc = _two_informative(0, N=40, n=10)
    with pytest.raises(ValueError, match="scoring"):
        SelectiveLogisticRegressionCV("diffloo", scoring="error").fit(Xc, yc)
    with pytest.raises(ValueError, match="scoring"):
        SelectiveLogisticRegressionCV(scoring="accuracy").fit(Xc, yc)
