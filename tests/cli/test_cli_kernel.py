"""The self-tuning RBF models on the command line: ``bisvm tune --method bilevel --model
svc|svr`` (AutoSVC, AutoSVR) and ``bisvm select --kernel rbf`` (one learned width per
feature), with their saved models, reports and refusals of options that fix what they
learn."""

import numpy as np
import pandas as pd
import pytest
from cli_run import cli_json, in_process

from bisvm import AutoSVC, AutoSVR
from bisvm.persistence import load_model

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """``xor.csv``: the class is the sign of x0 * x1 among 5 standard-normal columns
    (no linear model sees it); ``wave.csv``: a smooth nonlinear regression target."""
    d = tmp_path_factory.mktemp("kernel")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    df["label"] = np.where(X[:, 0] * X[:, 1] > 0, "same", "opposite")
    df.to_csv(d / "xor.csv", index=False)
    Z = rng.uniform(-2, 2, size=(120, 3))
    reg = pd.DataFrame(Z, columns=["u", "v", "w"])
    reg["y"] = np.sin(2 * Z[:, 0]) + Z[:, 1] ** 2 + 0.05 * rng.standard_normal(120)
    reg.to_csv(d / "wave.csv", index=False)
    return d


def test_tune_bilevel_svc_runs_autosvc_and_saves_it(tables, tmp_path, capsys):
    model = tmp_path / "auto.bisvm"
    r = cli_json(["tune", "--data", str(tables / "xor.csv"), "--target", "label",
                  "--method", "bilevel", "--model", "svc", "--max-iter", "10",
                  "--save", str(model), "--json"], capsys)
    assert r["estimator"] == "AutoSVC" and r["refit"] == "SVC"
    assert set(r["chosen"]) == {"C", "gamma"} and r["chosen"]["C"] > 0
    # the interaction is learnable by an RBF kernel: far above chance on held-out rows
    assert r["test_score"] > 0.8
    est = load_model(model).estimator
    assert isinstance(est, AutoSVC)
    assert est.C_ == r["chosen"]["C"] and float(est.gamma_) == r["chosen"]["gamma"]
    assert r["criterion_value"] == est.cv_value_ and r["lower_level_solves"] == est.n_solves_


def test_tune_bilevel_svc_per_feature_ranks_the_interaction_first(tables, capsys):
    r = cli_json(["tune", "--data", str(tables / "xor.csv"), "--target", "label",
                  "--method", "bilevel", "--model", "svc", "--widths", "per_feature",
                  "--json"], capsys)
    assert list(r["widths"]) == [f"x{j}" for j in range(5)]
    assert set(list(r["importance"])[:2]) == {"x0", "x1"}
    assert {"x0", "x1"} <= set(r["selected_features"])
    assert abs(sum(r["importance"].values()) - 1.0) < 1e-9


def test_tune_bilevel_svr_runs_autosvr(tables, capsys):
    for lower in ("kernel_ridge", "svr"):
        r = cli_json(["tune", "--data", str(tables / "wave.csv"), "--target", "y",
                      "--method", "bilevel", "--model", "svr", "--param", f"lower={lower}",
                      "--max-iter", "15", "--json"], capsys)
        assert r["estimator"] == "AutoSVR" and r["lower_level"] == lower
        assert ("ridge" if lower == "kernel_ridge" else "epsilon") in r["chosen"]
        assert r["task"] == "regression" and r["test_score"] > 0.8


@pytest.mark.parametrize("extra, message", [
    (["--C", "3"], "learns C"),
    (["--gamma", "0.1"], "learns gamma"),
    (["--kernel", "linear"], "RBF kernel"),
])
def test_tune_bilevel_svc_refuses_fixed_values(tables, extra, message, capsys):
    code, out, err = in_process(["tune", "--data", str(tables / "xor.csv"), "--target",
                                 "label", "--method", "bilevel", "--model", "svc", *extra],
                                capsys)
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_widths_needs_the_kernel_models(tables, capsys):
    code, _, err = in_process(["tune", "--data", str(tables / "xor.csv"), "--target",
                               "label", "--method", "grid", "--model", "svc", "--widths",
                               "per_feature"], capsys)
    assert code == 2 and "--widths applies to" in err


def test_tune_report_draws_the_path_on_the_surface(tables, tmp_path, capsys):
    out = tmp_path / "tune.html"
    code, _, err = in_process(["tune", "--data", str(tables / "xor.csv"), "--target",
                               "label", "--method", "bilevel", "--model", "svc", "--widths",
                               "per_feature", "--max-iter", "8", "--report", str(out)],
                              capsys)
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    # surface with the path, relevance bars, widths along the path
    assert text.count("<img") >= 3
    assert "Outer path on the 5-fold misclassification rate surface" in text
    assert "Learned relevance per feature" in text


def test_select_kernel_rbf_finds_the_interaction(tables, tmp_path, capsys):
    r = cli_json(["select", "--kernel", "rbf", "--data", str(tables / "xor.csv"), "--target",
                  "label", "--out", str(tmp_path), "--json"], capsys)
    assert r["kernel"] == "rbf" and r["model"] == "AutoSVC(widths='per_feature')"
    assert {"x0", "x1"} <= set(r["selected_features"])
    assert r["n_selected"] == len(r["selected_features"]) <= 5
    assert r["test_accuracy"] > 0.8
    assert (tmp_path / "widths.png").stat().st_size > 0


def test_select_kernel_rbf_on_a_continuous_target_runs_autosvr(tables, capsys):
    r = cli_json(["select", "--kernel", "rbf", "--data", str(tables / "wave.csv"), "--target",
                  "y", "--json"], capsys)
    assert r["model"] == "AutoSVR(widths='per_feature')" and r["task"] == "regression"
    assert {"u", "v"} <= set(r["selected_features"]) and r["test_r2"] > 0.8


def test_select_kernel_rbf_refuses_linear_options(tables, capsys):
    code, _, err = in_process(["select", "--kernel", "rbf", "--data",
                               str(tables / "xor.csv"), "--target", "label", "--model",
                               "vector"], capsys)
    assert code == 2 and "--kernel linear" in err and len(err.strip().splitlines()) == 1


def test_select_text_output_lists_the_widths(tables, capsys):
    code, out, err = in_process(["select", "--kernel", "rbf", "--data",
                                 str(tables / "xor.csv"), "--target", "label"], capsys)
    assert code == 0, err
    assert "bisvm select --kernel rbf" in out and "learned widths" in out
    assert AutoSVR is not None  # the regression model is public API as well
