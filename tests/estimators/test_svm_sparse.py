"""SVC and SVR on sparse input (CSR kernel columns in the compiled SMO), against
scikit-learn's LIBSVM on the same sparse data, and the smaller LIBSVM behaviours of the
kernel estimators (callable kernels on non-numeric data, C=inf, negative weights,
probability switched on after fit, gamma='scale' underflow, verbose, read-only coef_)."""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.svm
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.exceptions import NotFittedError

from bisvm.estimators.svm import SVC, SVR
from bisvm.kernels import make_kernel
from bisvm.solvers.dual.smo import csvc_dual, solve_smo

KERNELS = ["linear", "rbf", "poly", "sigmoid"]
PARAMS = {"linear": {}, "rbf": {"gamma": 0.05}, "poly": {"gamma": 0.3, "coef0": 1.0},
          "sigmoid": {"gamma": 0.01, "coef0": -0.5}}


def _sparse_data(n=240, d=150, density=0.05, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.normal(size=k))
    w = rng.normal(size=d)
    score = X @ w
    y = (score + 0.3 * rng.normal(size=n) > np.median(score)).astype(int)
    return X, y, score + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("kernel", KERNELS)
def test_sparse_svc_matches_libsvm(kernel):
    X, y, _ = _sparse_data()
    kw = dict(kernel=kernel, C=2.0, tol=1e-8, **PARAMS[kernel])
    ref = sklearn.svm.SVC(**kw).fit(X, y)
    ours = SVC(**kw).fit(X, y)
    assert sp.issparse(ours.support_vectors_) and sp.issparse(ours.dual_coef_)
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_allclose(ours.dual_coef_.toarray(), ref.dual_coef_.toarray(),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose((ours.support_vectors_ - ref.support_vectors_).data, 0)
    dec = ref.decision_function(X)
    np.testing.assert_allclose(ours.decision_function(X), dec, rtol=1e-4, atol=1e-5)
    if kernel == "linear":
        assert sp.issparse(ours.coef_)
        np.testing.assert_allclose(ours.coef_.toarray(), ref.coef_.toarray(), atol=1e-5)


@pytest.mark.parametrize("kernel", KERNELS)
def test_sparse_svr_matches_libsvm(kernel):
    X, _, z = _sparse_data(seed=1)
    kw = dict(kernel=kernel, C=0.3, epsilon=0.05, tol=1e-8, **PARAMS[kernel])
    ref = sklearn.svm.SVR(**kw).fit(X, z)
    ours = SVR(**kw).fit(X, z)
    np.testing.assert_array_equal(ours.support_, ref.support_)
    if kernel == "linear":  # rank(K) <= d < n: the dual is not unique, w is
        np.testing.assert_allclose(ours.coef_.toarray(), ref.coef_.toarray(), atol=1e-5)
    else:
        np.testing.assert_allclose(ours.dual_coef_.toarray(), ref.dual_coef_.toarray(),
                                   rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kernel", KERNELS + ["laplacian"])
def test_sparse_solver_equals_dense_solver(kernel):
    X, y, _ = _sparse_data(seed=2)
    ker = make_kernel(kernel, X=X, **{k: v for k, v in PARAMS.get(kernel, {}).items()})
    yb = np.where(y > 0, 1.0, -1.0)
    dense = solve_smo(csvc_dual(X.toarray(), yb, ker, 1.0), tol=1e-9)
    sparse = solve_smo(csvc_dual(X, yb, ker, 1.0), tol=1e-9)
    np.testing.assert_allclose(sparse.dual_coef, dense.dual_coef, atol=1e-7)
    assert sparse.intercept == pytest.approx(dense.intercept, abs=1e-7)


def test_dense_and_sparse_fit_and_predict_mix():
    X, y, _ = _sparse_data(seed=3)
    Xd = X.toarray()
    from_sparse = SVC(gamma=0.05, tol=1e-8).fit(X, y)
    from_dense = SVC(gamma=0.05, tol=1e-8).fit(Xd, y)
    np.testing.assert_array_equal(from_sparse.support_, from_dense.support_)
    ref = from_dense.decision_function(Xd)
    for model in (from_sparse, from_dense):
        for data in (X, Xd, X.tocsc(), X.tocoo()):
            np.testing.assert_allclose(model.decision_function(data), ref, atol=1e-6)


def test_unsorted_indices_and_duplicates():
    X, y, _ = _sparse_data(seed=4)
    base = SVC(kernel="linear", tol=1e-8).fit(X, y)
    rows = []
    for i in range(X.shape[0]):  # every row reversed, one entry split in two
        s = slice(X.indptr[i], X.indptr[i + 1])
        rows.append((X.indices[s][::-1], X.data[s][::-1]))
    indices = np.concatenate([r[0] for r in rows] + [X.indices[:1]])
    data = np.concatenate([r[1] for r in rows] + [np.zeros(1)])
    row_of = np.concatenate([np.full(len(r[0]), i) for i, r in enumerate(rows)] + [[0]])
    messy = sp.csr_matrix((data, (row_of, indices)), shape=X.shape)
    messy = sp.csr_matrix((messy.data, messy.indices, messy.indptr), shape=X.shape)
    other = SVC(kernel="linear", tol=1e-8).fit(messy, y)
    np.testing.assert_array_equal(other.support_, base.support_)
    np.testing.assert_allclose(other.coef_.toarray(), base.coef_.toarray(), atol=1e-10)


def test_sparse_precomputed_is_refused():
    with pytest.raises(TypeError, match="Sparse precomputed"):
        SVC(kernel="precomputed").fit(sp.csr_matrix(np.eye(2)), [0, 1])


@pytest.mark.parametrize("Estimator", [SVC, SVR])
def test_callable_kernel_on_strings(Estimator):
    data = ["A A", "A", "B", "B B", "A B"]
    X = np.array([[2, 0], [1, 0], [0, 1], [0, 2], [1, 1]], dtype=float)
    y = np.array([1, 1, 2, 2, 1])

    def string_kernel(A, B):
        assert isinstance(A[0], str)
        return np.array([[a.count("A") * b.count("A") + a.count("B") * b.count("B")
                          for b in B] for a in A], dtype=float)

    m1 = Estimator(kernel=string_kernel).fit(data, y)
    m2 = Estimator(kernel="linear").fit(X, y)
    np.testing.assert_array_equal(m1.support_, m2.support_)
    np.testing.assert_allclose(m1.predict(data), m2.predict(X))


def test_svr_infinite_C_equals_large_C():
    X, z = make_regression(80, 5, noise=1.0, random_state=0)
    a = SVR(C=np.inf, kernel="rbf", gamma=0.1).fit(X, z)
    b = SVR(C=1e10, kernel="rbf", gamma=0.1).fit(X, z)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-7)
    assert isinstance(a.n_iter_, int)


@pytest.mark.parametrize("Estimator", [SVC, SVR])
def test_negative_weights_drop_samples(Estimator):
    X, y = make_classification(60, 4, random_state=1)
    w = np.ones(60)
    w[:7] = -0.5
    w[7:10] = 0.0
    a = Estimator(kernel="linear", tol=1e-8).fit(X, y, sample_weight=w)
    b = Estimator(kernel="linear", tol=1e-8).fit(X[10:], y[10:])
    np.testing.assert_array_equal(a.support_, b.support_ + 10)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-8)
    with pytest.raises(ValueError, match="all samples have zero or negative weights"):
        Estimator(kernel="linear").fit(X, y, sample_weight=-np.ones(60))


def test_negative_weights_leaving_one_class():
    X, y = make_classification(30, 4, random_state=1)
    w = np.where(y == 0, -1.0, 1.0)
    with pytest.raises(ValueError, match="belong to the same class"):
        SVC().fit(X, y, sample_weight=w)


def test_probability_switched_on_after_fit():
    X, y = load_iris(return_X_y=True)
    m = SVC().fit(X, y)
    assert not hasattr(m, "predict_proba")
    m.probability = True
    assert hasattr(m, "predict_proba")
    with pytest.raises(NotFittedError, match="fitted with probability=False"):
        m.predict_proba(X)


def test_gamma_scale_underflow_raises():
    rng = np.random.RandomState(0)
    X = np.finfo(np.float64).max * rng.uniform(size=(10, 2))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match="gamma='scale'.*underflows"):
        SVC().fit(X, y)


def test_verbose_reports_each_solve(capsys):
    X, y = load_iris(return_X_y=True)
    SVC(verbose=True).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "#iter" in ln]
    assert len(lines) == 3  # one per pair of classes
    SVC().fit(X, y)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("model", [SVC(kernel="linear"), SVR(kernel="linear")])
def test_coef_is_read_only(model):
    X, y = load_iris(return_X_y=True)
    model.fit(X, y)
    with pytest.raises(AttributeError):
        model.coef_ = np.arange(3)
    with pytest.raises(ValueError):
        model.coef_[0, 0] = 0.0


@pytest.mark.parametrize("Estimator", [SVC, SVR])
def test_precomputed_callable_and_linear_take_the_same_steps(Estimator):
    """Issue 14 item 6: on iris (duplicate rows, so SMO meets exact ties) the built-in
    linear kernel, the precomputed X @ X.T and a callable returning it agree exactly."""
    X, y = load_iris(return_X_y=True)
    X, y = X[np.random.RandomState(42).permutation(150)], y[np.random.RandomState(42)
                                                            .permutation(150)]
    lin = Estimator(kernel="linear").fit(X, y)
    pre = Estimator(kernel="precomputed").fit(np.dot(X, X.T), y)
    fun = Estimator(kernel=lambda A, B: np.dot(A, B.T)).fit(X, y)
    for other in (pre, fun):
        np.testing.assert_array_equal(other.support_, lin.support_)
        np.testing.assert_array_equal(other.dual_coef_, lin.dual_coef_)
        np.testing.assert_array_equal(other.intercept_, lin.intercept_)
