"""Parallel searches: the same results serially, on local processes and on Dask; each work
function checked against an independent reference."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold, cross_val_score

from bisvm.estimators.kernel_ridge import KernelRidge
from bisvm.estimators.sparse import ElasticNetSVC
from bisvm.estimators.svm import SVC
from bisvm.parallel import (
    compute_backend,
    cross_val_scores,
    log_grid,
    loo_predictions,
    search,
    sparsity_sweep,
)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    rows = rng.choice(len(y), 90, replace=False)
    X = X[rows][:, :8]
    X = (X - X.mean(0)) / X.std(0)
    return X, y[rows]


GRID = {"C": [0.1, 1.0, 10.0], "gamma": [0.01, 0.1]}


def _all_work(X, y, n_jobs):
    """Every kind of parallel work once: grid, random, k-fold, LOO refits, (μ, γ) sweep."""
    yb = np.where(y == 1, 1.0, -1.0)
    g = search(SVC(), GRID, X, y, method="grid", cv=3, n_jobs=n_jobs)
    r = search(SVC(), {"C": [0.1, 1.0, 10.0, 100.0], "gamma": [0.01, 0.03, 0.1]}, X, y,
               method="random", n_iter=5, cv=3, random_state=3, n_jobs=n_jobs)
    k = cross_val_scores(SVC(C=1.0), X, y, cv=4, n_jobs=n_jobs)
    loo = loo_predictions(SVC(C=1.0), X[:30], y[:30], method="decision_function",
                          n_jobs=n_jobs)
    sw = sparsity_sweep(X, yb, [0.1, 0.5], [0.01, 0.1], penalty_weight=0.05, n_jobs=n_jobs)
    return g, r, k, loo, sw


def _assert_identical(a, b):
    ga, ra, ka, la, sa = a
    gb, rb, kb, lb, sb = b
    for x, y in ((ga, gb), (ra, rb)):
        assert x.best_params_ == y.best_params_
        assert x.best_score_ == y.best_score_
        assert np.array_equal(x.cv_results_["mean_test_score"], y.cv_results_["mean_test_score"])
        assert [p for p in x.cv_results_["params"]] == [p for p in y.cv_results_["params"]]
    assert np.array_equal(ka, kb)
    assert np.array_equal(la, lb)
    assert np.array_equal(sa.coefs, sb.coefs) and np.array_equal(sa.counts, sb.counts)


def test_dask_local_cluster_gives_the_serial_results(cancer):
    pytest.importorskip("distributed")
    X, y = cancer
    serial = _all_work(X, y, None)
    with compute_backend(dask_local=True, dask_workers=2, dask_processes=False) as be:
        assert be.kind == "dask" and be.n_workers == 2
        assert be.address.startswith("tcp://127.0.0.1:")
        on_dask = _all_work(X, y, be.n_jobs)
    _assert_identical(serial, on_dask)


def test_local_processes_give_the_serial_results(cancer):
    X, y = cancer
    a = search(SVC(), GRID, X, y, cv=3)
    with compute_backend(2) as be:
        assert be.kind == "processes" and be.n_jobs == 2
        b = search(SVC(), GRID, X, y, cv=3, n_jobs=be.n_jobs)
    assert a.best_params_ == b.best_params_
    assert np.array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


def test_search_matches_plain_sklearn_and_reports_progress(cancer):
    from sklearn.model_selection import GridSearchCV

    X, y = cancer
    seen = []
    ours = search(SVC(), GRID, X, y, cv=3, random_state=5, progress=seen.append)
    ref = GridSearchCV(SVC(), GRID, cv=StratifiedKFold(3, shuffle=True, random_state=5)).fit(X, y)
    assert ours.best_params_ == ref.best_params_
    assert np.allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
    assert sum(seen) == 6


def test_cross_val_scores_match_sklearn(cancer):
    X, y = cancer
    ours = cross_val_scores(SVC(C=2.0), X, y, cv=5, random_state=1)
    ref = cross_val_score(SVC(C=2.0), X, y, cv=StratifiedKFold(5, shuffle=True, random_state=1))
    assert np.allclose(ours, ref)


def test_loo_predictions_match_kernel_ridge_closed_form():
    # exact LOO residuals of (linear-kernel) ridge are y_i - f^(-i)(x_i) = r_i / (1 - h_ii)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=25)
    est = KernelRidge(ridge=0.7, kernel="linear")
    ticks = []
    pred = loo_predictions(est, X, y, chunk_size=4, progress=ticks.append)
    assert sum(ticks) == 25
    closed = est.fit(X, y).loo_residuals_
    assert np.allclose(y - pred, closed, atol=1e-10)


def test_sparsity_sweep_cells_are_elastic_net_fits(cancer):
    X, y = cancer
    yb = np.where(y == 1, 1.0, -1.0)
    sw = sparsity_sweep(X, yb, [0.1, 0.5], [0.01, 0.2], penalty_weight=0.05)
    assert sw.counts.shape == (2, 2) and sw.coefs.shape == (2, 2, X.shape[1])
    ref = ElasticNetSVC(penalty_weight=0.05, hinge_smoothing=0.5, l1_smoothing=0.2,
                        standardize=False).fit(X, yb)
    assert np.allclose(sw.coefs[1, 1], ref.coef_[0], atol=1e-6)
    assert np.array_equal(sw.counts, np.sum(np.abs(sw.coefs) > 1e-3, axis=2))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="n_jobs"):
        with compute_backend(0):
            pass
    with pytest.raises(ValueError, match="not both"):
        with compute_backend(dask_scheduler="tcp://127.0.0.1:1", dask_local=True):
            pass
    with pytest.raises(ValueError, match="low <= high"):
        log_grid(1.0, 0.1, 3)
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="-1 and \\+1"):
        sparsity_sweep(X, np.array([0, 1, 0, 1]), [0.1], [0.1])
    with pytest.raises(ValueError, match="method"):
        search(SVC(), GRID, X, np.array([0, 1, 0, 1]), method="bayes")
    with pytest.raises(ValueError, match="at least 3 rows"):
        loo_predictions(SVC(), X[:2], np.array([0, 1]))
    assert np.allclose(log_grid(0.01, 100, 5), [0.01, 0.1, 1, 10, 100])


def test_unreachable_scheduler_is_one_clear_error():
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="could not reach the Dask scheduler at tcp://127.0.0.1:9"):
        with compute_backend(dask_scheduler="tcp://127.0.0.1:9", dask_timeout=1.0):
            pass


def test_running_scheduler_address_gives_the_serial_results(cancer):
    # a scheduler that was started elsewhere: the dask_scheduler path (what
    # `--dask-scheduler tcp://host:8786` does), here a thread cluster on loopback
    distributed = pytest.importorskip("distributed")
    X, y = cancer
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        with compute_backend(dask_scheduler=cluster.scheduler_address) as be:
            assert be.kind == "dask" and be.n_workers == 2
            assert be.address == cluster.scheduler_address
            got = search(SVC(), GRID, X, y, cv=3, n_jobs=be.n_jobs)
    ref = search(SVC(), GRID, X, y, cv=3)
    assert got.best_params_ == ref.best_params_
    assert np.array_equal(got.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
