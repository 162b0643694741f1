"""KKT hypergradients of the scalar, vector and group models against central finite
differences of the upper-level value, for the three criteria (González Vallejo 2024)."""

import numpy as np
import pytest

from bisvm.selection.bilevel import BilevelObjective, Fold, LowerLevel, make_hyper_model
from bisvm.selection.hypergradient import implicit_hypergradient

D = 6
GROUPS = {"a": [0, 1, 2], "b": [3, 4]}  # feature 5 becomes its own group


def _folds(kind, seed):
    rng = np.random.default_rng(seed)
    n = 90
    X = rng.normal(size=(n, D))
    y = np.where(X[:, 0] - 0.7 * X[:, 3] + 0.6 * rng.normal(size=n) > 0, 1.0, -1.0)
    Xa = np.c_[X, np.ones(n)]
    if kind == "holdout":
        return (Fold(Xa[:60], y[:60], Xa[60:], y[60:]),)
    idx = np.arange(n) % 3
    return tuple(Fold(Xa[idx != k], y[idx != k], Xa[idx == k], y[idx == k]) for k in range(3))


CRITERIA = {"holdout": ("holdout", "squared"), "kfold": ("kfold", "squared"),
            "logistic": ("kfold", "logistic"), "margin": ("kfold", "squared_hinge")}


@pytest.mark.parametrize("model", ["scalar", "vector", "group"])
@pytest.mark.parametrize("criterion", sorted(CRITERIA))
@pytest.mark.parametrize("penalize_intercept, learn_l2", [(True, False), (False, False),
                                                          (True, True)])
def test_hypergradient_matches_central_differences(model, criterion, penalize_intercept,
                                                   learn_l2):
    split, loss = CRITERIA[criterion]
    lower = LowerLevel(l2_penalty=0.05, hinge_smoothing=0.3, l1_smoothing=0.1,
                       penalize_intercept=penalize_intercept)
    hyper = make_hyper_model(model, D, groups=GROUPS if model == "group" else None,
                             penalize_intercept=penalize_intercept, learn_l2=learn_l2)
    obj = BilevelObjective(_folds(split, 1), lower, hyper, loss=loss)
    rng = np.random.default_rng(2)
    beta = rng.uniform(0.02, 0.15, size=hyper.n_hyper)
    ev = obj.evaluate(beta, tol=1e-12)
    h = 1e-6
    fd = np.empty(hyper.n_hyper)
    for k in range(hyper.n_hyper):
        e = np.zeros(hyper.n_hyper)
        e[k] = h
        fd[k] = (obj.value(beta + e, tol=1e-13) - obj.value(beta - e, tol=1e-13)) / (2 * h)
    scale = max(np.max(np.abs(fd)), 1e-8)
    np.testing.assert_allclose(ev.grad, fd, rtol=1e-5, atol=1e-5 * scale)
    assert np.max(np.abs(ev.grad)) > 1e-6  # a non-trivial derivative was checked


def test_group_hypergradient_uses_exact_block_hessian():
    # The thesis's diagonal (4.35) is wrong for groups of size > 1 (a printing error): the
    # hypergradient built from it disagrees with finite differences, ours agrees.
    lower = LowerLevel(l2_penalty=0.05, hinge_smoothing=0.3, l1_smoothing=0.1)
    hyper = make_hyper_model("group", D, groups=GROUPS)
    obj = BilevelObjective(_folds("holdout", 4), lower, hyper)
    beta = np.full(hyper.n_hyper, 0.08)
    P = obj.problems(beta)[0]
    w = obj.solve(beta, tol=1e-13)[0][0]
    J, dJ = obj.criteria[0].value_and_grad(w)
    pen = P.penalty.terms[1]
    H = P.hessian(w)
    s = np.sqrt(0.1**2 + pen.group_norms(w) ** 2)
    diag_thesis = pen.per_coordinate(beta[hyper.hyper_of_group] * 0.1**2 / s**3)
    H_thesis = H - pen.hessian(w) + np.diag(diag_thesis)
    g_exact = hyper.reduce(implicit_hypergradient(H, dJ, pen.weight_jacobian(w))[0])
    g_thesis = hyper.reduce(implicit_hypergradient(H_thesis, dJ, pen.weight_jacobian(w))[0])
    fd = np.array([
        (obj.value(beta + h, tol=1e-13) - obj.value(beta - h, tol=1e-13)) / 2e-6
        for h in np.eye(hyper.n_hyper) * 1e-6
    ])
    assert np.max(np.abs(g_exact - fd)) < 1e-6 * np.max(np.abs(fd)) + 1e-9
    assert np.max(np.abs(g_thesis - fd)) > 1e-3 * np.max(np.abs(fd))


def test_hyper_model_validation():
    with pytest.raises(ValueError, match="overlaps"):
        make_hyper_model("group", 4, groups={"a": [0, 1], "b": [1, 2]})
    with pytest.raises(ValueError, match="outside"):
        make_hyper_model("group", 4, groups={"a": [0, 7]})
    with pytest.raises(ValueError, match="model must be"):
        make_hyper_model("matrix", 4)
    with pytest.raises(ValueError, match="needs groups"):
        make_hyper_model("group", 4)
    hm = make_hyper_model("group", 4, groups={"a": [0, 2]})
    assert hm.names == ("a", "x1", "x3", "intercept")
    np.testing.assert_array_equal(hm.penalty_groups, [0, 1, 0, 2, 3])
