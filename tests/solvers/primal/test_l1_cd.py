"""Coordinate descent with Newton steps for the L1-regularised squared-hinge SVM
(``solvers/primal/l1_cd.py``) against scipy's L-BFGS-B on the split problem and
scikit-learn's LIBLINEAR (``LinearSVC(penalty="l1", dual=False)``), its optimality
conditions, warm starts, shrinking and its one column copy."""

import numpy as np
import pytest
import scipy.sparse as sp
from contract import check_contract
from sklearn.svm import LinearSVC

from bisvm.losses import Hinge, SquaredHinge
from bisvm.solvers.primal.l1_cd import column_copy_bytes, solve_l1_cd
from bisvm.solvers.primal.l1_linear import solve_l1_squared_hinge
from bisvm.solvers.problems import LinearProblem


def _data(n=300, d=40, seed=0, sparse=True):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, format="csr", random_state=seed,
                  data_rvs=rng.standard_normal)
    y = np.where(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return (X if sparse else X.toarray()), y


def _objective(X, y, coef, intercept, cost, bias):
    w = np.r_[coef, intercept / bias] if bias > 0 else coef
    r = np.maximum(0.0, 1.0 - y * (X @ coef + intercept))
    return np.abs(w).sum() + cost @ (r * r)


@pytest.mark.parametrize("bias", [0.0, 1.0, 3.0])
@pytest.mark.parametrize("sparse", [True, False])
def test_optimum_matches_lbfgsb_and_liblinear(bias, sparse):
    X, y = _data(sparse=sparse)
    cost = np.full(len(y), 0.5)
    P = LinearProblem(X, y, SquaredHinge(), cost, bias=bias)
    res = solve_l1_cd(P, tol=1e-9, max_iter=20000)
    check_contract(res, certificate="kkt_violation", active_set="coef")
    assert res.converged and res.coef.shape == (X.shape[1],)
    ours = _objective(X, y, res.coef, res.intercept, cost, bias)
    assert res.objective == pytest.approx(ours, rel=1e-10)
    lb = solve_l1_squared_hinge(P, tol=1e-10, max_iter=20000)
    assert ours <= lb.objective * (1 + 1e-9) and ours == pytest.approx(lb.objective, rel=1e-6)
    ref = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=0.5, tol=1e-10,
                    max_iter=100000, fit_intercept=bias > 0,
                    intercept_scaling=bias if bias > 0 else 1.0).fit(X, y)
    theirs = _objective(X, y, ref.coef_.ravel(), ref.intercept_[0] if bias > 0 else 0.0,
                        cost, bias)
    assert ours <= theirs * (1 + 1e-9) and ours == pytest.approx(theirs, rel=1e-6)


def test_optimality_conditions_with_per_sample_costs():
    X, y = _data(n=400, d=30, seed=1)
    cost = np.random.default_rng(1).uniform(0.1, 2.0, len(y))
    res = solve_l1_cd(LinearProblem(X, y, SquaredHinge(), cost, bias=1.0), tol=1e-10,
                      max_iter=20000)
    w = np.r_[res.coef, res.intercept]
    Xa = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
    g = -2.0 * Xa.T @ (cost * y * np.maximum(0.0, 1.0 - y * (Xa @ w)))
    nz = w != 0
    np.testing.assert_allclose(g[nz] + np.sign(w[nz]), 0.0, atol=1e-5)
    assert np.all(np.abs(g[~nz]) <= 1.0 + 1e-5)
    assert 0 < nz.sum() < w.size  # a sparse solution, not a trivial one


def test_warm_start_shrinking_and_seed():
    X, y = _data(seed=2)
    P = LinearProblem(X, y, SquaredHinge(), np.ones(len(y)), bias=1.0)
    res = solve_l1_cd(P, tol=1e-9, max_iter=20000, random_state=3)
    again = solve_l1_cd(P, tol=1e-9, max_iter=20000, random_state=3)
    np.testing.assert_array_equal(res.coef, again.coef)
    plain = solve_l1_cd(P, tol=1e-9, max_iter=20000, shrinking=False)
    assert plain.objective == pytest.approx(res.objective, rel=1e-8)
    warm = solve_l1_cd(P, w0=np.r_[res.coef, res.intercept], tol=1e-6)
    assert warm.converged and warm.n_iter <= 2
    assert warm.objective <= res.objective * (1 + 1e-12)


def test_one_column_copy_is_counted():
    X, y = _data()
    res = solve_l1_cd(LinearProblem(X, y, SquaredHinge(), np.ones(len(y))), tol=1e-3)
    assert res.stats["column_copy_bytes"] == column_copy_bytes(X)
    assert res.stats["relative_violation"] <= 1e-3


def test_bad_input_is_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="SquaredHinge"):
        solve_l1_cd(LinearProblem(X, y, Hinge(), np.ones(len(y))))
    with pytest.raises(ValueError, match="labels"):
        solve_l1_cd(LinearProblem(X, 2 * y, SquaredHinge(), np.ones(len(y))))
    with pytest.raises(ValueError, match="cost"):
        solve_l1_cd(LinearProblem(X, y, SquaredHinge(), -np.ones(len(y))))
    with pytest.raises(TypeError, match="random_state"):
        solve_l1_cd(LinearProblem(X, y, SquaredHinge(), np.ones(len(y))), random_state=None)
    with pytest.raises(ValueError, match="w0"):
        solve_l1_cd(LinearProblem(X, y, SquaredHinge(), np.ones(len(y))), w0=np.zeros(3))


def test_verbose_shows_progress_on_stderr(capsys):
    X, y = _data()
    solve_l1_cd(LinearProblem(X, y, SquaredHinge(), np.ones(len(y))), tol=1e-3, verbose=1)
    captured = capsys.readouterr()
    assert "L1 coordinate descent" in captured.err and "objective" in captured.err
    assert captured.out == ""
