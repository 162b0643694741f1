"""Warm starts along C: ``LinearSVC(warm_start=True)`` / ``LinearSVR(warm_start=True)``
land on the same optima as cold fits (objective within the certified tolerance) in fewer
epochs, :func:`linear_svc_path` returns them in ascending order, and ``LinearSVCCV``
scores the grid as ``GridSearchCV`` does with the same folds and scorer."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.utils.estimator_checks import check_estimator

from bisvm.estimators.linear import LinearSVC
from bisvm.estimators.linear_cv import LinearSVCCV, linear_svc_path
from bisvm.estimators.linear_svr import LinearSVR

CS = np.logspace(-3, 1, 5)


def _data(sparse=False, n_classes=2):
    X, y = make_classification(300, 10, n_informative=6, n_redundant=0,
                               n_classes=n_classes, flip_y=0.05, random_state=0)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_warm_path_reaches_the_cold_optima(loss, sparse):
    # how much time the warm path saves is measured in benchmarks/bench_linear_dual.py
    X, y = _data(sparse)
    kw = dict(loss=loss, dual=True, random_state=0, max_iter=100000)
    warm = LinearSVC(warm_start=True, tol=1e-6, **kw)
    for C in CS[:-1]:
        warm.set_params(C=C).fit(X, y)
        best = LinearSVC(C=C, tol=1e-9, **kw).fit(X, y).objective_[0]
        # the certified relative gap bounds the excess over the optimum
        assert best * (1 - 1e-9) <= warm.objective_[0] <= best * (1 + 1e-6)
        assert warm.certificate_[0] <= 1e-6


def test_warm_start_rescales_the_dual_and_keeps_it_in_the_box():
    X, y = _data()
    est = LinearSVC(loss="hinge", dual=True, warm_start=True, C=1.0, random_state=0,
                    tol=1e-8, max_iter=100000).fit(X, y)
    a1 = est.dual_coef_.copy()
    assert a1.shape == (1, X.shape[0]) and np.all((a1 >= 0) & (a1 <= 1.0 + 1e-12))
    # the same C again: the start is the solution, one epoch certifies it
    est.fit(X, y)
    assert est.n_iter_ <= 5
    np.testing.assert_allclose(est.dual_coef_, a1, atol=1e-6)
    est.set_params(C=0.1).fit(X, y)  # shrinking box: the scaled start is feasible
    assert np.all(est.dual_coef_ <= 0.1 + 1e-12)
    # different data: a cold start, no error
    est.fit(X[:300], y[:300])
    assert est.dual_coef_.shape == (1, 300)
    assert not hasattr(LinearSVC(loss="hinge", dual=True).fit(X, y), "dual_coef_")


def test_warm_start_multiclass_and_primal():
    X, y = _data(n_classes=3)
    for kw in (dict(dual=True, loss="hinge"), dict(dual=False)):
        est = LinearSVC(warm_start=True, random_state=0, tol=1e-6, max_iter=100000, **kw)
        for C in (0.1, 1.0):
            est.set_params(C=C).fit(X, y)
            cold = LinearSVC(C=C, random_state=0, tol=1e-6, max_iter=100000, **kw).fit(X, y)
            np.testing.assert_allclose(est.objective_, cold.objective_, rtol=2e-6)
        refit = est.n_iter_
        est.fit(X, y)  # restarted at its own solution
        assert est.n_iter_ <= refit


@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
def test_linear_svr_warm_start(loss):
    X, y = make_regression(500, 10, noise=5.0, random_state=0)
    est = LinearSVR(loss=loss, dual=True, epsilon=1.0, warm_start=True, tol=1e-7,
                    max_iter=100000, random_state=0)
    for C in (0.01, 0.1, 1.0):
        est.set_params(C=C).fit(X, y)
        cold = LinearSVR(loss=loss, dual=True, epsilon=1.0, C=C, tol=1e-7, max_iter=100000,
                         random_state=0).fit(X, y)
        assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    n_iter = est.n_iter_
    est.fit(X, y)  # restarted at its own solution
    assert est.n_iter_ <= max(n_iter, 5)


def test_path_helper_is_ascending_and_matches_the_estimator():
    X, y = _data()
    path = linear_svc_path(X, y, CS[::-1], loss="hinge", tol=1e-7, max_iter=100000,
                           random_state=0)
    np.testing.assert_array_equal(path.Cs, CS)
    assert path.coefs.shape == (CS.size, 1, X.shape[1])
    assert np.all(np.diff(path.objectives[:, 0]) > 0)  # the objective grows with C
    ref = LinearSVC(loss="hinge", C=CS[2], tol=1e-9, max_iter=100000).fit(X, y)
    assert path.objectives[2, 0] == pytest.approx(ref.objective_[0], rel=1e-6)
    with pytest.raises(ValueError, match="Cs"):
        linear_svc_path(X, y, [1.0, -1.0])
    with pytest.raises(ValueError, match="sets C"):
        linear_svc_path(X, y, CS, C=1.0)


def test_cv_scores_as_grid_search_with_the_same_folds():
    X, y = _data(n_classes=3)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    kw = dict(loss="hinge", tol=1e-7, max_iter=100000, random_state=0)
    ours = LinearSVCCV(Cs=CS[:-2], cv=cv, **kw).fit(X, y)
    grid = GridSearchCV(LinearSVC(**kw), {"C": CS[:-2]}, cv=cv).fit(X, y)
    # at this tolerance both solve each fold to the same model, up to a tie at the margin
    n_test = len(y) / 3
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               grid.cv_results_["mean_test_score"], atol=1.0 / n_test)
    assert ours.best_score_ >= grid.best_score_ - 1.0 / n_test
    assert ours.best_C_ == ours.Cs_[ours.best_index_]
    assert ours.cv_results_["rank_test_score"][ours.best_index_] == 1
    ref = LinearSVC(C=ours.best_C_, **kw).fit(X, y)
    np.testing.assert_allclose(ours.objective_, ref.objective_, rtol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ours.best_estimator_.predict(X))
    assert ours.n_splits_ == 3 and set(ours.cv_results_) >= {
        "param_C", "params", "split0_test_score", "std_test_score", "mean_fit_time"}


def test_cv_n_jobs_scoring_groups_and_refit_false():
    X, y = _data()
    kw = dict(Cs=[0.01, 0.1], loss="hinge", random_state=0)
    a = LinearSVCCV(**kw, scoring="roc_auc").fit(X, y)
    b = LinearSVCCV(**kw, scoring="roc_auc", n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])
    groups = np.arange(len(y)) % 5
    from sklearn.model_selection import GroupKFold
    c = LinearSVCCV(**kw, cv=GroupKFold(5), refit=False).fit(X, y, groups=groups)
    assert c.n_splits_ == 5 and not hasattr(c, "best_estimator_")
    with pytest.raises(NotFittedError, match="refit=True"):
        c.predict(X)
    with pytest.raises(ValueError, match="Cs"):
        LinearSVCCV(Cs=[-1.0]).fit(X, y)
    with pytest.raises(ValueError, match="'Cs' parameter"):
        LinearSVCCV(Cs=0).fit(X, y)


def test_cv_warns_once_for_capped_fits():
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match=r"of 6 fits along the path"):
        LinearSVCCV(Cs=[1.0, 10.0], cv=3, loss="hinge", tol=1e-12, max_iter=3,
                    refit=False).fit(X, y)


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_estimator(LinearSVCCV(Cs=2, cv=2), expected_failed_checks={
            "check_sample_weight_equivalence_on_dense_data":
                "dual CD tolerance 1e-4 (as LinearSVC)",
            "check_sample_weight_equivalence_on_sparse_data":
                "dual CD tolerance 1e-4 (as LinearSVC)",
        })
