"""The shared solver plumbing, each piece against an independent reference:
line searches (the conditions they promise, scipy's strong-Wolfe search), the shifted
Cholesky factor (scipy on the shifted matrix), the iteration record, the argument checks,
the losses' dual boxes (LIBLINEAR's table) and derivatives (finite differences)."""

import dataclasses

import numpy as np
import pytest
from scipy.linalg import cho_solve
from scipy.optimize import line_search as scipy_line_search

from bisvm import losses
from bisvm.solvers._linalg import DenseFactor, LazyFactor, cholesky_solve, shifted_cho_factor
from bisvm.solvers._linesearch import armijo, backtracking, line_search, wolfe_search
from bisvm.solvers._record import (
    IterationLog,
    check_positive_int,
    check_real,
    check_tol_max_iter,
)
from bisvm.solvers.base import CERTIFICATES, SolverResult


def _rosen(x):
    f = 100.0 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
    g = np.array([-400.0 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0]),
                  200.0 * (x[1] - x[0] ** 2)])
    return f, g


FUNCS = {
    "rosenbrock": _rosen,
    "quadratic": lambda x: (0.5 * float(x @ np.diag([1.0, 50.0]) @ x),
                            np.diag([1.0, 50.0]) @ x),
    "logsumexp": lambda x: (float(np.logaddexp.reduce(np.r_[x, -x.sum()])),
                            np.exp(x - np.logaddexp.reduce(np.r_[x, -x.sum()]))
                            - np.exp(-x.sum() - np.logaddexp.reduce(np.r_[x, -x.sum()]))),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_wolfe_line_search_meets_the_strong_wolfe_conditions(name):
    fg = FUNCS[name]
    x = np.array([-1.2, 1.0])
    f, g = fg(x)
    p = -g
    a, f_new, x_new, g_new, ev = line_search(fg, x, f, g, p, 1.0, c1=1e-4, c2=0.9)
    assert a is not None and ev >= 1
    assert f_new <= f + 1e-4 * a * float(g @ p)
    assert abs(float(g_new @ p)) <= 0.9 * abs(float(g @ p))
    np.testing.assert_allclose(x_new, x + a * p)
    # scipy's strong-Wolfe search accepts a step on the same conditions
    ref = scipy_line_search(lambda z: fg(z)[0], lambda z: fg(z)[1], x, p, gfk=g, old_fval=f,
                            c1=1e-4, c2=0.9)
    assert ref[0] is not None


def test_wolfe_search_returns_none_on_an_ascent_direction():
    phi = lambda a: (a * a + a, 2 * a + 1, None)  # noqa: E731  f' (0) = 1 > 0
    a, f, pay, ev = wolfe_search(phi, 0.0, 1.0, 1.0, 1e-4, 0.9, 10)
    assert a is None and ev == 10


def test_armijo_takes_the_first_sufficient_decrease_and_its_variants():
    phi = lambda a: ((a - 0.3) ** 2 - 0.09, a)  # noqa: E731  f0 = 0, f'(0) = -0.6
    a, out, k = armijo(phi, 0.0, -0.6, c1=0.5, rho=0.5)
    # 1.0 and 0.5 fail f(a) <= -0.3 a, 0.25 passes: halvings counted exactly
    assert a == 0.25 and k == 3 and out == phi(0.25)
    assert armijo(phi, 0.0, -0.6, c1=0.5, max_ls=2)[0] is None
    # an acceptance rule of the caller's overrides the test
    a, _, k = armijo(phi, 0.0, -0.6, c1=0.5, accept=lambda a, out: a == 0.5)
    assert a == 0.5 and k == 2
    # strict inequality rejects equality
    flat = lambda a: (0.0, a)  # noqa: E731
    assert armijo(flat, 0.0, 0.0, max_ls=3)[0] == 1.0
    assert armijo(flat, 0.0, 0.0, max_ls=3, strict=True)[0] is None
    assert armijo(flat, 0.0, 0.0, max_ls=3, strict=True, slack=1e-15)[0] == 1.0


def test_backtracking_is_armijo_with_lbfgs_payloads():
    phi = lambda a: ((a - 0.3) ** 2 - 0.09, 2 * (a - 0.3), ("x", a))  # noqa: E731
    assert backtracking(phi, 0.0, -0.6, 1.0, 0.5, 0.5, 10) == (0.25, phi(0.25)[0],
                                                               ("x", 0.25), 3)
    assert backtracking(phi, 0.0, -0.6, 1.0, 0.5, 0.5, 2) == (None, None, None, 2)


@pytest.mark.parametrize("lower", [False, True])
def test_shifted_cholesky_on_a_singular_matrix(lower):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 3))
    M = A @ A.T  # rank 3
    c = shifted_cho_factor(M, lower=lower, rel_shift=1e-13, tries=12)
    assert c[1] is lower
    b = rng.standard_normal(5)
    x = cho_solve(c, b)
    # the factor is of M + delta I for the first delta of the sequence that works
    scale = np.max(np.abs(np.diag(M)))
    for k in range(12):
        delta = 1e-13 * scale * 10.0 ** k
        if np.linalg.eigvalsh(M + delta * np.eye(5)).min() > 0:
            break
    Ms = M + delta * np.eye(5)
    # backward stable: small residual relative to |M + delta I| |x|
    assert np.linalg.norm(Ms @ x - b) <= 1e-10 * np.linalg.norm(Ms, 2) * np.linalg.norm(x)
    # and no smaller shift of the sequence would have been positive definite
    assert k == 0 or np.linalg.eigvalsh(M + delta / 10 * np.eye(5)).min() <= 0
    with pytest.raises(np.linalg.LinAlgError):
        shifted_cho_factor(-np.eye(3), tries=2)


def test_dense_and_lazy_factors_solve_like_numpy():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((6, 6))
    H = A @ A.T + 6 * np.eye(6)
    b = rng.standard_normal(6)
    ref = np.linalg.solve(H, b)
    np.testing.assert_allclose(cholesky_solve(H, b), ref, rtol=1e-10)
    np.testing.assert_allclose(DenseFactor(H).solve(b), ref, rtol=1e-10)
    built = []
    lazy = LazyFactor(lambda: built.append(1) or DenseFactor(H))
    assert not built and lazy.n_matvec == 0
    np.testing.assert_allclose(lazy.solve(b), ref, rtol=1e-10)
    np.testing.assert_allclose(lazy.matvec(b), H @ b)
    assert built == [1]


def test_iteration_log_records_and_builds_the_result():
    log = IterationLog(3.0, np.array([3.0, 4.0]))
    assert log.value == 5.0
    log.add(2.0, 0.5)
    res = log.result(np.zeros(2), 1, 2, True, intercept=0.5, stats={"k": 1})
    assert res.objective == 2.0 and res.certificate_value == 0.5
    assert res.certificate == "gradient_norm" and res.intercept == 0.5
    np.testing.assert_array_equal(res.record.objective, [3.0, 2.0])
    np.testing.assert_array_equal(res.record.certificate_values, [5.0, 0.5])
    with pytest.raises(TypeError):
        res.stats["k"] = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.n_iter = 3
    for _ in range(20):
        log.add(2.0, 0.5)
    assert log.stalled
    with pytest.warns(Warning, match="max_iter=7"):
        log.result(np.zeros(2), 7, 7, False, warn=("solver", 7, 1e-9))


def test_result_refuses_an_unknown_certificate():
    with pytest.raises(ValueError, match="certificate"):
        SolverResult(coef=np.zeros(1), certificate="grad_norm")
    assert {"gradient_norm", "duality_gap", "max_violating_pair"} <= set(CERTIFICATES)


def test_checks_name_the_parameter():
    with pytest.raises(ValueError, match="tol"):
        check_tol_max_iter(0.0, 10)
    with pytest.raises(ValueError, match="max_iter"):
        check_tol_max_iter(1e-3, 0)
    with pytest.raises(ValueError, match="n_grid must be"):
        check_positive_int("n_grid", 2.5)
    with pytest.raises(ValueError, match="C must be > 0"):
        check_real("C", 0.0, positive=True)
    with pytest.raises(ValueError, match="l2 must be >= 0"):
        check_real("l2", -1.0)
    with pytest.raises(ValueError, match="finite real"):
        check_real("C", True)
    assert check_real("C", None, allow_none=True) is None
    assert check_positive_int("k", 3.0) == 3


def test_dual_boxes_follow_liblinear():
    cost = np.array([1.0, 0.0, 4.0])
    for loss in (losses.Hinge(), losses.EpsilonInsensitive(0.1)):
        diag, upper = loss.dual_box(cost)
        np.testing.assert_array_equal(diag, 0.0)
        np.testing.assert_array_equal(upper, cost)
    for loss in (losses.SquaredHinge(), losses.SquaredEpsilonInsensitive(0.1)):
        diag, upper = loss.dual_box(cost)
        np.testing.assert_array_equal(diag, [0.5, 0.0, 0.125])
        np.testing.assert_array_equal(upper, [np.inf, 0.0, np.inf])


@pytest.mark.parametrize("loss", [losses.Logistic(), losses.Squared(),
                                  losses.SquaredEpsilonInsensitive(0.3), losses.SquaredHinge(),
                                  losses.ModifiedHuber()],
                         ids=lambda x: type(x).__name__)
def test_loss_derivatives_by_finite_differences(loss):
    rng = np.random.default_rng(2)
    labels = isinstance(loss, (losses.Logistic, losses.SquaredHinge, losses.ModifiedHuber))
    y = rng.standard_normal(50)
    if labels:
        y = np.where(y < 0, -1.0, 1.0)
    z = rng.standard_normal(50) * 2
    h = 1e-6
    fd = (loss.value(y, z + h) - loss.value(y, z - h)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(y, z), fd, atol=1e-6)
    fd2 = (loss.derivative(y, z + h) - loss.derivative(y, z - h)) / (2 * h)
    # away from the kinks of the generalised second derivative
    if labels:
        away = (np.abs(y * z - 1) > 1e-3) & (np.abs(y * z + 1) > 1e-3)
    else:
        away = np.abs(np.abs(z - y) - getattr(loss, "epsilon", -1.0)) > 1e-3
    np.testing.assert_allclose(loss.second_derivative(y, z)[away], fd2[away], atol=1e-5)
    if not hasattr(loss, "value_derivatives"):
        return
    v, d1, d2 = loss.value_derivatives(y, z)
    np.testing.assert_allclose(v, loss.value(y, z), rtol=1e-14)
    np.testing.assert_allclose(d1, loss.derivative(y, z), rtol=1e-14)
    np.testing.assert_allclose(d2, loss.second_derivative(y, z), rtol=1e-12, atol=1e-300)
