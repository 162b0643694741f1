"""bisvm's kernel SMO from two source trees, side by side, single-threaded in CPU time.

A refactor of the compiled solvers must leave their speed alone. This runs the bisvm fits
of :mod:`bench_kernel_speed` (the same worker, :mod:`bench_kernel_worker`: each fit in its
own process after a warm-up fit, CPU seconds of the median timed fit) for a subset of its
workloads, alternating a *base* and a *head* source tree in every round so that both see
the same load, and reports per workload the median over rounds of each tree and the ratio
head / base (< 1: head faster). The solutions are compared too (support set sizes).

Usage::

    git worktree add /tmp/base <commit>
    python benchmarks/bench_kernel_speed_ab.py --base /tmp/base/src --head src \\
        --rounds 2 --label-base <commit> --label-head <commit or "working tree">

writes ``results/bench_kernel_speed_ab.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "bench_kernel_worker.py"

#: the subset: SMO on small and mid-sized problems (C-SVC, poly C-SVC, one-class) and the
#: working-set solver on the largest, with the repeats of bench_kernel_speed
WORKLOADS = {
    "rbf_svc_breast_cancer": ("RBF C-SVC, Breast Cancer (426 × 30)", 25),
    "rbf_svc_digits": ("RBF C-SVC, digits 0-vs-rest (1,347 × 64)", 11),
    "poly3_svc_3750x20": ("poly-3 C-SVC, 3,750 × 20", 5),
    "oneclass_10000x20": ("RBF one-class SVM, 10,000 × 20", 1),
    "rbf_svc_15000x50": ("RBF C-SVC, 15,000 × 50", 1),
}
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS", "TBB_NUM_THREADS")


def run(src, workload, repeats):
    """One worker process on the tree ``src``; its JSON record."""
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = "1"
    env["PYTHONPATH"] = str(Path(src).resolve())
    proc = subprocess.run([sys.executable, str(WORKER), "bisvm", workload, "1", str(repeats)],
                          env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{workload} on {src}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fmt(sec):
    return f"{sec * 1e3:.3g} ms" if sec < 1 else f"{sec:.3g} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the base tree's src directory")
    ap.add_argument("--head", required=True, help="the head tree's src directory")
    ap.add_argument("--label-base", default="base")
    ap.add_argument("--label-head", default="head")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", default="bench_kernel_speed_ab",
                    help="name of the result files in results/ (.md and .json)")
    args = ap.parse_args()
    names = args.only or list(WORKLOADS)
    cpu = {name: {"base": [], "head": []} for name in names}
    n_sv = {name: {} for name in names}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for name in names:
            order = ("base", "head") if r % 2 == 0 else ("head", "base")
            for side in order:
                rec = run(getattr(args, side), name, WORKLOADS[name][1])
                cpu[name][side].append(rec["cpu_s"])
                n_sv[name][side] = rec["n_sv"]
                print(f"round {r} {name:24s} {side:4s} cpu={rec['cpu_s']:.4g}s "
                      f"nSV={rec['n_sv']}", flush=True)
        loads.append(os.getloadavg()[0])
    rows, out = [], {}
    for name in names:
        b = statistics.median(cpu[name]["base"])
        h = statistics.median(cpu[name]["head"])
        rows.append(f"| {WORKLOADS[name][0]} | {_fmt(b)} | {_fmt(h)} | {h / b:.2f} | "
                    f"{n_sv[name]['base']} / {n_sv[name]['head']} |")
        out[name] = {"base_cpu_s": cpu[name]["base"], "head_cpu_s": cpu[name]["head"],
                     "ratio_of_medians": h / b, "n_sv": n_sv[name]}
    command = "python benchmarks/bench_kernel_speed_ab.py " + shlex.join(sys.argv[1:])
    lines = [
        "# Kernel SVM speed: two source trees side by side", "",
        f"Produced by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "",
        f"Base: {args.label_base}. Head: {args.label_head}. One thread "
        "(`OMP/OPENBLAS/MKL/NUMBA/TBB_NUM_THREADS=1`), CPU seconds of bisvm's fit (median "
        "of the worker's timed fits, each worker its own process after a warm-up fit), "
        f"median over {args.rounds} rounds alternating the trees. Machine: 2 cores shared "
        "with other jobs; load average (1 min) during the run "
        f"{min(loads):.1f}-{max(loads):.1f}: compare the ratios, not the absolute times.",
        "",
        "| workload | base | head | head / base | nSV base / head |",
        "|---|---|---|---|---|", *rows, ""]
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / f"{args.out}.md").write_text("\n".join(lines) + "\n")
    (results / f"{args.out}.json").write_text(
        json.dumps({"command": command, "base": args.label_base, "head": args.label_head,
                    "load_average": loads, "workloads": out}, indent=1) + "\n")


if __name__ == "__main__":
    main()
