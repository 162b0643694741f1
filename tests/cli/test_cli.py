"""``bisvm fit | predict | tune | report`` driven as a user would: subprocesses on bundled
data and on CSVs written here; error paths end with exit code 2 and one line."""

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from cli_run import cli_json, in_process

from bisvm import data
from bisvm.estimators.kernel_ridge import KernelRidge
from bisvm.estimators.linear import LinearSVC
from bisvm.persistence import load_model


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "bisvm", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def one_json(r):
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1, r.stdout
    return json.loads(lines[0])


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """A classification CSV (numeric + categorical columns, text labels), new rows to
    predict (columns shuffled, an extra column), and a regression CSV."""
    d = tmp_path_factory.mktemp("tables")
    rng = np.random.default_rng(0)
    n = 120
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                       "noise": rng.normal(size=n),
                       "colour": rng.choice(["red", "green", "blue"], size=n)})
    df["label"] = np.where(df.a - 0.8 * df.b + 0.7 * (df.colour == "red")
                           + 0.3 * rng.normal(size=n) > 0, "yes", "no")
    df.to_csv(d / "train.csv", index=False)
    new = df.drop(columns="label").sample(frac=1.0, random_state=1).iloc[:30]
    new = new[["colour", "noise", "b", "a"]].assign(row_id=np.arange(30))
    new.to_csv(d / "new.csv", index=False)
    X = rng.normal(size=(60, 3))
    reg = pd.DataFrame(X, columns=["u", "v", "w"])
    reg["y"] = 2 + X @ [1.5, -1.0, 0.0] + 0.2 * rng.normal(size=60)
    reg.to_csv(d / "reg.csv", index=False)
    two = df[["a", "b", "label"]]
    two.to_csv(d / "two.csv", index=False)
    return d


def test_help_of_every_subcommand(capsys):
    r = run("--help")
    assert r.returncode == 0
    for cmd in ("select", "fit", "predict", "tune", "report", "datasets"):
        assert cmd in r.stdout
    for cmd, word in (("fit", "--save"), ("predict", "schema"), ("tune", "diffloo"),
                      ("report", "self-contained")):
        code, out, _ = in_process([cmd, "--help"], capsys)
        assert code == 0 and word in out and "examples:" in out


def test_fit_save_predict_round_trip_equals_in_process_model(tables, tmp_path):
    model = tmp_path / "m.bisvm"
    out = one_json(run("fit", "--data", str(tables / "train.csv"), "--target", "label",
                       "--model", "linear-svc", "--C", "0.5", "--save", str(model), "--json"))
    assert out["estimator"] == "LinearSVC" and out["saved"] == str(model)
    assert out["classes"] == ["no", "yes"] and out["n_features"] == 6  # colour one-hot
    assert any("colour" in n for n in out["notes"])
    r = run("predict", "--model", str(model), "--data", str(tables / "new.csv"),
            "--output", str(tmp_path / "p.csv"))
    assert r.returncode == 0, r.stderr
    pred = pd.read_csv(tmp_path / "p.csv")
    assert list(pred.columns) == ["prediction", "decision"]

    # the same pipeline in this process: read, scale on the training rows, fit
    ds = data.read_table(tables / "train.csv", target="label")
    scaler = data.Scaler("standard").fit(ds.X)
    est = LinearSVC(C=0.5, random_state=0).fit(scaler.transform(ds.X), ds.y)
    new = data.read_table(tables / "new.csv", schema=ds.schema)
    Xn = scaler.transform(new.X)
    assert list(pred["prediction"]) == list(est.predict(Xn))
    assert np.array_equal(pred["decision"].to_numpy(), est.decision_function(Xn))
    # and the loaded file predicts what the CLI wrote
    loaded = load_model(model)
    assert np.array_equal(loaded.estimator.decision_function(loaded.scaler.transform(new.X)),
                          pred["decision"].to_numpy())
    assert loaded.extra["command"] == "fit" and loaded.schema["target"] == "label"


def test_fit_bundled_with_probabilities_and_predict_json(tmp_path, capsys):
    model = tmp_path / "k.bisvm"
    out = cli_json(["fit", "--dataset", "iris", "--model", "kernel-logistic",
                    "--C", "2", "--test-size", "0.3", "--json", "--save", str(model)], capsys)
    assert out["n_train"] == 105 and out["n_test"] == 45 and 0.85 <= out["test_score"] <= 1
    assert out["params"]["C"] == 2.0
    ds = data.load_dataset("iris")
    pd.DataFrame(ds.X[::10], columns=ds.feature_names).to_csv(tmp_path / "x.csv",
                                                              index=False)
    res = cli_json(["predict", "--model", str(model), "--data", str(tmp_path / "x.csv"),
                    "--json"], capsys)
    p = res["predictions"]
    assert res["n_rows"] == 15
    probs = np.array([p[f"proba_{k}"] for k in (0, 1, 2)]).T
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert np.array_equal(np.argmax(probs, axis=1), p["prediction"])


def test_tune_grid_on_dask_local_equals_serial(tables, capsys):
    pytest.importorskip("distributed")
    args = ["tune", "--data", str(tables / "train.csv"), "--target", "label", "--method",
            "grid", "--model", "svc", "--grid-size", "3", "--cv", "3", "--json"]
    serial = cli_json(args, capsys)
    dask = cli_json(args + ["--dask", "local", "--dask-threads"], capsys)
    assert serial["backend"] == "serial"
    assert dask["backend"] == "local Dask cluster on 127.0.0.1 (2 workers)"
    for key in ("chosen", "criterion_value", "cv_mean_scores", "candidates", "test_score"):
        assert serial[key] == dask[key], key
    assert serial["n_candidates"] == 9
    assert serial["criterion_value"] == max(serial["cv_mean_scores"])


def test_tune_bilevel_on_bundled_and_kfold_with_report_and_save(tables, tmp_path, capsys):
    out = cli_json(["tune", "--dataset", "iris", "--method", "bilevel", "--bilevel-model",
                    "scalar", "--criterion", "holdout", "--json"], capsys)
    # three classes, one-vs-rest: one learned weight per class
    assert sorted(out["chosen"]) == ["beta[0]", "beta[1]", "beta[2]"]
    assert all(v > 0 for v in out["chosen"].values())
    assert out["estimator"] == "BilevelSVC" and out["test_score"] >= 0.6

    rep, model = tmp_path / "t.html", tmp_path / "t.bisvm"
    code, text, err = in_process(
        ["tune", "--data", str(tables / "train.csv"), "--target", "label", "--method",
         "kfold", "--model", "linear-svc", "--grid-size", "3", "--report", str(rep),
         "--save", str(model)], capsys)
    assert code == 0, err
    assert "chosen:" in text and "C" in text and "test accuracy" in text
    assert "data:image/png;base64" in rep.read_text()
    assert load_model(model).extra["method"] == "kfold"


def test_tune_loo_matches_closed_form_leave_one_out(tables, capsys):
    out = cli_json(["tune", "--data", str(tables / "reg.csv"), "--target", "y", "--method",
                    "loo", "--model", "kernel-ridge", "--kernel", "linear", "--grid-size",
                    "3", "--test-size", "0.25", "--json"], capsys)
    # independent: the exact LOO residuals of (linear) kernel ridge in closed form
    ds = data.read_table(tables / "reg.csv", target="y")
    Xtr, _, ytr, _ = data.train_test_split_seeded(ds.X, ds.y, test_size=0.25,
                                                  random_state=0, stratify=False)
    Xs = data.Scaler().fit(Xtr).transform(Xtr)
    grid = out["grid"]["ridge"]
    ref = [KernelRidge(ridge=v, kernel="linear", fit_intercept=True).fit(Xs, ytr).loo_mse_
           for v in grid]
    assert np.allclose(out["criterion_values"], ref, rtol=1e-8)
    assert out["chosen"]["ridge"] == grid[int(np.argmin(ref))]
    assert out["test_score"] > 0.8


def test_report_of_selection_and_of_saved_model(tables, tmp_path, capsys):
    out = one_json(run("report", "--data", str(tables / "two.csv"), "--target", "label",
                       "--bilevel-model", "scalar", "--criterion", "holdout", "--no-grid",
                       "--out", str(tmp_path / "r.html"), "--json"))
    text = (tmp_path / "r.html").read_text()
    # importance, fold selection frequency, convergence, decision boundary (two features)
    assert out["figures"] == 4 and text.count("data:image/png;base64") == 4
    assert "fold models that select each feature" in text
    assert "<script" not in text and "Decision boundary" in text

    # bundled data (the thesis's Iris task: the first two classes), with the (mu, gamma)
    # sweep on a 2 x 2 grid
    out = cli_json(["report", "--dataset", "iris", "--bilevel-model", "scalar", "--no-grid",
                    "--sweep", "2", "--out", str(tmp_path / "iris.html"), "--json"], capsys)
    assert out["kind"] == "selection" and out["source"] == "bundled:iris"
    assert np.array(out["sweep_counts"]).shape == (2, 2)
    assert "Sparsity over" in (tmp_path / "iris.html").read_text()

    cli_json(["fit", "--data", str(tables / "train.csv"), "--target", "label", "--model",
              "elastic-net", "--penalty-weight", "0.02", "--save",
              str(tmp_path / "en.bisvm"), "--json"], capsys)
    code, _, err = in_process(["report", "--model", str(tmp_path / "en.bisvm"), "--data",
                               str(tables / "train.csv"), "--out", str(tmp_path / "m.html")],
                              capsys)
    assert code == 0, err
    text = (tmp_path / "m.html").read_text()
    assert "ElasticNetSVC" in text and "Smoothed elastic-net SVM objective" in text
    assert "Confusion matrix" in text and text.count("data:image/png;base64") == 2


def test_bad_input_in_a_real_process_is_one_line_exit_2(tables, tmp_path):
    bad = tmp_path / "bad.bisvm"
    bad.write_bytes(b"PK\x03\x04 this is not a model")
    r = run("predict", "--model", str(bad), "--data", str(tables / "new.csv"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "bad.bisvm" in r.stderr


@pytest.mark.parametrize("argv, match", [
    (["fit", "--data", "{d}/missing.csv"], "missing.csv"),
    (["fit", "--data", "{d}/train.csv", "--target", "zz"], "zz"),
    (["fit", "--dataset", "iris", "--model", "svc", "--epsilon", "0.1"], "--epsilon"),
    (["fit", "--dataset", "iris", "--model", "svc", "--param", "bogus=1"], "bogus"),
    (["fit", "--dataset", "iris", "--model", "svr"], "regression"),
    (["fit", "--data", "{d}/train.csv", "--target", "label", "--model", "svr"], "numeric"),
    (["fit", "--dataset", "iris", "--C", "-1"], "--C"),
    (["fit", "--dataset", "iris", "--test-size", "1.5"], "--test-size"),
    (["predict", "--model", "{d}/nothing.bisvm", "--data", "{d}/new.csv"], "nothing.bisvm"),
    (["tune", "--dataset", "iris", "--method", "diffloo", "--model", "svc"], "selective"),
    (["tune", "--dataset", "iris", "--method", "grid", "--model", "bilevel"], "bilevel"),
    (["tune", "--dataset", "iris", "--method", "grid", "--n-jobs", "0"], "n-jobs"),
    (["tune", "--dataset", "iris", "--method", "grid", "--range", "C=5:1"], "LOW"),
    (["tune", "--dataset", "iris", "--method", "grid", "--range", "nu=1:2"], "nu"),
    (["tune", "--dataset", "iris"], "--method"),
    (["fit", "--model", "forest"], "forest"),
    (["report", "--dataset", "iris", "--out", "{d}/r.txt"], "html"),
    (["report", "--model", "{d}/nothing.bisvm", "--out", "{d}/r.html"], "nothing.bisvm"),
])
def test_bad_input_exits_2_with_one_line(tables, capsys, argv, match):
    argv = [a.replace("{d}", str(tables)) for a in argv]
    code, out, err = in_process(argv, capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert match.lower() in lines[0].lower()


def test_predict_with_missing_column_names_it(tables, tmp_path, capsys):
    model = tmp_path / "m.bisvm"
    code, _, err = in_process(["fit", "--data", str(tables / "train.csv"), "--target",
                               "label", "--model", "linear-svc", "--save", str(model),
                               "--json"], capsys)
    assert code == 0, err
    pd.read_csv(tables / "new.csv").drop(columns="b").to_csv(tmp_path / "nob.csv",
                                                             index=False)
    code, _, err = in_process(["predict", "--model", str(model), "--data",
                               str(tmp_path / "nob.csv")], capsys)
    assert code == 2 and "'b'" in err and len(err.strip().splitlines()) == 1
    # stdout CSV when no --output: parseable, one row per input row
    code, out, _ = in_process(["predict", "--model", str(model), "--data",
                               str(tables / "new.csv")], capsys)
    assert code == 0 and len(pd.read_csv(io.StringIO(out))) == 30


def test_predict_rejects_a_tampered_model_file(tables, tmp_path, capsys):
    import zipfile

    model = tmp_path / "m.bisvm"
    code, _, err = in_process(["fit", "--data", str(tables / "train.csv"), "--target",
                               "label", "--model", "elastic-net", "--save", str(model),
                               "--json"], capsys)
    assert code == 0, err
    # change one coefficient inside arrays.npz and repack: the sha256 check must catch it
    with zipfile.ZipFile(model) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    import io as _io

    arrays = dict(np.load(_io.BytesIO(members["arrays.npz"])))
    key = next(k for k in arrays if k.endswith("coef_"))
    arrays[key] = arrays[key] + 1e-3
    buf = _io.BytesIO()
    np.savez(buf, **arrays)
    members["arrays.npz"] = buf.getvalue()
    tampered = tmp_path / "t.bisvm"
    with zipfile.ZipFile(tampered, "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    code, out, err = in_process(["predict", "--model", str(tampered), "--data",
                                 str(tables / "new.csv")], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "t.bisvm" in err


def test_tune_selective_alo_and_diffloo_and_fit_selective(tables, tmp_path, capsys):
    selective = pytest.importorskip("bisvm.estimators.selective")
    args = ["tune", "--data", str(tables / "reg.csv"), "--target", "y", "--model",
            "selective", "--grid-size", "12", "--json"]
    alo = cli_json(args + ["--method", "alo"], capsys)
    # the same estimator in this process on the same training rows
    ds = data.read_table(tables / "reg.csv", target="y")
    Xtr, _, ytr, _ = data.train_test_split_seeded(ds.X, ds.y, test_size=0.25,
                                                  random_state=0, stratify=False)
    Xs = data.Scaler().fit(Xtr).transform(Xtr)
    ref = selective.SelectiveRegressionCV(criterion="alo", n_mu=12).fit(Xs, ytr)
    assert alo["chosen"]["selectivity"] == ref.selectivity_
    assert np.allclose(alo["criterion_values"], ref.criterion_path_)
    assert alo["criterion_value"] == np.nanmin(alo["criterion_values"])
    assert alo["test_score"] > 0.8
    dl = cli_json(args + ["--method", "diffloo"], capsys)
    assert dl["estimator"] == "SelectiveRegressionCV" and len(dl["criterion_values"]) == 12

    model = tmp_path / "s.bisvm"
    out = cli_json(["fit", "--data", str(tables / "train.csv"), "--target", "label", "--model",
                    "selective-logistic", "--selectivity", "0.2", "--save", str(model),
                    "--json"], capsys)
    assert out["estimator"] == "SelectiveLogisticRegression" and out["train_score"] > 0.8
    code, text, err = in_process(["predict", "--model", str(model), "--data",
                                  str(tables / "new.csv")], capsys)
    assert code == 0, err
    assert text.splitlines()[0] == "prediction,decision,proba_no,proba_yes"


def test_encoding_option_reads_a_latin1_csv(tmp_path, capsys):
    path = tmp_path / "l1.csv"
    rows = "".join(f"{i},{(i * 7) % 5},{'café' if i % 2 else 'thé'}\n" for i in range(20))
    path.write_bytes(("a,b,y\n" + rows).encode("latin-1"))
    code, _, err = in_process(["fit", "--data", str(path), "--target", "y", "--model",
                               "linear-svc"], capsys)
    assert code == 2 and "--encoding latin-1" in err  # the error says what to pass
    out = cli_json(["fit", "--data", str(path), "--target", "y", "--model", "linear-svc",
                    "--encoding", "latin-1", "--json"], capsys)
    assert out["classes"] == ["café", "thé"]
