"""Property-based reliability tests of every public estimator (issue 7, part 1).

For random shapes (n = 2, d = 1, d >> n included), random parameters drawn from the ranges
each estimator documents and random label encodings (strings, {0, 1}, {-1, 1}, booleans),
a fit either succeeds -- finite fitted numbers, finite decision values, predictions in the
label set, probabilities that sum to one -- or raises a ``ValueError`` whose message names
the problem. Invariants checked against the estimator itself:

* row order: permuting the training rows leaves the decision function unchanged (up to
  the solver tolerance);
* label encoding: {0, 1}, {-1, 1}, {False, True} and {"neg", "pos"} give the same
  decision function and the same predictions (mapped);
* shifting a feature by a constant before standard scaling (``Scaler`` in a pipeline)
  leaves the decision function unchanged;
* duplicating every sample with ``C / 2`` is the same problem as the original with ``C``
  (for the estimators with a cost ``C``; for ``KernelRidge``, whose ``ridge`` weighs the
  penalty against a *sum* of squares, with ``2 * ridge``; for the smoothed SVMs of
  ``ElasticNetSVC``, whose loss is a *mean*, with the parameters unchanged).

The number of examples comes from the hypothesis profile (``tests/conftest.py``).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline

import bisvm
from bisvm import (
    SVC,
    SVR,
    BilevelSVC,
    ElasticNetSVC,
    KernelLogisticRegression,
    KernelRidge,
    LinearSVC,
    LinearSVR,
    NuSVR,
    Scaler,
    SelectiveLogisticRegression,
    SelectiveLogisticRegressionCV,
    SelectiveRegression,
    SelectiveRegressionCV,
)

N_EXAMPLES = settings.default.max_examples


def _examples(fraction):
    """A share of the profile's examples for tests that fit expensive models."""
    return max(3, int(round(N_EXAMPLES * fraction)))


# A ValueError on degenerate random data must say what is wrong in these terms.
PROBLEM_WORDS = re.compile(
    r"class|sample|member|fold|n_splits|feature|weight|kernel|label|target", re.IGNORECASE
)

KERNELS = ["linear", "rbf", "poly", "laplacian", "sigmoid"]


def _log_uniform(lo, hi):
    return st.floats(np.log10(lo), np.log10(hi)).map(lambda e: float(10.0**e))


@st.composite
def kernel_params(draw, coef0_default=0.0):
    kernel = draw(st.sampled_from(KERNELS))
    gamma = draw(st.one_of(st.sampled_from(["scale", "auto"]), _log_uniform(1e-3, 1e2)))
    return dict(kernel=kernel, gamma=gamma, degree=draw(st.integers(1, 4)),
                coef0=draw(st.sampled_from([coef0_default, 1.0])))


@st.composite
def svc_params(draw):
    p = draw(kernel_params())
    p.update(C=draw(_log_uniform(1e-2, 1e3)),
             loss=draw(st.sampled_from(["hinge", "squared_hinge"])),
             multiclass=draw(st.sampled_from(["ovo", "ovr"])),
             selection=draw(st.sampled_from(["second_order", "max_violating_pair"])),
             shrinking=draw(st.booleans()), probability=draw(st.sampled_from([False, False, True])),
             random_state=0, max_iter=100_000)
    return p


@st.composite
def svr_params(draw):
    p = draw(kernel_params())
    # an iteration cap keeps a non-PSD (sigmoid) kernel at C = 1e3 from running for a
    # minute; reaching it is a ConvergenceWarning, allowed here
    p.update(C=draw(_log_uniform(1e-2, 1e3)), epsilon=draw(st.floats(0.0, 1.0)),
             shrinking=draw(st.booleans()), max_iter=100_000)
    return p


@st.composite
def nu_svr_params(draw):
    p = draw(kernel_params())
    p.update(C=draw(_log_uniform(1e-2, 1e3)), nu=draw(st.floats(0.05, 1.0)),
             shrinking=draw(st.booleans()), max_iter=100_000)
    return p


@st.composite
def linear_svc_params(draw):
    penalty, loss, dual = draw(st.sampled_from([
        ("l2", "hinge", True), ("l2", "squared_hinge", True), ("l2", "squared_hinge", False),
        ("l2", "squared_hinge", "auto"), ("l1", "squared_hinge", False), ("l1", "hinge", "auto"),
    ]))
    return dict(penalty=penalty, loss=loss, dual=dual, C=draw(_log_uniform(1e-2, 1e2)),
                fit_intercept=draw(st.booleans()), random_state=0, max_iter=5000,
                multi_class=draw(st.sampled_from(["ovr", "ovr", "crammer_singer"])))


@st.composite
def linear_svr_params(draw):
    loss, dual = draw(st.sampled_from([
        ("epsilon_insensitive", True), ("squared_epsilon_insensitive", True),
        ("squared_epsilon_insensitive", False), ("squared_epsilon_insensitive", "auto"),
    ]))
    return dict(loss=loss, dual=dual, C=draw(_log_uniform(1e-2, 1e2)),
                epsilon=draw(st.floats(0.0, 1.0)), fit_intercept=draw(st.booleans()),
                random_state=0, max_iter=5000)


@st.composite
def kernel_ridge_params(draw):
    p = draw(kernel_params(coef0_default=1.0))
    p.update(ridge=draw(_log_uniform(1e-3, 1e2)), fit_intercept=draw(st.booleans()))
    return p


@st.composite
def klr_params(draw):
    p = draw(kernel_params())
    p.update(C=draw(_log_uniform(1e-2, 1e2)), solver=draw(st.sampled_from(["newton", "lbfgs"])),
             fit_intercept=draw(st.booleans()))
    return p


@st.composite
def elastic_net_params(draw):
    return dict(penalty_weight=draw(st.floats(0.0, 1.0)),
                l2_penalty=draw(_log_uniform(1e-3, 1.0)),
                hinge_smoothing=draw(_log_uniform(1e-3, 1.0)),
                l1_smoothing=draw(_log_uniform(1e-4, 0.1)),
                penalize_intercept=draw(st.booleans()),
                solver=draw(st.sampled_from(["newton", "lbfgs"])))


@st.composite
def bilevel_params(draw):
    return dict(model=draw(st.sampled_from(["scalar", "vector"])),
                criterion=draw(st.sampled_from(["margin", "kfold", "logistic", "holdout"])),
                cv=draw(st.integers(2, 3)), max_iter=draw(st.integers(1, 4)),
                warm_init=draw(st.booleans()), random_state=0)


@st.composite
def selective_params(draw):
    return dict(selectivity=draw(st.one_of(st.just(0.0), _log_uniform(1e-4, 1.0))),
                ridge=draw(_log_uniform(1e-2, 10.0)), fit_intercept=draw(st.booleans()))


@st.composite
def selective_cv_params(draw):
    return dict(criterion=draw(st.sampled_from(["alo", "ij", "kfold", "diffloo"])),
                n_mu=draw(st.integers(3, 8)), ridge=draw(_log_uniform(1e-2, 10.0)),
                n_splits=draw(st.integers(2, 4)), fit_intercept=draw(st.booleans()))


# name -> (class, parameter strategy, is_classifier, expensive)
ESTIMATORS = {
    "SVC": (SVC, svc_params(), True, False),
    "LinearSVC": (LinearSVC, linear_svc_params(), True, False),
    "KernelLogisticRegression": (KernelLogisticRegression, klr_params(), True, False),
    "ElasticNetSVC": (ElasticNetSVC, elastic_net_params(), True, False),
    "BilevelSVC": (BilevelSVC, bilevel_params(), True, True),
    "SVR": (SVR, svr_params(), False, False),
    "LinearSVR": (LinearSVR, linear_svr_params(), False, False),
    "NuSVR": (NuSVR, nu_svr_params(), False, False),
    "KernelRidge": (KernelRidge, kernel_ridge_params(), False, False),
    "SelectiveRegression": (SelectiveRegression, selective_params(), False, False),
    "SelectiveLogisticRegression": (SelectiveLogisticRegression, selective_params(), True,
                                    False),
    "SelectiveRegressionCV": (SelectiveRegressionCV, selective_cv_params(), False, True),
    "SelectiveLogisticRegressionCV": (SelectiveLogisticRegressionCV, selective_cv_params(),
                                      True, True),
}
# classifiers documented as two-class only: three classes must be refused
BINARY_ONLY = {"SelectiveLogisticRegression", "SelectiveLogisticRegressionCV"}
# estimators whose folds are drawn over row positions (row order is part of the input)
FOLDS_BY_POSITION = {"BilevelSVC"}


def test_every_public_estimator_is_covered():
    """A newly exported estimator must be added to ``ESTIMATORS`` (or listed here)."""
    from sklearn.base import BaseEstimator

    not_estimators = {"Scaler"}  # a transformer, covered through the pipelines below
    # an unsupervised novelty detector (fit(X), predict -> +-1): check_estimator and the
    # LIBSVM parity of tests/test_nu_svm.py cover it
    not_estimators |= {"OneClassSVM"}
    # nu-SVC on the tiny degenerate problems drawn here (d = 1, linear kernel) has a
    # non-unique optimum: its decision scale 1/r, and even some labels, move with
    # rounding; tests/test_nu_svm.py checks it against LIBSVM on well-posed data
    not_estimators |= {"NuSVC"}
    exported = {
        name for name in bisvm.__all__
        if isinstance(getattr(bisvm, name), type)
        and issubclass(getattr(bisvm, name), BaseEstimator) and name not in not_estimators
    }
    assert exported <= set(ESTIMATORS), sorted(exported - set(ESTIMATORS))


ENCODINGS = {
    "01": np.array([0, 1]),
    "pm1": np.array([-1, 1]),
    "bool": np.array([False, True]),
    "str": np.array(["neg", "pos"]),
}


@st.composite
def datasets(draw, classifier=True, min_n=2, max_n=30, wide=True):
    """Random (X, y): n in [min_n, max_n], d in [1, 8] or d >> n; y from a random encoding.

    Classification targets may have one class on tiny n (the fit must then refuse)."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.RandomState(seed)
    shape = draw(st.sampled_from(["tall", "tall", "wide", "tiny"] if wide else ["tall"]))
    if shape == "tiny":
        n, d = 2, draw(st.integers(1, 3))
    elif shape == "wide":
        n, d = draw(st.integers(max(min_n, 3), 8)), draw(st.integers(20, 60))
    else:
        n, d = draw(st.integers(max(min_n, 4), max_n)), draw(st.integers(1, 8))
    scale = draw(st.sampled_from([1.0, 1.0, 1e-3, 1e3]))
    X = rng.randn(n, d) * scale
    if not classifier:
        return X, X[:, 0] / scale + 0.1 * rng.randn(n), None
    n_classes = draw(st.sampled_from([2, 2, 2, 3]))
    w = rng.randn(d)
    if n_classes == 2:
        codes = (X @ w + 0.3 * rng.randn(n) * np.abs(X @ w).mean() > 0).astype(int)
        codes[: min(n, 2)] = [0, 1][: min(n, 2)]  # both classes present
        labels = ENCODINGS[draw(st.sampled_from(sorted(ENCODINGS)))]
    else:
        codes = rng.randint(0, 3, size=n)
        labels = np.array(["a", "b", "c"])
    return X, labels[codes], labels


def _finite_fitted_attributes(est):
    for name, val in vars(est).items():
        if name.endswith("_") and not name.startswith("_"):
            arr = np.asarray(val) if isinstance(val, (np.ndarray, float, int)) else None
            if arr is not None and arr.dtype.kind == "f":
                assert np.all(np.isfinite(arr)), f"{type(est).__name__}.{name} is not finite"


def _fit_quiet(est, X, y, **kw):
    with warnings.catch_warnings():
        # a cap reached on random hard data is allowed here; it is tested in the stress file
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.filterwarnings("ignore", message="The least populated class")
        return est.fit(X, y, **kw)


def _scores(est, X):
    if hasattr(est, "decision_function"):
        return np.asarray(est.decision_function(X), dtype=float)
    return np.asarray(est.predict(X), dtype=float)


def _check_fit_or_clear_error(name, params, X, y, labels):
    cls, _, is_clf, _ = ESTIMATORS[name]
    est = cls(**params)
    try:
        _fit_quiet(est, X, y)
    except ValueError as exc:
        msg = str(exc)
        assert PROBLEM_WORDS.search(msg), f"{name}({params}) raised an unclear ValueError: {msg}"
        if is_clf and np.unique(y).size < 2:
            return
        if name in BINARY_ONLY and np.unique(y).size > 2:
            assert re.search("binary|2 classes", msg), msg
            return
        if name == "KernelLogisticRegression" and params["kernel"] == "sigmoid":
            # refused when the sigmoid Gram matrix is indefinite (its objective is then
            # unbounded below): check that claim with numpy's eigenvalues
            from bisvm.kernels import make_kernel

            assert "indefinite" in msg, msg
            K = make_kernel("sigmoid", gamma=params["gamma"], coef0=params["coef0"], X=X)(X)
            ev = np.linalg.eigvalsh((K + K.T) / 2)
            assert ev[0] < -1e-10 * np.abs(ev).max(), (msg, ev[[0, -1]])
            return
        # only degenerate tiny problems may be refused
        assert X.shape[0] <= 8 or name == "BilevelSVC", f"{name} refused n={X.shape}: {msg}"
        return
    _finite_fitted_attributes(est)
    pred = est.predict(X)
    assert pred.shape == (X.shape[0],)
    if is_clf:
        assert set(np.unique(pred)) <= set(labels.tolist())
        assert pred.dtype == labels.dtype or labels.dtype.kind == "U"
        assert np.all(np.isfinite(_scores(est, X)))
        if hasattr(est, "predict_proba") and getattr(est, "probability", True):
            P = est.predict_proba(X)
            assert np.all(np.isfinite(P)) and np.all(P >= 0)
            np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-9)
    else:
        assert np.all(np.isfinite(pred))


def _skip_expensive(name, data):
    """One example in three for the models whose fit is itself a model search (bilevel
    optimisation, a criterion along a path)."""
    return ESTIMATORS[name][3] and data.draw(st.integers(0, 2)) != 0


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@settings(max_examples=N_EXAMPLES)
@given(data=st.data())
def test_fit_succeeds_or_names_the_problem(name, data):
    cls, params_st, is_clf, expensive = ESTIMATORS[name]
    if _skip_expensive(name, data):
        return
    X, y, labels = data.draw(datasets(classifier=is_clf))
    params = data.draw(params_st)
    _check_fit_or_clear_error(name, params, X, y, labels)


def test_two_samples_one_feature_every_estimator():
    """The smallest problem: n = 2, d = 1."""
    X = np.array([[-1.0], [1.0]])
    for name, (cls, _, is_clf, _) in ESTIMATORS.items():
        y = np.array(["neg", "pos"]) if is_clf else np.array([-1.0, 1.0])
        est = cls()
        try:
            _fit_quiet(est, X, y)
        except ValueError as exc:
            assert name == "BilevelSVC" and PROBLEM_WORDS.search(str(exc)), (name, exc)
            continue
        pred = est.predict(X)
        if name.endswith("CV"):  # leave-one-out on 2 points may pick the empty model
            assert set(pred) <= {"neg", "pos"} if is_clf else pred[0] <= pred[1], (name, pred)
        elif is_clf:
            assert list(pred) == ["neg", "pos"], (name, pred)
        else:
            assert pred[0] < pred[1], (name, pred)


# ---------------------------------------------------------------------------- invariants
# Tight-tolerance versions of the estimators, so that invariance can be checked to a
# tolerance that says something; atol is relative to max(1, max |decision value|).
def _tight(name, params):
    cls = ESTIMATORS[name][0]
    p = dict(params)
    if name in ("SVC", "SVR", "NuSVR"):
        p.update(tol=1e-7)
    elif name in ("LinearSVC", "LinearSVR"):
        p.update(tol=1e-9, max_iter=100_000)
    elif name == "ElasticNetSVC":
        # Newton reaches 1e-10 in a few steps; L-BFGS would spend its whole cap there
        p.update(tol=1e-10, solver="newton")
    elif name == "KernelLogisticRegression":
        p.update(tol=1e-11, max_iter=100, solver="newton")
    return cls(**p)


INVARIANCE_ATOL = {
    "SVC": 1e-4, "SVR": 1e-4, "NuSVR": 1e-4, "LinearSVC": 1e-4, "LinearSVR": 1e-4,
    "ElasticNetSVC": 1e-6,
    "KernelLogisticRegression": 1e-6, "KernelRidge": 1e-8, "BilevelSVC": 1e-6,
    "SelectiveRegression": 1e-7, "SelectiveLogisticRegression": 1e-7,
    "SelectiveRegressionCV": 1e-7, "SelectiveLogisticRegressionCV": 1e-7,
}


@st.composite
def well_posed(draw, classifier=True):
    """Generic Gaussian data, n in [10, 30], d in [1, 6]: unique solutions, both classes."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.RandomState(seed)
    n, d = draw(st.integers(10, 30)), draw(st.integers(1, 6))
    X = rng.randn(n, d)
    Xt = rng.randn(7, d)
    if not classifier:
        return X, X[:, 0] + 0.3 * rng.randn(n), Xt
    y = (X[:, 0] + 0.5 * rng.randn(n) > 0).astype(int)
    y[:2] = [0, 1]
    return X, y, Xt


@st.composite
def invariance_params(draw, name):
    """Parameters of the invariance tests: the documented ranges, minus the choices whose
    result is not a function of the data alone (probability calibration folds) and
    kernels whose scale makes the comparison meaningless (sigmoid)."""
    p = draw(ESTIMATORS[name][1])
    p.pop("probability", None)
    if p.get("kernel") == "sigmoid":
        p["kernel"] = "rbf"
    if p.get("kernel") == "poly":
        p["degree"] = min(p["degree"], 3)
        p["gamma"] = "scale"
    if "C" in p:
        p["C"] = min(p["C"], 100.0)
    if p.get("criterion") == "kfold" and name.startswith("Selective"):
        p["criterion"] = "alo"  # k-fold folds follow row positions
    return p


def _assert_close_scores(name, a, b, what):
    scale = max(1.0, float(np.max(np.abs(a))))
    np.testing.assert_allclose(b, a, rtol=0, atol=INVARIANCE_ATOL[name] * scale,
                               err_msg=f"{name}: {what}")


ORDER_INVARIANT = sorted(set(ESTIMATORS) - FOLDS_BY_POSITION)


@pytest.mark.parametrize("name", ORDER_INVARIANT)
@settings(max_examples=N_EXAMPLES)
@given(data=st.data())
def test_row_order_invariance(name, data):
    """Permuting the training rows does not change the model (BilevelSVC excluded: its
    validation folds are drawn over row positions, so row order is part of its input)."""
    if _skip_expensive(name, data):
        return
    is_clf = ESTIMATORS[name][2]
    X, y, Xt = data.draw(well_posed(classifier=is_clf))
    params = data.draw(invariance_params(name))
    perm = np.random.RandomState(data.draw(st.integers(0, 10**6))).permutation(len(y))
    a = _scores(_fit_quiet(_tight(name, params), X, y), Xt)
    b = _scores(_fit_quiet(_tight(name, params), X[perm], y[perm]), Xt)
    _assert_close_scores(name, a, b, "row order changed the decision function")


CLASSIFIERS = sorted(n for n, spec in ESTIMATORS.items() if spec[2])


@pytest.mark.parametrize("name", CLASSIFIERS)
@settings(max_examples=_examples(0.5))
@given(data=st.data())
def test_label_encoding_invariance(name, data):
    """{0,1}, {-1,1}, {False,True} and {"neg","pos"} are the same binary problem."""
    if _skip_expensive(name, data):
        return
    X, y, Xt = data.draw(well_posed())
    params = data.draw(invariance_params(name))
    if name == "BilevelSVC":
        params["max_iter"] = 2
    ref_scores = ref_pred = None
    for key, labels in ENCODINGS.items():
        est = _fit_quiet(_tight(name, params), X, labels[y])
        s, p = _scores(est, Xt), est.predict(Xt)
        codes = np.searchsorted(labels, p) if labels.dtype.kind != "b" else p.astype(int)
        if ref_scores is None:
            ref_scores, ref_pred = s, codes
            continue
        _assert_close_scores(name, ref_scores, s, f"encoding {key}")
        np.testing.assert_array_equal(codes, ref_pred, err_msg=f"{name}: encoding {key}")


SHIFTABLE = sorted(ESTIMATORS)


@pytest.mark.parametrize("name", SHIFTABLE)
@settings(max_examples=_examples(0.5))
@given(data=st.data(), shift=st.sampled_from([-1e4, -3.5, 1.0, 250.0, 1e4]))
def test_constant_shift_of_a_feature_after_standard_scaling(name, data, shift):
    if _skip_expensive(name, data):
        return
    is_clf = ESTIMATORS[name][2]
    X, y, Xt = data.draw(well_posed(classifier=is_clf))
    params = data.draw(invariance_params(name))
    if name == "BilevelSVC":
        params["max_iter"] = 2
    j = data.draw(st.integers(0, X.shape[1] - 1))
    X2, Xt2 = X.copy(), Xt.copy()
    X2[:, j] += shift
    Xt2[:, j] += shift
    a = _scores(_fit_quiet(make_pipeline(Scaler(), _tight(name, params)), X, y), Xt)
    b = _scores(_fit_quiet(make_pipeline(Scaler(), _tight(name, params)), X2, y), Xt2)
    _assert_close_scores(name, a, b, f"shifting feature {j} by {shift}")


# name -> how the parameters change when every sample is duplicated
DUPLICATION = {
    "SVC": lambda p: {**p, "C": p["C"] / 2},
    "SVR": lambda p: {**p, "C": p["C"] / 2},
    "NuSVR": lambda p: {**p, "C": p["C"] / 2},
    "LinearSVC": lambda p: {**p, "C": p["C"] / 2},
    "LinearSVR": lambda p: {**p, "C": p["C"] / 2},
    "KernelLogisticRegression": lambda p: {**p, "C": p["C"] / 2},
    "KernelRidge": lambda p: {**p, "ridge": p["ridge"] * 2},
    "ElasticNetSVC": lambda p: p,
    # γ·pen(a) + Σ q: twice the sum of losses needs twice the ridge weight
    "SelectiveRegression": lambda p: {**p, "ridge": p["ridge"] * 2},
    "SelectiveLogisticRegression": lambda p: {**p, "ridge": p["ridge"] * 2},
}


@pytest.mark.parametrize("name", sorted(DUPLICATION))
@settings(max_examples=N_EXAMPLES)
@given(data=st.data())
def test_duplicated_samples_with_half_cost(name, data):
    """Every sample twice with C/2 is the same optimisation problem as once with C."""
    if _skip_expensive(name, data):
        return
    is_clf = ESTIMATORS[name][2]
    X, y, Xt = data.draw(well_posed(classifier=is_clf))
    params = data.draw(invariance_params(name))
    a = _scores(_fit_quiet(_tight(name, params), X, y), Xt)
    X2, y2 = np.r_[X, X], np.r_[y, y]
    b = _scores(_fit_quiet(_tight(name, DUPLICATION[name](params)), X2, y2), Xt)
    _assert_close_scores(name, a, b, "duplicated samples with half the cost")


@pytest.mark.parametrize("name", ["SVC", "SVR", "LinearSVC", "KernelLogisticRegression",
                                  "KernelRidge", "ElasticNetSVC"])
@settings(max_examples=_examples(0.5))
@given(data=st.data())
def test_integer_sample_weight_equals_repeated_rows(name, data):
    """``sample_weight=2`` on a row is the row repeated (same C), weight 0 is the row
    removed."""
    if _skip_expensive(name, data):
        return
    is_clf = ESTIMATORS[name][2]
    X, y, Xt = data.draw(well_posed(classifier=is_clf))
    params = data.draw(invariance_params(name))
    if "gamma" in params:  # "scale"/"auto" would depend on the repeated rows
        params["gamma"] = 1.0 / X.shape[1]
    rng = np.random.RandomState(data.draw(st.integers(0, 10**6)))
    sw = rng.randint(0, 3, size=len(y)).astype(float)
    sw[:2] = 1.0  # both classes keep a sample
    rep = np.repeat(np.arange(len(y)), sw.astype(int))
    a = _scores(_fit_quiet(_tight(name, params), X, y, sample_weight=sw), Xt)
    b = _scores(_fit_quiet(_tight(name, params), X[rep], y[rep]), Xt)
    _assert_close_scores(name, a, b, "integer sample weights vs repeated rows")
