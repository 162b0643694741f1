"""bisvm's ``BilevelSVC`` on wide, sparse and tall data, beside the tools a user would
pick instead, in one run:

* ``bisvm`` — ``BilevelSVC()`` (vector model: one learned L1 weight per feature,
  defaults); ``bisvm-scalar`` — ``BilevelSVC(model="scalar")``;
* ``sparho-wl1`` — sparho's per-feature weighted L1 (``WeightedL1``, learned by implicit
  differentiation with its HOAG outer loop). sparho 0.2 ships ``WeightedL1`` for the
  squared loss only, so this is a weighted Lasso on the ±1 labels, classifying by sign;
* ``sparho-l1log`` — sparho's sparse logistic regression (scalar L1 weight);
* ``logregcv`` — scikit-learn ``LogisticRegressionCV`` with the L1 penalty (liblinear,
  10 C values, 5 folds);
* ``svc-grid`` — ``GridSearchCV(LinearSVC(penalty="l1", dual=False))`` over 9 values of
  C in [1e-3, 10], 5 folds.

Problems (``_wide_data.py``; the stated shape is the training matrix; independent test
rows from the same distribution, never used in tuning; scaler fitted on training rows):
1. ``leukemia`` — 72 × 7,129 dense, 30 informative genes in correlated blocks;
2. ``wide`` — 200 × 2,000 dense, 20 informative;
3. ``sparse`` — 20,000 × 50,000 CSR at density 0.001, tf-idf-like, 100 informative;
4. ``tall`` — 100,000 × 1,000 dense, 50 informative.

Every tool is fitted in a process of its own per problem and seed, single-threaded
(``THREAD_ENV``), by ``_wide_worker.py``, which times the imports, a warm-up fit on a tiny
problem of the same kind (start-up, reported apart), then the real fit: CPU seconds
(``time.process_time``, all threads of the process) and wall seconds. A fit longer than
``--timeout`` seconds is stopped and reported as such. The report gives, per problem and
tool, the means over seeds of time, test accuracy, features kept and informative features
kept; the targets for ``BilevelSVC()`` with whether each holds; and the
ratios bisvm ÷ each peer.
Writes ``benchmarks/results/bench_wide.md`` and ``.json`` (``bench_wide_quick.*`` with
``--quick``).

    python benchmarks/bench_wide.py                       # everything (see the .md)
    python benchmarks/bench_wide.py --quick               # smaller sizes, smoke run
    python benchmarks/bench_wide.py --problems leukemia wide --tools bisvm sparho-wl1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _wide_data import PROBLEMS, QUICK, bayes_accuracy  # noqa: E402
from _wide_report import write_report  # noqa: E402
from _wide_worker import TOOLS  # noqa: E402

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS")
THREAD_ENV = {v: "1" for v in THREAD_VARS}
STARTUP_LIMIT = 600.0  # seconds allowed for imports, warm-up and loading, per process
WALL_FACTOR = 3.0  # a fit is also stopped after this many times --timeout in wall time


def cpu_seconds(pid):
    """CPU seconds (user + system) used so far by process ``pid`` (Linux ``/proc``), or
    None where that is not available."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_worker(cmd, env, timeout):
    """Run a worker; returns (result dict, stderr tail). The fit is stopped (the worker's
    process group killed) when it has used more than ``timeout`` CPU seconds since its
    ``fit_start`` event (the table reports CPU time; on a shared machine wall time
    stretches), or ``WALL_FACTOR × timeout`` wall seconds, or when start-up exceeds
    ``STARTUP_LIMIT``."""
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env, text=True,
                                start_new_session=True)
        lines = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(s) for s in proc.stdout],
                                  daemon=True)
        reader.start()
        t0, fit_start, result, stopped = time.perf_counter(), None, None, None
        cpu_start = None
        while True:
            try:
                line = lines.get(timeout=0.2)
                if line.startswith("@@"):
                    event = json.loads(line[2:])
                    if event["event"] == "fit_start":
                        fit_start = time.perf_counter()
                        cpu_start = cpu_seconds(proc.pid)
                    else:
                        result = event
            except queue.Empty:
                pass
            now = time.perf_counter()
            if proc.poll() is not None and not reader.is_alive() and lines.empty():
                break
            if fit_start is not None:
                cpu = cpu_seconds(proc.pid) if cpu_start is not None else None
                used = cpu - cpu_start if cpu is not None else now - fit_start
                if used > timeout or now - fit_start > WALL_FACTOR * timeout:
                    stopped = "fit"
            elif fit_start is None and now - t0 > STARTUP_LIMIT:
                stopped = "start-up"
            if stopped:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                break
        err.seek(0)
        tail = err.read()[-1500:]
    if stopped:
        return {"event": "result", "status": "stopped", "stopped_in": stopped,
                "limit_s": timeout if stopped == "fit" else STARTUP_LIMIT}, tail
    if result is None:
        return {"event": "result", "status": f"crashed (exit {proc.returncode})"}, tail
    return result, tail


def make_data(problem, seed, quick, prefix, env):
    cmd = [sys.executable, str(HERE / "_wide_worker.py"), "data", "--problem", problem,
           "--seed", str(seed), "--out", prefix] + (["--quick"] if quick else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(next(s for s in out.stdout.splitlines() if s.startswith("@@"))[2:])


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                              capture_output=True, text=True).stdout.strip()
    except OSError:  # pragma: no cover
        return "?"


def versions(env):
    code = ("import json, numpy, scipy, sklearn, sparho, bisvm; print(json.dumps({m.__name__:"
            " getattr(m, '__version__', '?') for m in (numpy, scipy, sklearn, sparho, bisvm)}))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {"error": out.stderr[-300:]}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    p.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    p.add_argument("--tools", nargs="+", default=list(TOOLS), choices=list(TOOLS))
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (default 3)")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="CPU seconds allowed per fit (default 300); longer fits are stopped")
    p.add_argument("--retry-stopped", action="store_true",
                   help="run a tool on every seed even after it was stopped on one "
                   "(default: skip it on the later seeds of that problem)")
    p.add_argument("--out", help="results path without extension "
                   "(default benchmarks/results/bench_wide[_quick])")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    if args.timeout <= 0:
        raise ValueError(f"--timeout must be > 0, got {args.timeout}")
    specs = QUICK if args.quick else PROBLEMS
    out = Path(args.out) if args.out else \
        HERE / "results" / ("bench_wide_quick" if args.quick else "bench_wide")
    env = {**os.environ, **THREAD_ENV}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent / "src")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    cache = tempfile.mkdtemp(prefix="bench_wide_")
    runs, data_info, piece_seconds, stopped = [], {}, {}, set()
    t_all = time.perf_counter()
    try:
        for problem in args.problems:
            t_problem = time.perf_counter()
            for seed in range(args.seeds):
                prefix = os.path.join(cache, f"{problem}_{seed}")
                data_info[f"{problem}/{seed}"] = make_data(problem, seed, args.quick,
                                                           prefix, env)
                for tool in args.tools:
                    if (problem, tool) in stopped and not args.retry_stopped:
                        runs.append({"problem": problem, "seed": seed, "tool": tool,
                                     "status": "skipped (stopped on an earlier seed)"})
                        continue
                    t_run = time.perf_counter()
                    cmd = [sys.executable, str(HERE / "_wide_worker.py"), "fit",
                           "--problem", problem, "--seed", str(seed), "--tool", tool,
                           "--data", prefix] + (["--quick"] if args.quick else [])
                    res, tail = run_worker(cmd, env, args.timeout)
                    res = {"problem": problem, "seed": seed, "tool": tool,
                           "process_wall_s": time.perf_counter() - t_run, **res}
                    if res["status"] != "ok":
                        res["stderr_tail"] = tail[-600:]
                    runs.append(res)
                    if res["status"] == "stopped":
                        stopped.add((problem, tool))
                    print(progress_line(res), flush=True)
                for f in Path(cache).glob(f"{problem}_{seed}_*"):
                    f.unlink()
            piece_seconds[problem] = time.perf_counter() - t_problem
            # written after every problem, so that a long run's finished part is kept
            write_report(out, run_meta(args, argv, env, specs, data_info, piece_seconds,
                                       t_all), runs)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    text = write_report(out, run_meta(args, argv, env, specs, data_info, piece_seconds,
                                      t_all), runs)
    print(text)


def run_meta(args, argv, env, specs, data_info, piece_seconds, t_all):
    """What the report says about the run."""
    return {"command": "python benchmarks/bench_wide.py " + " ".join(argv or sys.argv[1:]),
            "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared with other "
                       "jobs: wall times are noisier than CPU times)",
            "python": platform.python_version(), "versions": versions(env),
            "bisvm_commit": git_commit(), "thread_env": THREAD_ENV,
            "timeout_s": args.timeout, "seeds": args.seeds, "quick": args.quick,
            "problems": {p: {"label": specs[p].label(), "n_test": specs[p].n_test,
                             "k": specs[p].k, "bayes_accuracy": bayes_accuracy(specs[p])}
                         for p in args.problems},
            "tools": {t: TOOLS[t] for t in args.tools}, "data": data_info,
            "seconds_per_problem": piece_seconds,
            "total_seconds": time.perf_counter() - t_all}


def progress_line(r):
    head = f"{r['problem']:>8} seed {r['seed']} {r['tool']:<13}"
    if r["status"] != "ok":
        return f"{head} {r['status']} ({r['process_wall_s']:.0f} s in all)"
    return (f"{head} fit {r['fit_cpu_s']:8.2f} s CPU {r['fit_wall_s']:8.2f} s wall  "
            f"acc {r['accuracy']:.3f}  kept {r['kept']:5d} (true {r['true_kept']}/"
            f"{r['n_informative']})  start-up {r['import_s']:.1f}+{r['warmup_cpu_s']:.1f} s"
            f"  [{r['process_wall_s']:.0f} s in all]")


if __name__ == "__main__":
    main()
