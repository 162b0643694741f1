"""Rosset–Zhu path of the 1-norm SVM against scipy's linprog (HiGHS) at sampled λ."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.optimize as so  # noqa: E402

from bisvm.plots import plot_l1_path  # noqa: E402
from bisvm.solvers.paths.l1_hinge import l1_svm_objective, l1_svm_path  # noqa: E402


def _lp(X, y, lam, fit_intercept=True):
    n, d = X.shape
    nb = 2 if fit_intercept else 0
    c = np.r_[lam * np.ones(2 * d), np.zeros(nb), np.ones(n)]
    YX = y[:, None] * X
    cols = [-YX, YX] + ([-y[:, None], y[:, None]] if fit_intercept else []) + [-np.eye(n)]
    r = so.linprog(c, A_ub=np.hstack(cols), b_ub=-np.ones(n), bounds=(0, None),
                   method="highs")
    b = r.x[2 * d] - r.x[2 * d + 1] if fit_intercept else 0.0
    return r.x[:d] - r.x[d:2 * d], b, r.fun


def _data(n, d, seed, noise=0.8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sign(X[:, 0] + 0.5 * X[:, 1] + noise * rng.normal(size=n) + 0.3)
    return X, y


def _sampled(path):
    ends = np.r_[path.breakpoints, path.lambda_min]
    lams = [2.0 * path.breakpoints[0]]
    for a, b in zip(ends[:-1], ends[1:]):
        lams.append(np.sqrt(a * b) if b > 0 else 0.5 * a)
    return np.array(lams)


@pytest.mark.parametrize("n,d,seed,fit_intercept", [(60, 5, 0, True), (80, 15, 1, True),
                                                     (70, 8, 2, False), (30, 40, 3, True)])
def test_path_matches_linprog_at_sampled_lambdas(n, d, seed, fit_intercept):
    X, y = _data(n, d, seed)
    P = l1_svm_path(X, y, fit_intercept=fit_intercept)
    assert P.breakpoints.size > 5
    assert np.all(np.diff(P.breakpoints) < 0)
    lams = _sampled(P)
    idx = np.unique(np.linspace(0, lams.size - 1, 25).astype(int))
    for lam in lams[idx]:
        beta, b = P.solution(lam)
        beta_lp, b_lp, f_lp = _lp(X, y, lam, fit_intercept)
        f = l1_svm_objective(X, y, beta, b, lam)
        assert f == pytest.approx(f_lp, rel=1e-6, abs=1e-9)
        # strictly inside an interval the LP optimum is a unique vertex
        np.testing.assert_allclose(beta, beta_lp, atol=1e-6)


def test_path_structure():
    X, y = _data(80, 10, 4)
    P = l1_svm_path(X, y)
    # β = 0 above λ_max = max_j |g_j| of the loss subgradient at the best constant
    assert np.all(P.coefs[0] == 0)
    beta, _ = P.solution(1.01 * P.breakpoints[0])
    assert np.all(beta == 0)
    # along the path the L1 norm grows and the hinge loss falls
    assert np.all(np.diff(P.l1_norms) >= -1e-9)
    assert np.all(np.diff(P.losses) <= 1e-9)
    # at a breakpoint both neighbouring vertices (and the segment) are optimal
    k = len(P.breakpoints) // 2
    lam = P.breakpoints[k]
    f0 = l1_svm_objective(X, y, P.coefs[k], P.intercepts[k], lam)
    f1 = l1_svm_objective(X, y, P.coefs[k + 1], P.intercepts[k + 1], lam)
    assert f0 == pytest.approx(f1, rel=1e-9)
    s_mid = 0.5 * (P.l1_norms[k] + P.l1_norms[k + 1])
    bm, b0m = P.at_l1_norm(s_mid)
    assert l1_svm_objective(X, y, bm, b0m, lam) == pytest.approx(f0, rel=1e-9)


def test_separable_data_end_with_zero_loss_at_lambda_zero():
    X, y = _data(30, 40, 5, noise=0.0)
    P = l1_svm_path(X, y)
    assert P.losses[-1] == pytest.approx(0.0, abs=1e-9)
    assert P.lambda_min == 0.0
    beta, b = P.solution(1e-6)
    beta_lp, _, _ = _lp(X, y, 1e-6)
    assert np.abs(beta).sum() == pytest.approx(np.abs(beta_lp).sum(), rel=1e-6)


def test_plot_and_errors():
    X, y = _data(40, 4, 6)
    P = l1_svm_path(X, y)
    for x in ("l1_norm", "lambda"):
        ax = plot_l1_path(P, x=x)
        assert len(ax.get_lines()) >= 4
    with pytest.raises(ValueError, match="x must"):
        plot_l1_path(P, x="s")
    with pytest.raises(ValueError, match="2 classes"):
        l1_svm_path(X, np.zeros(40))
    with pytest.raises(ValueError, match="NaN"):
        l1_svm_path(np.full((5, 2), np.nan), np.r_[1, 1, 1, -1, -1])
    with pytest.raises(ValueError, match="below"):
        P2 = l1_svm_path(X, y, lambda_min=1.0)
        P2.solution(0.5)
