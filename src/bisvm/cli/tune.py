"""``bisvm tune``: choose hyperparameters by one of seven methods."""

from __future__ import annotations

import argparse
import time

from . import common
from .defaults import choices, default
from .learned import refinement_messages
from .models import MODELS, add_model_args, build_estimator, parse_range, search_space

METHODS = ("bilevel", "grid", "random", "diffloo", "alo", "loo", "kfold")

DESCRIPTION = """\
Choose the hyperparameters of a model and print the chosen values with the criterion
that chose them, then the score of the refitted model on held-out test rows that the
tuning never saw (--test-size, default 0.25).

methods:
  bilevel   learn the L1 weights of the sparse SVM by BiSVM L-BFGS on a validation
            criterion (BilevelSVC; --bilevel-model scalar|vector|group, --criterion);
            on a continuous target (--task auto decides, and says why) the sparse
            SVR, BilevelSVR (--model bilevel-svr; --criterion mse|mae, --loss,
            --epsilon, --loss-smoothing), scored by R2 and RMSE on the test rows;
            with --model svc or svr, the self-tuning RBF models AutoSVC and
            AutoSVR: C (or the ridge), the RBF width and, for SVR, epsilon learned
            by hypergradient descent of a cross-validated criterion (--widths
            per_feature: one width per feature)
  grid      k-fold grid search over the model's main parameters on log grids
            (--grid-size points each; --range NAME=LOW:HIGH to change a range)
  random    k-fold random search, --n-iter log-uniform draws
  diffloo   differential leave-one-out criterion of the selective models (Angulo
            Yauri 2020)
  alo       approximate leave-one-out of the selective models
  loo       exact leave-one-out: for the selective models their own criterion; for
            any other model one refit per row at each point of a 1-D log grid
  kfold     k-fold cross-validation over a 1-D log grid (any model)

Grid, random, k-fold and leave-one-out refits run through joblib: --n-jobs N uses N
local processes, --dask local a Dask cluster on this machine, --dask-scheduler ADDRESS a
running Dask cluster; the results are the same.

examples:
  bisvm tune --dataset breast-cancer --method bilevel --bilevel-model vector
  bisvm tune --data diabetes.csv --target progression --method bilevel
  bisvm tune --dataset breast-cancer --method bilevel --model svc
  bisvm tune --data d.csv --target y --method bilevel --model svc --widths per_feature
  bisvm tune --data diabetes.csv --target progression --method bilevel --model svr
  bisvm tune --data d.csv --target y --method grid --model svc --n-jobs 2
  bisvm tune --dataset iris --method random --model svc --n-iter 30 --dask local
  bisvm tune --data d.csv --target y --method loo --model kernel-ridge
"""


def add_parser(sub):
    """Add ``bisvm tune`` to the subcommands ``sub``."""
    p = sub.add_parser("tune", help="choose hyperparameters (bilevel, grid, random, "
                       "diffloo, alo, loo, kfold)", description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_data_args(p, test_size=0.25)
    add_model_args(p, default_model=None, default_help=(
        "default: bilevel for --method bilevel, svc for grid and random, "
        "selective-logistic for the others; --method bilevel on a continuous target: "
        "bilevel-svr"))
    t = p.add_argument_group("tuning")
    t.add_argument("--method", choices=METHODS, required=True, help="how to choose")
    from .task import TASK_HELP, TASKS

    t.add_argument("--task", choices=TASKS, default="auto",
                   help="--method bilevel without --model: " + TASK_HELP)
    from .kernel_tune import add_widths_option

    add_widths_option(t, "--method bilevel --model svc|svr (default "
                      f"{default('AutoSVC', 'widths')}, the estimators')")
    t.add_argument("--grid-size", type=common.positive_int("--grid-size", 2), default=None,
                   help="grid points per parameter (grid; default 5), along the 1-D grid "
                   "(loo, kfold; default 7) or along the selectivity path of the selective "
                   "models (default "
                   f"{default('SelectiveRegressionCV', 'n_mu')}, the estimators')")
    t.add_argument("--selection-rule",
                   choices=choices("SelectiveRegressionCV", "selection_rule"), default=None,
                   help="selective models: the criterion's minimum or the sparsest point "
                   "within one standard error of it (default: the estimator's, "
                   f"{default('SelectiveRegressionCV', 'selection_rule')})")
    t.add_argument("--n-iter", type=common.positive_int("--n-iter"), default=20,
                   help="candidates of the random search (default %(default)s)")
    t.add_argument("--range", type=parse_range, action="append", default=[],
                   metavar="NAME=LOW:HIGH", help="log-scale range of a parameter, "
                   "repeatable (default: the model's ranges)")
    common.add_parallel_args(p)
    o = common.add_output_args(p)
    o.add_argument("--save", metavar="FILE",
                   help="save the refitted tuned model (.bisvm; default: none)")
    o.add_argument("--report", metavar="FILE",
                   help="write an HTML report of the run (default: none)")
    p.set_defaults(func=run)
    return p


#: grid points per axis of the cross-validated surface that ``--report`` draws under the
#: outer path of AutoSVC/AutoSVR (each point costs one fit per fold)
KERNEL_SURFACE_POINTS = 7

#: the models that ``--method bilevel`` tunes (their L1 weights, by hypergradient)
BILEVEL_MODELS = ("bilevel", "bilevel-svr")


def _default_model(method):
    return {"bilevel": "bilevel", "grid": "svc", "random": "svc"}.get(method,
                                                                     "selective-logistic")


def run(args):
    """Choose the hyperparameters by ``--method``, refit, score on the test rows and
    print the record (``--save`` and ``--report`` write files); exit code 0."""
    from .. import data

    t0 = time.perf_counter()
    common.check_parallel_args(args)
    common.check_output_path("--save", args.save)
    common.check_output_path("--report", args.report, suffixes=(".html", ".htm"),
                             what="an HTML report")
    ds = common.read_data(args)
    model = args.model or _default_model(args.method)
    task_note = []
    if args.method == "bilevel" and args.model is None and ds.y is not None:
        from .task import detect_task

        task, reason = detect_task(ds.y, args.task, target=ds.target)
        model = "bilevel-svr" if task == "regression" else "bilevel"
        if task == "regression":  # a classification run prints as it always did
            task_note = [f"task: regression ({reason}): --model {model}"]
    spec = MODELS[model]
    from .kernel_tune import KERNEL_MODELS, check_kernel_args

    kernel = args.method == "bilevel" and model in KERNEL_MODELS
    if args.method == "bilevel" and model not in BILEVEL_MODELS and not kernel:
        raise ValueError("--method bilevel tunes --model bilevel or bilevel-svr (the sparse "
                         "SVM's or SVR's L1 weights) and --model svc or svr (AutoSVC, "
                         "AutoSVR: C and the RBF widths); use --method grid|random for "
                         "other models")
    if kernel:
        check_kernel_args(args, model)
    elif args.widths is not None:
        raise ValueError("--widths applies to --method bilevel --model svc|svr")
    if args.method != "bilevel" and model in BILEVEL_MODELS:
        raise ValueError(f"--model {model} tunes itself: use --method bilevel")
    if args.method in ("diffloo", "alo") and model not in ("selective", "selective-logistic"):
        raise ValueError(f"--method {args.method} is the criterion of the selective models; "
                         "use --model selective or selective-logistic")
    X, y = ds.X, common.target_for(args, ds, spec.task)
    clf = spec.task == "classification"
    Xtr, Xte, ytr, yte = common.split(args, X, y, classification=clf)
    plan = common.scaling_for(args, spec)
    scaler = data.Scaler(plan.method).fit(Xtr)
    # --test-size 0: no test rows (Scaler.transform refuses an empty matrix)
    Xtr_s, Xte_s = scaler.transform(Xtr), (scaler.transform(Xte) if Xte.shape[0] else Xte)
    warns = []
    report_bits = {}
    with common.collect_warnings(warns):
        if kernel:
            est, res = _auto(args, model, ds, Xtr_s, ytr, report_bits)
        elif args.method == "bilevel":
            est, res = _bilevel(args, spec, ds, Xtr_s, ytr, report_bits)
        elif args.method in ("grid", "random"):
            est, res = _search(args, spec, ds, Xtr_s, ytr, report_bits)
        elif model in ("selective", "selective-logistic"):
            est, res = _selective(args, spec, ds, Xtr_s, ytr, report_bits)
        else:
            est, res = _one_d(args, spec, ds, Xtr_s, ytr, report_bits)
        test_score = float(est.score(Xte_s, yte)) if len(yte) else None
        if not clf and len(yte):
            import numpy as np

            res["test_rmse"] = float(np.sqrt(np.mean(
                (np.asarray(est.predict(Xte_s), dtype=float) - yte) ** 2)))
    result = {
        "command": "tune", "method": args.method, "model": model, "task": spec.task,
        "estimator": type(est).__name__, "source": ds.source,
        "n_train": int(len(ytr)), "n_test": int(len(yte)), "n_features": int(X.shape[1]),
        **res,
        "score_name": "accuracy" if clf else "R2",
        "test_score": test_score,
        "seconds": time.perf_counter() - t0,
        "scaling": scaler.effective_method_, "standardized_inside": plan.inside,
        "notes": task_note + list(ds.notes) + [n for n in (plan.note,) if n] + (
            [f"scaling: {scaler.describe()}"] if scaler.effective_method_ != plan.method
            else []) + res.pop("fit_notes", []), "warnings": warns,
    }
    if args.save:
        extra = {"command": "tune", "model": model, "method": args.method,
                 "trained_on": ds.source, "n_train": int(len(ytr)),
                 "chosen": common.to_py(res["chosen"])}
        if test_score is not None:
            extra["test_score"] = test_score
        common.save_checked(est, args.save, ds=ds, scaler=scaler, extra=extra,
                            X_check=Xtr_s)
        result["saved"] = args.save
    if args.report:
        _write_report(args, result, report_bits, est)
        result["report"] = args.report
    common.emit(args, result, _print)
    return 0


def _bilevel(args, spec, ds, X, y, bits):
    import numpy as np

    est = build_estimator(args, spec, ds.feature_names, groups=ds.groups)
    est.fit(X, y).set_params(verbose=0)  # verbose is display only, not saved with the model
    imp = np.asarray(est.feature_importances_)
    names = ds.feature_names
    bits["bilevel"] = est
    bits["names"] = list(names)
    return est, {
        "chosen": common.named_weights(est, names),
        "fit_notes": refinement_messages(est),
        "criterion": f"BiSVM upper level ({est.criterion}"
                     + (", standardised target)" if spec.task == "regression" else ")"),
        "criterion_value": common.to_py(np.asarray(est.validation_score_)),
        "iterations": common.to_py(np.asarray(est.n_iter_)),
        "lower_level_solves": int(est.lower_level_solves_),
        "selected_features": [names[j] for j in np.argsort(-imp) if imp[j] > 0],
    }


def _auto(args, model, ds, X, y, bits):
    """AutoSVC / AutoSVR: C (or the ridge), the widths and epsilon learned."""
    from .kernel_tune import auto_record, build_auto, fit_auto

    est = fit_auto(args, build_auto(args, model, n_jobs=args.n_jobs), X, y)
    bits["auto"] = (est, X, y)
    bits["names"] = list(ds.feature_names)
    return est, auto_record(est, list(ds.feature_names))


def _search(args, spec, ds, X, y, bits):
    import numpy as np

    from .. import parallel

    # the search's bar shows progress: its candidates' fits stay silent
    est = build_estimator(args, spec, ds.feature_names, skip=("cv", "verbose"))
    space = search_space(spec, est, method=args.method, grid_size=args.grid_size or 5,
                         ranges=args.range)
    cv = args.cv or 5
    n_cand = int(np.prod([len(v) for v in space.values()])) if args.method == "grid" \
        else args.n_iter
    with common.backend(args) as be, common.progress(
            args, f"{args.method} search ({cv}-fold)", n_cand, unit="candidate") as bar:
        s = parallel.search(est, space, X, y, method=args.method, n_iter=args.n_iter, cv=cv,
                            random_state=args.seed, n_jobs=be.n_jobs, progress=bar)
    cvr = s.cv_results_
    order = np.argsort(cvr["rank_test_score"], kind="stable")
    keys = sorted(space)
    bits["table"] = (["rank", *keys, "mean CV score", "std"],
                     [[int(cvr["rank_test_score"][i]),
                       *[float(cvr[f"param_{k}"][i]) for k in keys],
                       float(cvr["mean_test_score"][i]), float(cvr["std_test_score"][i])]
                      for i in order[:25]])
    if len(keys) == 1:
        k = keys[0]
        vals = np.array([float(v) for v in cvr[f"param_{k}"]])
        o = np.argsort(vals)
        bits["curves"] = (vals[o], {f"mean {cv}-fold score": cvr["mean_test_score"][o]})
        bits["curve_label"] = k
        bits["chosen"] = float(s.best_params_[k])
    return s.best_estimator_, {
        "chosen": {k: float(v) for k, v in s.best_params_.items()},
        "criterion": f"mean {cv}-fold CV score ({'accuracy' if spec.task == 'classification' else 'R2'}, higher is better)",  # noqa: E501
        "criterion_value": float(s.best_score_),
        "n_candidates": int(len(cvr["params"])),
        "cv_mean_scores": [float(v) for v in cvr["mean_test_score"]],
        "candidates": [{k: float(v) for k, v in c.items()} for c in cvr["params"]],
        "backend": be.description,
    }


def _one_d(args, spec, ds, X, y, bits):
    """Exact LOO or k-fold over a 1-D log grid of the model's first main parameter."""
    import numpy as np
    from sklearn.base import clone

    from .. import parallel

    est = build_estimator(args, spec, ds.feature_names, skip=("cv",))
    space = search_space(spec, est, method="grid", grid_size=args.grid_size or 7,
                         ranges=args.range)
    if args.range:
        name = args.range[0][0]
    else:
        name = next(iter(space))
    grid = np.asarray(space[name], dtype=float)
    clf = spec.task == "classification"
    n = len(y)
    cv = args.cv or 5
    values = []
    total = len(grid) * (n if args.method == "loo" else cv)
    what = "leave-one-out refits" if args.method == "loo" else f"{cv}-fold refits"
    with common.backend(args) as be, common.progress(
            args, f"{what} over {len(grid)} {name} values", total, unit="fit") as bar:
        for v in grid:
            e = clone(est).set_params(**{name: float(v)})
            if args.method == "loo":
                pred = parallel.loo_predictions(e, X, y, n_jobs=be.n_jobs, progress=bar)
                err = float(np.mean(pred != y)) if clf else float(np.mean((pred - y) ** 2))
            else:
                scoring = "accuracy" if clf else "neg_mean_squared_error"
                sc = parallel.cross_val_scores(e, X, y, cv=cv, scoring=scoring,
                                               random_state=args.seed, n_jobs=be.n_jobs,
                                               progress=bar)
                err = float(1 - sc.mean()) if clf else float(-sc.mean())
            values.append(err)
    values = np.array(values)
    k = int(np.argmin(values))
    best = clone(est).set_params(**{name: float(grid[k])}).fit(X, y)
    what = "misclassification rate" if clf else "mean squared error"
    label = "exact leave-one-out" if args.method == "loo" else f"{cv}-fold"
    bits["curves"] = (grid, {f"{label} {what}": values})
    bits["curve_label"] = name
    bits["chosen"] = float(grid[k])
    return best, {
        "chosen": {name: float(grid[k])},
        "criterion": f"{label} {what} (lower is better; first minimum on the grid)",
        "criterion_value": float(values[k]),
        "grid": {name: grid.tolist()},
        "criterion_values": values.tolist(),
        "backend": be.description,
    }


def _selective(args, spec, ds, X, y, bits):
    """The selective models' own model choice: their ``...CV`` estimator with
    ``criterion=`` diffloo | alo | loo | kfold (B. F. Angulo Yauri, "A method of
    differential cross-validation for choosing the complexity level of generalized linear
    dependence models", master's thesis, MIPT, 2020)."""
    import numpy as np

    from ..estimators.selective import SelectiveLogisticRegressionCV, SelectiveRegressionCV

    cls = {"selective": SelectiveRegressionCV,
           "selective-logistic": SelectiveLogisticRegressionCV}[spec.name]
    name = cls.__name__
    valid = cls().get_params(deep=False)
    params = {"criterion": args.method}
    for dest, pname in (("cv", "n_splits"), ("max_iter", "max_iter"), ("tol", "tol"),
                        ("ridge", "ridge"), ("grid_size", "n_mu"),
                        ("selection_rule", "selection_rule")):
        v = getattr(args, dest, None)
        if v is not None and pname in valid:
            params[pname] = v
    if "random_state" in valid:
        params["random_state"] = args.seed
    if "verbose" in valid:  # the mu path's progress (bisvm.progress)
        params["verbose"] = int(common.progress_mode(args) is not None)
    for pname, v in args.param:
        if pname not in valid:
            raise ValueError(f"--param {pname}: {name} has no parameter {pname!r}")
        params[pname] = v
    use_jobs = "n_jobs" in valid
    with common.backend(args) as be:
        if use_jobs:
            params["n_jobs"] = be.n_jobs
        est = cls(**params).fit(X, y)
    if "verbose" in valid:
        est.set_params(verbose=0)  # display only, not saved with the model
    chosen = {}
    for pname in ("selectivity", "l2_penalty", "alpha", "C"):
        v = getattr(est, pname + "_", None)
        if v is not None and np.ndim(v) == 0:
            chosen[pname] = float(v)
    grid = np.asarray(est.selectivity_path_, float)
    curve = np.asarray(est.criterion_path_, float)
    crit_names = {"diffloo": "DiffLOO as printed in Angulo Yauri's thesis (its minimum "
                             "is often the empty model)", "alo": "approximate leave-one-out loss",
                  "loo": "exact leave-one-out loss (refits)",
                  "kfold": f"{params.get('n_splits', 5)}-fold cross-validated loss"}
    # the criterion at the chosen selectivity: the path point nearest to it
    k = int(np.argmin(np.abs(grid - est.selectivity_)))
    bits["curves"] = (grid, {args.method: curve})
    bits["curve_label"] = "selectivity"
    bits["chosen"] = chosen.get("selectivity")
    res = {"chosen": chosen,
           "criterion": f"{crit_names.get(args.method, args.method)} along the selectivity "
                        f"path of {name} (lower is better; ridge={est.ridge})",
           "criterion_value": float(curve[k]),
           "grid": {"selectivity": grid.tolist()},
           "criterion_values": curve.tolist(),
           "n_active": int(np.asarray(est.n_active_path_)[k])}
    res["backend"] = be.description
    return est, res


def _write_report(args, result, bits, est):
    import numpy as np

    from .. import plots
    from ..report import tuning_report

    summary = {"method": result["method"], "model": result["model"],
               "data": result["source"], "training rows": result["n_train"],
               "test rows": result["n_test"]}
    for k, v in result["chosen"].items():
        summary[f"chosen {k}"] = v
    summary["criterion"] = result["criterion"]
    cv = result["criterion_value"]
    summary["criterion value"] = cv if cv is not None and np.ndim(cv) == 0 else str(cv)
    if result["test_score"] is not None:
        summary[f"test {result['score_name']}"] = result["test_score"]
    if "test_rmse" in result:
        summary["test RMSE (target units)"] = result["test_rmse"]
    if "backend" in result:
        summary["ran on"] = result["backend"]
    figs = []
    b = bits.get("bilevel")
    if b is not None:
        names = result.get("selected_features", [])
        imp = np.asarray(b.feature_importances_)
        allnames = bits["names"]
        figs.append((plots.plot_importance(allnames, imp), "Learned importance."))
        if isinstance(b.history_, tuple):
            figs.append((plots.plot_convergence(b.history_, title="BiSVM outer iterations"),
                         "Criterion and hypergradient norm per outer iteration."))
        summary["selected features"] = ", ".join(names[:15])
    auto = bits.get("auto")
    if auto is not None:
        from ..report import kernel_figures

        a_est, a_X, a_y = auto
        n = KERNEL_SURFACE_POINTS
        with common.progress(args, "report: cross-validated (C, gamma) surface", n * n,
                             unit="point") as bar:
            figs += kernel_figures(a_est, bits["names"], X=a_X, y=a_y, n_points=n,
                                   cv=args.cv or 5, progress=bar)
    rep = tuning_report(summary, search_table=bits.get("table"), curves=bits.get("curves"),
                        chosen=bits.get("chosen"), curve_label=bits.get("curve_label", ""),
                        notes=result["notes"] + result["warnings"], extra_figures=figs,
                        title=f"bisvm tune --method {result['method']}")
    rep.write(args.report)


def _print(r):
    import numpy as np

    p = print
    p(f"bisvm tune --method {r['method']}: {r['estimator']} ({r['model']}) on {r['source']}, "
      f"{r['n_train']} training rows")
    # warnings about the choice itself first, then the solvers' convergence notes
    common.print_notes(r["notes"], sorted(
        r["warnings"], key=lambda w: w.startswith("ConvergenceWarning"))[:5])
    if r.get("backend", "serial") != "serial":  # say so only when it is not this process
        p(f"ran on {r['backend']}")
    p("chosen:")
    width = max(len(str(k)) for k in r["chosen"]) if r["chosen"] else 4
    for k, v in r["chosen"].items():
        p(f"  {k:<{width}s}  {v:.6g}")
    cv = r["criterion_value"]
    cvs = "n/a" if cv is None else f"{cv:.6g}" if np.ndim(cv) == 0 else str(cv)
    p(f"criterion  {cvs}  ({r['criterion']})")
    if "n_active" in r:
        p(f"nonzero coefficients at the chosen value: {r['n_active']} of {r['n_features']}")
    common.print_selected(r)
    from .kernel_tune import print_widths

    print_widths(r)
    if r["test_score"] is not None:
        p(f"test {r['score_name']}  {r['test_score']:.4f}  ({r['n_test']} held-out rows)")
    if "test_rmse" in r:
        p(f"test RMSE  {r['test_rmse']:.6g}  (target units)")
    p(f"{r['seconds']:.2f} s")
    for key in ("saved", "report"):
        if key in r:
            p(f"wrote {r[key]}")
