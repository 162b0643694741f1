"""``bisvm select --kernel rbf``: nonlinear feature selection by learned RBF widths.

One width per feature (automatic relevance determination) is learned with C by
hypergradient descent of a k-fold criterion -- :class:`bisvm.AutoSVC` with
``widths="per_feature"``, or :class:`bisvm.AutoSVR` on a continuous target -- and the features
whose relevance :math:`\\gamma_j\\operatorname{var}(x_j)` passes the one-standard-error
support rule are kept (Chapelle, Vapnik, Bousquet & Mukherjee 2002, "Choosing multiple
parameters for support vector machines"). Unlike the linear selector it finds features
that act only through interactions. The estimator standardises inside, so the raw
columns are given to it (a sparse svmlight X stays sparse).
"""

from __future__ import annotations

import time

from . import common
from .select_shared import SelectRun, input_record

__all__ = ["check_kernel_options", "kernel_selector", "run_kernel_select",
           "print_kernel_select"]


def check_kernel_options(opts):
    """The linear selector's options that mean nothing for the kernel selector."""
    clashes = [(opts.model != "auto", "--model (one L1 weight, per feature or per group)"),
               (bool(opts.groups), "--groups"), (bool(opts.stability), "--stability"),
               (opts.learn_l2, "--learn-l2")]
    bad = [name for on, name in clashes if on]
    if bad:
        raise ValueError(f"--kernel rbf learns one RBF width per feature; {', '.join(bad)} "
                         "belong to the linear selector (--kernel linear)")


def kernel_selector(opts, model, *, linear_defaults):
    """The ``AutoSVC`` (``model="svc"``) or ``AutoSVR`` (``"svr"``) of ``select --kernel
    rbf``, one width per feature. ``--cv`` and ``--max-iter`` default to the linear
    selector's values (``linear_defaults``); left at those, they are not passed on, so
    the kernel models keep their own defaults."""
    from .kernel_tune import build_auto

    skip = tuple(d for d, v in linear_defaults.items() if getattr(opts, d) == v)
    return build_auto(opts, model, widths="per_feature", n_jobs=opts.n_jobs, skip=skip)


def run_kernel_select(opts, source, task, reason, *, t_start, linear_defaults):
    """The ``SelectRun`` of ``select --kernel rbf`` on the Dataset ``source``
    (``linear_defaults``: the linear selector's ``--cv`` and ``--max-iter`` defaults,
    which the kernel models do not inherit)."""
    import numpy as np

    from .. import data
    from .kernel_tune import auto_record, fit_auto
    check_kernel_options(opts)
    X, y, names = source.X, source.y, list(source.feature_names)
    clf = task == "classification"
    Xtr, Xte, ytr, yte = data.train_test_split_seeded(
        X, y, test_size=opts.test_size, random_state=opts.seed, stratify=clf)
    est = kernel_selector(opts, "svc" if clf else "svr", linear_defaults=linear_defaults)
    notes = list(source.notes)
    warns = []
    t0 = time.perf_counter()
    with common.collect_warnings(warns):
        fit_auto(opts, est, Xtr, ytr)
    seconds = time.perf_counter() - t0
    rec = auto_record(est, names)
    result = {
        "command": "select", "kernel": "rbf", "task": task, "task_reason": reason,
        "source": source.source, "input": input_record(X, Xtr),
        "model": f"{type(est).__name__}(widths='per_feature')",
        "n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]),
        "n_features": len(names), "n_selected": len(rec["selected_features"]),
        **rec, "seconds": seconds, "notes": notes + warns,
    }
    if Xte.shape[0]:
        score = float(est.score(Xte, yte))
        result["test_accuracy" if clf else "test_r2"] = score
        if not clf:
            pred = np.asarray(est.predict(Xte), dtype=float)
            result["test_rmse"] = float(np.sqrt(np.mean((pred - yte) ** 2)))
    if opts.out:
        result["plots"] = _plots(opts, est, names)
    result["total_seconds"] = time.perf_counter() - t_start
    return SelectRun(result=result, estimator=est, grid=None, names=names, X_train=Xtr,
                     X_test=Xte, y_train=ytr, y_test=yte, binary_target=None)


def _plots(opts, est, names):
    from pathlib import Path

    from .. import plots

    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    ax = plots.plot_learned_widths(names, est.feature_importances_, est.support_)
    return [str(plots.save(ax, out / "widths.png"))]


def print_kernel_select(r):
    """The text report of ``bisvm select --kernel rbf``."""
    from .kernel_tune import print_widths
    from .output import print_notes

    p = print
    p(f"bisvm select --kernel rbf: {r['model']} on {r['source']} ({r['n_train']} training "
      f"rows, {r['n_test']} test rows)")
    print_notes(r["notes"])
    p(f"selected {r['n_selected']} of {r['n_features']} features (one-standard-error rule "
      f"on the relevance; threshold {r['threshold']:.4g}): "
      + ", ".join(r["selected_features"][:12]) + (" ..." if r["n_selected"] > 12 else ""))
    print_widths(r)
    chosen = ", ".join(f"{k} {v:.4g}" for k, v in r["chosen"].items())
    p(f"learned {chosen}; criterion {r['criterion_value']:.4g} after {r['iterations']} "
      f"outer iterations, {r['lower_level_solves']} lower-level solves, "
      f"{r['seconds']:.2f} s")
    kernel = "exact kernel" if r["approximation"] == "none" else \
        f"Nyström approximation of rank {r['n_components']}"
    refit = r.get("final_model", r.get("lower_level"))
    p(f"tuned on the {kernel}" + (f"; refitted model: {refit}" if refit else ""))
    if "test_accuracy" in r:
        p(f"test accuracy  {r['test_accuracy']:.4f}")
    if "test_r2" in r:
        p(f"test R2  {r['test_r2']:.4f}   test RMSE  {r['test_rmse']:.6g}  (target units)")
    for path in r.get("plots", []):
        p(f"wrote {path}")
