"""Model files of :class:`~bisvm.estimators.bilevel_svr.BilevelSVR`: every fitted attribute
comes back bit for bit and so do the predictions (``check_round_trip``), for each model,
loss and input kind, the intercept-only model of the null test included; the scaler and
the feature names travel with it."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes

from bisvm.data import Scaler
from bisvm.estimators.bilevel_svr import BilevelSVR
from bisvm.persistence import check_round_trip, load_model, save_model

# small max_iter keeps the fits short; the files must hold whatever the fit reached
pytestmark = pytest.mark.filterwarnings("ignore:BiSVM L-BFGS stopped after")


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X[:150], y[:150]


@pytest.mark.parametrize("params", [
    {"model": "vector"},
    {"model": "scalar", "loss": "squared"},
    {"model": "group", "feature_groups": [[0, 1], [2, 3], [4, 5, 6, 7, 8, 9]],
     "loss": "huber", "criterion": "mae"},
])
def test_round_trip_of_each_model(diabetes, params, tmp_path):
    X, y = diabetes
    est = BilevelSVR(max_iter=8, random_state=0, **params).fit(X, y)
    loaded = check_round_trip(est, X, tmp_path / "m.bisvm")
    back = loaded.estimator
    assert back.model_ == est.model_ and back.coef_.ndim == 1
    assert isinstance(back.intercept_, float)
    assert back.score(X, y) == est.score(X, y)


def test_round_trip_of_sparse_input_and_sample_weights(diabetes, tmp_path):
    X, y = diabetes
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.02, X, 0.0))
    est = BilevelSVR(max_iter=8, random_state=0).fit(Xs, y, sample_weight=w)
    loaded = check_round_trip(est, Xs, tmp_path / "s.bisvm")
    assert np.array_equal(loaded.estimator.predict(Xs.toarray()), est.predict(Xs.toarray()))


@pytest.mark.filterwarnings("ignore:No features were selected")  # transform() of it
def test_round_trip_of_the_intercept_only_model(tmp_path):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(80, 5)), 4.0 + rng.normal(size=80)
    with pytest.warns(UserWarning):
        est = BilevelSVR(model="scalar", max_iter=8, random_state=0).fit(X, y)
    assert est.null_model_ and not est.support_.any()
    back = check_round_trip(est, X, tmp_path / "null.bisvm").estimator
    assert back.null_model_
    # the intercept-only model predicts the (weighted) training mean on every row
    np.testing.assert_allclose(back.predict(X), np.full(len(y), y.mean()), rtol=1e-12)


def test_model_file_keeps_scaler_and_names(diabetes, tmp_path):
    X, y = diabetes
    names = [f"c{j}" for j in range(X.shape[1])]
    scaler = Scaler("minmax").fit(X)
    est = BilevelSVR(max_iter=8, standardize=False, random_state=0).fit(
        scaler.transform(X), y)
    path = save_model(est, tmp_path / "n.bisvm", feature_names=names, scaler=scaler,
                      extra={"trained_on": "diabetes[:150]"})
    loaded = load_model(path)
    assert loaded.feature_names == names and loaded.extra == {"trained_on": "diabetes[:150]"}
    Xn = X[::5] * 1.01
    assert np.array_equal(loaded.estimator.predict(loaded.scaler.transform(Xn)),
                          est.predict(scaler.transform(Xn)))
    with pytest.raises(ValueError, match="feature_names has 3 names"):
        save_model(est, tmp_path / "bad.bisvm", feature_names=names[:3])
