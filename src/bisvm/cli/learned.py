"""What a fit learned, as the subcommands print it: scaling, kept weights, stability.

Three questions every selection output answers from the fitted estimator's public
attributes only:

* **who scaled the columns** (:func:`scaling_plan`): an estimator that standardises
  inside its fit (``standardize=True``: sample-weighted statistics per fold, as glmnet
  does; Friedman, Hastie & Tibshirani 2010, "Regularization paths for generalized linear
  models via coordinate descent") is given the columns unscaled, so that nothing is
  scaled twice and its coefficients are in the original units;
* **which L1 weights the fit kept** (:func:`kept_weights`): the vector and group models
  start from the scalar model and keep their refinement only when it wins on held-out
  rows (``refined_``); a rejected refinement *is* the scalar model, one β shared by all
  coefficients, and is reported as such;
* **how stable the selection is** (:func:`frequency_by_name`, :func:`run_stability`):
  the share of the fold models selecting each feature (``selection_frequency_``) and,
  on request, complementary-pairs stability selection (Meinshausen & Bühlmann 2010,
  "Stability selection"; Shah & Samworth 2013, "Variable selection with error control:
  another look at stability selection") through :class:`bisvm.StabilitySelection`.

:func:`print_select` prints a ``bisvm select`` record. numpy and the estimators are
imported where they are used (``bisvm --help`` must not load them).
"""

from __future__ import annotations

import dataclasses
import time

# The text report lists at most this many selected features (--json lists them all).
PRINT_FEATURES_MAX = 40

SOLVER_NAMES = {
    "newton": "dense Newton",
    "woodbury": "sample-space Woodbury Newton",
    "cg": "truncated Newton-CG",
    "lbfgs": "L-BFGS",
}

#: the ``--scaling`` default: the estimator standardises when it can, else the CLI does
AUTO = "auto"


@dataclasses.dataclass(frozen=True)
class ScalingPlan:
    """Who scales the columns of one run.

    Attributes
    ----------
    method : {"standard", "minmax", "none"}
        What the CLI's :class:`~bisvm.data.Scaler` fits on the training rows (stored with
        a saved model).
    inside : bool
        The estimator standardises inside its fit.
    params : dict
        Estimator parameters the plan sets (``{"standardize": False}`` when the user asked
        the CLI to scale a model that would standardise again).
    note : str or None
        One line saying what happened, for the output's notes.
    """

    method: str
    inside: bool
    params: dict
    note: str | None

    @property
    def coef_units(self):
        """The units of the reported coefficients."""
        if self.method == "none":
            return "original units"
        return {"standard": "per training standard deviation",
                "minmax": "per training range"}[self.method]


def standardizes(estimator_or_params):
    """Whether an estimator (or its ``get_params()``) standardises inside its fit."""
    params = estimator_or_params if isinstance(estimator_or_params, dict) else \
        estimator_or_params.get_params(deep=False)
    return bool(params.get("standardize", False))


def scaling_plan(requested, params, name):
    """The :class:`ScalingPlan` of ``--scaling requested`` for an estimator named ``name``
    with parameters ``params``.

    ``auto`` (the default) leaves the columns unscaled for an estimator that standardises
    them itself (its statistics are per fold and sample-weighted, which a scaling fitted
    once by the CLI cannot be), and scales them (``standard``) for any other. An explicit
    ``standard`` or ``minmax`` is honoured: the CLI scales and the estimator's own
    standardisation is switched off, so the columns are never scaled twice. ``none``
    leaves the columns to the estimator.
    """
    if requested not in (AUTO, "standard", "minmax", "none"):
        raise ValueError(f"--scaling must be auto, standard, minmax or none, got {requested!r}")
    inside = standardizes(params)
    if requested == AUTO:
        if not inside:
            return ScalingPlan("standard", False, {}, None)
        requested = "none"
    if inside and requested != "none":
        return ScalingPlan(requested, False, {"standardize": False}, (
            f"scaling: --scaling {requested} scales the columns on the training rows, so "
            f"{name} does not standardise them again (standardize=False)"))
    if inside:
        return ScalingPlan("none", True, {}, (
            f"scaling: {name} standardises each column inside the fit (sample-weighted, "
            "per fold), so the CLI leaves them unscaled; coef are in the original units, "
            "importance is read on the standardised columns"))
    return ScalingPlan(requested, False, {}, None)


# ------------------------------------------------------------------- kept weights


def scaled_split(opts, est, name, Xtr, Xte, notes):
    """Apply ``--scaling`` to a train/test split for the estimator ``est`` (named
    ``name``): its parameters set by the :func:`scaling_plan`, the scaler fitted on the
    training rows, and the plan's notes appended to ``notes``. Returns (plan, scaler,
    scaled training rows, scaled test rows)."""
    from .. import data

    plan = scaling_plan(opts.scaling, est.get_params(deep=False), name)
    est.set_params(**plan.params)
    scaler = data.Scaler(plan.method).fit(Xtr)
    Xtr_s, Xte_s = scaler.transform(Xtr), scaler.transform(Xte)
    if plan.note:
        notes.append(plan.note)
    if scaler.effective_method_ != plan.method:
        notes.append(f"scaling: {scaler.describe()}")
    return plan, scaler, Xtr_s, Xte_s


def kept_model(est):
    """The model a BilevelSVC kept (:func:`bisvm.report.kept_model`)."""
    from ..report import kept_model as kept

    return kept(est)


def refinement_messages(est):
    """A line per rejected refinement (:func:`bisvm.report.refinement_messages`)."""
    from ..report import refinement_messages as messages

    return messages(est)


def thesis_scores_informative(est):
    """Whether the thesis's scores tell features apart
    (:func:`bisvm.report.thesis_scores_informative`)."""
    from ..report import thesis_scores_informative as informative

    return informative(est)


def kept_weights(est, feature_names, group_names=()):
    """The L1 weights a BilevelSVC kept, by the user's names.

    ``{name: β}`` over the penalty weights of each refined problem (``"name[class]"`` for
    one-vs-rest), and a single ``{"beta": β}`` (``"beta[class]"``) for a problem whose
    model is the scalar one, asked for or kept after a rejected refinement: its
    per-coefficient weights are all that one β and were never learned apart.
    """
    from ..report import penalty_problems
    from .output import feature_key, to_py

    keys = [feature_key(k, feature_names, group_names) for k in est.penalty_weight_names_]
    model = getattr(est, "model_", getattr(est, "model", ""))
    out = {}
    for c, refined, row in penalty_problems(est):
        tag = "" if c is None else f"[{to_py(c)}]"
        if model == "scalar" or refined is False:
            out[f"beta{tag}"] = float(row[0])
        else:
            out.update({f"{k}{tag}": float(v) for k, v in zip(keys, row)})
    return out


# ------------------------------------------------------------------- stability


def frequency_by_name(freq, names, listed):
    """``{name: share}`` of a selection frequency over the features ``listed``."""
    import numpy as np

    if freq is None:
        return None
    freq = np.asarray(freq, dtype=float)
    return {names[j]: float(freq[j]) for j in listed}


def run_stability(est, X, y, *, n_pairs, threshold=None, n_jobs=None, random_state=0,
                  names, X_test=None, y_test=None):
    """Complementary-pairs stability selection of the configured ``est`` on (X, y).

    Returns ``(record, fitted StabilitySelection)``; the record holds the stable set (by
    frequency), every listed feature's frequency, the threshold, the bound on the
    expected number of falsely selected features and, given test rows, the accuracy of
    the refit on the stable set.
    """
    import numpy as np
    from sklearn.base import clone

    import bisvm

    check_stability_available()
    kwargs = {"n_pairs": int(n_pairs), "n_jobs": n_jobs, "random_state": random_state}
    if threshold is not None:
        kwargs["threshold"] = threshold
    base = clone(est)
    if "verbose" in base.get_params(deep=False):
        base.set_params(verbose=0)
    if n_jobs not in (None, 1) and "n_jobs" in base.get_params(deep=False):
        # the subsample fits share the cores; folds inside each fit run in turn (the
        # results do not depend on either n_jobs)
        base.set_params(n_jobs=None)
    t0 = time.perf_counter()
    ss = bisvm.StabilitySelection(estimator=base, **kwargs).fit(X, y)
    seconds = time.perf_counter() - t0
    freq = np.asarray(ss.selection_frequency_, dtype=float)
    support = np.asarray(ss.support_, dtype=bool)
    order = sorted(np.flatnonzero(support), key=lambda j: (-freq[j], j))
    rec = {
        "n_pairs": int(n_pairs),
        "threshold": float(ss.threshold),
        "stable_features": [names[j] for j in order],
        "n_stable": len(order),
        "selection_frequency": {names[j]: float(freq[j]) for j in
                                sorted(range(len(names)), key=lambda j: (-freq[j], j))
                                if freq[j] > 0},
        "false_selection_bound": _float_or_none(getattr(ss, "false_selection_bound_", None)),
        "false_selection_bound_unimodal": _float_or_none(
            getattr(ss, "false_selection_bound_unimodal_", None)),
        "average_selected": _float_or_none(getattr(ss, "average_selected_", None)),
        "seconds": seconds,
    }
    if X_test is not None and y_test is not None and len(y_test):
        # the refit on the stable set (the model without features when none is stable)
        rec["test_accuracy"] = float(ss.score(X_test, y_test))
    return rec, ss


def check_stability_available():
    """Refuse ``--stability`` before any work when the installed bisvm has no
    :class:`bisvm.StabilitySelection`."""
    import bisvm

    if not hasattr(bisvm, "StabilitySelection"):
        raise ValueError("--stability: bisvm.StabilitySelection is not available in this "
                         "installation of bisvm")


def _float_or_none(v):
    import math

    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def print_stability(s, width=24):
    """The text lines of a stability record (:func:`run_stability`)."""
    p = print
    p(f"stability selection   {s['n_pairs']} complementary pairs of half-samples, "
      f"threshold {s['threshold']:.2f}: {s['n_stable']} stable feature"
      f"{'' if s['n_stable'] == 1 else 's'} ({s['seconds']:.2f} s)")
    freq = s["selection_frequency"]
    for name in s["stable_features"][:40]:
        p(f"  {name:<{width}s}  frequency {freq[name]:.2f}")
    if s["n_stable"] > 40:
        p(f"  ... and {s['n_stable'] - 40} more (--json lists them all)")
    if s.get("false_selection_bound") is not None:
        avg = s.get("average_selected")
        p(f"  expected falsely selected features <= {s['false_selection_bound']:.3g} "
          "(Shah & Samworth's bound"
          + (f"; {avg:.1f} features selected per half-sample on average)" if avg is not None
             else ")"))
        if s["false_selection_bound"] >= max(s["n_stable"], 1):
            # q^2 / ((2 tau - 1) p) bounds nothing when the base model keeps many of the
            # p features on each half-sample
            p("  (the bound is not informative here: it needs the features selected per "
              "half-sample to be few beside the number of features)")
    if "test_accuracy" in s:
        p(f"  test accuracy of the refit on the stable set {s['test_accuracy']:.4f}")


def print_learned(r, scaled):
    """The part of ``bisvm select``'s text report that classification and regression
    share: the selected features (importance, fold frequency, coefficient), the learned
    L1 weights and the validation objective; ``scaled`` names the features' scaling.
    Returns the width of the feature column."""
    p = print
    shown = r["selected_features"][:PRINT_FEATURES_MAX]
    freq = r.get("selection_frequency")
    width = max([len(n) for n in shown] + [8])
    if shown:
        p(f"  {'feature':<{width}s}  importance" + ("  frequency" if freq else "")
          + f"  coef ({r['coef_units']})")
    for name in shown:
        p(f"  {name:<{width}s}  {r['importance'][name]:>10.4f}"
          + (f"  {freq[name]:>9.2f}" if freq else "")
          + f"  {r['coefficients'][name]:+.4g}")
    if r["n_selected"] > len(shown):
        p(f"  ... and {r['n_selected'] - len(shown)} more (--json lists them all)")
    if shown:
        p(f"  (importance: share of the |coef| of the {scaled} features"
          + ("; frequency: share of the fold models that select the feature)" if freq
             else ")"))
    if r["model"] == "scalar" and "beta" in r["penalty_weights"]:
        p(f"L1 weight             β = {r['penalty_weights']['beta']:.4g}, one for every "
          "coefficient (scalar model)")
    else:
        pw = [v for k, v in r["penalty_weights"].items() if k != "intercept"]
        if pw:
            p(f"learned L1 weights    {len(pw)}, one per "
              f"{'group' if r['model'] == 'group' else 'feature'}, from {min(pw):.4g} to "
              f"{max(pw):.4g} (--json lists them)")
    p(f"validation objective  {r['validation_objective']:.4f}  "
      f"({r['validation_objective_name']})")
    return width


def print_select(r):
    """The text report of a ``bisvm select`` run (stdout)."""
    from .output import print_notes

    p = print
    sparse = r["input"]["sparse"]
    p(f"bisvm select: {r['model']} model on {r['source']} "
      f"({r['n_train']} training rows, {r['n_test']} test rows"
      + (f", sparse X: {r['input']['stored_values']} stored values, "
         f"{r['input']['density']:.2%} dense)" if sparse else ")"))
    print_notes(r["notes"])
    p(f"selected {r['n_selected']} of {r['n_features']} features (coef > 0 favours class "
      f"{r['positive_class']!r}, < 0 class {r['negative_class']!r}):")
    scaled = "standardised" if r["standardized_inside"] or r["scaling"] == "standard" \
        else f"{r['scaling']}-scaled"
    width = print_learned(r, scaled)
    p(f"test accuracy         {r['test_accuracy']:.4f}  "
      f"(test halved MSE of raw outputs {r['test_halved_mse']:.4f})")
    p(f"BiSVM L-BFGS          {r['iterations']} iterations, {r['lower_level_solves']} "
      f"lower-level solves ({r['lower_level_iterations']} Newton steps, "
      f"{SOLVER_NAMES.get(r['lower_level_solver'], r['lower_level_solver'])}), "
      f"{r['seconds']:.2f} s")
    if "grid_seconds" in r:
        p(f"grid search ({r['grid_size']} β)   best {r['grid_validation_objective']:.4f} at "
          f"β={r['grid_beta']:.2f}, {r['grid_lower_level_solves']} lower-level solves "
          f"({r['grid_lower_level_iterations']} Newton steps), {r['grid_seconds']:.2f} s")
        time_ratio = "" if r["time_ratio"] is None else f", {r['time_ratio']:.1f}x less time"
        p(f"BiSVM against grid    {r['solves_ratio']:.1f}x fewer lower-level solves"
          f"{time_ratio}")
    if "stability" in r:
        print_stability(r["stability"], width)
    p(f"start-up              {r['startup_seconds']:.2f} s (imports, first calls; "
      "before either was timed)")
    for path in r.get("plots", []):
        p(f"wrote {path}")
