"""BiSVM L-BFGS against the 149-point grid, vector vs scalar, importance scores."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from bisvm.selection.bilevel import (
    THESIS_GRID,
    BilevelObjective,
    Fold,
    LowerLevel,
    bisvm_lbfgs,
    grid_search,
    make_hyper_model,
)
from bisvm.selection.importance import importance_scores


def _fold(name, seed=0):
    if name == "iris":
        d = load_iris()
        keep = d.target < 2
        X, y = d.data[keep], np.where(d.target[keep] == 1, 1.0, -1.0)
    else:
        d = load_breast_cancer()
        X, y = d.data, np.where(d.target == 1, 1.0, -1.0)
    Xtr, Xva, ytr, yva = train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)
    sc = StandardScaler().fit(Xtr)

    def aug(Z):
        return np.c_[sc.transform(Z), np.ones(len(Z))]

    return Fold(aug(Xtr), ytr, aug(Xva), yva), X.shape[1]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", ["iris", "breast-cancer"])
def test_scalar_bisvm_matches_or_beats_thesis_grid(name, seed):
    fold, d = _fold(name, seed)
    obj = BilevelObjective((fold,), LowerLevel(), make_hyper_model("scalar", d))
    res = bisvm_lbfgs(obj, 0.01)
    grid = grid_search(obj, THESIS_GRID)
    assert THESIS_GRID.size == 149 and THESIS_GRID[0] == 0.01 and THESIS_GRID[-1] == 1.49
    assert res.value <= grid.best_value + 1e-4
    assert res.lower_solves * 10 <= grid.lower_solves
    # the trajectory starts at the thesis's beta0 and never increases J at accepted steps
    values = [h.value for h in res.history]
    assert res.history[0].beta[0] == pytest.approx(0.01)
    assert all(b <= a + 1e-12 for a, b in zip(values, values[1:]))
    # the grid's values are J at the grid points: recompute one independently
    k = 40
    assert grid.values[k] == pytest.approx(obj.value(np.array([THESIS_GRID[k]]), tol=1e-11),
                                           abs=1e-7)


@pytest.mark.parametrize("name", ["iris", "breast-cancer"])
def test_vector_model_improves_on_scalar_model(name):
    fold, d = _fold(name, seed=1)
    scal = bisvm_lbfgs(BilevelObjective((fold,), LowerLevel(), make_hyper_model("scalar", d)))
    vec_obj = BilevelObjective((fold,), LowerLevel(), make_hyper_model("vector", d))
    vec = bisvm_lbfgs(vec_obj, scal.beta[0])
    assert vec.value <= scal.value + 1e-10
    assert vec.value < scal.value - 1e-4  # more weights, strictly better here


def test_lbfgs_and_newton_lower_levels_give_the_same_hyperparameters():
    fold, d = _fold("iris")
    hyper = make_hyper_model("scalar", d)
    r_n = bisvm_lbfgs(BilevelObjective((fold,), LowerLevel(solver="newton"), hyper))
    r_l = bisvm_lbfgs(BilevelObjective((fold,), LowerLevel(solver="lbfgs"), hyper))
    assert r_n.beta[0] == pytest.approx(r_l.beta[0], rel=1e-3)
    assert r_n.value == pytest.approx(r_l.value, abs=1e-6)


def test_importance_scores_follow_the_thesis_formula():
    # González Vallejo (2024): masked beta normalised; the thesis numbers reproduce exactly
    hyper = make_hyper_model("vector", 4)
    beta = np.array([0.6467, 0.3346, 0.4649, 0.5367, 0.1945])
    w = np.array([0.0065, -0.1717, 0.8545, 0.0199, 0.0000])
    s = importance_scores(w, beta, hyper, threshold=0.01)
    np.testing.assert_allclose(s, [0.0, 0.2504, 0.3480, 0.4016, 0.0], atol=1e-4)
    assert s.sum() == pytest.approx(1.0)


def test_group_importance_formula_and_thesis_experiment_variant():
    # González Vallejo (2024), group experiment: the formulas mask beta, the experiment
    # masked group norms
    groups = {"mean": list(range(10)), "se": list(range(10, 20)), "worst": list(range(20, 30))}
    hyper = make_hyper_model("group", 30, groups=groups)
    beta = np.array([0.9454, 0.3030, 0.0, 0.1333])
    norms = np.array([0.0084, 0.0032, 0.0095, 0.0001])
    w = np.concatenate([np.full(10, n / np.sqrt(10)) for n in norms[:3]] + [[norms[3]]])
    s_norm = importance_scores(w, beta, hyper, threshold=0.005, method="norm")
    np.testing.assert_allclose(s_norm, [0.4693, 0.0, 0.5307, 0.0], atol=1e-4)
    s_pen = importance_scores(w, beta, hyper, threshold=0.005)
    np.testing.assert_allclose(s_pen, [1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="method"):
        importance_scores(w, beta, hyper, method="gini")


def test_bisvm_rejects_bad_start():
    fold, d = _fold("iris")
    obj = BilevelObjective((fold,), LowerLevel(), make_hyper_model("scalar", d))
    with pytest.raises(ValueError, match="beta0"):
        bisvm_lbfgs(obj, -1.0)


def test_small_smoothing_solved_by_continuation_reaches_the_direct_optimum():
    fold, d = _fold("breast-cancer")
    lower = LowerLevel(hinge_smoothing=1e-6, l1_smoothing=1e-6, max_iter=5000)
    hyper = make_hyper_model("vector", d)
    P = lower.problem(fold.X_train, fold.y_train, hyper.penalty_groups,
                      hyper.weights(np.full(hyper.n_hyper, 0.05)))
    cont = lower.solve(P, tol=1e-9)
    from bisvm.solvers.primal.newton import solve_newton

    direct = solve_newton(P, tol=1e-9, max_iter=5000)
    assert cont.converged and direct.converged
    assert cont.n_iter < direct.n_iter
    np.testing.assert_allclose(cont.coef, direct.coef, atol=1e-5)
    assert cont.objective == pytest.approx(direct.objective, rel=1e-9, abs=1e-12)
