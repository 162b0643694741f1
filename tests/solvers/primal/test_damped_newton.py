"""The one damped Newton loop (solvers/primal/newton.damped_newton) and its wrappers: Platt
scaling over it gives the same bits as a plain hand-written Newton loop with Armijo
backtracking, and the loop's options do what they say."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from bisvm.estimators._calibration import fit_platt
from bisvm.solvers.primal.newton import damped_newton, minimize_newton


def _platt_reference(dec, labels, weights=None):
    """Platt's fit (Lin, Lin & Weng 2007) as a plain Newton loop with Armijo backtracking,
    written out independently of ``damped_newton``."""
    dec = np.asarray(dec, dtype=float)
    w = np.ones(dec.size) if weights is None else np.asarray(weights, float)
    w = w * (dec.size / w.sum())
    n_pos = float(np.sum(w[labels == 1]))
    n_neg = float(np.sum(w[labels != 1]))
    t = np.where(labels == 1, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))

    def fval(A, B):
        z = dec * A + B
        v = np.where(z >= 0, t * z + np.log1p(np.exp(-z)), (t - 1) * z + np.log1p(np.exp(z)))
        return float(w @ v)

    f = fval(A, B)
    sigma = 1e-12
    for _ in range(100):
        z = dec * A + B
        ez = np.exp(-np.abs(z))
        p = np.where(z >= 0, ez / (1.0 + ez), 1.0 / (1.0 + ez))
        d2 = w * p * (1.0 - p)
        h11 = sigma + float(np.sum(dec * dec * d2))
        h22 = sigma + float(np.sum(d2))
        h21 = float(np.sum(dec * d2))
        d1 = w * (t - p)
        g1 = float(np.sum(dec * d1))
        g2 = float(np.sum(d1))
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            nA, nB = A + step * dA, B + step * dB
            nf = fval(nA, nB)
            if nf < f + 1e-4 * step * gd:
                A, B, f = nA, nB, nf
                break
            step *= 0.5
        else:
            break
    return A, B


def _cases():
    rng = np.random.default_rng(0)
    X, y = load_iris(return_X_y=True)
    for a, b in ((0, 1), (0, 2), (1, 2)):  # one-vs-one decision values of a linear score
        keep = (y == a) | (y == b)
        w = rng.normal(size=4)
        yield X[keep] @ w - np.median(X[keep] @ w), (y[keep] == a).astype(int), None
    for k in range(12):
        n = int(rng.integers(5, 200))
        dec = rng.normal(scale=10.0 ** rng.uniform(-2, 2), size=n)
        labels = (rng.uniform(size=n) < 1 / (1 + np.exp(-3 * dec))).astype(int)
        if k % 3 == 0:
            labels = (dec > 0).astype(int)  # separable: the sigmoid steepens to the cap
        weights = rng.uniform(0.1, 3.0, size=n) if k % 2 else None
        yield dec, labels, weights


@pytest.mark.parametrize("case", list(range(15)))
def test_fit_platt_equals_a_plain_newton_loop_bit_for_bit(case):
    dec, labels, weights = list(_cases())[case]
    A, B = fit_platt(dec, labels, weights)
    A0, B0 = _platt_reference(dec, labels, weights)
    assert (A, B) == (A0, B0)


def test_svc_predict_proba_on_iris_is_normalised_and_accurate():
    from bisvm import SVC

    X, y = load_iris(return_X_y=True)
    m = SVC(probability=True, random_state=0).fit(X, y)
    assert np.all(np.isfinite(m.probA_)) and np.all(m.probA_ < 0)
    proba = m.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.mean(proba.argmax(1) == y) >= 0.9


def _quadratic(H, b):
    def evaluate(x):
        return 0.5 * x @ H @ x - b @ x, H @ x - b, None
    return evaluate


def test_damped_newton_solves_a_quadratic_in_one_step_and_counts():
    rng = np.random.default_rng(1)
    M = rng.normal(size=(6, 6))
    H, b = M @ M.T + np.eye(6), rng.normal(size=6)
    run = damped_newton(_quadratic(H, b), lambda x, g, _: -np.linalg.solve(H, g),
                        np.zeros(6), tol=1e-10)
    assert run.converged and run.n_iter == 1 and run.n_evals == 2
    np.testing.assert_allclose(run.x, np.linalg.solve(H, b), rtol=1e-10)
    res = run.result(method="test")
    assert res.certificate == "gradient_norm" and res.certificate_value <= 1e-10
    assert len(res.record.objective) == 2


def test_damped_newton_falls_back_to_steepest_descent_and_stops_on_the_cap():
    H, b = np.diag([1.0, 10.0]), np.array([1.0, 1.0])
    ascent = lambda x, g, _: g  # noqa: E731  (not a descent direction)
    run = damped_newton(_quadratic(H, b), ascent, np.zeros(2), tol=1e-12, max_iter=3,
                        warn=False)
    assert run.n_iter == 3 and not run.converged
    assert run.f < 0.0  # it descended along -g
    with pytest.warns(Warning, match="max_iter=3"):
        damped_newton(_quadratic(H, b), ascent, np.zeros(2), tol=1e-12, max_iter=3)
    stuck = damped_newton(_quadratic(H, b), ascent, np.zeros(2), tol=1e-12, max_iter=3,
                          steepest_fallback=False, max_ls=5)
    assert stuck.n_iter == 0 and stuck.n_evals == 6  # no step passes: it stops at once


def test_minimize_newton_matches_the_closed_form():
    rng = np.random.default_rng(2)
    M = rng.normal(size=(4, 4))
    H, b = M @ M.T + np.eye(4), rng.normal(size=4)
    r = minimize_newton(lambda x: (0.5 * x @ H @ x - b @ x, H @ x - b), lambda x: H,
                        np.ones(4), tol=1e-12)
    assert r.converged
    np.testing.assert_allclose(r.coef, np.linalg.solve(H, b), rtol=1e-10)


# ---------------------------------------------------------------------------------------
# stopping coefficients at zero (the line search's path for the Pseudo-Huber L1 term)
# ---------------------------------------------------------------------------------------

def test_stop_at_zero_stops_only_groups_that_cross_zero_from_outside_gamma():
    from bisvm.penalties import GroupPseudoHuber

    gamma = 0.01
    vec = GroupPseudoHuber(np.ones(5), np.array([0, 1, 2, 3, 4, -1]), gamma)
    w = np.array([0.5, -0.5, 0.005, 0.5, 0.02, 3.0])
    v = np.array([-0.1, 0.2, -0.004, 0.4, -0.01, -3.0])
    # 0 crosses from outside gamma; 1 too; 2 crosses inside gamma (kept); 3 keeps its
    # sign; 4 crosses from 2 gamma; the unpenalised last coordinate is never stopped
    np.testing.assert_array_equal(vec.stop_at_zero(w, v),
                                  [0.0, 0.0, -0.004, 0.4, 0.0, -3.0])
    grp = GroupPseudoHuber(np.ones(2), np.array([0, 0, 1, 1, -1]), gamma)
    w = np.array([0.3, 0.4, 0.3, 0.4, 1.0])
    v = np.array([-0.3, -0.1, -0.4, 0.3, -1.0])  # group 0 passes the origin, 1 rotates
    np.testing.assert_array_equal(grp.stop_at_zero(w, v), [0, 0, -0.4, 0.3, -1.0])
    # nothing crosses: the trial point is the ray's
    w = np.array([0.5, -0.5, 0.005, 0.5, 0.02, 3.0])
    np.testing.assert_array_equal(vec.stop_at_zero(w, 0.5 * w), 0.5 * w)


@pytest.mark.parametrize("shape,groups", [((60, 20), None), ((30, 80), None),
                                          ((60, 20), np.repeat(np.arange(5), 4))])
def test_newton_stopping_at_zero_reaches_scipy_optimum(shape, groups):
    """Newton with the bent path solves a small-γ elastic net to the optimum that
    scipy's L-BFGS-B finds, and takes no more steps than along the plain ray."""
    from scipy.optimize import minimize

    from bisvm.losses import Squared
    from bisvm.penalties import L2, GroupPseudoHuber, SumPenalty
    from bisvm.solvers.primal.newton import newton_loop
    from bisvm.solvers.primal.wide import woodbury_system
    from bisvm.solvers.problems import SmoothProblem

    rng = np.random.default_rng(0)
    n, d = shape
    X = rng.normal(size=(n, d))
    y = X[:, :4] @ np.array([2.0, -1.5, 1.0, 0.5]) + 0.5 * rng.normal(size=n)
    Xa = np.column_stack([X, np.ones(n)])
    g = np.arange(d) if groups is None else groups
    g = np.append(g, -1)
    k = int(g.max()) + 1
    pen = SumPenalty((L2(0.01, np.append(np.ones(d, bool), False)),
                      GroupPseudoHuber(np.full(k, 0.1), g, 1e-3)))
    P = SmoothProblem(Xa, y, Squared(), pen)
    system = woodbury_system if d > n else None
    kw = {} if system is None else {"system": system}
    bent = newton_loop(P, tol=1e-9, max_iter=200, **kw)
    ray = newton_loop(_RayProblem(P), tol=1e-9, max_iter=200, **kw)
    ref = minimize(lambda w: P.value_and_gradient(w), np.zeros(d + 1), jac=True,
                   method="L-BFGS-B", options={"gtol": 1e-10, "ftol": 1e-15,
                                               "maxiter": 20000, "maxcor": 30})
    assert bent.converged and ray.converged
    assert P.value(bent.coef) <= ref.fun + 1e-9
    np.testing.assert_allclose(bent.coef, ray.coef, atol=1e-7)
    assert bent.n_iter <= ray.n_iter


class _RayProblem:
    """A problem whose line search runs along the plain ray (no stopping at zero)."""

    def __init__(self, problem):
        self._p = problem

    def __getattr__(self, name):
        return getattr(self._p, name)

    def trial_point(self, w, p, a):
        return w + a * p
