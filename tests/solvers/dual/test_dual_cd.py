"""Dual coordinate descent (LIBLINEAR's algorithm) against independent references:
scikit-learn's LIBLINEAR, the primal finite Newton method, and the KKT conditions."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC as SkLinearSVC

from bisvm.losses import Hinge, SquaredHinge
from bisvm.solvers.dual.dual_cd import solve_dual_cd, svm_primal_objective
from bisvm.solvers.primal.finite_newton import solve_finite_newton
from bisvm.solvers.problems import LinearProblem

_LOSSES = {"hinge": Hinge(), "squared_hinge": SquaredHinge()}


def _dcd(X, y, *, C=1.0, loss="squared_hinge", sample_weight=None, bias=0.0, **kw):
    """``solve_dual_cd`` on the LinearProblem with costs ``C · sample_weight``."""
    cost = C * (np.ones(X.shape[0]) if sample_weight is None else sample_weight)
    loss = _LOSSES.get(loss, loss)
    return solve_dual_cd(LinearProblem(X, y, loss, cost, bias=bias), **kw)


def _w(r):
    """``w`` with the intercept feature's weight last (bias 1)."""
    return np.r_[r.coef, r.intercept]


def _data(n=600, d=15, seed=0, sparse=False):
    X, y = make_classification(n, d, n_informative=5, random_state=seed)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    return X, 2.0 * y - 1.0


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_matches_liblinear_objective(loss, sparse):
    X, y = _data(sparse=sparse)
    r = _dcd(X, y, C=0.7, loss=loss, bias=1.0, tol=1e-8, max_iter=50000)
    assert r.converged
    sk = SkLinearSVC(C=0.7, loss=loss, dual=True, tol=1e-8, max_iter=50000,
                     random_state=0).fit(X, (y > 0).astype(int))
    w_sk = np.r_[sk.coef_.ravel(), sk.intercept_]
    f_sk = svm_primal_objective(X, y, w_sk, np.full(len(y), 0.7), loss, 1.0)
    assert r.objective == pytest.approx(f_sk, rel=1e-6)
    # weak duality gap closes: primal(w) - (-dual(α)) -> 0
    assert r.objective + r.dual_objective == pytest.approx(0.0, abs=1e-4 * r.objective)


def test_dense_and_sparse_give_the_same_solution():
    X, y = _data(sparse=True)
    a = _dcd(X, y, C=1.0, loss="hinge", bias=1.0, tol=1e-9, max_iter=50000)
    b = _dcd(X.toarray(), y, C=1.0, loss="hinge", bias=1.0, tol=1e-9, max_iter=50000)
    assert a.objective == pytest.approx(b.objective, rel=1e-9)


def test_squared_hinge_dual_equals_finite_newton_primal():
    X, y = _data()
    cost = np.random.default_rng(0).uniform(0.2, 2.0, size=len(y))
    r = _dcd(X, y, C=1.0, sample_weight=cost, loss="squared_hinge", bias=1.0,
             tol=1e-10, max_iter=100000)
    p = solve_finite_newton(LinearProblem(np.c_[X, np.ones(len(y))], y, SquaredHinge(), cost,
                                          quadratic=1.0))
    np.testing.assert_allclose(_w(r), p.coef, atol=1e-6)
    assert r.objective == pytest.approx(p.objective, rel=1e-10)


def test_kkt_conditions_of_the_hinge_dual():
    X, y = _data(n=300)
    C = 0.5
    r = _dcd(X, y, C=C, loss="hinge", bias=0.0, tol=1e-10, max_iter=100000)
    a, w = r.dual_coef, r.coef
    np.testing.assert_allclose(w, X.T @ (a * y), atol=1e-10)  # w = Σ α_i y_i x_i
    G = y * (X @ w) - 1.0  # dual gradient
    assert np.all(a >= 0) and np.all(a <= C)
    assert np.all(G[a < 1e-12] >= -1e-6)
    assert np.all(G[a > C - 1e-12] <= 1e-6)
    free = (a > 1e-12) & (a < C - 1e-12)
    assert np.all(np.abs(G[free]) <= 1e-6)


def test_shrinking_does_not_change_the_solution_and_warm_start_helps():
    X, y = _data()
    a = _dcd(X, y, loss="hinge", bias=1.0, tol=1e-8, max_iter=50000)
    b = _dcd(X, y, loss="hinge", bias=1.0, tol=1e-8, max_iter=50000, shrinking=False)
    assert a.objective == pytest.approx(b.objective, rel=1e-7)
    c = _dcd(X, y, loss="hinge", bias=1.0, tol=1e-8, max_iter=50000, alpha0=a.dual_coef)
    assert c.n_iter <= 3


def test_zero_weight_samples_are_ignored():
    X, y = _data(n=200)
    sw = np.ones(len(y))
    sw[:50] = 0.0
    a = _dcd(X, y, sample_weight=sw, bias=1.0, tol=1e-10, max_iter=100000)
    b = _dcd(X[50:], y[50:], bias=1.0, tol=1e-10, max_iter=100000)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-7)
    assert np.all(a.dual_coef[:50] == 0)


def test_cap_warns_and_bad_input_is_rejected():
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match="max_iter=2.*relative duality gap"):
        r = _dcd(X, y, tol=1e-12, max_iter=2, primal_fallback=False)
    assert not r.converged and r.n_iter == 2
    with pytest.raises(ValueError, match="loss"):
        _dcd(X, y, loss="log")
    with pytest.raises(ValueError, match="cost"):
        _dcd(X, y, C=np.nan)
    with pytest.raises(ValueError, match="-1/\\+1"):
        _dcd(X, (y > 0).astype(float))
    with pytest.raises(ValueError, match="cost"):
        _dcd(X, y, sample_weight=-np.ones(len(y)))


def test_csr_with_duplicate_entries_equals_dense():
    X = sp.csr_matrix((np.r_[1.0, 2.0, 3.0, 1.0], np.r_[0, 0, 1, 1], np.r_[0, 2, 3, 4]),
                      shape=(3, 2))
    assert not X.has_canonical_format
    y = np.r_[1.0, -1.0, 1.0]
    a = _dcd(X, y, tol=1e-10, max_iter=10000)
    b = _dcd(X.toarray(), y, tol=1e-10, max_iter=10000)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-9)
    assert not X.has_canonical_format  # the caller's matrix is left as it was


def test_row_norms_of_sorted_unsorted_and_repeated_csr_rows():
    from bisvm.solvers.dual.dual_cd import LinearDesign
    X = sp.random(200, 40, density=0.2, format="csr", random_state=3)
    want = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    np.testing.assert_allclose(LinearDesign(X).sqnorm, want, rtol=1e-13)
    # the same rows with their entries in reverse order (unsorted, no repeated column)
    rev = sp.csr_matrix((np.concatenate([X.data[a:b][::-1] for a, b in
                                         zip(X.indptr[:-1], X.indptr[1:], strict=True)]),
                         np.concatenate([X.indices[a:b][::-1] for a, b in
                                         zip(X.indptr[:-1], X.indptr[1:], strict=True)]),
                         X.indptr), shape=X.shape)
    np.testing.assert_allclose(LinearDesign(rev).sqnorm, want, rtol=1e-13)
    # every row twice over (each column repeated): the entries add up, as scipy reads them
    spans = list(zip(X.indptr[:-1], X.indptr[1:], strict=True))
    twice = sp.csr_matrix((np.concatenate([np.tile(X.data[a:b], 2) for a, b in spans]),
                           np.concatenate([np.tile(X.indices[a:b], 2) for a, b in spans]),
                           2 * X.indptr), shape=X.shape)
    assert twice.nnz == 2 * X.nnz
    np.testing.assert_allclose(LinearDesign(twice).sqnorm, 4 * want, rtol=1e-13)
    np.testing.assert_allclose(LinearDesign(twice).sqnorm,
                               (twice.toarray() ** 2).sum(axis=1), rtol=1e-13)
