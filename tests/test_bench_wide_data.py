"""The synthetic problems of ``benchmarks/bench_wide.py``: the exact Bayes accuracy its
report quotes agrees with a Monte-Carlo estimate of the Bayes rule (linear discriminant on
the informative columns, fitted on many rows) on fresh rows."""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _wide_data import PROBLEMS, bayes_accuracy, dense_problem  # noqa: E402


@pytest.mark.parametrize("name", ["leukemia", "wide", "tall"])
def test_bayes_accuracy_matches_monte_carlo(name):
    spec = replace(PROBLEMS[name], n_train=60_000, n_test=60_000, d=PROBLEMS[name].k + 20)
    X, y, inf = dense_problem(spec, np.random.default_rng(1))
    Xi = X[:, inf]
    fit, test = slice(0, 60_000), slice(60_000, None)
    mu = (Xi[fit][y[fit] > 0].mean(0) - Xi[fit][y[fit] < 0].mean(0)) / 2
    w = np.linalg.solve(np.cov(Xi[fit].T), mu)
    acc = np.mean(np.sign(Xi[test] @ w) == y[test])
    # 60,000 rows: the standard error is below 0.0015
    assert acc == pytest.approx(bayes_accuracy(spec), abs=0.006)


def test_sparse_problem_has_no_closed_form():
    assert bayes_accuracy(PROBLEMS["sparse"]) is None
