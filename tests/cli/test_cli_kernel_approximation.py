"""``--approximation auto|none|nystroem`` and ``--n-components`` of the self-tuning RBF
models on the command line: they reach AutoSVC's and AutoSVR's parameters, and left out
they leave the estimators' own defaults in force."""

import argparse

import numpy as np
import pandas as pd
import pytest
from cli_run import cli_json, in_process

from bisvm import AutoSVC, AutoSVR
from bisvm.cli.kernel_tune import APPROXIMATIONS, build_auto
from bisvm.persistence import load_model

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("approx")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((160, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["label"] = np.where(X[:, 0] * X[:, 1] > 0, "same", "opposite")
    df["y"] = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(160)
    df.drop(columns="y").to_csv(d / "xor.csv", index=False)
    df.drop(columns="label").to_csv(d / "wave.csv", index=False)
    return d


def _tune(tables, model, extra, tmp_path, capsys):
    table, target = ("xor.csv", "label") if model == "svc" else ("wave.csv", "y")
    path = tmp_path / f"{model}.bisvm"
    r = cli_json(["tune", "--data", str(tables / table), "--target", target, "--method",
                  "bilevel", "--model", model, "--max-iter", "6", "--save", str(path),
                  "--json", *extra], capsys)
    return r, load_model(path).estimator


@pytest.mark.parametrize("model, cls", [("svc", AutoSVC), ("svr", AutoSVR)])
def test_defaults_are_the_estimators(tables, model, cls, tmp_path, capsys):
    r, est = _tune(tables, model, [], tmp_path, capsys)
    defaults = cls().get_params(deep=False)
    for name in ("approximation", "n_components"):
        assert est.get_params()[name] == defaults[name]
    # 120 training rows: below every threshold, so the default runs the exact kernel
    assert r["approximation"] == "none" and est.approximation_ is None


@pytest.mark.parametrize("model", ["svc", "svr"])
def test_nystroem_and_its_rank_reach_the_estimator(tables, model, tmp_path, capsys):
    r, est = _tune(tables, model, ["--approximation", "nystroem", "--n-components", "40"],
                   tmp_path, capsys)
    assert est.approximation == "nystroem" and est.n_components == 40
    assert est.approximation_ == "nystroem" and len(est.landmark_indices_) == 40
    assert r["approximation"] == "nystroem" and r["n_components"] == 40
    assert r["refit"] == "its own dual solution"


def test_none_keeps_the_exact_kernel(tables, tmp_path, capsys):
    r, est = _tune(tables, "svr", ["--approximation", "none"], tmp_path, capsys)
    assert est.approximation is None and est.approximation_ is None
    assert r["approximation"] == "none" and "n_components" not in r
    assert r["final_model"] == est.final_model_


def test_bad_values_are_refused_on_one_line(tables, capsys):
    for extra, message in ((["--approximation", "exact"], "--approximation"),
                           (["--n-components", "0"], "--n-components")):
        code, _, err = in_process(["tune", "--data", str(tables / "xor.csv"), "--target",
                                   "label", "--method", "bilevel", "--model", "svc",
                                   *extra], capsys)
        assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("value", sorted(APPROXIMATIONS))
def test_build_auto_maps_each_choice(value):
    """What ``bisvm select --kernel rbf`` builds from the same options."""
    ns = argparse.Namespace(approximation=value, n_components=30, seed=0)
    for model, cls in (("svc", AutoSVC), ("svr", AutoSVR)):
        est = build_auto(ns, model, widths="per_feature")
        assert isinstance(est, cls) and est.approximation == APPROXIMATIONS[value]
        assert est.n_components == 30 and est.widths == "per_feature"
    left_out = build_auto(argparse.Namespace(seed=0), "svr")
    assert left_out.get_params() == AutoSVR(random_state=0).get_params()


def test_select_text_says_which_kernel_was_tuned(tables, capsys):
    code, out, err = in_process(["select", "--kernel", "rbf", "--data",
                                 str(tables / "wave.csv"), "--target", "y", "--max-iter",
                                 "6"], capsys)
    assert code == 0, err
    assert "tuned on the exact kernel; refitted model: " in out


def test_select_kernel_rbf_passes_the_approximation(tables, capsys):
    r = cli_json(["select", "--kernel", "rbf", "--data", str(tables / "wave.csv"),
                  "--target", "y", "--approximation", "nystroem", "--n-components", "30",
                  "--max-iter", "6", "--json"], capsys)
    assert r["approximation"] == "nystroem" and r["n_components"] == 30


def test_select_linear_refuses_the_approximation(tables, capsys):
    code, _, err = in_process(["select", "--data", str(tables / "wave.csv"), "--target",
                               "y", "--approximation", "nystroem"], capsys)
    assert code != 0 and "--approximation" in err and "--kernel rbf" in err
    assert "Traceback" not in err
