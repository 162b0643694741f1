"""Folds of the bilevel objective in parallel (``n_jobs``): the same bits as one after the
other, for every mode of the lower level and every joblib backend."""

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.model_selection import StratifiedKFold

from bisvm.parallel import map_ordered
from bisvm.selection import bilevel
from bisvm.selection.bilevel import (
    BilevelObjective,
    Fold,
    LowerLevel,
    bisvm_lbfgs,
    make_hyper_model,
)
from bisvm.solvers.primal.lower_level import add_bias_column

pytestmark = pytest.mark.usefixtures("one_blas_thread")


@pytest.fixture(autouse=True)
def threads_for_small_folds(monkeypatch):
    """The folds of these tests are small: run them on threads all the same."""
    monkeypatch.setattr(bilevel, "PARALLEL_FOLD_WORK", 0.0)


def _folds(sparse=False, weighted=False, n=180, d=12, k=4, seed=0):
    X, y = make_classification(n, d, n_informative=4, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    if sparse:
        X[np.abs(X) < 0.7] = 0.0
        X = sp.csr_matrix(X)
    y = np.where(y == 1, 1.0, -1.0)
    sw = np.random.default_rng(seed).uniform(0.5, 2.0, n) if weighted else None
    Xa = add_bias_column(X)
    folds = tuple(
        Fold(Xa[tr], y[tr], Xa[va], y[va], None if sw is None else sw[tr],
             None if sw is None else sw[va])
        for tr, va in StratifiedKFold(k, shuffle=True, random_state=seed).split(Xa, y))
    return folds, d


def _hyper(kind, d, learn_l2=False):
    groups = {"a": [0, 1, 2], "b": [3, 4], "c": [7, 9, 10]} if kind == "group" else None
    return make_hyper_model(kind, d, groups=groups, learn_l2=learn_l2)


def _beta(hyper, seed=1):
    b = np.random.default_rng(seed).uniform(0.005, 0.05, hyper.n_hyper)
    if hyper.learn_l2:
        b[-1] = 0.02
    return b


def _pair(folds, lower, hyper, loss="squared_hinge", balanced=False, n_jobs=2):
    return (BilevelObjective(folds, lower, hyper, loss=loss, balanced=balanced, n_jobs=1),
            BilevelObjective(folds, lower, hyper, loss=loss, balanced=balanced, n_jobs=n_jobs))


def _assert_same_evaluation(a, b):
    assert a.value == b.value
    assert np.array_equal(a.grad, b.grad)
    assert a.lower_iterations == b.lower_iterations and a.lower_solves == b.lower_solves
    assert len(a.coefs) == len(b.coefs)
    for wa, wb, la, lb in zip(a.coefs, b.coefs, a.multipliers, b.multipliers):
        assert np.array_equal(wa, wb)
        assert np.array_equal(la, lb)


CASES = [
    # (sparse, weighted, kind, learn_l2, lower level, loss, balanced)
    (False, False, "vector", False, LowerLevel(), "squared_hinge", False),
    (True, False, "vector", False, LowerLevel(), "logistic", True),
    (False, True, "group", False, LowerLevel(), "squared", False),
    (True, True, "group", True, LowerLevel(), "squared_hinge", False),
    (False, False, "vector", True, LowerLevel(solver="lbfgs"), "squared_hinge", False),
    (False, False, "vector", False, LowerLevel(l1_smoothing=0), "squared_hinge", False),
    (True, False, "group", False, LowerLevel(l1_smoothing=0), "logistic", False),
]


# L-BFGS may stop at its cap a hair above the default tolerance: the same bits either way
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(
    [("sparse" if c[0] else "dense"), ("weighted" if c[1] else "plain"), c[2],
     ("l2" if c[3] else "l1"), ("exact" if c[4].exact else c[4].solver), c[5]]))
def test_parallel_folds_bit_identical(case):
    sparse, weighted, kind, learn_l2, lower, loss, balanced = case
    folds, d = _folds(sparse, weighted)
    hyper = _hyper(kind, d, learn_l2)
    serial, par = _pair(folds, lower, hyper, loss, balanced)
    b0, b1 = _beta(hyper, 1), _beta(hyper, 2)

    e0, p0 = serial.evaluate(b0), par.evaluate(b0)
    _assert_same_evaluation(e0, p0)
    # a second point, warm-started from candidate lists and the previous multipliers
    # (the path of an outer iteration), and the predictor of the next warm start
    pred_s, pred_p = serial.predict_coefs(e0, b1), par.predict_coefs(p0, b1)
    for a, b in zip(pred_s, pred_p):
        assert np.array_equal(a, b)
    e1 = serial.evaluate(b1, [e0.coefs, pred_s], 1e-7, adjoint_warm=e0.multipliers)
    p1 = par.evaluate(b1, [p0.coefs, pred_p], 1e-7, adjoint_warm=p0.multipliers)
    _assert_same_evaluation(e1, p1)

    cs, its = serial.solve(b1, e0.coefs)
    cp, itp = par.solve(b1, p0.coefs)
    assert its == itp and all(np.array_equal(a, b) for a, b in zip(cs, cp))
    assert serial.value(b1, e0.coefs) == par.value(b1, p0.coefs)


def test_parallel_folds_equal_an_independent_per_fold_loop():
    """The combined value and gradient are the fold mean of what each fold gives alone
    (a one-fold objective per fold), and the mean value matches the fold solutions'
    criterion values."""
    folds, d = _folds(k=3)
    hyper, lower = _hyper("vector", d), LowerLevel()
    beta = _beta(hyper)
    ev = BilevelObjective(folds, lower, hyper, loss="logistic", n_jobs=3).evaluate(beta)
    alone = [BilevelObjective((f,), lower, hyper, loss="logistic").evaluate(beta)
             for f in folds]
    assert ev.value == np.mean([a.value for a in alone])
    assert np.array_equal(ev.grad, np.mean([a.grad for a in alone], axis=0))
    for w, a in zip(ev.coefs, alone):
        assert np.array_equal(w, a.coefs[0])


def test_outer_run_identical_for_every_n_jobs():
    """A whole BiSVM L-BFGS run (line searches, predictor, HOAG schedule, monitor) takes
    the same iterates with the folds in parallel."""
    folds, d = _folds(n=240, d=10, k=5)
    hyper, lower = _hyper("vector", d), LowerLevel()
    runs = []
    for n_jobs in (None, 2, -1):
        obj = BilevelObjective(folds[:4], lower, hyper, n_jobs=n_jobs)
        mon = BilevelObjective(folds[4:], lower, hyper, n_jobs=n_jobs)
        runs.append(bisvm_lbfgs(obj, 0.01, max_iter=6, monitor=mon, warn=False))
    for r in runs[1:]:
        assert np.array_equal(r.beta, runs[0].beta) and r.value == runs[0].value
        assert [t[1] for t in r.trials] == [t[1] for t in runs[0].trials]
        assert all(np.array_equal(a, b) for a, b in zip(r.coefs, runs[0].coefs))


@pytest.mark.parametrize("backend", ["loky", "dask"])
def test_backend_chosen_around_the_call(backend):
    """A surrounding ``parallel_config`` sends the fold tasks elsewhere (worker
    processes, a Dask cluster) with the same results: the tasks are picklable and
    depend on nothing but their arguments."""
    folds, d = _folds(sparse=backend == "dask", k=3)
    hyper = _hyper("group", d)
    serial, par = _pair(folds, LowerLevel(), hyper)
    beta = _beta(hyper)

    def run():
        ev = par.evaluate(beta)
        return ev, par.solve(beta, ev.coefs), par.value(beta, ev.coefs), \
            par.predict_coefs(ev, 1.1 * beta)

    if backend == "dask":
        distributed = pytest.importorskip("distributed")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster), joblib.parallel_config(backend="dask"):
            ev, (coefs, iters), value, pred = run()
    else:
        with joblib.parallel_config(backend="loky", n_jobs=2):
            ev, (coefs, iters), value, pred = run()
    ref = serial.evaluate(beta)
    _assert_same_evaluation(ref, ev)
    ref_coefs, ref_iters = serial.solve(beta, ref.coefs)
    assert iters == ref_iters and all(np.array_equal(a, b) for a, b in zip(coefs, ref_coefs))
    assert value == serial.value(beta, ref.coefs)
    assert all(np.array_equal(a, b) for a, b in zip(pred, serial.predict_coefs(ref, 1.1 * beta)))


@pytest.mark.parametrize("n_jobs", [None, 1, 2, 3, -1, -2])
def test_map_ordered_keeps_task_order_and_raises(n_jobs):
    rng = np.random.default_rng(0)
    tasks = [(k, float(rng.uniform(0, 2e-3))) for k in range(9)]

    def slow_square(k, pause):
        import time

        time.sleep(pause)  # finish out of order
        return k * k

    assert map_ordered(slow_square, tasks, n_jobs) == [k * k for k in range(9)]
    assert map_ordered(slow_square, [], n_jobs) == []

    def fail(k):
        if k == 5:
            raise ArithmeticError(f"task {k}")
        return k

    with pytest.raises(ArithmeticError, match="task 5"):
        map_ordered(fail, [(k,) for k in range(8)], n_jobs)


def _thread_ids(obj):
    import threading
    import time

    def ident(k):
        time.sleep(0.01)  # long enough for a second worker to take a task
        return threading.get_ident()

    return set(obj.map_folds(ident, [(k,) for k in range(len(obj.folds))]))


def test_small_folds_stay_on_one_thread(monkeypatch):
    """Below PARALLEL_FOLD_WORK the folds run in the calling thread; from it, on
    ``n_jobs`` threads; ``fold_work`` is the largest fold's Gram product."""
    import threading

    monkeypatch.setattr(bilevel, "PARALLEL_FOLD_WORK", 1e7)
    small, d = _folds(n=180, d=12, k=3)
    obj = BilevelObjective(small, LowerLevel(), _hyper("scalar", d), n_jobs=2)
    n_tr = max(f.X_train.shape[0] for f in small)
    assert obj.fold_work == n_tr * (d + 1) * (d + 1)
    assert _thread_ids(obj) == {threading.get_ident()}
    rng = np.random.default_rng(0)
    big = tuple(Fold(rng.standard_normal((400, 200)), np.repeat([-1.0, 1.0], 200),
                     rng.standard_normal((20, 200)), np.repeat([-1.0, 1.0], 10))
                for _ in range(3))
    obj = BilevelObjective(big, LowerLevel(), _hyper("scalar", 199), n_jobs=2)
    assert obj.fold_work == 400 * 200 * 200 >= 1e7
    ids = _thread_ids(obj)
    assert len(ids) == 2 and threading.get_ident() not in ids
    sparse = tuple(Fold(sp.csr_matrix(f.X_train), f.y_train, f.X_val, f.y_val) for f in big)
    assert BilevelObjective(sparse, LowerLevel(), _hyper("scalar", 199)).fold_work == \
        400 * 200 * 200


@pytest.mark.parametrize("bad", [0, 1.5, True, "2"])
def test_n_jobs_validated(bad):
    folds, d = _folds(k=2)
    with pytest.raises(ValueError, match="n_jobs"):
        BilevelObjective(folds, LowerLevel(), _hyper("scalar", d), n_jobs=bad)


# one class of the 3-class problem is fitted as the intercept-only model: the same bits
@pytest.mark.filterwarnings("ignore:BilevelSVC.*intercept-only:UserWarning")
def test_bilevel_svc_coef_identical_for_n_jobs():
    from bisvm import BilevelSVC

    if "n_jobs" not in BilevelSVC().get_params():
        pytest.skip("BilevelSVC has no n_jobs parameter yet")
    X, y = make_classification(200, 8, n_informative=3, random_state=3)
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    Xm, ym = make_classification(240, 8, n_informative=4, n_classes=3, random_state=4)
    cases = [(X, y, {}), (Xs, y, {}), (Xm, ym, {}),
             (X * np.arange(1, 9), y, {"model": "group", "cv": 4,
                                      "feature_groups": {"a": [0, 1, 2], "b": [5, 6]}})]
    for data, target, kw in cases:
        one = BilevelSVC(n_jobs=1, random_state=0, **kw).fit(data, target)
        two = BilevelSVC(n_jobs=2, random_state=0, **kw).fit(data, target)
        assert np.any(one.coef_ != 0)
        assert np.array_equal(one.coef_, two.coef_)
        assert np.array_equal(one.intercept_, two.intercept_)
        assert np.array_equal(one.support_, two.support_)
