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
import dataclasses
import time
import warnings
from pathlib import Path

from ..names import CRITERIA
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

#: criterion name -> one-line description (the public list :data:`bisvm.names.CRITERIA`)
CRITERION_NAMES = {name: c.description for name, c in CRITERIA.items()}

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
    m.add_argument("--model", choices=["auto", "scalar", "vector", "group"], default="auto",
                   help="one weight, one per feature, or one per group; auto: group with "
                   "--groups, else vector when the features are at most a fold's rows, else "
                   "scalar (BilevelSVC's default; default %(default)s)")
    m.add_argument("--groups", metavar="SPEC",
                   help="feature groups: index ranges 'mean=0-9,se=10-19,worst=20-29' or "
                   "name prefixes 'mean,error,worst'")
    common.add_bilevel_options(m)
    m.add_argument("--validation-fraction", type=common.fraction("--validation-fraction"),
                   default=0.2, help="validation share of the holdout criteria "
                   "(default %(default)s, the thesis's)")
    m.add_argument("--learn-l2", action="store_true",
                   help="learn the ridge weight alpha too (the thesis fixes it)")
    o = common.add_output_args(s)
    o.add_argument("--no-grid", action="store_true", help="skip the grid-search baseline")
    o.add_argument("--out", metavar="DIR", help="write PNG plots to DIR")
    s.set_defaults(func=run)
    return s


@dataclasses.dataclass(frozen=True)
class SelectOptions:
    """The settings of one selection run, as ``bisvm select`` parses them.

    ``bisvm report`` builds one from its own options; :func:`run_select` reads nothing
    else. The field names are the ``select`` options' destinations (``--l2-penalty`` is
    ``l2_penalty``); the defaults are that command's.
    """

    data: str | None = None
    target: str | None = None
    dataset: str = "breast-cancer"
    positive: str | None = None
    drop_missing: bool = False
    encoding: str | None = None
    sparse: str = "auto"
    test_size: float = 0.25
    scaling: str = "standard"
    seed: int = 0
    model: str = "auto"
    groups: str | None = None
    criterion: str = "scaled_margin"
    cv: int = 5
    validation_fraction: float = 0.2
    l2_penalty: float = 0.01
    hinge_smoothing: float = 0.25
    l1_smoothing: float = 0.01
    free_intercept: bool = False
    learn_l2: bool = False
    max_iter: int = 100
    no_grid: bool = False
    out: str | None = None
    json: bool = False
    quiet: bool = False
    verbose: bool = False

    @classmethod
    def from_args(cls, args):
        """The options of a parsed ``bisvm select`` command line."""
        return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class SelectRun:
    """What :func:`run_select` returns: the JSON-able ``result`` record and, for
    ``bisvm report``, the fitted estimator, the grid (None under ``no_grid``), the
    feature names, the scaled splits and the ±1 target's labels."""

    result: dict
    estimator: object
    grid: object
    names: list
    X_train: object
    X_test: object
    y_train: object
    y_test: object
    binary_target: object


def run(args):
    sel = run_select(SelectOptions.from_args(args))
    common.emit(args, sel.result, print_select)
    return 0


def load_binary(opts):
    """Features, ±1-able target, names, groups and notes from --data or --dataset.

    An svmlight file's X stays a CSR matrix under ``--sparse auto|always`` when
    :class:`~bisvm.estimators.sparse.BilevelSVC` takes sparse input (its scikit-learn
    tags); names are then ``x0 ... x{d-1}``, made on demand.
    """
    import numpy as np

    from .. import data

    notes = []
    if opts.data:
        ds = data.read_table(opts.data, target=opts.target, drop_missing=opts.drop_missing,
                             encoding=opts.encoding,
                             sparse=common.sparse_for_model(opts, "bilevel"))
    else:
        ds = data.load_dataset(opts.dataset)
    X, y = ds.X, ds.y
    notes.extend(ds.notes)
    labels = np.unique(y)
    if opts.positive is not None:
        pos = _match_label(opts.positive, labels)
        bt = data.binary_target(y, positive=pos, one_vs_rest=True)
        notes.append(f"target: {pos!r} against the rest")
    elif labels.size > 2 and not opts.data:
        # the documents' binary tasks on the bundled multiclass sets
        if ds.source.endswith("iris") or opts.dataset == "iris":
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
    if opts.groups:
        groups = data.parse_groups(opts.groups, ds.feature_names)
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


def run_select(opts):
    """The select run of :class:`SelectOptions` ``opts``: a :class:`SelectRun`.

    A sparse X (svmlight) stays sparse: the split indexes rows, the scaler only divides
    (``standard`` becomes standard without centering, said in the notes), and test
    outputs come from the estimator's ``decision_function``.
    """
    t_start = time.perf_counter()
    from .. import data
    from ..estimators.sparse import BilevelSVC

    import_seconds = time.perf_counter() - t_start
    X, bt, names, groups, notes, ds = load_binary(opts)
    if opts.model == "group" and not groups:
        raise ValueError("--model group needs --groups (e.g. mean=0-9,se=10-19,worst=20-29)")
    Xtr, Xte, ytr, yte = data.train_test_split_seeded(
        X, bt.y, test_size=opts.test_size, random_state=opts.seed
    )
    scaler = data.Scaler(opts.scaling).fit(Xtr)
    Xtr_s, Xte_s = scaler.transform(Xtr), scaler.transform(Xte)
    if scaler.effective_method_ != opts.scaling:
        notes.append(f"scaling: {scaler.describe()}")
    est = BilevelSVC(
        # a bundled set's own groups are used by --model group only; auto takes --groups
        model=opts.model, groups=groups if opts.model == "group" or (
            opts.model == "auto" and opts.groups) else None,
        l2_penalty=opts.l2_penalty, hinge_smoothing=opts.hinge_smoothing,
        l1_smoothing=opts.l1_smoothing, criterion=opts.criterion, cv=opts.cv,
        validation_fraction=opts.validation_fraction,
        penalize_intercept=not opts.free_intercept, random_state=opts.seed,
        max_iter=opts.max_iter, learn_l2_penalty=opts.learn_l2,
        verbose=int(common.progress_mode(opts) is not None),
    )
    warm_seconds, fit_seconds, grid = _fit(opts, est, Xtr_s, ytr)
    result = {
        "source": ds.source,
        "input": _input_record(X, Xtr_s),
        "scaling": scaler.effective_method_,
        "n_train": int(len(ytr)),
        "n_test": int(len(yte)),
        "model": est.model_,
        "criterion": opts.criterion,
        "positive_class": common.to_py(bt.positive),
        "negative_class": common.to_py(bt.negative),
        **_fit_record(opts, est, Xte_s, yte, names, groups),
        "seconds": fit_seconds,
        "startup_seconds": import_seconds + warm_seconds,
        "notes": list(notes),
    }
    if grid is not None:
        result.update(_grid_record(est, grid, fit_seconds))
    if opts.out:
        with common.progress(opts, "plots", 1 if grid is None else 3, unit="figure") as bar:
            result["plots"] = _select_plots(opts, est, grid, names, Xtr_s, ytr,
                                            result["notes"], bar)
    result["total_seconds"] = time.perf_counter() - t_start
    return SelectRun(result=result, estimator=est, grid=grid, names=names, X_train=Xtr_s,
                     X_test=Xte_s, y_train=ytr, y_test=yte, binary_target=bt)


def _fit(opts, est, X, y):
    """Warm up, fit ``est`` and run the grid (unless ``no_grid``), each timed on its own:
    ``(warm-up seconds, fit seconds, grid or None)``. Warnings are silenced: the record
    reports what the run found."""
    from ..selection.bilevel import THESIS_GRID

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with common.progress(opts, "start-up (first calls, compiled kernels)", 1,
                             unit="step") as bar:
            warm_seconds = warm_up(est, X, y, grid=not opts.no_grid, seed=opts.seed)
            bar(1)
        t0 = time.perf_counter()
        est.fit(X, y)
        fit_seconds = time.perf_counter() - t0
        grid = None
        if not opts.no_grid:
            with common.progress(opts, f"grid search ({len(THESIS_GRID)} β)",
                                 len(THESIS_GRID), unit="β") as bar:
                grid = est.scalar_grid(X, y, progress=bar)
    return warm_seconds, fit_seconds, grid


def _fit_record(opts, est, X_test, y_test, names, groups):
    """The record of the fitted model: criterion, test scores, weights, selected features,
    coefficients and lower-level counts."""
    import numpy as np

    # raw SVM outputs x.w + b of the test rows; the thesis's halved MSE of them against
    # the +-1 labels, seed-000 (1.2) (selection.criteria.halved_mse on [X, 1])
    out_te = np.asarray(est.decision_function(X_test), dtype=np.float64)
    imp = est.feature_importances_
    order = [j for j in np.argsort(-imp) if imp[j] > 0]
    selected = [names[j] for j in order]
    d = len(names)
    listed = range(d) if d <= LIST_ALL_FEATURES_MAX else order
    group_names = set(groups or ()) if est.model_ == "group" else set()
    return {
        "validation_objective": float(est.validation_score_),
        "validation_objective_name": CRITERION_NAMES[opts.criterion],
        "test_accuracy": float(est.score(X_test, y_test)),
        "test_halved_mse": float(np.mean((out_te - y_test) ** 2) / 2.0),
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
    }


def _grid_record(est, grid, fit_seconds):
    """The grid search's best point and counts beside the bilevel fit's."""
    from ..selection.bilevel import THESIS_GRID

    return {
        "grid_validation_objective": grid.best_value,
        "grid_beta": grid.best_beta,
        "grid_size": len(THESIS_GRID),
        "grid_lower_level_solves": int(grid.lower_solves),
        "grid_lower_level_iterations": int(grid.lower_iterations),
        "grid_seconds": grid.seconds,
        "solves_ratio": grid.lower_solves / max(1, est.lower_level_solves_),
        "time_ratio": grid.seconds / fit_seconds if fit_seconds > 0 else None,
    }


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


def _select_plots(opts, est, grid, names, X, y, notes, bar):
    """The PNG figures of a select run. None needs X dense: the curves come from the grid
    and the tree reference (ExtraTrees) takes CSR rows; with many features the figures
    keep the :data:`PLOT_FEATURES_MAX` largest (said in ``notes``)."""
    import dataclasses

    import numpy as np
    from sklearn.ensemble import ExtraTreesClassifier

    from .. import plots

    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    d = len(names)
    if grid is not None:
        traj = est.history_ if est.model_ == "scalar" else None
        final = None if est.model_ == "scalar" else float(est.validation_score_)
        ax = plots.plot_validation_curve(grid, traj, final=final,
                                         criterion=CRITERION_NAMES[opts.criterion])
        written.append(str(plots.save(ax, out / "validation_curve.png")))
        bar(1)
        beta = float(est.penalty_weights_[0]) if est.model_ == "scalar" else None
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
    trees = ExtraTreesClassifier(n_estimators=250, random_state=opts.seed).fit(X, y)
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
    common.print_notes(r["notes"])
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
