"""``BilevelSVC(sample_weight=...)``: the weights enter the lower-level loss of
every fold and of the refit, and the validation criterion's mean.

References: on one fold, an integer weight is the same upper-level value and KKT
hypergradient as copies of the row (on both sides of the fold), and the hypergradient
agrees with central finite differences of the weighted value; on the estimator, weights
of ones (or any constant) give the unweighted model, the features of zero-weight rows do
not matter, and bad weights are refused naming the parameter."""

import numpy as np
import pytest
import scipy.sparse as sp

from bisvm import BilevelSVC
from bisvm.selection.bilevel import (
    BilevelObjective,
    Fold,
    LowerLevel,
    make_hyper_model,
)
from bisvm.selection.criteria import balanced_weights
from bisvm.solvers.primal.lower_level import add_bias_column


def _data(n=90, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] - 0.8 * X[:, 1] + 0.5 * X[:, 2] + 0.6 * rng.normal(size=n)
    return X, np.where(score > 0, 1.0, -1.0)


def _fold_pair(seed=0, sparse=False):
    X, y = _data(seed=seed)
    Xa = add_bias_column(sp.csr_matrix(X) if sparse else X)
    tr, va = np.arange(60), np.arange(60, 90)
    rng = np.random.default_rng(seed + 1)
    sw = rng.integers(0, 4, size=90).astype(float)
    sw[[0, 60]] = 1.0  # each side keeps some weight
    weighted = Fold(Xa[tr], y[tr], Xa[va], y[va], sw[tr], sw[va])
    rt, rv = np.repeat(tr, sw[tr].astype(int)), np.repeat(va, sw[va].astype(int))
    copied = Fold(Xa[rt], y[rt], Xa[rv], y[rv])
    return weighted, copied


@pytest.mark.parametrize("kind,loss,balanced,sparse", [
    ("vector", "squared_hinge", False, False),
    ("scalar", "scaled_squared_hinge", False, False),
    ("vector", "scaled_squared_hinge", True, False),
    ("vector", "squared_hinge", False, True),
])
def test_integer_weights_equal_copies_in_value_and_hypergradient(kind, loss, balanced,
                                                                 sparse):
    weighted, copied = _fold_pair(sparse=sparse)
    d = weighted.X_train.shape[1] - 1
    lower = LowerLevel(l2_penalty=0.01)
    hyper = make_hyper_model(kind, d)
    beta = np.full(hyper.n_hyper, 0.02)
    if kind == "vector":
        beta = beta * np.linspace(0.5, 2.0, hyper.n_hyper)
    a = BilevelObjective((weighted,), lower, hyper, loss=loss, balanced=balanced)
    b = BilevelObjective((copied,), lower, hyper, loss=loss, balanced=balanced)
    ea, eb = a.evaluate(beta, tol=1e-11), b.evaluate(beta, tol=1e-11)
    np.testing.assert_allclose(ea.coefs[0], eb.coefs[0], rtol=1e-7, atol=1e-9)
    assert ea.value == pytest.approx(eb.value, rel=1e-8)
    np.testing.assert_allclose(ea.grad, eb.grad, rtol=1e-6, atol=1e-10)


def test_weighted_hypergradient_matches_finite_differences():
    weighted, _ = _fold_pair(seed=3)
    d = weighted.X_train.shape[1] - 1
    hyper = make_hyper_model("vector", d)
    obj = BilevelObjective((weighted,), LowerLevel(l2_penalty=0.01), hyper,
                           loss="squared_hinge")
    beta = 0.02 * np.linspace(0.5, 2.0, hyper.n_hyper)
    g = obj.evaluate(beta, tol=1e-12).grad
    h = 1e-6
    fd = np.array([(obj.value(beta + h * e, tol=1e-12) - obj.value(beta - h * e, tol=1e-12))
                   / (2 * h) for e in np.eye(beta.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-7)


def test_balanced_weights_with_row_weights_make_equal_class_totals():
    eta = np.array([1, 1, 1, -1, -1, 1.0])
    om = np.array([1, 2, 0, 3, 1, 4.0])
    s = balanced_weights(eta, om)
    assert s[eta > 0].sum() == pytest.approx(1.0) and s[eta < 0].sum() == pytest.approx(1.0)
    assert s[2] == 0.0
    np.testing.assert_allclose(balanced_weights(eta), balanced_weights(eta, np.ones(6)))


def _fit(X, y, sw=None, **kw):
    est = BilevelSVC(random_state=0, tol=1e-5, **kw)
    return est.fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("kw", [dict(model="scalar"), dict(model="vector")])
def test_constant_weights_give_the_unweighted_model(kw):
    X, y = _data(n=120, seed=5)
    ref = _fit(X, y, **kw)
    for c in (1.0, 3.5):
        est = _fit(X, y, np.full(len(y), c), **kw)
        np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(est.penalty_weights_, ref.penalty_weights_, rtol=1e-6)


@pytest.mark.parametrize("sparse", [False, True])
def test_features_of_zero_weight_rows_do_not_matter(sparse):
    X, y = _data(n=120, seed=6)
    rng = np.random.default_rng(7)
    sw = rng.uniform(0.5, 2.0, len(y))
    zero = rng.choice(len(y), 15, replace=False)
    sw[zero] = 0.0
    X2 = X.copy()
    X2[zero] = 50.0 * rng.normal(size=(15, X.shape[1]))
    conv = sp.csr_matrix if sparse else np.asarray
    a = _fit(conv(X), y, sw)
    b = _fit(conv(X2), y, sw)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(a.penalty_weights_, b.penalty_weights_, rtol=1e-6)
    # and the weights do change the model
    c = _fit(conv(X), y)
    assert not np.allclose(a.coef_, c.coef_, atol=1e-4)


def test_weighted_class_gets_more_of_its_rows_right():
    X, y = _data(n=200, seed=8)
    sw = np.where(y > 0, 5.0, 1.0)
    plain, heavy = _fit(X, y, model="scalar"), _fit(X, y, sw, model="scalar")
    recall = [np.mean(m.predict(X)[y > 0] == 1.0) for m in (plain, heavy)]
    assert recall[1] >= recall[0]
    assert heavy.decision_function(X).mean() > plain.decision_function(X).mean()


@pytest.mark.parametrize("bad,match", [
    ("negative", "non-negative"), ("nan", "finite"), ("short", "shape"),
    ("class", "zero on every row of class"), ("fold", "zero on every training or every")])
def test_bad_weights_are_refused_naming_the_parameter(bad, match):
    X, y = _data(n=60, seed=9)
    sw = np.ones(len(y))
    if bad == "negative":
        sw[0] = -1.0
    elif bad == "nan":
        sw[0] = np.nan
    elif bad == "short":
        sw = sw[:-1]
    elif bad == "class":
        sw[y < 0] = 0.0
    else:
        sw[:] = 0.0
        sw[[np.flatnonzero(y > 0)[0], np.flatnonzero(y < 0)[0]]] = 1.0
    with pytest.raises(ValueError, match="sample_weight") as e:
        BilevelSVC(model="scalar", random_state=0).fit(X, y, sample_weight=sw)
    assert match in str(e.value)
