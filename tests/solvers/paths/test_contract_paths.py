"""The solver contract on the two regularisation paths: ``result_at(lam)`` is
a frozen SolverResult with certificate ``"path_vertex"`` whose coefficients are the path's
solution there, on small problems (n = 30, d = 5, seed 0)."""

import numpy as np
import pytest
from contract import check_contract

from bisvm.solvers.paths.base import PathResult
from bisvm.solvers.paths.l1_hinge import l1_svm_objective, l1_svm_path
from bisvm.solvers.paths.rz_path import l1_sqhinge_objective, l1_sqhinge_path

N, D = 30, 5


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D))
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(size=N) > 0, 1, 0)
    return X, y


def _lams(P):
    """Breakpoints, midpoints between them and the end of the path."""
    bp = P.breakpoints[P.breakpoints > P.lambda_min]
    return np.r_[bp, 0.5 * (bp[:-1] + bp[1:]), P.lambda_min]


def test_l1_svm_path():
    X, y = _data()
    t = np.where(y == 1, 1.0, -1.0)
    P = l1_svm_path(X, y)
    assert isinstance(P, PathResult)
    assert P.n_pivots == P.n_events and len(P.events) == P.breakpoints.size
    for lam in _lams(P):
        res = P.result_at(lam)
        check_contract(res, certificate="path_vertex", tol=0.0, active_set=True)
        coef, b = P.solution(lam)
        np.testing.assert_array_equal(res.coef, coef)
        assert res.intercept == b
        assert res.objective == pytest.approx(l1_svm_objective(X, t, coef, b, lam),
                                              rel=1e-9, abs=1e-9)
        assert np.array_equal(res.active_set, np.flatnonzero(coef))


@pytest.mark.parametrize("kernel", [None, "rbf"])
def test_l1_sqhinge_path(kernel):
    X, y = _data()
    P = l1_sqhinge_path(X, y, kernel=kernel, lambda_min_ratio=1e-2)
    assert isinstance(P, PathResult)
    assert len(P.events) == P.breakpoints.size
    for lam in _lams(P):
        res = P.result_at(lam)
        check_contract(res, certificate="path_vertex", tol=0.0, active_set=True)
        coef, b = P.solution(lam)
        np.testing.assert_array_equal(res.coef, coef)
        assert res.intercept == b and res.stats["lam"] == lam
    # the contract view at a breakpoint is the stored vertex, whose objective the data give
    k = P.breakpoints.size // 2
    res = P.result_at(P.breakpoints[k])
    np.testing.assert_allclose(res.coef, P.coefs[k], atol=1e-12)
    if kernel is None:
        f = l1_sqhinge_objective(X, np.where(y == 1, 1.0, -1.0), res.coef, res.intercept,
                                 P.breakpoints[k])
        assert np.isfinite(f)
