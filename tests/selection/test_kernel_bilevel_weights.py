"""The kernel bilevel engine with row weights (class weight x sample weight): the weighted
L2-SVM against the machine with repeated rows, its hypergradient against central finite
differences of the weighted k-fold criterion, the cross-fold warm start and the scan
that starts from the middle of its C values."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold

from bisvm.selection.kernel_bilevel import (
    KernelBilevelObjective,
    KernelHyperModel,
    cross_fold_start,
    kernel_pairs,
    median_gamma,
    scan_C,
)
from bisvm.solvers.dual.kernel_lower_level import (
    KernelL2SVM,
    KernelPair,
    decision_values,
    solve_l2svm,
)


def _data(n=90, d=4, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if n_classes == 2:
        y = (X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    else:
        y = np.digitize(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(n),
                        [-0.3, 0.7])
    return X, y


@pytest.mark.parametrize("gamma", [0.4, np.array([0.2, 0.7, 0.05, 1.0])])
def test_weighted_lower_level_equals_repeated_rows(gamma):
    """A cost multiplier of 2 on a row is the row twice (the loss term is a sum), a
    multiplier of 1 the row once: same validation outputs, same bias."""
    X, y = _data()
    yy = 2 * y - 1
    Xt, yt, Xv, yv = X[:60], yy[:60], X[60:], yy[60:]
    reps = np.random.default_rng(1).integers(1, 3, size=60)
    rep = np.repeat(np.arange(60), reps)
    weighted = KernelPair.build(Xt, yt, Xv, yv, cost_train=reps.astype(float))
    repeated = KernelPair.build(Xt[rep], yt[rep], Xv, yv)
    C = 3.0
    a = solve_l2svm(weighted, C, gamma, tol=1e-11)
    b = solve_l2svm(repeated, C, gamma, tol=1e-11)
    assert a.polished and b.polished
    np.testing.assert_allclose(decision_values(weighted, a)[0],
                               decision_values(repeated, b)[0], atol=1e-7)
    assert abs(a.bias - b.bias) < 1e-7


def test_build_refuses_bad_costs():
    X, y = _data(n=20)
    with pytest.raises(ValueError, match="cost_train"):
        KernelPair.build(X[:10], 2 * y[:10] - 1, X[10:], 2 * y[10:] - 1,
                         cost_train=np.zeros(10))


def _objective(sparse, n_classes, widths, shrinking, loss, seed=3):
    X, y = _data(n=90 if n_classes == 2 else 105, n_classes=n_classes, seed=seed)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) < 0.4, 0.0, X))
    rw = np.random.default_rng(seed).uniform(0.3, 2.5, size=y.size)
    rw[::11] = 0.0  # rows of weight 0 are left out of training and validation
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    folds = kernel_pairs(X, y, n_classes, splits, "ovo", cache_distances=not sparse,
                         row_weight=rw)
    hyper = KernelHyperModel(widths, X.shape[1], 2.0, median_gamma(X))
    return KernelBilevelObjective(folds, KernelL2SVM(shrinking=shrinking), hyper, loss)


@pytest.mark.parametrize(
    "sparse, n_classes, widths, shrinking, loss",
    [
        (False, 2, "shared", True, "scaled_squared_hinge"),
        (False, 2, "per_feature", False, "squared_hinge"),
        (True, 2, "per_feature", True, "logistic"),
        (True, 2, "shared", False, "squared_hinge"),
        (False, 3, "per_feature", True, "scaled_squared_hinge"),
        (True, 3, "shared", True, "scaled_squared_hinge"),
    ],
)
def test_weighted_hypergradient_matches_finite_differences(sparse, n_classes, widths,
                                                           shrinking, loss):
    """With per-row costs in training and row weights in the criterion: the gradient in
    (log C, log gamma) or (log C, log gamma_1..d) against central differences."""
    obj = _objective(sparse, n_classes, widths, shrinking, loss)
    assert all(p.cost_train is not None and np.all(p.cost_train > 0)
               for f in obj.folds for p in f)
    rng = np.random.default_rng(0)
    beta = np.exp(rng.uniform(-0.4, 0.4, obj.hyper.n_hyper))
    ev, se = obj.evaluate_se(beta, tol=1e-11)
    assert se > 0
    h = 1e-5
    fd = np.empty(beta.size)
    for k in range(beta.size):
        up, dn = beta.copy(), beta.copy()
        up[k] *= np.exp(h)
        dn[k] *= np.exp(-h)
        fd[k] = (obj.value(up, tol=1e-11)[0] - obj.value(dn, tol=1e-11)[0]) / (2 * h)
    np.testing.assert_allclose(ev.grad * beta, fd, rtol=2e-4, atol=1e-8)
    assert np.isclose(ev.value, obj.value(beta, tol=1e-11)[0], rtol=1e-10)


def test_standard_error_is_that_of_the_pooled_terms():
    """``evaluate_se``'s standard error: the weighted standard error of the per-row
    terms whose weighted mean is the criterion."""
    obj = _objective(False, 3, "shared", True, "scaled_squared_hinge")
    beta = np.ones(obj.hyper.n_hyper)
    ev, se = obj.evaluate_se(beta, tol=1e-10)
    t, w, _ = obj.terms(*obj.hyper.params(beta), tol=1e-10)
    assert np.isclose(w.sum(), 1.0) and np.isclose(w @ t, ev.value, rtol=1e-10)
    assert np.isclose(se, np.sqrt(np.sum(w**2 * (t - w @ t) ** 2)), rtol=1e-10)


def test_cross_fold_start_is_feasible_and_leads_to_the_same_solution():
    X, y = _data(n=120)
    splits = list(StratifiedKFold(4, shuffle=True, random_state=2).split(X, y))
    folds = kernel_pairs(X, y, 2, splits)
    p0, p1 = folds[0][0], folds[1][0]
    s0 = solve_l2svm(p0, 2.0, 0.3, tol=1e-10)
    a = cross_fold_start(p0, s0.alpha, p1)
    assert a.shape == p1.y_train.shape and np.all(a >= 0)
    assert abs(a @ p1.y_train) < 1e-12 * max(1.0, a.sum())
    # rows in both training sets start at their fold-0 value (up to the class rescaling)
    common = np.isin(p1.rows_train, p0.rows_train)
    assert np.count_nonzero(a[common]) > 0 and np.all(a[~common] == 0)
    cold = solve_l2svm(p1, 2.0, 0.3, tol=1e-10)
    warm = solve_l2svm(p1, 2.0, 0.3, alpha0=a, tol=1e-10)
    np.testing.assert_allclose(warm.alpha, cold.alpha, atol=1e-8)
    # the objective uses it for every fold but the first when there is no warm start
    sols = KernelBilevelObjective(folds, KernelL2SVM(), KernelHyperModel("shared", 4, 1, 1)) \
        .solve(2.0, np.array([0.3]), None, 1e-9)
    np.testing.assert_allclose(sols[1][0].alpha, cold.alpha, atol=1e-8)
    assert cross_fold_start(KernelPair.build(X[:5], y[:5], X[5:], y[5:]), np.ones(5),
                            p1) is None


def test_scan_from_the_middle_finds_the_full_scans_best():
    obj = _objective(False, 2, "shared", True, "scaled_squared_hinge")
    g = np.array([obj.hyper.gamma_ref])
    Cs = [0.01, 0.1, 1.0, 10.0, 100.0]
    C_full, _, full = scan_C(obj, g, Cs)
    C_mid, _, mid = scan_C(obj, g, Cs, from_middle=True)
    assert np.all(np.isfinite(full))
    done = np.isfinite(mid)
    assert 2 <= done.sum() <= len(Cs) and done[len(Cs) // 2]
    # the values it computed are the full scan's (warm starts change the path, not the
    # optimum: SMO's loose gap of the scan leaves differences of its order)
    np.testing.assert_allclose(mid[done], full[done], rtol=0, atol=2e-3)
    # on a unimodal scan both return the same C
    d = np.diff(full)
    if np.all(d[: np.argmin(full)] < 0) and np.all(d[np.argmin(full):] > 0):
        assert C_mid == C_full
    assert C_mid == Cs[int(np.nanargmin(mid))]
