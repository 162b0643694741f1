"""AutoSVR's ε-SVR lower level on the Nyström approximation: test R² close to the exact
lower levels on a 1,500-row problem, the same fit as the exact ε-SVR when every row is
a landmark, the refit equal to the L2-loss ε-SVR on all rows' features at the learned
values, sample weights, sparse input equal to dense, and the fitted attributes saying
what ran."""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from sklearn.metrics import r2_score

from bisvm.estimators.auto_svr import AutoSVR
from bisvm.persistence import check_round_trip
from bisvm.solvers.nystroem import nystroem_blocks, solve_piecewise_l2


def _data(n, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d)
    Xs = X / X.std(axis=0)
    y = np.sin(Xs[:, 0]) + 0.5 * Xs[:, 1] * Xs[:, 2] + 0.3 * rng.standard_normal(n) + 4.0
    return X, y


def test_test_r2_close_to_the_exact_lower_levels():
    X, y = _data(2000)
    Xt, yt, X, y = X[1500:], y[1500:], X[:1500], y[:1500]
    nys = AutoSVR(lower="svr", approximation="nystroem", n_components=200,
                  random_state=0).fit(X, y)
    assert nys.lower_ == "svr" and nys.approximation_ == "nystroem"
    # the lower levels compared: kernel ridge without the L1 stage that may follow it
    exact_kr = AutoSVR(lower="kernel_ridge", approximation=None, l1_stage=False).fit(X, y)
    assert r2_score(yt, nys.predict(Xt)) >= r2_score(yt, exact_kr.predict(Xt)) - 0.02


def test_every_row_a_landmark_tunes_the_exact_svr():
    X, y = _data(90, d=3)
    exact = AutoSVR(lower="svr", approximation=None, max_iter=5).fit(X, y)
    nys = AutoSVR(lower="svr", approximation="nystroem", n_components=90, max_iter=5,
                  random_state=0).fit(X, y)
    assert nys.C_ == pytest.approx(exact.C_, rel=1e-3)
    assert nys.epsilon_ == pytest.approx(exact.epsilon_, rel=1e-3)
    assert nys.gamma_ == pytest.approx(exact.gamma_, rel=1e-3)
    np.testing.assert_allclose(nys.predict(X), exact.predict(X), rtol=1e-4, atol=1e-4)


def test_refit_is_the_l2_svr_on_all_rows_features():
    X, y = _data(300)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, 300)
    m = AutoSVR(lower="svr", approximation="nystroem", n_components=40,
                random_state=0).fit(X, y, sample_weight=sw)
    Xr = X * m.scale_
    _, _, L, Phi = nystroem_blocks(Xr, Xr[m.landmark_indices_], 1.0)
    yz = (y - m.y_mean_) / m.y_scale_
    eps = m.epsilon_ / m.y_scale_
    n = y.size
    sol = solve_piecewise_l2(Phi, np.r_[np.arange(n), np.arange(n)],
                             np.r_[np.ones(n), -np.ones(n)], np.r_[yz - eps, -yz - eps],
                             np.r_[sw, sw], m.C_)
    np.testing.assert_allclose(m.predict(X), sol.f * m.y_scale_ + m.y_mean_, rtol=1e-6,
                               atol=1e-6)
    a = scipy.linalg.solve_triangular(L, sol.theta[1:], lower=True, trans="T")
    np.testing.assert_allclose(m.dual_coef_, a, rtol=1e-6, atol=1e-8)


def test_sparse_input_equals_dense():
    X, y = _data(200)
    X[np.abs(X) < 0.5] = 0.0
    kw = dict(lower="svr", approximation="nystroem", n_components=30, random_state=0,
              max_iter=10)
    m = AutoSVR(**kw).fit(X, y)
    ms = AutoSVR(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(ms.predict(sp.csr_matrix(X)), m.predict(X), rtol=1e-6,
                               atol=1e-6)


def test_per_feature_widths_on_the_features_drop_noise():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(300)
    m = AutoSVR(lower="svr", widths="per_feature", approximation="nystroem",
                n_components=60, random_state=0).fit(X, y)
    assert set(np.argsort(-m.feature_importances_)[:2]) == {0, 1}
    assert m.support_[:2].all() and m.support_.sum() <= 3


def test_model_file_round_trip():
    X, y = _data(150)
    m = AutoSVR(lower="svr", approximation="nystroem", n_components=20, random_state=0,
                max_iter=3).fit(X, y)
    check_round_trip(m, X)
