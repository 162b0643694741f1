"""The self-tuning RBF models behind the CLI: ``bisvm tune --method bilevel --model
svc|svr`` (:class:`bisvm.AutoSVC`, :class:`bisvm.AutoSVR`) and ``bisvm select --kernel
rbf`` (``AutoSVC(widths="per_feature")`` as a nonlinear feature selector).

Both learn C (or the ridge), the RBF width -- one shared, or one per feature -- and for
ε-SVR the tube by hypergradient descent of a cross-validated criterion (Keerthi,
Sindhwani & Chapelle 2007; per-feature widths as Chapelle, Vapnik, Bousquet & Mukherjee
2002), so the options that fix those values (``--C``, ``--gamma``, ``--epsilon``,
``--ridge``, a kernel other than ``rbf``) are refused rather than silently ignored.
Beyond a size the estimators tune on a Nyström approximation of the kernel (Williams &
Seeger 2001); ``--approximation`` and ``--n-components`` reach those parameters, and
left out they keep the estimator's own defaults (the option's default is None, and
nothing is passed). Only the public estimators are used. Standard library at import.
"""

from __future__ import annotations

from . import common
from .defaults import choices, default

__all__ = ["KERNEL_MODELS", "WIDTHS", "APPROXIMATIONS", "add_widths_option",
           "add_approximation_options", "build_auto", "check_kernel_args", "fit_auto",
           "auto_record"]

#: ``--model`` of ``bisvm tune --method bilevel`` -> the self-tuning estimator
KERNEL_MODELS = {"svc": "AutoSVC", "svr": "AutoSVR"}
#: ``--widths`` choices: AutoSVC's and AutoSVR's ``widths``
WIDTHS = choices("AutoSVC", "widths")
#: ``--approximation`` -> the estimators' ``approximation`` (``none``: None, the exact
#: kernel)
APPROXIMATIONS = dict(sorted({**{c: c for c in choices("AutoSVC", "approximation")},
                              "none": None}.items()))
#: options whose value the self-tuning models learn (argparse dest -> option)
LEARNED_OPTIONS = {"C": "--C", "gamma": "--gamma", "epsilon": "--epsilon", "ridge": "--ridge"}


def add_widths_option(g, what, *, approximation=True):
    """``--widths shared|per_feature`` and, with ``approximation``, the options of
    :func:`add_approximation_options`."""
    g.add_argument("--widths", choices=WIDTHS, default=None,
                   help=f"{what}: one RBF width for all features, or one per feature "
                   "(automatic relevance determination: a learned width near 0 drops its "
                   "feature)")
    if approximation:
        add_approximation_options(g, what.split(" (")[0])


def add_approximation_options(g, what):
    """``--approximation auto|none|nystroem`` and ``--n-components M``; both default to
    None, which leaves the estimator's own default in force (:func:`build_auto`)."""
    g.add_argument("--approximation", choices=tuple(APPROXIMATIONS), default=None,
                   help=f"{what}: tune and refit on the exact kernel (none) or on its "
                   "Nyström approximation of rank --n-components (nystroem); auto: "
                   "Nyström beyond the estimator's row threshold, with a warning "
                   f"(default: the estimator's, {default('AutoSVC', 'approximation')})")
    g.add_argument("--n-components", type=common.positive_int("--n-components"),
                   default=None, metavar="M",
                   help=f"{what}: landmark rows of the Nyström approximation (default: "
                   f"the estimator's, {default('AutoSVC', 'n_components')})")


def check_kernel_args(args, model):
    """Refuse the options that fix what the self-tuning ``model`` learns."""
    for dest, option in LEARNED_OPTIONS.items():
        if getattr(args, dest, None) is not None:
            raise ValueError(f"--method bilevel --model {model} learns {option[2:]}: drop "
                             f"{option} (or use --method grid|random to search it)")
    kernel = getattr(args, "kernel", None)
    if kernel not in (None, "rbf"):
        raise ValueError(f"--method bilevel --model {model} tunes an RBF kernel; got "
                         f"--kernel {kernel}")


def build_auto(args, model, *, widths=None, n_jobs=None, skip=()):
    """The :class:`bisvm.AutoSVC` or :class:`bisvm.AutoSVR` of the command line:
    ``--widths``, ``--cv``, ``--max-iter``, ``--tol``, ``--seed``, ``--approximation``,
    ``--n-components`` and ``--param NAME=VALUE`` for any other constructor parameter;
    ``skip`` names options left at the estimator's default, as is every option not given
    (None)."""
    import bisvm

    cls = getattr(bisvm, KERNEL_MODELS[model])
    valid = cls().get_params(deep=False)
    params = {"widths": widths or getattr(args, "widths", None)
              or default(KERNEL_MODELS[model], "widths"),
              "random_state": getattr(args, "seed", 0)}
    for dest in ("cv", "max_iter", "tol"):
        v = None if dest in skip else getattr(args, dest, None)
        if v is not None:
            params[dest] = v
    if n_jobs is not None:
        params["n_jobs"] = n_jobs
    approx = getattr(args, "approximation", None)
    if approx is not None:
        params["approximation"] = APPROXIMATIONS[approx]
    if getattr(args, "n_components", None) is not None:
        params["n_components"] = args.n_components
    for name, v in getattr(args, "param", None) or ():
        if name not in valid:
            raise ValueError(f"--param {name}: {cls.__name__} has no parameter {name!r}; it "
                             f"has {', '.join(sorted(valid))}")
        params[name] = v
    return cls(**params)


def fit_auto(args, est, X, y):
    """Fit ``est`` with a progress line (its outer loop runs for seconds to minutes)."""
    what = f"{type(est).__name__}(widths={est.widths!r}): learning C and the RBF widths"
    with common.progress(args, what, 1, unit="fit") as bar:
        est.fit(X, y)
        bar(1)
    return est


def chosen_values(est):
    """The learned scalars: C (or the ridge of kernel ridge), ε for ε-SVR, and the shared
    width (per-feature widths are in :func:`widths_by_name`)."""
    import numpy as np

    out = {}
    for name in ("C", "ridge", "epsilon"):
        v = getattr(est, name + "_", None)
        if v is not None:
            out[name] = float(v)
    g = np.asarray(est.gamma_, dtype=float)
    if g.ndim == 0:
        out["gamma"] = float(g)
    return out


def widths_by_name(est, names):
    """``{name: width}`` of a per-feature fit (widths on the standardised features; 0 for
    a dropped feature), or None for a shared width."""
    import numpy as np

    g = np.asarray(est.gamma_, dtype=float)
    if g.ndim == 0:
        return None
    return {names[j]: float(g[j]) for j in range(g.size)}


def auto_record(est, names):
    """The JSON-able record of a fitted self-tuning model: what it learned, the
    criterion, the cost, and with per-feature widths the features kept by importance."""
    import numpy as np

    imp = np.asarray(est.feature_importances_, dtype=float)
    rec = {
        "chosen": chosen_values(est),
        "criterion": f"{type(est).__name__}'s cross-validated criterion "
                     f"({getattr(est, 'criterion', None) or getattr(est, 'lower_', '')}, "
                     "lower is better)",
        "criterion_value": float(est.cv_value_),
        "iterations": int(est.n_iter_),
        "lower_level_solves": int(est.n_solves_),
        "refit": "its own dual solution" if getattr(est, "estimator_", None) is None
                 else type(est.estimator_).__name__,
    }
    if getattr(est, "lower_", None) is not None:
        rec["lower_level"] = str(est.lower_)
    if getattr(est, "final_model_", None) is not None:
        rec["final_model"] = str(est.final_model_)
    rec["approximation"] = str(est.approximation_ or "none")
    if est.approximation_ == "nystroem":
        rec["n_components"] = int(len(est.landmark_indices_))
    widths = widths_by_name(est, names)
    if widths is not None:
        order = [j for j in np.argsort(-imp, kind="stable") if est.support_[j]]
        rec["widths"] = widths
        rec["importance"] = {names[j]: float(imp[j]) for j in np.argsort(-imp, kind="stable")}
        rec["selected_features"] = [names[j] for j in order]
        rec["threshold"] = float(est.threshold_)
    return rec


def print_widths(r, limit=12):
    """The learned per-feature widths, largest importance first."""
    if "widths" not in r:
        return
    imp = r["importance"]
    print("learned widths (standardised features; importance = width x variance, "
          "normalised):")
    width = max(len(k) for k in list(imp)[:limit])
    for k in list(imp)[:limit]:
        kept = "kept" if k in r["selected_features"] else "dropped"
        print(f"  {k:<{width}s}  width {r['widths'][k]:.4g}  importance {imp[k]:.3f}  {kept}")
    if len(imp) > limit:
        print(f"  ... {len(imp) - limit} more")
