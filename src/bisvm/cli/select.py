"""``bisvm select``: the main job.

Learn the sparsity weights of a smoothed elastic-net SVM by bilevel optimisation
(González Vallejo 2024, "Selección de variables a través de máquinas de soporte
vectorial dispersas: un enfoque de optimización binivel"), report the selected features
with their importance, the validation criterion, the accuracy on a test split the tuning
never saw, and the thesis's 149-point grid search beside it, timed fairly: a warm-up on
a small subset pays the one-time costs (first calls, compiled kernels) before either is
timed, and that cost is reported on its own (``startup_seconds``). A continuous target
(``--task``, :mod:`bisvm.cli.task`) is handed to :mod:`bisvm.cli.select_regression`
(BilevelSVR).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import warnings
from pathlib import Path

from ..names import CRITERIA
from . import common, learned
from .defaults import choices, classification_defaults, default
from .kernel_tune import add_approximation_options
from .learned import print_select
from .select_shared import (
    LIST_ALL_FEATURES_MAX,
    PLOT_FEATURES_MAX,
    SelectRun,
    frequency_plots,
    input_record,
    listed_by_name,
)

#: criterion name -> one-line description (the public list :data:`bisvm.names.CRITERIA`)
CRITERION_NAMES = {name: c.description for name, c in CRITERIA.items()}
#: The classification values of the options whose default depends on the task (None in
#: the parser): BilevelSVC's defaults (:data:`bisvm.cli.defaults.CLI_DIFFERENCES`)
CLASSIFICATION_DEFAULTS = classification_defaults()

DESCRIPTION = """\
Sparse SVM feature selection by bilevel optimisation (BiSVM L-BFGS): the L1 weights of a
smoothed elastic-net SVM are learned from a validation criterion. Runs on the bundled
Breast Cancer data by default; reports the selected features, their importance, the
validation criterion, the accuracy on a test split never used for tuning, and the
149-point grid-search baseline with the ratios of lower-level solves and of time. Both are
timed after one shared warm-up (reported as start-up).

A continuous target (--task auto decides, and says why; --task regression forces it)
is fitted by BilevelSVR, sparse support vector regression with learned L1 weights
(--loss, --epsilon, --loss-smoothing, --regression-criterion; epsilon and the smoothing
are in standard deviations of the target): the output gives R2 and RMSE (in the
target's units) on the test rows instead of the accuracy, and has no grid baseline.

examples:
  bisvm select
  bisvm select --data cancer.csv --target target --json
  bisvm select --model scalar --criterion holdout
  bisvm select --model group --groups mean=0-9,se=10-19,worst=20-29 --out plots/
  bisvm select --stability 50 --n-jobs 2
  bisvm select --data diabetes.csv --target progression
  bisvm select --data doses.csv --target dose --task regression --regression-criterion mae
  bisvm select --kernel rbf --data d.csv --target y

--kernel rbf selects nonlinearly: AutoSVC(widths="per_feature") learns C and one RBF
width per feature by hypergradient descent of a k-fold criterion (AutoSVR on a
continuous target) and keeps the features whose learned relevance passes a
one-standard-error rule; it finds features that act only through interactions.
"""


def add_parser(sub):
    """Add ``bisvm select`` to the subcommands ``sub``."""
    s = sub.add_parser(
        "select", help="learn per-feature sparsity weights by bilevel optimisation (main job)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = s.add_argument_group("data")
    common.add_selection_data_options(
        src, "breast-cancer", "bundled data set when --data is not given (default: %(default)s)")
    common.add_sparse_option(src, "when the file is large and sparse")
    m = s.add_argument_group("model")
    m.add_argument("--model", choices=choices("BilevelSVC", "model"),
                   default=default("BilevelSVC", "model"),
                   help="one weight, one per feature, or one per group; auto: group with "
                   "--groups, else vector when the features are at most a fold's rows, else "
                   "scalar (BilevelSVC's rule; a regression takes BilevelSVR's auto; "
                   "default %(default)s, the estimators')")
    m.add_argument("--groups", metavar="SPEC",
                   help="feature groups: index ranges 'mean=0-9,se=10-19,worst=20-29' or "
                   "name prefixes 'mean,error,worst' (default: none; --model group on a "
                   "bundled set takes its own groups)")
    m.add_argument("--kernel", choices=["linear", "rbf"], default="linear",
                   help="linear: the sparse SVM's learned L1 weights; rbf: "
                   "AutoSVC(widths='per_feature'), one learned RBF width per feature "
                   "(AutoSVR on a continuous target) (default %(default)s)")
    add_approximation_options(m, "--kernel rbf")
    common.add_bilevel_options(m)
    m.add_argument("--validation-fraction", type=common.fraction("--validation-fraction"),
                   default=default("BilevelSVC", "validation_fraction"),
                   help="validation share of the holdout criteria (default %(default)s, "
                   "BilevelSVC's and the thesis's)")
    m.add_argument("--learn-l2", action="store_true",
                   help="learn the ridge weight alpha too (default: off, as BilevelSVC; "
                   "the thesis fixes it)")
    from .select_regression import add_regression_options

    add_regression_options(s)
    add_stability_options(s)
    o = common.add_output_args(s)
    o.add_argument("--no-grid", action="store_true", help="skip the grid-search baseline "
                   "(classification; regression has none)")
    o.add_argument("--out", metavar="DIR",
                   help="write PNG plots to DIR (default: none, no plots)")
    s.set_defaults(func=run)
    return s


def add_stability_options(p):
    """``--stability PAIRS``, ``--stability-threshold TAU`` and ``--n-jobs`` (shared by
    ``bisvm select`` and ``bisvm report``; report has its own ``--n-jobs``)."""
    g = p.add_argument_group("stability selection")
    g.add_argument("--stability", type=common.positive_int("--stability", 0), default=0,
                   metavar="PAIRS",
                   help="also run complementary-pairs stability selection of the same "
                   "model with this many pairs of half-samples (50 is the usual; 0: off, "
                   "the default) and report the stable set, the frequencies and the bound "
                   "on falsely selected features")
    g.add_argument("--stability-threshold", type=common.share("--stability-threshold", 0.5),
                   default=None, metavar="TAU",
                   help="selection frequency, in (0.5, 1], that a feature needs to be "
                   "stable (default: StabilitySelection's, "
                   f"{default('StabilitySelection', 'threshold')}); regression: the "
                   "same, with BilevelSVR and the R2 of the refit on the stable set")
    if not p.prog.endswith(" report"):
        g.add_argument("--n-jobs", type=int, default=None,
                       help="cores for the stability fits and the folds (-1: all; the "
                       "results do not depend on it; default: one)")
    return g


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
    categorical: tuple | None = None
    drop_column: tuple | None = None
    max_categories: int = 20
    sparse: str = "auto"
    test_size: float = 0.25
    scaling: str = "auto"
    seed: int = 0
    model: str = default("BilevelSVC", "model")
    kernel: str = "linear"
    approximation: str | None = None
    n_components: int | None = None
    groups: str | None = None
    criterion: str | None = None
    cv: int = default("BilevelSVC", "cv")
    validation_fraction: float = default("BilevelSVC", "validation_fraction")
    l2_penalty: float | str = default("BilevelSVC", "l2_penalty")
    hinge_smoothing: float | None = None
    l1_smoothing: float | None = None
    free_intercept: bool = False
    learn_l2: bool = False
    max_iter: int = default("BilevelSVC", "max_iter")
    task: str = "auto"
    loss: str = default("BilevelSVR", "loss")
    epsilon: float = default("BilevelSVR", "epsilon")
    loss_smoothing: float = default("BilevelSVR", "loss_smoothing")
    regression_criterion: str = default("BilevelSVR", "criterion")
    stability: int = 0
    stability_threshold: float | None = None
    n_jobs: int | None = None
    no_grid: bool = False
    out: str | None = None
    json: bool = False
    quiet: bool = False
    verbose: bool = False

    @classmethod
    def from_args(cls, args):
        """The options of a parsed ``bisvm select`` command line."""
        values = {f.name: getattr(args, f.name, f.default) for f in dataclasses.fields(cls)}
        for name in ("categorical", "drop_column"):  # argparse appends to lists
            if values[name] is not None:
                values[name] = tuple(values[name])
        return cls(**values)


#: The linear selector's --cv and --max-iter defaults, which select --kernel rbf does not
#: pass on to the kernel models (they keep their own unless the option is given)
LINEAR_DEFAULTS = {"cv": SelectOptions.cv, "max_iter": SelectOptions.max_iter}


def run(args):
    """Run the selection of the parsed command line and print its record; exit code 0."""
    from .select_kernel import print_kernel_select
    from .select_regression import print_select_regression

    sel = run_select(SelectOptions.from_args(args))
    common.emit(args, sel.result, print_kernel_select if sel.result.get("kernel") == "rbf"
                else print_select_regression if sel.result.get("task") == "regression"
                else print_select)
    return 0


def read_source(opts):
    """The Dataset of ``--data`` or ``--dataset`` (a bundled set's feature as the target
    under ``--target FEATURE``).

    An svmlight file's X stays a CSR matrix under ``--sparse auto|always`` when
    :class:`~bisvm.estimators.sparse.BilevelSVC` takes sparse input (its scikit-learn
    tags); names are then ``x0 ... x{d-1}``, made on demand.
    """
    from .. import data

    if opts.data:
        return data.read_table(opts.data, target=opts.target,
                               drop_missing=opts.drop_missing, encoding=opts.encoding,
                               **common.table_options(opts),
                               sparse=common.sparse_for_model(opts, "bilevel"))
    return common.feature_as_target(data.load_dataset(opts.dataset), opts.target)


def load_binary(opts, ds=None):
    """Features, ±1-able target, names, groups and notes of ``ds`` (read from --data or
    --dataset when not given, :func:`read_source`)."""
    import numpy as np

    from .. import data

    notes = []
    ds = read_source(opts) if ds is None else ds
    X, y = ds.X, ds.y
    notes.extend(ds.notes)
    labels = np.unique(y)
    if opts.positive is not None:
        pos = _match_label(opts.positive, labels)
        bt = data.binary_target(y, positive=pos, one_vs_rest=True)
        notes.append(f"target: {common.to_py(pos)!r} against the rest")
    elif labels.size > 2 and not opts.data:
        # the documents' binary tasks on the bundled multiclass sets
        if ds.source.endswith("iris") or opts.dataset == "iris":
            keep = np.isin(y, labels[:2])
            X, y = X[keep], y[keep]
            notes.append(f"target: {common.to_py(labels[0])!r} vs {common.to_py(labels[1])!r} "
                         "(the thesis's Iris task)")
            bt = data.binary_target(y)
        else:
            bt = data.binary_target(y, positive=labels[0], one_vs_rest=True)
            notes.append(f"target: {common.to_py(labels[0])!r} against the rest")
    elif labels.size > 2:
        raise ValueError(
            f"the target has {labels.size} classes; bisvm select needs two: pass "
            "--positive LABEL for one class against the rest, or --task regression for "
            "a numeric target"
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
    then include the one-time costs).
    """
    import numpy as np
    from sklearn.base import clone

    from ..selection.bilevel import resolve_solver
    from ..solvers.primal.lower_level import add_bias_column

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
    import numpy as np

    from .. import data
    from ..estimators.sparse import BilevelSVC

    import_seconds = time.perf_counter() - t_start
    if opts.n_jobs is not None and (opts.n_jobs == 0 or opts.n_jobs < -1):
        raise ValueError(f"--n-jobs must be a positive integer or -1, got {opts.n_jobs}")
    if opts.stability:
        learned.check_stability_available()
    from .task import detect_task

    source = read_source(opts)
    if source.y is None:
        raise ValueError(f"{source.source}: no target column")
    task, reason = detect_task(source.y, opts.task, target=source.target)
    if opts.kernel != "rbf":
        for option in ("approximation", "n_components"):
            if getattr(opts, option) is not None:
                raise ValueError(f"--{option.replace('_', '-')} approximates the RBF "
                                 "kernel of --kernel rbf; the linear selection has none")
    if opts.kernel == "rbf":
        from .select_kernel import run_kernel_select

        return run_kernel_select(opts, source, task, reason, t_start=t_start,
                                 linear_defaults=LINEAR_DEFAULTS)
    if task == "regression":
        from .select_regression import run_regression

        return run_regression(opts, source, reason, t_start=t_start,
                              import_seconds=import_seconds)
    # options whose default depends on the task
    opts = dataclasses.replace(opts, **{k: v for k, v in CLASSIFICATION_DEFAULTS.items()
                                        if getattr(opts, k) is None})
    common.check_exact_l1(opts.l1_smoothing, "BilevelSVC")
    X, bt, names, groups, notes, ds = load_binary(opts, source)
    if opts.model == "group" and not groups:
        raise ValueError("--model group needs --groups (e.g. mean=0-9,se=10-19,worst=20-29)")
    Xtr, Xte, ytr, yte = data.train_test_split_seeded(
        X, bt.y, test_size=opts.test_size, random_state=opts.seed
    )
    est = bilevel_estimator(opts, BilevelSVC, groups)
    plan, scaler, Xtr_s, Xte_s = learned.scaled_split(opts, est, "BilevelSVC", Xtr, Xte, notes)
    warm_seconds, fit_seconds, grid = _fit(opts, est, Xtr_s, ytr)
    notes.extend(learned.refinement_messages(est))
    if np.any(getattr(est, "null_model_", False)):
        notes.append("the learned model does not beat the intercept-only model on the "
                     "held-out folds: no feature is kept (the majority class is predicted)")
    result = {
        "source": ds.source,
        "input": input_record(X, Xtr_s),
        "scaling": scaler.effective_method_,
        "standardized_inside": plan.inside,
        "coef_units": plan.coef_units,
        "n_train": int(len(ytr)),
        "n_test": int(len(yte)),
        "model": learned.kept_model(est),
        "model_fitted": est.model_,
        "refined": common.to_py(getattr(est, "refined_", None)),
        "criterion": opts.criterion,
        "positive_class": common.to_py(bt.positive),
        "negative_class": common.to_py(bt.negative),
        "task": task,
        "task_reason": reason,
        **_fit_record(opts, est, Xte_s, yte, names, groups),
        "seconds": fit_seconds,
        "startup_seconds": import_seconds + warm_seconds,
        "notes": list(notes),
    }
    if grid is not None:
        result.update(_grid_record(est, grid, fit_seconds))
    stab = None
    if opts.stability:
        with common.progress(opts, f"stability selection ({opts.stability} pairs)", 1,
                             unit="run") as bar, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result["stability"], stab = learned.run_stability(
                est, Xtr_s, ytr, n_pairs=opts.stability, threshold=opts.stability_threshold,
                n_jobs=opts.n_jobs, random_state=opts.seed, names=names, X_test=Xte_s,
                y_test=yte)
            bar(1)
    if opts.out:
        n_fig = (1 if grid is None else 3) + (
            getattr(est, "selection_frequency_", None) is not None) + bool(opts.stability)
        with common.progress(opts, "plots", n_fig, unit="figure") as bar:
            result["plots"] = _select_plots(opts, est, grid, names, Xtr_s, ytr,
                                            result["notes"], bar, stab)
    result["total_seconds"] = time.perf_counter() - t_start
    return SelectRun(result=result, estimator=est, grid=grid, names=names, X_train=Xtr_s,
                     X_test=Xte_s, y_train=ytr, y_test=yte, binary_target=bt,
                     stability=stab)


def bilevel_estimator(opts, cls, groups):
    """The BilevelSVC of ``opts``; ``--groups`` goes to its feature-groups parameter and
    ``--n-jobs`` to its folds where it has them."""
    from .models import group_parameter

    valid = cls().get_params(deep=False)
    params = dict(
        model=opts.model, l2_penalty=opts.l2_penalty, hinge_smoothing=opts.hinge_smoothing,
        l1_smoothing=opts.l1_smoothing, criterion=opts.criterion, cv=opts.cv,
        validation_fraction=opts.validation_fraction,
        penalize_intercept=False if opts.free_intercept else
        "auto" if valid.get("penalize_intercept") == "auto" else True,
        random_state=opts.seed,
        max_iter=opts.max_iter, learn_l2_penalty=opts.learn_l2,
        verbose=int(common.progress_mode(opts) is not None))
    # a bundled set's own groups are used by --model group only; auto takes --groups
    if opts.model == "group" or (opts.model == "auto" and opts.groups):
        params[group_parameter(valid)] = groups
    if opts.n_jobs is not None and "n_jobs" in valid:
        params["n_jobs"] = opts.n_jobs
    return cls(**params)


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

    # raw SVM outputs x.w + b of the test rows; the thesis's halved mean squared error of
    # them against the +-1 labels (selection.criteria.halved_mse on [X, 1])
    out_te = np.asarray(est.decision_function(X_test), dtype=np.float64)
    imp = est.feature_importances_
    order = [j for j in np.argsort(-imp) if imp[j] > 0]
    selected = [names[j] for j in order]
    d = len(names)
    listed = range(d) if d <= LIST_ALL_FEATURES_MAX else order
    group_names = set(groups or ()) if est.model_ == "group" else set()
    rec = {
        "validation_objective": float(est.validation_score_),
        "validation_objective_name": CRITERION_NAMES[opts.criterion],
        "test_accuracy": float(est.score(X_test, y_test)),
        "test_halved_mse": float(np.mean((out_te - y_test) ** 2) / 2.0),
        # one β for a scalar model, kept or asked for (learned.kept_weights)
        "penalty_weights": listed_by_name(est.penalty_weight_names_, est.penalty_weights_,
                                           d, order, names, group_names)
        if learned.kept_model(est) != "scalar" else learned.kept_weights(est, names),
        "selected_features": selected,
        "n_selected": len(selected),
        "n_features": d,
        "importance": {names[j]: float(imp[j]) for j in order},
        "features_listed": "all" if d <= LIST_ALL_FEATURES_MAX else "selected",
        "selection_frequency": learned.frequency_by_name(
            getattr(est, "selection_frequency_", None), names, listed),
        "coefficients": {names[j]: float(est.coef_[0][j]) for j in listed},
        "intercept": float(est.intercept_[0]),
        "l2_penalty": float(est.l2_penalty_),
        "iterations": int(est.n_iter_),
        "lower_level_solves": int(est.lower_level_solves_),
        "lower_level_iterations": int(est.lower_level_iterations_),
        "lower_level_solver": str(est.solver_),
    }
    if learned.thesis_scores_informative(est):
        # with one shared β every selected feature has the same thesis score: left out
        rec["thesis_scores"] = listed_by_name(est.importance_names_, est.importance_, d,
                                               order, names, group_names)
    if rec["selection_frequency"] is None:
        del rec["selection_frequency"]
    return rec


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


def _select_plots(opts, est, grid, names, X, y, notes, bar, stability=None):
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
    written += frequency_plots(est, names, stability, out, bar)
    return written
