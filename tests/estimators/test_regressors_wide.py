"""Every regressor of bisvm on wide tables (more columns than rows): a real table of
binary fingerprints (standardised, duplicated and all-zero columns), a dense synthetic
200 x 2,000 table with 20 informative columns, a raw 0/1 fingerprint-like table with
constant and duplicated columns, and a sparse table.

Properties: the fit ends without an exception, the predictions are finite, and on the
training rows the model beats the mean predictor (R^2 > 0), which every one of these
models can do on these tables. An estimator that needs dense input refuses the sparse
table with a ``TypeError`` that says so. The self-tuning estimators run with a short
grid or few outer iterations so that the file stays fast; their defaults are covered by
their own tests.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score

import bisvm
from bisvm.solvers.selective import selectivity_max

pytestmark = [pytest.mark.usefixtures("one_blas_thread"),
              pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")]

FIXTURE = (Path(__file__).parents[1] / "solvers" / "selective" / "data"
           / "selective_regression_lstsq.npz")


def fingerprint_fixture():
    d = np.load(FIXTURE)
    return d["X"], d["y"]


def dense_wide(seed=0, n=200, d=2000, k=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X = (X - X.mean(0)) / X.std(0)
    w = np.zeros(d)
    w[:k] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.5, 2.0, k)
    return X, X @ w + 0.5 * rng.normal(size=n)


def binary_wide(seed=0, n=120, d=500):
    rng = np.random.default_rng(seed)
    B = (rng.random((n, d)) < rng.uniform(0.02, 0.3, d)).astype(float)
    B[:, 10:30] = 0.0  # constant columns, both values
    B[:, 30:40] = 1.0
    B[:, 40:100] = B[:, rng.integers(100, d, 60)]  # duplicated columns
    w = np.zeros(d)
    informative = np.r_[0:10, 100:110]
    w[informative] = rng.uniform(1.0, 2.0, informative.size)
    return B, B @ w + 0.3 * rng.normal(size=n)


def sparse_wide(seed=0, n=200, d=2000, k=20):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.02, format="lil", random_state=seed,
                  data_rvs=rng.standard_normal)
    X[:, :k] = rng.normal(size=(n, k)) * (rng.random((n, k)) < 0.3)
    X = X.tocsr()
    w = np.zeros(d)
    w[:k] = rng.uniform(1.0, 3.0, k)
    return X, X @ w + 0.3 * rng.normal(size=n)


TABLES = {"fingerprints": fingerprint_fixture, "dense": dense_wide, "binary": binary_wide,
          "sparse": sparse_wide}


def _selective(X, y):
    # a fifth of the sparsest selectivity: a fit of a few dozen features, quick, and
    # in units of the table (the default 0.1 means very different models on these)
    return bisvm.SelectiveRegression(
        selectivity=0.2 * selectivity_max(X, y, "squared", 1.0, None, True)[0])


REGRESSORS = {
    "SVR": lambda X, y: bisvm.SVR(),
    "NuSVR": lambda X, y: bisvm.NuSVR(),
    "LinearSVR": lambda X, y: bisvm.LinearSVR(),
    "KernelRidge": lambda X, y: bisvm.KernelRidge(),
    "SelectiveRegression": _selective,
    "SelectiveRegressionCV": lambda X, y: bisvm.SelectiveRegressionCV(n_mu=6, min_ratio=0.05),
    "BilevelSVR": lambda X, y: bisvm.BilevelSVR(cv=3, max_iter=15, random_state=0),
}
DENSE_ONLY = {"KernelRidge", "SelectiveRegression", "SelectiveRegressionCV"}


@pytest.fixture(scope="module")
def tables():
    return {name: make() for name, make in TABLES.items()}


def test_tables_are_wide_and_degenerate(tables):
    for X, y in tables.values():
        assert X.shape[1] > X.shape[0] and np.all(np.isfinite(y))
    X = tables["fingerprints"][0]
    assert np.sum(~np.any(X != 0, axis=0)) == 122
    assert np.unique(X, axis=1).shape[1] < X.shape[1] // 2
    B = tables["binary"][0]
    assert np.sum(np.ptp(B, axis=0) == 0) >= 30
    assert np.unique(B, axis=1).shape[1] < B.shape[1]
    assert sp.issparse(tables["sparse"][0])


@pytest.mark.parametrize("table", list(TABLES))
@pytest.mark.parametrize("name", list(REGRESSORS))
def test_regressor_on_wide_table(name, table, tables):
    X, y = tables[table]
    if table == "sparse" and name in DENSE_ONLY:
        with pytest.raises(TypeError, match="[Ss]parse"):
            REGRESSORS[name](X.toarray(), y).fit(X, y)
        return
    est = REGRESSORS[name](X, y)
    est.fit(X, y)
    pred = est.predict(X)
    assert pred.shape == y.shape
    assert np.all(np.isfinite(pred))
    assert r2_score(y, pred) > 0.0
    coef = getattr(est, "coef_", None)
    if coef is not None:
        assert np.all(np.isfinite(coef.toarray() if sp.issparse(coef) else coef))


def test_selective_regression_converges_on_the_fixture_without_warning(tables):
    # the table of the crash: the selective solvers reach their duality-gap certificate
    X, y = tables["fingerprints"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = _selective(X, y).fit(X, y)
    assert m.duality_gap_ <= 1e-8
