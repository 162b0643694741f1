"""The estimators the CLI can train, their options and their search spaces."""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field

from .defaults import check_exact_l1, choices, difference, option_choices


@dataclass(frozen=True)
class ModelSpec:
    """One ``--model`` choice.

    Attributes
    ----------
    name : str
        The CLI name.
    module, cls : str
        Where the estimator class lives (imported on use: a model whose module has not
        been built into this installation gives a clear error, not an ImportError).
    task : {"classification", "regression"}
    search : dict of str to (low, high)
        The main parameters and their log-scale ranges for ``bisvm tune --method
        grid|random``.
    description : str
    defaults : dict
        Constructor values the CLI uses unless told otherwise, where the class default
        suits centred data but not a raw table (kernel ridge's intercept; each is a
        :data:`bisvm.cli.defaults.CLI_DIFFERENCES` entry with its reason).
    progress : bool
        The estimator's ``verbose`` shows progress through :mod:`bisvm.progress` (the CLI
        turns it on where the run shows progress: a terminal, or ``--verbose``).
    """

    name: str
    module: str
    cls: str
    task: str
    search: dict = field(default_factory=dict)
    description: str = ""
    defaults: dict = field(default_factory=dict)
    progress: bool = False

    def load(self):
        """The estimator class (imported now); ``ValueError`` naming ``--model`` when this
        installation lacks it."""
        try:
            mod = importlib.import_module(f"bisvm.{self.module}")
            return getattr(mod, self.cls)
        except (ImportError, AttributeError):
            raise ValueError(
                f"--model {self.name}: {self.cls} is not available in this installation of "
                f"bisvm (bisvm.{self.module})") from None


MODELS = {m.name: m for m in (
    ModelSpec("svc", "estimators.svm", "SVC", "classification",
              {"C": (1e-2, 1e3), "gamma": (1e-4, 1e1)},
              "C-support vector classifier (SMO; kernels)", progress=True),
    ModelSpec("svr", "estimators.svm", "SVR", "regression",
              {"C": (1e-2, 1e3), "gamma": (1e-4, 1e1), "epsilon": (1e-3, 1.0)},
              "epsilon-support vector regression (SMO; kernels)", progress=True),
    ModelSpec("linear-svc", "estimators.linear", "LinearSVC", "classification",
              {"C": (1e-3, 1e2)}, "linear SVM (LIBLINEAR's formulations)"),
    ModelSpec("kernel-ridge", "estimators.kernel_ridge", "KernelRidge", "regression",
              {"ridge": (1e-4, 1e2), "gamma": (1e-4, 1e1)},
              "kernel ridge regression (Cholesky; with an intercept unless --param "
              "fit_intercept=false)",
              {"fit_intercept": difference("--model kernel-ridge", "fit_intercept")
               .cli_default}),
    ModelSpec("kernel-logistic", "estimators.kernel_logistic", "KernelLogisticRegression",
              "classification", {"C": (1e-2, 1e3), "ridge": (1e-4, 1e2),
                                 "gamma": (1e-4, 1e1)},
              "kernel logistic regression"),
    ModelSpec("elastic-net", "estimators.sparse", "ElasticNetSVC", "classification",
              {"penalty_weight": (1e-3, 1.5), "l2_penalty": (1e-4, 1.0)},
              "smoothed elastic-net (L2L1) SVM with fixed L1 weights"),
    ModelSpec("bilevel", "estimators.sparse", "BilevelSVC", "classification", {},
              "sparse SVM whose L1 weights are learned by bilevel optimisation (as select)",
              progress=True),
    ModelSpec("bilevel-svr", "estimators.bilevel_svr", "BilevelSVR", "regression", {},
              "sparse support vector regression whose L1 weights are learned by bilevel "
              "optimisation (as select on a continuous target)", progress=True),
    ModelSpec("selective", "estimators.selective", "SelectiveRegression", "regression",
              {"selectivity": (1e-3, 1e2), "ridge": (1e-4, 1e2)},
              "selective-ridge (berhu) penalised linear regression"),
    ModelSpec("selective-logistic", "estimators.selective", "SelectiveLogisticRegression",
              "classification", {"selectivity": (1e-3, 1e2), "ridge": (1e-4, 1e2)},
              "selective-ridge (berhu) penalised logistic regression"),
)}

#: CLI option (argparse dest) -> constructor parameter. An option applies to a model when
#: the model's constructor has that parameter.
OPTION_PARAMS = {
    "C": "C", "kernel": "kernel", "gamma": "gamma", "degree": "degree", "coef0": "coef0",
    "epsilon": "epsilon", "ridge": "ridge", "penalty": "penalty", "loss": "loss",
    "probability": "probability", "class_weight": "class_weight",
    "penalty_weight": "penalty_weight", "l2_penalty": "l2_penalty",
    "hinge_smoothing": "hinge_smoothing", "l1_smoothing": "l1_smoothing",
    "loss_smoothing": "loss_smoothing",
    "bilevel_model": "model", "criterion": "criterion", "cv": "cv",
    "selectivity": "selectivity", "max_iter": "max_iter", "tol": "tol",
}


def add_model_args(p, *, default_model="svc", model_choices=None, default_help=None):
    """The ``--model`` choice and the options of every model (each applies to the models
    whose estimator has the parameter; the rest is ``--param NAME=VALUE``). An option
    left out is not passed: the estimator's default applies. Choices are the estimators'
    (:mod:`bisvm.cli.defaults`)."""
    from .argtypes import (
        auto_or,
        gamma_value,
        key_value,
        nonneg_float,
        positive_float,
        positive_int,
    )

    names = model_choices or list(MODELS)
    g = p.add_argument_group(
        "model", "Each option applies to the models whose estimator has the parameter;\n"
        "left out, the estimator's own default applies.")
    g.add_argument("--model", choices=names, default=default_model,
                   help="estimator: " + "; ".join(f"{n}: {MODELS[n].description}"
                                                  for n in names)
                   + f" ({default_help or 'default %(default)s'})")
    own = " (default: the estimator's)"
    g.add_argument("--C", dest="C", type=positive_float("--C"),
                   help="cost of margin violations (svc, svr, linear-svc)" + own)
    g.add_argument("--kernel", choices=option_choices("--kernel", ("SVC", "kernel")),
                   help="kernel of svc, svr, kernel-ridge, kernel-logistic" + own)
    g.add_argument("--gamma", type=gamma_value,
                   help="kernel width: a number, 'scale' or 'auto'" + own)
    g.add_argument("--degree", type=positive_int("--degree"),
                   help="polynomial degree" + own)
    g.add_argument("--coef0", type=float, help="kernel offset (poly, sigmoid)" + own)
    g.add_argument("--epsilon", type=float, help="tube half-width of svr (bilevel-svr: in "
                   "standard deviations of the target)" + own)
    g.add_argument("--ridge", type=positive_float("--ridge"),
                   help="ridge weight (kernel-ridge, selective)" + own)
    g.add_argument("--penalty", choices=choices("LinearSVC", "penalty"),
                   help="linear-svc penalty" + own)
    g.add_argument("--loss", choices=option_choices("--loss", ("SVC", "loss"),
                                                    ("BilevelSVR", "loss")),
                   help="svc/linear-svc loss (hinge, squared_hinge); bilevel-svr data loss "
                   "(epsilon_insensitive, squared, huber)" + own)
    g.add_argument("--probability", action="store_const", const=True,
                   help="svc: fit Platt probabilities (predict writes them)" + own)
    g.add_argument("--class-weight", choices=choices("BilevelSVC", "class_weight"),
                   help="reweight classes" + own)
    g.add_argument("--penalty-weight", type=positive_float("--penalty-weight"),
                   help="elastic-net: the thesis's beta (scalar L1 weight)" + own)
    g.add_argument("--l2-penalty", type=auto_or(positive_float("--l2-penalty")),
                   help="elastic-net/bilevel/bilevel-svr: the thesis's alpha (bilevel, "
                   "bilevel-svr: or auto, their rule)" + own)
    g.add_argument("--hinge-smoothing", type=positive_float("--hinge-smoothing"),
                   help="elastic-net/bilevel: the thesis's mu" + own)
    g.add_argument("--l1-smoothing", type=auto_or(nonneg_float("--l1-smoothing")),
                   help="elastic-net/bilevel/bilevel-svr: the thesis's gamma (0: the exact "
                   "L1 penalty of elastic-net and bilevel; auto: bilevel-svr's rule)" + own)
    g.add_argument("--loss-smoothing", type=positive_float("--loss-smoothing"),
                   help="bilevel-svr: width of the epsilon tube's soft edges (standard "
                   "deviations of the target)" + own)
    g.add_argument("--bilevel-model", choices=choices("BilevelSVC", "model"),
                   help="bilevel, bilevel-svr: one L1 weight, one per feature or one per "
                   "group (auto: the estimator's choice by the table's shape)" + own)
    g.add_argument("--groups", metavar="SPEC",
                   help="feature groups (elastic-net, bilevel): 'mean=0-9,se=10-19' or name "
                   "prefixes 'mean,error,worst' (default: none)")
    g.add_argument("--criterion",
                   choices=option_choices("--criterion", ("BilevelSVC", "criterion"),
                                          ("BilevelSVR", "criterion")),
                   metavar="CRITERION",
                   help="bilevel upper-level criterion ("
                   + ", ".join(choices("BilevelSVC", "criterion")) + "); bilevel-svr: "
                   + " or ".join(choices("BilevelSVR", "criterion")) + own)
    g.add_argument("--cv", type=positive_int("--cv", 2),
                   help="folds of k-fold criteria" + own)
    g.add_argument("--selectivity", type=positive_float("--selectivity"),
                   help="selective models: the selectivity mu of the selective-ridge "
                   "penalty" + own)
    g.add_argument("--max-iter", type=positive_int("--max-iter"),
                   help="iteration cap" + own)
    g.add_argument("--tol", type=positive_float("--tol"), help="stopping tolerance" + own)
    g.add_argument("--param", type=key_value, action="append", default=[],
                   metavar="NAME=VALUE",
                   help="any other constructor parameter (JSON value), repeatable "
                   "(default: none)")
    return g


def build_estimator(args, spec, feature_names, *, groups=None, skip=()):
    """The estimator of ``spec`` with the options given on the command line.

    Raises ``ValueError`` naming an option that the model does not have.
    """
    cls = spec.load()
    valid = cls().get_params(deep=False)
    params = {k: v for k, v in spec.defaults.items() if k in valid}
    for dest, pname in OPTION_PARAMS.items():
        if dest in skip:
            continue
        v = getattr(args, dest, None)
        if v is None:
            continue
        if pname not in valid:
            users = [m.name for m in MODELS.values() if _has_param(m, pname)]
            opt = "--" + dest.replace("_", "-")
            raise ValueError(f"{opt} does not apply to --model {spec.name}"
                             + (f" (it applies to {', '.join(users)})" if users else ""))
        params[pname] = v
    if "l1_smoothing" in params:
        check_exact_l1(params["l1_smoothing"], cls.__name__)
    # the feature-groups parameter is feature_groups, or groups for an estimator that
    # names it so; the CLI's option is --groups for both
    gname = group_parameter(valid)
    if getattr(args, "groups", None):
        if gname is None:
            raise ValueError(f"--groups does not apply to --model {spec.name}")
        from ..data import parse_groups

        params[gname] = parse_groups(args.groups, feature_names)
    elif groups is not None and gname is not None and params.get("model") == "group":
        params[gname] = groups
    if spec.progress and "verbose" in valid and "verbose" not in skip:
        from .output import progress_mode

        params["verbose"] = int(progress_mode(args) is not None)
    for name, v in getattr(args, "param", []) or []:
        if name not in valid:
            raise ValueError(f"--param {name}: {cls.__name__} has no parameter {name!r}; it "
                             f"has {', '.join(sorted(valid))}")
        params[name] = v
    if "random_state" in valid and "random_state" not in params:
        params["random_state"] = args.seed
    try:
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"--model {spec.name}: {exc}") from None


def group_parameter(params):
    """The name of an estimator's feature-groups parameter among ``params``
    (``feature_groups``, or ``groups`` where it has not been renamed), or None."""
    for name in ("feature_groups", "groups"):
        if name in params:
            return name
    return None


def _has_param(spec, pname):
    try:
        return pname in spec.load()().get_params(deep=False)
    except ValueError:
        return False


def search_space(spec, est, *, method, grid_size, ranges=()):
    """Grid (lists) or distributions (scipy ``loguniform``) over the model's main
    parameters, on log scales; ``ranges`` (NAME, (low, high)) override or add ranges."""
    from scipy.stats import loguniform

    from ..parallel import log_grid

    valid = est.get_params(deep=False)
    space = {k: v for k, v in spec.search.items() if k in valid}
    if valid.get("kernel") == "linear":
        space.pop("gamma", None)
    for name, (lo, hi) in ranges:
        if name not in valid:
            raise ValueError(f"--range {name}: {type(est).__name__} has no parameter {name!r}")
        space[name] = (lo, hi)
    if not space:
        raise ValueError(f"--model {spec.name} has no parameters to search; give --range "
                         "NAME=LOW:HIGH")
    if method == "grid":
        return {k: [float(v) for v in log_grid(lo, hi, grid_size)]
                for k, (lo, hi) in space.items()}
    return {k: loguniform(lo, hi) if hi > lo else [float(lo)]
            for k, (lo, hi) in space.items()}


def parse_range(text):
    """``NAME=LOW:HIGH`` (both > 0)."""
    import argparse

    name, sep, rng = text.partition("=")
    lo, sep2, hi = rng.partition(":")
    try:
        lo, hi = float(lo), float(hi)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=LOW:HIGH, got {text!r}") from None
    if not (sep and sep2 and name and math.isfinite(lo) and math.isfinite(hi)
            and 0 < lo <= hi):
        raise argparse.ArgumentTypeError(
            f"expected NAME=LOW:HIGH with 0 < LOW <= HIGH, got {text!r}")
    return name.strip().replace("-", "_"), (lo, hi)
