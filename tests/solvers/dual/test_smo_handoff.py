"""``solve_smo(method="auto")``: the working-set solver hands a long solve on to SMO.

The hand-off rule is exercised on small problems by lowering the size from which "auto"
takes the working-set solver and the outer-iteration count at which it hands over; the
solution must be the optimum SMO and LIBSVM reach, the iteration count the sum of both
solvers' steps, and nothing is handed over when the columns do not fit in the cache or
the working-set solver was asked for by name.
"""

import numpy as np
import pytest
from sklearn.svm import SVC as SkSVC

from bisvm.kernels import make_kernel
from bisvm.solvers.dual import smo as smo_module
from bisvm.solvers.dual import working_set as ws_module
from bisvm.solvers.dual.smo import csvc_dual, dense_hessian, solve_smo


@pytest.fixture
def problem(monkeypatch):
    monkeypatch.setattr(ws_module, "AUTO_MIN_SAMPLES", 100)
    monkeypatch.setattr(smo_module, "HANDOFF_OUTER", 2)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((1200, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(1200) > 0, 1.0, -1.0)
    return X, y, csvc_dual(X, y, make_kernel("rbf", gamma=2.0), 100.0)


def _objective(pb, alpha):
    return 0.5 * alpha @ dense_hessian(pb) @ alpha + pb.p @ alpha


def test_a_long_working_set_solve_is_finished_by_smo(problem):
    X, y, pb = problem
    alone = solve_smo(pb, method="working_set")
    assert alone.stats["n_outer"] > 2  # a solve that the rule hands over
    auto = solve_smo(pb, cache_size=200)
    smo = solve_smo(pb, method="smo")
    assert auto.converged and auto.certificate_value <= 1e-3
    # SMO's statistics: the solve ended in SMO (shrinking and reconstruction phases)
    assert "reconstruction" in auto.stats["profile"]
    assert "n_outer" not in auto.stats
    # the same optimum as SMO alone and as LIBSVM, to the stopping tolerance
    f_auto, f_smo = _objective(pb, auto.dual_coef), _objective(pb, smo.dual_coef)
    assert abs(f_auto - f_smo) <= 1e-4 * abs(f_smo)
    ref = SkSVC(C=100.0, gamma=2.0, tol=1e-3).fit(X, y)
    alpha_ref = np.zeros(len(y))
    alpha_ref[ref.support_] = np.abs(ref.dual_coef_[0])
    assert abs(f_auto - _objective(pb, alpha_ref)) <= 1e-4 * abs(f_smo)
    assert abs(auto.intercept - ref.intercept_[0]) <= 1e-2 * max(1.0, abs(ref.intercept_[0]))
    assert np.all(auto.dual_coef >= 0) and np.all(auto.dual_coef <= pb.upper)
    assert abs(pb.y @ auto.dual_coef) <= 1e-9 * pb.upper.max()


def test_the_step_count_adds_both_solvers(problem, monkeypatch):
    X, y, pb = problem
    calls = []
    original = smo_module.solve_working_set

    def spy(*args, **kwargs):
        res = original(*args, **kwargs)
        calls.append(res)
        return res

    monkeypatch.setattr(smo_module, "solve_working_set", spy)
    auto = solve_smo(pb)
    (ws,) = calls
    assert ws.stats["n_outer"] == 2 and not ws.converged
    # SMO from the working-set iterate takes the remaining steps
    rest = solve_smo(pb, method="smo", alpha0=ws.dual_coef)
    assert auto.n_iter == ws.n_iter + rest.n_iter
    np.testing.assert_array_equal(auto.dual_coef, rest.dual_coef)


def test_no_hand_off_without_room_or_by_name(problem):
    X, y, pb = problem
    # 1,200 columns of 1,200 float64 entries need 11.5 MB: a smaller cache keeps the
    # working-set solver to the end (with the same working-set size, 768)
    small = solve_smo(pb, cache_size=10.0)
    assert small.stats["n_outer"] > 2 and small.converged
    named = solve_smo(pb, method="working_set")
    assert named.stats["n_outer"] > 2 and named.converged
    np.testing.assert_array_equal(small.dual_coef, named.dual_coef)


def test_the_hand_off_does_not_warn(problem):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y, pb = problem
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = solve_smo(pb)
    assert res.converged
