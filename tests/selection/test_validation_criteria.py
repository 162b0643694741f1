"""Validation criteria: the class-balanced criteria (closed form: the mean over
classes of the per-class means) and the scale-free margin criterion (exact best scale,
scale invariance), their gradients and the bilevel hypergradients against central finite
differences."""

import numpy as np
import pytest

from bisvm.selection.bilevel import BilevelObjective, Fold, LowerLevel, make_hyper_model
from bisvm.selection.criteria import SCALE_MAX, balanced_weights, best_scale, make_criterion

D = 5


def _unbalanced(seed=0, n=120, share=0.2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = np.where(rng.random(n) < share, 1.0, -1.0)
    X[:, 0] += 0.8 * y
    return np.c_[X, np.ones(n)], y


@pytest.mark.parametrize("kind", ["squared", "logistic", "squared_hinge"])
def test_balanced_criterion_is_the_mean_of_class_means(kind):
    V, eta = _unbalanced()
    w = np.random.default_rng(1).normal(size=D + 1) * 0.5
    bal = make_criterion(kind, V, eta, balanced_weights(eta))
    per_class = [make_criterion(kind, V[eta == c], eta[eta == c]).value_and_grad(w)
                 for c in (-1.0, 1.0)]
    J, g = bal.value_and_grad(w)
    assert J == pytest.approx(0.5 * (per_class[0][0] + per_class[1][0]), rel=1e-12)
    np.testing.assert_allclose(g, 0.5 * (per_class[0][1] + per_class[1][1]), rtol=1e-12)
    # unit weights are the plain criterion
    plain = make_criterion(kind, V, eta)
    ones = make_criterion(kind, V, eta, np.ones(len(eta)))
    assert ones.value_and_grad(w)[0] == pytest.approx(plain.value_and_grad(w)[0], rel=1e-12)
    # gradient against central differences
    h = 1e-6
    fd = np.array([(bal.value_and_grad(w + h * e)[0] - bal.value_and_grad(w - h * e)[0])
                   / (2 * h) for e in np.eye(D + 1)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_balanced_weights():
    eta = np.array([1.0, -1.0, -1.0, -1.0])
    np.testing.assert_allclose(balanced_weights(eta), [1.0, 1 / 3, 1 / 3, 1 / 3])


def test_bad_sample_weight_rejected():
    V, eta = _unbalanced()
    for bad in (np.ones(3), -np.ones(len(eta)), np.zeros(len(eta))):
        with pytest.raises(ValueError, match="sample_weight"):
            make_criterion("squared", V, eta, bad)


def test_best_scale_against_a_fine_search():
    rng = np.random.default_rng(0)
    for _ in range(100):
        m = rng.normal(0.3, 1.0, size=rng.integers(1, 25))
        om = rng.random(m.size)
        om /= om.sum()

        def f(s, m=m, om=om):
            return 0.5 * om @ np.maximum(0.0, 1.0 - s * m) ** 2

        s = best_scale(m, om)
        grid = np.linspace(0.0, 40.0, 40001)[::4]
        # f on every grid point at once: one row of hinge terms per scale
        on_grid = 0.5 * np.maximum(0.0, 1.0 - grid[:, None] * m) ** 2 @ om
        assert f(s) <= on_grid.min() + 1e-10
        assert 0.0 <= s <= SCALE_MAX
    # separated rows: J = 0 for every large scale; all rows wrong: s = 0
    assert best_scale(np.array([0.5, 2.0]), np.array([0.5, 0.5])) >= 2.0
    assert best_scale(np.array([-0.5, -2.0]), np.array([0.5, 0.5])) == 0.0


def test_scaled_margin_is_scale_invariant_and_its_gradient_is_exact():
    V, eta = _unbalanced(seed=4)
    w = np.random.default_rng(5).normal(size=D + 1) * 0.3
    for weights in (None, balanced_weights(eta)):
        crit = make_criterion("scaled_squared_hinge", V, eta, weights)
        J, g = crit.value_and_grad(w)
        for c in (0.01, 0.5, 7.0):
            assert crit.value_and_grad(c * w)[0] == pytest.approx(J, rel=1e-10)
        # the scale-free J never exceeds the plain margin criterion at w
        assert J <= make_criterion("squared_hinge", V, eta, weights).value_and_grad(w)[0]
        # envelope gradient: orthogonal to w (J is constant along w) and equal to
        # central differences
        assert abs(g @ w) <= 1e-10 * np.linalg.norm(g) * np.linalg.norm(w) + 1e-14
        h = 1e-6
        fd = np.array([(crit.value_and_grad(w + h * e)[0] - crit.value_and_grad(w - h * e)[0])
                       / (2 * h) for e in np.eye(D + 1)])
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic", "scaled_squared_hinge"])
@pytest.mark.parametrize("model", ["scalar", "vector"])
def test_balanced_hypergradient_matches_central_differences(loss, model):
    Xa, y = _unbalanced(seed=3)
    idx = np.arange(len(y)) % 3
    folds = tuple(Fold(Xa[idx != k], y[idx != k], Xa[idx == k], y[idx == k])
                  for k in range(3))
    lower = LowerLevel(l2_penalty=0.05, hinge_smoothing=0.3, l1_smoothing=0.1)
    hyper = make_hyper_model(model, D)
    obj = BilevelObjective(folds, lower, hyper, loss=loss, balanced=True)
    plain = BilevelObjective(folds, lower, hyper, loss=loss)
    beta = np.random.default_rng(2).uniform(0.02, 0.15, size=hyper.n_hyper)
    ev = obj.evaluate(beta, tol=1e-12)
    assert ev.value != pytest.approx(plain.value(beta, tol=1e-12), rel=1e-3)
    h = 1e-6
    fd = np.empty(hyper.n_hyper)
    for k in range(hyper.n_hyper):
        e = np.zeros(hyper.n_hyper)
        e[k] = h
        fd[k] = (obj.value(beta + e, tol=1e-13) - obj.value(beta - e, tol=1e-13)) / (2 * h)
    scale = max(np.max(np.abs(fd)), 1e-8)
    np.testing.assert_allclose(ev.grad, fd, rtol=1e-5, atol=1e-5 * scale)
    assert np.max(np.abs(ev.grad)) > 1e-6
