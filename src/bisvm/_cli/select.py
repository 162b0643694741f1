"""``bisvm select``: the main job.

Learn the sparsity weights of a smoothed elastic-net SVM by bilevel optimisation
(seed-000), report the selected features with their importance, the validation criterion,
the accuracy on a test split the tuning never saw, and the thesis's 149-point grid search
beside it, timed fairly: a warm-up on a small subset pays the one-time costs (first calls,
compiled kernels) before either is timed, and that cost is reported on its own
(``startup_seconds``).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

from . import common

# JSON records list a value per feature (coefficients, penalty weights, scores) for every
# feature up to this many features, for the selected ones beyond (an svmlight file can
# have millions of features).
LIST_ALL_FEATURES_MAX = 1000
# Plots draw at most this many features (importance bars, regularisation paths): a
# figure of thousands of bars or lines shows nothing.
PLOT_FEATURES_MAX = 40
# The text report lists at most this many selected features (--json lists them all).
PRINT_FEATURES_MAX = 40

CRITERION_NAMES = {
    "holdout": "halved MSE of raw SVM outputs on the validation split (thesis J)",
    "kfold": "halved MSE of raw SVM outputs, mean over folds (thesis J)",
    "logistic": "mean logistic loss of validation margins, mean over folds",
    "holdout_logistic": "mean logistic loss of validation margins on the validation split",
    "margin": "halved mean squared hinge of validation margins, mean over folds",
    "holdout_margin": "halved mean squared hinge of validation margins on the split",
    "scaled_margin": "halved mean squared hinge of best-rescaled validation margins, mean "
                     "over folds",
    "holdout_scaled_margin": "halved mean squared hinge of best-rescaled validation margins "
                             "on the split",
}

_SOLVER_NAMES = {
    "newton": "dense Newton",
    "woodbury": "sample-space Woodbury Newton",
    "cg": "truncated Newton-CG",
    "lbfgs": "L-BFGS",
}

DESCRIPTION = """\
Sparse SVM feature selection by bilevel optimisation (BiSVM L-BFGS): the L1 weights of a
smoothed elastic-net SVM are learned from a validation criterion. Runs on the bundled
Breast Cancer data by default; reports the selected features, their importance, the
validation criterion, the accuracy on a test split never used for tuning, and the
149-point grid-search baseline with the ratios of lower-level solves and of time. Both are
timed after one shared warm-up (reported as start-up).

examples:
  bisvm select
  bisvm select --data cancer.csv --target target --json
  bisvm select --model scalar --criterion holdout
  bisvm select --model group --groups mean=0-9,se=10-19,worst=20-29 --out plots/
"""


def add_parser(sub):
    s = sub.add_parser(
        "select", help="learn per-feature sparsity weights by bilevel optimisation (main job)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = s.add_argument_group("data")
    common.add_selection_data_options(
        src, "breast-cancer", "bundled data set when --data is not given (default: %(default)s)")
    common.add_sparse_option(src, "when the file is large and sparse")
    m = s.add_argument_group("model")
    m.add_argument("--model", choices=["scalar", "vector", "group"], default="vector",
                   help="one weight, one per feature, or one per group (default %(default)s)")
    m.add_argument("--groups", metavar="SPEC",
                   help="feature groups: index ranges 'mean=0-9,se=10-19,worst=20-29' or "
                   "name prefixes 'mean,error,worst'")
    m.add_argument("--criterion", default="scaled_margin", choices=sorted(CRITERION_NAMES),
                   help="upper-level criterion (default %(default)s, as BilevelSVC; "
                   "'holdout' is the thesis's J)")
    m.add_argument("--cv", type=common.positive_int("--cv", 2), default=5,
                   help="folds of k-fold criteria (default %(default)s)")
    m.add_argument("--validation-fraction", type=common.fraction("--validation-fraction"),
                   default=0.2, help="validation share of the holdout criteria "
                   "(default %(default)s, the thesis's)")
    m.add_argument("--l2-penalty", type=common.positive_float("--l2-penalty"), default=0.01,
                   help="the thesis's alpha (default %(default)s)")
    m.add_argument("--hinge-smoothing", type=common.positive_float("--hinge-smoothing"),
                   default=0.25, help="the thesis's mu (default %(default)s)")
    m.add_argument("--l1-smoothing", type=common.positive_float("--l1-smoothing"),
                   default=0.01, help="the thesis's gamma (default %(default)s)")
    m.add_argument("--free-intercept", action="store_true",
                   help="do not penalise the intercept (the thesis and the default do)")
    m.add_argument("--learn-l2", action="store_true",
                   help="learn the ridge weight alpha too (the thesis fixes it)")
    m.add_argument("--max-iter", type=common.positive_int("--max-iter"), default=100,
                   help="outer iterations cap (default %(default)s)")
    o = common.add_output_args(s)
    o.add_argument("--no-grid", action="store_true", help="skip the grid-search baseline")
    o.add_argument("--out", metavar="DIR", help="write PNG plots to DIR")
    s.set_defaults(func=run)
    return s


def run(args):
    result = run_select(args)
    common.emit(args, result, print_select)
    return 0


def load_binary(args):
    """Features, ±1-able target, names, groups and notes from --data or --dataset.

    An svmlight file's X stays a CSR matrix under ``--sparse auto|always`` when
    :class:`~bisvm.estimators.sparse.BilevelSVC` takes sparse input (its scikit-learn
    tags); names are then ``x0 ... x{d-1}``, made on demand.
    """
    import numpy as np

    from .. import data

    notes = []
    if args.data:
        ds = data.read_table(args.data, target=args.target, drop_missing=args.drop_missing,
                             encoding=getattr(args, "encoding", None),
                             sparse=common.sparse_for_model(args, "bilevel"))
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


def warm_up(est, X, y, *, grid=True, seed=0):
    """Pay the one-time costs of a fit and of the grid on a small subset of the rows.

    The first call of each code path loads compiled kernels, fills caches and sets up
    scikit-learn's splitters; timed on the real problem it would be charged to whichever
    method runs first. A copy of ``est`` (same model and criterion, the lower-level
    solver that the full data gets, two outer iterations) is fitted on a stratified
    subset of at most 30 rows per class, and, with ``grid``, scored at two grid points.
    Returns the seconds spent; a subset the model cannot fit is skipped (the timed runs
    then include the one-time costs, as before).
    """
    import numpy as np
    from sklearn.base import clone

    from ..selection.bilevel import resolve_solver
    from ..selection.lower_level import add_bias_column

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    rows = np.sort(np.concatenate([
        rng.permutation(np.flatnonzero(y == c))[:30] for c in np.unique(y)]))
    try:
        solver = resolve_solver(est.solver, add_bias_column(X[:1]))
        w = clone(est).set_params(max_iter=2, verbose=0, solver=solver)
        w.fit(X[rows], y[rows])
        if grid:
            w.scalar_grid(X[rows], y[rows], grid=(0.01, 0.1))
    except (ValueError, ArithmeticError, np.linalg.LinAlgError):
        pass  # e.g. fewer rows of a class than folds: nothing to warm
    return time.perf_counter() - t0


def run_select(args, keep=None):
    """The select run: its result record; with ``keep`` (a dict) also the fitted model,
    the grid and the scaled splits, for ``bisvm report``.

    A sparse X (svmlight) stays sparse: the split indexes rows, the scaler only divides
    (``standard`` becomes standard without centering, said in the notes), and test
    outputs come from the estimator's ``decision_function``.
    """
    t_start = time.perf_counter()
    import numpy as np
    import scipy.sparse as sp

    from .. import data
    from ..estimators.sparse import BilevelSVC
    from ..selection.bilevel import THESIS_GRID

    import_seconds = time.perf_counter() - t_start
    X, bt, names, groups, notes, ds = load_binary(args)
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
    mode = common.progress_mode(args)
    est = BilevelSVC(
        model=args.model, groups=groups if args.model == "group" else None,
        l2_penalty=args.l2_penalty, hinge_smoothing=args.hinge_smoothing,
        l1_smoothing=args.l1_smoothing, criterion=args.criterion, cv=args.cv,
        validation_fraction=args.validation_fraction,
        penalize_intercept=not args.free_intercept, random_state=args.seed,
        max_iter=args.max_iter, learn_l2_penalty=args.learn_l2, verbose=int(mode is not None),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with common.progress(args, "start-up (first calls, compiled kernels)", 1,
                             unit="step") as bar:
            warm_seconds = warm_up(est, Xtr_s, ytr, grid=not args.no_grid, seed=args.seed)
            bar(1)
        t0 = time.perf_counter()
        est.fit(Xtr_s, ytr)
        fit_seconds = time.perf_counter() - t0
        grid = None
        if not args.no_grid:
            with common.progress(args, f"grid search ({len(THESIS_GRID)} β)",
                                 len(THESIS_GRID), unit="β") as bar:
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
    group_names = set(groups or ()) if args.model == "group" else set()
    result = {
        "source": ds.source,
        "input": _input_record(X, Xtr_s),
        "scaling": scaler.effective_method_,
        "n_train": int(len(ytr)),
        "n_test": int(len(yte)),
        "model": args.model,
        "criterion": args.criterion,
        "positive_class": common.to_py(bt.positive),
        "negative_class": common.to_py(bt.negative),
        "validation_objective": float(est.validation_score_),
        "validation_objective_name": CRITERION_NAMES[args.criterion],
        "test_accuracy": test_acc,
        "test_halved_mse": float(np.mean((out_te - yte) ** 2) / 2.0),
        "penalty_weights": _listed_by_name(est.penalty_weight_names_, est.penalty_weights_,
                                           d, order, names, group_names),
        "selected_features": selected,
        "n_selected": len(selected),
        "n_features": d,
        "importance": {names[j]: float(imp[j]) for j in order},
        "thesis_scores": _listed_by_name(est.importance_names_, est.importance_, d, order,
                                         names, group_names),
        "features_listed": "all" if d <= LIST_ALL_FEATURES_MAX else "selected",
        "coefficients": {names[j]: float(est.coef_[0][j]) for j in listed},
        "intercept": float(est.intercept_[0]),
        "l2_penalty": float(est.l2_penalty_),
        "iterations": int(est.n_iter_),
        "lower_level_solves": int(est.lower_level_solves_),
        "lower_level_iterations": int(est.lower_level_iterations_),
        "lower_level_solver": str(est.solver_),
        "seconds": fit_seconds,
        "startup_seconds": import_seconds + warm_seconds,
        "notes": list(notes),
    }
    if grid is not None:
        result.update({
            "grid_validation_objective": grid.best_value,
            "grid_beta": grid.best_beta,
            "grid_size": len(THESIS_GRID),
            "grid_lower_level_solves": int(grid.lower_solves),
            "grid_lower_level_iterations": int(grid.lower_iterations),
            "grid_seconds": grid.seconds,
            "solves_ratio": grid.lower_solves / max(1, est.lower_level_solves_),
            "time_ratio": grid.seconds / fit_seconds if fit_seconds > 0 else None,
        })
    if args.out:
        with common.progress(args, "plots", 1 if grid is None else 3, unit="figure") as bar:
            result["plots"] = _select_plots(args, est, grid, names, Xtr_s, ytr,
                                            result["notes"], bar)
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


def _listed_by_name(keys, values, d, order, names, group_names):
    """``{name: value}`` of an estimator record keyed by its names (``x{j}`` for feature
    ``j``, group names, ``intercept``), with the user's feature names; above
    :data:`LIST_ALL_FEATURES_MAX` features only the selected features (indices ``order``)
    and the entries that are not features."""
    import numpy as np

    values = np.ravel(values)
    pairs = list(zip(keys, values))
    if d > LIST_ALL_FEATURES_MAX and len(keys) > LIST_ALL_FEATURES_MAX:
        keep = {f"x{j}" for j in order}
        pairs = [(k, v) for k, v in pairs
                 if k in keep or not (str(k)[:1] == "x" and str(k)[1:].isdigit())]
    return {common.feature_key(k, names, group_names): float(v) for k, v in pairs}


def _select_plots(args, est, grid, names, X, y, notes, bar):
    """The PNG figures of a select run. None needs X dense: the curves come from the grid
    and the tree reference (ExtraTrees) takes CSR rows; with many features the figures
    keep the :data:`PLOT_FEATURES_MAX` largest (said in ``notes``)."""
    import dataclasses

    import numpy as np
    from sklearn.ensemble import ExtraTreesClassifier

    from .. import plots

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    d = len(names)
    if grid is not None:
        traj = est.history_ if args.model == "scalar" else None
        final = None if args.model == "scalar" else float(est.validation_score_)
        ax = plots.plot_validation_curve(grid, traj, final=final,
                                         criterion=CRITERION_NAMES[args.criterion])
        written.append(str(plots.save(ax, out / "validation_curve.png")))
        bar(1)
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
        bar(1)
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
    bar(1)
    return written


def print_select(r):
    """The text report of a select run (stdout)."""
    p = print
    sparse = r["input"]["sparse"]
    p(f"bisvm select: {r['model']} model on {r['source']} "
      f"({r['n_train']} training rows, {r['n_test']} test rows"
      + (f", sparse X: {r['input']['stored_values']} stored values, "
         f"{r['input']['density']:.2%} dense)" if sparse else ")"))
    for note in r["notes"]:
        p(f"  note: {note}")
    p(f"selected {r['n_selected']} of {r['n_features']} features (coef > 0 favours class "
      f"{r['positive_class']!r}, < 0 class {r['negative_class']!r}):")
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
        p(f"grid search ({r['grid_size']} β)   best {r['grid_validation_objective']:.4f} at "
          f"β={r['grid_beta']:.2f}, {r['grid_lower_level_solves']} lower-level solves "
          f"({r['grid_lower_level_iterations']} Newton steps), {r['grid_seconds']:.2f} s")
        time_ratio = "" if r["time_ratio"] is None else f", {r['time_ratio']:.1f}x less time"
        p(f"BiSVM against grid    {r['solves_ratio']:.1f}x fewer lower-level solves"
          f"{time_ratio}")
    p(f"start-up              {r['startup_seconds']:.2f} s (imports, first calls; "
      "before either was timed)")
    for path in r.get("plots", []):
        p(f"wrote {path}")


def report_options(args):
    """The select options of a ``bisvm report`` selection run (its own argument names)."""
    return argparse.Namespace(
        data=args.data, target=args.target, dataset=args.dataset or "breast-cancer",
        positive=args.positive, drop_missing=args.drop_missing, encoding=args.encoding,
        test_size=args.test_size,
        scaling=args.scaling, seed=args.seed, model=args.bilevel_model, groups=args.groups,
        criterion=args.criterion, cv=args.cv, validation_fraction=0.2,
        l2_penalty=args.l2_penalty, hinge_smoothing=args.hinge_smoothing,
        l1_smoothing=args.l1_smoothing, free_intercept=args.free_intercept, learn_l2=False,
        max_iter=args.max_iter, no_grid=args.no_grid, out=None, json=args.json,
        quiet=args.quiet, verbose=args.verbose)

