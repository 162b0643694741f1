"""BilevelSVC as a scikit-learn selector: scale invariance, the selector interface,
probabilities, class weights, cross-validation splitters, sample groups and feature
groups by name."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_classification
from sklearn.feature_selection import SelectFromModel
from sklearn.model_selection import (
    GroupKFold,
    KFold,
    StratifiedKFold,
    TimeSeriesSplit,
    cross_validate,
)
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler
from sklearn.svm import SVC

from bisvm import BilevelSVC, ElasticNetSVC, Scaler
from bisvm.data.standardize import ColumnStandardizer, weighted_column_stats
from bisvm.selection import staged

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "models_v1"


def _scaled_columns(seed=0):
    """A problem whose columns are on scales from 1e-3 to 1e3."""
    X, y = make_classification(240, 12, n_informative=4, n_redundant=0, flip_y=0.05,
                               random_state=seed)
    return X * np.logspace(-3, 3, X.shape[1]), y


DATASETS = {
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "scaled_columns": _scaled_columns,
}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_raw_and_standardised_inputs_give_the_same_model_dense(name):
    X, y = DATASETS[name]()
    Xs = StandardScaler().fit_transform(X)
    a = BilevelSVC(random_state=0).fit(X, y)
    b = BilevelSVC(random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.predict(X), b.predict(Xs))
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(Xs), atol=1e-6)
    # coefficients in original units: the same model read in the two units
    np.testing.assert_allclose(a.coef_ * X.std(axis=0), b.coef_, atol=1e-6)


@pytest.mark.parametrize("name", ["breast_cancer", "scaled_columns", "iris"])
def test_raw_and_scaled_inputs_give_the_same_model_sparse(name):
    X, y = load_iris(return_X_y=True) if name == "iris" else DATASETS[name]()
    X = np.where(np.abs(X) < np.quantile(np.abs(X), 0.3, axis=0), 0.0, X)  # some zeros
    Xr = sp.csr_matrix(X)
    Xs = sp.csr_matrix(MaxAbsScaler().fit_transform(Xr) * 3.0)
    a = BilevelSVC(random_state=0).fit(Xr, y)
    b = BilevelSVC(random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.predict(Xr), b.predict(Xs))
    np.testing.assert_allclose(a.decision_function(Xr), b.decision_function(Xs), atol=1e-6)


def test_raw_data_is_not_a_majority_class_model():
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    test = rng.permutation(len(y))[:143]
    train = np.setdiff1d(np.arange(len(y)), test)
    m = BilevelSVC(random_state=0).fit(X[train], y[train])
    assert m.support_.sum() > 0 and not m.null_model_
    assert m.score(X[test], y[test]) > 0.9


def test_weighted_statistics_against_numpy():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4)) * [1, 10, 0.1, 0] + [0, 5, -3, 2]
    w = rng.integers(0, 4, size=50).astype(float)
    mean, std, const = weighted_column_stats(X, w)
    rep = np.repeat(X, w.astype(int), axis=0)
    np.testing.assert_allclose(mean, rep.mean(axis=0))
    np.testing.assert_allclose(std, rep.std(axis=0), atol=1e-12)
    assert const.tolist() == [False, False, False, True]
    # sparse columns: the same statistics, and only scaled (never centred)
    m2, s2, c2 = weighted_column_stats(sp.csr_matrix(X), w)
    np.testing.assert_allclose(m2, mean)
    np.testing.assert_allclose(s2[:3], std[:3], rtol=1e-9)
    assert c2.tolist() == const.tolist()  # E[x^2] - m^2 rounds, the mask does not
    cs = ColumnStandardizer.fit(sp.csr_matrix(X), w)
    assert np.all(cs.center == 0) and sp.issparse(cs.transform(sp.csr_matrix(X)))


def test_constant_columns_are_never_selected():
    X, y = load_breast_cancer(return_X_y=True)
    X = np.c_[X[:, :5], np.full(len(y), 7.0), X[:, 5:10]]
    m = BilevelSVC(random_state=0, null_test=False).fit(X, y)
    assert not m.support_[5] and m.coef_[0, 5] == 0.0


def test_penalize_intercept_needs_unstandardised_features():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="penalize_intercept=True needs standardize=False"):
        BilevelSVC(penalize_intercept=True).fit(X, y)


def test_pipeline_with_the_selector_first_and_pandas_output():
    d = load_breast_cancer(as_frame=True)
    X, y = d.data, d.target
    pipe = Pipeline([("scale", Scaler()), ("select", BilevelSVC(random_state=0)),
                     ("clf", SVC())]).set_output(transform="pandas")
    pipe.fit(X, y)
    sel = pipe.named_steps["select"]
    Z = pipe[:-1].transform(X)
    assert isinstance(Z, pd.DataFrame)
    assert list(Z.columns) == list(X.columns[sel.support_])
    assert list(sel.get_feature_names_out()) == list(Z.columns)
    assert pipe.score(X, y) > 0.9
    # inverse_transform puts zeros in the dropped columns
    back = sel.inverse_transform(sel.transform(X.to_numpy()))
    assert back.shape == X.shape and np.all(back[:, ~sel.support_] == 0)


def test_select_from_model_keeps_the_support():
    for X, y in (load_breast_cancer(return_X_y=True), _scaled_columns(1)):
        est = BilevelSVC(random_state=0)
        sfm = SelectFromModel(est).fit(X, y)
        np.testing.assert_array_equal(sfm.get_support(), sfm.estimator_.support_)
        exact = SelectFromModel(est, importance_getter="support_").fit(X, y)
        np.testing.assert_array_equal(exact.get_support(), exact.estimator_.support_)


def test_elastic_net_svc_is_a_selector_too():
    X, y = load_breast_cancer(return_X_y=True)
    m = ElasticNetSVC(penalty_weight=0.05).fit(X, y)
    Xs = StandardScaler().fit_transform(X)
    ref = ElasticNetSVC(penalty_weight=0.05, standardize=False,
                        penalize_intercept=False).fit(Xs, y)
    # standardised internally: the model of the standardised columns, in raw units
    np.testing.assert_allclose(m.coef_ * X.std(axis=0), ref.coef_, atol=1e-6)
    np.testing.assert_array_equal(m.support_, ref.support_)
    assert m.transform(X).shape[1] == m.support_.sum() > 0
    sfm = SelectFromModel(m, prefit=True, importance_getter="support_")
    np.testing.assert_array_equal(sfm.get_support(), m.support_)


@pytest.mark.parametrize("threshold", ["calibrated", "zero", "1se_balanced"])
def test_probabilities_sum_to_one_and_their_arg_max_is_predict(threshold):
    for X, y in (load_breast_cancer(return_X_y=True), load_wine(return_X_y=True)):
        m = BilevelSVC(random_state=0, threshold=threshold).fit(X, y)
        p = m.predict_proba(X)
        assert p.shape == (len(y), m.classes_.size)
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        np.testing.assert_array_equal(m.classes_[np.argmax(p, axis=1)], m.predict(X))
        np.testing.assert_allclose(np.exp(m.predict_log_proba(X)), p)
        assert np.all(np.atleast_1d(m.probability_slope_) > 0)


def test_probability_slope_is_the_maximum_likelihood_slope():
    from scipy.optimize import minimize, minimize_scalar

    from bisvm.selection.decision import platt_shift, platt_slope

    rng = np.random.default_rng(4)
    f = rng.normal(size=400)
    y = np.where(rng.random(400) < 1 / (1 + np.exp(-(1.7 * f - 0.4))), 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, size=400)
    npos, nneg = (y > 0).sum(), (y <= 0).sum()
    t = np.where(y > 0, (npos + 1) / (npos + 2), 1 / (nneg + 2))

    def nll(z):
        return float(w @ (np.logaddexp(0, z) - t * z))

    ref = minimize_scalar(lambda a: nll(a * f), bounds=(0, 50), method="bounded",
                          options={"xatol": 1e-10}).x
    assert platt_slope(f, y, w) == pytest.approx(ref, rel=1e-6)
    # the slope of the Platt-shifted outputs is Platt's two-parameter a
    ac = minimize(lambda th: nll(th[0] * f + th[1]), [1.0, 0.0], method="BFGS",
                  options={"gtol": 1e-10}).x
    g = f + platt_shift(f, y, w)
    assert platt_slope(g, y, w) == pytest.approx(ac[0], rel=1e-5)


def test_class_weight_balanced_equals_the_matching_sample_weight():
    X, y = make_classification(200, 8, n_informative=3, weights=[0.75], random_state=3)
    a = BilevelSVC(class_weight="balanced", random_state=0).fit(X, y)
    counts = np.bincount(y)
    sw = (len(y) / (2 * counts))[y]
    b = BilevelSVC(random_state=0).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-10)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-10)
    # a dict is the same as its weights given per row
    c = BilevelSVC(class_weight={0: 1.0, 1: 3.0}, random_state=0).fit(X, y)
    d = BilevelSVC(random_state=0).fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(c.coef_, d.coef_, atol=1e-10)


def _group_recorder(monkeypatch, groups):
    """Check every split the fit makes against the sample groups."""
    seen = []
    vs, hs = staged.validation_splits, staged.holdout_splits

    def check(pairs, rows):
        for tr, te in pairs:
            assert not set(groups[rows[tr]]) & set(groups[rows[te]])
            seen.append(len(te))

    def vsplits(y, *a, **k):
        out = vs(y, *a, **k)
        check(out, np.arange(len(y)))
        return out

    def hsplits(y, cv, **k):
        rest, held, folds = hs(y, cv, **k)
        assert not set(groups[rest]) & set(groups[held])
        check(folds, rest)
        return rest, held, folds

    monkeypatch.setattr(staged, "validation_splits", vsplits)
    monkeypatch.setattr(staged, "holdout_splits", hsplits)
    return seen


def test_group_kfold_never_puts_a_group_on_both_sides(monkeypatch):
    X, y = make_classification(300, 10, n_informative=4, random_state=0)
    groups = np.arange(300) // 5  # patients with 5 samples each
    seen = _group_recorder(monkeypatch, groups)
    m = BilevelSVC(cv=GroupKFold(4), model="vector", random_state=0).fit(X, y, groups=groups)
    assert seen and m.refined_ is not None  # the refinement's held-out rows were made
    # with metadata routing enabled, a direct call still takes the groups
    with sklearn.config_context(enable_metadata_routing=True):
        m2 = BilevelSVC(cv=GroupKFold(4), model="vector", random_state=0)
        m2.fit(X, y, groups=groups)
        np.testing.assert_array_equal(m2.coef_, m.coef_)
        res = cross_validate(
            BilevelSVC(cv=GroupKFold(3), model="scalar", random_state=0)
            .set_fit_request(groups=True, sample_weight=False),
            X, y, cv=GroupKFold(3), params={"groups": groups})
        assert np.all(res["test_score"] > 0.6)


def test_a_group_splitter_without_groups_is_an_error():
    X, y = make_classification(100, 5, random_state=0)
    with pytest.raises(ValueError, match="groups"):
        BilevelSVC(cv=GroupKFold(3)).fit(X, y)


def test_splitters_and_explicit_pairs_are_the_same_folds():
    X, y = make_classification(160, 8, n_informative=3, random_state=1)
    skf = StratifiedKFold(4, shuffle=True, random_state=2)
    pairs = list(skf.split(X, y))
    # without the refinement's held-out rows, a splitter is exactly its pairs
    a = BilevelSVC(cv=skf, early_stopping=False, random_state=0).fit(X, y)
    b = BilevelSVC(cv=pairs, early_stopping=False, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # an iterator of pairs is read once and is the same as the list
    c = BilevelSVC(cv=pairs, random_state=0).fit(X, y)
    d = BilevelSVC(cv=iter(pairs), random_state=0).fit(X, y)
    np.testing.assert_array_equal(c.coef_, d.coef_)


def test_non_partitioning_splitters():
    X, y = make_classification(200, 6, n_informative=3, random_state=2)
    m = BilevelSVC(cv=TimeSeriesSplit(4), random_state=0).fit(X, y)
    assert m.score(X, y) > 0.7
    with pytest.raises(ValueError, match="cv_repeats > 1"):
        BilevelSVC(cv=KFold(3), cv_repeats=2).fit(X, y)
    with pytest.raises(ValueError, match="cv"):
        BilevelSVC(cv="five").fit(X, y)
    with pytest.raises(ValueError, match="both its train and test"):
        BilevelSVC(cv=[(np.arange(100), np.arange(50, 150))]).fit(X, y)


def test_feature_groups_by_column_name_and_the_deprecated_name():
    d = load_breast_cancer(as_frame=True)
    X, y = d.data, d.target
    named = {k: [c for c in X.columns if c.startswith(k)] for k in ("mean", "worst")}
    a = BilevelSVC(model="group", feature_groups=named, random_state=0).fit(X, y)
    idx = {k: [X.columns.get_loc(c) for c in v] for k, v in named.items()}
    b = BilevelSVC(model="group", feature_groups=idx, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.penalty_weight_names_[:2] == ("mean", "worst")
    with pytest.raises(ValueError, match="column 'nope' is unknown"):
        BilevelSVC(model="group", feature_groups={"g": ["nope"]}).fit(X, y)
    with pytest.warns(FutureWarning, match="feature_groups"):
        c = BilevelSVC(model="group", groups=idx, random_state=0).fit(X, y)
    np.testing.assert_array_equal(c.coef_, b.coef_)


def test_selection_frequency_counts_the_fold_models():
    X, y = load_breast_cancer(return_X_y=True)
    m = BilevelSVC(random_state=0, cv=4).fit(X, y)
    f = m.selection_frequency_
    assert f.shape == (30,) and np.all((f >= 0) & (f <= 1))
    np.testing.assert_allclose(f * 4, np.round(f * 4))  # shares of 4 fold models
    w = BilevelSVC(random_state=0, cv=4).fit(*load_wine(return_X_y=True))
    per = w.selection_frequency_per_class_
    assert per.shape == (3, 13)
    # the union over classes is selected at least as often as any class's model
    assert np.all(w.selection_frequency_ >= per.max(axis=0) - 1e-12)


def test_model_files_written_before_standardisation_load_with_it_off():
    from bisvm.persistence import load_model

    for path in sorted(GOLDEN.glob("1[56]_BilevelSVC.bisvm")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load_model(path)
        est = getattr(model, "estimator", model)
        assert est.standardize is False


def test_shared_multiclass_selects_one_feature_set():
    X, y = load_wine(return_X_y=True)
    m = BilevelSVC(multiclass="shared", random_state=0).fit(X, y)
    sup = m.support_
    assert 0 < sup.sum() <= X.shape[1] and m.penalty_weights_.shape == (X.shape[1],)
    # one support for every class: a feature is in all K columns or in none
    assert np.all(m.coef_[:, ~sup] == 0) and np.all(np.any(m.coef_[:, sup] != 0, axis=0))
    p = m.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(m.classes_[np.argmax(p, axis=1)], m.predict(X))
    assert m.score(X, y) > 0.9 and m.transform(X).shape == (len(y), sup.sum())
    np.testing.assert_array_equal(m.selection_frequency_per_class_[0], m.selection_frequency_)
    # a binary target has one problem: "shared" is one-vs-rest there
    Xb, yb = load_breast_cancer(return_X_y=True)
    a = BilevelSVC(multiclass="shared", random_state=0).fit(Xb, yb)
    b = BilevelSVC(random_state=0).fit(Xb, yb)
    np.testing.assert_array_equal(a.coef_, b.coef_)
