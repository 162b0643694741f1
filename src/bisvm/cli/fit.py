"""``bisvm fit``: train one estimator on a table and save it with its scaling."""

from __future__ import annotations

import contextlib
import os
import sys
import time

from . import common
from .models import MODELS, add_model_args, build_estimator

DESCRIPTION = """\
Train one estimator on a table (--data FILE --target COLUMN) or a bundled data set
(--dataset NAME), with the features scaled on the training rows, and optionally save it
with its scaling and column schema to a model file (--save model.bisvm) that
`bisvm predict` reads. Options that do not apply to the chosen --model are refused;
any other constructor parameter goes through --param NAME=VALUE. With --test-size the
model is trained on the other rows and scored on the held-out ones.

examples:
  bisvm fit --dataset iris --model svc --C 10 --gamma 0.1 --test-size 0.25
  bisvm fit --data cancer.csv --target target --model bilevel --test-size 0.25 --save cancer.bisvm
  bisvm fit --dataset iris --model kernel-logistic --save iris.bisvm
  bisvm fit --data houses.csv --target price --model svr --kernel rbf --epsilon 0.1
  bisvm fit --data diabetes.csv --target progression --model bilevel-svr --test-size 0.25 \
      --save diabetes.bisvm
"""


def add_parser(sub):
    """Add ``bisvm fit`` to the subcommands ``sub``."""
    p = sub.add_parser("fit", help="train any estimator and save it (--save model.bisvm)",
                       description=DESCRIPTION,
                       formatter_class=_raw())
    common.add_data_args(p)
    add_model_args(p)
    o = common.add_output_args(p)
    o.add_argument("--save", metavar="FILE",
                   help="write the model file (.bisvm; default: none, not saved)")
    p.set_defaults(func=run)
    return p


def _raw():
    import argparse

    return argparse.RawDescriptionHelpFormatter


def _convergence(est):
    """The lower-level solver's convergence record, where the estimator keeps one
    (``ElasticNetSVC.convergence_``, binary problems)."""
    records = getattr(est, "convergence_", None)
    if not records or len(records) != 1:
        return None
    r = records[0]
    solver = getattr(est, "solver", "solver")
    return {"objective": r.objective, "grad_norm": r.grad_norm, "seconds": r.seconds,
            "title": f"Lower-level {solver} solve ({len(r.objective) - 1} iterations)",
            "caption": "Smoothed elastic-net SVM objective and gradient norm per "
                       f"{solver} iteration on the training rows."}


def run(args):
    """Train the ``--model`` estimator on the table, score it, save it with ``--save``, and
    print the record; exit code 0."""
    import numpy as np

    from .. import data

    spec = MODELS[args.model]
    t0 = time.perf_counter()
    common.check_output_path("--save", args.save)
    ds, X, y = common.load_data(args, task=spec.task)
    clf = spec.task == "classification"
    Xtr, Xte, ytr, yte = common.split(args, X, y, classification=clf)
    plan = common.scaling_for(args, spec)
    est = build_estimator(args, spec, ds.feature_names, groups=ds.groups)
    scaler = data.Scaler(plan.method).fit(Xtr)
    Xtr_s = scaler.transform(Xtr)
    notes = list(ds.notes) + [n for n in (plan.note,) if n]
    if scaler.effective_method_ != plan.method:
        notes.append(f"scaling: {scaler.describe()}")
    warns = []
    with common.collect_warnings(warns):
        # stdout is for the results: a verbose estimator's report (LIBSVM's lines) goes to
        # stderr with the progress
        loud = spec.progress and est.get_params(deep=False).get("verbose")
        with contextlib.redirect_stdout(sys.stderr) if loud else contextlib.nullcontext():
            est.fit(Xtr_s, ytr)
        if spec.progress:
            est.set_params(verbose=0)  # display only: not a parameter of the saved model
        train_score = float(est.score(Xtr_s, ytr))
        test_score = float(est.score(scaler.transform(Xte), yte)) if len(yte) else None
        test_rmse = None
        if not clf and len(yte):
            import numpy as np

            res = np.asarray(est.predict(scaler.transform(Xte)), dtype=float) - yte
            test_rmse = float(np.sqrt(np.mean(res ** 2)))
        conv = _convergence(est) if args.save else None
    seconds = time.perf_counter() - t0
    result = {
        "command": "fit",
        "model": spec.name,
        "estimator": type(est).__name__,
        "params": {k: v for k, v in est.get_params(deep=False).items()
                   if isinstance(v, (int, float, str, bool, type(None), list, dict))},
        "source": ds.source,
        "n_train": int(len(ytr)),
        "n_test": int(len(yte)),
        "n_features": int(X.shape[1]),
        "scaling": scaler.effective_method_,
        "standardized_inside": plan.inside,
        "coef_units": plan.coef_units,
        "score_name": "accuracy" if clf else "R2",
        "train_score": train_score,
        "test_score": test_score,
        **({} if test_rmse is None else {"test_rmse": test_rmse}),
        "seconds": seconds,
        "notes": notes,
        "warnings": warns,
    }
    if clf:
        result["classes"] = [common.to_py(c) for c in est.classes_]
    if hasattr(est, "penalty_weights_") and hasattr(est, "penalty_weight_names_"):
        result["penalty_weights"] = common.named_weights(est, ds.feature_names)
        if hasattr(est, "refined_"):
            from .learned import kept_model, refinement_messages

            notes.extend(refinement_messages(est))
            result["refined"] = common.to_py(est.refined_)
            result["model_kept"] = kept_model(est)
    for attr, key in (("n_iter_", "iterations"), ("validation_score_", "validation_score"),
                      ("n_support_", "n_support")):
        if hasattr(est, attr):
            result[key] = common.to_py(np.asarray(getattr(est, attr)))
    freq = getattr(est, "selection_frequency_", None)
    if freq is not None and np.ndim(freq) == 1 and len(freq) == len(ds.feature_names):
        result["selection_frequency"] = dict(zip(ds.feature_names, map(float, freq)))
    per_class = getattr(est, "selection_frequency_per_class_", None)
    if per_class is not None and clf and np.shape(per_class) == (
            len(est.classes_), len(ds.feature_names)):
        # one-vs-rest: each class's own share (selection_frequency is their union's)
        result["selection_frequency_per_class"] = {
            str(common.to_py(c)): dict(zip(ds.feature_names, map(float, row)))
            for c, row in zip(est.classes_, per_class)}
    if hasattr(est, "feature_importances_"):
        imp = np.asarray(est.feature_importances_)
        result["selected_features"] = [ds.feature_names[j] for j in np.argsort(-imp)
                                       if imp[j] > 0]
    if args.save:
        extra = {"command": "fit", "model": spec.name, "trained_on": ds.source,
                 "n_train": int(len(ytr)), "train_score": train_score}
        if test_score is not None:
            extra["test_score"] = test_score
        if conv is not None:
            extra["convergence"] = conv
        common.save_checked(est, args.save, ds=ds, scaler=scaler, extra=extra,
                            X_check=Xtr_s)
        result["saved"] = os.fspath(args.save)
    common.emit(args, result, _print)
    return 0


def _print(r):
    p = print
    p(f"bisvm fit: {r['estimator']} ({r['model']}) on {r['source']}, {r['n_train']} training "
      f"rows, {r['n_features']} features, "
      + ("columns standardised inside the model" if r["standardized_inside"]
         else f"{r['scaling']} scaling"))
    common.print_notes(r["notes"], r["warnings"])
    # verbose is how the run shows progress, not a parameter of the model
    shown = {k: v for k, v in r["params"].items() if v is not None and k != "verbose"}
    p("parameters: " + ", ".join(f"{k}={v}" for k, v in sorted(shown.items())))
    if "classes" in r:
        p("classes: " + ", ".join(map(str, r["classes"])))
    p(f"training {r['score_name']}  {r['train_score']:.4f}")
    if r["test_score"] is not None:
        p(f"test {r['score_name']}      {r['test_score']:.4f}  ({r['n_test']} held-out rows)")
    if "test_rmse" in r:
        p(f"test RMSE    {r['test_rmse']:.6g}  (target units)")
    common.print_selected(r)
    p(f"{r['seconds']:.2f} s")
    if "saved" in r:
        p(f"wrote {r['saved']}")
