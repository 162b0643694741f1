"""The solver contract on the selective family (Angulo Yauri 2020): Algorithm A
(:func:`solve_dual_newton`, its primal fallback) and Algorithm B
(:func:`solve_selectivity_path`) return frozen results with the duality-gap certificate,
the dual λ, the warm-startable partition and the Newton factor of the final face."""

import inspect
import warnings

import numpy as np
import pytest
from contract import check_contract

from bisvm.solvers.base import ActivePartition, ConvergenceWarning, SelectivityPath
from bisvm.solvers.selective import (
    SelectiveNewtonFactor,
    SelectiveProblem,
    selectivity_max,
    solve_dual_newton,
    solve_selectivity_path,
)

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _problem(loss, fit_intercept, frac, N=30, n=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n))
    y = X @ np.r_[2.0, -1.0, np.zeros(n - 2)] + 0.5 * rng.normal(size=N) + 1.0
    if loss == "logistic":
        y = np.where(y > 1.0, 1.0, -1.0)
    mu = frac * selectivity_max(X, y, loss, 0.5, None, fit_intercept)[0]
    return SelectiveProblem(X, y, loss, 0.5, mu, None, fit_intercept)


def _check(P, res):
    """The contract plus the fields this family documents."""
    W = res.dual_objective
    check_contract(res, certificate="duality_gap", tol=1e-9, scale=max(1.0, abs(W)),
                   dual=True, record_matches=False)
    N, n = P.X.shape
    # the certificate is the duality gap J/(2 gamma) + W of the returned pair
    gap = P.duality_gap(res.dual_coef, res.coef, res.intercept)
    assert res.certificate_value == pytest.approx(abs(gap), rel=1e-12, abs=1e-15)
    assert res.objective == P.primal_value(res.coef, res.intercept)
    assert W == P.dual_value(res.dual_coef)
    assert res.dual_coef.shape == (N,)
    # active_set indexes the features (coef), not the objects of dual_coef
    np.testing.assert_array_equal(res.active_set, np.flatnonzero(res.coef))
    assert np.issubdtype(res.active_set.dtype, np.integer)
    assert isinstance(res.intercept, float)
    if not P.fit_intercept:
        assert res.intercept == 0.0
    part = res.partition
    assert isinstance(part, ActivePartition)
    for a in (part.free, part.kink, part.kink_sign):
        assert a.shape == (n,)
    assert part.free.dtype == bool and part.kink.dtype == bool
    assert not np.any(part.free & part.kink)
    assert np.all(part.kink_sign[~part.kink] == 0)
    assert set(res.stats) == {"cycled", "trace", "fallback_sweeps"}
    # the record: W at the start and after each step, the relative step of (50)
    rec = res.record
    assert np.isnan(rec.grad_norm[0]) and np.all(rec.grad_norm[1:] >= 0)
    if res.stats["fallback_sweeps"] is None:
        assert rec.objective[-1] == W
        assert len(rec.objective) == len(res.stats["trace"]) + 1
    return res


@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_dual_newton_keeps_the_contract(loss, fit_intercept):
    P = _problem(loss, fit_intercept, 0.3)
    res = _check(P, solve_dual_newton(P))
    assert res.converged and res.method == "dual_newton"
    # the factor of the final face, reusable by the leave-one-out criteria
    assert isinstance(res.factor, SelectiveNewtonFactor)
    np.testing.assert_array_equal(res.factor.free_index, np.flatnonzero(res.partition.free))
    # warm start from the result's own dual and partition: one confirming step
    again = solve_dual_newton(P, alpha0=res.dual_coef, partition0=res.partition)
    assert again.converged and again.n_iter <= 2
    np.testing.assert_allclose(again.coef, res.coef, atol=1e-10)


def test_fallback_result_keeps_the_contract():
    P = _problem("squared", True, 0.05, N=25, n=40, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = _check(P, solve_dual_newton(P, max_iter=1, fallback=5000))
    assert res.stats["fallback_sweeps"] is not None and res.factor is None


def test_selectivity_path_keeps_the_contract():
    P = _problem("logistic", True, 1.0)
    path = solve_selectivity_path(P.X, P.y, "logistic", P.ridge, n_mu=5, fit_intercept=True)
    assert isinstance(path, SelectivityPath)
    mus, results, mu_max = path  # still unpacks as a tuple
    assert mus is path.selectivities and mu_max == path.selectivity_max
    assert len(results) == 5
    for mu, res in zip(mus, results):
        _check(P.with_selectivity(mu), res)
        assert res.factor is None  # N x N factors are not kept along the path


def test_warm_start_keywords():
    params = inspect.signature(solve_dual_newton).parameters
    for name in ("alpha0", "partition0", "w0", "intercept0"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
    assert not {"lam0", "sets0", "primal0"} & set(params)
    P = _problem("squared", False, 0.3)
    res = solve_dual_newton(P)
    with pytest.raises(TypeError, match="ActivePartition"):
        solve_dual_newton(P, partition0=(res.partition.free, res.partition.kink,
                                         res.partition.kink_sign))
    with pytest.raises(ValueError, match="alpha0"):
        solve_dual_newton(P, alpha0=np.zeros(3))
