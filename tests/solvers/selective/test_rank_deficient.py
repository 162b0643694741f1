"""Rank-deficient selective-ridge problems: duplicated, constant (all-zero after
standardising) and more columns than objects.

The regression fixture is a standardised 115 x 1,069 table of binary fingerprints (271
distinct columns, 122 all zero). Identical kink columns made the constraint Gram matrix of
every Newton face exactly singular; its Cholesky failed and the SVD least-squares
fallback (LAPACK gelsd) occasionally failed to converge on it. The tests check the face
solve against a null-space reference on the very face where that happened, the
estimators on the fixture by their optimality conditions, and a constructed problem
against an independent L-BFGS-B solve of the problem with duplicates merged.
"""

from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import null_space
from scipy.optimize import minimize

from bisvm import SelectiveRegression, SelectiveRegressionCV
from bisvm.selection.loo import CRITERIA
from bisvm.solvers.selective import (
    SelectiveNewtonFactor,
    SelectiveProblem,
    distinct_constraints,
    equal_split_duplicates,
    face_candidate,
    min_norm_psd_solve,
    selectivity_max,
    solve_dual_newton,
)

pytestmark = pytest.mark.usefixtures("one_blas_thread")

DATA = Path(__file__).parent / "data"


def _fixture():
    d = np.load(DATA / "selective_regression_lstsq.npz")
    return d["X"], d["y"]


def _pen_grad(a, mu):
    """d pen_mu / da away from 0: 2 sign(a) max(mu, |a|) (pen is C^1 there)."""
    return 2.0 * np.sign(a) * np.maximum(mu, np.abs(a))


def kkt_violation(X, y, coef, intercept, mu, ridge, fit_intercept=True):
    r"""Largest violation of the optimality conditions of
    :math:`J = \gamma\sum\mathrm{pen}_\mu(a_i) + \sum_t (y_t - x_t^\top a - b)^2`,
    relative to :math:`\|2X^\top y\|_\infty`: :math:`g_i + \gamma\,\mathrm{pen}'(a_i) = 0`
    where :math:`a_i \ne 0`, :math:`|g_i| \le 2\gamma\mu` where :math:`a_i = 0`
    (:math:`g = -2X^\top(y - Xa - b)`), and :math:`\sum_t (y_t - x_t^\top a - b) = 0`."""
    res = y - X @ coef - intercept
    g = -2.0 * X.T @ res
    nz = coef != 0
    v = [np.abs(g[nz] + ridge * _pen_grad(coef[nz], mu)),
         np.maximum(0.0, np.abs(g[~nz]) - 2.0 * ridge * mu)]
    if fit_intercept:
        v.append(np.array([2.0 * abs(res.sum())]))
    scale = max(1.0, float(np.max(np.abs(2.0 * X.T @ y))))
    return max(float(np.max(u, initial=0.0)) for u in v) / scale


# ------------------------------------------------------------------ linear algebra --
def test_min_norm_psd_solve_against_pseudo_inverse():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(12, 5))
    B = np.hstack([B, B[:, :3], np.zeros((12, 2))])  # rank 5, size 10
    S = B.T @ B
    rhs = S @ rng.normal(size=10)  # consistent
    th = min_norm_psd_solve(S, rhs)
    np.testing.assert_allclose(th, np.linalg.pinv(S) @ rhs, rtol=1e-8, atol=1e-10)
    # positive definite: the Cholesky path, the exact solution
    P = S + np.eye(10)
    np.testing.assert_allclose(P @ min_norm_psd_solve(P, rhs), rhs, rtol=1e-12, atol=1e-12)
    with pytest.raises(FloatingPointError, match="non-finite"):
        min_norm_psd_solve(S, np.full(10, np.nan))


def test_distinct_constraints_groups_identical_columns():
    V = np.array([[1.0, 2.0, 1.0, 0.0, 2.0], [3.0, 1.0, 3.0, 0.0, 1.0]])
    first, group = distinct_constraints(V)
    assert first.size == 3
    np.testing.assert_array_equal(V[:, first][:, group], V)


def _face_reference(A_mat, C, tgt, ytil):
    """The equality-constrained quadratic by the null-space method: lambda = lam0 + Z w,
    C^T lam0 = t (pinv), Z a basis of null(C^T); then the minimum-norm multipliers
    theta = pinv(C) (ytil - A lambda) from stationarity A lambda - ytil + C theta = 0."""
    lam0 = np.linalg.pinv(C.T) @ tgt
    Z = null_space(C.T)
    w = np.linalg.solve(Z.T @ A_mat @ Z, Z.T @ (ytil - A_mat @ lam0))
    lam = lam0 + Z @ w
    return lam, np.linalg.pinv(C) @ (ytil - A_mat @ lam)


def test_face_candidate_on_the_fixture_face_where_gelsd_failed():
    # a fold of the k-fold path, mu ~ 0.02: 245 ridge and 252 kink features whose kink
    # columns hold only 40 distinct constraints (and the intercept in their span)
    X, _ = _fixture()
    f = np.load(DATA / "selective_regression_lstsq_face.npz")
    Xf = X[f["rows"]]
    F, K, sig = f["free"], f["kink"], f["kink_sign"].astype(float)
    mu, ytil = float(f["selectivity"]), f["ytil"]
    c = np.ones(Xf.shape[0])
    C = np.hstack([Xf[:, K], np.ones((Xf.shape[0], 1))])
    assert np.linalg.matrix_rank(C) < C.shape[1] - 200
    lam, theta, A = face_candidate(Xf, F, K, sig, mu, c, ytil, True)
    assert lam is not None and np.all(np.isfinite(lam)) and np.all(np.isfinite(theta))
    assert isinstance(A, SelectiveNewtonFactor)
    tgt = np.r_[mu * sig, 0.0]
    np.testing.assert_allclose(C.T @ lam, tgt, atol=1e-9)
    A_mat = Xf[:, F] @ Xf[:, F].T + np.diag(c)
    lam_ref, theta_ref = _face_reference(A_mat, C, tgt, ytil)
    np.testing.assert_allclose(lam, lam_ref, rtol=1e-7, atol=1e-9 * np.abs(lam_ref).max())
    # the multipliers are determined only through C theta; ours are the minimum-norm
    # ones (identical columns share equally), as pinv's
    np.testing.assert_allclose(C @ theta, C @ theta_ref, atol=1e-7 * np.abs(C @ theta_ref).max())
    np.testing.assert_allclose(theta, theta_ref, atol=1e-6 * max(1.0, np.abs(theta_ref).max()))


# ---------------------------------------------------------------------- the fixture --
def _cv_grid(criterion):
    # the exact refits of "loo" cost N fits per grid point: a shorter grid for it
    return dict(n_mu=3, min_ratio=0.25) if criterion == "loo" else dict(n_mu=6,
                                                                         min_ratio=0.03)


@pytest.mark.filterwarnings("ignore:SelectiveRegressionCV selected the empty model")
@pytest.mark.parametrize("criterion", CRITERIA)
def test_fixture_every_criterion_fits_and_is_optimal(criterion):
    X, y = _fixture()
    m = SelectiveRegressionCV(criterion=criterion, **_cv_grid(criterion)).fit(X, y)
    assert np.all(np.isfinite(m.coef_)) and np.isfinite(m.intercept_)
    assert np.all(np.isfinite(m.predict(X)))
    assert np.any(np.isfinite(m.criterion_path_))
    assert m.duality_gap_ <= 1e-8
    assert kkt_violation(X, y, m.coef_, m.intercept_, m.selectivity_, m.ridge) <= 1e-8
    # all-zero columns never enter; identical columns get identical coefficients
    assert np.all(m.coef_[~np.any(X != 0, axis=0)] == 0)
    _, first, inv = np.unique(X.T, axis=0, return_index=True, return_inverse=True)
    np.testing.assert_allclose(m.coef_, m.coef_[first][inv.reshape(-1)], rtol=1e-12,
                               atol=1e-15)


def test_fixture_path_has_faces_with_duplicated_kinks():
    # the regression is meaningful only if the path really meets the singular faces
    X, y = _fixture()
    prob = SelectiveProblem(X, y, "squared", 1.0, 0.0, None, True)
    mu_max = selectivity_max(X, y, "squared", 1.0, None, True)[0]
    res = solve_dual_newton(prob.with_selectivity(0.5 * mu_max))
    K = np.flatnonzero(res.partition.kink)
    assert K.size > distinct_constraints(X[:, K] * res.partition.kink_sign[K])[0].size
    assert res.converged
    assert kkt_violation(X, y, res.coef, res.intercept, 0.5 * mu_max, 1.0) <= 1e-10


# ------------------------------------------- a constructed rank-deficient problem --
def _wide_degenerate(seed=0, N=30, d=40):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(N, d))
    Z = (Z - Z.mean(0)) / Z.std(0)
    # duplicates of two informative columns, a triplicate, three constant (zero) columns
    X = np.hstack([Z, Z[:, [0, 1]], Z[:, [5, 5]], np.zeros((N, 3))])
    y = Z[:, :3] @ np.array([2.0, -1.5, 1.0]) + Z[:, 5] * 0.4 + 0.3 \
        + 0.1 * rng.normal(size=N)
    return X, y


def _pen(a, mu):
    a = np.abs(a)
    return np.where(a <= mu, 2.0 * mu * a, mu * mu + a * a)


def _merged_reference(X, y, mu, ridge):
    r"""Independent solve: identical columns merged into one column with multiplicity
    m (coefficient A, penalty :math:`m\,\mathrm{pen}_\mu(A/m)`, the equal split), zero
    columns dropped, and :math:`A = p - q`, :math:`p, q \ge 0` (the penalty is C^1 on
    the orthant, and at a minimum :math:`pq = 0`) minimised by L-BFGS-B."""
    keep = np.flatnonzero(np.any(X != 0, axis=0))
    U, first, inv = np.unique(X[:, keep].T, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    M = X[:, keep][:, first]
    m = np.bincount(inv).astype(float)
    k = M.shape[1]

    def f(v):
        p, q, b = v[:k], v[k:2 * k], v[-1]
        r = y - M @ (p - q) - b
        val = r @ r + ridge * np.sum(m * (_pen(p / m, mu) + _pen(q / m, mu)))
        gl = -2.0 * M.T @ r
        gp = ridge * 2.0 * np.maximum(mu, p / m)
        gq = ridge * 2.0 * np.maximum(mu, q / m)
        return val, np.concatenate([gl + gp, -gl + gq, [-2.0 * r.sum()]])

    v0 = np.zeros(2 * k + 1)
    bounds = [(0, None)] * (2 * k) + [(None, None)]
    out = minimize(f, v0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options=dict(maxiter=100000, maxfun=200000, ftol=1e-16, gtol=1e-12,
                                maxcor=50))
    A = out.x[:k] - out.x[k:2 * k]
    coef = np.zeros(X.shape[1])
    coef[keep] = (A / m)[inv]
    return coef, float(out.x[-1]), out.fun


@pytest.mark.parametrize("mu", [0.05, 0.3, 0.6])
def test_wide_duplicated_constant_columns_match_the_merged_reference(mu):
    X, y = _wide_degenerate()
    ridge = 1.0
    m = SelectiveRegression(selectivity=mu, ridge=ridge).fit(X, y)
    ref, b_ref, J_ref = _merged_reference(X, y, mu, ridge)
    prob = SelectiveProblem(X, y, "squared", ridge, mu, None, True)
    J = prob.primal_value(m.coef_, m.intercept_)
    assert J <= J_ref + 1e-9 * abs(J_ref)
    assert kkt_violation(X, y, m.coef_, m.intercept_, mu, ridge) <= 1e-9
    # both ridge (|a| > mu) and kink (0 < |a| <= mu) features occur
    aa = np.abs(m.coef_)
    assert np.any(aa > mu) and np.any((aa > 0) & (aa <= mu))
    np.testing.assert_allclose(m.coef_, ref, atol=1e-5 * np.abs(ref).max())
    np.testing.assert_allclose(m.intercept_, b_ref, atol=1e-5 * max(1.0, abs(b_ref)))
    assert np.all(m.coef_[-3:] == 0)
    np.testing.assert_array_equal(m.coef_[40:42], m.coef_[[0, 1]])
    np.testing.assert_array_equal(m.coef_[42:44], m.coef_[[5, 5]])


def test_equal_split_keeps_the_objective_and_lowers_the_norm():
    X, y = _wide_degenerate(seed=1)
    mu, ridge = 0.5, 1.0
    prob = SelectiveProblem(X, y, "squared", ridge, mu, None, True)
    res = solve_dual_newton(prob)
    # an unequal but equally optimal split of the kink duplicates, as coordinate
    # descent would leave it: member 0 takes everything of the pair (0, 40)
    skew = res.coef.copy()
    if 0 < abs(skew[0]) <= mu / 2:
        skew[0], skew[40] = 2.0 * skew[0], 0.0
        J0 = prob.primal_value(res.coef, res.intercept)
        assert prob.primal_value(skew, res.intercept) == pytest.approx(J0, rel=1e-12)
    back = equal_split_duplicates(X, skew)
    np.testing.assert_allclose(back, res.coef, rtol=1e-12, atol=1e-15)
    assert np.linalg.norm(back) <= np.linalg.norm(skew) + 1e-15


def test_non_finite_data_is_refused():
    X, y = _wide_degenerate()
    Xn = X.copy()
    Xn[0, -1] = np.nan  # e.g. 0/0 from standardising a constant column
    with pytest.raises(ValueError, match="NaN or infinity"):
        SelectiveProblem(Xn, y, "squared", 1.0, 0.1, None, True)
    yn = y.copy()
    yn[3] = np.inf
    with pytest.raises(ValueError, match="y contains NaN"):
        SelectiveProblem(X, yn, "squared", 1.0, 0.1, None, True)


def _no_svd_least_squares(monkeypatch):
    """Make every SVD-based least-squares driver fail, as LAPACK's gelsd does on rare
    matrices with clustered singular values: the solver must not depend on them."""
    import scipy.linalg

    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge in Linear Least Squares")

    monkeypatch.setattr(np.linalg, "lstsq", broken)
    real = scipy.linalg.lstsq

    def scipy_lstsq(*args, lapack_driver=None, **kwargs):
        if lapack_driver in (None, "gelsd", "gelss"):
            broken()
        return real(*args, lapack_driver=lapack_driver, **kwargs)

    monkeypatch.setattr(scipy.linalg, "lstsq", scipy_lstsq)
    import bisvm.solvers.selective.linalg as sel_linalg
    monkeypatch.setattr(sel_linalg, "lstsq", scipy_lstsq)


def test_fixture_fits_when_svd_least_squares_fails(monkeypatch):
    # a least-squares failure made deterministic: the path through singular faces
    # (and the coordinate-descent polish) never calls an SVD least-squares driver
    _no_svd_least_squares(monkeypatch)
    X, y = _fixture()
    m = SelectiveRegressionCV(n_mu=6, min_ratio=0.03).fit(X, y)
    assert kkt_violation(X, y, m.coef_, m.intercept_, m.selectivity_, m.ridge) <= 1e-8
    X2, y2 = _wide_degenerate()
    m2 = SelectiveRegression(selectivity=0.3).fit(X2, y2)
    assert kkt_violation(X2, y2, m2.coef_, m2.intercept_, 0.3, 1.0) <= 1e-9
