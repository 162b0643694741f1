"""Determinism: the same data, parameters and ``random_state`` give
bit-identical fitted models -- fit after fit, after fitting other data first, in a fresh
interpreter, and with ``n_jobs=1`` or ``2`` for the parallel work of
:mod:`bisvm.parallel`.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from bisvm import (
    SVC,
    SVR,
    BilevelSVC,
    ElasticNetSVC,
    KernelLogisticRegression,
    KernelRidge,
    LinearSVC,
    SelectiveLogisticRegression,
    SelectiveLogisticRegressionCV,
    SelectiveRegression,
    SelectiveRegressionCV,
)
from bisvm.parallel import cross_val_scores, loo_predictions, search, sparsity_sweep

# estimators whose fit draws random numbers take random_state; the others are
# deterministic algorithms and must be reproducible without it
ESTIMATORS = {
    "SVC": lambda: SVC(random_state=0),
    "SVC-probability": lambda: SVC(probability=True, random_state=0),
    "SVC-ovr": lambda: SVC(multiclass="ovr", random_state=0),
    "SVR": lambda: SVR(),
    "LinearSVC-dual": lambda: LinearSVC(dual=True, random_state=0),
    "LinearSVC-primal": lambda: LinearSVC(dual=False),
    "LinearSVC-l1": lambda: LinearSVC(penalty="l1", dual=False),
    "KernelRidge": lambda: KernelRidge(kernel="rbf"),
    "KernelLogisticRegression": lambda: KernelLogisticRegression(),
    "KernelLogisticRegression-lbfgs": lambda: KernelLogisticRegression(solver="lbfgs"),
    "ElasticNetSVC": lambda: ElasticNetSVC(),
    "ElasticNetSVC-lbfgs": lambda: ElasticNetSVC(solver="lbfgs"),
    "BilevelSVC": lambda: BilevelSVC(model="vector", cv=3, max_iter=5, random_state=0),
    "SelectiveRegression": lambda: SelectiveRegression(),
    "SelectiveLogisticRegression": lambda: SelectiveLogisticRegression(),
    "SelectiveRegressionCV-kfold": lambda: SelectiveRegressionCV(criterion="kfold", n_mu=8,
                                                                 random_state=0),
    "SelectiveLogisticRegressionCV": lambda: SelectiveLogisticRegressionCV(n_mu=8),
}
REGRESSION = {"SVR", "KernelRidge", "SelectiveRegression", "SelectiveRegressionCV"}


def _data(key, seed=0, n=40, d=4):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    if key.split("-")[0] in REGRESSION:
        return X, X[:, 0] + 0.2 * rng.randn(n)
    y = (X[:, 0] + 0.5 * rng.randn(n) > 0).astype(int)
    if key == "SVC-ovr":
        y = y + (X[:, 1] > 0.5)
    return X, y


def _fitted_state(est):
    """Every fitted array/number (trailing underscore), as bytes, in a stable order."""
    out = {}
    for name in sorted(vars(est)):
        if not name.endswith("_") or name.startswith("_") or name == "fit_seconds_":
            continue
        val = getattr(est, name)
        if isinstance(val, (np.ndarray, float, int, np.floating, np.integer, bool)):
            arr = np.asarray(val)
            out[name] = (arr.dtype.str, arr.shape, arr.tobytes())
    return out


def _fingerprint(est, X):
    h = hashlib.sha256()
    for name, (dt, shape, raw) in _fitted_state(est).items():
        h.update(name.encode() + dt.encode() + repr(shape).encode() + raw)
    f = est.decision_function if hasattr(est, "decision_function") else est.predict
    h.update(np.ascontiguousarray(f(X), dtype=np.float64).tobytes())
    return h.hexdigest()


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_refit_is_bit_identical(key):
    X, y = _data(key)
    a = _fit(ESTIMATORS[key](), X, y)
    b = _fit(ESTIMATORS[key](), X, y)
    sa, sb = _fitted_state(a), _fitted_state(b)
    assert sa.keys() == sb.keys() and sa, key
    for name in sa:
        assert sa[name] == sb[name], f"{key}.{name} differs between two identical fits"
    assert _fingerprint(a, X) == _fingerprint(b, X)


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_no_state_leaks_from_a_previous_fit(key):
    """fit(other data) then fit(X, y) on the same object equals a fresh fit(X, y)."""
    X, y = _data(key)
    Xo, yo = _data(key, seed=1, n=30)
    est = _fit(ESTIMATORS[key](), Xo, yo)
    _fit(est, X, y)
    assert _fingerprint(est, X) == _fingerprint(_fit(ESTIMATORS[key](), X, y), X)


@pytest.mark.parametrize("key", ["SVC-probability", "LinearSVC-dual", "BilevelSVC"])
def test_random_state_instance_with_the_same_seed(key):
    """(SelectiveRegressionCV documents an int random_state only.)"""
    X, y = _data(key)
    a = _fit(ESTIMATORS[key]().set_params(random_state=np.random.RandomState(7)), X, y)
    b = _fit(ESTIMATORS[key]().set_params(random_state=np.random.RandomState(7)), X, y)
    c = _fit(ESTIMATORS[key]().set_params(random_state=7), X, y)
    assert _fingerprint(a, X) == _fingerprint(b, X)
    d = _fit(clone(c), X, y)
    assert _fingerprint(c, X) == _fingerprint(d, X)


FAST = ["SVC", "SVR", "LinearSVC-dual", "KernelRidge", "KernelLogisticRegression",
        "ElasticNetSVC"]


@pytest.mark.parametrize("key", FAST)
@settings(max_examples=settings.default.max_examples)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(6, 40), d=st.integers(1, 6))
def test_refit_is_bit_identical_on_random_data(key, seed, n, d):
    X, y = _data(key, seed=seed, n=n, d=d)
    if key.split("-")[0] not in REGRESSION:
        y[:2] = [0, 1]
    assert _fingerprint(_fit(ESTIMATORS[key](), X, y), X) == _fingerprint(
        _fit(ESTIMATORS[key](), X, y), X)


_SUBPROCESS = """
import json, sys, warnings
sys.path.insert(0, {tests!r})
warnings.simplefilter("ignore")
import test_reliability_determinism as t
out = {{}}
for key in {keys!r}:
    X, y = t._data(key)
    out[key] = t._fingerprint(t._fit(t.ESTIMATORS[key](), X, y), X)
print(json.dumps(out))
"""


def test_fresh_interpreter_gives_the_same_bits():
    """A new process (new hash seed, numba loaded from its cache, fresh BLAS state)
    fits bit-identical models."""
    import os

    keys = ["SVC-probability", "LinearSVC-dual", "KernelLogisticRegression", "ElasticNetSVC",
            "BilevelSVC"]
    code = _SUBPROCESS.format(tests=os.path.dirname(__file__), keys=keys)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, env=env, check=True)
    theirs = json.loads(res.stdout.strip().splitlines()[-1])
    for key in keys:
        X, y = _data(key)
        assert theirs[key] == _fingerprint(_fit(ESTIMATORS[key](), X, y), X), key


# ------------------------------------------------------------------ n_jobs 1 vs 2
@pytest.fixture(scope="module")
def clf_data():
    return _data("SVC", n=36)


def test_search_n_jobs_1_and_2_identical(clf_data):
    X, y = clf_data
    grid = {"C": [0.1, 1.0, 10.0], "gamma": [0.1, 1.0]}
    a = search(SVC(), grid, X, y, cv=3, random_state=0, n_jobs=1)
    b = search(SVC(), grid, X, y, cv=3, random_state=0, n_jobs=2)
    assert a.best_params_ == b.best_params_
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])
    assert _fingerprint(a.best_estimator_, X) == _fingerprint(b.best_estimator_, X)


def test_random_search_n_jobs_1_and_2_identical(clf_data):
    X, y = clf_data
    params = {"C": [0.01, 0.1, 1.0, 10.0, 100.0], "penalty": ["l1", "l2"]}
    kw = dict(method="random", n_iter=4, cv=3, random_state=3)
    a = search(LinearSVC(dual=False), params, X, y, n_jobs=1, **kw)
    b = search(LinearSVC(dual=False), params, X, y, n_jobs=2, **kw)
    assert a.cv_results_["params"] == b.cv_results_["params"]
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])


def test_cross_val_and_loo_n_jobs_1_and_2_identical(clf_data):
    X, y = clf_data
    est = BilevelSVC(model="scalar", cv=3, max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = cross_val_scores(est, X, y, cv=3, random_state=0, n_jobs=1)
        b = cross_val_scores(est, X, y, cv=3, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(a, b)
    t = X[:, 0] + 0.1 * np.arange(len(X))
    la = loo_predictions(KernelRidge(kernel="rbf"), X, t, n_jobs=1)
    lb = loo_predictions(KernelRidge(kernel="rbf"), X, t, n_jobs=2)
    np.testing.assert_array_equal(la, lb)


def test_sparsity_sweep_n_jobs_1_and_2_identical(clf_data):
    X, y = clf_data
    ys = np.where(y == 1, 1.0, -1.0)
    a = sparsity_sweep(X, ys, [0.25, 0.01], [0.01, 1e-4], n_jobs=1)
    b = sparsity_sweep(X, ys, [0.25, 0.01], [0.01, 1e-4], n_jobs=2)
    np.testing.assert_array_equal(a.coefs, b.coefs)
    np.testing.assert_array_equal(a.objectives, b.objectives)
