"""The model restricted to its support (``BilevelSVC(refit="support")``,
:mod:`bisvm.selection.support`): checked against an independent fit on the selected
columns, the full problem's objective, and the criterion by hand."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from bisvm import BilevelSVC, ElasticNetSVC
from bisvm.selection.bilevel import BilevelObjective, make_hyper_model
from bisvm.selection.criteria import make_criterion
from bisvm.selection.staged import weighted_folds
from bisvm.selection.support import (
    expand,
    restrict_folds,
    restrict_hyper,
    support_mask,
    thresholded_value,
)
from bisvm.solvers.primal.lower_level import LowerLevel


def _data(n=200, d=20, seed=1):
    X, y = make_classification(n, d, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=seed)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("model, seed", [("scalar", 1), ("vector", 3)])
def test_restricted_refit_is_the_lower_level_on_the_selected_columns(model, seed):
    X, y = _data(seed=seed)
    m = BilevelSVC(model=model, threshold="zero", null_test=False, max_iter=20,
                   random_state=0, standardize=False).fit(X, y)
    sup = m.support_
    assert 0 < sup.sum() < X.shape[1]
    # exactly zero off the support, nonzero on it
    assert np.all(m.coef_[0, ~sup] == 0) and np.all(m.coef_[0, sup] != 0)
    beta = np.ravel(m.penalty_weights_)
    pw = beta[0] if beta.size == 1 else np.r_[beta[:-1][sup], beta[-1]]
    ref = ElasticNetSVC(pw, l2_penalty=float(m.l2_penalty_), tol=1e-11,
                        standardize=False).fit(X[:, sup], y)
    np.testing.assert_allclose(m.coef_[0, sup], ref.coef_[0], atol=2e-6)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, atol=2e-6)


def test_predictions_do_not_read_unselected_columns():
    X, y = _data(seed=1)
    m = BilevelSVC(random_state=0, max_iter=20).fit(X, y)
    sup = m.support_
    assert 0 < sup.sum() < X.shape[1]
    Z = X.copy()
    Z[:, ~sup] = np.random.default_rng(0).normal(size=(X.shape[0], (~sup).sum())) * 10
    np.testing.assert_array_equal(m.decision_function(Z), m.decision_function(X))


def test_thesis_refit_keeps_every_coefficient():
    # refit=True is the thesis's model: the smoothed penalty leaves no exact zero
    X, y = _data(seed=1)
    m = BilevelSVC(random_state=0, max_iter=20, refit=True).fit(X, y)
    assert np.all(m.coef_ != 0)
    assert m.support_.sum() < X.shape[1]


def test_refit_parameter_is_validated():
    X, y = _data()
    with pytest.raises(ValueError, match="refit"):
        BilevelSVC(refit="all").fit(X, y)


def test_restricted_problem_is_the_full_problem_at_zero_off_the_support():
    rng = np.random.default_rng(2)
    n, d = 60, 7
    Xa = np.c_[rng.normal(size=(n, d)), np.ones(n)]
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    hyper = make_hyper_model("group", d, groups={"a": [0, 1, 2], "b": [3, 4]})
    beta = np.array([0.3, 0.05, 0.2, 0.1, 0.02])  # a, b, x5, x6, intercept
    keep = np.array([True, False, True, False, False, True, False, True])
    hk = restrict_hyper(hyper, keep)
    # group b and x6 leave; a keeps two members; the bias stays
    assert hk.penalty_groups.tolist() == [0, 0, 1, 2]
    np.testing.assert_array_equal(hk.weights(beta), beta[[0, 2, 4]])
    lower = LowerLevel()
    full = lower.problem(Xa, y, hyper.penalty_groups, hyper.weights(beta))
    part = lower.problem(Xa[:, keep], y, hk.penalty_groups, hk.weights(beta))
    for _ in range(3):
        w = rng.normal(size=keep.sum())
        np.testing.assert_allclose(part.value(w), full.value(expand(w, keep)),
                                   rtol=1e-12)


def test_support_mask_by_group_norm_and_bias():
    hyper = make_hyper_model("group", 4, groups={"a": [0, 1]})
    coef = np.array([0.006, 0.008, 0.02, 0.001, 0.0])
    # ||(0.006, 0.008)|| = 0.01 is not above 0.01; the bias is always kept
    assert support_mask(coef, hyper, 0.01).tolist() == [False, False, True, False, True]
    assert support_mask(coef, hyper, 0.0099).tolist() == [True, True, True, False, True]


def test_thresholded_value_by_hand():
    X, y = _data(n=120, d=6, seed=3)
    y = np.where(y == 1, 1.0, -1.0)
    Xa = np.c_[X, np.ones(len(y))]
    idx = np.arange(len(y)) % 3
    folds = weighted_folds(Xa, y, None, [(np.flatnonzero(idx != j), np.flatnonzero(idx == j))
                                         for j in range(3)])
    obj = BilevelObjective(folds, LowerLevel(), make_hyper_model("vector", 6),
                           loss="scaled_squared_hinge")
    coefs, _ = obj.solve(np.full(7, 0.05))
    eps = float(np.median(np.abs(coefs[0][:-1])))
    by_hand = []
    for f, w in zip(folds, coefs):
        w = np.array(w)
        w[:-1][np.abs(w[:-1]) <= eps] = 0.0
        by_hand.append(make_criterion("scaled_squared_hinge", f.X_val, f.y_val)
                       .value_and_grad(w)[0])
    np.testing.assert_allclose(thresholded_value(obj, coefs, eps), np.mean(by_hand),
                               rtol=1e-12)
    # restricting the folds' columns leaves rows and weights alone
    rf = restrict_folds(folds, np.r_[np.ones(3, bool), np.zeros(3, bool), True])
    assert rf[0].X_train.shape == (folds[0].X_train.shape[0], 4)
    assert rf[0].y_val is folds[0].y_val


def test_held_out_monitor_judges_the_restricted_solution():
    from types import SimpleNamespace

    from bisvm.selection.early_stopping import HeldOutMonitor

    X, y = _data(n=200, d=8, seed=4)
    y = np.where(y == 1, 1.0, -1.0)
    Xa = np.c_[X, np.ones(len(y))]
    tr, va = np.arange(140), np.arange(140, 200)
    obj = BilevelObjective(weighted_folds(Xa, y, None, [(tr, va)]), LowerLevel(),
                           make_hyper_model("vector", 8), loss="scaled_squared_hinge")
    beta = np.full(9, 0.005)
    (w,), _ = obj.solve(beta, None, 1e-10)
    eps = float(np.median(np.abs(w[:-1])))
    zeroed = np.where(np.r_[np.abs(w[:-1]) > eps, True], w, 0.0)
    expect = obj.criteria[0].value_and_grad(zeroed)[0]
    plain = obj.criteria[0].value_and_grad(w)[0]
    assert abs(expect - plain) > 1e-6  # the threshold matters here
    ev = SimpleNamespace(beta=beta)
    m, _, _ = HeldOutMonitor(obj, None, 5, threshold=eps).update(ev, 0.0, 1e-10)
    np.testing.assert_allclose(m, expect, rtol=1e-6)
    m0, _, _ = HeldOutMonitor(obj, None, 5).update(ev, 0.0, 1e-10)
    np.testing.assert_allclose(m0, plain, rtol=1e-6)


def test_one_se_path_with_threshold_stops_no_later():
    # the restricted reading only adds a way to leave the band: never a larger β
    from bisvm.selection.one_se import one_se_scalar

    X, y = _data(n=160, d=30, seed=5)
    y = np.where(y == 1, 1.0, -1.0)
    Xa = np.c_[X, np.ones(len(y))]
    idx = np.arange(len(y)) % 4
    obj = BilevelObjective(
        weighted_folds(Xa, y, None, [(np.flatnonzero(idx != j), np.flatnonzero(idx == j))
                                     for j in range(4)]),
        LowerLevel(), make_hyper_model("scalar", 30), loss="scaled_squared_hinge")
    b_plain, _, _ = one_se_scalar(obj, 0.005)
    b_thr, coefs, _ = one_se_scalar(obj, 0.005, threshold=0.01)
    assert 0.005 <= b_thr <= b_plain
    # and its fold models, restricted, are within one SE of the start's (by hand)
    from bisvm.selection.one_se import pooled_terms, weighted_mean_se

    start, _ = obj.solve(np.array([0.005]))
    J0, se = weighted_mean_se(*pooled_terms(obj, start, 0.01))
    assert weighted_mean_se(*pooled_terms(obj, coefs, 0.01))[0] <= J0 + se + 1e-9
