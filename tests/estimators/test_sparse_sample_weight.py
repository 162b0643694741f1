"""``ElasticNetSVC(sample_weight=...)``: an integer weight fits the same model as
copies of the row, a zero weight the model without it, on every lower-level solver
(dense Newton, truncated Newton-CG on sparse X, the exact weighted-L1 mode); bad weights
are refused naming the parameter."""

import numpy as np
import pytest
import scipy.sparse as sp

from bisvm import ElasticNetSVC


def _data(n=80, d=6, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] - 0.7 * X[:, 1] + 0.4 * rng.normal(size=n)
    if classes == 2:
        y = np.where(score > 0, "pos", "neg")
    else:
        y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])).astype(str)
    return X, y


SOLVERS = [dict(solver="newton"), dict(solver="cg", sparse=True),
           dict(solver="newton", l1_smoothing=0.0), dict(solver="newton", classes=3)]


def _est(case):
    kw = {k: v for k, v in case.items() if k not in ("sparse", "classes")}
    return ElasticNetSVC(0.02, tol=1e-10, **kw)


def _X(X, case):
    return sp.csr_matrix(X) if case.get("sparse") else X


@pytest.mark.parametrize("case", SOLVERS)
def test_integer_weight_equals_copies_and_zero_equals_dropping(case):
    X, y = _data(classes=case.get("classes", 2))
    sw = np.ones(len(y))
    sw[[1, 5, 9]] = [2.0, 3.0, 2.0]
    sw[[4, 11]] = 0.0
    rows = np.repeat(np.arange(len(y)), sw.astype(int))
    a = _est(case).fit(_X(X, case), y, sample_weight=sw)
    b = _est(case).fit(_X(X[rows], case), y[rows])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-6)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-6)


def test_ones_and_rescaled_weights_give_the_unweighted_model():
    X, y = _data(seed=1)
    ref = ElasticNetSVC(0.02, tol=1e-10).fit(X, y)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    for w, same in ((np.ones(len(y)), True), (5.0 * np.ones(len(y)), True), (sw, False)):
        est = ElasticNetSVC(0.02, tol=1e-10).fit(X, y, sample_weight=w)
        close = np.allclose(est.coef_, ref.coef_, atol=1e-8)
        assert close == same
    a = ElasticNetSVC(0.02, tol=1e-10).fit(X, y, sample_weight=sw)
    b = ElasticNetSVC(0.02, tol=1e-10).fit(X, y, sample_weight=7.0 * sw)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-8)


@pytest.mark.parametrize("bad,match", [
    ("negative", "non-negative"), ("nan", "finite"), ("inf", "finite"),
    ("short", "shape"), ("class", "class 'neg'")])
def test_bad_weights_are_refused(bad, match):
    X, y = _data(seed=3)
    sw = np.ones(len(y))
    if bad == "negative":
        sw[0] = -1.0
    elif bad == "nan":
        sw[0] = np.nan
    elif bad == "inf":
        sw[0] = np.inf
    elif bad == "short":
        sw = sw[:-1]
    else:
        sw[y == "neg"] = 0.0
    with pytest.raises(ValueError, match=f"sample_weight.*{match}|{match}.*sample_weight"
                       if bad != "class" else "sample_weight is zero on every row of class"):
        ElasticNetSVC(0.02).fit(X, y, sample_weight=sw)
