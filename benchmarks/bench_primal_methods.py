"""The comparison of J. Filipczuk (2013, ch. 3), "Ottimizzazione dei Metodi Kernel"
(thesis, in Italian), measured: gradient descent, Newton (Cholesky), BFGS, L-BFGS,
nonlinear conjugate gradient, block coordinate descent and (squared hinge only) the finite
Newton method, on the same strongly convex problems

    F(w) = (1/n) Σ ℓ(y_i, x_iᵀw) + (α/2)‖w‖²,   ℓ ∈ {squared hinge, logistic,
                                                   smoothed hinge μ=0.25, squared},

through the common interface (``SmoothProblem`` → ``SolverResult``). For each method:
iterations, objective(-and-gradient) evaluations and seconds until the relative gap
``(F(w_k) − F*)/|F*|`` first falls to 1e-8, where F* is the best objective found by any
method (all of them run to a gradient norm of 1e-10). "—" = not reached within the
iteration cap. Each method runs once untimed first (numba caches load on a first call).
Evaluations of block coordinate descent are *block* objective evaluations; the finite
Newton method evaluates the objective once per iteration (its exact line search works on
sorted breakpoints). BLAS is limited to one thread.

Data: ``make_classification(n, d, n_redundant=0, random_state=0)``, standardised,
column j scaled by ``10^(j/d)`` (condition number ~10² from the scaling alone), plus a
column of ones.
Writes ``benchmarks/results/bench_primal_methods.md``.

    python benchmarks/bench_primal_methods.py            # n=5000, d=100
    python benchmarks/bench_primal_methods.py --quick    # n=1000, d=20
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from bisvm.losses import Logistic, SmoothedHinge, Squared, SquaredHinge
from bisvm.penalties import L2
from bisvm.solvers import (
    SmoothProblem,
    solve_bfgs,
    solve_block_coordinate_descent,
    solve_gradient_descent,
    solve_lbfgs,
    solve_newton,
    solve_nonlinear_cg,
)
from bisvm.solvers.primal.finite_newton import solve_finite_newton_problem

GAP = 1e-8
TOL = 1e-10


class Counting:
    """A SmoothProblem proxy that logs every objective evaluation (value, time)."""

    def __init__(self, problem):
        self.p = problem
        self.log = []
        self.t0 = time.perf_counter()

    def __getattr__(self, name):
        return getattr(self.p, name)

    def value_and_gradient(self, w):
        f, g = self.p.value_and_gradient(w)
        self.log.append((f, time.perf_counter() - self.t0))
        return f, g

    def value_gradient_curvature(self, w):  # Newton's fused evaluation, when available
        out = self.p.value_gradient_curvature(w)
        self.log.append((out[0], time.perf_counter() - self.t0))
        return out


METHODS = {
    "gradient descent": lambda P: solve_gradient_descent(P, tol=TOL, max_iter=20000),
    "Newton (Cholesky)": lambda P: solve_newton(P, tol=TOL, max_iter=200),
    "BFGS": lambda P: solve_bfgs(P, tol=TOL, max_iter=5000),
    "L-BFGS (m=10)": lambda P: solve_lbfgs(P, tol=TOL, max_iter=5000),
    "nonlinear CG (PR+)": lambda P: solve_nonlinear_cg(P, tol=TOL, max_iter=20000),
    "block CD (blocks of 10)": lambda P: solve_block_coordinate_descent(
        P, tol=TOL, max_iter=2000, block_size=10),
    "finite Newton": lambda P: solve_finite_newton_problem(P, tol=1e-14, max_iter=200),
}


def problems(n, d, alpha):
    X, y = make_classification(n, d, n_informative=max(2, d // 4), n_redundant=0,
                               random_state=0)
    X = (X - X.mean(0)) / X.std(0) * 10.0 ** (np.arange(d) / d)
    X = np.c_[X, np.ones(n)]
    ys = 2.0 * y - 1.0
    for name, loss in [("squared hinge", SquaredHinge()), ("logistic", Logistic()),
                       ("smoothed hinge μ=0.25", SmoothedHinge(0.25)),
                       ("squared (ridge)", Squared())]:
        yield name, SmoothProblem(X, ys, loss, L2(alpha))


def first_reach(values, fstar):
    gaps = (np.asarray(values) - fstar) / abs(fstar)
    hit = np.flatnonzero(gaps <= GAP)
    return int(hit[0]) if hit.size else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="n=1000, d=20")
    ap.add_argument("--alpha", type=float, default=1e-3, help="L2 strength α")
    args = ap.parse_args()
    n, d = (1000, 20) if args.quick else (5000, 100)
    rows = []
    for pname, P in problems(n, d, args.alpha):
        runs = {}
        for mname, solve in METHODS.items():
            if mname == "finite Newton" and not isinstance(P.loss, SquaredHinge):
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    solve(Counting(P))  # warm-up: numba caches load on first call
                    C = Counting(P)
                    r = solve(C)
            except Exception as exc:  # reported in the table, not hidden
                rows.append([pname, mname, f"error: {type(exc).__name__}: {exc}"] + [""] * 5)
                print(rows[-1], flush=True)
                continue
            runs[mname] = (r, C.log)
        fstar = min(r.objective for r, _ in runs.values())
        for mname, (r, log) in runs.items():
            k = first_reach(r.record.objective, fstar)
            if log:  # evaluations and time of the first evaluated point within the gap
                e = first_reach([f for f, _ in log], fstar)
                evals = "—" if e is None else e + 1
                secs = "—" if e is None else f"{log[e][1]:.3f}"
            else:
                evals = "—" if k is None else (
                    int(r.stats["evals_per_sweep"][k]) if "evals_per_sweep" in r.stats
                    else k + 1)
                secs = "—" if k is None else f"{r.record.seconds[k]:.3f}"
            rows.append([pname, mname, "—" if k is None else k, evals, secs,
                         f"{(r.objective - fstar) / abs(fstar):.1e}", r.n_iter,
                         f"{r.seconds:.3f}"])
            print(rows[-1], flush=True)
    head = ["problem", "method", "iterations to 1e-8", "evaluations to 1e-8",
            "seconds to 1e-8", "final rel. gap", "iterations (total)", "seconds (total)"]
    lines = [
        "# Primal methods of Filipczuk (2013, ch. 3) on the same problems",
        "",
        f"`python benchmarks/bench_primal_methods.py{' --quick' if args.quick else ''}` — "
        f"n={n}, d={d}+1, α={args.alpha}, every method run to ‖∇F‖ ≤ {TOL:g}; "
        "gap relative to the best objective found. Block CD counts sweeps as iterations. "
        "One BLAS thread.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ] + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    out = Path(__file__).parent / "results" / (
        "bench_primal_methods_quick.md" if args.quick else "bench_primal_methods.md")
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    # one BLAS thread: on a shared machine multithreaded BLAS wake-ups dominate the small
    # matrix-vector products of every method, and all methods get the same single core
    with threadpool_limits(1):
        main()
