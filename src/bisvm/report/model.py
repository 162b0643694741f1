"""Reports of a saved model (:func:`model_report`, ``bisvm report --model FILE``) and of a
tuning run (:func:`tuning_report`, ``bisvm tune --report``)."""

from __future__ import annotations

import numbers

import numpy as np

from .bilevel import kept_model, refinement_messages
from .html import Report, confusion_rows

__all__ = ["model_report", "tuning_report", "params_rows"]


def params_rows(est):
    """``[name, value]`` rows of an estimator's constructor parameters (a nested
    estimator by its class name)."""
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
    from .. import plots
    from ..solvers.base import ConvergenceRecord

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
    rep.table(params_rows(est), ["parameter", "value"], caption="Parameters")
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
    if hasattr(est, "tuning_") and hasattr(est, "learned_gamma_"):
        from .kernel import kernel_figures

        # the surface needs the training rows and many fits: bisvm tune --report draws it
        for ax, cap in kernel_figures(est, names):
            rep.figure(ax, cap)
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
            header, crow = confusion_rows(np.asarray(y), np.asarray(pred))
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
    from .. import plots

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
