"""Complementary pairs, selected features and the Shah-Samworth bounds
(:mod:`bisvm.selection.stability`).

The bounds are checked on constructed selection procedures whose expected number of
CPSS selections is known in closed form: with one pair and tau = 1 the worst-case bound
q^2/((2 tau - 1) p) is attained with equality by a procedure that selects each feature
independently with probability theta, and for other (B, tau) the Monte Carlo mean stays
under both bounds.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression

from bisvm.selection.stability import (
    complementary_pairs,
    effective_threshold,
    false_selection_bound,
    fit_subsample,
    selected_features,
    unimodal_false_selection_bound,
)


@pytest.mark.parametrize("n", [20, 21, 2, 3])
def test_pairs_are_disjoint_halves_covering_the_rows(n):
    pairs = complementary_pairs(n, 30, random_state=0)
    assert len(pairs) == 30
    for a, b in pairs:
        assert a.size == b.size == n // 2
        assert np.intersect1d(a, b).size == 0
        assert np.all(np.diff(a) > 0) and np.all(np.diff(b) > 0)
        union = np.union1d(a, b)
        assert union.size == 2 * (n // 2)  # every row but one when n is odd
        assert union.min() >= 0 and union.max() < n


def test_pairs_are_stratified_by_class():
    labels = np.repeat(["a", "b", "c"], [11, 6, 25])
    rng = np.random.default_rng(0)
    labels = labels[rng.permutation(labels.size)]
    n_c = {c: int(np.sum(labels == c)) for c in "abc"}
    for a, b in complementary_pairs(labels.size, 40, labels=labels, random_state=1):
        assert a.size == b.size == labels.size // 2
        for half in (a, b):
            for c in "abc":
                # f = 1/2 of each class in each half, up to one row
                assert abs(np.sum(labels[half] == c) - n_c[c] / 2) <= 0.5


def test_each_row_is_left_out_equally_often():
    # n odd: one row is in neither half; systematic sampling with a random order and
    # offset leaves out each row with probability 1/n
    n, B = 7, 7000
    out = np.zeros(n)
    for a, b in complementary_pairs(n, B, random_state=3):
        out[np.setdiff1d(np.arange(n), np.union1d(a, b))] += 1
    assert out.sum() == B
    expected = B / n
    assert np.all(np.abs(out - expected) < 5 * math.sqrt(expected))


def test_smaller_fraction_gives_disjoint_subsamples_of_that_size():
    labels = np.tile([0, 1], 25)
    for a, b in complementary_pairs(50, 20, labels=labels, sample_fraction=0.3,
                                    random_state=0):
        assert a.size == b.size == 15
        assert np.intersect1d(a, b).size == 0
        for half in (a, b):
            assert abs(np.sum(labels[half]) - 7.5) <= 0.5


def test_groups_stay_on_one_side():
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 9, size=60)  # 9 groups of unequal sizes
    labels = (groups % 2).astype(int)  # one class per group
    for a, b in complementary_pairs(60, 25, labels=labels, groups=groups, random_state=2):
        ga, gb = np.unique(groups[a]), np.unique(groups[b])
        assert np.intersect1d(ga, gb).size == 0
        assert ga.size == gb.size == 4  # floor(9/2) groups per half
        # whole groups: every row of a chosen group is in the half
        assert a.size == np.isin(groups, ga).sum()
        # the groups' classes are stratified (5 groups of class 0, 4 of class 1): each
        # half holds its share 4 * 4/9 of class-1 groups, up to one
        for g in (ga, gb):
            assert abs(np.sum(g % 2) - 16 / 9) < 1


def test_pairs_are_reproducible():
    p1 = complementary_pairs(31, 5, labels=np.arange(31) % 3, random_state=7)
    p2 = complementary_pairs(31, 5, labels=np.arange(31) % 3, random_state=7)
    for (a1, b1), (a2, b2) in zip(p1, p2):
        assert np.array_equal(a1, a2) and np.array_equal(b1, b2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_samples=1, n_pairs=3), "at least 2 samples"),
    (dict(n_samples=10, n_pairs=3, sample_fraction=0.6), "sample_fraction"),
    (dict(n_samples=10, n_pairs=3, sample_fraction=0.0), "sample_fraction"),
    (dict(n_samples=10, n_pairs=3, groups=np.zeros(10)), "sample groups"),
    (dict(n_samples=10, n_pairs=3, groups=np.zeros(9)), "groups must hold"),
])
def test_pairs_refuse_what_cannot_be_drawn(kwargs, match):
    with pytest.raises(ValueError, match=match):
        complementary_pairs(**kwargs)


class _Fixed(BaseEstimator):
    """A fitted-looking object exposing one kind of selection."""

    def __init__(self, **attrs):
        for k, v in attrs.items():
            setattr(self, k, v)


def test_selected_features_reads_each_kind_of_selection():
    mask = np.array([True, False, True, False])
    assert np.array_equal(selected_features(_Fixed(support_=mask), 4), mask)
    coef = np.array([[0.0, 0.0, 1.0, 0.0], [2.0, 0.0, 0.0, 0.0]])  # one row per class
    assert np.array_equal(selected_features(_Fixed(coef_=coef), 4), mask)
    imp = np.array([0.3, 0.0, 0.7, 0.0])
    assert np.array_equal(selected_features(_Fixed(feature_importances_=imp), 4), mask)
    X = np.random.default_rng(0).normal(size=(40, 4))
    lr = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=0.5).fit(X, X[:, 0] > 0)
    assert np.array_equal(selected_features(lr, 4), lr.coef_.ravel() != 0)
    with pytest.raises(TypeError, match="exposes no selection"):
        selected_features(_Fixed(), 4)
    with pytest.raises(ValueError, match="shape"):
        selected_features(_Fixed(support_=mask), 5)


def test_worst_case_bound_is_the_formula():
    # q^2 / ((2 tau - 1) p): Shah & Samworth's Theorem 1 with theta = q/p
    assert false_selection_bound(4.0, 100, 0.75) == pytest.approx(16 / (0.5 * 100))
    assert false_selection_bound(2.5, 10, 1.0) == pytest.approx(0.625)
    for tau in (0.5, 0.2, 1.01):
        with pytest.raises(ValueError, match="threshold"):
            false_selection_bound(3.0, 10, tau)


def test_unimodal_bound_constants():
    B, q, p = 50, 5.0, 400
    # tau = 0.6 (on the 1/(2B) grid): C = 1 / (2 (2 tau - 1 - 1/(2B)))
    c = 1 / (2 * (0.2 - 0.01))
    assert unimodal_false_selection_bound(q, p, 0.6, B) == pytest.approx(c * q**2 / p)
    # tau = 0.9: C = 4 (1 - tau + 1/(2B)) / (1 + 1/B)
    c = 4 * (0.1 + 0.01) / (1 + 0.02)
    assert unimodal_false_selection_bound(q, p, 0.9, B) == pytest.approx(c * q**2 / p)
    # a threshold between grid points selects what the next grid point selects
    assert effective_threshold(0.601, B) == pytest.approx(0.61)
    assert effective_threshold(0.6, B) == pytest.approx(0.6)
    assert unimodal_false_selection_bound(q, p, 0.601, B) == \
        pytest.approx(unimodal_false_selection_bound(q, p, 0.61, B))
    # tighter than the worst case wherever it is stated
    for tau in np.linspace(0.55, 1.0, 46):
        u = unimodal_false_selection_bound(q, p, tau, B)
        assert u < false_selection_bound(q, p, tau)
    # not stated below 1/2 + min(theta^2, 1/(2B) + 3 theta^2 / 4), nor for theta > 1/sqrt 3
    # (theta = 1/4: 1/2 + min(0.0625, 0.01 + 0.046875) = 0.556875)
    assert math.isnan(unimodal_false_selection_bound(100.0, p, 0.55, B))
    assert not math.isnan(unimodal_false_selection_bound(100.0, p, 0.56, B))
    assert math.isnan(unimodal_false_selection_bound(250.0, 400, 0.9, B))


class ColumnSumSelector(BaseEstimator):
    """Selects column k when its sum over the rows fitted exceeds ``cut``: on standard
    normal columns, independently across columns and across disjoint subsamples, each
    with probability Phi(-cut / sqrt(m))."""

    def __init__(self, cut=0.0):
        self.cut = cut

    def fit(self, X, y):
        self.support_ = X.sum(axis=0) > self.cut
        return self


def _cpss_count(X, selector, n_pairs, tau, seed):
    pairs = complementary_pairs(X.shape[0], n_pairs, random_state=seed)
    y = np.zeros(X.shape[0])
    masks = np.array([fit_subsample(selector, X, y, rows, {}, None)[0]
                      for pair in pairs for rows in pair])
    freq = masks.mean(axis=0)
    return int(np.sum(freq >= tau)), masks.sum(axis=1).mean()


def test_worst_case_bound_is_attained_by_independent_selection():
    # one pair and tau = 1: a feature is kept when both halves select it, probability
    # theta^2 for each of the p (noise) features, so E = p theta^2 = q^2 / p, the bound
    p, m, theta, R = 200, 10, 0.3, 60
    cut = -norm.ppf(theta) * math.sqrt(m)
    sel = ColumnSumSelector(cut)
    rng = np.random.default_rng(0)
    counts, qs = [], []
    for r in range(R):
        X = rng.normal(size=(2 * m, p))
        c, q = _cpss_count(X, sel, 1, 1.0, r)
        counts.append(c)
        qs.append(q)
    q = p * theta
    bound = false_selection_bound(q, p, 1.0)
    assert bound == pytest.approx(p * theta**2)
    se = np.std(counts) / math.sqrt(R)
    assert abs(np.mean(counts) - bound) < 4 * se
    assert abs(np.mean(qs) - q) < 4 * np.std(qs) / math.sqrt(R)


def test_bound_holds_for_several_pairs():
    # B pairs drawn from the same rows are dependent; the bound needs no independence
    # between pairs (Markov's inequality on the mean over pairs)
    p, m, theta, R, B, tau = 200, 10, 0.2, 40, 10, 0.6
    cut = -norm.ppf(theta) * math.sqrt(m)
    sel = ColumnSumSelector(cut)
    rng = np.random.default_rng(1)
    counts = [_cpss_count(rng.normal(size=(2 * m, p)), sel, B, tau, r)[0] for r in range(R)]
    bound = false_selection_bound(p * theta, p, tau)
    assert bound == pytest.approx(40.0)
    se = np.std(counts) / math.sqrt(R)
    assert np.mean(counts) + 4 * se < bound


def _l1_svc():
    from sklearn.svm import LinearSVC

    return LinearSVC(penalty="l1", dual=False, C=0.05)


def test_a_pipeline_selection_is_its_last_step_traced_to_the_input_columns():
    from sklearn.datasets import load_breast_cancer
    from sklearn.feature_selection import SelectKBest, f_classif
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    scaled = make_pipeline(StandardScaler(), _l1_svc()).fit(X, y)
    np.testing.assert_array_equal(selected_features(scaled, 30),
                                  scaled[-1].coef_.ravel() != 0)
    # a selector step first: the last step's columns are the selector's kept columns
    picked = make_pipeline(SelectKBest(f_classif, k=10), StandardScaler(), _l1_svc()).fit(X, y)
    kept = np.flatnonzero(picked[0].get_support())[picked[-1].coef_.ravel() != 0]
    np.testing.assert_array_equal(np.flatnonzero(selected_features(picked, 30)), kept)


def test_a_pipeline_fitted_on_a_dataframe_is_traced_by_column_name():
    from sklearn.datasets import load_breast_cancer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    pipe = make_pipeline(StandardScaler(), _l1_svc()).fit(X, y)
    np.testing.assert_array_equal(selected_features(pipe, X.shape[1]),
                                  pipe[-1].coef_.ravel() != 0)


def test_a_pipeline_that_mixes_columns_is_refused_by_name():
    from sklearn.datasets import load_breast_cancer
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline

    X, y = load_breast_cancer(return_X_y=True)
    pipe = make_pipeline(PCA(n_components=5), _l1_svc()).fit(X, y)
    with pytest.raises(TypeError, match="make new features .*pca0"):
        selected_features(pipe, 30)
