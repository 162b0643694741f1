"""AutoSVR and the L2-loss ε-SVR beneath it: the free-set solution against bisvm's SMO
on K + I/C, the hypergradient in log C, log ε, log γ and every log γ_j against central
finite differences of the k-fold criterion (with sample weights too), noise widths
dropped, the refit equal to a plain KernelRidge / the L2-loss solution / kernel ridge on
the Nyström landmarks at the learned values, sparse input equal to dense, zero weights
equal to removed rows, the auto rules and their warning and the selector interface
(scikit-learn's estimator checks: test_auto_svr_checks.py)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline

from bisvm.estimators import auto_svr
from bisvm.estimators.auto_svr import AutoSVR
from bisvm.estimators.kernel_ridge import KernelRidge
from bisvm.estimators.svm import SVR
from bisvm.selection.kernel_ridge_tune import kernel_ridge_loo
from bisvm.selection.kernel_svr_tune import KernelSVRObjective, SVRHyperModel, svr_folds
from bisvm.solvers.dual.kernel_lower_level import rbf_gram
from bisvm.solvers.dual.kernel_svr_lower_level import (
    SVRFold,
    l2svr_hypergradient,
    l2svr_outputs,
    solve_l2svr,
)
from bisvm.solvers.nystroem import nystroem_ridge_coef, nystroem_ridge_loo


def _data(n=300, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 5.0, d)
    y = 3 * np.sin(X[:, 0]) + X[:, 1] * X[:, 2] / 5 + 0.3 * rng.standard_normal(n) + 10
    return X, y


@pytest.fixture(scope="module")
def noise_problem():
    X, y = _data()
    return X[:220], y[:220], X[220:], y[220:]


def test_free_set_solution_equals_smo_on_the_shifted_kernel():
    X, y = _data(n=80, d=3)
    fold = SVRFold.build(X[:60], y[:60] - 10, X[60:], y[60:] - 10)
    g = np.array([0.3])
    sol = solve_l2svr(fold, 3.0, 0.2, g)
    A = rbf_gram(X[:60], X[:60], 0.3) + np.eye(60) / 3.0
    m = SVR(kernel="precomputed", C=np.inf, epsilon=0.2, tol=1e-9).fit(A, y[:60] - 10)
    coef = np.zeros(60)
    coef[m.support_] = m.dual_coef_.ravel()
    np.testing.assert_allclose(sol.beta, coef, atol=1e-6)
    assert sol.bias == pytest.approx(float(m.intercept_[0]), abs=1e-6)
    # KKT: residuals of the free rows outside the tube, the others inside
    r = fold.y_train - sol.gram @ sol.beta - sol.bias
    assert np.all(np.abs(r[sol.free]) > 0.2 - 1e-9)
    out = np.setdiff1d(np.arange(60), sol.free)
    assert np.all(np.abs(r[out]) <= 0.2 + 1e-9)


@pytest.mark.parametrize("cache", [False, True])
@pytest.mark.parametrize("gamma", [np.array([0.3]), np.array([0.2, 0.5, 0.05])])
def test_hypergradient_matches_central_differences(gamma, cache):
    X, y = _data(n=80, d=3)
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    folds = svr_folds(X, y - 10, splits, cache)
    widths = "shared" if gamma.size == 1 else "per_feature"
    obj = KernelSVRObjective(folds, SVRHyperModel(widths, 3, 3.0, 0.1, 1.0))
    beta = np.concatenate([[1.0, 1.0], gamma])
    ev = obj.evaluate(beta)
    h = 1e-6
    fd = [(obj.evaluate(beta * np.exp(h * e)).value
           - obj.evaluate(beta * np.exp(-h * e)).value) / (2 * h) for e in np.eye(beta.size)]
    np.testing.assert_allclose(ev.grad * beta, fd, rtol=1e-5, atol=1e-9)


def test_one_fold_gradient_is_the_adjoint_formula():
    X, y = _data(n=70, d=3)
    fold = SVRFold.build(X[:50], y[:50], X[50:], y[50:])
    sol = solve_l2svr(fold, 10.0, 0.3, np.array([0.5, 0.1, 0.05]))
    f, KVF = l2svr_outputs(fold, sol)
    e = np.ones(f.size) / f.size  # E = mean(f_V): linear, so the gradient is exact
    g = l2svr_hypergradient(fold, sol, e, KVF)

    def mean_out(C, eps, gam):
        s = solve_l2svr(fold, C, eps, gam, sol.beta)
        return l2svr_outputs(fold, s)[0].mean()

    h = 1e-6
    fd_C = (mean_out(10 * np.exp(h), 0.3, sol.gamma)
            - mean_out(10 * np.exp(-h), 0.3, sol.gamma)) / (2 * h)
    fd_e = (mean_out(10.0, 0.3 * np.exp(h), sol.gamma)
            - mean_out(10.0, 0.3 * np.exp(-h), sol.gamma)) / (2 * h)
    assert g[0] == pytest.approx(fd_C, rel=1e-5, abs=1e-10)
    assert g[1] == pytest.approx(fd_e, rel=1e-5, abs=1e-10)


@pytest.mark.parametrize("lower", ["kernel_ridge", "svr"])
def test_noise_widths_are_dropped(noise_problem, lower):
    X, y, Xt, yt = noise_problem
    m = AutoSVR(lower=lower, widths="per_feature").fit(X, y)
    assert m.lower_ == lower
    assert set(np.flatnonzero(m.support_)) <= {0, 1, 2} and m.support_[0]
    assert np.argmax(m.feature_importances_) == 0
    assert m.feature_importances_.sum() == pytest.approx(1.0)
    assert np.all(m.gamma_[~m.support_] == 0)
    assert m.score(Xt, yt) > 0.9


def test_refit_equals_plain_kernel_ridge(noise_problem):
    X, y, Xt, _ = noise_problem
    m = AutoSVR(lower="kernel_ridge").fit(X, y)
    assert m.ridge_ > 0 and m.C_ is None
    sig = X.std(axis=0)
    kr = KernelRidge(ridge=m.ridge_, kernel="rbf", gamma=m.gamma_, fit_intercept=True)
    kr.fit(X / sig, (y - y.mean()) / y.std())
    np.testing.assert_allclose(m.predict(Xt), kr.predict(Xt / sig) * y.std() + y.mean(),
                               rtol=1e-8)


def test_svr_refit_is_the_l2_loss_solution(noise_problem):
    X, y, Xt, _ = noise_problem
    m = AutoSVR(lower="svr").fit(X, y)
    assert m.C_ > 0 and m.epsilon_ > 0 and m.ridge_ is None
    Xr = X * m.scale_
    yz = (y - y.mean()) / y.std()
    sol = solve_l2svr(SVRFold.build(Xr, yz, Xr[:1], yz[:1]), m.C_, m.epsilon_ / y.std(),
                      np.array([1.0]))
    pred = (rbf_gram(Xt * m.scale_, Xr, 1.0) @ sol.beta + sol.bias) * y.std() + y.mean()
    np.testing.assert_allclose(m.predict(Xt), pred, rtol=1e-4, atol=1e-4 * y.std())


def test_auto_picks_by_size(monkeypatch):
    X, y = _data(n=60, d=3)
    m = AutoSVR(max_iter=3).fit(X, y)
    assert m.lower_ == "kernel_ridge" and m.approximation_ is None
    monkeypatch.setattr(auto_svr, "KERNEL_RIDGE_MAX_ROWS", 50)
    assert AutoSVR(max_iter=3, approximation=None).fit(X, y).lower_ == "svr"
    monkeypatch.setattr(auto_svr, "NYSTROEM_MIN_ROWS", 50)
    with pytest.warns(UserWarning, match="Nyström approximation of rank 20"):
        m = AutoSVR(max_iter=3, n_components=20, random_state=0).fit(X, y)
    assert m.lower_ == "kernel_ridge" and m.approximation_ == "nystroem"
    assert m.X_fit_.shape == (20, 3) and m.estimator_ is None
    # an explicit ε-SVR is approximated too beyond the size, and the warning names it
    with pytest.warns(UserWarning, match="L2-loss ε-SVR is tuned and fitted on a Nyström"):
        m = AutoSVR(lower="svr", max_iter=3, n_components=20, random_state=0).fit(X, y)
    assert m.lower_ == "svr" and m.approximation_ == "nystroem"
    assert AutoSVR(lower="svr", max_iter=3, approximation=None).fit(X, y).approximation_ \
        is None


def test_nystroem_refit_is_kernel_ridge_on_the_landmarks(noise_problem):
    X, y, Xt, yt = noise_problem
    m = AutoSVR(approximation="nystroem", n_components=60, random_state=0).fit(X, y)
    assert m.lower_ == "kernel_ridge" and m.approximation_ == "nystroem"
    assert m.landmark_indices_.size == 60
    Xr = X * m.scale_
    yz = (y - y.mean()) / y.std()
    a, b = nystroem_ridge_coef(Xr, Xr[m.landmark_indices_], yz, m.ridge_, 1.0)
    pred = (rbf_gram(Xt * m.scale_, Xr[m.landmark_indices_], 1.0) @ a + b) * y.std() \
        + y.mean()
    np.testing.assert_allclose(m.predict(Xt), pred, rtol=1e-8, atol=1e-8)
    # the LOO value reported is the one at the learned point
    st = nystroem_ridge_loo(Xr, Xr[m.landmark_indices_], yz, m.ridge_, 1.0)
    assert m.cv_value_ == pytest.approx(st.value, rel=1e-6)
    assert m.score(Xt, yt) > 0.9
    # the same seed, the same landmarks
    m2 = AutoSVR(approximation="nystroem", n_components=60, random_state=0).fit(X, y)
    np.testing.assert_array_equal(m2.landmark_indices_, m.landmark_indices_)


@pytest.mark.parametrize("params", [{"lower": "kernel_ridge"}, {"lower": "svr"},
                                    {"approximation": "nystroem", "n_components": 40}])
def test_sparse_input_gives_the_dense_model(noise_problem, params):
    X, y, Xt, _ = noise_problem
    dense = AutoSVR(max_iter=8, random_state=0, **params).fit(X, y)
    sparse = AutoSVR(max_iter=8, random_state=0, **params).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.predict(sp.csr_matrix(Xt)), dense.predict(Xt),
                               rtol=1e-6, atol=1e-6 * y.std())


@pytest.mark.parametrize("params", [{"lower": "kernel_ridge"}, {"lower": "svr"},
                                    {"approximation": "nystroem", "n_components": 40}])
def test_zero_weights_equal_removed_rows(noise_problem, params):
    X, y, Xt, _ = noise_problem
    sw = np.ones(X.shape[0])
    sw[::4] = 0.0
    a = AutoSVR(max_iter=8, random_state=0, **params).fit(X, y, sample_weight=sw)
    b = AutoSVR(max_iter=8, random_state=0, **params).fit(X[sw > 0], y[sw > 0])
    np.testing.assert_allclose(a.predict(Xt), b.predict(Xt), rtol=1e-8, atol=1e-8)


def test_weighted_kernel_ridge_refit_equals_plain_weighted_kernel_ridge(noise_problem):
    X, y, Xt, _ = noise_problem
    sw = np.random.default_rng(4).uniform(0.5, 2.0, X.shape[0])
    m = AutoSVR(lower="kernel_ridge", max_iter=8).fit(X, y, sample_weight=sw)
    w = sw / sw.sum()
    mu = w @ X
    sig = np.sqrt(w @ (X - mu) ** 2)
    ym = w @ y
    ys = np.sqrt(w @ (y - ym) ** 2)
    kr = KernelRidge(ridge=m.ridge_, kernel="rbf", gamma=m.gamma_, fit_intercept=True)
    kr.fit(X / sig, (y - ym) / ys, sample_weight=sw)
    np.testing.assert_allclose(m.predict(Xt), kr.predict(Xt / sig) * ys + ym, rtol=1e-8)
    # the weighted leave-one-out value at the learned point
    st = kernel_ridge_loo(X / sig, (y - ym) / ys, m.ridge_, m.gamma_, sw)
    assert m.cv_value_ == pytest.approx(st.value, rel=1e-6)


def test_weighted_svr_gradient_matches_central_differences():
    X, y = _data(n=70, d=3)
    sw = np.random.default_rng(5).uniform(0.5, 2.0, X.shape[0])
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    obj = KernelSVRObjective(svr_folds(X, y - 10, splits, False, sw),
                             SVRHyperModel("per_feature", 3, 3.0, 0.1, 1.0))
    beta = np.array([1.0, 1.0, 0.2, 0.5, 0.05])
    ev = obj.evaluate(beta)
    h = 1e-6
    fd = [(obj.evaluate(beta * np.exp(h * e)).value
           - obj.evaluate(beta * np.exp(-h * e)).value) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(ev.grad * beta, fd, rtol=1e-5, atol=1e-9)
    # doubling every weight leaves the weighted criterion and the fit unchanged at C/2
    obj2 = KernelSVRObjective(svr_folds(X, y - 10, splits, False, 2 * sw),
                              SVRHyperModel("per_feature", 3, 1.5, 0.1, 1.0))
    assert obj2.evaluate(beta).value == pytest.approx(ev.value, rel=1e-8)


def test_int_cv_above_the_row_count_is_leave_one_out():
    X, y = _data(n=4, d=3)
    m = AutoSVR(lower="svr", max_iter=3).fit(X, y)
    assert len(m.tuning_.history) == 1 and np.all(np.isfinite(m.predict(X)))


def test_selector_in_a_pipeline(noise_problem):
    X, y, _, _ = noise_problem
    m = AutoSVR(widths="per_feature").fit(X, y)
    np.testing.assert_array_equal(m.transform(X), X[:, m.support_])
    pipe = make_pipeline(AutoSVR(widths="per_feature", max_iter=10), LinearRegression())
    pipe.fit(X, y)
    assert pipe[0].transform(X).shape[1] == int(pipe[0].support_.sum())


def test_clear_errors():
    X, y = _data(n=30, d=3)
    with pytest.raises(ValueError, match="lower"):
        AutoSVR(lower="gp").fit(X, y)
    with pytest.raises(ValueError, match="widths"):
        AutoSVR(widths="ard").fit(X, y)
    with pytest.raises(ValueError, match="at least 3 samples"):
        AutoSVR().fit(X[:2], y[:2])
    with pytest.raises(ValueError, match="at least 3 samples of positive weight"):
        AutoSVR().fit(X, y, sample_weight=np.r_[1.0, 1.0, np.zeros(28)])
    with pytest.raises(ValueError, match="n_components"):
        AutoSVR(n_components=0).fit(X, y)
    with pytest.raises(ValueError, match="landmarks"):
        AutoSVR(landmarks="random").fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        AutoSVR().fit(np.where(X > 1, np.nan, X), y)
