"""The bilevel engine's four roles: declared interfaces checked once, swappable parts, the
ask-and-tell outer loop, and how far an estimator's fit is from a Newton step."""

import os
import sys

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar
from sklearn.datasets import load_breast_cancer, load_iris

import bisvm
from bisvm.selection.bilevel import BilevelObjective, Fold, make_hyper_model
from bisvm.selection.criteria import Criterion, make_criterion
from bisvm.selection.hypergradient import Hypergradient, ImplicitAdjoint
from bisvm.selection.model import LowerModel
from bisvm.selection.outer import BiSVMLBFGS, OuterOptimiser
from bisvm.solvers.primal import newton
from bisvm.solvers.primal.lbfgs import Accepted, lbfgs_iterations, minimize_lbfgs
from bisvm.solvers.primal.lower_level import LowerLevel, add_bias_column

PKG = os.path.dirname(bisvm.__file__)


def _depths(monkeypatch, fits):
    """For every call of damped_newton during ``fits()``, the number of calls from the
    estimator's ``fit`` to it, counting bisvm's own frames only."""
    depths = []
    original = newton.damped_newton

    def spy(*args, **kwargs):
        frame, calls, chain = sys._getframe(1), 1, ["damped_newton"]
        while frame is not None:
            code = frame.f_code
            if code.co_filename.startswith(PKG):
                if code.co_name == "fit" and os.sep + "estimators" + os.sep in code.co_filename:
                    depths.append((calls, tuple(chain)))
                    break
                calls += 1
                chain.append(code.co_name)
            frame = frame.f_back
        return original(*args, **kwargs)

    monkeypatch.setattr(newton, "damped_newton", spy)
    fits()
    return depths


def test_fit_reaches_newton_in_at_most_eight_calls(monkeypatch):
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((60, 150))
    yw = (Xw[:, 0] + 0.5 * rng.standard_normal(60) > 0).astype(int)
    Xi, yi = load_iris(return_X_y=True)

    def fits():
        # vector model with early stopping and the restricted refit; the wide scalar
        # model with its one-standard-error path; one-vs-rest
        bisvm.BilevelSVC(random_state=0).fit(X[:150], y[:150])
        bisvm.BilevelSVC(random_state=0).fit(Xw, yw)
        bisvm.BilevelSVC(random_state=0, max_iter=5).fit(Xi, yi)

    depths = _depths(monkeypatch, fits)
    assert len(depths) > 50
    deepest = max(depths)
    assert deepest[0] <= 8, " <- ".join(deepest[1])
    # every stage of the fit reaches the solver: scan, outer runs, monitor, refit
    stages = {c[-1] for _, c in depths}
    assert {"fit_staged"} <= stages
    names = {n for _, c in depths for n in c}
    assert {"scalar_scan", "minimize", "update", "one_se_scalar"} <= names


def _folds(n=80, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    Xa = add_bias_column(X)
    idx = rng.permutation(n)
    folds = []
    for k in range(2):
        va = idx[k::2]
        tr = np.setdiff1d(idx, va)
        folds.append(Fold(Xa[tr], y[tr], Xa[va], y[va]))
    return tuple(folds), d


def test_roles_are_checked_once_with_a_clear_error():
    folds, d = _folds()
    hyper = make_hyper_model("scalar", d)
    with pytest.raises(TypeError, match="LowerModel.*lacks.*solve"):
        BilevelObjective(folds, object(), hyper)
    with pytest.raises(TypeError, match="Hypergradient"):
        BilevelObjective(folds, LowerLevel(), hyper, hypergradient=object())
    assert isinstance(LowerLevel(), LowerModel)
    assert isinstance(ImplicitAdjoint(), Hypergradient)
    assert isinstance(BiSVMLBFGS(), OuterOptimiser)
    assert isinstance(make_criterion("squared", folds[0].X_val, folds[0].y_val), Criterion)


class _CountingAdjoint(ImplicitAdjoint):
    """A hypergradient role that delegates and counts: the engine must use the one given."""

    def __init__(self):
        object.__setattr__(self, "calls", [0])

    def gradient(self, *args, **kwargs):
        self.calls[0] += 1
        return super().gradient(*args, **kwargs)


def test_a_swapped_hypergradient_is_the_one_used():
    folds, d = _folds()
    hyper = make_hyper_model("vector", d)
    role = _CountingAdjoint()
    base = BilevelObjective(folds, LowerLevel(), hyper)
    swapped = BilevelObjective(folds, LowerLevel(), hyper, hypergradient=role)
    beta = np.full(hyper.n_hyper, 0.02)
    a, b = base.evaluate(beta), swapped.evaluate(beta)
    assert role.calls[0] == len(folds)
    np.testing.assert_array_equal(a.grad, b.grad)


def test_outer_optimiser_matches_a_scalar_search_by_scipy():
    """BiSVM L-BFGS on the scalar model finds the minimiser of J(beta) that scipy's
    bounded scalar search finds on the same objective (log scale)."""
    folds, d = _folds(n=120, d=5, seed=3)
    hyper = make_hyper_model("scalar", d)
    obj = BilevelObjective(folds, LowerLevel(), hyper)
    res = BiSVMLBFGS(tol=1e-7, ftol=0.0, max_iter=60).minimize(obj, 0.01)
    ref = minimize_scalar(lambda t: obj.value(np.array([np.exp(t)])), bounds=(-9, 0),
                          method="bounded", options={"xatol": 1e-6})
    assert res.value <= ref.fun + 1e-6
    assert abs(np.log(res.beta[0]) - ref.x) < 0.05


def _rosenbrock(x):
    f = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
    g = np.array([-400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0]), 200 * (x[1] - x[0] ** 2)])
    return f, g


def test_ask_and_tell_lbfgs_is_the_callback_lbfgs():
    seen = []
    res = minimize_lbfgs(_rosenbrock, np.array([-1.2, 1.0]), tol=1e-10, max_iter=500,
                         callback=lambda k, x, f, g: seen.append(x.copy()) and False)
    steps = lbfgs_iterations(np.array([-1.2, 1.0]), tol=1e-10, max_iter=500)
    told, request = [], next(steps)
    try:
        while True:
            if isinstance(request, Accepted):
                told.append(request.x.copy())
                request = steps.send(False)
            else:
                request = steps.send(_rosenbrock(request))
    except StopIteration as stop:
        res2 = stop.value
    np.testing.assert_array_equal(res.coef, res2.coef)
    assert len(seen) == len(told) and all(np.array_equal(a, b) for a, b in zip(seen, told))
    ref = minimize(lambda x: _rosenbrock(x), np.array([-1.2, 1.0]), jac=True,
                   method="BFGS", tol=1e-12)
    np.testing.assert_allclose(res.coef, ref.x, atol=1e-6)


def test_ask_and_tell_stops_when_told():
    steps = lbfgs_iterations(np.array([-1.2, 1.0]), tol=1e-12)
    request, k = next(steps), 0
    try:
        while True:
            if isinstance(request, Accepted):
                k = request.k
                request = steps.send(request.k == 3)
            else:
                request = steps.send(_rosenbrock(request))
    except StopIteration as stop:
        res = stop.value
    assert k == 3 and res.n_iter == 3 and res.converged
