"""The driver of the self-tuning kernel fit: the boxed quasi-Newton outer loop on closed
form objectives (its minimiser, its bounds, its flatness stop), and the stages of
``tune_kernel_svc`` (box, solve counts, weights)."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.model_selection import StratifiedKFold

from bisvm.selection.bilevel import Evaluation
from bisvm.selection.kernel_fit import (
    C_BOUNDS,
    GAMMA_RANGE,
    BoxedQuasiNewton,
    tune_kernel_svc,
)


class _Quadratic:
    """J(beta) = 1/2 (u - c)' A (u - c) + (u - c)'s on u = log beta, with a fixed standard
    error: the interface the outer loop uses (``evaluate_se``)."""

    def __init__(self, A, c, se=0.0, skew=0.0):
        self.A, self.c, self.se, self.skew = np.asarray(A, float), np.asarray(c, float), se, skew
        self.calls = 0

    def _J(self, u):
        r = u - self.c
        return 0.5 * r @ self.A @ r + self.skew * np.sum(r**4)

    def evaluate_se(self, beta, warm=None, tol=1e-5):
        self.calls += 1
        u = np.log(np.asarray(beta, float))
        r = u - self.c
        g_log = self.A @ r + 4 * self.skew * r**3
        return Evaluation(beta=np.asarray(beta, float), value=float(self._J(u)),
                          grad=g_log / beta, coefs=(np.ones(3),), lower_iterations=1,
                          lower_solves=2), self.se


def test_reaches_the_minimiser_inside_the_box():
    A = np.array([[3.0, 1.2], [1.2, 1.0]])
    obj = _Quadratic(A, [1.0, -0.5], skew=0.05)
    opt = BoxedQuasiNewton(np.full(2, -5.0), np.full(2, 5.0), max_iter=50, tol=1e-8,
                           se_fraction=0.0)
    res = opt.minimize(obj, 1.0)
    ref = minimize(obj._J, np.zeros(2), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(np.log(res.beta), ref.x, atol=1e-5)
    assert res.converged and res.value == pytest.approx(ref.fun, abs=1e-10)
    assert res.lower_solves == 2 * obj.calls
    assert [h.iteration for h in res.history] == list(range(len(res.history)))
    assert all(a.value >= b.value for a, b in zip(res.history, res.history[1:]))


def test_stops_at_the_bound():
    """Minimiser outside the box: the result is the box's minimiser (projected gradient
    zero), found as scipy's L-BFGS-B finds it."""
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    obj = _Quadratic(A, [4.0, -1.0])
    lo, hi = np.array([-3.0, -3.0]), np.array([1.5, 3.0])
    res = BoxedQuasiNewton(lo, hi, max_iter=60, tol=1e-8, se_fraction=0.0).minimize(obj, 1.0)
    ref = minimize(obj._J, np.zeros(2), method="L-BFGS-B", bounds=list(zip(lo, hi)),
                   options={"gtol": 1e-12, "ftol": 1e-15})
    u = np.log(res.beta)
    assert np.all(u >= lo - 1e-12) and np.all(u <= hi + 1e-12)
    np.testing.assert_allclose(u, ref.x, atol=1e-5)
    assert u[0] == pytest.approx(hi[0])


def test_start_outside_the_box_is_clipped():
    obj = _Quadratic(np.eye(2), [0.0, 0.0])
    res = BoxedQuasiNewton(np.array([1.0, -1.0]), np.array([2.0, 1.0]), max_iter=20,
                           se_fraction=0.0).minimize(obj, np.exp([5.0, 0.0]))
    assert np.log(res.history[0].beta)[0] == pytest.approx(2.0)
    assert np.log(res.beta)[0] == pytest.approx(1.0)


def test_flat_criterion_stops_after_one_step():
    """A gain below se_fraction standard errors ends the run at the new point."""
    obj = _Quadratic(np.eye(2) * 1e-3, [3.0, 3.0], se=1.0)
    res = BoxedQuasiNewton(np.full(2, -5.0), np.full(2, 5.0), max_iter=30, tol=1e-12,
                           se_fraction=0.1).minimize(obj, 1.0)
    assert res.n_iter == 1 and res.converged
    full = BoxedQuasiNewton(np.full(2, -5.0), np.full(2, 5.0), max_iter=30, tol=1e-12,
                            se_fraction=0.0).minimize(_Quadratic(np.eye(2) * 1e-3,
                                                                 [3.0, 3.0], se=1.0), 1.0)
    assert full.n_iter > 1 and full.value < res.value


def test_refuses_a_monitor():
    with pytest.raises(ValueError, match="monitor"):
        BoxedQuasiNewton(np.zeros(2), np.ones(2)).minimize(_Quadratic(np.eye(2), [0, 0]),
                                                           1.0, monitor=object())


def _interaction(n=150, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    return X, y


def test_tune_keeps_the_box_and_counts_its_solves():
    X, y = _interaction()
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    res = tune_kernel_svc(X, y, 2, splits, loss="scaled_squared_hinge")
    assert C_BOUNDS[0] <= res.C <= C_BOUNDS[1]
    assert GAMMA_RANGE[0] * res.gamma0 <= res.gamma[0] <= GAMMA_RANGE[1] * res.gamma0
    done = np.isfinite(res.scan_values)
    assert 2 <= done.sum() <= res.scan_values.size
    (hist,) = res.history
    assert res.n_solves == 3 * done.sum() + hist[-1].lower_solves
    assert res.value == pytest.approx(hist[-1].value)
    assert res.value <= np.nanmin(res.scan_values) + 1e-12


def test_tune_with_unit_weights_is_the_unweighted_tune():
    X, y = _interaction(n=120)
    splits = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, y))
    a = tune_kernel_svc(X, y, 2, splits, loss="scaled_squared_hinge")
    b = tune_kernel_svc(X, y, 2, splits, loss="scaled_squared_hinge",
                        row_weight=np.ones(y.size))
    assert a.C == pytest.approx(b.C, rel=1e-8)
    np.testing.assert_allclose(a.gamma, b.gamma, rtol=1e-8)


def test_progress_callback_sees_every_stage():
    X, y = _interaction(n=100, d=3)
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    seen = {}

    class Report:
        def __init__(self, stage):
            self.stage, self.n, self.closed = stage, 0, False
            seen[stage] = self

        def __call__(self, entry):
            self.n += 1

        def close(self):
            self.closed = True

    res = tune_kernel_svc(X, y, 2, splits, widths="per_feature", max_iter=3,
                          progress=Report, support_rule="none")
    assert set(seen) == {"shared width", "per-feature widths"}
    assert all(r.closed for r in seen.values())
    assert seen["shared width"].n == len(res.history[0])
    assert seen["per-feature widths"].n == len(res.history[1])
