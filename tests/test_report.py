"""HTML reports and the plots added for them; the report rendered in headless Chromium."""

import base64
import os
import re
import shutil
import subprocess
import tempfile

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from bisvm import plots  # noqa: E402
from bisvm.estimators.linear import LinearSVC  # noqa: E402
from bisvm.estimators.sparse import BilevelSVC, ElasticNetSVC  # noqa: E402
from bisvm.persistence import load_model, save_model  # noqa: E402
from bisvm.report import Report, bilevel_report, model_report, tuning_report  # noqa: E402
from bisvm.solvers.base import ConvergenceRecord  # noqa: E402


def _two_blobs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(-1, 0.7, size=(n // 2, 2)), rng.normal(1, 0.7, size=(n // 2, 2))]
    y = np.r_[-np.ones(n // 2), np.ones(n // 2)]
    return X, y


def _images(html_text):
    return [base64.b64decode(m) for m in
            re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html_text)]


def _self_contained(html_text):
    # nothing fetched from outside the file: no scripts, links, remote or file URLs
    lowered = html_text.lower()
    assert "<script" not in lowered and "<link" not in lowered
    assert not re.search(r'(src|href)="(?!data:)', lowered)
    assert "http://" not in lowered and "https://" not in lowered


def test_report_builder_escapes_and_embeds_png(tmp_path):
    r = Report("a <b> & c", "sub")
    r.section("S")
    r.paragraph("<script>alert(1)</script>")
    r.table({"x": 1.5, "flag": True, "n": 3, "tiny": 1e-9})
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    r.figure(ax, "line")
    text = r.to_html()
    assert "&lt;script&gt;" in text and "a &lt;b&gt; &amp; c" in text
    imgs = _images(text)
    assert len(imgs) == 1 and imgs[0][:8] == b"\x89PNG\r\n\x1a\n"
    _self_contained(text)
    path = r.write(tmp_path / "r.html")
    assert os.path.getsize(path) > 1000
    assert "1.000e-09" in text and "yes" in text


def test_plot_loo_curves_marks_each_minimum():
    grid = np.geomspace(0.01, 10, 7)
    a = (np.log10(grid) - 0.0) ** 2
    b = np.r_[np.nan, (np.log10(grid[1:]) + 1) ** 2]
    ax = plots.plot_loo_curves(grid, {"DiffLOO": a, "exact LOO": b}, chosen=1.0)
    marks = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert [tuple(m.get_xdata()) for m in marks] == [(grid[4],), (grid[2],)]
    assert ax.get_xscale() == "log"
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="shape"):
        plots.plot_loo_curves(grid, {"x": a[:3]})


def test_plot_decision_boundary_draws_zero_level_and_margins():
    X, y = _two_blobs()
    est = LinearSVC(C=1.0).fit(X, y)
    ax = plots.plot_decision_boundary(est, X, y, feature_names=("u", "v"))
    assert ax.get_xlabel() == "u" and ax.get_ylabel() == "v"
    # the contour set of levels -1, 0, 1
    levels = [list(c.levels) for c in ax.collections if hasattr(c, "levels")]
    assert [-1.0, 0.0, 1.0] in levels
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="2-D data"):
        plots.plot_decision_boundary(est, np.c_[X, X], y)


def test_plot_convergence_from_solver_record_and_bilevel_history():
    from bisvm.losses import SmoothedHinge
    from bisvm.penalties import L2, SumPenalty
    from bisvm.solvers.base import SmoothProblem
    from bisvm.solvers.primal.newton import solve_newton

    X, y = _two_blobs()
    pen = SumPenalty((L2(0.1, np.ones(3, dtype=bool)),))
    res = solve_newton(SmoothProblem(np.c_[X, np.ones(len(X))], y, SmoothedHinge(0.25), pen),
                       tol=1e-10)
    assert isinstance(res.record, ConvergenceRecord)
    ax = plots.plot_convergence(res.record)
    ys = ax.get_lines()[0].get_ydata()
    assert len(ys) == len(res.record.objective) and np.all(ys > 0)
    plt.close(ax.figure)
    est = BilevelSVC(model="scalar", criterion="holdout", random_state=0, max_iter=30).fit(X, y)
    ax = plots.plot_convergence(est.history_)
    assert "criterion" in ax.get_ylabel()
    plt.close(ax.figure)
    with pytest.raises(TypeError, match="ConvergenceRecord"):
        plots.plot_convergence([1, 2, 3])


def test_bilevel_and_model_reports(tmp_path):
    X, y = _two_blobs(80, seed=2)
    est = BilevelSVC(model="scalar", criterion="holdout", random_state=0, max_iter=8).fit(X, y)
    grid = est.scalar_grid(X, y, grid=np.geomspace(0.01, 1, 12))
    rep = bilevel_report(est, feature_names=["u", "v"], X_train=X, y_train=y, X_test=X[:10],
                         y_test=y[:10], grid=grid, summary={"rows": 80})
    text = rep.to_html()
    _self_contained(text)
    # validation curve, path, importance, fold selection frequency, convergence, decision
    # boundary
    assert rep.n_figures == 6 and len(_images(text)) == 6
    assert "fold models that select each feature" in text
    assert "thesis score" not in text  # a scalar model: one β, the same score for all
    assert "Confusion matrix" in text

    en = ElasticNetSVC(penalty_weight=0.01).fit(X, y)
    path = tmp_path / "m.bisvm"
    rec = {"objective": [3.0, 2.0, 1.5, 1.49], "grad_norm": [1.0, 0.1, 1e-3, 1e-7]}
    save_model(en, path, feature_names=["u", "v"], extra={"convergence": rec})
    rep = model_report(load_model(path), X, y, source=str(path))
    text = rep.to_html()
    _self_contained(text)
    assert rep.n_figures == 3  # coefficient shares, convergence, decision boundary
    assert "ElasticNetSVC" in text and "penalty_weight" in text

    rep = tuning_report({"method": "loo"}, curves=(np.geomspace(0.1, 10, 4),
                                                   {"LOO": [3.0, 2.0, 1.0, 2.0]}), chosen=3.0,
                        search_table=(["rank", "C"], [[1, 3.0]]))
    assert rep.n_figures == 1 and "Candidates" in rep.to_html()


def _chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_report_renders_in_headless_chromium(tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium is not installed (Debian: scripts/install_chromium.sh, i.e. "
                    "apt-get install -y chromium); the screenshot test needs it")
    X, y = _two_blobs(80, seed=3)
    est = BilevelSVC(model="scalar", criterion="holdout", random_state=0, max_iter=8).fit(X, y)
    rep = bilevel_report(est, feature_names=["u", "v"], X_train=X, y_train=y,
                         summary={"rows": 80})
    # put a figure on the first screen so that the screenshot shows a plot, not only text
    rep.parts.insert(0, rep.parts.pop())
    html_path = tmp_path / "report.html"
    rep.write(html_path)
    png = tmp_path / "out.png"
    profile = tempfile.mkdtemp(dir=tmp_path)
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={profile}", f"--screenshot={png}",
           "--window-size=1200,900", html_path.resolve().as_uri()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert png.exists(), f"chromium wrote no screenshot (exit {r.returncode}): {r.stderr[-500:]}"
    img = plt.imread(png)
    assert img.shape[:2] == (900, 1200)
    grey = img[..., :3].mean(axis=2)
    # not blank: real variation, many distinct shades, dark pixels (text, axes) on light
    assert grey.var() > 1e-3
    assert len(np.unique(np.round(grey, 2))) > 20
    assert (grey < 0.3).mean() > 0.002 and (grey > 0.9).mean() > 0.3


def test_plots_stay_bounded_on_many_features():
    """A 5,000-feature problem draws the 200 largest paths and 60 largest bars (in their
    original order), and the titles say so; small problems draw everything."""
    from bisvm.selection.search import GridResult

    rng = np.random.default_rng(0)
    d = 5000
    grid = np.logspace(-3, 0, 6)
    coefs = rng.normal(size=(6, 1, d + 1)) * (rng.random(d + 1) < 0.3)
    g = GridResult(grid, np.zeros(6), coefs, 0.01, 0.0, 6, 6, 0.0)
    names = [f"x{j}" for j in range(d)]
    ax = plots.plot_regularization_path(g, names)
    assert len(ax.get_lines()) == 200 + 1  # the zero line
    assert "200 largest of 5,000" in ax.get_title()
    peak = np.max(np.abs(coefs[:, 0, :-1]), axis=0)
    drawn = {round(float(np.max(np.abs(line.get_ydata()))), 12) for line in ax.get_lines()}
    assert round(float(peak.max()), 12) in drawn
    plt.close(ax.figure)
    scores = rng.random(d)
    scores /= scores.sum()
    ax = plots.plot_importance(names, scores)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    top = np.sort(np.argsort(-scores)[:60])
    assert labels == [f"x{j}" for j in top]
    assert "60 largest of 5,000" in ax.get_title()
    plt.close(ax.figure)
    ax = plots.plot_importance(names[:5], scores[:5], scores[:5])
    assert len(ax.get_yticklabels()) == 5 and ax.get_title() == "Feature importance"
    plt.close(ax.figure)


def test_selection_frequency_plot_orders_bounds_and_draws_the_threshold():
    names = [f"f{j}" for j in range(6)]
    freq = np.array([0.2, 1.0, 0.0, 0.7, 0.55, 0.7])
    ax = plots.plot_selection_frequency(names, freq, threshold=0.6)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # most frequent first (ties in their order), never-selected features left out
    assert labels == ["f1", "f3", "f5", "f4", "f0"]
    widths = [p.get_width() for p in ax.patches]
    np.testing.assert_allclose(widths, [1.0, 0.7, 0.7, 0.55, 0.2])
    # the stable bars (>= threshold) are coloured apart from the others
    colours = [tuple(p.get_facecolor()) for p in ax.patches]
    assert len(set(colours[:3])) == 1 and len(set(colours[3:])) == 1
    assert colours[0] != colours[3]
    assert [ln.get_xdata()[0] for ln in ax.get_lines()] == [0.6]
    assert "5 of 6 features ever selected" in ax.get_title()
    plt.close(ax.figure)
    many = np.linspace(0.01, 1, 500)
    ax = plots.plot_selection_frequency([f"x{j}" for j in range(500)], many, max_bars=40)
    assert len(ax.patches) == 40 and "40 of 500 features, the most frequent" in ax.get_title()
    assert ax.get_yticklabels()[0].get_text() == "x499" and not ax.get_lines()
    plt.close(ax.figure)
    for bad, match in (([0.1, 0.2], "one value per name"), ([0.1] * 5 + [1.5], r"\[0, 1\]")):
        with pytest.raises(ValueError, match=match):
            plots.plot_selection_frequency(names, bad)
    with pytest.raises(ValueError, match="threshold"):
        plots.plot_selection_frequency(names, freq, threshold=2)


def _iris_binary():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return X[y < 2], y[y < 2]


@pytest.fixture(scope="module")
def rejected_fit():
    """A vector model whose refinement the held-out rows reject (iris, setosa against
    versicolor: the scalar model already separates them)."""
    X, y = _iris_binary()
    est = BilevelSVC(model="vector", random_state=0).fit(X, y)
    assert est.refined_ is False or est.refined_ == False  # noqa: E712
    return est, X, y


def test_report_of_a_rejected_refinement_shows_the_scalar_weight_it_kept(rejected_fit):
    from bisvm.report import kept_model, refinement_messages, thesis_scores_informative

    est, X, y = rejected_fit
    pw = np.ravel(est.penalty_weights_)
    assert np.all(pw == pw[0])  # what was kept is one β, repeated
    assert kept_model(est) == "scalar" and not thesis_scores_informative(est)
    (msg,) = refinement_messages(est)
    assert "vector refinement rejected on the held-out rows" in msg
    assert f"β = {pw[0]:.4g}" in msg
    names = ["sl", "sw", "pl", "pw"]
    text = bilevel_report(est, feature_names=names, X_train=X, y_train=y,
                          coef_units="original units").to_html()
    assert "refinement rejected on the held-out rows" in text
    assert "L1 weight kept (scalar model)" in text and "Learned L1 weights" not in text
    assert "thesis score" not in text and "coefficient (original units)" in text
    # one row for the kept β, none per feature
    table = text[text.index("L1 weight kept"):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 2 and "sl" not in table


def test_report_of_a_refined_model_lists_the_learned_weights_and_thesis_scores():
    from sklearn.datasets import load_breast_cancer

    from bisvm.report import kept_model, refinement_messages, thesis_scores_informative

    X, y = load_breast_cancer(return_X_y=True)
    # a sample and seed on which the held-out rows keep the refinement
    est = BilevelSVC(model="vector", random_state=1).fit(X[:400], y[:400])
    assert est.refined_
    assert kept_model(est) == "vector" and thesis_scores_informative(est)
    assert refinement_messages(est) == []
    names = [f"c{j}" for j in range(X.shape[1])]
    text = bilevel_report(est, feature_names=names, X_train=X[:400], y_train=y[:400]
                          ).to_html()
    assert "Learned L1 weights" in text and "thesis score" in text
    assert "L1 weight kept" not in text


def test_report_draws_the_stability_frequencies_with_their_threshold(rejected_fit):
    est, X, y = rejected_fit
    names = ["sl", "sw", "pl", "pw"]
    base = bilevel_report(est, feature_names=names, X_train=X, y_train=y)
    record = {"n_pairs": 5, "threshold": 0.7, "stable_features": ["pl", "pw"],
              "selection_frequency": {"pl": 1.0, "pw": 0.9, "sw": 0.3},
              "false_selection_bound": 0.5}
    rep = bilevel_report(est, feature_names=names, X_train=X, y_train=y, stability=record)
    text = rep.to_html()
    assert rep.n_figures == base.n_figures + 1
    assert "Stability selection: share of the 10 half-sample fits" in text
    assert "τ = 0.70" in text and "at most 0.5" in text


def test_model_report_of_a_saved_rejected_model_says_so(tmp_path, rejected_fit):
    est, X, y = rejected_fit
    path = tmp_path / "m.bisvm"
    save_model(est, path, feature_names=["sl", "sw", "pl", "pw"])
    text = model_report(load_model(path), X, y).to_html()
    assert "refinement rejected on the held-out rows" in text
    assert "standardised inside the estimator" in text


# --------------------------------------------------------------------------------------
# The self-tuning kernel models: the outer path rebuilt from the fitted attributes, the
# cross-validated surface under it, the widths per feature.


@pytest.fixture(scope="module")
def xor_fits():
    from bisvm import AutoSVC, AutoSVR

    rng = np.random.default_rng(3)
    X = rng.standard_normal((160, 4)) * [1.0, 3.0, 1.0, 0.5]
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    shared = AutoSVC(max_iter=10, random_state=0).fit(X, y)
    per = AutoSVC(widths="per_feature", max_iter=10, random_state=0).fit(X, y)
    yr = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(160)
    svr = AutoSVR(lower="svr", max_iter=8, random_state=0).fit(X, yr)
    # kernel ridge's surface is what these tests draw; on these rows the L1 stage keeps
    # kernel ridge (the same model) after a scan whose large-C epsilon-SVR solves converge
    # slowly (in LIBSVM too), so it is left out; tests/estimators/test_auto_svr_l1.py
    # tests the stage and the surface of a model it changed
    kr = AutoSVR(lower="kernel_ridge", l1_stage=False).fit(X, yr)
    return X, y, yr, shared, per, svr, kr


def test_outer_path_starts_at_the_scan_and_ends_at_the_fit(xor_fits):
    from bisvm.report import outer_path

    X, y, yr, shared, per, svr, kr = xor_fits
    for est, n_stages in ((shared, 1), (per, 2), (svr, 1)):
        path = outer_path(est)
        assert len(path) == n_stages
        first, gamma = path[0]
        # rebuilt backwards from C_ and learned_gamma_, the path must start at the
        # recorded start of the outer loop (the scan's C and the starting width)
        np.testing.assert_allclose(first[0], est.tuning_.C0, rtol=1e-10)
        np.testing.assert_allclose(gamma[0, 0], est.tuning_.gamma0, rtol=1e-10)
        np.testing.assert_allclose(path[-1][0][-1], est.C_, rtol=1e-12)
        np.testing.assert_allclose(path[-1][1][-1], np.atleast_1d(est.learned_gamma_),
                                   rtol=1e-12)
    # the per-feature stage starts, with every width equal, where the shared one ended
    (f1, g1), (f2, g2) = outer_path(per)
    np.testing.assert_allclose(g2[0], np.full(4, g1[-1, 0]), rtol=1e-10)
    np.testing.assert_allclose(f2[0], f1[-1], rtol=1e-10)


def test_cv_surface_is_the_cross_validated_error_of_the_refit_class(xor_fits):
    from sklearn.model_selection import cross_val_score

    from bisvm import SVC
    from bisvm.report import cv_surface

    X, y, yr, shared, per, svr, kr = xor_fits
    s = cv_surface(shared, X, y, n_points=3, cv=3)
    assert s["errors"].shape == (3, 3) and s["first_name"] == "C"
    assert np.all((s["errors"] >= 0) & (s["errors"] <= 1))
    # one grid point recomputed independently: the L2-SVM on the standardised columns
    Xs = X / X.std(axis=0)
    ref = SVC(C=s["first"][2], gamma=s["gamma"][1], loss="squared_hinge")
    expected = 1 - cross_val_score(ref, Xs, y, cv=3).mean()
    assert s["errors"][1, 2] == pytest.approx(expected, abs=1e-12)
    # the grid covers the path with a decade to spare on each side
    assert s["first"][0] <= shared.tuning_.C0 / 10 * 1.0001
    with pytest.raises(ValueError, match="n_points"):
        cv_surface(shared, X, y, n_points=1)
    r = cv_surface(kr, X, yr, n_points=2, cv=3)
    assert r["first_name"] == "ridge" and np.all(r["errors"] > 0)
    assert r["error_name"].endswith("MSE (standardised target)")
    # the L2-loss SVR is refitted as its own dual solution: no class to vary
    with pytest.raises(ValueError, match="no surface"):
        cv_surface(svr, X, yr, n_points=2)


def test_kernel_figures_in_a_report(xor_fits):
    from bisvm.report import kernel_figures

    X, y, yr, shared, per, svr, kr = xor_fits
    names = ["a", "b", "c", "d"]
    figs = kernel_figures(per, names, X=X, y=y, n_points=3, cv=3)
    caps = [c for _, c in figs]
    assert len(figs) == 3 and caps[0].startswith("Outer path on the 3-fold")
    assert "relevance" in caps[1] and "widths along" in caps[2]
    # without rows: no surface; a shared width has no per-feature figures
    assert len(kernel_figures(per, names)) == 2
    assert kernel_figures(shared, names) == []
    rep = Report("kernel")
    for ax, cap in figs:
        rep.figure(ax, cap)
    text = rep.to_html()
    assert len(_images(text)) == 3
    _self_contained(text)


def test_kernel_plots_check_their_input():
    with pytest.raises(ValueError, match="errors must have shape"):
        plots.plot_cv_surface([1, 10], [0.1, 1, 10], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="names has 2 entries"):
        plots.plot_learned_widths(["a", "b"], [0.5, 0.3, 0.2])
    with pytest.raises(ValueError, match="widths must have shape"):
        plots.plot_width_paths(np.ones((3, 2)), ["a", "b", "c"])
    ax = plots.plot_learned_widths(["a", "b", "c"], [0.2, 0.7, 0.1], [False, True, False])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "a", "c"]
    plt.close("all")


def test_model_report_of_a_saved_autosvc_draws_the_widths(xor_fits, tmp_path):
    X, y, yr, shared, per, svr, kr = xor_fits
    path = tmp_path / "per.bisvm"
    save_model(per, path, feature_names=["a", "b", "c", "d"])
    text = model_report(load_model(path), X, y).to_html()
    assert "Learned relevance per feature" in text
    _self_contained(text)
