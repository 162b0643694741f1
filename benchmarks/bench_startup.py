"""First contact, measured: how fast the CLI answers and how fairly `select` compares.

Figures (wall time, median of ``--repeats`` runs, each a fresh process, after one warm-up
run that fills the OS file cache and Python's byte-code cache):

* ``bisvm --help`` (``python -m bisvm --help``) and ``python -c "import bisvm"``
  (targets: under 0.5 s and under 1 s);
* the first ``bisvm select`` of a fresh clone: bundled data, default options, the package
  copied without its byte code and numba caches (the installed libraries keep theirs, as
  after ``pip install``; target: under 15 s, install aside);
* ``bisvm select --model scalar --json``: ``grid_seconds / seconds`` (target >= 5), the
  ratio of lower-level solves and the one-time ``startup_seconds``, median of the runs.

Run single-threaded, as the README's figures were::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \\
        python benchmarks/bench_startup.py

Writes ``benchmarks/results/startup.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _env(**extra):
    env = dict(os.environ)
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def wall(cmd, *, env=None, repeats=5, warm=True):
    """Median and all wall times of ``cmd`` (a fresh process each), after a warm-up."""
    env = env or _env()
    if warm:
        subprocess.run(cmd, env=env, capture_output=True, check=True)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def first_select():
    """Wall time of the first ``bisvm select`` of a fresh clone: the package copied to a
    new directory without its ``__pycache__`` (no byte code, no numba cache; the
    installed libraries keep theirs, as after ``pip install``)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(HERE.parent / "src" / "bisvm", src / "bisvm",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi",
                                                      "*.nbc"))
        env = _env(NUMBA_CACHE_DIR=os.path.join(tmp, "numba"))
        env["PYTHONPATH"] = str(src)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "bisvm", "select", "--json"], env=env,
                           capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - t0
    out = json.loads(r.stdout)
    return seconds, out["startup_seconds"]


def scalar_ratio(repeats):
    """``grid_seconds / seconds`` of ``bisvm select --model scalar --json``, per run."""
    runs = []
    for _ in range(repeats):
        r = subprocess.run([sys.executable, "-m", "bisvm", "select", "--model", "scalar",
                            "--json"], env=_env(), capture_output=True, text=True,
                           check=True)
        out = json.loads(r.stdout)
        runs.append({k: out[k] for k in ("seconds", "grid_seconds", "startup_seconds",
                                         "lower_level_solves", "grid_lower_level_solves")})
    return runs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-select", action="store_true",
                   help="only --help and import (seconds instead of a minute)")
    args = p.parse_args(argv)
    res = {"python": sys.version.split()[0]}
    res["help_seconds"], res["help_runs"] = wall(
        [sys.executable, "-m", "bisvm", "--help"], repeats=args.repeats)
    res["import_seconds"], res["import_runs"] = wall(
        [sys.executable, "-c", "import bisvm"], repeats=args.repeats)
    res["python_seconds"], _ = wall([sys.executable, "-c", "pass"], repeats=args.repeats)
    rows = [("bisvm --help", res["help_seconds"], "< 0.5 s"),
            ('python -c "import bisvm"', res["import_seconds"], "< 1 s"),
            ('python -c "pass" (interpreter alone)', res["python_seconds"], "")]
    if not args.no_select:
        res["first_select_seconds"], res["first_select_startup_seconds"] = first_select()
        runs = scalar_ratio(max(1, min(args.repeats, 3)))
        ratios = [r["grid_seconds"] / r["seconds"] for r in runs]
        res["scalar_runs"] = runs
        res["scalar_time_ratio"] = statistics.median(ratios)
        res["scalar_solves_ratio"] = (runs[0]["grid_lower_level_solves"]
                                      / runs[0]["lower_level_solves"])
        rows += [("first bisvm select (empty caches)", res["first_select_seconds"],
                  "< 15 s"),
                 ("select --model scalar: grid_seconds / seconds", res["scalar_time_ratio"],
                  ">= 5"),
                 ("select --model scalar: grid solves / BiSVM solves",
                  res["scalar_solves_ratio"], "")]
    out = HERE / "results" / "startup.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    print(f"{'measure':52s} {'value':>8s}  target")
    for name, v, target in rows:
        print(f"{name:52s} {v:8.2f}  {target}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
