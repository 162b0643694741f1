"""bisvm's kernel SMO against every CPU peer, in one run, single-threaded in CPU time (#15).

Each fit runs in its own child process (:mod:`bench_kernel_worker`), one tool at a time,
with the same C, kernel, numeric gamma (scikit-learn's ``"scale"``), tolerance (1e-3) and
cache (200 MB), after a warm-up fit. Peers: scikit-learn's SVC/SVR/OneClassSVM (LIBSVM),
scikit-learn-intelex (oneDAL; no one-class SVM) and libsvm-official (LIBSVM's own Python
binding). Reported per workload: CPU seconds of each tool (the median of several fits on
the small problems), bisvm's ratio to each peer (< 1: bisvm faster), whether the support
sets are equal to scikit-learn's and the relative difference of the dual objectives (the
same formula applied to every tool's support set and coefficients), and where bisvm's time
goes (``stats["profile"]`` of the solver ``solve_smo`` picks).

A second section runs the 15,000-row problem on 2 threads and reports wall time: bisvm on
2 threads against bisvm on 1 (same run) and against sklearnex on 2 threads.

``--large`` runs RBF C-SVC on 100,000 x 50 instead (CPU s, wall s, peak resident memory of
each tool's process; bisvm also on 2 threads); ``--large-svr`` the same for RBF ε-SVR on
50,000 x 20.

Usage::

    python benchmarks/bench_kernel_speed.py            # -> results/bench_kernel_speed.md
    python benchmarks/bench_kernel_speed.py --large    # -> results/bench_kernel_speed_large.md
    python benchmarks/bench_kernel_speed.py --large --tools bisvm sklearnex
    python benchmarks/bench_kernel_speed.py --large-svr --tools bisvm sklearn sklearnex
    python benchmarks/bench_kernel_speed.py --only rbf_svc_15000x50 --no-threads
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "bench_kernel_worker.py"

WORKLOADS = {
    # name: (label, repeats)
    "rbf_svc_15000x50": ("RBF C-SVC, 15,000 × 50", 1),
    "rbf_svc_16000x40": ("RBF C-SVC, 16,000 × 40", 1),
    "rbf_svr_7500x20": ("RBF ε-SVR, 7,500 × 20", 1),
    "poly3_svc_3750x20": ("poly-3 C-SVC, 3,750 × 20", 5),
    "rbf_svc_breast_cancer": ("RBF C-SVC, Breast Cancer (426 × 30)", 25),
    "rbf_svc_digits": ("RBF C-SVC, digits 0-vs-rest (1,347 × 64)", 11),
    "oneclass_10000x20": ("RBF one-class SVM, 10,000 × 20", 1),
}
TOOLS = ("bisvm", "sklearn", "sklearnex", "libsvm")
PEERS = TOOLS[1:]


def run(tool, workload, threads, repeats=1):
    """One worker process; returns its JSON record (or ``None`` if the tool cannot fit
    this workload)."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS", "TBB_NUM_THREADS"):
        env[var] = str(threads)
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    if tool == "sklearnex" and workload.startswith("oneclass"):
        return None
    proc = subprocess.run([sys.executable, str(WORKER), tool, workload, str(threads),
                           str(repeats)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return None
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"  {workload:24s} {tool:10s} threads={threads} cpu={rec['cpu_s']:.4g}s "
          f"wall={rec['wall_s']:.4g}s nSV={rec['n_sv']}", flush=True)
    return rec


def _fmt(sec):
    if sec is None:
        return "–"
    return f"{sec * 1000:.3g} ms" if sec < 1 else f"{sec:.3g} s"


def _check(rec, ref):
    """``(equal support sets, relative objective difference)`` against scikit-learn."""
    if rec is None or ref is None:
        return "–", "–"
    same = "yes" if rec["support"] == ref["support"] else (
        f"no ({len(set(rec['support']) ^ set(ref['support']))} differ)")
    rel = abs(rec["objective"] - ref["objective"]) / max(1.0, abs(ref["objective"]))
    return same, f"{rel:.1e}"


def single_thread_section(names):
    rows, checks, profiles = [], [], []
    for name in names:
        label, repeats = WORKLOADS[name]
        recs = {t: run(t, name, 1, repeats) for t in TOOLS}
        ours = recs["bisvm"]
        times = [_fmt(recs[t]["cpu_s"]) if recs[t] else "–" for t in TOOLS]
        ratios = []
        for t in PEERS:
            ok = ours and recs[t]
            ratios.append(f"{ours['cpu_s'] / recs[t]['cpu_s']:.2f}" if ok else "–")
        best = min((recs[t]["cpu_s"] for t in PEERS if recs[t]), default=None)
        ratios.append(f"**{ours['cpu_s'] / best:.2f}**" if ours and best else "–")
        rows.append(f"| {label} | " + " | ".join(times + ratios) + " |")
        for t in TOOLS:
            same, rel = _check(recs[t], recs["sklearn"])
            if recs[t]:
                checks.append(f"| {label} | {t} | {recs[t]['n_sv']} | {same} | {rel} |")
        if ours and "profile" in ours:
            p = dict(ours["profile"])
            tot = max(p.pop("total"), 1e-12)
            parts = ", ".join(f"{k} {100 * v / tot:.0f} %" for k, v in p.items())
            profiles.append(f"| {label} | {ours.get('solver', 'smo')} | {parts} |")
    return rows, checks, profiles


def two_thread_section():
    name = "rbf_svc_15000x50"
    one = run("bisvm", name, 1)
    two = run("bisvm", name, 2)
    ex1 = run("sklearnex", name, 1)
    ex2 = run("sklearnex", name, 2)
    lines = ["| tool | 1 thread, wall | 2 threads, wall | 2 ÷ 1 | 2 threads, CPU |",
             "|---|---|---|---|---|"]
    for tool, a, b in (("bisvm", one, two), ("sklearnex", ex1, ex2)):
        if a and b:
            lines.append(f"| {tool} | {_fmt(a['wall_s'])} | {_fmt(b['wall_s'])} | "
                         f"{b['wall_s'] / a['wall_s']:.2f} | {_fmt(b['cpu_s'])} |")
    if two and ex2:
        lines.append("")
        lines.append(f"bisvm on 2 threads ÷ sklearnex on 2 threads (wall): "
                     f"**{two['wall_s'] / ex2['wall_s']:.2f}**; same support set: "
                     f"{_check(two, ex2)[0]}.")
    return lines


def large_section(tools=TOOLS, name="rbf_svc_100000x50"):
    lines = ["| tool | threads | CPU | wall | peak RSS | RSS of the data | nSV | same SV as "
             "reference | objective rel. diff |", "|---|---|---|---|---|---|---|---|---|"]
    recs = [(t, 1, run(t, name, 1)) for t in tools]
    if "bisvm" in tools:
        recs.append(("bisvm", 2, run("bisvm", name, 2)))
    # the reference model: scikit-learn's when it ran, else sklearnex's
    ref = next((r for t, th, r in recs if t == "sklearn" and r), None) or next(
        (r for t, th, r in recs if t == "sklearnex" and r), None)
    for tool, th, r in recs:
        if r:
            same, rel = _check(r, ref)
            lines.append(f"| {tool} | {th} | {_fmt(r['cpu_s'])} | {_fmt(r['wall_s'])} | "
                         f"{r['peak_rss_mb']:.0f} MB | {r['data_rss_mb']:.0f} MB | "
                         f"{r['n_sv']} | {same} | {rel} |")
    return lines


def _header(title, flag=""):
    import numpy
    import sklearn

    return [f"# {title}", "",
            f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores "
            f"(shared with other jobs: compare ratios, not absolute times); Python "
            f"{platform.python_version()}, numpy {numpy.__version__}, scikit-learn "
            f"{sklearn.__version__}. Same C, kernel, numeric gamma (= 'scale'), tol 1e-3, "
            "cache 200 MB; each fit in its own process after a warm-up fit; "
            "`OMP/OPENBLAS/MKL/NUMBA/TBB_NUM_THREADS` set to the thread count, oneDAL's "
            "`daalinit` too. Produced by `python benchmarks/bench_kernel_speed.py"
            + flag + "`.", ""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--large-svr", action="store_true")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--no-threads", action="store_true")
    ap.add_argument("--tools", nargs="*", default=list(TOOLS),
                    help="--large and --large-svr only: the tools to run (scikit-learn "
                         "takes minutes)")
    args = ap.parse_args()
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    tools = " --tools " + " ".join(args.tools) if args.tools != list(TOOLS) else ""
    if args.large:
        lines = _header("Kernel SVM speed: RBF C-SVC on 100,000 × 50", " --large" + tools)
        lines += large_section(tuple(args.tools))
        (out_dir / "bench_kernel_speed_large.md").write_text("\n".join(lines) + "\n")
        return
    if args.large_svr:
        lines = _header("Kernel SVM speed: RBF ε-SVR on 50,000 × 20", " --large-svr" + tools)
        lines += large_section(tuple(args.tools), "rbf_svr_50000x20")
        (out_dir / "bench_kernel_speed_large_svr.md").write_text("\n".join(lines) + "\n")
        return
    names = args.only or list(WORKLOADS)
    rows, checks, profiles = single_thread_section(names)
    lines = _header("Kernel SVM speed against CPU peers")
    lines += ["## One thread, CPU time", "",
              "| workload | bisvm | scikit-learn | sklearnex | libsvm-official | ÷ sklearn "
              "| ÷ sklearnex | ÷ libsvm | ÷ best peer |",
              "|---|---|---|---|---|---|---|---|---|", *rows, "",
              "## Same models", "",
              "Support set and dual objective of every tool against scikit-learn's "
              "(LIBSVM).", "",
              "| workload | tool | nSV | same support set | objective rel. diff |",
              "|---|---|---|---|---|", *checks, "",
              "## Where bisvm's time goes", "",
              "Share of one more solve of the same dual by the solver `solve_smo` picks "
              "(`method='auto'`), from its `stats['profile']`. SMO (cycle counter): "
              "columns (kernel columns), selection, update, shrinking, reconstruction "
              "(gradient after shrinking). Working set (CPU time per phase): selection "
              "(the first scan and the choice of new members), rows (float32 kernel "
              "rows of the new members: BLAS product and transform), subproblem (Q_WW "
              "and the inner SMO), update (gradient from the working set's rows, with "
              "the scan for the next selection fused in).", "",
              "| workload | solver | phases |", "|---|---|---|", *profiles, ""]
    if not args.no_threads:
        lines += ["## Two threads, wall time (RBF C-SVC, 15,000 × 50)", "",
                  *two_thread_section(), ""]
    suffix = "" if args.only is None else "_partial"
    (out_dir / f"bench_kernel_speed{suffix}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
