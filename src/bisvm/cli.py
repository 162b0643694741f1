"""The ``bisvm`` command line. It only calls the public API.

``bisvm select`` is the main job: learn the sparsity weights of a smoothed elastic-net
SVM by bilevel optimisation (seed-000), report the selected features with their
importance, the validation criterion, the accuracy on a test split the tuning never saw,
and the grid-search baseline. ``datasets`` lists the bundled data; ``fit``, ``predict``,
``tune`` and ``report`` live in :mod:`bisvm._cli`. Every subcommand has ``--json`` (one
JSON object on stdout); bad input ends with one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ._cli.common import (
    EXIT_BAD_INPUT,
    Progress,
    add_selection_data_options,
    add_sparse_option,
    sparse_for_model,
)
from ._cli.common import positive_float as _positive_float

# JSON records list a value per feature (coefficients, penalty weights, scores) for every
# feature up to this many features, for the selected ones beyond (an svmlight file can
# have millions of features).
LIST_ALL_FEATURES_MAX = 1000


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(EXIT_BAD_INPUT, f"bisvm: error: {message}\n")


def _load(args):
    """Features, ±1-able target, names, groups and notes from --data or --dataset.

    An svmlight file's X stays a CSR matrix under ``--sparse auto|always`` when
    :class:`~bisvm.estimators.sparse.BilevelSVC` takes sparse input (its scikit-learn
    tags); names are then ``x0 ... x{d-1}``, made on demand.
    """
    from . import data

    notes = []
    if args.data:
        ds = data.read_table(args.data, target=args.target, drop_missing=args.drop_missing,
                             encoding=getattr(args, "encoding", None),
                             sparse=sparse_for_model(args, "bilevel"))
    else:
        ds = data.load_dataset(args.dataset)
    X, y = ds.X, ds.y
    notes.extend(ds.notes)
    labels = np.unique(y)
    if args.positive is not None:
        pos = _match_label(args.positive, labels)
        bt = data.binary_target(y, positive=pos, one_vs_rest=True)
        notes.append(f"target: {pos!r} against the rest")
    elif labels.size > 2 and not args.data:
        # the documents' binary tasks on the bundled multiclass sets
        if ds.source.endswith("iris") or args.dataset == "iris":
            keep = np.isin(y, labels[:2])
            X, y = X[keep], y[keep]
            notes.append(f"target: {labels[0]!r} vs {labels[1]!r} (the thesis's Iris task)")
            bt = data.binary_target(y)
        else:
            bt = data.binary_target(y, positive=labels[0], one_vs_rest=True)
            notes.append(f"target: {labels[0]!r} against the rest")
    elif labels.size > 2:
        raise ValueError(
            f"the target has {labels.size} classes; bisvm select needs two: pass "
            "--positive LABEL for one class against the rest"
        )
    else:
        bt = data.binary_target(y)
    groups = ds.groups
    if args.groups:
        groups = data.parse_groups(args.groups, ds.feature_names)
    return X, bt, ds.feature_names, groups, notes, ds


def _match_label(text, labels):
    for lab in labels:
        if str(lab) == text:
            return lab
    raise ValueError(f"--positive {text!r} is not a label of the target; labels: "
                     f"{', '.join(map(str, labels[:10]))}")


def _cmd_select(args):
    result = _run_select(args)
    if args.json:
        print(json.dumps(result))
    else:
        _print_select(result)
    return 0


def _run_select(args, keep=None):
    """The select run: its result record; with ``keep`` (a dict) also the fitted model,
    the grid and the scaled splits, for ``bisvm report``.

    A sparse X (svmlight) stays sparse: the split indexes rows, the scaler only divides
    (``standard`` becomes standard without centering, said in the notes), and test
    outputs come from the estimator's ``decision_function``.
    """
    import scipy.sparse as sp

    from . import data
    from .estimators.sparse import BilevelSVC
    from .selection.bilevel import THESIS_GRID

    t_start = time.perf_counter()
    X, bt, names, groups, notes, ds = _load(args)
    if args.model == "group" and not groups:
        raise ValueError("--model group needs --groups (e.g. mean=0-9,se=10-19,worst=20-29)")
    y = bt.y
    Xtr, Xte, ytr, yte = data.train_test_split_seeded(
        X, y, test_size=args.test_size, random_state=args.seed
    )
    scaler = data.Scaler(args.scaling).fit(Xtr)
    Xtr_s, Xte_s = scaler.transform(Xtr), scaler.transform(Xte)
    if scaler.effective_method_ != args.scaling:
        notes.append(f"scaling: {scaler.describe()}")
    est = BilevelSVC(
        model=args.model, groups=groups if args.model == "group" else None,
        l2_penalty=args.l2_penalty, hinge_smoothing=args.hinge_smoothing,
        l1_smoothing=args.l1_smoothing, criterion=args.criterion, cv=args.cv,
        validation_fraction=args.validation_fraction,
        penalize_intercept=not args.free_intercept, random_state=args.seed,
        max_iter=args.max_iter, learn_l2_penalty=args.learn_l2,
        verbose=int(getattr(args, "verbose", False)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(Xtr_s, ytr)
        fit_seconds = time.perf_counter() - t0
        grid = None
        if not args.no_grid:
            with Progress(args, len(THESIS_GRID), "grid search") as bar:
                grid = est.scalar_grid(Xtr_s, ytr, progress=bar)
    # raw SVM outputs x.w + b of the test rows; the thesis's halved MSE of them against
    # the +-1 labels, seed-000 (1.2) (selection.criteria.halved_mse on [X, 1])
    out_te = np.asarray(est.decision_function(Xte_s), dtype=np.float64)
    test_acc = float(est.score(Xte_s, yte))
    imp = est.feature_importances_
    order = [j for j in np.argsort(-imp) if imp[j] > 0]
    selected = [names[j] for j in order]
    d = len(names)
    listed = range(d) if d <= LIST_ALL_FEATURES_MAX else order
    result = {
        "source": ds.source,
        "input": _input_record(X, Xtr_s),
        "scaling": scaler.effective_method_,
        "n_train": int(len(ytr)),
        "n_test": int(len(yte)),
        "model": args.model,
        "criterion": args.criterion,
        "positive_class": _py(bt.positive),
        "validation_objective": float(est.validation_score_),
        "validation_objective_name": _CRIT_NAMES[args.criterion],
        "test_accuracy": test_acc,
        "test_halved_mse": float(np.mean((out_te - yte) ** 2) / 2.0),
        "penalty_weights": _listed_by_name(est.penalty_weight_names_, est.penalty_weights_,
                                           d, order),
        "selected_features": selected,
        "n_selected": len(selected),
        "n_features": d,
        "importance": {names[j]: float(imp[j]) for j in order},
        "thesis_scores": _listed_by_name(est.importance_names_, est.importance_, d, order),
        "features_listed": "all" if d <= LIST_ALL_FEATURES_MAX else "selected",
        "coefficients": {names[j]: float(est.coef_[0][j]) for j in listed},
        "intercept": float(est.intercept_[0]),
        "l2_penalty": float(est.l2_penalty_),
        "iterations": int(est.n_iter_),
        "lower_level_solves": int(est.lower_level_solves_),
        "lower_level_iterations": int(est.lower_level_iterations_),
        "lower_level_solver": str(est.solver_),
        "seconds": fit_seconds,
        "notes": list(notes),
    }
    if grid is not None:
        result.update({
            "grid_validation_objective": grid.best_value,
            "grid_beta": grid.best_beta,
            "grid_lower_level_solves": int(grid.lower_solves),
            "grid_lower_level_iterations": int(grid.lower_iterations),
            "grid_seconds": grid.seconds,
        })
    if args.out:
        result["plots"] = _select_plots(args, est, grid, names, Xtr_s, ytr, result["notes"])
    result["total_seconds"] = time.perf_counter() - t_start
    if keep is not None:
        keep.update(est=est, grid=grid, names=names, X_train=Xtr_s, y_train=ytr,
                    X_test=Xte_s, y_test=yte, binary_target=bt,
                    sparse=bool(sp.issparse(Xtr_s)))
    return result


def _input_record(X, X_model):
    """What was read and what the estimator was given (its type: a sparse X must reach
    the estimator as a sparse matrix)."""
    import scipy.sparse as sp

    n, d = X.shape
    rec = {"sparse": bool(sp.issparse(X)), "estimator_input": type(X_model).__name__}
    if sp.issparse(X):
        rec.update(format=X.format, stored_values=int(X.nnz), density=X.nnz / (n * d))
    return rec


def _listed_by_name(keys, values, d, order):
    """``{name: value}`` of an estimator record keyed by its names (``x{j}`` for feature
    ``j``, group names, ``intercept``); above :data:`LIST_ALL_FEATURES_MAX` features only
    the selected features (indices ``order``) and the entries that are not features."""
    values = np.ravel(values)
    if d <= LIST_ALL_FEATURES_MAX or len(keys) <= LIST_ALL_FEATURES_MAX:
        return {str(k): float(v) for k, v in zip(keys, values)}
    keep = {f"x{j}" for j in order}
    return {str(k): float(v) for k, v in zip(keys, values)
            if k in keep or not (str(k)[:1] == "x" and str(k)[1:].isdigit())}


_CRIT_NAMES = {
    "holdout": "halved MSE of raw SVM outputs on the validation split (thesis J)",
    "kfold": "halved MSE of raw SVM outputs, mean over folds (thesis J)",
    "logistic": "mean logistic loss of validation margins, mean over folds",
    "holdout_logistic": "mean logistic loss of validation margins on the validation split",
    "margin": "halved mean squared hinge of validation margins, mean over folds",
    "holdout_margin": "halved mean squared hinge of validation margins on the split",
}


_SOLVER_NAMES = {
    "newton": "dense Newton",
    "woodbury": "sample-space Woodbury Newton",
    "cg": "truncated Newton-CG",
    "lbfgs": "L-BFGS",
}


def _py(v):
    return v.item() if hasattr(v, "item") else v


# Plots draw at most this many features (importance bars, regularisation paths): a
# figure of thousands of bars or lines shows nothing.
PLOT_FEATURES_MAX = 40


def _select_plots(args, est, grid, names, X, y, notes):
    """The PNG figures of a select run. None needs X dense: the curves come from the grid
    and the tree reference (ExtraTrees) takes CSR rows; with many features the figures
    keep the :data:`PLOT_FEATURES_MAX` largest (said in ``notes``)."""
    import dataclasses

    from sklearn.ensemble import ExtraTreesClassifier

    from . import plots

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    d = len(names)
    if grid is not None:
        traj = est.history_ if args.model == "scalar" else None
        final = None if args.model == "scalar" else float(est.validation_score_)
        ax = plots.plot_validation_curve(grid, traj, final=final,
                                         criterion=_CRIT_NAMES[args.criterion])
        written.append(str(plots.save(ax, out / "validation_curve.png")))
        beta = float(est.penalty_weights_[0]) if args.model == "scalar" else None
        path_grid, path_names = grid, names
        if d > PLOT_FEATURES_MAX:
            big = np.max(np.abs(grid.coefs[:, 0, :-1]), axis=0)
            cols = np.sort(np.argsort(-big, kind="stable")[:PLOT_FEATURES_MAX])
            path_grid = dataclasses.replace(
                grid, coefs=grid.coefs[:, :, np.r_[cols, d]])
            path_names = [names[j] for j in cols]
            notes.append(f"regularization_path.png: the {PLOT_FEATURES_MAX} of {d} features "
                         "with the largest coefficients on the path")
        ax = plots.plot_regularization_path(path_grid, path_names, beta=beta)
        written.append(str(plots.save(ax, out / "regularization_path.png")))
    trees = ExtraTreesClassifier(n_estimators=250, random_state=args.seed).fit(X, y)
    imp = np.asarray(est.feature_importances_)
    cols = np.arange(d)
    if d > PLOT_FEATURES_MAX:
        both = imp + trees.feature_importances_
        cols = np.argsort(-both, kind="stable")[:PLOT_FEATURES_MAX]
        notes.append(f"importance.png: the {PLOT_FEATURES_MAX} of {d} features with the "
                     "largest BiSVM plus tree importance")
    ax = plots.plot_importance([names[j] for j in cols], imp[cols],
                               trees.feature_importances_[cols])
    written.append(str(plots.save(ax, out / "importance.png")))
    return written


# The text report lists at most this many selected features (--json lists them all).
PRINT_FEATURES_MAX = 40


def _print_select(r):
    p = print
    sparse = r["input"]["sparse"]
    p(f"bisvm select: {r['model']} model on {r['source']} "
      f"({r['n_train']} training rows, {r['n_test']} test rows"
      + (f", sparse X: {r['input']['stored_values']} stored values, "
         f"{r['input']['density']:.2%} dense)" if sparse else ")"))
    for note in r["notes"]:
        p(f"  note: {note}")
    p(f"selected {r['n_selected']} of {r['n_features']} features:")
    shown = r["selected_features"][:PRINT_FEATURES_MAX]
    width = max([len(n) for n in shown] + [8])
    for name in shown:
        p(f"  {name:<{width}s}  importance {r['importance'][name]:.4f}  "
          f"coef {r['coefficients'][name]:+.4f}")
    if r["n_selected"] > len(shown):
        p(f"  ... and {r['n_selected'] - len(shown)} more (--json lists them all)")
    p(f"validation objective  {r['validation_objective']:.4f}  "
      f"({r['validation_objective_name']})")
    p(f"test accuracy         {r['test_accuracy']:.4f}  "
      f"(test halved MSE of raw outputs {r['test_halved_mse']:.4f})")
    p(f"BiSVM L-BFGS          {r['iterations']} iterations, {r['lower_level_solves']} "
      f"lower-level solves ({r['lower_level_iterations']} Newton steps, "
      f"{_SOLVER_NAMES.get(r['lower_level_solver'], r['lower_level_solver'])}), "
      f"{r['seconds']:.2f} s")
    if "grid_seconds" in r:
        p(f"grid search (149 β)   best {r['grid_validation_objective']:.4f} at β="
          f"{r['grid_beta']:.2f}, {r['grid_lower_level_solves']} lower-level solves "
          f"({r['grid_lower_level_iterations']} Newton steps), {r['grid_seconds']:.2f} s")
    for path in r.get("plots", []):
        p(f"wrote {path}")


def _cmd_datasets(args):
    from . import data

    items = data.list_datasets()
    rows = items.items() if isinstance(items, dict) else items
    if args.json:
        print(json.dumps(dict(rows)))
    else:
        for name, desc in rows:
            print(f"{name:15s} {desc}")
    return 0


def build_parser():
    """The argument parser of the ``bisvm`` program."""
    p = _Parser(prog="bisvm", description="Support vector machines that tune themselves.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser(
        "select",
        help="learn per-feature sparsity weights by bilevel optimisation (main job)",
        description="Sparse SVM feature selection by bilevel optimisation (BiSVM L-BFGS): "
        "the L1 weights of a smoothed elastic-net SVM are learned from a validation "
        "criterion. Runs on the bundled Breast Cancer data by default; reports the "
        "selected features, their importance, the validation criterion, the accuracy "
        "on a test split never used for tuning, and the 149-point grid-search baseline.",
    )
    src = s.add_argument_group("data")
    add_selection_data_options(
        src, "breast-cancer", "bundled data set when --data is not given (default: %(default)s)")
    add_sparse_option(src, "when the file is large and sparse")
    m = s.add_argument_group("model")
    m.add_argument("--model", choices=["scalar", "vector", "group"], default="vector",
                   help="one weight, one per feature, or one per group (default %(default)s)")
    m.add_argument("--groups", metavar="SPEC",
                   help="feature groups: index ranges 'mean=0-9,se=10-19,worst=20-29' or "
                   "name prefixes 'mean,error,worst'")
    m.add_argument("--criterion", default="margin", choices=sorted(_CRIT_NAMES),
                   help="upper-level criterion (default %(default)s; 'holdout' is the "
                   "thesis's J)")
    m.add_argument("--cv", type=int, default=5, help="folds of k-fold criteria")
    m.add_argument("--validation-fraction", type=float, default=0.2,
                   help="validation share of the holdout criteria (thesis: 0.2)")
    m.add_argument("--l2-penalty", type=_positive_float("--l2-penalty"), default=0.01,
                   help="the thesis's alpha (default %(default)s)")
    m.add_argument("--hinge-smoothing", type=_positive_float("--hinge-smoothing"),
                   default=0.25, help="the thesis's mu (default %(default)s)")
    m.add_argument("--l1-smoothing", type=_positive_float("--l1-smoothing"), default=0.01,
                   help="the thesis's gamma (default %(default)s)")
    m.add_argument("--free-intercept", action="store_true",
                   help="do not penalise the intercept (the thesis and the default do)")
    m.add_argument("--learn-l2", action="store_true",
                   help="learn the ridge weight alpha too (the thesis fixes it)")
    m.add_argument("--max-iter", type=int, default=100, help="outer iterations cap")
    m.add_argument("--verbose", action="store_true",
                   help="one line per BiSVM outer iteration on stderr (criterion, held-out "
                        "criterion, nonzero count, lower-level solves, seconds)")
    o = s.add_argument_group("output")
    o.add_argument("--no-grid", action="store_true", help="skip the grid-search baseline")
    o.add_argument("--out", metavar="DIR", help="write PNG plots to DIR")
    o.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=_cmd_select)

    d = sub.add_parser("datasets", help="list the bundled data sets",
                       description="List the bundled data sets (no download needed).")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=_cmd_datasets)

    from ._cli import fit, predict, report, tune

    for mod in (fit, predict, tune, report):
        mod.add_parser(sub)
    return p


def main(argv=None):
    """Entry point of the ``bisvm`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return args.func(args)
    except (ValueError, TypeError, FileNotFoundError, OSError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"bisvm: error: {msg}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("bisvm: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
