"""BilevelSVC and ElasticNetSVC: scikit-learn compatibility, agreement with the lower-level
solvers, multiclass, selection API and bad input."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, make_classification
from sklearn.feature_selection import SelectFromModel
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import (
    check_param_validation,
    check_sample_weight_equivalence_on_dense_data,
    check_sample_weight_equivalence_on_sparse_data,
    parametrize_with_checks,
)

from bisvm.estimators.sparse import BilevelSVC, ElasticNetSVC

# With explicit folds (the check passes LeaveOneGroupOut splits) a weight-k row is k
# copies at every level, to rounding, except in the one-standard-error rules: their
# standard error counts a weight-k row as one observation and k copies as k
# (selection.one_se.weighted_mean_se). On the check's 45-row problem the vector
# refinement's one-SE acceptance for one class is close enough to flip on that
# difference; with the held-out minimum instead both checks pass (test below).
_ONE_SE_DECISION = ("the vector refinement's one-standard-error acceptance counts a "
                    "weight-k row as one observation and k copies as k, and on the check's "
                    "tiny problem the decision for one class turns on that difference; "
                    "with refinement_rule='min' the check passes")


def _expected_failures(est):
    failed = {}
    if isinstance(est, BilevelSVC):
        if est.model != "scalar":
            for data in ("dense", "sparse"):
                failed[f"check_sample_weight_equivalence_on_{data}_data"] = _ONE_SE_DECISION
        if est.criterion == "holdout":
            failed["check_class_weight_balanced_linear_classifier"] = (
                "the check fits 5 rows, too few for the holdout criterion's stratified "
                "validation split (validation_fraction=0.2 leaves one validation row); the "
                "k-fold instance runs it")
    return failed


@parametrize_with_checks([
    BilevelSVC(model="vector", max_iter=15),
    BilevelSVC(model="scalar", criterion="holdout", max_iter=15),
    ElasticNetSVC(penalty_weight=0.05),
], expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("check", [check_sample_weight_equivalence_on_dense_data,
                                   check_sample_weight_equivalence_on_sparse_data])
@pytest.mark.parametrize("model", ["scalar", "vector"])
def test_sample_weights_are_repeated_rows_with_explicit_folds(check, model):
    # the checks pass LeaveOneGroupOut splits as cv: weights and repeats then share folds;
    # the refinement's held-out minimum involves no standard error
    kw = {} if model == "scalar" else {"refinement_rule": "min", "max_iter": 15}
    check("BilevelSVC", BilevelSVC(model=model, **kw))


def _bc(n=None):
    d = load_breast_cancer()
    X = StandardScaler().fit_transform(d.data)
    return (X, d.target) if n is None else (X[:n], d.target[:n])


def test_elastic_net_svc_solution_is_stationary_and_solvers_agree():
    X, y = _bc(200)
    a = ElasticNetSVC(penalty_weight=0.2, tol=1e-10).fit(X, y)
    b = ElasticNetSVC(penalty_weight=0.2, solver="lbfgs", tol=1e-9).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-6)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-6)
    # bigger beta -> fewer coefficients above the thesis's epsilon
    c = ElasticNetSVC(penalty_weight=0.8).fit(X, y)
    assert np.sum(np.abs(c.coef_) > 0.01) < np.sum(np.abs(a.coef_) > 0.01)


def test_bilevel_svc_binary_attributes_and_selection_api():
    X, y = _bc()
    groups = {"mean": range(10), "se": range(10, 20), "worst": range(20, 30)}
    m = BilevelSVC(model="group", feature_groups=groups, random_state=0).fit(X, y)
    assert m.coef_.shape == (1, 30) and m.intercept_.shape == (1,)
    # standardised features: the intercept is not penalised, so it has no weight
    assert m.penalty_weights_.shape == (3,)
    assert m.penalty_weight_names_ == ("mean", "se", "worst")
    assert np.all(m.penalty_weights_ > 0)
    assert m.feature_importances_.sum() == pytest.approx(1.0)
    assert m.importance_.sum() == pytest.approx(1.0)
    np.testing.assert_array_equal(m.get_support(), m.feature_importances_ > 0)
    np.testing.assert_array_equal(m.get_support(indices=True), np.flatnonzero(m.support_))
    assert len(m.history_) <= m.n_iter_ + 1
    assert m.score(X, y) > 0.9
    # works as a model inside SelectFromModel and a Pipeline
    pipe = make_pipeline(SelectFromModel(BilevelSVC(model="scalar", random_state=0)),
                         BilevelSVC(model="scalar", random_state=0))
    pipe.fit(X, y)
    assert pipe.score(X, y) > 0.9


def test_bilevel_svc_multiclass_one_vs_rest():
    d = load_iris()
    X = StandardScaler().fit_transform(d.data)
    m = BilevelSVC(model="vector", criterion="margin", random_state=0).fit(X, d.target)
    assert m.coef_.shape == (3, 4) and m.penalty_weights_.shape == (3, 4)
    assert m.score(X, d.target) > 0.9
    assert m.decision_function(X).shape == (150, 3)
    np.testing.assert_array_equal(m.predict(X), m.classes_[np.argmax(m.decision_function(X), 1)])
    np.testing.assert_array_equal(m.predict(X), m.classes_[np.argmax(m.predict_proba(X), 1)])


def test_string_labels_and_label_invariance():
    X, y = make_classification(120, 5, n_informative=3, random_state=0)
    a = BilevelSVC(model="scalar", random_state=1).fit(X, y)
    b = BilevelSVC(model="scalar", random_state=1).fit(X, np.where(y == 1, "yes", "no"))
    np.testing.assert_allclose(a.coef_, b.coef_)
    assert set(b.predict(X)) <= {"yes", "no"}


@pytest.mark.parametrize("kwargs, match", [
    (dict(model="matrix"), "model"),
    (dict(criterion="aic"), "criterion"),
    (dict(l2_penalty=0.0), "l2_penalty"),
    (dict(hinge_smoothing=-1.0), "hinge_smoothing"),
    (dict(l1_smoothing=np.nan), "l1_smoothing"),
    (dict(cv=1), "cv"),
    (dict(criterion="holdout", validation_fraction=1.5), "validation_fraction"),
    (dict(model="group"), "groups"),
    (dict(model="group", groups={"a": [0, 99]}), "outside"),
    (dict(solver="sgd"), "solver"),
])
def test_bad_parameters_raise_value_error(kwargs, match):
    X, y = _bc(100)
    with pytest.raises(ValueError, match=match):
        BilevelSVC(**kwargs).fit(X, y)


@pytest.mark.parametrize("cls", [BilevelSVC, ElasticNetSVC])
def test_param_validation(cls):
    # every parameter has a constraint ("no_validation" where the check needs the data
    # or another parameter), and a value outside it raises InvalidParameterError
    check_param_validation(cls.__name__, cls())


@pytest.mark.parametrize("cls, params", [
    (ElasticNetSVC, dict(l2_penalty="auto")),  # "auto" is BilevelSVC's only
    (ElasticNetSVC, dict(l1_smoothing=-1e-3)),
    (ElasticNetSVC, dict(max_iter=0)),
    (BilevelSVC, dict(l2_penalty="scale")),
    (BilevelSVC, dict(init_penalty=0.0)),
    (BilevelSVC, dict(tol=True)),
    (BilevelSVC, dict(support_threshold=np.inf)),
    (BilevelSVC, dict(early_stopping="yes")),
    (BilevelSVC, dict(balanced_criterion=1)),
    (BilevelSVC, dict(scalar_rule="2se")),
    (BilevelSVC, dict(refinement_rule="1se_error")),
    (BilevelSVC, dict(random_state=-1)),
])
def test_bad_parameter_is_named(cls, params):
    (name, value), = params.items()
    X, y = _bc(60)
    with pytest.raises(InvalidParameterError,
                       match=rf"^The '{name}' parameter of {cls.__name__} must be"):
        cls(**params).fit(X, y)


def test_numeric_spellings_of_parameters_fit_the_same_model():
    # numpy scalars, ints where floats are expected, l1_smoothing=0 (exact L1)
    X, y = _bc(80)
    a = ElasticNetSVC(penalty_weight=np.float32(0.05), l2_penalty=np.float64(0.01),
                      hinge_smoothing=1, max_iter=np.int64(200)).fit(X, y)
    b = ElasticNetSVC(penalty_weight=float(np.float32(0.05)), l2_penalty=0.01,
                      hinge_smoothing=1.0, max_iter=200).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert ElasticNetSVC(l1_smoothing=0).fit(X, y).solver_ == "exact_l1"
    m = BilevelSVC(model="scalar", init_penalty=np.float32(0.01), tol=np.float64(1e-3),
                   support_threshold=1, early_stopping=True, balanced_criterion="auto",
                   max_iter=3, random_state=np.int64(0)).fit(X, y)
    assert np.isfinite(m.validation_score_)


def test_bad_data_raise_value_error():
    X, y = _bc(60)
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BilevelSVC().fit(Xn, y)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        BilevelSVC().fit(Xi, y)
    with pytest.raises(ValueError, match="1 class"):
        BilevelSVC().fit(X, np.ones(60))
    with pytest.raises(ValueError, match="fewer than cv"):
        BilevelSVC(cv=5).fit(X[:4], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="penalty_weight"):
        ElasticNetSVC(penalty_weight=[1.0, 2.0]).fit(X, y)
