"""What the selection commands say was learned: who scaled the columns, which L1 weights
the fit kept, how often the features were selected, and stability selection.

Run in this process (``cli_run.in_process``) on small tables to stay fast.
"""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from cli_run import cli_json, in_process
from sklearn.datasets import load_breast_cancer

import bisvm
from bisvm import cli
from bisvm.cli.learned import scaling_plan


def test_scaling_plan_never_scales_twice():
    inside = {"standardize": True, "C": 1.0}
    plain = {"C": 1.0}
    p = scaling_plan("auto", inside, "BilevelSVC")
    assert (p.method, p.inside, p.params, p.coef_units) == ("none", True, {}, "original units")
    assert "standardises each column inside the fit" in p.note
    p = scaling_plan("none", inside, "BilevelSVC")
    assert (p.method, p.inside, p.params) == ("none", True, {})
    for asked in ("standard", "minmax"):
        p = scaling_plan(asked, inside, "BilevelSVC")
        assert (p.method, p.inside, p.params) == (asked, False, {"standardize": False})
        assert f"--scaling {asked}" in p.note and "standardize=False" in p.note
    # a model that does not standardise: the CLI does, as before
    assert scaling_plan("auto", plain, "SVC") == scaling_plan("standard", plain, "SVC")
    assert scaling_plan("auto", plain, "SVC").method == "standard"
    assert scaling_plan("none", {"standardize": False}, "BilevelSVC").method == "none"
    with pytest.raises(ValueError, match="--scaling"):
        scaling_plan("robust", plain, "SVC")


@pytest.fixture(scope="module")
def cancer_csvs(tmp_path_factory):
    """Breast Cancer as a CSV and a copy with every feature column standardised."""
    d = tmp_path_factory.mktemp("cancer")
    frame = load_breast_cancer(as_frame=True).frame
    raw = d / "cancer.csv"
    frame.to_csv(raw, index=False)
    feats = frame.columns[:-1]
    mean, sd = frame[feats].mean(), frame[feats].std()
    std = frame.copy()
    std[feats] = (frame[feats] - mean) / sd
    scaled = d / "cancer_std.csv"
    std.to_csv(scaled, index=False)
    return raw, scaled, sd


def _json_run(argv):
    """``bisvm ARGV --json`` in this process, outside pytest's per-test capture (for
    module-scoped fixtures)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def cancer_runs(cancer_csvs):
    raw, scaled, _ = cancer_csvs
    return {name: _json_run(["select", "--data", str(path), "--target", "target",
                             "--no-grid", "--scaling", "none", "--json"])
            for name, path in (("raw", raw), ("scaled", scaled))}


def test_select_scaling_none_selects_the_same_on_raw_and_standardised_csv(cancer_runs,
                                                                          cancer_csvs):
    raw, std = cancer_runs["raw"], cancer_runs["scaled"]
    if not raw["standardized_inside"]:
        pytest.skip("BilevelSVC does not standardise inside its fit in this installation")
    assert raw["scaling"] == std["scaling"] == "none"
    assert raw["coef_units"] == "original units"
    assert sorted(raw["selected_features"]) == sorted(std["selected_features"])
    assert raw["test_accuracy"] == std["test_accuracy"]
    # coefficients in the original units: a column divided by s_j has coefficient s_j w_j
    sd = cancer_csvs[2]
    for name in raw["selected_features"]:
        np.testing.assert_allclose(raw["coefficients"][name] * sd[name],
                                   std["coefficients"][name], rtol=1e-3, atol=1e-6)


def test_select_lists_fold_selection_frequencies(cancer_runs):
    r = cancer_runs["raw"]
    freq = r.get("selection_frequency")
    if freq is None:
        pytest.skip("BilevelSVC has no selection_frequency_ in this installation")
    assert list(freq) == list(r["coefficients"])  # every feature, in column order
    v = np.array(list(freq.values()))
    # shares of the 5 fold models (cv=5, one repeat)
    np.testing.assert_allclose(v * 5, np.round(v * 5), atol=1e-12)
    assert np.all((v >= 0) & (v <= 1)) and v.max() == 1.0


def test_select_text_shows_units_frequency_and_weights(capsys):
    code, out, err = in_process(["select", "--dataset", "breast-cancer", "--no-grid", "-q"],
                                capsys)
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.strip().startswith("feature"))
    assert "importance" in header and "coef (original units)" in header
    assert "frequency" in header
    assert ("learned L1 weights" in out) != ("L1 weight             β =" in out)


def test_select_says_when_the_refinement_was_rejected(capsys):
    # setosa against versicolor (the thesis's Iris task): the scalar model separates them
    # and the held-out rows reject the per-feature refinement
    out = cli_json(["select", "--dataset", "iris", "--model", "vector", "--no-grid",
                    "--json"], capsys)
    assert (out["model_fitted"], out["refined"]) == ("vector", False)
    assert out["model"] == "scalar"
    assert list(out["penalty_weights"]) == ["beta"]
    beta = out["penalty_weights"]["beta"]
    (msg,) = [n for n in out["notes"] if "refinement rejected" in n]
    assert msg == ("vector refinement rejected on the held-out rows: the scalar model is "
                   f"kept, β = {beta:.4g}")
    assert "thesis_scores" not in out  # one β: the same score for every feature
    code, text, _ = in_process(["select", "--dataset", "iris", "--model", "vector",
                                "--no-grid", "-q"], capsys)
    assert code == 0 and text.startswith("bisvm select: scalar model on bundled:iris")
    assert "learned L1 weights" not in text
    assert f"β = {beta:.4g}, one for every coefficient (scalar model)" in text


def test_fit_names_the_kept_weights_of_each_one_vs_rest_problem(capsys):
    out = cli_json(["fit", "--dataset", "iris", "--model", "bilevel", "--json", "-q"],
                   capsys)
    pw, notes = out["penalty_weights"], out["notes"]
    assert len(out["refined"]) == len(out["classes"])  # one verdict per class
    per_class = out.get("selection_frequency_per_class")
    if per_class is not None:
        # one-vs-rest: a feature's share is at least each class's share (any class's
        # model selecting it counts)
        union = out["selection_frequency"]
        for c in out["classes"]:
            assert all(union[k] >= v for k, v in per_class[str(c)].items())
    for c, refined in zip(out["classes"], out["refined"]):
        assert (f"beta[{c}]" in pw) == (refined is False)
    for c in out["classes"]:
        scalar = f"beta[{c}]" in pw
        per_feature = [k for k in pw if k.endswith(f"[{c}]") and not k.startswith("beta")]
        assert scalar != bool(per_feature)
        said = any(f"(class {c!r} against the rest)" in n for n in notes)
        assert said == (scalar and out["params"]["model"] != "scalar")


def test_groups_reach_the_feature_groups_parameter():
    import warnings

    from bisvm.cli.select import SelectOptions, run_select

    if "feature_groups" not in bisvm.BilevelSVC().get_params():
        pytest.skip("BilevelSVC has no feature_groups parameter in this installation")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("error", DeprecationWarning)
        run = run_select(SelectOptions(model="group", groups="mean=0-9,se=10-19,worst=20-29",
                                       no_grid=True, quiet=True, max_iter=3))
    params = run.estimator.get_params()
    assert params["groups"] is None
    assert params["feature_groups"] == {"mean": list(range(10)), "se": list(range(10, 20)),
                                        "worst": list(range(20, 30))}
    assert run.result["model_fitted"] == "group"


def test_fit_lets_elastic_net_standardise_unless_asked(capsys):
    if "standardize" not in bisvm.ElasticNetSVC().get_params():
        pytest.skip("ElasticNetSVC has no standardize parameter in this installation")
    out = cli_json(["fit", "--dataset", "breast-cancer", "--model", "elastic-net", "--json"],
                   capsys)
    assert (out["scaling"], out["standardized_inside"]) == ("none", True)
    assert out["params"]["standardize"] is True and out["coef_units"] == "original units"
    out = cli_json(["fit", "--dataset", "breast-cancer", "--model", "elastic-net",
                    "--scaling", "standard", "--json"], capsys)
    assert (out["scaling"], out["standardized_inside"]) == ("standard", False)
    assert out["params"]["standardize"] is False
    assert any("standardize=False" in n for n in out["notes"])


def test_column_options_the_error_messages_suggest(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame({"id": [f"row{i}" for i in range(n)], "a": rng.normal(size=n),
                          "code": rng.integers(1, 4, size=n), "y": np.arange(n) % 2})
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    base = ["fit", "--data", str(path), "--target", "y", "--model", "linear-svc"]
    code, _, err = in_process(base, capsys)
    assert code == 2 and "--drop-column" in err
    out = cli_json([*base, "--drop-column", "id", "--json"], capsys)
    assert out["n_features"] == 2
    out = cli_json([*base, "--drop-column", "id", "--categorical", "code", "--json"], capsys)
    assert out["n_features"] == 4  # a, code=1, code=2, code=3
    out = cli_json([*base, "--max-categories", "50", "--json"], capsys)
    assert out["n_features"] == 2 + n  # the identifier one-hot encoded: what it asked for


def test_stability_options_are_checked_before_any_work(capsys):
    for argv, match in ((["--stability-threshold", "0.4"], "(0.5, 1]"),
                        (["--stability", "-1"], "--stability"),
                        (["--stability", "2", "--n-jobs", "0"], "--n-jobs")):
        code, out, err = in_process(["select", "--dataset", "iris", *argv], capsys)
        assert code == 2 and out == ""
        assert len(err.strip().splitlines()) == 1 and match in err


@pytest.mark.skipif(not hasattr(bisvm, "StabilitySelection"),
                    reason="bisvm.StabilitySelection is not in this installation")
def test_select_stability_reports_the_stable_set_and_the_bound(capsys):
    out = cli_json(["select", "--dataset", "iris", "--no-grid", "--stability", "3",
                    "--stability-threshold", "0.6", "--json"], capsys)
    s = out["stability"]
    assert (s["n_pairs"], s["threshold"]) == (3, 0.6)
    freq = s["selection_frequency"]
    v = np.array(list(freq.values()))
    np.testing.assert_allclose(v * 6, np.round(v * 6), atol=1e-12)  # shares of 6 fits
    assert s["stable_features"] == [k for k, f in freq.items() if f >= 0.6]
    assert s["n_stable"] == len(s["stable_features"])
    # Shah & Samworth's bound q^2 / ((2 tau - 1) p), p = 4 iris features
    q = s["average_selected"]
    assert s["false_selection_bound"] == pytest.approx(q * q / ((2 * 0.6 - 1) * 4))
    assert 0 <= s["test_accuracy"] <= 1
    code, text, _ = in_process(["select", "--dataset", "iris", "--no-grid", "--stability",
                                "3", "-q"], capsys)
    assert code == 0 and "stability selection   3 complementary pairs" in text
    assert "expected falsely selected features <=" in text


@pytest.mark.skipif(not hasattr(bisvm, "StabilitySelection"),
                    reason="bisvm.StabilitySelection is not in this installation")
def test_report_draws_the_stability_frequencies(tmp_path, capsys):
    html = tmp_path / "r.html"
    out = cli_json(["report", "--dataset", "iris", "--no-grid", "--stability", "2",
                    "--out", str(html), "--json"], capsys)
    assert out["stability"]["n_pairs"] == 2 and "selection_frequency" in out
    text = html.read_text(encoding="utf-8")
    assert "Stability selection: share of the 4 half-sample fits" in text
    assert "stable features (stability selection)" in text
