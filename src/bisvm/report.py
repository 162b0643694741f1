"""Self-contained HTML reports of a fit or a tuning run.

A report is one HTML file: inline CSS, tables, and figures embedded as base64 PNG
(``<img src="data:image/png;base64,...">``). It references nothing outside itself — no
scripts, fonts, style sheets or network — so it opens offline, can be mailed, and renders
the same in any browser (``tests/test_report.py`` screenshots it in headless Chromium).

:class:`Report` is the builder; :func:`bilevel_report`, :func:`model_report` and
:func:`tuning_report` assemble the standard reports of ``bisvm report`` and
``bisvm tune --report``.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import math
import numbers
import re

import numpy as np

__all__ = ["Report", "bilevel_report", "regression_report", "model_report", "tuning_report",
           "figure_png",
           "kept_model", "refinement_messages", "thesis_scores_informative",
           "penalty_problems"]

_CSS = """
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0;
 background:#f6f7f9;color:#1d2430}
main{max-width:1100px;margin:0 auto;padding:24px 32px 48px;background:#fff;
 box-shadow:0 0 12px rgba(0,0,0,.06)}
h1{font-size:26px;margin:8px 0 4px;color:#16324f}
h2{font-size:19px;margin:30px 0 10px;padding-bottom:4px;border-bottom:2px solid #d8e1ea;
 color:#16324f}
h3{font-size:15px;margin:18px 0 6px}
p.sub{color:#5b6675;margin:0 0 14px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
caption{caption-side:top;text-align:left;font-weight:600;padding:4px 0}
th,td{border:1px solid #d5dbe3;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#eef3f8}
td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:12px 0 22px;display:inline-block;vertical-align:top;max-width:100%}
figure img{max-width:100%;border:1px solid #e1e6ec}
figcaption{font-size:12px;color:#4a5563;max-width:700px}
pre{background:#f2f4f7;padding:8px 12px;font-size:12px;overflow-x:auto}
.note{color:#7a4b00;background:#fff6e0;padding:6px 10px;border-left:3px solid #e0a800}
footer{margin-top:30px;font-size:11px;color:#7b8694}
"""


def figure_png(obj, *, dpi=100):
    """PNG bytes of a matplotlib ``Figure`` or ``Axes`` (the figure is closed)."""
    import matplotlib.pyplot as plt

    fig = obj.figure if hasattr(obj, "figure") and not hasattr(obj, "savefig") else obj
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


def _fmt(v):
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        v = float(v)
        if not math.isfinite(v):
            return str(v)
        return f"{v:.4g}" if (v == 0 or 1e-3 <= abs(v) < 1e5) else f"{v:.3e}"
    if isinstance(v, (list, tuple)) and len(v) <= 8:
        return ", ".join(_fmt(x) for x in v)
    return str(v)


class Report:
    """Builder of a self-contained HTML report.

    Parameters
    ----------
    title : str
    subtitle : str, optional

    Attributes
    ----------
    parts : list of str
        The document's HTML fragments in order (a caller may reorder them before writing).
    n_figures : int

    Examples
    --------
    >>> r = Report("My run")
    >>> r.section("Summary")
    >>> r.table({"accuracy": 0.97})
    >>> html_text = r.to_html()
    """

    def __init__(self, title, subtitle=None):
        self.title = str(title)
        self.subtitle = subtitle
        self.parts = []
        self.n_figures = 0

    def section(self, text, level=2):
        """A heading (``level`` 2 or 3)."""
        level = 3 if level >= 3 else 2
        self.parts.append(f"<h{level}>{html.escape(str(text))}</h{level}>")

    def paragraph(self, text, *, note=False):
        """A paragraph of plain text (escaped); ``note=True`` highlights it."""
        cls = ' class="note"' if note else ""
        self.parts.append(f"<p{cls}>{html.escape(str(text))}</p>")

    def preformatted(self, text):
        self.parts.append(f"<pre>{html.escape(str(text))}</pre>")

    def table(self, rows, header=None, *, caption=None):
        """A table from a dict (two columns: name, value) or from a list of rows."""
        if isinstance(rows, dict):
            header = header or ("", "value")
            rows = [(k, v) for k, v in rows.items()]
        out = ["<table>"]
        if caption:
            out.append(f"<caption>{html.escape(str(caption))}</caption>")
        if header:
            out.append("<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
                       + "</tr>")
        for row in rows:
            cells = []
            for v in row:
                num = isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
                cls = ' class="num"' if num else ""
                cells.append(f"<td{cls}>{html.escape(_fmt(v))}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</table>")
        self.parts.append("".join(out))

    def figure(self, obj, caption="", *, dpi=100):
        """Embed a matplotlib Figure/Axes as a base64 PNG (closes the figure)."""
        data = base64.b64encode(figure_png(obj, dpi=dpi)).decode("ascii")
        cap = f"<figcaption>{html.escape(str(caption))}</figcaption>" if caption else ""
        self.parts.append(
            f'<figure><img alt="{html.escape(str(caption) or "figure")}" '
            f'src="data:image/png;base64,{data}">{cap}</figure>'
        )
        self.n_figures += 1

    def to_html(self):
        """The whole document as a string."""
        from bisvm import __version__

        when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        sub = f'<p class="sub">{html.escape(str(self.subtitle))}</p>' if self.subtitle else ""
        body = "\n".join(self.parts)
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(self.title)}</title>"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<style>{_CSS}</style></head>\n<body><main>"
            f"<h1>{html.escape(self.title)}</h1>{sub}\n{body}\n"
            f"<footer>Written by bisvm {html.escape(__version__)} on {when}. "
            "Self-contained: all figures are embedded.</footer></main></body></html>\n"
        )

    def write(self, path):
        """Write the document (UTF-8); returns ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_html())
        return path


def _confusion_rows(y_true, y_pred, class_names=None):
    """Header and rows of a confusion matrix; ``class_names`` (label -> the user's name)
    names the rows and columns."""
    labels = np.unique(np.r_[np.asarray(y_true), np.asarray(y_pred)])
    names = {}
    for lab in labels:
        names[lab] = lab
        for key, name in (class_names or {}).items():
            if key == lab:
                names[lab] = name
    rows = []
    for a in labels:
        rows.append([f"true {names[a]}"] + [int(np.sum((y_true == a) & (y_pred == b)))
                                            for b in labels])
    return [""] + [f"predicted {names[b]}" for b in labels], rows


def _resolved_model(est):
    """The model a BilevelSVC fitted (``model_``, which resolves ``"auto"``)."""
    return getattr(est, "model_", getattr(est, "model", ""))


# --------------------------------------------------------------------------------------
# What a BilevelSVC kept: its refinement is judged on held-out rows and may be rejected,
# and then the model is the scalar one whatever ``model_`` says.


def _flag(v):
    return None if v is None else bool(v)


def penalty_problems(est):
    """``[(class label or None, refined, β row)]`` of a fitted BilevelSVC: one entry per
    binary problem (one, or one per class for one-vs-rest); ``refined`` is True, False
    (the refinement was rejected: the row is one β repeated) or None (scalar model)."""
    pw = np.asarray(est.penalty_weights_, dtype=float)
    refined = getattr(est, "refined_", None)
    if pw.ndim == 1:
        return [(None, _flag(np.ravel(refined)[0]) if np.ndim(refined) else _flag(refined),
                 pw)]
    if refined is None or np.ndim(refined) == 0:
        refined = [refined] * pw.shape[0]
    return [(c, _flag(r), row) for c, r, row in zip(est.classes_, refined, pw)]


def kept_model(est):
    """The model the fit kept: ``"scalar"`` when every problem's vector or group
    refinement was rejected (or the scalar model was asked for), else ``model_``."""
    model = _resolved_model(est)
    if model in ("vector", "group") and all(r is False for _, r, _ in penalty_problems(est)):
        return "scalar"
    return model


def refinement_messages(est):
    """One line per binary problem whose vector or group refinement was rejected,
    naming the scalar β that was kept."""
    model = _resolved_model(est)
    if model not in ("vector", "group"):
        return []
    out = []
    for c, refined, row in penalty_problems(est):
        if refined is False:
            label = c.item() if isinstance(c, np.generic) else c
            what = "" if c is None else f" (class {label!r} against the rest)"
            out.append(f"{model} refinement rejected on the held-out rows{what}: the scalar "
                       f"model is kept, β = {float(row[0]):.4g}")
    return out


def thesis_scores_informative(est):
    """Whether the thesis's importance scores (β masked by the support, normalised;
    seed-000 §2.9) tell the features apart: only when per-feature or per-group weights
    were learned and kept. With one shared β every selected feature gets the same score."""
    return _resolved_model(est) in ("vector", "group") and any(
        r is True for _, r, _ in penalty_problems(est))


def bilevel_report(est, *, feature_names, X_train, y_train, X_test=None, y_test=None,
                   grid=None, summary=None, tree_importance=None, notes=(), title=None,
                   class_names=None, coef_units=None, stability=None):
    """Report of a :class:`~bisvm.estimators.sparse.BilevelSVC` fit (``bisvm report``).

    Sections: summary table, selected features with their importance (and the thesis's
    score and the fold models' selection frequency where they say something), the L1
    weights the fit kept, the validation curve with the BiSVM iterates and the
    regularisation path (when the scalar grid ``grid`` is given), importance bars beside
    a tree-based importance, selection frequencies (of the fold models, and of stability
    selection with its threshold), convergence of the outer BiSVM iterations, the test
    confusion matrix and, for two features, the decision boundary.

    A vector or group refinement rejected on the held-out rows (``refined_`` False)
    leaves the scalar model: the report says so and shows its one β, not per-feature
    weights that were never learned apart, and leaves out the thesis's score (the same
    for every selected feature under one β).

    Parameters
    ----------
    est : fitted BilevelSVC (binary)
    feature_names : sequence of str
    X_train, y_train : the training rows the model was fitted on
    X_test, y_test : held-out rows, optional
    grid : GridResult, optional
    summary : dict, optional
        Rows of the summary table (e.g. the CLI's result record).
    tree_importance : ndarray, optional
    notes : sequence of str
    class_names : dict, optional
        The model's class label -> the user's (e.g. ``{-1.0: 0, 1.0: 1}`` when the CLI
        fitted ±1 codes of the classes 0/1): names the confusion matrix and the legend.
    coef_units : str, optional
        The units of ``coef_`` (e.g. ``"original units"``), shown in the table header.
    stability : dict, optional
        A stability-selection record: ``selection_frequency`` (feature name -> share),
        ``threshold``, ``stable_features``, ``n_pairs`` and optionally
        ``false_selection_bound`` (as ``bisvm select --stability --json`` writes it).
    """
    from . import plots

    names = [str(n) for n in feature_names]
    rep, imp, order = _selection_head(
        est, names, title or "bisvm: bilevel feature selection",
        "Smoothed elastic-net SVM whose L1 weights are learned by BiSVM L-BFGS "
        "(seed-000).", notes, summary, coef_units)
    kept = kept_model(est)
    pw = np.ravel(est.penalty_weights_)
    if kept == "scalar":
        for msg in refinement_messages(est):
            if msg not in notes:  # the CLI's notes say it already, at the top
                rep.paragraph(msg, note=True)
        rep.table([["β (every coefficient)", float(pw[0])]], ["penalty weight", "value"],
                  caption="L1 weight kept (scalar model)")
    else:
        # fitted on arrays, the weights are named x0, x1, ...: show the feature names
        pw_names = [names[int(n[1:])] if re.fullmatch(r"x\d+", str(n))
                    and int(n[1:]) < len(names) else str(n) for n in est.penalty_weight_names_]
        rep.table([[n, float(v)] for n, v in zip(pw_names, pw)],
                  ["penalty weight", "learned β"], caption="Learned L1 weights")
    rep.section("Figures")
    if grid is not None:
        traj = est.history_ if _resolved_model(est) == "scalar" else None
        final = None if traj is not None else float(np.ravel(est.validation_score_)[0])
        rep.figure(plots.plot_validation_curve(grid, traj, final=final),
                   "Validation criterion over a scalar β (grid) with the BiSVM iterates.")
        beta = float(pw[0]) if kept == "scalar" else None
        rep.figure(plots.plot_regularization_path(grid, names, beta=beta),
                   "Coefficients along the β grid (first fold).")
    rep.figure(plots.plot_importance(names, imp, tree_importance),
               "Importance of each feature (share of |w|) beside a tree ensemble's.")
    _frequency_figures(rep, est, names, stability)
    hist = est.history_
    if isinstance(hist, (tuple, list)) and hist and hasattr(hist[0], "value"):
        rep.figure(plots.plot_convergence(hist, title="BiSVM outer iterations"),
                   "Upper-level criterion and log-scale hypergradient norm per outer "
                   "iteration.")
    if X_test is not None and y_test is not None and len(y_test):
        header, rows = _confusion_rows(np.asarray(y_test), est.predict(X_test),
                                       class_names)
        rep.table(rows, header, caption="Confusion matrix on the test rows")
    if X_train.shape[1] == 2:
        rep.figure(plots.plot_decision_boundary(est, X_train, y_train, feature_names=names,
                                                class_names=class_names),
                   "Decision boundary on the training rows.")
    return rep


def _selection_head(est, names, title, lead, notes, summary, coef_units, sort_kind=None):
    """A selection report's opening: title, notes, the summary table and the selected
    features (by decreasing importance); returns (report, importances, their order)."""
    rep = Report(title, lead)
    for n in notes:
        rep.paragraph(n, note=True)
    rep.section("Summary")
    rep.table(summary or {})
    imp = np.asarray(est.feature_importances_)
    order = [j for j in np.argsort(-imp, kind=sort_kind) if imp[j] > 0]
    rep.section("Selected features")
    _selected_table(rep, est, names, order, coef_units)
    return rep, imp, order


def _selected_table(rep, est, names, order, coef_units):
    """The selected features: importance, the thesis's score where it tells features
    apart (per feature: the vector model), the fold models' selection frequency where
    the estimator has it, and the coefficient."""
    imp = np.asarray(est.feature_importances_)
    coef = np.atleast_2d(np.asarray(est.coef_))[0]  # a regressor's coef_ is 1-D
    thesis = np.ravel(est.importance_)
    # the thesis's score is per penalty group; per feature only for the vector model,
    # whose groups are the coefficients in order (intercept last)
    with_thesis = (thesis_scores_informative(est) and _resolved_model(est) == "vector"
                   and thesis.size >= len(names))
    freq = getattr(est, "selection_frequency_", None)
    freq = None if freq is None else np.ravel(freq)
    header = (["feature", "importance (|w| share, standardised)"]
              + (["thesis score"] if with_thesis else [])
              + (["selection frequency (folds)"] if freq is not None else [])
              + [f"coefficient ({coef_units})" if coef_units else "coefficient"])
    rep.table([[names[j], float(imp[j])] + ([float(thesis[j])] if with_thesis else [])
               + ([float(freq[j])] if freq is not None else []) + [float(coef[j])]
               for j in order], header,
              caption=f"{len(order)} of {len(names)} features selected")


def regression_report(est, *, feature_names, X_test=None, y_test=None, summary=None,
                      tree_importance=None, notes=(), title=None, coef_units=None,
                      stability=None):
    """Report of a :class:`~bisvm.estimators.bilevel_svr.BilevelSVR` fit (``bisvm report``
    on a continuous target).

    Sections: summary table (the CLI puts the test R² and RMSE in it), the selected
    features with importance, the fold models' selection frequency and the coefficient,
    the L1 weights the fit kept, importance bars beside a tree ensemble's, predicted
    against true on the test rows, the selection frequencies (fold models, stability
    selection) and the convergence of the outer iterations. Parameters as
    :func:`bilevel_report`; ``stability`` may hold ``test_r2``.
    """
    from . import plots

    names = [str(n) for n in feature_names]
    rep, imp, order = _selection_head(
        est, names, title or "bisvm: bilevel feature selection for regression",
        "Smoothed elastic-net support vector regression whose L1 weights are learned by "
        "BiSVM L-BFGS.", notes, summary, coef_units, sort_kind="stable")
    pw = np.ravel(est.penalty_weights_)
    if kept_model(est) == "scalar":
        rep.table([["β (every coefficient)", float(pw[0])]], ["penalty weight", "value"],
                  caption="L1 weight kept (scalar model)")
    else:
        pw_names = [names[int(n[1:])] if re.fullmatch(r"x\d+", str(n))
                    and int(n[1:]) < len(names) else str(n) for n in est.penalty_weight_names_]
        rep.table([[n, float(v)] for n, v in zip(pw_names, pw)],
                  ["penalty weight", "learned β"], caption="Learned L1 weights")
    rep.section("Figures")
    rep.figure(plots.plot_importance(names, imp, tree_importance,
                                     reference_label="tree-based (variance)"),
               "Importance of each feature (share of |w|, standardised) beside a tree "
               "ensemble's.")
    if X_test is not None and y_test is not None and len(y_test):
        rep.figure(plots.plot_predicted_vs_true(y_test, est.predict(X_test),
                                                title="Test rows"),
                   "Predicted against true target on the test rows (never used for "
                   "tuning); the dashed line is a perfect prediction.")
    _frequency_figures(rep, est, names, stability)
    hist = est.history_
    if isinstance(hist, (tuple, list)) and hist and hasattr(hist[0], "value"):
        rep.figure(plots.plot_convergence(hist, title="BiSVM outer iterations"),
                   "Upper-level criterion and log-scale hypergradient norm per outer "
                   "iteration.")
    return rep


def _frequency_figures(rep, est, names, stability):
    """Selection-frequency bars: the fold models' and stability selection's."""
    from . import plots

    freq = getattr(est, "selection_frequency_", None)
    if freq is not None and np.ndim(freq) == 1 and len(freq) == len(names):
        rep.figure(plots.plot_selection_frequency(
            names, freq, title="Selection frequency over the fold models"),
            "Share of the fit's cross-validation fold models that select each feature.")
    if stability:
        sf = stability.get("selection_frequency", {})
        values = np.array([float(sf.get(n, 0.0)) for n in names])
        tau = stability.get("threshold")
        bound = stability.get("false_selection_bound")
        cap = (f"Stability selection: share of the {2 * int(stability.get('n_pairs', 0))} "
               f"half-sample fits that select each feature; the "
               f"{len(stability.get('stable_features', []))} at or above the threshold "
               f"τ = {float(tau):.2f} are stable")
        cap += (f" (expected falsely selected features at most {float(bound):.3g}, "
                "Shah & Samworth's bound)." if bound is not None else ".")
        rep.figure(plots.plot_selection_frequency(
            names, values, threshold=tau, title="Stability selection"), cap)


def _params_rows(est):
    rows = []
    for k, v in sorted(est.get_params(deep=False).items()):
        if hasattr(v, "get_params"):
            v = type(v).__name__
        rows.append([k, v if isinstance(v, (numbers.Real, str, bool)) or v is None
                     else str(v)])
    return rows


def model_report(loaded, X=None, y=None, *, source=None, title=None):
    """Report of a saved model (``bisvm report --model FILE``).

    Sections: the file's metadata and the estimator's parameters; coefficients or
    importance bars where the model has them (``feature_importances_`` or a linear
    ``coef_``); convergence plots where the file has them (a BilevelSVC ``history_``,
    or ``extra["convergence"]`` written by ``bisvm fit``); and, given data, the score,
    the confusion matrix and, for two features, the decision boundary.

    Parameters
    ----------
    loaded : LoadedModel
    X : ndarray, optional
        Raw features (the model's scaler is applied here).
    y : ndarray, optional
    """
    from . import plots
    from .solvers.base import ConvergenceRecord

    est = loaded.estimator
    names = list(loaded.feature_names or [f"x{j}" for j in range(est.n_features_in_)])
    meta = loaded.meta
    rep = Report(title or f"bisvm model: {type(est).__name__}",
                 f"Model file{(' ' + str(source)) if source else ''}")
    rep.section("Model")
    extra = loaded.extra if isinstance(loaded.extra, dict) else {}
    info = {
        "estimator": type(est).__name__,
        "features": len(names),
        "classes": ", ".join(map(str, getattr(est, "classes_", []))) or "(regression)",
        "scaling": loaded.scaler.method if loaded.scaler is not None else "none",
        "standardised inside the estimator": bool(
            est.get_params(deep=False).get("standardize", False)),
        "bisvm version (file)": meta.get("bisvm_version", "?"),
        "format version": meta.get("format_version", "?"),
    }
    for k in ("command", "model", "trained_on", "n_train", "train_score", "test_score"):
        if k in extra:
            info[k.replace("_", " ")] = extra[k]
    if hasattr(est, "penalty_weights_"):
        info["model kept"] = kept_model(est)
    rep.table(info)
    if hasattr(est, "penalty_weights_"):
        for msg in refinement_messages(est):
            rep.paragraph(msg, note=True)
    rep.table(_params_rows(est), ["parameter", "value"], caption="Parameters")
    rep.section("Figures")
    imp = getattr(est, "feature_importances_", None)
    coef = getattr(est, "coef_", None)
    if imp is not None:
        rep.figure(plots.plot_importance(names, np.asarray(imp)), "Feature importance.")
    elif coef is not None and np.ndim(coef) in (1, 2) and np.size(coef) and \
            np.shape(np.atleast_2d(coef))[1] == len(names):
        c = np.atleast_2d(np.asarray(coef, dtype=float))
        a = np.abs(c).mean(axis=0)
        units = "scaled features" if loaded.scaler is not None and \
            loaded.scaler.effective_method_ != "none" else "original units"
        rep.figure(plots.plot_importance(names, a / a.sum() if a.sum() else a),
                   f"Share of |coefficient| per feature ({units}).")
        rep.table([[names[j], *map(float, c[:, j])] for j in np.argsort(-a)],
                  ["feature"] + [f"coef[{k}]" for k in range(c.shape[0])],
                  caption=f"Coefficients ({units})")
    freq = getattr(est, "selection_frequency_", None)
    if freq is not None and np.ndim(freq) == 1 and len(freq) == len(names):
        rep.figure(plots.plot_selection_frequency(names, freq),
                   "Share of the fit's fold models that select each feature"
                   + (" (for one-vs-rest: of the folds in which any class's model selects "
                      "it)." if np.ndim(getattr(est, "coef_", [[0]])) == 2
                      and np.shape(est.coef_)[0] > 1 else "."))
    hist = getattr(est, "history_", None)
    if isinstance(hist, (tuple, list)) and hist and hasattr(hist[0], "value"):
        rep.figure(plots.plot_convergence(hist, title="BiSVM outer iterations"),
                   "Upper-level criterion and hypergradient norm per outer iteration.")
    conv = extra.get("convergence")
    if isinstance(conv, dict) and "objective" in conv:
        rec = ConvergenceRecord(np.asarray(conv["objective"], dtype=float),
                                np.asarray(conv["grad_norm"], dtype=float),
                                np.asarray(conv.get("seconds", []), dtype=float))
        if rec.objective.size:
            rep.figure(plots.plot_convergence(rec, title=conv.get("title")),
                       str(conv.get("caption", "Solver convergence.")))
    if rep.n_figures == 0:
        rep.paragraph("This model has no coefficients, importance or convergence record to "
                      "plot.")
    if X is not None:
        Xs = loaded.scaler.transform(X) if loaded.scaler is not None else np.asarray(X)
        pred = est.predict(Xs)
        rep.section("On the given data")
        rows = {"rows": Xs.shape[0]}
        regression = not hasattr(est, "classes_")
        if y is not None and regression:
            y = np.asarray(y, dtype=float)
            rows["R²"] = float(est.score(Xs, y))
            rows["RMSE (target units)"] = float(np.sqrt(np.mean((pred - y) ** 2)))
        elif y is not None:
            rows["score (accuracy or R²)"] = float(est.score(Xs, y))
        rep.table(rows)
        if y is not None and regression:
            rep.figure(plots.plot_predicted_vs_true(y, pred),
                       "Predicted against true target on the given rows.")
        if y is not None and hasattr(est, "classes_"):
            header, crow = _confusion_rows(np.asarray(y), np.asarray(pred))
            rep.table(crow, header, caption="Confusion matrix")
        if Xs.shape[1] == 2 and hasattr(est, "classes_"):
            rep.figure(plots.plot_decision_boundary(est, Xs, y, feature_names=names),
                       "Decision boundary (scaled features).")
    return rep


def tuning_report(summary, *, search_table=None, curves=None, chosen=None,
                  curve_label="hyperparameter", notes=(), title=None, extra_figures=()):
    """Report of a ``bisvm tune`` run.

    Parameters
    ----------
    summary : dict
        Method, chosen values, criterion, scores.
    search_table : (header, rows), optional
        The candidates ranked (grid / random search).
    curves : (grid, dict of name -> values), optional
        Criterion curves (leave-one-out methods) drawn by :func:`plots.plot_loo_curves`.
    chosen : float, optional
    extra_figures : sequence of (Axes, caption)
    """
    from . import plots

    rep = Report(title or "bisvm: hyperparameter tuning")
    for n in notes:
        rep.paragraph(n, note=True)
    rep.section("Summary")
    rep.table(summary)
    if curves is not None:
        grid, named = curves
        rep.section("Criterion curves")
        rep.figure(plots.plot_loo_curves(grid, named, chosen=chosen, xlabel=curve_label),
                   "Criterion over the grid; circles mark each curve's minimum.")
    for ax, cap in extra_figures:
        rep.figure(ax, cap)
    if search_table is not None:
        header, rows = search_table
        rep.section("Candidates")
        rep.table(rows, header, caption="Ranked by mean cross-validation score")
    return rep
