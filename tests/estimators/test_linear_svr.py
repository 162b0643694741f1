"""``bisvm.LinearSVR`` and its solvers against scikit-learn's ``LinearSVR`` (LIBLINEAR):
the primal objective within 1e-5 relative for both losses, dense and sparse, with and
without intercept and sample weights; the dual CD against the primal finite Newton; the
duality gap; ``check_estimator``."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm
from sklearn.datasets import load_diabetes, make_regression
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator, check_param_validation

from bisvm import LinearSVR
from bisvm.losses import EpsilonInsensitive, SquaredEpsilonInsensitive
from bisvm.solvers.dual.dual_cd import solve_dual_cd_svr
from bisvm.solvers.primal.svr_finite_newton import solve_svr_finite_newton
from bisvm.solvers.problems import LinearProblem


def _data(name):
    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        return X, y
    X, y = make_regression(600, 40, n_informative=10, noise=5.0, random_state=3)
    if name == "sparse":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    return X, y / 10.0


def _objective(est, X, y, sw=None):
    return LinearSVR.primal_objective(est, X, y, sw)


@pytest.mark.parametrize("data", ["diabetes", "regression", "sparse"])
@pytest.mark.parametrize("loss,dual", [("epsilon_insensitive", True),
                                       ("squared_epsilon_insensitive", True),
                                       ("squared_epsilon_insensitive", False)])
def test_agrees_with_sklearn_liblinear(loss, dual, data):
    X, y = _data(data)
    sw = np.random.default_rng(0).uniform(0.5, 1.5, size=len(y))
    kw = dict(loss=loss, dual=dual, C=0.5, epsilon=0.5, tol=1e-7, max_iter=100000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = LinearSVR(random_state=0, **kw).fit(X, y, sample_weight=sw)
        ref = svm.LinearSVR(random_state=0, **kw).fit(X, y, sample_weight=sw)
    f_ours, f_ref = _objective(ours, X, y, sw), _objective(ref, X, y, sw)
    assert f_ours <= f_ref * (1 + 1e-5)
    assert f_ours == pytest.approx(f_ref, rel=1e-5)
    assert ours.objective_ == pytest.approx(f_ours, rel=1e-10)
    assert ours.coef_.shape == ref.coef_.shape and ours.intercept_.shape == ref.intercept_.shape


def test_no_intercept_and_intercept_scaling_follow_liblinear():
    X, y = _data("diabetes")
    for kw in (dict(fit_intercept=False), dict(intercept_scaling=10.0)):
        ours = LinearSVR(C=10.0, tol=1e-8, max_iter=100000, **kw).fit(X, y)
        ref = svm.LinearSVR(C=10.0, tol=1e-8, max_iter=100000, **kw).fit(X, y)
        assert _objective(ours, X, y) == pytest.approx(_objective(ref, X, y), rel=1e-6)


def _dcd_svr(X, y, *, C=1.0, epsilon=0.0, loss="epsilon_insensitive", sample_weight=None,
             bias=0.0, **kw):
    """``solve_dual_cd_svr`` on the LinearProblem with costs ``C · sample_weight``."""
    cost = C * (np.ones(X.shape[0]) if sample_weight is None else sample_weight)
    loss = (EpsilonInsensitive(epsilon) if loss == "epsilon_insensitive"
            else SquaredEpsilonInsensitive(epsilon))
    return solve_dual_cd_svr(LinearProblem(X, y, loss, cost, bias=bias), **kw)


@pytest.mark.parametrize("sparse", [False, True])
def test_squared_loss_dual_equals_primal_newton(sparse):
    X, y = _data("sparse" if sparse else "regression")
    cost = np.random.default_rng(1).uniform(0.2, 2.0, size=len(y))
    r = _dcd_svr(X, y, C=1.0, sample_weight=cost, epsilon=0.3,
                 loss="squared_epsilon_insensitive", bias=1.0, tol=1e-10, max_iter=100000)
    Xa = sp.hstack([X, np.ones((len(y), 1))]).tocsr() if sparse else np.c_[X, np.ones(len(y))]
    p = solve_svr_finite_newton(LinearProblem(Xa, y, SquaredEpsilonInsensitive(0.3), cost),
                                tol=1e-12)
    assert r.converged and p.converged
    np.testing.assert_allclose(np.r_[r.coef, r.intercept], p.coef, atol=1e-6)
    assert r.objective == pytest.approx(p.objective, rel=1e-10)


@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
def test_duality_gap_and_dual_feasibility(loss):
    X, y = _data("regression")
    C = 0.7
    r = _dcd_svr(X, y, C=C, epsilon=0.2, loss=loss, bias=0.0, tol=1e-10, max_iter=100000)
    beta = r.dual_coef
    np.testing.assert_allclose(r.coef, X.T @ beta, atol=1e-9)  # w = Σ β_i x_i
    if loss == "epsilon_insensitive":
        assert np.all(np.abs(beta) <= C + 1e-12)
        # samples strictly inside the tube have β = 0
        inside = np.abs(y - X @ r.coef) < 0.2 - 1e-6
        assert np.all(beta[inside] == 0.0)
    assert r.objective + r.dual_objective == pytest.approx(0.0, abs=1e-8 * r.objective)


def test_dense_and_sparse_and_warm_start():
    X, y = _data("sparse")
    a = _dcd_svr(X, y, epsilon=0.1, bias=1.0, tol=1e-10, max_iter=100000)
    b = _dcd_svr(X.toarray(), y, epsilon=0.1, bias=1.0, tol=1e-10, max_iter=100000)
    assert a.objective == pytest.approx(b.objective, rel=1e-9)
    c = _dcd_svr(X, y, epsilon=0.1, bias=1.0, tol=1e-10, max_iter=100000,
                 alpha0=a.dual_coef)
    assert c.n_iter < a.n_iter and c.objective == pytest.approx(a.objective, rel=1e-9)


def test_zero_weight_equals_removal():
    X, y = _data("regression")
    sw = np.ones(len(y))
    sw[:60] = 0.0
    # weights to 1e-6 ask for LIBLINEAR's rule: a relative gap g bounds the objective, and
    # w only to within sqrt(2 g P(w))
    kw = dict(C=0.3, epsilon=0.1, tol=1e-10, max_iter=100000, dual=True,
              loss="squared_epsilon_insensitive", stopping="projected_gradient")
    a = LinearSVR(**kw).fit(X, y, sample_weight=sw)
    b = LinearSVR(**kw).fit(X[60:], y[60:])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-6)


@pytest.mark.parametrize("kw, name", [
    (dict(C=0.0), "C"), (dict(C=np.inf), "C"), (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=True), "epsilon"), (dict(tol=0.0), "tol"), (dict(max_iter=0), "max_iter"),
    (dict(loss="hinge"), "loss"), (dict(dual="yes"), "dual"),
])
def test_bad_parameter_is_refused_naming_it(kw, name):
    X, y = _data("diabetes")
    with pytest.raises(ValueError, match=rf"^The '{name}' parameter of LinearSVR must be "):
        LinearSVR(**kw).fit(X, y)


def test_param_validation():
    check_param_validation("LinearSVR", LinearSVR())


def test_parameter_errors_and_cap():
    X, y = _data("diabetes")
    with pytest.raises(ValueError, match="intercept_scaling must be > 0 when fit_intercept"):
        LinearSVR(intercept_scaling=0.0).fit(X, y)
    # without an intercept the scaling is unused, and not checked
    LinearSVR(fit_intercept=False, intercept_scaling=0.0).fit(X, y)
    # dual equal to True (1, numpy bools), as `dual in ("auto", True, False)` always took
    np.testing.assert_array_equal(LinearSVR(dual=1, random_state=0).fit(X, y).coef_,
                                  LinearSVR(dual=True, random_state=0).fit(X, y).coef_)
    with pytest.raises(ValueError, match="Unsupported set of arguments.*dual=True"):
        LinearSVR(loss="epsilon_insensitive", dual=False).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        est = LinearSVR(C=1e3, max_iter=2).fit(X, y)
    assert est.n_iter_ == 2 and isinstance(est.n_iter_, int)


def test_verbose_prints(capsys):
    X, y = _data("diabetes")
    LinearSVR(verbose=2, max_iter=3).fit(X, y)
    out = capsys.readouterr().out
    assert "epoch 1" in out and "optimization finished" in out


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_estimator(LinearSVR(), expected_failed_checks={
            # as for LinearSVC: the dual stops at a relative tolerance of 1e-4, so weight 2
            # and a repeated row agree to ~1e-4, not 1e-7 (scikit-learn's fails it too)
            "check_sample_weight_equivalence_on_dense_data": "dual CD tolerance 1e-4",
            "check_sample_weight_equivalence_on_sparse_data": "dual CD tolerance 1e-4",
        })


def test_primal_verbose_levels(capsys):
    X, y = _data("diabetes")
    kw = dict(loss="squared_epsilon_insensitive", dual=False)
    est = LinearSVR(verbose=1, **kw).fit(X, y)
    out, err = capsys.readouterr()
    assert err == "" and f"{est.n_iter_} iterations" in out and "iter 1," not in out
    LinearSVR(verbose=2, **kw).fit(X, y)
    assert "SVR finite Newton: iter 1," in capsys.readouterr().out


def test_primal_n_jobs_gives_identical_models():
    rng = np.random.default_rng(3)
    X = sp.random(8000, 40, density=0.2, format="csr", random_state=3)
    y = X @ rng.standard_normal(40) + 0.1 * rng.standard_normal(8000)
    kw = dict(loss="squared_epsilon_insensitive", dual=False, epsilon=0.05, tol=1e-8)
    one = LinearSVR(n_jobs=1, **kw).fit(X, y)
    two = LinearSVR(n_jobs=2, **kw).fit(X, y)
    np.testing.assert_array_equal(one.coef_, two.coef_)
    np.testing.assert_array_equal(one.intercept_, two.intercept_)
    with pytest.raises(ValueError, match="n_jobs"):
        LinearSVR(n_jobs=-3, **kw).fit(X, y)
