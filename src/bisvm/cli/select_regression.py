"""``bisvm select`` on a continuous target: :class:`~bisvm.BilevelSVR`.

The regression counterpart of :func:`bisvm.cli.select.run_select`: the same data, split,
scaling, warm-up, stability selection and record of the selected features, with the
regressor's options and its test scores. The held-out rows are scored by the
coefficient of determination :math:`R^2 = 1 - \\sum_i (y_i - \\hat y_i)^2 / \\sum_i (y_i -
\\bar y)^2` (:math:`\\bar y` the test rows' mean, as ``sklearn.metrics.r2_score``) and the
root mean squared error in the target's units, beside the RMSE of the training mean (the
intercept-only model that the fit's null test compares against). There is no grid
baseline: the 149-point grid of the thesis is over the classifier's β.

Standard library at import (``bisvm --help`` must not load numpy).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

from . import common, learned
from .defaults import choices, default
from .select_shared import (
    LIST_ALL_FEATURES_MAX,
    PLOT_FEATURES_MAX,
    SelectRun,
    frequency_plots,
    input_record,
    listed_by_name,
)

#: ``--loss`` choices: BilevelSVR's data losses (:mod:`bisvm.cli.defaults`)
LOSSES = choices("BilevelSVR", "loss")

#: ``--regression-criterion`` -> one-line description (BilevelSVR's ``criterion``)
REGRESSION_CRITERION_NAMES = {
    "mse": "k-fold halved mean squared error of the standardised target",
    "mae": "k-fold smoothed mean absolute error of the standardised target",
}


def add_regression_options(p):
    """The BilevelSVR options of a regression run (``bisvm select`` and ``bisvm report``):
    data loss, ε, the loss smoothing and the validation criterion."""
    g = p.add_argument_group("regression (a continuous target: BilevelSVR)")
    g.add_argument("--loss", choices=LOSSES, default=default("BilevelSVR", "loss"),
                   help="data loss: the squared error, the smoothed epsilon-insensitive "
                   "loss of SVR or the Pseudo-Huber loss (default %(default)s)")
    g.add_argument("--epsilon", type=common.nonneg_float("--epsilon"),
                   default=default("BilevelSVR", "epsilon"),
                   help="half-width of the epsilon tube (or the Huber transition), in "
                   "standard deviations of the target (default %(default)s)")
    g.add_argument("--loss-smoothing", type=common.positive_float("--loss-smoothing"),
                   default=default("BilevelSVR", "loss_smoothing"),
                   help="width of the tube's soft edges, in standard "
                   "deviations of the target (default %(default)s)")
    g.add_argument("--regression-criterion", choices=choices("BilevelSVR", "criterion"),
                   default=default("BilevelSVR", "criterion"),
                   help="validation criterion over the folds: "
                   + "; ".join(f"{k}: {v}" for k, v in REGRESSION_CRITERION_NAMES.items())
                   + " (default %(default)s)")
    return g


def check_regression_options(opts):
    """Refuse the classification-only options on a regression run, before any work."""
    refused = [("--positive", opts.positive is not None),
               ("--criterion", opts.criterion is not None),
               ("--hinge-smoothing", opts.hinge_smoothing is not None),
               ("--learn-l2", opts.learn_l2)]
    for option, given in refused:
        if given:
            other = {"--criterion": " (use --regression-criterion mse|mae)",
                     "--hinge-smoothing": " (use --loss-smoothing)"}.get(option, "")
            raise ValueError(f"{option} applies to classification; this run is a "
                             f"regression{other}")
    if opts.model == "group" and not opts.groups:
        raise ValueError("--model group needs --groups (e.g. a=0-4,b=5-9)")
    common.check_exact_l1(opts.l1_smoothing, "BilevelSVR")


def regression_estimator(opts, groups):
    """The BilevelSVR of ``opts`` (``--groups`` to ``feature_groups``, ``--n-jobs`` to
    its folds)."""
    from ..estimators.bilevel_svr import BilevelSVR

    params = dict(
        model=opts.model, loss=opts.loss, epsilon=opts.epsilon,
        loss_smoothing=opts.loss_smoothing, l2_penalty=opts.l2_penalty,
        criterion=opts.regression_criterion, cv=opts.cv,
        penalize_intercept=False if opts.free_intercept else "auto",
        max_iter=opts.max_iter, random_state=opts.seed,
        verbose=int(common.progress_mode(opts) is not None))
    if opts.model == "group" or (opts.model == "auto" and opts.groups):
        params["feature_groups"] = groups
    if opts.l1_smoothing is not None:
        params["l1_smoothing"] = opts.l1_smoothing
    if opts.n_jobs is not None:
        params["n_jobs"] = opts.n_jobs
    return BilevelSVR(**params)


def warm_up_regression(est, X, y, seed=0):
    """Pay the one-time costs of a fit (compiled kernels, first calls) on at most 60
    random rows with two outer iterations, as :func:`bisvm.cli.select.warm_up` does for
    the classifier; returns the seconds spent."""
    import numpy as np
    from sklearn.base import clone

    t0 = time.perf_counter()
    rows = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:60])
    try:
        clone(est).set_params(max_iter=2, verbose=0).fit(X[rows], y[rows])
    except (ValueError, ArithmeticError, np.linalg.LinAlgError):
        pass  # e.g. too few rows for the folds: the timed fit pays the costs
    return time.perf_counter() - t0


def run_regression(opts, ds, reason, *, t_start, import_seconds):
    """The select run of ``opts`` on the Dataset ``ds`` with a continuous target: a
    :class:`~bisvm.cli.select.SelectRun` whose record has ``task="regression"``."""
    import numpy as np

    from .. import data

    check_regression_options(opts)
    X, y, names = ds.X, np.asarray(ds.y, dtype=np.float64), list(ds.feature_names)
    groups = data.parse_groups(opts.groups, names) if opts.groups else ds.groups
    notes = [f"task: regression ({reason})", *ds.notes]
    Xtr, Xte, ytr, yte = data.train_test_split_seeded(
        X, y, test_size=opts.test_size, random_state=opts.seed, stratify=False)
    est = regression_estimator(opts, groups)
    plan, scaler, Xtr_s, Xte_s = learned.scaled_split(opts, est, "BilevelSVR", Xtr, Xte, notes)
    if not opts.no_grid:
        notes.append("no grid baseline: the thesis's 149-point grid is over the "
                     "classifier's β")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with common.progress(opts, "start-up (first calls, compiled kernels)", 1,
                             unit="step") as bar:
            warm_seconds = warm_up_regression(est, Xtr_s, ytr, seed=opts.seed)
            bar(1)
        t0 = time.perf_counter()
        est.fit(Xtr_s, ytr)
        fit_seconds = time.perf_counter() - t0
    notes.extend(learned.refinement_messages(est))
    if getattr(est, "null_model_", False):
        notes.append("the learned model does not beat the intercept-only model on the "
                     "held-out folds: no feature is kept (the training mean is predicted)")
    result = {
        "task": "regression", "task_reason": reason, "source": ds.source,
        "target": ds.target, "input": input_record(X, Xtr_s),
        "scaling": scaler.effective_method_, "standardized_inside": plan.inside,
        "coef_units": plan.coef_units, "n_train": int(len(ytr)), "n_test": int(len(yte)),
        "model": learned.kept_model(est), "model_fitted": est.model_,
        "refined": common.to_py(getattr(est, "refined_", None)),
        "loss": opts.loss, "criterion": opts.regression_criterion,
        **regression_record(opts, est, Xte_s, yte, ytr, names, groups),
        "seconds": fit_seconds, "startup_seconds": import_seconds + warm_seconds,
        "notes": notes,
    }
    stab = None
    if opts.stability:
        with common.progress(opts, f"stability selection ({opts.stability} pairs)", 1,
                             unit="run") as bar, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rec, stab = learned.run_stability(
                est, Xtr_s, ytr, n_pairs=opts.stability, threshold=opts.stability_threshold,
                n_jobs=opts.n_jobs, random_state=opts.seed, names=names, X_test=Xte_s,
                y_test=yte)
            if "test_accuracy" in rec:  # a regressor's score is R2
                rec["test_r2"] = rec.pop("test_accuracy")
            result["stability"] = rec
            bar(1)
    if opts.out:
        with common.progress(opts, "plots", 4, unit="figure") as bar:
            result["plots"] = regression_plots(opts, est, names, Xtr_s, ytr, Xte_s, yte,
                                               notes, bar, stab)
    result["total_seconds"] = time.perf_counter() - t_start
    return SelectRun(result=result, estimator=est, grid=None, names=names, X_train=Xtr_s,
                     X_test=Xte_s, y_train=ytr, y_test=yte, binary_target=None,
                     stability=stab)


def regression_record(opts, est, X_test, y_test, y_train, names, groups):
    """The record of the fitted BilevelSVR: criterion, test R² and RMSE, weights,
    selected features, coefficients and lower-level counts."""
    import numpy as np

    pred = np.asarray(est.predict(X_test), dtype=np.float64)
    imp = np.asarray(est.feature_importances_)
    order = [j for j in np.argsort(-imp, kind="stable") if imp[j] > 0]
    d = len(names)
    listed = range(d) if d <= LIST_ALL_FEATURES_MAX else order
    group_names = set(groups or ()) if est.model_ == "group" else set()
    coef = np.ravel(est.coef_)
    rec = {
        "validation_objective": float(est.validation_score_),
        "validation_objective_name": REGRESSION_CRITERION_NAMES[opts.regression_criterion],
        "test_r2": float(est.score(X_test, y_test)) if len(y_test) > 1 else None,
        "test_rmse": float(np.sqrt(np.mean((pred - y_test) ** 2))),
        "test_mae": float(np.mean(np.abs(pred - y_test))),
        # the intercept-only model: the training rows' mean on every test row
        "test_rmse_training_mean": float(np.sqrt(np.mean((y_test - np.mean(y_train)) ** 2))),
        "epsilon_in_target_units": float(opts.epsilon * est.y_scale_),
        "penalty_weights": listed_by_name(est.penalty_weight_names_, est.penalty_weights_,
                                          d, order, names, group_names)
        if learned.kept_model(est) != "scalar" else learned.kept_weights(est, names),
        "selected_features": [names[j] for j in order],
        "n_selected": len(order),
        "n_features": d,
        "importance": {names[j]: float(imp[j]) for j in order},
        "features_listed": "all" if d <= LIST_ALL_FEATURES_MAX else "selected",
        "selection_frequency": learned.frequency_by_name(
            getattr(est, "selection_frequency_", None), names, listed),
        "coefficients": {names[j]: float(coef[j]) for j in listed},
        "intercept": float(est.intercept_),
        "l2_penalty": float(est.l2_penalty_),
        "iterations": int(est.n_iter_),
        "lower_level_solves": int(est.lower_level_solves_),
        "lower_level_iterations": int(est.lower_level_iterations_),
        "lower_level_solver": str(est.solver_),
    }
    if rec["selection_frequency"] is None:
        del rec["selection_frequency"]
    return rec


def regression_plots(opts, est, names, X, y, X_test, y_test, notes, bar, stability=None):
    """The PNG figures of a regression select run: importance beside a tree ensemble's,
    predicted against true on the test rows, and the selection frequencies."""
    import numpy as np
    from sklearn.ensemble import ExtraTreesRegressor

    from .. import plots

    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    d = len(names)
    trees = ExtraTreesRegressor(n_estimators=250, random_state=opts.seed).fit(X, y)
    imp = np.asarray(est.feature_importances_)
    cols = np.arange(d)
    if d > PLOT_FEATURES_MAX:
        cols = np.argsort(-(imp + trees.feature_importances_), kind="stable")
        cols = cols[:PLOT_FEATURES_MAX]
        notes.append(f"importance.png: the {PLOT_FEATURES_MAX} of {d} features with the "
                     "largest BilevelSVR plus tree importance")
    ax = plots.plot_importance([names[j] for j in cols], imp[cols],
                               trees.feature_importances_[cols],
                               reference_label="tree-based (variance)")
    written.append(str(plots.save(ax, out / "importance.png")))
    bar(1)
    if len(y_test):
        ax = plots.plot_predicted_vs_true(y_test, est.predict(X_test),
                                          title="BilevelSVR on the test rows")
        written.append(str(plots.save(ax, out / "predicted_vs_true.png")))
    bar(1)
    written += frequency_plots(est, names, stability, out, bar, tick_always=True)
    return written


def print_select_regression(r):
    """The text report of a regression ``bisvm select`` run (stdout)."""
    from .output import print_notes

    p = print
    sparse = r["input"]["sparse"]
    p(f"bisvm select: regression, {r['model']} model on {r['source']} "
      f"({r['n_train']} training rows, {r['n_test']} test rows"
      + (f", sparse X: {r['input']['stored_values']} stored values)" if sparse else ")"))
    print_notes(r["notes"])
    p(f"selected {r['n_selected']} of {r['n_features']} features:")
    width = learned.print_learned(r, "standardised")
    r2 = "n/a" if r["test_r2"] is None else f"{r['test_r2']:.4f}"
    p(f"test R²               {r2}  ({r['n_test']} held-out rows)")
    p(f"test RMSE             {r['test_rmse']:.6g}  (target units; the training mean "
      f"gives {r['test_rmse_training_mean']:.6g})")
    p(f"BiSVM L-BFGS          {r['iterations']} iterations, {r['lower_level_solves']} "
      f"lower-level solves ({r['lower_level_iterations']} Newton steps, "
      f"{learned.SOLVER_NAMES.get(r['lower_level_solver'], r['lower_level_solver'])}), "
      f"{r['loss']} loss, "
      + ("" if r["loss"] == "squared"  # ε is the tube's (or Huber's) width only
         else f"ε = {r['epsilon_in_target_units']:.4g} in target units, ")
      + f"{r['seconds']:.2f} s")
    if "stability" in r:
        learned.print_stability(r["stability"], width)
        if r["stability"].get("test_r2") is not None:
            p(f"  test R² of the refit on the stable set {r['stability']['test_r2']:.4f}")
    p(f"start-up              {r['startup_seconds']:.2f} s (imports, first calls; "
      "before the fit was timed)")
    for path in r.get("plots", []):
        p(f"wrote {path}")
