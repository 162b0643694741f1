"""The declared capabilities of losses and penalties: every class of the package
declares the interfaces it provides, a problem checks them once when it is built (a
clear TypeError naming the missing methods), and an object that only has the methods
is used as the declared one would be."""

import numpy as np
import pytest

from bisvm import losses as L
from bisvm import penalties as P
from bisvm.losses import provides
from bisvm.solvers.primal.exact_l1 import WeightedGroupL1
from bisvm.solvers.primal.newton import solve_newton
from bisvm.solvers.problems import (
    CurvatureProblem,
    KernelExpansionProblem,
    SmoothProblem,
    check_interface,
)

LOSS_INTERFACES = {
    L.Hinge: {L.Loss, L.DualBoxLoss},
    L.SquaredHinge: {L.Loss, L.OnePassLoss, L.DualBoxLoss},
    L.SmoothedHinge: {L.Loss, L.OnePassLoss},
    L.Logistic: {L.Loss, L.OnePassLoss},
    L.Squared: {L.Loss, L.OnePassLoss},
    L.EpsilonInsensitive: {L.Loss, L.DualBoxLoss},
    L.SquaredEpsilonInsensitive: {L.Loss, L.DualBoxLoss},
    L.SmoothedEpsilonInsensitive: {L.Loss, L.OnePassLoss},
    L.PseudoHuberLoss: {L.Loss, L.OnePassLoss},
    L.ModifiedHuber: {L.Loss, L.OnePassLoss},
    L.MulticlassHinge: {L.DualBoxLoss},
}


def _penalties():
    groups = np.array([0, 0, 1, 2, -1])
    hub = P.GroupPseudoHuber(np.array([0.3, 0.2, 0.1]), groups, 0.05)
    ridge = P.L2(0.1, groups >= 0)
    return {
        "L2": (ridge, {P.Penalty, P.SmoothPenalty, P.OnePassPenalty,
                       P.InPlaceHessianPenalty, P.CurvaturePenalty}),
        "GroupPseudoHuber": (hub, {P.Penalty, P.SmoothPenalty, P.OnePassPenalty,
                                   P.InPlaceHessianPenalty, P.CurvaturePenalty,
                                   P.StopAtZeroPenalty}),
        "SumPenalty": (P.SumPenalty((ridge, hub)),
                       {P.Penalty, P.SmoothPenalty, P.OnePassPenalty,
                        P.InPlaceHessianPenalty, P.StructuredHessianPenalty,
                        P.StopAtZeroPenalty}),
        "WeightedL1": (P.WeightedL1(0.5), {P.Penalty, P.ProxPenalty}),
        "SelectiveRidge": (P.SelectiveRidge(0.1), {P.Penalty, P.ProxPenalty}),
        "WeightedGroupL1": (WeightedGroupL1(np.ones(3), groups), {P.Penalty}),
    }


PENALTY_INTERFACES = (P.Penalty, P.SmoothPenalty, P.OnePassPenalty, P.InPlaceHessianPenalty,
                      P.CurvaturePenalty, P.StructuredHessianPenalty, P.StopAtZeroPenalty,
                      P.ProxPenalty)


@pytest.mark.parametrize("cls", list(LOSS_INTERFACES), ids=lambda c: c.__name__)
def test_each_loss_declares_exactly_the_interfaces_it_provides(cls):
    loss = cls()
    for interface in (L.Loss, L.OnePassLoss, L.DualBoxLoss):
        declared = interface in LOSS_INTERFACES[cls]
        assert provides(loss, interface) is declared, interface.__name__
        # declared by subclassing, and every method of the interface is really there
        assert issubclass(cls, interface) is declared
        if declared:
            assert all(callable(getattr(loss, m)) for m in _methods(interface))


@pytest.mark.parametrize("name", list(_penalties()))
def test_each_penalty_declares_exactly_the_interfaces_it_provides(name):
    pen, expected = _penalties()[name]
    for interface in PENALTY_INTERFACES:
        assert provides(pen, interface) is (interface in expected), interface.__name__
        assert isinstance(pen, interface) is (interface in expected)


def _methods(interface):
    return [m for m in dir(interface) if not m.startswith("_")
            and callable(getattr(interface, m))]


def test_smooth_problem_names_the_missing_methods():
    X, y = np.eye(3), np.array([1.0, -1.0, 1.0])
    with pytest.raises(TypeError, match=r"penalty must provide gradient, hessian .*"
                                        r"SmoothPenalty.*WeightedL1"):
        SmoothProblem(X, y, L.Logistic(), P.WeightedL1(1.0))
    with pytest.raises(TypeError, match=r"loss must provide derivative, "
                                        r"second_derivative .*MulticlassHinge"):
        SmoothProblem(X, y, L.MulticlassHinge(), P.L2(1.0))
    with pytest.raises(TypeError, match="loss must provide"):
        KernelExpansionProblem(X, y, object())
    with pytest.raises(TypeError, match="interface"):
        check_interface("penalty", 1.0, P.Penalty)


def test_sum_penalty_rejects_a_term_that_is_not_a_penalty_and_names_missing_curvature():
    with pytest.raises(TypeError, match="terms must be penalties"):
        P.SumPenalty((P.L2(1.0), "ridge"))
    exact = P.SumPenalty((P.L2(1.0), WeightedGroupL1(np.ones(2), np.array([0, 1]))))
    with pytest.raises(TypeError, match="WeightedGroupL1 has none"):
        exact.structured_hessian(np.ones(2))


class _PlainLoss:
    """The smoothed hinge with only the three methods of ``Loss`` (no declaration)."""

    def __init__(self):
        self._loss = L.SmoothedHinge(0.25)

    def value(self, y, z):
        return self._loss.value(y, z)

    def derivative(self, y, z):
        return self._loss.derivative(y, z)

    def second_derivative(self, y, z):
        return self._loss.second_derivative(y, z)


class _PlainPenalty:
    """A ridge plus group Pseudo-Huber with only ``value``, ``gradient`` and ``hessian``:
    no one-pass evaluation, no in-place Hessian, no stop at zero."""

    def __init__(self, pen):
        self._pen = pen

    def value(self, w):
        return self._pen.value(w)

    def gradient(self, w):
        return self._pen.gradient(w)

    def hessian(self, w):
        return self._pen.hessian(w)


def _problem(loss=None, penalty=None):
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=(40, 4)), np.ones(40)]
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    groups = np.array([0, 0, 1, 2, -1])
    pen = P.SumPenalty((P.L2(0.05, groups >= 0),
                        P.GroupPseudoHuber(np.array([0.05, 0.02, 0.2]), groups, 0.05)))
    return SmoothProblem(X, y, loss or L.SmoothedHinge(0.25), penalty or pen), pen


def test_a_structural_loss_and_penalty_are_accepted_and_evaluate_as_the_declared_ones():
    declared, pen = _problem()
    plain = _problem(_PlainLoss(), _PlainPenalty(pen))[0]
    assert provides(plain.loss, L.Loss) and not provides(plain.loss, L.OnePassLoss)
    assert not plain.has_structured_hessian and declared.has_structured_hessian
    w = np.array([0.4, -0.3, 0.2, 0.0, 0.1])
    f0, g0, d0 = declared.value_gradient_curvature(w)
    f1, g1, d1 = plain.value_gradient_curvature(w)
    np.testing.assert_allclose([f1], [f0], rtol=1e-13)
    np.testing.assert_allclose(g1, g0, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d1, d0, rtol=1e-12)
    np.testing.assert_allclose(plain.hessian_from_curvature(w, d1),
                               declared.hessian_from_curvature(w, d0), rtol=1e-12)
    # without a stop at zero the trial point is the plain ray
    p = np.array([-1.0, 1.0, -1.0, 0.5, 0.0])
    np.testing.assert_array_equal(plain.trial_point(w, p, 1.0), w + p)


def test_newton_minimises_both_forms_of_the_problem_to_the_same_point():
    declared, pen = _problem()
    plain = _problem(_PlainLoss(), _PlainPenalty(pen))[0]
    assert provides(declared, CurvatureProblem) and provides(plain, CurvatureProblem)
    a = solve_newton(declared, tol=1e-10)
    b = solve_newton(plain, tol=1e-10)
    assert a.converged and b.converged
    np.testing.assert_allclose(b.coef, a.coef, atol=1e-7)
    np.testing.assert_allclose(b.objective, a.objective, rtol=1e-12)


def test_sum_penalty_reads_the_capabilities_of_each_term():
    groups = np.array([0, 1, -1])
    hub = P.GroupPseudoHuber(np.array([0.3, 0.2]), groups, 0.05)
    full = P.SumPenalty((P.L2(0.1), hub))
    mixed = P.SumPenalty((_PlainPenalty(P.L2(0.1)), hub))
    w = np.array([0.5, -0.2, 1.0])
    v = np.array([-0.5, 0.3, 0.0])
    f0, g0 = full.value_and_gradient(w)
    f1, g1 = mixed.value_and_gradient(w)
    np.testing.assert_allclose([f1, *g1], [f0, *g0], rtol=1e-14)
    np.testing.assert_allclose(mixed.add_hessian(np.zeros((3, 3)), w),
                               full.add_hessian(np.zeros((3, 3)), w), rtol=1e-14)
    # the group that crosses zero from outside the smoothing zone stops there in both
    np.testing.assert_array_equal(mixed.stop_at_zero(w, v), full.stop_at_zero(w, v))
    assert full.stop_at_zero(w, v)[0] == 0.0
