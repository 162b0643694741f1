"""``verbose``: every iterative estimator prints its progress when asked and nothing else.

scikit-learn's convention (LIBSVM's ``optimization finished, #iter = ...``): a fit with
``verbose`` on prints progress lines to stdout; with the default it prints nothing, on
stdout or stderr. The printed iteration counts are checked against the fitted
``n_iter_`` (so the lines report the solves that were run, not a fixed text). The
self-tuning estimators (``BilevelSVC``, ``Selective*CV``) report their outer progress on
stderr through :mod:`bisvm.progress`, which is checked as such.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

import bisvm


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return X, y


def _iters(text):
    """Iteration counts in the summary lines (LIBSVM's '#iter = k' or 'k iterations')."""
    return [int(a or b) for a, b in re.findall(r"#iter = (\d+)|(\d+) iterations", text)]


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a ConvergenceWarning is not progress output
        return est.fit(X, y) if y is not None else est.fit(X)


# (name, params, task, expected number of summary lines: None = one per n_iter_ entry)
SUMMARY = [
    ("SVC", {}, "multiclass", 3),
    ("SVC", {"multiclass": "ovr"}, "multiclass", 3),
    ("NuSVC", {"nu": 0.3}, "multiclass", 3),
    ("SVR", {}, "regression", 1),
    ("NuSVR", {}, "regression", 1),
    ("OneClassSVM", {"nu": 0.2}, "novelty", 1),
    ("LinearSVC", {}, "multiclass", 3),
    ("LinearSVC", {"multi_class": "crammer_singer", "max_iter": 200}, "multiclass", 1),
    ("LinearSVR", {"random_state": 0}, "regression", 1),
    ("KernelLogisticRegression", {}, "multiclass", 3),
    ("SelectiveRegression", {"selectivity": 0.05}, "regression", 1),
    ("SelectiveLogisticRegression", {"selectivity": 0.05}, "binary", 1),
    ("ElasticNetSVC", {}, "multiclass", 3),
    ("ElasticNetSVC", {"l1_smoothing": 0.0}, "binary", 1),
]


def _data(iris, task):
    X, y = iris
    return X, {"regression": X[:, 0] + 0.5 * X[:, 2], "novelty": None,
               "binary": (y > 0).astype(int)}.get(task, y)


@pytest.mark.parametrize("name, params, task, n_lines", SUMMARY,
                         ids=[f"{n}-{p}" if p else n for n, p, _, _ in SUMMARY])
def test_verbose_prints_each_solve_and_default_is_silent(iris, capsys, name, params, task,
                                                         n_lines):
    X, y = _data(iris, task)
    cls = getattr(bisvm, name)
    capsys.readouterr()
    quiet = _fit(cls(**params), X, y)
    assert capsys.readouterr() == ("", ""), "the default verbose=0 printed something"
    loud = _fit(cls(verbose=1, **params), X, y)
    out, err = capsys.readouterr()
    assert err == ""
    iters = _iters(out)
    assert len(iters) == n_lines, out
    n_iter = np.atleast_1d(loud.n_iter_)
    if name == "LinearSVC" and not params:  # n_iter_ is the largest of the per-class fits
        assert max(iters) == int(n_iter[0])
    else:
        assert iters == [int(k) for k in n_iter], out
    # verbose changes what is printed, not what is fitted
    np.testing.assert_array_equal(np.atleast_1d(quiet.n_iter_), n_iter)


def test_kernel_logistic_prints_every_newton_iteration(iris, capsys):
    X, y = iris
    est = _fit(bisvm.KernelLogisticRegression(verbose=1), X, y)
    out = capsys.readouterr().out
    for k, c in enumerate(est.classes_):
        lines = [ln for ln in out.splitlines() if f"(newton) {c} vs rest] iter" in ln]
        # iterations 0 (the start) .. n_iter_, with the objective decreasing (Newton with
        # an Armijo line search descends), the last equal to objective_
        assert len(lines) == est.n_iter_[k] + 1
        obj = [float(re.search(r"objective (\S+),", ln).group(1)) for ln in lines]
        assert all(b <= a for a, b in zip(obj, obj[1:]))
        assert obj[-1] == pytest.approx(est.objective_[k], rel=1e-9)


def test_selective_summary_reports_the_duality_gap(iris, capsys):
    X, _ = iris
    est = _fit(bisvm.SelectiveRegression(selectivity=0.05, verbose=True), X, X[:, 1])
    out = capsys.readouterr().out
    gap = float(re.search(r"duality gap = (\S+) \(converged\)", out).group(1))
    assert gap == pytest.approx(est.duality_gap_, rel=1e-3, abs=1e-300)


@pytest.mark.parametrize("name, params, task", [
    ("SelectiveRegressionCV", {}, "regression"),
    ("SelectiveLogisticRegressionCV", {}, "binary"),
    ("BilevelSVC", {"model": "scalar", "max_iter": 3}, "binary"),
])
def test_self_tuning_estimators_report_progress_on_stderr(iris, capsys, name, params, task):
    X, y = _data(iris, task)
    cls = getattr(bisvm, name)
    capsys.readouterr()
    _fit(cls(**params), X, y)
    assert capsys.readouterr() == ("", "")
    _fit(cls(verbose=1, **params), X, y)
    out, err = capsys.readouterr()
    assert err.strip() and out == ""
