"""``bisvm select`` driven as a user would: a subprocess, on bundled data and on CSVs (the
bad-input cases run in this process, one of them also as a subprocess: a fresh interpreter
costs seconds of imports per case)."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from cli_run import in_process


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "bisvm", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_select_json_on_bundled_iris_scalar_has_grid_comparison():
    r = run("select", "--dataset", "iris", "--model", "scalar", "--criterion", "holdout",
            "--json")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    for key in ("validation_objective", "test_accuracy", "penalty_weights",
                "selected_features", "importance", "iterations", "lower_level_solves",
                "seconds", "grid_validation_objective", "grid_lower_level_solves",
                "grid_seconds"):
        assert key in out
    assert out["validation_objective"] <= out["grid_validation_objective"] + 1e-4
    # the scan, L-BFGS and the final refit: a few times fewer solves than the 149-point grid
    assert out["lower_level_solves"] * 5 <= out["grid_lower_level_solves"]
    assert 0.9 <= out["test_accuracy"] <= 1.0
    assert set(out["importance"]) == set(out["selected_features"])


def test_select_csv_with_categorical_column_and_plots(tmp_path):
    rng = np.random.default_rng(0)
    n = 160
    df = pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.normal(size=n), "noise": rng.normal(size=n),
        "colour": rng.choice(["red", "green", "blue"], size=n),
    })
    df["label"] = np.where(df.a - df.b + 0.3 * (df.colour == "red") > 0, "yes", "no")
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    r = run("select", "--data", str(path), "--target", "label", "--out",
            str(tmp_path / "plots"))
    assert r.returncode == 0, r.stderr
    assert "colour" in r.stdout and "encoded" in r.stdout.lower()
    assert "test accuracy" in r.stdout
    for name in ("validation_curve.png", "regularization_path.png", "importance.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 1000


@pytest.mark.parametrize("content, extra, match", [
    (None, ["--data", "missing.csv"], "missing.csv"),
    ("", ["--data", "empty.csv"], "empty"),
    ("a,b,y\n1,2,0\n3,nan,1\n4,5,0\n6,7,1\n", ["--data", "nan.csv"], "nan"),
    ("a,b,y\n1,2,0\n3,4,0\n5,6,0\n", ["--data", "one.csv"], "class"),
    ("a,b,y\n1,2,0\n3,4,1\n", ["--data", "few.csv", "--target", "zz"], "zz"),
    ("a,b,y\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(12)),
     ["--data", "small.csv", "--cv", "20", "--test-size", "0.2"], "cv"),
    (None, ["--model", "group", "--groups", "mean=0-9,bogus"], "bogus"),
])
def test_select_bad_input_exits_2_with_one_line(tmp_path, monkeypatch, capsys, content,
                                                extra, match):
    # in this process: an uncaught exception would fail the test as a traceback would;
    # the first case also goes through a fresh interpreter, as a user runs it
    if content is not None:
        (tmp_path / extra[1]).write_text(content)
    monkeypatch.chdir(tmp_path)
    code, out, stderr = in_process(["select", *extra], capsys)
    assert code == 2, (out, stderr)
    err = stderr.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in stderr
    assert match.lower() in err[0].lower()
    if extra == ["--data", "missing.csv"]:
        r = run("select", *extra, cwd=tmp_path)
        assert (r.returncode, r.stderr) == (2, stderr)


def test_help_and_datasets():
    r = run("select", "--help")
    assert r.returncode == 0 and "bilevel" in r.stdout
    r = run("datasets", "--json")
    assert r.returncode == 0 and "breast-cancer" in json.loads(r.stdout)
