"""What a new user trips on in the first ten minutes, each fixed (issue 13): predict
scores any target and takes the model file first, weights carry feature names, the
file's own class labels, true --help, no stray stdout lines, the fair select comparison."""


import numpy as np
import pandas as pd
import pytest
from cli_run import cli_json, in_process

from bisvm import cli, data
from bisvm.estimators.linear import LinearSVC


@pytest.fixture(scope="module")
def cancer(tmp_path_factory):
    """The tour's table (classes 0/1), a table of class 0 only, rows without a target, and
    a model file trained on the table."""
    d = tmp_path_factory.mktemp("cancer")
    ds = data.load_dataset("breast-cancer")
    frame = pd.DataFrame(ds.X, columns=ds.feature_names).assign(target=ds.y)
    frame.to_csv(d / "cancer.csv", index=False)
    frame[frame.target == 0].to_csv(d / "zero.csv", index=False)
    frame.drop(columns="target").iloc[:7].to_csv(d / "new.csv", index=False)
    frame.assign(target=np.where(frame.target == 1, "benign", "malignant")).to_csv(
        d / "words.csv", index=False)
    return d


@pytest.fixture(scope="module")
def model(cancer):
    path = cancer / "m.bisvm"
    code = cli.main(["fit", "--data", str(cancer / "cancer.csv"), "--target", "target",
                     "--model", "linear-svc", "--save", str(path), "--json", "--quiet"])
    assert code == 0
    return path


def _reference_predictions(cancer, path):
    ds = data.read_table(cancer / "cancer.csv", target="target")
    scaler = data.Scaler("standard").fit(ds.X)
    est = LinearSVC(random_state=0).fit(scaler.transform(ds.X), ds.y)
    rows = data.read_table(path, schema=ds.schema)
    return est.predict(scaler.transform(rows.X)), rows.y


def test_predict_scores_a_file_of_one_class_with_plain_accuracy(cancer, model, capsys):
    out = cli_json(["predict", str(model), "--data", str(cancer / "zero.csv"), "--json",
                    "--output", str(cancer / "p.csv")], capsys)
    pred, y = _reference_predictions(cancer, cancer / "zero.csv")
    assert set(y) == {0}
    assert out["score_name"] == "accuracy"
    assert out["score"] == pytest.approx(np.mean(pred == y), abs=1e-12)
    assert out["n_rows"] == int((pd.read_csv(cancer / "cancer.csv").target == 0).sum())


def test_predict_labels_the_model_never_saw_score_zero_not_an_error(cancer, model, capsys):
    out = cli_json(["predict", str(model), "--data", str(cancer / "words.csv"), "--json",
                    "--output", str(cancer / "w.csv")], capsys)
    assert out["score_name"] == "accuracy" and out["score"] == 0.0


def test_predict_model_file_positional_or_option_and_not_two(cancer, model, capsys):
    code, pos, err = in_process(["predict", str(model), "--data", str(cancer / "new.csv")],
                                capsys)
    assert code == 0, err
    code, opt, err = in_process(["predict", "--model", str(model), "--data",
                                 str(cancer / "new.csv")], capsys)
    assert code == 0, err
    assert pos == opt and pos.splitlines()[0] == "prediction,decision"
    assert len(pos.splitlines()) == 8
    code, _, err = in_process(["predict", str(model), "--model", str(cancer / "x.bisvm"),
                               "--data", str(cancer / "new.csv")], capsys)
    assert code == 2 and "two model files" in err
    code, _, err = in_process(["predict", "--data", str(cancer / "new.csv")], capsys)
    assert code == 2 and "model file" in err and len(err.strip().splitlines()) == 1


def test_predict_reports_r2_of_a_regressor(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    frame = pd.DataFrame(X, columns=["u", "v", "w"]).assign(y=X @ [1.0, -2.0, 0.5] + 3)
    frame.to_csv(tmp_path / "r.csv", index=False)
    cli_json(["fit", "--data", str(tmp_path / "r.csv"), "--target", "y", "--model",
              "kernel-ridge", "--kernel", "linear", "--save", str(tmp_path / "r.bisvm"),
              "--json"], capsys)
    out = cli_json(["predict", str(tmp_path / "r.bisvm"), "--data", str(tmp_path / "r.csv"),
                    "--json"], capsys)
    pred = np.asarray(out["predictions"]["prediction"])
    y = frame.y.to_numpy()
    r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
    assert out["score_name"] == "R2" and out["score"] == pytest.approx(r2, abs=1e-12)


def test_weights_are_printed_by_feature_name(cancer, capsys):
    args = ["--data", str(cancer / "cancer.csv"), "--target", "target", "--model",
            "bilevel", "--bilevel-model", "vector", "--criterion", "holdout",
            "--max-iter", "3", "--test-size", "0.25", "--json"]
    tuned = cli_json(["tune", "--method", "bilevel", *args], capsys)
    names = list(pd.read_csv(cancer / "cancer.csv").columns[:-1])

    def by_name(weights):
        # one weight per feature (and the intercept's when it is penalised), or the one
        # β of a refinement rejected on the held-out rows
        keys = set(weights) - {"intercept"}
        return keys == set(names) or keys == {"beta"}

    assert by_name(tuned["chosen"])
    assert not any(k.startswith("x") and k[1:].isdigit() for k in tuned["chosen"])
    fitted = cli_json(["fit", *args], capsys)
    assert by_name(fitted["penalty_weights"])
    sel = cli_json(["select", "--data", str(cancer / "cancer.csv"), "--target", "target",
                    "--criterion", "holdout", "--max-iter", "3", "--no-grid", "--json"],
                   capsys)
    assert by_name(sel["penalty_weights"])
    assert (set(sel["penalty_weights"]) == {"beta"}) == (sel["refined"] is False)


def test_select_and_report_speak_in_the_files_labels(cancer, tmp_path, capsys):
    code, out, err = in_process(["select", "--data", str(cancer / "words.csv"), "--target",
                                 "target", "--model", "scalar", "--no-grid", "--quiet"],
                                capsys)
    assert code == 0, err
    assert "favours class 'malignant', < 0 class 'benign'" in out
    rep = tmp_path / "r.html"
    code, _, err = in_process(["report", "--data", str(cancer / "cancer.csv"), "--target",
                               "target", "--bilevel-model", "scalar", "--no-grid", "--out",
                               str(rep), "--quiet"], capsys)
    assert code == 0, err
    html = rep.read_text()
    assert "true 0" in html and "predicted 1" in html
    assert "true -1" not in html and "predicted -1" not in html


def test_help_says_the_true_defaults_and_its_examples_run(cancer, capsys):
    for cmd in ("select", "fit", "predict", "tune", "report"):
        code, out, _ = in_process([cmd, "--help"], capsys)
        assert code == 0 and "default None" not in out and "default: None" not in out
    _, out, _ = in_process(["tune", "--help"], capsys)
    assert "bilevel for --method bilevel, svc for grid and random" in " ".join(out.split())
    _, out, _ = in_process(["report", "--help"], capsys)
    assert "--target diagnosis" not in out and "--target target" in out
    # the tour's table has the column the examples name
    assert "target" in pd.read_csv(cancer / "cancer.csv").columns


def test_tune_prints_no_backend_line_when_it_ran_here(capsys):
    code, out, err = in_process(["tune", "--dataset", "iris", "--method", "kfold", "--model",
                                 "linear-svc", "--grid-size", "2", "--cv", "2"], capsys)
    assert code == 0, err
    assert "ran on" not in out and "serial" not in out
    assert err == ""  # stderr is not a terminal and --verbose is not given


def test_select_json_times_both_methods_warm_and_reports_the_start_up(capsys):
    out = cli_json(["select", "--dataset", "iris", "--model", "scalar", "--criterion",
                    "holdout", "--json"], capsys)
    for key in ("seconds", "grid_seconds", "startup_seconds", "solves_ratio", "time_ratio"):
        assert out[key] is not None and out[key] > 0, key
    assert out["solves_ratio"] == pytest.approx(
        out["grid_lower_level_solves"] / out["lower_level_solves"])
    assert out["time_ratio"] == pytest.approx(out["grid_seconds"] / out["seconds"])
    assert out["total_seconds"] >= out["seconds"] + out["grid_seconds"]
    assert out["grid_size"] == 149
