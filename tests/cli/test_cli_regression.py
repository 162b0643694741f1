"""``bisvm select | fit | predict | tune | report`` on a continuous target (BilevelSVR).

The task rule of ``--task auto`` on its own, then the commands in this process on small
synthetic tables; the test scores they print are recomputed with scikit-learn's metrics
on the same split from an independent fit of the same estimator.
"""

import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from cli_run import cli_json, in_process
from sklearn.metrics import mean_squared_error, r2_score

from bisvm import data
from bisvm.cli.task import MAX_CLASSES, detect_task
from bisvm.estimators.bilevel_svr import BilevelSVR
from bisvm.persistence import load_model

INFORMATIVE = ["f0", "f1", "f2"]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """reg.csv: a float target of 3 informative among 8 features; counts.csv: an integer
    target with 40 values; classes.csv: an integer target with 2 values; halves.csv: a
    float target of two values with a fractional part; words.csv: a text target."""
    d = tmp_path_factory.mktemp("regression")
    rng = np.random.default_rng(0)
    n, p = 120, 8
    X = rng.normal(size=(n, p))
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(p)])
    signal = X[:, :3] @ np.array([2.0, -1.5, 1.0])
    frame.assign(y=3.0 + signal + 0.3 * rng.normal(size=n)).to_csv(d / "reg.csv",
                                                                    index=False)
    counts = np.clip(np.round(20 + 6 * signal), 0, None).astype(int)
    frame.assign(y=counts).to_csv(d / "counts.csv", index=False)
    frame.assign(y=(signal > 0).astype(int)).to_csv(d / "classes.csv", index=False)
    frame.assign(y=np.where(signal > 0, 1.5, 0.5)).to_csv(d / "halves.csv", index=False)
    frame.assign(y=np.where(signal > 0, "up", "down")).to_csv(d / "words.csv", index=False)
    return d


def _split(path, seed=0, test_size=0.25):
    ds = data.read_table(path, target="y")
    return data.train_test_split_seeded(ds.X, np.asarray(ds.y, float), test_size=test_size,
                                        random_state=seed, stratify=False)


# ------------------------------------------------------------------ the task rule


@pytest.mark.parametrize("y, task", [
    (np.array([0.5, 1.25, 2.0, 0.5]), "regression"),  # fractional floats
    (np.arange(MAX_CLASSES) % 7, "classification"),  # few integers
    (np.arange(MAX_CLASSES), "classification"),  # exactly the limit
    (np.arange(MAX_CLASSES + 1), "regression"),  # one more
    (np.array([0.0, 1.0, 1.0, 0.0]), "classification"),  # integer-valued floats
    (np.arange(30, dtype=float), "regression"),
    (np.array(["a", "b", "a"], dtype=object), "classification"),
    (np.array([True, False, True]), "classification"),
])
def test_auto_task_rule(y, task):
    got, reason = detect_task(y, "auto", target="y")
    assert got == task
    assert reason.startswith("auto: the target 'y' holds") and "\n" not in reason


def test_explicit_task_overrides_the_rule_both_ways():
    assert detect_task(np.arange(100), "classification")[0] == "classification"
    assert detect_task(np.array([0, 1, 0]), "regression")[0] == "regression"
    with pytest.raises(ValueError, match="--task regression: the target 'y' is not numeric"):
        detect_task(np.array(["a", "b"], dtype=object), "regression", target="y")
    with pytest.raises(ValueError, match="--task must be one of"):
        detect_task(np.arange(3), "ordinal")


def test_loss_choices_are_bilevel_svr_losses():
    from bisvm.cli.select_regression import LOSSES, REGRESSION_CRITERION_NAMES
    from bisvm.estimators.bilevel_svr import REGRESSION_CRITERIA, REGRESSION_LOSSES

    assert set(LOSSES) == set(REGRESSION_LOSSES) and len(LOSSES) == len(REGRESSION_LOSSES)
    assert set(REGRESSION_CRITERION_NAMES) == set(REGRESSION_CRITERIA)


# ------------------------------------------------------------------ bisvm select


def test_select_on_a_float_target_scores_like_sklearn(tables, capsys):
    path = str(tables / "reg.csv")
    out = cli_json(["select", "--data", path, "--target", "y", "--seed", "3", "--json"],
                   capsys)
    assert out["task"] == "regression" and "fractional" in out["task_reason"]
    assert "test_accuracy" not in out
    Xtr, Xte, ytr, yte = _split(path, seed=3)
    assert (out["n_train"], out["n_test"]) == (len(ytr), len(yte))
    ref = BilevelSVR(l2_penalty=0.01, random_state=3).fit(Xtr, ytr)
    pred = ref.predict(Xte)
    assert out["test_r2"] == pytest.approx(r2_score(yte, pred), abs=1e-10)
    assert out["test_rmse"] == pytest.approx(np.sqrt(mean_squared_error(yte, pred)),
                                             abs=1e-10)
    assert out["test_rmse_training_mean"] == pytest.approx(
        np.sqrt(mean_squared_error(yte, np.full_like(yte, ytr.mean()))), abs=1e-12)
    imp = ref.feature_importances_
    assert out["selected_features"] == [f"f{j}" for j in np.argsort(-imp, kind="stable")
                                        if imp[j] > 0]
    assert set(INFORMATIVE) <= set(out["selected_features"])
    assert out["coefficients"]["f0"] == pytest.approx(float(ref.coef_[0]), abs=1e-12)
    assert out["intercept"] == pytest.approx(float(ref.intercept_), abs=1e-12)


def test_select_text_says_the_task_and_prints_r2_rmse_and_plots(tables, capsys, tmp_path):
    path = str(tables / "reg.csv")
    code, text, err = in_process(["select", "--data", path, "--target", "y", "--seed", "3",
                                  "--out", str(tmp_path / "plots")], capsys)
    assert code == 0, err
    lines = text.splitlines()
    task_lines = [ln for ln in lines if "task: regression" in ln]
    assert len(task_lines) == 1 and "fractional part" in task_lines[0]
    Xtr, Xte, ytr, yte = _split(path, seed=3)
    pred = BilevelSVR(l2_penalty=0.01, random_state=3).fit(Xtr, ytr).predict(Xte)
    r2_line = next(ln for ln in lines if ln.startswith("test R²"))
    rmse_line = next(ln for ln in lines if ln.startswith("test RMSE"))
    assert float(r2_line.split()[2]) == pytest.approx(r2_score(yte, pred), abs=5e-5)
    assert float(rmse_line.split()[2]) == pytest.approx(
        np.sqrt(mean_squared_error(yte, pred)), rel=1e-5)
    assert "test accuracy" not in text
    for name in ("importance.png", "predicted_vs_true.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 1000


def test_select_detects_integers_by_their_count_and_task_overrides(tables, capsys):
    fast = ["--no-grid", "--model", "scalar", "--max-iter", "3", "--json"]
    many = cli_json(["select", "--data", str(tables / "counts.csv"), "--target", "y",
                     "--max-iter", "3", "--json"], capsys)
    assert many["task"] == "regression" and "more than 20" in many["task_reason"]
    few = cli_json(["select", "--data", str(tables / "classes.csv"), "--target", "y",
                    *fast], capsys)
    assert few["task"] == "classification" and "test_accuracy" in few
    forced = cli_json(["select", "--data", str(tables / "classes.csv"), "--target", "y",
                       "--task", "regression", "--max-iter", "3", "--json"], capsys)
    assert forced["task"] == "regression" and forced["task_reason"] == "--task regression"
    halves = cli_json(["select", "--data", str(tables / "halves.csv"), "--target", "y",
                       "--task", "classification", *fast], capsys)
    assert halves["task"] == "classification"
    assert {halves["positive_class"], halves["negative_class"]} == {0.5, 1.5}


def test_select_stability_selection_of_the_regressor(tables, capsys):
    out = cli_json(["select", "--data", str(tables / "reg.csv"), "--target", "y",
                    "--max-iter", "5", "--stability", "3", "--json"], capsys)
    stab = out["stability"]
    assert stab["n_pairs"] == 3 and "test_accuracy" not in stab
    assert set(stab["stable_features"]) <= set(stab["selection_frequency"])
    assert all(stab["selection_frequency"][f] >= stab["threshold"]
               for f in stab["stable_features"])
    assert set(INFORMATIVE) <= set(stab["stable_features"])
    assert stab["test_r2"] <= 1.0


def test_select_a_bundled_feature_as_the_target(capsys):
    out = cli_json(["select", "--dataset", "iris", "--target", "petal width (cm)",
                    "--max-iter", "3", "--json"], capsys)
    assert out["task"] == "regression" and out["target"] == "petal width (cm)"
    assert out["n_features"] == 3 and "petal width (cm)" not in out["coefficients"]
    assert out["test_r2"] > 0.8  # petal length and width are nearly proportional


def test_text_target_with_task_regression_is_one_line_error(tables):
    r = subprocess.run([sys.executable, "-m", "bisvm", "select", "--data",
                        str(tables / "words.csv"), "--target", "y", "--task", "regression"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("bisvm: error: --task regression: the target 'y' is not "
                               "numeric") and r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("option", [["--criterion", "holdout"], ["--hinge-smoothing", "0.5"],
                                    ["--learn-l2"], ["--positive", "1"]])
def test_classification_options_are_refused_on_a_regression(tables, capsys, option):
    code, out, err = in_process(["select", "--data", str(tables / "reg.csv"), "--target",
                                 "y", *option], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"bisvm: error: {option[0]} applies to classification")


# ------------------------------------------------------------------ fit, predict, tune


def test_fit_bilevel_svr_and_predict_round_trip(tables, capsys, tmp_path):
    path = str(tables / "reg.csv")
    model = tmp_path / "reg.bisvm"
    fit = cli_json(["fit", "--data", path, "--target", "y", "--model", "bilevel-svr",
                    "--test-size", "0.25", "--save", str(model), "--json"], capsys)
    assert fit["estimator"] == "BilevelSVR" and fit["score_name"] == "R2"
    Xtr, Xte, ytr, yte = _split(path, seed=0)
    ref = BilevelSVR(random_state=0).fit(Xtr, ytr)
    assert fit["test_score"] == pytest.approx(r2_score(yte, ref.predict(Xte)), abs=1e-10)
    assert fit["test_rmse"] == pytest.approx(
        np.sqrt(mean_squared_error(yte, ref.predict(Xte))), abs=1e-10)
    new = pd.read_csv(path).drop(columns="y").iloc[::7]
    new.to_csv(tmp_path / "new.csv", index=False)
    code, text, err = in_process(["predict", str(model), "--data",
                                  str(tmp_path / "new.csv")], capsys)
    assert code == 0, err
    printed = pd.read_csv(io.StringIO(text))
    assert list(printed.columns) == ["prediction"]
    loaded = load_model(model).estimator
    assert isinstance(loaded, BilevelSVR)
    np.testing.assert_allclose(printed["prediction"], ref.predict(new.to_numpy()),
                               rtol=1e-12, atol=1e-9)
    scored = cli_json(["predict", str(model), "--data", path, "--json"], capsys)
    full = pd.read_csv(path)
    assert scored["score_name"] == "R2"
    assert scored["score"] == pytest.approx(
        r2_score(full["y"], ref.predict(full.drop(columns="y").to_numpy())), abs=1e-10)


def test_tune_bilevel_on_a_continuous_target(tables, capsys, tmp_path):
    path = str(tables / "reg.csv")
    report = tmp_path / "tune.html"
    out = cli_json(["tune", "--data", path, "--target", "y", "--method", "bilevel",
                    "--report", str(report), "--json"], capsys)
    assert (out["model"], out["estimator"], out["task"]) == ("bilevel-svr", "BilevelSVR",
                                                             "regression")
    assert out["notes"][0].startswith("task: regression (auto:")
    Xtr, Xte, ytr, yte = _split(path, seed=0)
    ref = BilevelSVR(random_state=0).fit(Xtr, ytr)
    assert out["test_score"] == pytest.approx(r2_score(yte, ref.predict(Xte)), abs=1e-10)
    assert out["criterion_value"] == pytest.approx(ref.validation_score_, abs=1e-12)
    assert set(INFORMATIVE) <= set(out["selected_features"])
    assert "RMSE" in report.read_text(encoding="utf-8")
    code, _, err = in_process(["tune", "--data", path, "--target", "y", "--method", "grid",
                               "--model", "bilevel-svr"], capsys)
    assert code == 2 and "tunes itself" in err


# ------------------------------------------------------------------ report


def test_report_of_a_regression_run_and_of_its_saved_model(tables, capsys, tmp_path):
    path = str(tables / "reg.csv")
    out = cli_json(["report", "--data", path, "--target", "y", "--max-iter", "5",
                    "--out", str(tmp_path / "r.html"), "--json"], capsys)
    assert out["task"] == "regression" and out["figures"] >= 3
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    for text in ("test R²", "test RMSE", "Predicted against true", "Selected features"):
        assert text in html
    assert html.count("data:image/png;base64,") == out["figures"]
    code, _, err = in_process(["report", "--data", path, "--target", "y", "--sweep", "2",
                               "--max-iter", "2", "--out", str(tmp_path / "s.html")], capsys)
    assert code == 2 and "--sweep" in err
    model = tmp_path / "m.bisvm"
    in_process(["fit", "--data", path, "--target", "y", "--model", "bilevel-svr",
                "--max-iter", "5", "--save", str(model), "-q"], capsys)
    rep = cli_json(["report", "--model", str(model), "--data", path,
                    "--out", str(tmp_path / "m.html"), "--json"], capsys)
    assert rep["estimator"] == "BilevelSVR"
    html = (tmp_path / "m.html").read_text(encoding="utf-8")
    assert "RMSE (target units)" in html and "Predicted against true" in html


def test_help_texts_name_the_regression_options(capsys):
    for cmd, words in (("select", ("--task", "--regression-criterion", "BilevelSVR")),
                       ("report", ("--task", "BilevelSVR")),
                       ("fit", ("bilevel-svr",)), ("tune", ("bilevel-svr", "--task"))):
        code, text, _ = in_process([cmd, "--help"], capsys)
        assert code == 0
        for w in words:
            assert w in text, (cmd, w)
