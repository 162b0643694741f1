"""Crammer–Singer multiclass SVM (``LinearSVC(multi_class="crammer_singer")`` and the
sequential dual method) against scikit-learn's LIBLINEAR (``-s 4``): the primal objective
within 1e-5 relative, dense and sparse, with class and sample weights; the duality gap;
the exact block sub-problem against scipy's QP; dual feasibility; the binary convention."""

import warnings

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from sklearn import svm
from sklearn.datasets import load_iris, load_wine, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from bisvm import LinearSVC
from bisvm.estimators.linear import primal_objective
from bisvm.losses import MulticlassHinge
from bisvm.solvers.dual._crammer_singer_kernels import cs_subproblem
from bisvm.solvers.dual.crammer_singer import crammer_singer_objective, solve_crammer_singer
from bisvm.solvers.problems import LinearProblem


def _data(name):
    if name == "iris":
        return load_iris(return_X_y=True)
    if name == "wine":
        X, y = load_wine(return_X_y=True)
        return StandardScaler().fit_transform(X), y
    X, y = make_classification(800, 30, n_informative=10, n_classes=5, random_state=0)
    return sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0)), y


@pytest.mark.parametrize("data", ["iris", "wine", "sparse"])
def test_agrees_with_sklearn_liblinear(data):
    X, y = _data(data)
    kw = dict(multi_class="crammer_singer", C=0.3, tol=1e-6, max_iter=200000,
              class_weight={k: 1.0 + 0.25 * k for k in np.unique(y)})
    sw = np.random.default_rng(0).uniform(0.5, 1.5, size=len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = LinearSVC(random_state=0, **kw).fit(X, y, sample_weight=sw)
        ref = svm.LinearSVC(random_state=0, **kw).fit(X, y, sample_weight=sw)
    f_ours = primal_objective(ours, X, y, sw)
    f_ref = primal_objective(ref, X, y, sw)
    np.testing.assert_allclose(f_ours, f_ref, rtol=1e-5)
    np.testing.assert_allclose(ours.objective_, f_ours, rtol=1e-10)
    assert ours.coef_.shape == ref.coef_.shape and ours.intercept_.shape == ref.intercept_.shape
    assert abs(ours.score(X, y) - ref.score(X, y)) <= 0.01


@pytest.mark.parametrize("sparse", [False, True])
def test_gap_feasibility_and_dense_sparse(sparse):
    X, y = _data("wine")
    Xs = sp.csr_matrix(X) if sparse else X
    n, k = len(y), 3
    cost = np.random.default_rng(2).uniform(0.1, 1.0, size=n)
    r = solve_crammer_singer(LinearProblem(Xs, y, MulticlassHinge(), cost, bias=1.0),
                             n_classes=k, tol=1e-8, max_iter=100000)
    assert r.converged
    A = r.dual_coef
    np.testing.assert_allclose(A.sum(axis=1), 0.0, atol=1e-10)        # Σ_m α_i^m = 0
    assert np.all(A[np.arange(n), y] <= cost + 1e-12)                 # α_i^{y_i} <= C_i
    off = np.ones_like(A, dtype=bool)
    off[np.arange(n), y] = False
    assert np.all(A[off] <= 1e-12)                                    # α_i^m <= 0, m != y_i
    Xa = np.c_[X, np.ones(n)]
    W = np.c_[r.coef, r.intercept]                                    # bias 1
    np.testing.assert_allclose(W, A.T @ Xa, atol=1e-9)                # w_m = Σ_i α_i^m x_i
    gap = r.objective + r.dual_objective
    assert 0 <= gap <= 1e-6 * r.objective
    other = solve_crammer_singer(
        LinearProblem(X if sparse else sp.csr_matrix(X), y, MulticlassHinge(), cost, bias=1.0),
        tol=1e-8, max_iter=100000)
    assert other.objective == pytest.approx(r.objective, rel=1e-7)


def test_block_subproblem_is_the_exact_qp():
    rng = np.random.default_rng(0)
    for _ in range(30):
        k = int(rng.integers(2, 7))
        A = float(rng.uniform(0.1, 3.0))
        B = rng.normal(size=k)
        yi = int(rng.integers(k))
        Cy = float(rng.uniform(0.05, 2.0))
        out = np.empty(k)
        cs_subproblem(A, B, yi, Cy, k, out, np.empty(k))
        ub = np.zeros(k)
        ub[yi] = Cy
        ref = so.minimize(lambda a, A=A, B=B: 0.5 * A * a @ a + B @ a, np.zeros(k),
                          jac=lambda a, A=A, B=B: A * a + B, method="SLSQP",
                          bounds=[(None, u) for u in ub],
                          constraints=[dict(type="eq", fun=lambda a: a.sum())],
                          options=dict(ftol=1e-14, maxiter=500))
        np.testing.assert_allclose(out, ref.x, atol=1e-6)
        assert abs(out.sum()) < 1e-12 and np.all(out <= ub + 1e-15)


def test_objective_function_on_hand_example():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([0, 1])
    W = np.array([[0.5, 0.0], [0.0, 0.5]])
    # margins: sample 0: class 1 score 0 - 0.5 + 1 = 0.5; sample 1 likewise
    assert crammer_singer_objective(X, y, W, np.array([2.0, 1.0])) == pytest.approx(
        0.25 + 2.0 * 0.5 + 1.0 * 0.5)


def test_binary_and_predictions_follow_sklearn_conventions():
    X, y = make_classification(200, 5, random_state=1)
    est = LinearSVC(multi_class="crammer_singer", random_state=0).fit(X, y)
    ref = svm.LinearSVC(multi_class="crammer_singer", random_state=0).fit(X, y)
    assert est.coef_.shape == (1, 5) and est.intercept_.shape == (1,)
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.98
    Xi, yi = load_iris(return_X_y=True)
    est = LinearSVC(multi_class="crammer_singer", max_iter=20000).fit(Xi, yi)
    np.testing.assert_array_equal(est.predict(Xi), est.classes_[
        np.argmax(est.decision_function(Xi), axis=1)])
    with pytest.raises(ValueError, match="multi_class"):
        LinearSVC(multi_class="ovo").fit(Xi, yi)
