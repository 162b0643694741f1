"""Leave-one-out selection at the cost of one path, on an idle and on a loaded machine,
and support recovery with the one-standard-error rule.

Unlike the other benchmarks this one runs with the *default* BLAS threads (it measures
what a user gets), in one process, under two conditions in the same run:

* ``default``: nothing else started by the benchmark (the machine is shared: its load
  average is printed);
* ``busy core``: a second process spinning on one core for the whole condition.

For each problem it times ``Selective*CV`` with ``criterion="alo"`` and
``criterion="kfold"`` (5 folds) as shipped (``blas_threads="auto"``: one BLAS thread on
these sizes), and, on the first two problems only, ``criterion="alo"`` with
``blas_threads=None`` (the library default threads, i.e. the behaviour before ``"auto"``)
and ``criterion="loo"`` (exact, N refits per μ), on the same 20-point μ path, median
of ``--repeats`` runs of wall and CPU seconds. Then the support recovery of Angulo
Yauri's (2020) 200 × 400 logistic problem over ``--seeds`` seeds: the
``selection_rule``/``scoring`` variants against scikit-learn's L1
``LogisticRegressionCV`` on the same seeds.

Usage::

    python benchmarks/bench_panel_alo.py              # results/bench_panel_alo.{md,json}
    python benchmarks/bench_panel_alo.py --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def seed004(seed, N=200, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n))
    return X, np.where(X[:, 0] + X[:, 1] > 0, 1, 0)


def regression(N, d, seed=0, k=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    y = X[:, :k] @ rng.choice([-1.0, 1.0], k) + rng.normal(size=N)
    return X, y


def problems(quick):
    out = [("Angulo Yauri logistic 200 × 400", "logistic", seed004(0), True),
           ("regression 80 × 60", "squared", regression(80, 60), True)]
    sizes = (50, 200) if quick else (50, 100, 200, 400, 800)
    out += [(f"regression {N} × {int(0.75 * N)}", "squared", regression(N, int(0.75 * N)),
             False) for N in sizes if N != 80]
    return out


def _time(make, X, y, repeats):
    walls, cpus = [], []
    for _ in range(repeats):
        est = make()
        c0, w0 = time.process_time(), time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
    return float(np.median(walls)), float(np.median(cpus))


def timings(quick, repeats, n_mu):
    from bisvm import SelectiveLogisticRegressionCV, SelectiveRegressionCV

    rows = []
    for name, loss, (X, y), with_loo in problems(quick):
        cls = SelectiveLogisticRegressionCV if loss == "logistic" else SelectiveRegressionCV
        variants = [("alo", dict(criterion="alo")), ("5-fold", dict(criterion="kfold"))]
        if with_loo:
            # the behaviour before (no thread limit) and the exact reference, on the two
            # first two problems only: on a loaded machine each takes minutes
            variants += [("alo, default threads", dict(criterion="alo", blas_threads=None)),
                         ("exact loo", dict(criterion="loo"))]
        for label, kw in variants:
            # the unlimited-thread runs can take a minute on a loaded machine: once
            reps = 1 if label == "exact loo" or "default threads" in label else repeats
            wall, cpu = _time(lambda kw=kw, cls=cls: cls(n_mu=n_mu, **kw), X, y, reps)
            rows.append({"problem": name, "method": label, "wall": wall, "cpu": cpu,
                         "N": int(X.shape[0]), "d": int(X.shape[1])})
            print(f"  {name:28s} {label:24s} wall {wall:7.3f} s  cpu {cpu:7.3f} s",
                  flush=True)
    return rows


def recovery(seeds):
    from sklearn.linear_model import LogisticRegressionCV

    from bisvm import SelectiveLogisticRegressionCV

    variants = {"alo, min": dict(), "alo, 1se": dict(selection_rule="1se"),
                "alo error, 1se": dict(selection_rule="1se", scoring="error")}
    out = {k: [] for k in (*variants, "LogisticRegressionCV (L1)")}
    for s in range(seeds):
        X, y = seed004(s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k, kw in variants.items():
                e = SelectiveLogisticRegressionCV(**kw).fit(X, y)
                out[k].append(sorted(np.flatnonzero(e.coef_).tolist()))
            m = LogisticRegressionCV(Cs=20, l1_ratios=(1.0,), solver="liblinear", cv=5,
                                     use_legacy_attributes=False).fit(X, y)
        out["LogisticRegressionCV (L1)"].append(sorted(np.flatnonzero(m.coef_).tolist()))
        print(f"  seed {s}: " + ", ".join(f"{k} {len(v[-1])}" for k, v in out.items()),
              flush=True)
    return out


def _busy():
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _threads():
    from threadpoolctl import threadpool_info

    return ", ".join(f"{p['internal_api']} {p['num_threads']}" for p in threadpool_info())


def report(res, path, command):
    L = ["# ALO selection at the cost of one path, idle and loaded", "",
         f"`python benchmarks/bench_panel_alo.py {command}` — {res['date']}.",
         f"Machine: {res['machine']}, {os.cpu_count()} cores shared with other jobs "
         f"(load average at start {res['load']}). BLAS pools: {res['threads']}. Default "
         f"threads for the process; a μ path of {res['n_mu']} points; wall and CPU seconds "
         f"are the median of {res['repeats']} fits (exact LOO and the default-thread runs: 1).",
         "",
         "`alo` is `Selective*CV(criterion=\"alo\")` as shipped (`blas_threads=\"auto\"`: "
         "one BLAS thread for these sizes); `default threads` is the same with "
         "`blas_threads=None` (the behaviour before). `busy core`: another process spins "
         "on one core during the whole condition.", ""]
    for cond in res["conditions"]:
        rows = res["timings"][cond]
        L += [f"## {cond}", "", "| problem | method | wall s | CPU s | ALO / this (wall) |",
              "|---|---|---|---|---|"]
        alo = {r["problem"]: r["wall"] for r in rows if r["method"] == "alo"}
        for r in rows:
            L.append(f"| {r['problem']} | {r['method']} | {r['wall']:.3f} | {r['cpu']:.3f} | "
                     f"{alo[r['problem']] / r['wall']:.2f} |")
        L.append("")
    rec = res["recovery"]
    n = len(next(iter(rec.values())))
    L += ["## Support recovery on Angulo Yauri's (2020) 200 × 400 logistic problem", "",
          f"{n} seeds (`X ~ N(0, 1)`, `y = sign(x_0 + x_1)`), estimator defaults otherwise.",
          "", "| method | exact recovery of {0, 1} | both kept | mean features kept |",
          "|---|---|---|---|"]
    for k, v in rec.items():
        ex = sum(s == [0, 1] for s in v)
        both = sum({0, 1} <= set(s) for s in v)
        L.append(f"| {k} | {ex}/{n} | {both}/{n} | {np.mean([len(s) for s in v]):.1f} |")
    Path(path).write_text("\n".join(L) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-mu", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_panel_alo.json"))
    args = ap.parse_args(argv)
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": platform.machine(), "load": ", ".join(f"{x:.2f}" for x in
                                                             os.getloadavg()),
           "threads": "", "n_mu": args.n_mu, "repeats": args.repeats,
           "conditions": ["default", "busy core"], "timings": {}}
    import bisvm  # noqa: F401  (loads numpy's BLAS before threadpoolctl looks)

    res["threads"] = _threads()
    for cond in res["conditions"]:
        print(cond, flush=True)
        hog = _busy() if cond == "busy core" else None
        try:
            res["timings"][cond] = timings(args.quick, args.repeats, args.n_mu)
        finally:
            if hog is not None:
                hog.kill()
                hog.wait()
    print("recovery", flush=True)
    res["recovery"] = recovery(3 if args.quick else args.seeds)
    out = Path(args.out)
    out.write_text(json.dumps(res, indent=1))
    report(res, out.with_suffix(".md"), " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
