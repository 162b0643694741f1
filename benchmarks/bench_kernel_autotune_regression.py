"""AutoSVR against a grid search of bisvm's SVR on real regression tables.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernel_autotune_regression.py \
        [--tables diabetes,cpu,...] [--seeds 0,1,2,3,4] [--methods autosvr,grid_svr] \
        [--jobs J]

Methods (each fit single-threaded in a process of its own, after a warm-up fit on a tiny
problem -- for the grid, a two-point grid -- that pays imports and numba's
compilations; CPU seconds by ``time.process_time``):

* ``autosvr``: ``AutoSVR()`` (defaults; ``lower="auto"``, which is kernel ridge at these
  sizes);
* ``autosvr_svr``: ``AutoSVR(lower="svr")``, the L2-loss ε-SVR lower level;
* ``grid_svr``: ``GridSearchCV`` over bisvm's ``SVR`` (RBF), C ∈ 10^[-2..3] (6 points),
  γ ∈ 6 points log-spaced over 10^[-1.5, 1] / d around scikit-learn's ``"scale"``,
  ε ∈ {0.01, 0.1, 0.5}, 5-fold, on standardised columns and a standardised target
  (``TransformedTargetRegressor``), refit on all training rows.

Tables: the real tables of ``_regression_panel_data.py`` (75/25 split by the seed, at
most 1,000 rows); held-out test R². Writes ``benchmarks/results/
kernel_autotune_regression.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

METHODS = ("autosvr", "autosvr_svr", "grid_svr")
TABLES = ("diabetes", "cpu", "bdims", "penguins", "mlb1")


def build(method, d, warm_up=False):
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from bisvm.estimators.auto_svr import AutoSVR
    from bisvm.estimators.svm import SVR

    if method == "autosvr":
        return AutoSVR()
    if method == "autosvr_svr":
        return AutoSVR(lower="svr")
    if warm_up:  # the same code path on a two-point grid: imports and compilations
        grid = {"svr__C": [1.0, 10.0], "svr__gamma": [1.0 / d], "svr__epsilon": [0.1]}
        search = GridSearchCV(make_pipeline(StandardScaler(), SVR()), grid, cv=2)
        return TransformedTargetRegressor(regressor=search, transformer=StandardScaler())
    grid = {"svr__C": list(10.0 ** np.arange(-2, 4)),
            "svr__gamma": list(10.0 ** np.linspace(-1.5, 1.0, 6) / d),
            "svr__epsilon": [0.01, 0.1, 0.5]}
    search = GridSearchCV(make_pipeline(StandardScaler(), SVR()), grid, cv=5)
    return TransformedTargetRegressor(regressor=search, transformer=StandardScaler())


def worker(method, table, seed):
    import warnings

    from _regression_panel_data import load
    from sklearn.metrics import r2_score

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((60, 3))
    build(method, 3, warm_up=True).fit(Xw, Xw[:, 0] + 0.1 * rng.standard_normal(60))
    t, Xtr, Xte, ytr, yte = load(table, seed)
    Xtr, Xte = np.asarray(Xtr, float), np.asarray(Xte, float)
    est = build(method, Xtr.shape[1])
    c0, w0 = time.process_time(), time.perf_counter()
    est.fit(Xtr, ytr)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    out = {"method": method, "table": table, "seed": seed, "n_train": int(Xtr.shape[0]),
           "d": int(Xtr.shape[1]), "r2": float(r2_score(yte, est.predict(Xte))),
           "cpu": cpu, "wall": wall}
    if method.startswith("autosvr"):
        out["lower"] = est.lower_
    print("@@" + json.dumps(out))


def run_one(method, table, seed):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    p = subprocess.run([sys.executable, __file__, "--worker", "--method", method,
                        "--tables", table, "--seeds", str(seed)],
                       capture_output=True, text=True, env=env, check=False)
    for line in p.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    raise RuntimeError(f"{method} {table} {seed} failed:\n{p.stderr[-2000:]}")


def report(rows, tables, methods, command):
    lines = [f"# AutoSVR vs a grid over bisvm's SVR\n\nCommand:\n\n    {command}\n",
             "Each fit single-threaded in its own process (CPU seconds, `time.process_time`, "
             "after a warm-up fit), held-out test R² (25 % of each table), mean over the "
             "seeds ± paired standard error of the difference to the grid. "
             "The machine was shared with other jobs during the run (2 cores): CPU "
             "times are noisy, ratios less so.\n"]
    head = "| table | n×d |" + "".join(f" R² {m} |" for m in methods) + \
        "".join(f" CPU s {m} |" for m in methods) + \
        "".join(f" CPU ratio {m}/grid |" for m in methods if m != "grid_svr") + "\n"
    lines.append(head + "|" + "---|" * (2 + 2 * len(methods) + len(methods) - 1))
    agg = {m: {"r2": [], "ratio": []} for m in methods}
    for t in tables:
        sub = [r for r in rows if r["table"] == t]
        if not sub:
            continue
        by = {m: {r["seed"]: r for r in sub if r["method"] == m} for m in methods}
        seeds = sorted(set.intersection(*[set(v) for v in by.values()]))
        if not seeds:
            continue
        n, d = sub[0]["n_train"], sub[0]["d"]
        cells = []
        for m in methods:
            r2 = np.array([by[m][s]["r2"] for s in seeds])
            g = np.array([by["grid_svr"][s]["r2"] for s in seeds])
            se = float(np.std(r2 - g, ddof=1) / np.sqrt(len(seeds))) if len(seeds) > 1 else 0.0
            cells.append(f" {r2.mean():.3f}" + (f" ± {se:.3f}" if m != "grid_svr" else "") + " |")
            agg[m]["r2"].append(r2.mean())
        for m in methods:
            cells.append(f" {np.mean([by[m][s]['cpu'] for s in seeds]):.2f} |")
        gcpu = np.mean([by["grid_svr"][s]["cpu"] for s in seeds])
        for m in methods:
            if m == "grid_svr":
                continue
            ratio = np.mean([by[m][s]["cpu"] for s in seeds]) / gcpu
            agg[m]["ratio"].append(ratio)
            cells.append(f" {ratio:.3f} |")
        lines.append(f"| {t} | {n}×{d} |" + "".join(cells))
    lines.append("\n**Means over tables**\n")
    for m in methods:
        s = f"- `{m}`: mean test R² {np.mean(agg[m]['r2']):.4f}"
        if m != "grid_svr":
            s += f", mean CPU ratio to the grid {np.mean(agg[m]['ratio']):.3f}"
        lines.append(s)
    lowers = sorted({(r["method"], r.get("lower")) for r in rows if r.get("lower")})
    lines.append("\nLower level that ran (`lower_`): " +
                 ", ".join(f"`{m}` → `{lo}`" for m, lo in lowers))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--method", default=None)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--jobs", type=int, default=1, help="fits run at once")
    ap.add_argument("--reference", default=None,
                    help="JSON of an earlier run whose rows (e.g. the grid's) join the report")
    ap.add_argument("--out", default=str(HERE / "results" / "kernel_autotune_regression"))
    a = ap.parse_args()
    if a.worker:
        worker(a.method, a.tables, int(a.seeds))
        return
    tables, methods = a.tables.split(","), a.methods.split(",")
    seeds = [int(s) for s in a.seeds.split(",")]
    command = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python " + \
        "benchmarks/bench_kernel_autotune_regression.py " + " ".join(sys.argv[1:])
    tasks = [(m, t, s) for t in tables for s in seeds for m in methods]
    rows = []
    if a.reference:
        rows = [r for r in json.loads(Path(a.reference).read_text())
                if r["table"] in tables and r["seed"] in seeds and r["method"] not in methods]
        methods = [m for m in METHODS if m in methods or any(r["method"] == m for r in rows)]
    # the fits run in parallel processes (--jobs), each single-threaded and timed by its
    # own CPU clock; results are written after every fit, so an interrupted run keeps
    # what it measured
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for r in pool.map(lambda task: run_one(*task), tasks):
            rows.append(r)
            print(f"{r['table']:12s} seed {r['seed']} {r['method']:12s} R² {r['r2']:.4f} "
                  f"CPU {r['cpu']:.2f}s", flush=True)
            Path(a.out + ".json").write_text(json.dumps(rows, indent=1))
            Path(a.out + ".md").write_text(report(rows, tables, methods, command))
    print(Path(a.out + ".md").read_text())


if __name__ == "__main__":
    main()
