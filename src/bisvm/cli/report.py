"""``bisvm report``: one self-contained HTML file of a selection run or a saved model."""

from __future__ import annotations

import argparse
import os
import time

from ..names import CRITERIA
from . import common, select
from .defaults import choices, default

DESCRIPTION = """\
Write one self-contained HTML report (figures embedded as PNG, no external files, opens
offline) of either

* a bilevel feature-selection run (what `bisvm select` does) on --data/--dataset: the
  summary, the selected features with their importance, the validation curve with the
  BiSVM iterates, the regularisation path, importance beside a tree ensemble's, how
  often the fold models select each feature, the convergence of the outer iterations,
  the test confusion matrix, with --stability PAIRS the stability-selection frequencies
  and threshold, and with --sweep N the (mu, gamma) sparsity heatmap (N x N lower-level
  solves, run through joblib/Dask);
* a saved model (--model FILE, with --data to score it on a table): its parameters,
  coefficients or importance, and convergence plots where the file has them.

On a continuous target (--task auto decides; --task regression forces it) the selection
run fits BilevelSVR (as `bisvm select`) and the report gives the test R2 and RMSE, the
selected features with their importance, a predicted-against-true scatter of the test
rows, the selection frequencies and the convergence (no grid, no sweep).

examples:
  bisvm report --data cancer.csv --target target --out report.html
  bisvm report --dataset iris --bilevel-model scalar --out iris.html
  bisvm report --data cancer.csv --target target --stability 50 --n-jobs 2
  bisvm report --model cancer.bisvm --data cancer.csv --out model.html
  bisvm report --data diabetes.csv --target progression --out diabetes.html
"""


def add_parser(sub):
    """Add ``bisvm report`` to the subcommands ``sub``."""
    p = sub.add_parser("report", help="write a self-contained HTML report with plots",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("data")
    common.add_selection_data_options(
        g, None, "bundled data set when --data is not given (default breast-cancer)")
    m = p.add_argument_group("what to report")
    m.add_argument("--model", metavar="FILE",
                   help="report this saved model instead of running a selection "
                   "(default: none, a selection run)")
    m.add_argument("--bilevel-model", choices=choices("BilevelSVC", "model"),
                   default=default("BilevelSVC", "model"),
                   help="selection run: one weight, one per feature or one per group; "
                   "auto as select --model (default %(default)s, the estimators')")
    m.add_argument("--groups", metavar="SPEC",
                   help="feature groups for --bilevel-model group (default: none)")
    common.add_bilevel_options(m)
    m.add_argument("--no-grid", action="store_true",
                   help="skip the 149-point grid (no validation curve / path figures)")
    m.add_argument("--sweep", type=common.positive_int("--sweep", 0), default=0,
                   metavar="N", help="add the (mu, gamma) sparsity heatmap of N x N solves "
                   "(default %(default)s: none)")
    from .select_regression import add_regression_options

    add_regression_options(p)
    select.add_stability_options(p)
    common.add_parallel_args(p)
    o = common.add_output_args(p)
    o.add_argument("--out", metavar="FILE", default="report.html",
                   help="HTML file to write (default %(default)s)")
    p.set_defaults(func=run)
    return p


def run(args):
    """Write the HTML report of a selection run or of a saved model; exit code 0."""
    t0 = time.perf_counter()
    out = args.out
    common.check_output_path("--out", out, suffixes=(".html", ".htm"), what="an HTML report")
    common.check_parallel_args(args)
    if args.model:
        result, rep = _model(args)
    else:
        result, rep = _selection(args)
    rep.write(out)
    result.update(command="report", report=os.fspath(out), figures=rep.n_figures,
                  bytes=os.path.getsize(out), seconds=time.perf_counter() - t0)
    common.emit(args, result, lambda r: print(
        f"bisvm report: wrote {r['report']} ({r['figures']} figures, "
        f"{r['bytes'] / 1024:.0f} KB, {r['seconds']:.1f} s)"))
    return 0


def _model(args):
    import numpy as np

    from ..persistence import load_model
    from ..report import model_report
    from .predict import read_for_model

    if args.dataset:
        raise ValueError("--model reports a saved model: give its data with --data FILE")
    loaded = load_model(args.model)
    X = y = None
    if args.data:
        ds, X = read_for_model(args.data, loaded, args.drop_missing, args.encoding,
                               columns=common.table_options(args), command="report")
        y = ds.y
        if y is not None and not hasattr(loaded.estimator, "classes_"):
            y = np.asarray(y, dtype=float)
    rep = model_report(loaded, X, y, source=args.model)
    return {"kind": "model", "model": os.fspath(args.model),
            "estimator": type(loaded.estimator).__name__}, rep


def _selection(args):
    import numpy as np
    from sklearn.ensemble import ExtraTreesClassifier

    from .. import plots
    from ..report import bilevel_report

    if not 0 < args.test_size < 1:
        raise ValueError(f"--test-size must be in (0, 1), got {args.test_size}")
    opts = select.SelectOptions(
        data=args.data, target=args.target, dataset=args.dataset or "breast-cancer",
        positive=args.positive, drop_missing=args.drop_missing, encoding=args.encoding,
        categorical=None if args.categorical is None else tuple(args.categorical),
        drop_column=None if args.drop_column is None else tuple(args.drop_column),
        max_categories=args.max_categories,
        test_size=args.test_size, scaling=args.scaling, seed=args.seed,
        model=args.bilevel_model, groups=args.groups, criterion=args.criterion, cv=args.cv,
        l2_penalty=args.l2_penalty, hinge_smoothing=args.hinge_smoothing,
        l1_smoothing=args.l1_smoothing, free_intercept=args.free_intercept,
        max_iter=args.max_iter, stability=args.stability, task=args.task, loss=args.loss,
        epsilon=args.epsilon, loss_smoothing=args.loss_smoothing,
        regression_criterion=args.regression_criterion,
        stability_threshold=args.stability_threshold, n_jobs=args.n_jobs,
        no_grid=args.no_grid, json=args.json, quiet=args.quiet, verbose=args.verbose)
    stages = 2 + (1 if args.sweep else 0)
    with common.progress(args, "report", stages, unit="stage") as bar:
        run = select.run_select(opts)
        res = run.result
        bar(1)
        if res.get("task") == "regression":
            out, rep = _regression(args, run)
            bar(1)
            return out, rep
        est, names, bt = run.estimator, run.names, run.binary_target
        class_names = {-1.0: bt.negative, 1.0: bt.positive}  # the file's own labels
        trees = ExtraTreesClassifier(n_estimators=250, random_state=args.seed).fit(
            run.X_train, run.y_train)
        summary = {
            "data": res["source"], "training rows": res["n_train"],
            "test rows": res["n_test"], "model": f"{res['model']} (BiSVM L-BFGS)",
            "scaling": ("standardised inside the fit (per fold, sample-weighted)"
                        if res["standardized_inside"] else res["scaling"]),
            "coefficients": res["coef_units"],
            "positive class": res["positive_class"],
            "criterion": CRITERIA[res["criterion"]].description,
            "validation objective": res["validation_objective"],
            "test accuracy": res["test_accuracy"],
            "selected features": f"{res['n_selected']} of {res['n_features']}",
            **({"stable features (stability selection)":
                f"{res['stability']['n_stable']} at τ = {res['stability']['threshold']:.2f}"
                f" ({res['stability']['n_pairs']} pairs)"} if "stability" in res else {}),
            "outer iterations": res["iterations"],
            "lower-level solves": res["lower_level_solves"],
            "seconds (fit)": res["seconds"],
        }
        if "grid_validation_objective" in res:
            summary["grid search best (149 β)"] = (
                f"{res['grid_validation_objective']:.4f} at β={res['grid_beta']:.2f}, "
                f"{res['grid_lower_level_solves']} solves")
        rep = bilevel_report(est, feature_names=names, X_train=run.X_train,
                             y_train=run.y_train, X_test=run.X_test, y_test=run.y_test,
                             grid=run.grid, summary=summary,
                             tree_importance=trees.feature_importances_,
                             notes=res["notes"], class_names=class_names,
                             coef_units=res["coef_units"], stability=res.get("stability"))
        bar(1)
        if args.sweep:
            from ..parallel import sparsity_sweep

            n = args.sweep
            mus = np.geomspace(0.01, 1.0, n) if n > 1 else np.array([0.25])
            gammas = np.geomspace(1e-3, 1.0, n) if n > 1 else np.array([0.01])
            beta = float(np.median(np.ravel(est.penalty_weights_)))
            # l2_penalty="auto" is resolved by the fit; the sweep uses the value it chose
            alpha = (float(est.l2_penalty_) if args.l2_penalty == "auto"
                     else args.l2_penalty)
            X_sweep = run.X_train
            if res["scaling"] == "none":
                # the sweep solves the thesis's problem, on standardised columns (where
                # its β and α are read)
                from ..data import Scaler

                X_sweep = Scaler("standard").fit_transform(X_sweep)
            with common.backend(args) as be:
                sw = sparsity_sweep(X_sweep, run.y_train, mus, gammas,
                                    penalty_weight=beta, l2_penalty=alpha,
                                    n_jobs=be.n_jobs)
            rep.section("Sparsity over (μ, γ)")
            rep.figure(plots.plot_sparsity_heatmap(mus, gammas, sw.counts),
                       f"Nonzero coefficients of the elastic-net SVM at β={beta:.3g} over "
                       f"the smoothing parameters ({n * n} solves on {be.description}).")
            res["sweep_counts"] = sw.counts.tolist()
            bar(1)
    keys = ("source", "n_train", "n_test", "model", "model_fitted", "refined", "scaling",
            "coef_units", "validation_objective", "test_accuracy", "selected_features",
            "penalty_weights", "iterations")
    out = {"kind": "selection", **{k: res[k] for k in keys}}
    for k in ("selection_frequency", "stability"):
        if k in res:
            out[k] = res[k]
    if "sweep_counts" in res:
        out["sweep_counts"] = res["sweep_counts"]
    return out, rep


def _regression(args, run):
    """The report of a regression selection run (BilevelSVR): ``(record, Report)``."""
    from sklearn.ensemble import ExtraTreesRegressor

    from ..report import regression_report

    if args.sweep:
        raise ValueError("--sweep maps the classifier's (mu, gamma) sparsity; this run is "
                         "a regression")
    res = run.result
    trees = ExtraTreesRegressor(n_estimators=250, random_state=args.seed).fit(
        run.X_train, run.y_train)
    stab = res.get("stability")
    summary = {
        "data": res["source"], "target": res["target"],
        "task": f"regression ({res['task_reason']})",
        "training rows": res["n_train"], "test rows": res["n_test"],
        "model": f"{res['model']} (BilevelSVR, {res['loss']} loss, BiSVM L-BFGS)",
        "scaling": ("standardised inside the fit (per fold, sample-weighted)"
                    if res["standardized_inside"] else res["scaling"]),
        "coefficients": res["coef_units"],
        "criterion": res["validation_objective_name"],
        "validation objective": res["validation_objective"],
        "test R²": res["test_r2"],
        "test RMSE (target units)": res["test_rmse"],
        "test RMSE of the training mean": res["test_rmse_training_mean"],
        "selected features": f"{res['n_selected']} of {res['n_features']}",
        **({"stable features (stability selection)":
            f"{stab['n_stable']} at τ = {stab['threshold']:.2f} ({stab['n_pairs']} pairs)"}
           if stab else {}),
        "outer iterations": res["iterations"],
        "lower-level solves": res["lower_level_solves"],
        "seconds (fit)": res["seconds"],
    }
    rep = regression_report(run.estimator, feature_names=run.names, X_test=run.X_test,
                            y_test=run.y_test, summary=summary,
                            tree_importance=trees.feature_importances_, notes=res["notes"],
                            coef_units=res["coef_units"], stability=stab)
    keys = ("task", "task_reason", "source", "target", "n_train", "n_test", "model",
            "model_fitted", "refined", "scaling", "coef_units", "validation_objective",
            "test_r2", "test_rmse", "selected_features", "penalty_weights", "iterations")
    out = {"kind": "selection", **{k: res[k] for k in keys}}
    for k in ("selection_frequency", "stability"):
        if k in res:
            out[k] = res[k]
    return out, rep
