"""The truncated Newton-CG lower level on tall dense data: the sketched
correlation preconditioner, float32 Hessian-vector products inside float64 iterative
refinement, and agreement of the whole hypergradient with the dense d x d Newton."""

import numpy as np
import pytest
import scipy.sparse as sp

from bisvm.penalties import L2, GroupPseudoHuber, SumPenalty
from bisvm.selection.bilevel import BilevelObjective, Fold, LowerLevel, make_hyper_model
from bisvm.selection.hypergradient import implicit_hypergradient
from bisvm.solvers.primal.truncated import (
    CGFactor,
    prepare_cg_data,
    solve_truncated_newton,
    weighted_column_squares,
)


def _tall(n=600, d=40, seed=0):
    rng = np.random.default_rng(seed)
    # correlated blocks of features, as the preconditioner is built for
    Z = rng.normal(size=(n, d // 5))
    X = np.repeat(Z, 5, axis=1) * np.sqrt(0.6) + np.sqrt(0.4) * rng.normal(size=(n, d))
    y = np.where(X[:, :3].sum(axis=1) + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_prepare_cg_data_sketches_the_uncentred_correlation():
    X, _ = _tall()
    X[:, 7] = 0.0  # a column with no values at all
    data = prepare_cg_data(X, mixed_precision=True, seed=3)
    n, d = X.shape
    rows = np.sort(np.random.default_rng(3).choice(n, 4 * d, replace=False))
    G = X[rows].T @ X[rows]
    s = np.sqrt(np.diag(G))
    ok = s > 0
    R = G[np.ix_(ok, ok)] / np.outer(s[ok], s[ok])
    np.testing.assert_allclose(data.correlation[np.ix_(ok, ok)], R, atol=1e-13)
    np.testing.assert_array_equal(np.diag(data.correlation), 1.0)
    assert not data.correlation[7, ~np.eye(d, dtype=bool)[7]].any()
    assert data.X_lowp.dtype == np.float32
    np.testing.assert_allclose(data.X_lowp, X, rtol=1e-7)
    # the diagonal estimate: exact when the sketch holds every row, and not used when
    # a nonzero column has no value on the sketch
    full = prepare_cg_data(X[:160], mixed_precision=False)
    c = np.random.default_rng(0).random(160)
    np.testing.assert_allclose(full.column_squares(c), (X[:160] ** 2).T @ c, rtol=1e-12)
    Xr = X.copy()
    Xr[~np.isin(np.arange(n), rows), 7] = 1.0  # nonzero only off the sketch
    assert prepare_cg_data(Xr, seed=3).sketch_rows is None
    assert data.sketch_rows is not None
    # no sketch where it cannot pay or is not defined
    assert prepare_cg_data(X[:100], mixed_precision=True).correlation is None  # n < 4d
    assert prepare_cg_data(X, mixed_precision=False, correlation=False) is None
    assert prepare_cg_data(sp.csr_matrix(X)) is None


@pytest.mark.parametrize("lowp,corr", [(True, True), (True, False), (False, True)])
def test_cg_factor_reaches_float64_accuracy(lowp, corr):
    """Mixed precision with refinement: the float64 residual meets a tight rtol (float32
    products alone stall near 1e-7), with and without a warm start, and a loose rtol is
    met in one round."""
    X, _ = _tall()
    n, d = X.shape
    rng = np.random.default_rng(1)
    groups = np.r_[np.arange(d - 1), -1]
    pen = SumPenalty((L2(0.01, groups >= 0),
                      GroupPseudoHuber(0.05 * rng.random(d - 1), groups, 0.01)))
    w = rng.normal(size=d) * (rng.random(d) < 0.3)
    D = pen.structured_hessian(w)
    c = rng.random(n) / n
    H = X.T @ (c[:, None] * X) + D.dense()
    F = CGFactor(X, c, D, data=prepare_cg_data(X, mixed_precision=lowp, correlation=corr))
    b = rng.normal(size=d)
    x_ref = np.linalg.solve(H, b)
    for x0 in (None, x_ref + 1e-3 * rng.normal(size=d)):
        x = F.solve(b, x0=x0, rtol=1e-11)
        assert np.linalg.norm(H @ x - b) <= 1e-10 * np.linalg.norm(b)
    x = F.solve(b, rtol=0.1)
    assert np.linalg.norm(H @ x - b) <= 0.1 * np.linalg.norm(b)
    np.testing.assert_allclose(F.matvec(b), H @ b, rtol=1e-12)


def test_weighted_column_squares_float32_blocks():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 30))
    c = rng.random(5000)
    ref = (X * X).T @ c
    out = weighted_column_squares(X.astype(np.float32), c.astype(np.float32))
    np.testing.assert_allclose(out, ref, rtol=1e-5)


CASES = [(kind, pen_int) for kind in ("scalar", "vector", "group") for pen_int in (True, False)]


@pytest.mark.parametrize("kind,pen_int", CASES)
def test_tall_cg_lower_level_agrees_with_dense_newton(kind, pen_int):
    """Coefficients to 1e-6 and hypergradients to 1e-6 relative against the dense Newton
    and the explicit implicit-function formula, with float32 products and the
    correlation preconditioner switched on."""
    X, y = _tall()
    d = X.shape[1]
    groups = [list(range(i, i + 4)) for i in range(0, d, 4)]
    hyper = make_hyper_model(kind, d, groups=groups if kind == "group" else None,
                             penalize_intercept=pen_int)
    beta = 0.002 + 0.02 * np.random.default_rng(2).random(hyper.n_hyper)
    Xa = np.c_[X, np.ones(len(X))]
    fold = Fold(Xa[150:], y[150:], Xa[:150], y[:150])
    cg = LowerLevel(solver="cg", mixed_precision=True)
    P = cg.problem(fold.X_train, fold.y_train, hyper.penalty_groups, hyper.weights(beta))
    assert P.cg_data.X_lowp is not None and P.cg_data.correlation is not None
    ev = BilevelObjective((fold,), cg, hyper, loss="squared_hinge").evaluate(beta, tol=1e-11)
    obj = BilevelObjective((fold,), LowerLevel(solver="newton"), hyper, loss="squared_hinge")
    ref = obj.evaluate(beta, tol=1e-11)
    w = ref.coefs[0]
    assert np.max(np.abs(ev.coefs[0] - w)) < 1e-6
    _, dJ = obj.criteria[0].value_and_grad(w)
    Pd = LowerLevel().problem(fold.X_train, fold.y_train, hyper.penalty_groups,
                              hyper.weights(beta))
    g_dense = hyper.reduce(implicit_hypergradient(Pd.hessian(w), dJ,
                                                  Pd.penalty.terms[1].weight_jacobian(w))[0])
    assert np.linalg.norm(ev.grad - g_dense) <= 1e-6 * np.linalg.norm(g_dense)


def test_cold_start_continuation_on_cg_agrees_with_dense_newton():
    """From a cold start at small smoothing the CG solver goes through the continuation
    stages (on the problem's own float32 copy) to the dense Newton's solution."""
    X, y = _tall(n=400, d=30, seed=4)
    Xa = np.c_[X, np.ones(len(X))]
    groups = np.r_[np.arange(30), -1]
    ll = LowerLevel(solver="cg", mixed_precision=True, hinge_smoothing=0.02)
    P = ll.problem(Xa, y, groups, np.full(30, 0.01))
    r = ll.solve(P, tol=1e-10)
    ref = LowerLevel(solver="newton", hinge_smoothing=0.02).solve(P, tol=1e-10)
    np.testing.assert_allclose(r.coef, ref.coef, atol=1e-7)
    direct = solve_truncated_newton(P, w0=ref.coef, tol=1e-10)
    assert direct.n_iter <= 1


def test_mixed_precision_is_validated():
    with pytest.raises(ValueError, match="mixed_precision"):
        LowerLevel(mixed_precision="fast")


@pytest.mark.parametrize("solver", ["newton", "woodbury", "cg", "lbfgs"])
def test_candidate_starts_begin_at_the_best_one(solver):
    """A list of warm starts: the solve begins at the candidate with the smallest
    gradient norm (the first entry of its record) and reaches the same solution."""
    X, y = _tall(n=300, d=20, seed=5)
    Xa = np.c_[X, np.ones(len(X))]
    ll = LowerLevel(solver=solver)
    P = ll.problem(Xa, y, np.r_[np.arange(20), -1], np.full(20, 0.01))
    ref = LowerLevel(solver="newton").solve(P, tol=1e-10).coef
    far, near = np.zeros(21), ref + 1e-4
    r = ll.solve(P, [far, near], tol=1e-9)
    np.testing.assert_allclose(r.coef, ref, atol=1e-6)
    g_near = np.linalg.norm(P.gradient(near))
    assert np.isclose(r.record.grad_norm[0], g_near, rtol=1e-9)
    assert r.record.grad_norm[0] < np.linalg.norm(P.gradient(far))
