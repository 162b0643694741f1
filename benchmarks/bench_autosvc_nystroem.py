"""AutoSVC beyond the exact sizes: the default ``AutoSVC()`` on a table of more than
20,000 training rows (where ``approximation="auto"`` tunes and fits the L2-SVM on a
rank-500 Nyström approximation), against the exact AutoSVC and the approximate one on
a random subsample of the same training rows, all tested on the same held-out rows.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_autosvc_nystroem.py \
        [--seeds 0,1,2] [--subsample 5000] [--jobs 2]

Tables (``--tables``): ``cps1988``, ``AER::CPS1988`` (28,155 rows; March 1988 Current
Population Survey), the classification "weekly wage above the median" from education,
experience, ethnicity, SMSA, region and part-time work (region one-hot, first level
dropped: 8 columns; 6,362 distinct rows, as the columns are discrete); and
``interaction``, 30,000 rows of 10 standard-normal columns with
y = 1[x0·x1 + x2·x3 > 0] and 10 % of the labels flipped (continuous columns, no
repeated rows). Per split seed, 5,000 test rows, the others for training.

Methods (each fit single-threaded in a process of its own, after a warm-up fit on a
tiny problem that pays imports and numba's compilations; CPU seconds by
``time.process_time``):

* ``auto_full``: ``AutoSVC(random_state=0)`` on all training rows (23,155 > 20,000:
  the Nyström approximation, with its warning);
* ``exact_sub``: ``AutoSVC(approximation=None)`` on a random subsample of the training
  rows (``--subsample``);
* ``nystroem_sub``: ``AutoSVC(approximation="nystroem", random_state=0)`` on the same
  subsample.

Writes ``benchmarks/results/autosvc_nystroem.md`` and ``.json``.
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

METHODS = ("auto_full", "exact_sub", "nystroem_sub")
N_TEST = 5000
TABLES = ("cps1988", "interaction")
SYNTHETIC_ROWS = 30000
SYNTHETIC_SEED = 20261


def load(seed, subsample, table="cps1988"):
    """Test rows, all training rows and the subsample of them, by the split seed."""
    from bench_kernel_autotune_regression import big_table

    if table == "cps1988":
        X, logwage = big_table("cps1988")
        y = (logwage > np.median(logwage)).astype(int)
    else:  # the interaction problem, continuous columns: no repeated rows
        rng = np.random.default_rng(SYNTHETIC_SEED)
        X = rng.standard_normal((SYNTHETIC_ROWS, 10))
        y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] > 0).astype(int)
        flip = rng.random(y.size) < 0.1
        y[flip] = 1 - y[flip]
    idx = np.random.default_rng(seed).permutation(X.shape[0])
    te, tr = idx[:N_TEST], idx[N_TEST:]
    sub = tr[np.random.default_rng(seed + 1000).choice(tr.size, subsample, replace=False)]
    return X, y, te, tr, sub


def worker(method, seed, subsample, table):
    import warnings

    from bisvm.estimators.auto_svc import AutoSVC

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((80, 3))
    yw = (Xw[:, 0] > 0).astype(int)
    AutoSVC(max_iter=2).fit(Xw, yw)
    AutoSVC(max_iter=2, approximation="nystroem", n_components=20).fit(Xw, yw)
    X, y, te, tr, sub = load(seed, subsample, table)
    rows = tr if method == "auto_full" else sub
    est = {"auto_full": AutoSVC(random_state=0),
           "exact_sub": AutoSVC(approximation=None),
           "nystroem_sub": AutoSVC(approximation="nystroem", random_state=0)}[method]
    c0, w0 = time.process_time(), time.perf_counter()
    est.fit(X[rows], y[rows])
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    out = {"method": method, "table": table, "seed": seed, "n_train": int(rows.size),
           "d": int(X.shape[1]),
           "accuracy": float(est.score(X[te], y[te])), "cpu": cpu, "wall": wall,
           "approximation": est.approximation_, "C": float(est.C_),
           "gamma": float(est.gamma_), "n_solves": int(est.n_solves_)}
    print("@@" + json.dumps(out))


def run_one(method, seed, subsample, table):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    p = subprocess.run([sys.executable, __file__, "--worker", "--method", method,
                        "--seeds", str(seed), "--subsample", str(subsample),
                        "--tables", table],
                       capture_output=True, text=True, env=env, check=False)
    for line in p.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    raise RuntimeError(f"{method} {table} {seed} failed:\n{p.stderr[-2000:]}")


def report(rows, command):
    loads = [r["load"] for r in rows]
    lines = [f"# AutoSVC on the Nyström approximation\n\nCommand:\n\n    {command}\n",
             "Tables: `cps1988` (`AER::CPS1988`, weekly wage above the median, 8 columns) "
             "and `interaction` (30,000 rows of 10 standard-normal columns, "
             "y = 1[x0·x1 + x2·x3 > 0] with 10 % of the labels flipped); 5,000 test rows per "
             "split seed, the other rows for training. Each fit single-threaded in its own "
             "process (CPU seconds, `time.process_time`, after a warm-up fit); mean over the "
             "seeds ± standard "
             "error. The 2-core machine was shared with other jobs: one-minute load "
             f"average {min(loads):.1f}-{max(loads):.1f} at the fits' ends, so CPU times "
             "are inflated and noisy.\n",
             "| table | method | training rows | approximation | test accuracy | CPU s | C | γ |",
             "|---|---|---|---|---|---|---|---|"]
    for t, m in [(t, m) for t in TABLES for m in METHODS]:
        sub = [r for r in rows if r["method"] == m and r.get("table", "cps1988") == t]
        if not sub:
            continue
        acc = np.array([r["accuracy"] for r in sub])
        se = acc.std(ddof=1) / np.sqrt(acc.size) if acc.size > 1 else 0.0
        lines.append(f"| {t} | `{m}` | {sub[0]['n_train']:,} | {sub[0]['approximation']} | "
                     f"{acc.mean():.4f} ± {se:.4f} | {np.mean([r['cpu'] for r in sub]):.1f} | "
                     f"{np.exp(np.mean(np.log([r['C'] for r in sub]))):.3g} | "
                     f"{np.exp(np.mean(np.log([r['gamma'] for r in sub]))):.3g} |")
    lines.append("\nC and γ: geometric means over the seeds (γ on the standardised "
                 "columns).")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--method", default=None)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--subsample", type=int, default=5000)
    ap.add_argument("--tables", default="cps1988")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--reference", default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "autosvc_nystroem"))
    a = ap.parse_args()
    if a.worker:
        worker(a.method, int(a.seeds), a.subsample, a.tables)
        return
    command = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python " + \
        "benchmarks/bench_autosvc_nystroem.py " + " ".join(sys.argv[1:])
    seeds = [int(s) for s in a.seeds.split(",")]
    # the long fits first, so that they overlap the short ones
    tasks = [(m, s, t) for t in a.tables.split(",") for m in a.methods.split(",")
             for s in seeds]
    rows = []
    if a.reference:  # rows of an earlier run (other tables) join the report
        rows = [r for r in json.loads(Path(a.reference).read_text())
                if r.get("table", "cps1988") not in a.tables.split(",")]
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for r in pool.map(lambda t: run_one(t[0], t[1], a.subsample, t[2]), tasks):
            r["load"] = os.getloadavg()[0]
            rows.append(r)
            print(f"{r['table']:12s} {r['method']:13s} seed {r['seed']} n {r['n_train']:6d} "
                  f"acc {r['accuracy']:.4f} CPU {r['cpu']:.1f}s", flush=True)
            Path(a.out + ".json").write_text(json.dumps(rows, indent=1))
            Path(a.out + ".md").write_text(report(rows, command))
    print(Path(a.out + ".md").read_text())


if __name__ == "__main__":
    main()
