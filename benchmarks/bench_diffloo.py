"""Leave-one-out along the whole μ path at the cost of one fit per μ (Angulo Yauri, 2020).

The synthetic logistic problem of B. F. Angulo Yauri's master's thesis (MIPT, 2020),
"A method of differential cross-validation for choosing the complexity level of
generalized linear dependence models" (200 objects, 400 features, 2 informative,
γ = 1, no intercept). In the same run:

* A: the μ path (Algorithm B, warm starts) with the four cheap criteria (printed DiffLOO,
  exact derivative, IJ, ALO) read off each fit;
* B: the same path with exact leave-one-out by N warm-started refits per μ.

Prints and writes ``benchmarks/results/bench_diffloo.md``: times, the speed-up B / A
(target >= 50x) and the overhead of the criteria over the fits (target <= 20 %)::

    python benchmarks/bench_diffloo.py            # 50-point path
    python benchmarks/bench_diffloo.py --quick    # 10-point path
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from bisvm.selection.loo import CHEAP_CRITERIA, criterion_path, exact_loo
from bisvm.solvers.base import ConvergenceWarning
from bisvm.solvers.selective import SelectiveProblem


def data(seed=0, N=200, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    return X, y


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10-point path")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of the cheap path")
    args = ap.parse_args(argv)
    n_mu = 10 if args.quick else 50
    X, y = data()
    ridge = 1.0
    warnings.simplefilter("always", ConvergenceWarning)

    # A: path + cheap criteria (best of a few repeats: the machine may be shared)
    best = None
    for _ in range(args.repeats):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            t = time.perf_counter()
            cp = criterion_path(X, y, "logistic", ridge, criteria=CHEAP_CRITERIA, n_mu=n_mu)
            total = time.perf_counter() - t
        if best is None or total < best[0]:
            best = (total, cp)
        warn_a = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    total_a, cp = best
    not_conv_a = sum(not r.converged for r in cp.results)
    crit_a = sum(cp.criterion_seconds.values())
    fit_a = total_a - crit_a

    # B: the same path, exact LOO by refitting at every mu
    t = time.perf_counter()
    loo = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        for mu, res in zip(cp.selectivities, cp.results, strict=True):
            loo.append(exact_loo(SelectiveProblem(X, y, "logistic", ridge, float(mu)), res)[0])
    loo_s = time.perf_counter() - t
    warn_b = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    total_b = fit_a + loo_s
    loo = np.asarray(loo)
    rel = float(np.median(np.abs(cp.values["alo"] - loo) / loo))
    speedup = total_b / total_a
    overhead = crit_a / fit_a

    lines = [
        f"# bench_diffloo{' (quick)' if args.quick else ''}",
        "",
        f"Synthetic logistic problem of Angulo Yauri (2020, ch. 5): N = {X.shape[0]}, "
        f"n = {X.shape[1]}, "
        f"{n_mu}-point μ path (10^-8 μ_max .. μ_max), γ = {ridge}, warm starts. "
        f"Machine: {platform.machine()}, Python {platform.python_version()}, one BLAS thread.",
        "",
        "| run | seconds |",
        "|---|---|",
        f"| path fits (Algorithm A x {n_mu}) | {fit_a:.2f} |",
        f"| cheap criteria on top (DiffLOO, exact derivative, IJ, ALO) | {crit_a:.3f} |",
        f"| **A: path + cheap criteria** | **{total_a:.2f}** |",
        f"| exact LOO by refitting ({X.shape[0]} refits x {n_mu} μ) | {loo_s:.1f} |",
        f"| **B: path + exact LOO** | **{total_b:.1f}** |",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| speed-up B / A | **{speedup:.0f}x** | >= 50x |",
        f"| criteria overhead / fits | **{100 * overhead:.1f} %** | <= 20 % |",
        f"| median relative difference ALO vs exact LOO along the path | {rel:.3f} | |",
        f"| ConvergenceWarnings: path fits (last repeat) / {X.shape[0] * n_mu} LOO refits "
        f"| {warn_a} / {warn_b} | 0 / 0 |",
        f"| path fits not converged | {not_conv_a} | 0 |",
        f"| μ chosen by ALO / by exact LOO | {cp.selectivities[np.argmin(cp.values['alo'])]:.4g}"
        f" / {cp.selectivities[np.argmin(loo)]:.4g} | |",
        "",
        "Reproduce: `python benchmarks/bench_diffloo.py" + (" --quick`" if args.quick else "`"),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    out = os.path.join(os.path.dirname(__file__), "results", "bench_diffloo.md")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    with threadpool_limits(1):  # small dense systems: extra BLAS threads only contend
        main()
