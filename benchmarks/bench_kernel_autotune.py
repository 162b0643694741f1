"""AutoSVC on the interaction problem against a single-width grid, an ARD Gaussian
process, L1 logistic regression and BilevelSVC.

    python benchmarks/bench_kernel_autotune.py [--seeds 101 102 103 104 105]
        [--methods ...] [--jobs 2] [--gp-rows 500] [--out NAME]

Problem (``_kernel_autotune_worker.make_problem``): 1,000 training and 2,000 test rows of
40 standard-normal features, ``y = 1[x_a x_b + x_c x_d > 0]`` for four columns drawn
from the seed. Every (method, seed) fit runs in its own process with one BLAS/OpenMP
thread (``OMP_NUM_THREADS=1``, ``OPENBLAS_NUM_THREADS=1``) after a warm-up fit; CPU
seconds by ``time.process_time``. ``--jobs`` processes run at once (the timings are CPU
times, but a loaded machine still inflates them: the load is written beside them). The
Gaussian process is fitted on the first ``--gp-rows`` training rows (O(n³)).

Results: ``benchmarks/results/<NAME>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _kernel_autotune_worker import METHODS  # noqa: E402

LABELS = {
    "autosvc_per_feature": 'bisvm AutoSVC(widths="per_feature")',
    "autosvc_shared": "bisvm AutoSVC() (shared width)",
    "grid_svc": "GridSearchCV(bisvm SVC, 6 C x 6 gamma, cv=5)",
    "gp_ard": "GaussianProcessClassifier(anisotropic RBF)",
    "l1_logistic_cv": "LogisticRegressionCV(L1, 10 Cs, cv=5)",
    "bilevel_svc": "bisvm BilevelSVC() (linear, learned L1 weights)",
}


def run_one(method, seed, gp_rows, timeout):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    cmd = [sys.executable, os.path.join(HERE, "_kernel_autotune_worker.py"), "--method",
           method, "--seed", str(seed), "--gp-rows", str(gp_rows)]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": method, "seed": seed, "error": f"timeout {timeout}s"}
    for line in out.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    return {"method": method, "seed": seed, "error": out.stderr[-500:]}


def report(rows, args, load):
    lines = [f"# {args.out}", "", "```", "python benchmarks/bench_kernel_autotune.py "
             + " ".join(sys.argv[1:]), "```", "",
             f"Interaction problem, 1,000 training / 2,000 test rows, 40 features; seeds "
             f"{args.seeds}; one thread per fit, each in its own process, {args.jobs} at "
             f"once; load average before/after: {load[0]} / {load[1]} on "
             f"{os.cpu_count()} cores (CPU seconds are inflated by that load). "
             f"GP on the first {args.gp_rows} training rows.", "",
             "| method | mean test accuracy | ± s.e. | informative = top 4 | mean CPU s | "
             "seeds |", "|---|---|---|---|---|---|"]
    for m in args.methods:
        ok = [r for r in rows if r["method"] == m and "error" not in r]
        if not ok:
            errs = [r.get("error", "")[:60] for r in rows if r["method"] == m]
            lines.append(f"| {LABELS[m]} | - | - | - | - | 0 ({errs[:1]}) |")
            continue
        acc = np.array([r["accuracy"] for r in ok])
        se = acc.std(ddof=1) / np.sqrt(acc.size) if acc.size > 1 else float("nan")
        tops = [r["top4"] for r in ok if r["top4"] is not None]
        top = f"{sum(tops)}/{len(tops)}" if tops else "n/a"
        lines.append(f"| {LABELS[m]} | {acc.mean():.4f} | {se:.4f} | {top} | "
                     f"{np.mean([r['cpu'] for r in ok]):.1f} | {len(ok)} |")
    lines += ["", "Per fit:", "", "| method | seed | accuracy | top 4 | CPU s | extra |",
              "|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['method']} | {r['seed']} | error: {r['error'][:80]} | | | |")
            continue
        extra = {k: r[k] for k in ("C", "n_solves", "support", "informative") if k in r}
        lines.append(f"| {r['method']} | {r['seed']} | {r['accuracy']:.4f} | {r['top4']} | "
                     f"{r['cpu']:.1f} | {extra} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[101, 102, 103, 104, 105])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--gp-rows", type=int, default=500)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--out", default="bench_kernel_autotune")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    tasks = [(m, s) for s in args.seeds for m in args.methods]
    with ThreadPoolExecutor(args.jobs) as ex:
        rows = list(ex.map(lambda t: run_one(t[0], t[1], args.gp_rows, args.timeout), tasks))
    load = (round(load0, 1), round(os.getloadavg()[0], 1))
    res = os.path.join(HERE, "results", args.out)
    with open(res + ".json", "w") as f:
        json.dump({"command": sys.argv, "load": load, "rows": rows}, f, indent=1)
    with open(res + ".md", "w") as f:
        f.write(report(rows, args, load))
    print(open(res + ".md").read())


if __name__ == "__main__":
    main()
