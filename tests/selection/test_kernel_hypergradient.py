"""The kernel lower level and its hypergradient: the L2-SVM's polished free-set solution
against an independent solve, and the adjoint hypergradient in log C, log γ and every
log γ_j against central finite differences of the k-fold criterion (dense and sparse,
binary and multiclass, with and without shrinking)."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.model_selection import StratifiedKFold

from bisvm.selection.kernel_bilevel import (
    KernelBilevelObjective,
    KernelHyperModel,
    kernel_pairs,
    median_gamma,
    scan_C,
    width_support,
)
from bisvm.solvers.dual.kernel_lower_level import (
    KernelL2SVM,
    KernelPair,
    decision_values,
    l2svm_hypergradient,
    l2svm_tangent,
    rbf_gram,
    solve_l2svm,
    weighted_sq_distances,
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


def _pair(sparse=False, cache=False, seed=0):
    X, y = _data(seed=seed)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    return KernelPair.build(X[:60], 2 * y[:60] - 1, X[60:], 2 * y[60:] - 1, cache)


def test_weighted_distances_match_direct_sum():
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((7, 3)), rng.standard_normal((5, 3))
    for c in (np.array([0.5, 2.0, 0.0]), np.array([0.5, -1.0, 0.3])):
        direct = ((X[:, None, :] - Y[None, :, :]) ** 2 * c).sum(axis=2)
        np.testing.assert_allclose(weighted_sq_distances(X, Y, c), direct, atol=1e-12)
        np.testing.assert_allclose(weighted_sq_distances(sp.csr_matrix(X), sp.csr_matrix(Y), c),
                                   direct, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.4, np.array([0.2, 0.7, 0.05, 1.0])])
def test_polished_solution_solves_the_primal(gamma):
    """The polished (α, b) minimises the primal ½‖w‖² + C/2 Σ max(0, 1 - y f)² over the
    kernel expansion: compared with scipy's L-BFGS on the primal in (β, b), f = Kβ + b,
    ½βᵀKβ the RKHS norm."""
    pair = _pair()
    C = 2.0
    sol = solve_l2svm(pair, C, gamma, tol=1e-10)
    assert sol.polished
    K = rbf_gram(pair.X_train, pair.X_train, gamma)
    y = pair.y_train

    def primal(v):
        beta, b = v[:-1], v[-1]
        f = K @ beta + b
        r = np.maximum(0.0, 1.0 - y * f)
        g_f = -C * y * r
        return 0.5 * beta @ K @ beta + 0.5 * C * r @ r, np.append(K @ beta + K @ g_f, g_f.sum())

    ref = minimize(primal, np.zeros(y.size + 1), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000})
    f_ref = K @ ref.x[:-1] + ref.x[-1]
    f_ours = K @ (sol.alpha * y) + sol.bias
    np.testing.assert_allclose(f_ours, f_ref, atol=1e-5)
    # KKT: free rows on y f = 1 - alpha/C, bound rows at y f >= 1
    F = sol.free
    np.testing.assert_allclose(y[F] * f_ours[F], 1.0 - sol.alpha[F] / C, atol=1e-10)
    off = np.setdiff1d(np.arange(y.size), F)
    assert np.all(y[off] * f_ours[off] >= 1.0 - 1e-8)
    assert abs(sol.alpha @ y) < 1e-10


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("widths", ["shared", "per_feature"])
def test_pair_hypergradient_matches_finite_differences(sparse, widths):
    """One binary problem: dE/d(log C, log γ_j) of the validation squared hinge."""
    pair = _pair(sparse, cache=widths == "shared" and not sparse)
    d = pair.X_train.shape[1]
    lg0 = np.log(np.full(1 if widths == "shared" else d, 0.3))
    if widths == "per_feature":
        lg0 = lg0 + np.array([0.3, -0.2, 0.1, -0.4])
    lc0 = np.log(3.0)

    def E(lc, lg):
        s = solve_l2svm(pair, np.exp(lc), np.exp(lg), tol=1e-11)
        f, KVF = decision_values(pair, s)
        r = np.maximum(0.0, 1.0 - pair.y_val * f)
        return 0.5 * np.mean(r**2), s, f, KVF

    _, s, f, KVF = E(lc0, lg0)
    e = -pair.y_val * np.maximum(0.0, 1.0 - pair.y_val * f) / f.size
    g, lam = l2svm_hypergradient(pair, s, e, KVF)
    assert lam.shape == (s.free.size + 1,)
    h = 1e-5
    fd = [(E(lc0 + h, lg0)[0] - E(lc0 - h, lg0)[0]) / (2 * h)]
    for j in range(lg0.size):
        step = np.zeros_like(lg0)
        step[j] = h
        fd.append((E(lc0, lg0 + step)[0] - E(lc0, lg0 - step)[0]) / (2 * h))
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-8)


@pytest.mark.parametrize("widths", ["shared", "per_feature"])
def test_tangent_predicts_the_solution_change(widths):
    pair = _pair()
    d = pair.X_train.shape[1]
    g0 = np.full(1 if widths == "shared" else d, 0.3)
    sol = solve_l2svm(pair, 2.0, g0, tol=1e-11)
    dlc, dlg = 1e-4, np.linspace(-1e-4, 1e-4, g0.size)
    da, db = l2svm_tangent(pair, sol, dlc, dlg)
    moved = solve_l2svm(pair, 2.0 * np.exp(dlc), g0 * np.exp(dlg), tol=1e-11)
    np.testing.assert_allclose(moved.alpha - sol.alpha, da, atol=1e-7)
    assert abs(moved.bias - sol.bias - db) < 1e-7


def _objective(sparse, n_classes, widths, shrinking, loss="squared_hinge"):
    X, y = _data(n=90 if n_classes == 2 else 105, n_classes=n_classes, seed=3)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) < 0.4, 0.0, X))
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    folds = kernel_pairs(X, y, n_classes, splits, "ovo", cache_distances=not sparse)
    hyper = KernelHyperModel(widths, X.shape[1], 2.0, median_gamma(X))
    return KernelBilevelObjective(folds, KernelL2SVM(shrinking=shrinking), hyper, loss)


@pytest.mark.parametrize(
    "sparse, n_classes, widths, shrinking, loss",
    [
        (False, 2, "shared", True, "squared_hinge"),
        (False, 2, "per_feature", False, "squared_hinge"),
        (True, 2, "per_feature", True, "logistic"),
        (True, 2, "shared", False, "squared_hinge"),
        (False, 3, "per_feature", True, "scaled_squared_hinge"),
        (True, 3, "shared", True, "squared_hinge"),
        (False, 3, "shared", False, "logistic"),
    ],
)
def test_objective_hypergradient_matches_finite_differences(sparse, n_classes, widths,
                                                            shrinking, loss):
    """The engine's k-fold criterion (mean over folds and one-vs-one machines): its
    gradient in β against central differences in log β, at a tight lower tolerance."""
    obj = _objective(sparse, n_classes, widths, shrinking, loss)
    rng = np.random.default_rng(0)
    beta = np.exp(rng.uniform(-0.4, 0.4, obj.hyper.n_hyper))
    ev = obj.evaluate(beta, tol=1e-11)
    assert ev.lower_solves == obj.n_problems
    h = 1e-5
    fd = np.empty(beta.size)
    for k in range(beta.size):
        up, dn = beta.copy(), beta.copy()
        up[k] *= np.exp(h)
        dn[k] *= np.exp(-h)
        fd[k] = (obj.value(up, tol=1e-11)[0] - obj.value(dn, tol=1e-11)[0]) / (2 * h)
    np.testing.assert_allclose(ev.grad * beta, fd, rtol=2e-4, atol=1e-8)
    assert np.isclose(ev.value, obj.value(beta, tol=1e-11)[0], rtol=1e-10)


def test_hypergradient_does_not_depend_on_the_free_set_threshold():
    """SMO stopped loosely or tightly, the polish lands on the same free set and the same
    hypergradient (the bound set is decided by the KKT conditions, not by SMO's α)."""
    obj = _objective(False, 2, "per_feature", True)
    beta = np.ones(obj.hyper.n_hyper)
    loose = obj.evaluate(beta, tol=1e-5)
    tight = obj.evaluate(beta, tol=1e-11)
    np.testing.assert_allclose(loose.grad, tight.grad, rtol=1e-6, atol=1e-10)


def test_warm_start_reaches_the_same_solution():
    obj = _objective(False, 3, "shared", True)
    beta = np.array([1.0, 1.0])
    cold = obj.evaluate(beta, tol=1e-9)
    nearby = obj.evaluate(beta * 1.3, tol=1e-9)
    warm = obj.evaluate(beta, warm=nearby.coefs, tol=1e-9)
    for a, b in zip(cold.coefs, warm.coefs):
        np.testing.assert_allclose(a, b, atol=1e-8)
    assert warm.lower_iterations <= cold.lower_iterations


def test_scan_and_support_rule():
    """The scan returns its best C; the support rule keeps the two interacting features
    and drops the noise when the noise widths are near zero."""
    obj = _objective(False, 2, "per_feature", True)
    g = obj.hyper.gamma_ref
    C, warm, vals = scan_C(obj, np.array([g]), [0.1, 1.0, 10.0])
    assert C == [0.1, 1.0, 10.0][int(np.argmin(vals))]
    gamma = np.array([0.5, 0.5, 1e-4, 1e-4])
    dec = width_support(obj, C, gamma, gamma / gamma.sum(), warm)
    assert set(dec.support) == {0, 1}
    assert dec.n_solves == 1 + len(dec.tested)


def test_objective_refuses_unknown_criterion():
    X, y = _data()
    folds = kernel_pairs(X, y, 2, list(StratifiedKFold(3).split(X, y)))
    with pytest.raises(ValueError, match="loss must be one of"):
        KernelBilevelObjective(folds, KernelL2SVM(), KernelHyperModel("shared", 4, 1.0, 1.0),
                               "squared")
    with pytest.raises(ValueError, match="C must be positive"):
        solve_l2svm(folds[0][0], 0.0, 1.0)
