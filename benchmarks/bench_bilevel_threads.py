"""BLAS threads of a ``BilevelSVC`` fit on small Gram-sized problems.

The fit of ``BilevelSVC()`` on bench_wide's 200 × 2,000 problem runs hundreds of small
factorisations (the n × n sample-space Newton system of each fold, ~160 × 160). This
script times that fit with the BLAS pools limited to one thread (``blas_threads=1``,
what ``"auto"`` chooses there, :func:`bisvm.selection.threads.gram_threads`) and with the
library's default thread count (``blas_threads=None``), each fit in a fresh process
whose environment leaves the thread counts alone, alternating the two settings:

* ``idle``: nothing else started by this script (the machine may be shared);
* ``loaded``: another process keeps one core busy (a Python spin loop) meanwhile.

It reports wall and CPU seconds of the fit (after imports and a warm-up fit) as the
median over repeats, the BLAS pools threadpoolctl sees, and the ratio default ÷ one
thread. Writes ``benchmarks/results/bench_bilevel_threads.md`` and ``.json``.

    python benchmarks/bench_bilevel_threads.py                # 3 repeats per setting
    python benchmarks/bench_bilevel_threads.py --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

WORKER = r"""
import json, sys, time
sys.path.insert(0, {here!r})
import numpy as np
from threadpoolctl import threadpool_info
from _wide_data import PROBLEMS, make_problem
from bisvm import BilevelSVC
threads = None if {threads!r} == "default" else int({threads!r})
Xtr, Xte, ytr, yte, _ = make_problem("wide", 0, PROBLEMS["wide"])
BilevelSVC(model="scalar", blas_threads=threads, random_state=0).fit(Xtr[:40, :200],
                                                                     ytr[:40])
c0, w0 = time.process_time(), time.perf_counter()
est = BilevelSVC(blas_threads=threads, random_state=0).fit(Xtr, ytr)
c1, w1 = time.process_time(), time.perf_counter()
pools = [(p["internal_api"], p["num_threads"]) for p in threadpool_info()
         if p["user_api"] == "blas"]
print(json.dumps({{"wall": w1 - w0, "cpu": c1 - c0, "accuracy": est.score(Xte, yte),
                  "blas_threads_": est.blas_threads_, "pools": pools}}))
"""

SPIN = "import time\nt = time.time() + {seconds}\nwhile time.time() < t:\n    pass\n"


def fit_once(threads, env):
    code = WORKER.format(here=str(HERE), threads=threads)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(repeats, load):
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent / "src")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    spinner = None
    if load:
        spinner = subprocess.Popen([sys.executable, "-c", SPIN.format(seconds=3600)])
    try:
        res = {"1": [], "default": []}
        for _ in range(repeats):
            for threads in ("1", "default"):
                res[threads].append(fit_once(threads, env))
    finally:
        if spinner is not None:
            spinner.terminate()
            spinner.wait()
    return res


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def report(results, command, path, when):
    lines = ["# BLAS threads of a `BilevelSVC()` fit on the 200 × 2,000 wide problem",
             "", f"`{command}` — {when}.",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other "
             "jobs. Each fit in a fresh process (thread variables unset), after imports and "
             "a warm-up fit; median over repeats; the 1-thread and default-thread fits "
             "alternate. `loaded`: one more process spins on a core during the fits.", "",
             "| condition | BLAS threads | `blas_threads_` | fit wall s (median) | "
             "fit CPU s (median) | wall, each repeat | BLAS pools (outside the fit) | "
             "test accuracy | load average before |",
             "|---|---|---|---|---|---|---|---|---|"]
    for cond, r in results.items():
        for threads in ("1", "default"):
            rows = r["fits"][threads]
            wall = [x["wall"] for x in rows]
            cpu = [x["cpu"] for x in rows]
            pools = ", ".join(f"{a}: {n}" for a, n in rows[0]["pools"])
            lines.append(f"| {cond} | {threads} | {rows[0]['blas_threads_']} | "
                         f"{np.median(wall):.2f} | "
                         f"{np.median(cpu):.2f} | {', '.join(f'{w:.2f}' for w in wall)} | "
                         f"{pools} | {rows[0]['accuracy']:.3f} | {r['load']:.1f} |")
    def med(r, threads):
        return float(np.median([x["wall"] for x in r["fits"][threads]]))

    lines += ["", "Ratio default ÷ one thread (median wall): " + "; ".join(
        f"{cond} {med(r, 'default') / med(r, '1'):.2f}×" for cond, r in results.items())
        + ".", ""]
    path.with_suffix(".md").write_text("\n".join(lines))
    path.with_suffix(".json").write_text(json.dumps(
        {"command": command, "when": when, "results": results}, indent=1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_bilevel_threads"))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the .md from the .json of the last run")
    args = ap.parse_args(argv)
    if args.report_only:
        path = Path(args.out)
        saved = json.loads(path.with_suffix(".json").read_text())
        report(saved["results"], saved["command"], path, saved["when"])
        return
    results = {}
    for cond in ("idle", "loaded"):
        la = load_average()
        results[cond] = {"load": la, "fits": run(args.repeats, cond == "loaded")}
        for threads, rows in results[cond]["fits"].items():
            print(cond, threads, [round(x["wall"], 2) for x in rows], flush=True)
    report(results, "python benchmarks/bench_bilevel_threads.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), Path(args.out),
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


if __name__ == "__main__":
    main()
