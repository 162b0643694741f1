r"""The regression side of the bilevel engine against independent references.

* the smoothed ε-insensitive loss (Lee, Hsieh & Huang 2005) and the Pseudo-Huber loss:
  derivatives against central finite differences, and the limit
  :math:`0 \le \ell_\mu(r) - \max(0, |r| - \varepsilon) \le 2\mu\log 2`;
* the smoothed MAE criterion: gradient against finite differences, and its limit, the MAE;
* implicit hypergradients of the scalar, vector and group models with the regression
  lower level against central finite differences of the upper-level value (dense and
  sparse X, more features than rows and more rows than features);
* the lower level against :func:`scipy.optimize.minimize` on the same objective written
  here independently with numpy, for each regression loss and each lower-level solver;
* with the squared loss and vanishing L1 smoothing, the lower level against
  scikit-learn's ``ElasticNet`` (one L1 weight) and ``Lasso`` on rescaled columns (fixed
  per-feature weights, glmnet's ``penalty.factor``), with the mapping of the parameters
  stated in each test.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.linear_model import ElasticNet, Lasso

from bisvm.losses import PseudoHuberLoss, SmoothedEpsilonInsensitive
from bisvm.selection.bilevel import BilevelObjective, Fold, make_hyper_model
from bisvm.selection.criteria import SmoothedAbsoluteValidation, make_criterion
from bisvm.solvers.primal.lower_level import LowerLevel, add_bias_column

# ---------------------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------------------

LOSSES = [
    SmoothedEpsilonInsensitive(epsilon=0.1, smoothing=0.1),
    SmoothedEpsilonInsensitive(epsilon=0.0, smoothing=0.3),
    SmoothedEpsilonInsensitive(epsilon=0.5, smoothing=0.02),
    PseudoHuberLoss(delta=1.0),
    PseudoHuberLoss(delta=0.05),
]


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_loss_derivatives_match_central_differences(loss):
    rng = np.random.default_rng(0)
    y = rng.normal(size=400)
    # residuals spread over the tube, its soft edges and the linear arms
    z = y + rng.uniform(-2.0, 2.0, size=400)
    h = 1e-6
    v, d1, d2 = loss.value_derivatives(y, z)
    np.testing.assert_array_equal(v, loss.value(y, z))
    np.testing.assert_array_equal(d1, loss.derivative(y, z))
    np.testing.assert_array_equal(d2, loss.second_derivative(y, z))
    fd1 = (loss.value(y, z + h) - loss.value(y, z - h)) / (2 * h)
    fd2 = (loss.derivative(y, z + h) - loss.derivative(y, z - h)) / (2 * h)
    np.testing.assert_allclose(d1, fd1, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(d2, fd2, rtol=1e-5, atol=1e-5 * np.max(np.abs(d2)))
    # convex, and a function of the residual z - y only
    assert np.all(v >= 0) and np.all(d2 > 0)
    np.testing.assert_allclose(loss.value(y + 3.0, z + 3.0), v, rtol=1e-12, atol=1e-14)


def test_pseudo_huber_loss_limits():
    r = np.array([-1e-3, 1e-4, 0.0, 50.0, -80.0])
    loss = PseudoHuberLoss(delta=0.5)
    v = loss.value(np.zeros(5), r)
    # r^2/2 near zero, delta * |r| - delta^2 far out
    np.testing.assert_allclose(v[:3], r[:3] ** 2 / 2, rtol=1e-5, atol=1e-20)
    np.testing.assert_allclose(v[3:], 0.5 * np.abs(r[3:]) - 0.25, rtol=1e-3)


@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0])
@pytest.mark.parametrize("mu", [1.0, 0.1, 1e-3, 1e-6])
def test_smoothed_epsilon_insensitive_tends_to_the_tube(eps, mu):
    r = np.linspace(-3, 3, 601)
    loss = SmoothedEpsilonInsensitive(epsilon=eps, smoothing=mu)
    gap = loss.value(np.zeros_like(r), r) - np.maximum(0.0, np.abs(r) - eps)
    assert np.all(gap >= -1e-15)
    assert np.all(gap <= 2 * mu * np.log(2) * (1 + 1e-12))
    # at the centre of a zero-width tube both edges contribute log 2: the bound is tight
    if eps == 0:
        np.testing.assert_allclose(loss.value(np.zeros(1), np.zeros(1)), 2 * mu * np.log(2))
    # and the derivative tends to the subgradient sign(r) 1[|r| > eps] off the kinks
    far = np.abs(np.abs(r) - eps) > 50 * mu
    np.testing.assert_allclose(loss.derivative(np.zeros_like(r), r)[far],
                               np.where(np.abs(r[far]) > eps, np.sign(r[far]), 0.0),
                               atol=1e-8)


@pytest.mark.parametrize("cls, kwargs, match", [
    (SmoothedEpsilonInsensitive, dict(epsilon=-0.1), "epsilon"),
    (SmoothedEpsilonInsensitive, dict(smoothing=0.0), "smoothing"),
    (PseudoHuberLoss, dict(delta=0.0), "Huber"),
    (PseudoHuberLoss, dict(delta=np.inf), "Huber"),
])
def test_loss_parameters_are_validated(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cls(**kwargs)


# ---------------------------------------------------------------------------------------
# the smoothed MAE criterion
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("weighted", [False, True])
def test_smoothed_absolute_criterion_gradient(weighted):
    rng = np.random.default_rng(1)
    V = add_bias_column(rng.normal(size=(30, 4)))
    eta = rng.normal(size=30)
    s = rng.uniform(0.2, 3.0, size=30) if weighted else None
    crit = make_criterion("absolute", V, eta, s)
    assert isinstance(crit, SmoothedAbsoluteValidation)
    w = rng.normal(size=5) * 0.3
    J, g = crit.value_and_grad(w)
    terms, om = crit.terms(w)
    assert np.isclose(om.sum(), 1.0) and np.isclose(om @ terms, J)
    h = 1e-6
    fd = np.array([(crit.value_and_grad(w + e)[0] - crit.value_and_grad(w - e)[0]) / (2 * h)
                   for e in np.eye(5) * h])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_squared_criterion_is_the_halved_weighted_mse():
    rng = np.random.default_rng(3)
    V = add_bias_column(rng.normal(size=(40, 3)))
    eta, w = rng.normal(size=40), rng.normal(size=4)
    s = rng.integers(1, 4, size=40).astype(float)
    J, g = make_criterion("squared", V, eta, s).value_and_grad(w)
    r = V @ w - eta
    assert J == pytest.approx(np.average(r**2, weights=s) / 2, rel=1e-12)
    np.testing.assert_allclose(g, V.T @ (s * r) / s.sum(), rtol=1e-12)


@pytest.mark.parametrize("delta", [1e-1, 1e-3, 1e-6])
def test_smoothed_absolute_criterion_tends_to_the_mae(delta):
    rng = np.random.default_rng(2)
    V = add_bias_column(rng.normal(size=(50, 3)))
    eta = rng.normal(size=50)
    w = rng.normal(size=4)
    s = rng.integers(1, 4, size=50).astype(float)
    J = SmoothedAbsoluteValidation(V, eta, s, delta=delta).value_and_grad(w)[0]
    mae = float(np.average(np.abs(V @ w - eta), weights=s))
    # sqrt(r^2 + d^2) - d lies in [|r| - d, |r|]
    assert mae - delta <= J <= mae


# ---------------------------------------------------------------------------------------
# hypergradients against central finite differences
# ---------------------------------------------------------------------------------------

def _regression_data(n, d, seed, sparse=False):
    rng = np.random.default_rng(seed)
    if sparse:
        X = sp.random(n, d, density=0.35, format="csr", random_state=seed,
                      data_rvs=rng.standard_normal)
        Xd = X.toarray()
    else:
        X = Xd = rng.normal(size=(n, d))
    coef = np.zeros(d)
    coef[:3] = [1.5, -1.0, 0.8]
    y = Xd @ coef + 0.3 * rng.normal(size=n) + 0.4
    return X, y


def _folds(X, y, k=2, weights=None):
    Xa = add_bias_column(X)
    idx = np.arange(X.shape[0]) % k
    folds = []
    for f in range(k):
        tr, va = idx != f, idx == f
        wt = None if weights is None else weights[tr]
        wv = None if weights is None else weights[va]
        folds.append(Fold(Xa[tr], y[tr], Xa[va], y[va], wt, wv))
    return tuple(folds)


def _groups(d):
    groups = {"a": [0, 1, 2], "b": [3, 4]}
    if d > 8:
        groups["c"] = list(range(6, 12))
    return groups


def _check_hypergradient(obj, beta, h=1e-5, rtol=1e-4, n_checked=12):
    """The hypergradient in log beta against central differences with relative steps
    beta_k exp(±h), lower level solved to a gradient norm of 1e-12; with many
    hyperparameters, on the first three (the informative features) and a random
    selection of the others, up to ``n_checked``."""
    ev = obj.evaluate(beta, tol=1e-12)
    checked = np.arange(beta.size)
    if beta.size > n_checked:
        rest = np.random.default_rng(0).choice(np.arange(3, beta.size), n_checked - 3,
                                               replace=False)
        checked = np.r_[0:3, np.sort(rest)]
    fd = np.empty(checked.size)
    for i, k in enumerate(checked):
        up, dn = beta.copy(), beta.copy()
        up[k] *= np.exp(h)
        dn[k] *= np.exp(-h)
        fd[i] = (obj.value(up, tol=1e-12) - obj.value(dn, tol=1e-12)) / (2 * h)
    g = (ev.grad * beta)[checked]
    scale = np.max(np.abs(fd))
    assert scale > 1e-6, "a non-trivial derivative must be checked"
    np.testing.assert_allclose(g, fd, rtol=rtol, atol=rtol * scale)
    assert np.isclose(ev.value, obj.value(beta, tol=1e-12), rtol=1e-10)


LAYOUTS = {"tall": (80, 6), "wide": (30, 40)}


@pytest.mark.parametrize("model", ["scalar", "vector", "group"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared"])
def test_regression_hypergradient_matches_central_differences(model, layout, sparse, loss):
    n, d = LAYOUTS[layout]
    X, y = _regression_data(n, d, seed=3, sparse=sparse)
    lower = LowerLevel(l2_penalty=0.05, hinge_smoothing=0.1, l1_smoothing=0.05,
                       loss=loss, epsilon=0.1, penalize_intercept=False)
    hyper = make_hyper_model(model, d, groups=_groups(d) if model == "group" else None,
                             penalize_intercept=False)
    obj = BilevelObjective(_folds(X, y), lower, hyper, loss="squared")
    beta = np.random.default_rng(4).uniform(0.02, 0.15, size=hyper.n_hyper)
    _check_hypergradient(obj, beta)


@pytest.mark.parametrize("case", ["learn_l2", "huber_mae", "cg_sparse", "weights",
                                  "penalised_intercept"])
def test_regression_hypergradient_other_settings(case):
    """The learned ridge weight, the Huber loss with the smoothed-MAE criterion, the
    truncated Newton-CG solver (iterative adjoint solve) on sparse X, row weights of the
    loss and the criterion, and a penalised intercept."""
    n, d = 60, 8
    X, y = _regression_data(n, d, seed=5, sparse=case == "cg_sparse")
    kw = dict(l2_penalty=0.05, hinge_smoothing=0.1, l1_smoothing=0.05,
              loss="epsilon_insensitive", epsilon=0.1, penalize_intercept=False)
    crit, weights, hyper_kw, model = "squared", None, {}, "vector"
    if case == "learn_l2":
        hyper_kw["learn_l2"] = True
    elif case == "huber_mae":
        kw.update(loss="huber", epsilon=0.5)
        crit = "absolute"
    elif case == "cg_sparse":
        kw["solver"] = "cg"
    elif case == "weights":
        weights = np.random.default_rng(6).integers(1, 4, size=n).astype(float)
        model = "group"
        hyper_kw["groups"] = _groups(d)
    else:
        kw["penalize_intercept"] = True
        model = "scalar"
    lower = LowerLevel(**kw)
    hyper = make_hyper_model(model, d, penalize_intercept=kw["penalize_intercept"],
                             **hyper_kw)
    obj = BilevelObjective(_folds(X, y, k=3, weights=weights), lower, hyper, loss=crit)
    beta = np.random.default_rng(7).uniform(0.02, 0.15, size=hyper.n_hyper)
    _check_hypergradient(obj, beta)


# ---------------------------------------------------------------------------------------
# the lower level against scipy.optimize.minimize
# ---------------------------------------------------------------------------------------

def _reference_objective(Xa, y, loss, eps, mu, alpha, coord_weight, groups, gamma,
                         penalize_intercept, sample_weight):
    r"""E(w) of the regression lower level, written from its definition:
    :math:`\sum_i \omega_i\ell(x_i^\top w - y_i) + \frac\alpha2\|w_{\rm pen}\|^2
    + \sum_k b_k(\sqrt{\gamma^2 + \|w_k\|^2} - \gamma)`, :math:`\omega = s/\sum s`;
    returns ``f(w) -> (value, gradient)``."""
    om = np.full(Xa.shape[0], 1.0 / Xa.shape[0]) if sample_weight is None else \
        sample_weight / sample_weight.sum()
    ridge = np.ones(Xa.shape[1])
    if not penalize_intercept:
        ridge[-1] = 0.0

    def f(w):
        r = Xa @ w - y
        if loss == "epsilon_insensitive":
            a, b = (r - eps) / mu, (-r - eps) / mu
            val = mu * (np.logaddexp(0, a) + np.logaddexp(0, b))
            der = expit(a) - expit(b)
        elif loss == "squared":
            val, der = r**2 / 2, r
        else:
            q = np.sqrt(1 + (r / eps) ** 2)
            val, der = eps**2 * (q - 1), r / q
        F = om @ val + alpha / 2 * np.sum(ridge * w**2)
        G = Xa.T @ (om * der) + alpha * ridge * w
        for k in np.unique(groups[groups >= 0]):
            m = groups == k
            s = np.sqrt(gamma**2 + w[m] @ w[m])
            F += coord_weight[k] * (s - gamma)
            G[m] += coord_weight[k] * w[m] / s
        return F, G

    return f


@pytest.mark.parametrize("loss, eps", [("epsilon_insensitive", 0.2), ("squared", 0.1),
                                       ("huber", 0.3)])
@pytest.mark.parametrize("solver", ["newton", "woodbury", "cg", "lbfgs"])
def test_lower_level_matches_scipy_minimize(loss, eps, solver):
    rng = np.random.default_rng(8)
    n, d = 40, 6
    X = rng.normal(size=(n, d))
    y = X @ np.array([1.0, -2.0, 0.0, 0.5, 0.0, 0.0]) + rng.standard_t(3, size=n)
    Xa = add_bias_column(X)
    hyper = make_hyper_model("group", d, groups={"g": [3, 4]}, penalize_intercept=True)
    b = rng.uniform(0.01, 0.3, size=hyper.n_hyper)
    sw = rng.integers(1, 4, size=n).astype(float)
    lower = LowerLevel(l2_penalty=0.02, hinge_smoothing=0.1, l1_smoothing=0.02, loss=loss,
                       epsilon=eps, solver=solver, max_iter=5000)
    P = lower.problem(Xa, y, hyper.penalty_groups, hyper.weights(b), sample_weight=sw)
    w = lower.solve(P, tol=1e-10).coef
    f = _reference_objective(Xa, y, loss, eps, 0.1, 0.02, hyper.weights(b),
                             hyper.penalty_groups, 0.02, True, sw)
    ref = minimize(f, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                   options=dict(gtol=1e-11, ftol=1e-16, maxiter=20000, maxcor=30))
    # the same objective value as ours, and our solution is stationary for it
    np.testing.assert_allclose(P.value(w), f(w)[0], rtol=1e-12)
    assert np.linalg.norm(f(w)[1]) < 1e-8
    assert f(w)[0] <= ref.fun + 1e-12
    np.testing.assert_allclose(w, ref.x, atol=1e-5)


def test_lower_level_unpenalised_intercept_matches_scipy():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(30, 50))  # wide: the sample-space (Woodbury) Newton system
    y = X[:, 0] - X[:, 1] + 5.0 + 0.1 * rng.normal(size=30)
    Xa = add_bias_column(X)
    hyper = make_hyper_model("vector", 50, penalize_intercept=False)
    b = rng.uniform(0.005, 0.05, size=hyper.n_hyper)
    lower = LowerLevel(l2_penalty=0.01, hinge_smoothing=0.05, l1_smoothing=0.01,
                       loss="epsilon_insensitive", epsilon=0.1, penalize_intercept=False)
    P = lower.problem(Xa, y, hyper.penalty_groups, hyper.weights(b))
    w = lower.solve(P, tol=1e-10).coef
    f = _reference_objective(Xa, y, "epsilon_insensitive", 0.1, 0.05, 0.01,
                             hyper.weights(b), hyper.penalty_groups, 0.01, False, None)
    ref = minimize(f, np.zeros(51), jac=True, method="BFGS", options=dict(gtol=1e-10))
    assert np.linalg.norm(f(w)[1]) < 1e-8
    assert f(w)[0] <= ref.fun + 1e-12
    np.testing.assert_allclose(w, ref.x, atol=1e-4)
    # the unpenalised intercept carries the offset of y in full
    assert abs(w[-1] - 5.0) < 0.5


# ---------------------------------------------------------------------------------------
# agreement with scikit-learn's elastic net
# ---------------------------------------------------------------------------------------

def _en_data(seed=10, n=60, d=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, size=d) + rng.normal(size=d)
    coef = np.zeros(d)
    coef[[0, 2, 5]] = [2.0, -1.0, 0.5]
    y = X @ coef + 3.0 + 0.5 * rng.normal(size=n)
    return X, y


def _solve_squared(X, y, alpha, weights, sample_weight=None, gamma=1e-7, solver="newton"):
    """Our lower level with the squared loss, an unpenalised intercept and the given
    per-feature L1 weights, smoothing gamma (a cold start goes by continuation)."""
    d = X.shape[1]
    hyper = make_hyper_model("vector", d, penalize_intercept=False)
    lower = LowerLevel(l2_penalty=alpha, l1_smoothing=gamma, loss="squared",
                       penalize_intercept=False, solver=solver, max_iter=2000)
    P = lower.problem(add_bias_column(X), y, hyper.penalty_groups, np.asarray(weights, float),
                      sample_weight=sample_weight)
    w = lower.solve(P, tol=1e-11).coef
    return w[:-1], w[-1]


@pytest.mark.parametrize("alpha, beta", [(0.01, 0.05), (0.5, 0.2), (0.05, 0.6)])
@pytest.mark.parametrize("weighted", [False, True])
def test_squared_loss_scalar_weight_is_sklearn_elastic_net(alpha, beta, weighted):
    r"""With the squared loss :math:`\ell(r) = r^2/2`, an unpenalised intercept b, one L1
    weight β and the L1 smoothing γ → 0, our lower level minimises

    .. math::
        \frac{1}{2\sum_i s_i}\sum_i s_i(y_i - x_i^\top w - b)^2
            + \frac{\alpha}{2}\|w\|^2 + \beta\|w\|_1,

    and scikit-learn's ``ElasticNet(alpha=a, l1_ratio=ρ, fit_intercept=True)`` minimises
    :math:`\frac{1}{2\sum s_i}\sum_i s_i(y_i - x_i^\top w - b)^2 + a\rho\|w\|_1
    + \frac{a(1-\rho)}{2}\|w\|^2` (its sample weights are rescaled to sum to n, the
    same normalisation): the same problem with :math:`a = \alpha + \beta`,
    :math:`\rho = \beta/(\alpha + \beta)`."""
    X, y = _en_data()
    sw = np.random.default_rng(11).integers(1, 5, size=y.size).astype(float) if weighted \
        else None
    w, b = _solve_squared(X, y, alpha, np.full(X.shape[1], beta), sw)
    ref = ElasticNet(alpha=alpha + beta, l1_ratio=beta / (alpha + beta), tol=1e-14,
                     max_iter=100_000).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(w, ref.coef_, atol=1e-5)
    assert abs(b - ref.intercept_) < 1e-5
    # the same zero pattern (ours are O(gamma) where the lasso's are exactly zero)
    np.testing.assert_array_equal(np.abs(w) > 1e-4, ref.coef_ != 0)
    assert np.any(ref.coef_ == 0) or beta < 0.1


@pytest.mark.parametrize("solver", ["woodbury", "cg"])
def test_squared_loss_elastic_net_with_more_features_than_rows(solver):
    """The mapping of the previous test on 30 rows and 50 features, solved in the sample
    space (Woodbury) and by truncated Newton-CG: the ridge makes the solution unique."""
    rng = np.random.default_rng(15)
    X = rng.normal(size=(30, 50))
    y = X[:, :3] @ np.array([2.0, -1.0, 1.0]) + 0.3 * rng.normal(size=30) + 1.0
    alpha, beta = 0.05, 0.1
    w, b = _solve_squared(X, y, alpha, np.full(50, beta), solver=solver)
    ref = ElasticNet(alpha=alpha + beta, l1_ratio=beta / (alpha + beta), tol=1e-14,
                     max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(w, ref.coef_, atol=1e-5)
    assert abs(b - ref.intercept_) < 1e-5
    assert 0 < np.count_nonzero(ref.coef_) < 30


def test_per_feature_weights_are_lasso_on_rescaled_columns():
    r"""glmnet's ``penalty.factor``: fixed per-feature weights :math:`\beta_j = \lambda
    f_j`. Substituting :math:`v_j = f_j w_j` (columns :math:`x_j/f_j`) turns
    :math:`\sum_j\beta_j|w_j|` into :math:`\lambda\|v\|_1` but the ridge
    :math:`\frac\alpha2\sum_j w_j^2` into :math:`\frac\alpha2\sum_j v_j^2/f_j^2`, a
    per-column ridge that ``ElasticNet`` cannot express. Two exact comparisons:

    * with α negligible (1e-9): ``Lasso(alpha=λ, fit_intercept=True)`` on the columns
      :math:`x_j/f_j`, coefficients back-scaled :math:`w_j = v_j/f_j`;
    * with a real ridge α: the ridge as data. With y and X centred (the unpenalised
      intercept is :math:`b = \bar y - \bar x^\top w`), append d rows
      :math:`\sqrt{n\alpha}\,\mathrm{diag}(1/f)` with target 0 to the rescaled columns;
      then :math:`\frac{1}{2n}\|\tilde y - \tilde X v\|^2 = \frac{1}{2n}\|y_c - X_c w\|^2
      + \frac\alpha2\|w\|^2`, and ``Lasso(alpha=λn/(n+d), fit_intercept=False)`` on the
      n + d rows (it divides by n + d) is our problem.
    """
    X, y = _en_data(seed=12)
    n, d = X.shape
    f = np.array([0.2, 3.0, 1.0, 0.5, 2.0, 1.5, 0.7, 4.0])
    lam = 0.08

    w, b = _solve_squared(X, y, 1e-9, lam * f)
    ref = Lasso(alpha=lam, tol=1e-14, max_iter=100_000).fit(X / f, y)
    np.testing.assert_allclose(w, ref.coef_ / f, atol=1e-5)
    assert abs(b - ref.intercept_) < 1e-5

    alpha = 0.3
    w, b = _solve_squared(X, y, alpha, lam * f)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    Xt = np.vstack([Xc / f, np.sqrt(n * alpha) * np.diag(1.0 / f)])
    yt = np.r_[yc, np.zeros(d)]
    ref = Lasso(alpha=lam * n / (n + d), fit_intercept=False, tol=1e-14,
                max_iter=100_000).fit(Xt, yt)
    np.testing.assert_allclose(w, ref.coef_ / f, atol=1e-5)
    assert abs(b - (y.mean() - X.mean(axis=0) @ (ref.coef_ / f))) < 1e-5
    # the heavily weighted features are the ones removed
    assert np.all(w[f >= 3.0] == pytest.approx(0.0, abs=1e-4))
    assert abs(w[0]) > 1.0


# ---------------------------------------------------------------------------------------
# the model's derivatives in its weights, its empty-model weight, its validation
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared", "huber"])
def test_solution_sensitivity_matches_finite_differences(loss):
    r"""The implicit function theorem's :math:`\partial\hat w/\partial b\,\Delta b =
    -H^{-1}(\nabla_{wb}E)\Delta b` and :math:`\partial\hat w/\partial\alpha`, from the
    model's ``weight_jvp``/``l2_jvp`` and its Newton factor, against central differences
    of the solution; and ``weight_vjp``/``l2_vjp`` are their adjoints."""
    rng = np.random.default_rng(13)
    n, d = 50, 7
    X = rng.normal(size=(n, d))
    y = X[:, :2] @ np.array([1.0, -0.7]) + 0.4 * rng.normal(size=n)
    Xa = add_bias_column(X)
    hyper = make_hyper_model("group", d, groups={"g": [2, 3, 4]}, penalize_intercept=False)
    lower = LowerLevel(l2_penalty=0.05, hinge_smoothing=0.1, l1_smoothing=0.05, loss=loss,
                       epsilon=0.2, penalize_intercept=False)
    b = rng.uniform(0.02, 0.1, size=hyper.n_hyper)
    alpha = 0.05

    def solve(bb, aa):
        P = lower.problem(Xa, y, hyper.penalty_groups, hyper.weights(bb), l2_penalty=aa)
        return P, lower.solve(P, tol=1e-13)

    P, res = solve(b, alpha)
    w, F = res.coef, lower.newton_factor(P, res)
    h = 1e-6
    for k in range(hyper.n_hyper):
        e = np.zeros(hyper.n_hyper)
        e[k] = h * b[k]
        fd = (solve(b + e, alpha)[1].coef - solve(b - e, alpha)[1].coef) / (2 * h * b[k])
        ift = -F.solve(lower.weight_jvp(P, w, e / (h * b[k])))
        np.testing.assert_allclose(ift, fd, rtol=1e-5, atol=1e-7 * np.max(np.abs(fd)))
    fd = (solve(b, alpha * (1 + h))[1].coef - solve(b, alpha * (1 - h))[1].coef) \
        / (2 * h * alpha)
    np.testing.assert_allclose(-F.solve(lower.l2_jvp(P, w, 1.0)), fd, rtol=1e-5,
                               atol=1e-7 * np.max(np.abs(fd)))
    v, db = rng.normal(size=d + 1), rng.normal(size=hyper.n_hyper)
    assert np.isclose(lower.weight_vjp(P, w, v) @ db, v @ lower.weight_jvp(P, w, db))
    assert np.isclose(lower.l2_vjp(P, w, v) * 0.3, v @ lower.l2_jvp(P, w, 0.3))


@pytest.mark.parametrize("weighted", [False, True])
def test_zero_penalty_empties_the_squared_loss_model(weighted):
    r"""With the squared loss, centred columns and a centred target, :math:`w = 0` with
    the intercept at the (weighted) mean is optimal for the lasso exactly when every
    weight is at least :math:`\max_j|\frac{1}{\sum s}\sum_i s_i(0 - y_i)x_{ij}|`
    (glmnet's :math:`\lambda_{\max}`); the Pseudo-Huber penalty then leaves
    coefficients of order γ, and well below it the model is not empty."""
    rng = np.random.default_rng(14)
    n, d = 70, 9
    sw = rng.integers(1, 5, size=n).astype(float) if weighted else np.ones(n)
    X = rng.normal(size=(n, d))
    X -= sw @ X / sw.sum()
    y = X[:, 0] - 0.5 * X[:, 4] + rng.normal(size=n)
    y -= sw @ y / sw.sum()
    gamma = 1e-3
    lower = LowerLevel(l2_penalty=1e-3, l1_smoothing=gamma, loss="squared",
                       penalize_intercept=False, solver="newton")
    s = sw if weighted else None
    zp = lower.zero_penalty(X, y, s)
    np.testing.assert_allclose(zp, np.max(np.abs(X.T @ (sw * y))) / sw.sum(), rtol=1e-12)
    hyper = make_hyper_model("scalar", d, penalize_intercept=False)
    for factor, empty in [(1.5, True), (0.5, False)]:
        P = lower.problem(add_bias_column(X), y, hyper.penalty_groups,
                          hyper.weights([factor * zp]), sample_weight=s)
        w = lower.solve(P, tol=1e-11).coef[:-1]
        assert (np.max(np.abs(w)) <= gamma) == empty


@pytest.mark.parametrize("kwargs, match", [
    (dict(loss="absolute"), "loss must be one of"),
    (dict(loss="epsilon_insensitive", epsilon=-1.0), "epsilon"),
    (dict(loss="huber", epsilon=0.0), "Huber"),
    (dict(loss="squared", epsilon=np.nan), "epsilon"),
    (dict(loss="squared", l1_smoothing=0.0), "exact L1 mode"),
    (dict(loss="epsilon_insensitive", hinge_smoothing=0.0), "hinge_smoothing"),
])
def test_regression_lower_level_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LowerLevel(**kwargs)
