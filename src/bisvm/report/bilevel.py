"""Reports of the sparse bilevel SVMs (``bisvm report``): :func:`bilevel_report` for a
:class:`~bisvm.estimators.sparse.BilevelSVC` fit, :func:`regression_report` for a
:class:`~bisvm.estimators.bilevel_svr.BilevelSVR` fit, and what such a fit kept
(:func:`kept_model`, :func:`refinement_messages`, :func:`penalty_problems`,
:func:`thesis_scores_informative`)."""

from __future__ import annotations

import re

import numpy as np

from .html import Report, confusion_rows

__all__ = ["bilevel_report", "regression_report", "kept_model", "refinement_messages",
           "penalty_problems", "thesis_scores_informative"]


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
    González Vallejo 2024) tell the features apart: only when per-feature or per-group weights
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
    from .. import plots

    names = [str(n) for n in feature_names]
    rep, imp, order = _selection_head(
        est, names, title or "bisvm: bilevel feature selection",
        "Smoothed elastic-net SVM whose L1 weights are learned by BiSVM L-BFGS "
        "(González Vallejo 2024).", notes, summary, coef_units)
    kept = kept_model(est)
    pw = np.ravel(est.penalty_weights_)
    if kept == "scalar":
        for msg in refinement_messages(est):
            if msg not in notes:  # the CLI's notes say it already, at the top
                rep.paragraph(msg, note=True)
    _weights_table(rep, est, names)
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
    _convergence_figure(rep, est)
    if X_test is not None and y_test is not None and len(y_test):
        header, rows = confusion_rows(np.asarray(y_test), est.predict(X_test),
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
    from .. import plots

    names = [str(n) for n in feature_names]
    rep, imp, order = _selection_head(
        est, names, title or "bisvm: bilevel feature selection for regression",
        "Smoothed elastic-net support vector regression whose L1 weights are learned by "
        "BiSVM L-BFGS.", notes, summary, coef_units, sort_kind="stable")
    _weights_table(rep, est, names)
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
    _convergence_figure(rep, est)
    return rep


def _frequency_figures(rep, est, names, stability):
    """Selection-frequency bars: the fold models' and stability selection's."""
    from .. import plots

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


def _weights_table(rep, est, names):
    """The learned L1 weights: one row for the scalar model, else one per feature or
    group (fitted on arrays, the weights are named x0, x1, ...: shown by feature name)."""
    pw = np.ravel(est.penalty_weights_)
    if kept_model(est) == "scalar":
        rep.table([["β (every coefficient)", float(pw[0])]], ["penalty weight", "value"],
                  caption="L1 weight kept (scalar model)")
        return
    pw_names = [names[int(n[1:])] if re.fullmatch(r"x\d+", str(n))
                and int(n[1:]) < len(names) else str(n) for n in est.penalty_weight_names_]
    rep.table([[n, float(v)] for n, v in zip(pw_names, pw)],
              ["penalty weight", "learned β"], caption="Learned L1 weights")


def _convergence_figure(rep, est):
    """The BiSVM outer iterations' criterion and hypergradient norm, when recorded."""
    from .. import plots

    hist = est.history_
    if isinstance(hist, (tuple, list)) and hist and hasattr(hist[0], "value"):
        rep.figure(plots.plot_convergence(hist, title="BiSVM outer iterations"),
                   "Upper-level criterion and log-scale hypergradient norm per outer "
                   "iteration.")
