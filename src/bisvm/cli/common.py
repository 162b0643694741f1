"""What the subcommands share: argument types, data loading, output, progress, warnings."""

from __future__ import annotations

import contextlib
import json
import warnings

from .. import names

# numpy, pandas and scikit-learn are imported where the work starts: `bisvm --help` and
# argument errors must answer without them.
from .argtypes import (  # noqa: F401  (the subcommands' argument types, re-exported)
    auto_or,
    fraction,
    gamma_value,
    key_value,
    nonneg_float,
    positive_float,
    positive_int,
    share,
)
from .defaults import check_exact_l1, choices, default, default_text  # noqa: F401
from .output import (  # noqa: F401  (re-exported for the subcommands)
    add_output_args,
    add_progress_args,
    feature_key,
    print_notes,
    progress,
    progress_mode,
    to_py,
)

EXIT_BAD_INPUT = 2
#: ``--dataset`` choices: the bundled data sets of :data:`bisvm.names.DATASETS`
DATASETS = list(names.DATASETS)


def add_data_args(p, *, target_help="target column (default: the last column)",
                  test_size=0.0, scaling=True):
    """The data options of ``bisvm fit`` and ``bisvm tune`` (one argparse group, returned):
    source, target, missing rows, encoding, columns, ``--sparse`` where the command keeps
    sparse rows, the test split (default ``test_size``), ``--scaling`` (with ``scaling``)
    and the seed."""
    g = p.add_argument_group("data")
    g.add_argument("--data", metavar="FILE", help="CSV, Parquet or svmlight file "
                   "(default: none, the bundled --dataset)")
    g.add_argument("--target", metavar="COLUMN", help=target_help)
    g.add_argument("--dataset", choices=DATASETS, default=None,
                   help="bundled data set when --data is not given (default: breast-cancer)")
    g.add_argument("--drop-missing", action="store_true",
                   help="drop rows with missing or infinite values instead of failing")
    g.add_argument("--encoding", metavar="NAME",
                   help="text encoding of a CSV that is not UTF-8 (e.g. latin-1; "
                   "default UTF-8)")
    add_column_options(g)
    if not p.prog.endswith(DENSE_ONLY_COMMANDS):
        add_sparse_option(g, "when the file is large and sparse and the model takes sparse "
                          "input")
    g.add_argument("--test-size", type=fraction("--test-size"), default=test_size,
                   help="share of rows held out (stratified, seeded) and scored after "
                   "fitting; 0 trains on every row (default %(default)s)")
    if scaling:
        add_scaling_option(g)
    g.add_argument("--seed", type=int, default=0,
                   help="seed of the split, folds and random search (default %(default)s)")
    return g


def add_column_options(g):
    """``--categorical``, ``--drop-column`` and ``--max-categories``: how a table's columns
    become features (:func:`bisvm.data.read_table`'s ``categorical``, ``drop_columns``
    and ``max_categories``)."""
    g.add_argument("--categorical", metavar="COLUMN", action="append", default=None,
                   help="one-hot encode this column even if it holds numbers (repeatable; "
                   "default: none, text columns with few values are encoded anyway)")
    g.add_argument("--drop-column", metavar="COLUMN", action="append", default=None,
                   help="ignore this column, e.g. an identifier (repeatable; default: "
                   "none)")
    g.add_argument("--max-categories", type=positive_int("--max-categories"), default=20,
                   help="most distinct values of a text column that is one-hot encoded; "
                   "a text column with more is an error (default %(default)s)")


def table_options(args):
    """``read_table`` keyword arguments of :func:`add_column_options`."""
    return {"categorical": list(getattr(args, "categorical", None) or ()) or "auto",
            "drop_columns": tuple(getattr(args, "drop_column", None) or ()),
            "max_categories": getattr(args, "max_categories", 20)}


def add_scaling_option(g):
    """``--scaling auto|standard|minmax|none`` (:func:`bisvm.cli.learned.scaling_plan`)."""
    g.add_argument("--scaling", choices=["auto", "standard", "minmax", "none"],
                   default="auto",
                   help="feature scaling fitted on the training rows and stored with the "
                   "model; auto: none for the models that standardise inside their fit "
                   "(bilevel, elastic-net: per fold, sample-weighted; coefficients in the "
                   "original units), standard for the others; standard or minmax on those "
                   "models turns their own standardisation off (default %(default)s)")


def scaling_for(args, spec):
    """The :class:`~bisvm.cli.learned.ScalingPlan` of ``--scaling`` for ``--model``
    ``spec``; an estimator that must not standardise again gets ``standardize=False``
    through ``args.param`` (as ``--param standardize=false`` would)."""
    from .learned import scaling_plan

    cls = spec.load()
    params = cls().get_params(deep=False)
    for name, v in getattr(args, "param", None) or ():
        if name in params:
            params[name] = v
    plan = scaling_plan(args.scaling, params, cls.__name__)
    if plan.params:
        args.param = [*(getattr(args, "param", None) or ()), *plan.params.items()]
    return plan


def add_sparse_option(g, auto_help):
    """``--sparse auto|always|never``: how an svmlight file's matrix is held."""
    g.add_argument("--sparse", choices=["auto", "always", "never"], default="auto",
                   help="svmlight files: keep X as a sparse CSR matrix from the file to the "
                   f"model (auto: {auto_help}; default %(default)s)")


SPARSE_CHOICES = {"auto": "auto", "always": True, "never": False}
# Subcommands whose code indexes X as a dense array (``bisvm tune`` takes len(X_test)):
# they read svmlight files densely and have no --sparse option.
DENSE_ONLY_COMMANDS = ("tune",)


def sparse_for_model(args, model):
    """``read_table``'s ``sparse`` for ``--sparse`` and a ``--model`` choice: a model whose
    scikit-learn tags say it takes no sparse input gets dense rows under ``auto`` (it
    could not use a CSR matrix) and refuses ``always``."""
    choice = getattr(args, "sparse", "auto")
    if choice == "never" or model is None:
        return SPARSE_CHOICES[choice]
    from sklearn.utils import get_tags

    from .models import MODELS

    spec = MODELS.get(model)
    if spec is None:
        return SPARSE_CHOICES[choice]
    try:
        takes = bool(get_tags(spec.load()()).input_tags.sparse)
    except (TypeError, ValueError, AttributeError):  # no default constructor or no tags
        takes = False
    if takes:
        return SPARSE_CHOICES[choice]
    if choice == "always":
        raise ValueError(f"--sparse always: --model {model} ({spec.cls}) does not take sparse "
                         "input; use --sparse never or auto (dense rows)")
    return False


def add_parallel_args(p):
    """The options that say where parallel work runs: local processes (``--n-jobs``) or
    a Dask cluster, started here or reached at an address (one group, returned)."""
    g = p.add_argument_group("parallel work (grid, random, k-fold, leave-one-out refits)")
    g.add_argument("--n-jobs", type=int, default=None,
                   help="local worker processes through joblib (-1: all cores; default: "
                   "one, this process)")
    g.add_argument("--dask-scheduler", metavar="ADDRESS",
                   help="run the work on a Dask cluster, e.g. tcp://10.0.0.5:8786 "
                   "(needs pip install 'bisvm[dask]' here and bisvm on the workers; "
                   "default: none)")
    g.add_argument("--dask", choices=["local"], default=None,
                   help="'local': start a Dask LocalCluster on 127.0.0.1 for this run "
                   "(default: none)")
    g.add_argument("--dask-workers", type=positive_int("--dask-workers"), default=2,
                   help="workers of --dask local (default %(default)s)")
    g.add_argument("--dask-threads", action="store_true",
                   help="--dask local with thread workers in this process (starts in a "
                   "second; enough for small searches)")
    return g


def check_parallel_args(args):
    """Refuse a bad ``--n-jobs`` before any work (not only when a parallel step runs)."""
    if args.n_jobs is not None and (args.n_jobs == 0 or args.n_jobs < -1):
        raise ValueError(f"--n-jobs must be a positive integer or -1, got {args.n_jobs}")


def check_output_path(option, path, *, suffixes=None, what=None):
    """Refuse an output file that cannot be written, before the (possibly long) run:
    its directory must exist, the path must not be a directory, and with ``suffixes``
    its name must end with one of them."""
    import os

    if path is None:
        return
    text = os.fspath(path)
    if suffixes and not text.lower().endswith(tuple(suffixes)):
        raise ValueError(f"{option} {text}: the file is {what}; name it *{suffixes[0]}")
    if os.path.isdir(text):
        raise ValueError(f"{option} {text}: is a directory; give a file name")
    d = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(d):
        raise ValueError(f"{option} {text}: directory {d} does not exist")


def backend(args):
    """The :func:`bisvm.parallel.compute_backend` context asked for by the arguments."""
    from ..parallel import compute_backend

    check_parallel_args(args)
    return compute_backend(args.n_jobs, dask_scheduler=args.dask_scheduler,
                           dask_local=args.dask == "local", dask_workers=args.dask_workers,
                           dask_processes=not args.dask_threads)


def load_data(args, *, task):
    """Read ``--data``/``--dataset`` into (Dataset, X, y) for a classification or
    regression model. An svmlight file's X is a CSR matrix when ``--sparse`` and the
    model allow it (:func:`sparse_for_model`).

    For a bundled set (all classification sets), ``--target COLUMN`` names one of its
    features as a regression target (e.g. ``--dataset iris --target 'petal width (cm)'``).
    """
    ds = read_data(args)
    return ds, ds.X, target_for(args, ds, task)


def read_data(args):
    """The Dataset of ``--data``/``--dataset`` (:func:`load_data` without the target's
    checks, for a subcommand that reads the target before it knows the task)."""
    from .. import data

    if args.data:
        if args.dataset:
            raise ValueError("give either --data or --dataset, not both")
        command = getattr(args, "command", None)
        dense_only = command in DENSE_ONLY_COMMANDS
        try:
            ds = data.read_table(args.data, target=args.target,
                                 drop_missing=args.drop_missing, encoding=args.encoding,
                                 **table_options(args), sparse=False if dense_only else
                                 sparse_for_model(args, getattr(args, "model", None)))
        except data.DataError as exc:
            if not dense_only:
                raise
            raise without_sparse_hint(exc, command, "use bisvm select or bisvm fit, which "
                                      "keep an svmlight file sparse, or a sample of the "
                                      "rows") from None
    else:
        ds = feature_as_target(data.load_dataset(args.dataset or "breast-cancer"),
                               args.target)
    return ds


def without_sparse_hint(exc, command, advice):
    """``exc`` (a reader's error) for a command without ``--sparse``: the reader's
    suggestion to read the file as a sparse matrix (``CLI: --sparse auto``) is replaced by
    ``advice``; any other error is returned as it is."""
    text = str(exc)
    if "--sparse" not in text:
        return exc
    head = text.split("; read it as a sparse matrix")[0].split("(sparse=")[0].rstrip("; (")
    return ValueError(f"{head}; bisvm {command} reads the rows densely: {advice}")


def target_for(args, ds, task):
    """The target of ``ds`` checked for a ``task`` model (a float array for regression)."""
    import numpy as np

    # what a scaling becomes on sparse X is said by the subcommand, from its Scaler
    y = ds.y
    if y is None:
        raise ValueError(f"{ds.source}: no target column")
    if task == "regression":
        if np.asarray(y).dtype.kind not in "biuf":
            raise ValueError(
                f"{ds.source}: the target {ds.target!r} is not numeric; a regression model "
                "needs a numeric target")
        if not args.data and args.target in (None, "target"):
            raise ValueError(
                "the bundled data sets have class targets; for a regression model pass "
                "--data FILE or --target FEATURE to predict one of the features")
        y = np.asarray(y, dtype=np.float64)
    else:
        labels = np.unique(y)
        if labels.size < 2:
            raise ValueError(f"{ds.source}: the target has one class ({labels[0]!r}); a "
                             "classifier needs two or more")
        if np.asarray(y).dtype.kind == "f" and labels.size > max(20, len(y) // 5):
            raise ValueError(
                f"{ds.source}: the target {ds.target!r} looks continuous ({labels.size} "
                "distinct values); use a regression model (svr, kernel-ridge, selective, "
                "bilevel-svr)")
    return y


def feature_as_target(ds, target):
    """A bundled data set whose feature ``target`` is the target (``--target FEATURE``;
    the features are the others), or ``ds`` itself when ``target`` is None or
    ``"target"`` (its class column)."""
    import dataclasses

    import numpy as np

    if target is None or target == "target":
        return ds
    if target not in ds.feature_names:
        raise ValueError(f"--target {target!r} is not a column of {ds.source}; columns: "
                         f"{', '.join(ds.feature_names[:8])}, ...")
    j = ds.feature_names.index(target)
    keep = [k for k in range(ds.n_features) if k != j]
    names = [ds.feature_names[k] for k in keep]
    return dataclasses.replace(
        ds, X=np.ascontiguousarray(ds.X[:, keep]), y=ds.X[:, j].copy(),
        feature_names=names, columns=names, groups=None, target=target, target_names=None,
        notes=(*ds.notes, f"target: the feature {target!r} of {ds.source}"))


def split(args, X, y, *, classification):
    """Training and test rows (test empty when ``--test-size`` is 0)."""
    from .. import data

    if not args.test_size:
        return X, X[:0], y, y[:0]
    return data.train_test_split_seeded(X, y, test_size=args.test_size,
                                        random_state=args.seed, stratify=classification)


def emit(args, result, printer):
    """One JSON object (``--json``) or the human-readable lines of ``printer``."""
    if args.json:
        print(json.dumps(to_py(result), allow_nan=False))
    else:
        printer(result)


@contextlib.contextmanager
def collect_warnings(into):
    """Collect warnings (deduplicated one-line messages) instead of printing them: under
    ``--json`` stderr must stay clean for the caller, and the text output lists them as
    notes."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                msg = f"{w.category.__name__}: {' '.join(str(w.message).split())}"
                if msg not in into:
                    into.append(msg)


def add_selection_data_options(g, dataset_default, dataset_help):
    """The data options shared by ``bisvm select`` and ``bisvm report`` (one argparse
    group): source, target, class, missing rows, encoding, test split, scaling, seed."""
    g.add_argument("--data", metavar="FILE", help="CSV, Parquet or svmlight file "
                   "(default: none, the bundled --dataset)")
    g.add_argument("--target", metavar="COLUMN",
                   help="target column (default: last); with a bundled --dataset, a "
                   "feature's name makes that feature the (regression) target")
    g.add_argument("--dataset", choices=DATASETS, default=dataset_default, help=dataset_help)
    g.add_argument("--positive", metavar="LABEL",
                   help="class to select against the rest (multiclass targets; default: "
                   "none, a binary target's two classes)")
    g.add_argument("--drop-missing", action="store_true",
                   help="drop rows with missing or infinite values instead of failing")
    g.add_argument("--encoding", metavar="NAME",
                   help="text encoding of a CSV that is not UTF-8 (e.g. latin-1; "
                   "default UTF-8)")
    add_column_options(g)
    g.add_argument("--test-size", type=float, default=0.25,
                   help="share of rows held out for the test scores: accuracy, or R2 and "
                   "RMSE for a regression (default %(default)s)")
    add_scaling_option(g)
    g.add_argument("--seed", type=int, default=0, help="split seed (default %(default)s)")
    from .task import add_task_option

    add_task_option(g)


def add_bilevel_options(g):
    """The model options of a bilevel selection run shared by ``bisvm select`` and
    ``bisvm report`` (:class:`~bisvm.cli.select.SelectOptions`): criterion, folds, the
    thesis's alpha, mu and gamma, the intercept's penalty and the outer iterations cap.
    Defaults and choices are BilevelSVC's and BilevelSVR's (:mod:`bisvm.cli.defaults`)."""
    g.add_argument("--criterion", default=None, choices=choices("BilevelSVC", "criterion"),
                   help="upper-level criterion of classification; 'holdout' is the "
                   "thesis's J (" + default_text("BilevelSVC", "criterion")
                   + "; regression: --regression-criterion)")
    g.add_argument("--cv", type=positive_int("--cv", 2), default=default("BilevelSVC", "cv"),
                   help="folds of k-fold criteria (default %(default)s, the estimators')")
    g.add_argument("--l2-penalty", type=auto_or(positive_float("--l2-penalty")),
                   default=default("BilevelSVC", "l2_penalty"),
                   help="the thesis's alpha, a number > 0, or auto: the estimator's rule "
                   "(default %(default)s, the estimators')")
    g.add_argument("--hinge-smoothing", type=positive_float("--hinge-smoothing"),
                   default=None, help="the thesis's mu (classification only, "
                   + default_text("BilevelSVC", "hinge_smoothing")
                   + "; regression: --loss-smoothing)")
    g.add_argument("--l1-smoothing", type=auto_or(nonneg_float("--l1-smoothing")),
                   default=None, help="the thesis's gamma; 0 is the exact L1 penalty of "
                   "classification (default: the estimator's: "
                   f"{default('BilevelSVC', 'l1_smoothing')} for classification; for "
                   "regression auto: 0.001 when the table has at least as many columns "
                   "as rows, else 0.01)")
    g.add_argument("--free-intercept", action="store_true",
                   help="do not penalise the intercept (by default it is penalised, as in "
                   "the thesis, only when the columns are not standardised inside the fit)")
    g.add_argument("--max-iter", type=positive_int("--max-iter"),
                   default=default("BilevelSVC", "max_iter"),
                   help="outer iterations cap (default %(default)s, the estimators')")


def print_selected(r):
    """The ``selected N features: ...`` line of a record with ``selected_features``."""
    if "selected_features" in r:
        sel = r["selected_features"]
        print(f"selected {len(sel)} features: " + ", ".join(sel[:12])
              + (" ..." if len(sel) > 12 else ""))


def save_checked(est, path, *, ds, scaler, extra, X_check):
    """Save a model file and load it back: a file that does not reproduce the model's
    predictions on ``X_check`` (scaled rows) is removed and reported as an error."""
    import os

    import numpy as np

    from ..persistence import load_model, save_model

    save_model(est, path, feature_names=ds.feature_names, scaler=scaler, schema=ds.schema,
               extra=extra)
    try:
        back = load_model(path).estimator
        same = np.array_equal(np.asarray(back.predict(X_check)),
                              np.asarray(est.predict(X_check)))
        for method in ("decision_function", "predict_proba"):
            if same and hasattr(est, method) and _works(est, method, X_check):
                same = np.allclose(getattr(back, method)(X_check),
                                   getattr(est, method)(X_check), rtol=1e-12, atol=1e-12)
    except Exception as exc:  # any failure means the file is unusable
        os.unlink(path)
        raise ValueError(
            f"--save {path}: the {type(est).__name__} model file does not load back "
            f"({type(exc).__name__}: {' '.join(str(exc).split())}); nothing written"
        ) from None
    if not same:
        os.unlink(path)
        raise ValueError(f"--save {path}: the reloaded {type(est).__name__} predicts "
                         "differently; nothing written")
    return path


def _works(est, method, X):
    try:
        getattr(est, method)(X[:1])
    except (AttributeError, ValueError, NotImplementedError):
        return False
    return True


def named_weights(est, feature_names):
    """A BilevelSVC's L1 weights by the user's names, as the fit kept them
    (:func:`bisvm.cli.learned.kept_weights`): ``{name: β}`` (``{"name[class]": β}`` for
    one-vs-rest), or ``{"beta": β}`` for a scalar model, asked for or kept after a
    rejected refinement."""
    from .learned import kept_weights

    grouped = getattr(est, "model_", getattr(est, "model", None)) == "group"
    spec = getattr(est, "feature_groups", None) or getattr(est, "groups", None)
    groups = set(spec or ()) if grouped and isinstance(spec, dict) else set()
    return kept_weights(est, feature_names, groups)
