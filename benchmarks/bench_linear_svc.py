"""``bisvm.LinearSVC`` (dual coordinate descent in numba) against scikit-learn's
``LinearSVC`` (LIBLINEAR 2.x vendored) and the official LIBLINEAR binding
(``pip install liblinear-official``), in the same run, same data, same C, tolerance and
iteration cap; hinge and squared hinge, dual solver, intercept as LIBLINEAR's bias
feature (``-B 1``).

Data:
* dense  — ``make_classification(n_samples=200000, n_features=200, random_state=0)``;
* sparse — a CSR problem of similar size: 200000 × 20000, 20 non-zeros per row
  (log-normal values), labels from a sparse linear model with 5 % label noise.

For each run: wall time of ``fit`` (ours after a warm-up call that loads the numba cache),
epochs, primal objective :math:`\\tfrac12\\|w\\|^2 + C\\sum\\xi_i` of every solution
evaluated by the same function, training accuracy, and the wall- and CPU-time ratios ours /
reference (best of ``--repeats`` runs for fits under 10 s).
Writes ``benchmarks/results/bench_linear_svc.md``.

    python benchmarks/bench_linear_svc.py            # full size (several minutes)
    python benchmarks/bench_linear_svc.py --quick    # 20000 rows
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC as SkLinearSVC

from bisvm import LinearSVC
from bisvm.solvers.dual.dual_cd import svm_primal_objective

try:
    from liblinear import liblinearutil
except ImportError:  # pragma: no cover - optional reference
    liblinearutil = None


def sparse_problem(n, d, nnz_per_row, seed=0):
    rng = np.random.default_rng(seed)
    indptr = np.arange(n + 1) * nnz_per_row
    # Zipf-like column popularity, as in text data
    pop = 1.0 / np.arange(1, d + 1) ** 0.8
    pop /= pop.sum()
    indices = rng.choice(d, size=n * nnz_per_row, p=pop).astype(np.int32)
    data = rng.lognormal(0.0, 0.5, size=n * nnz_per_row)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(X.multiply(X).sum(axis=1).A.ravel())) @ X  # unit rows
    w = rng.normal(size=d) * (rng.random(d) < 0.2)
    z = X @ w
    y = (z > np.median(z)).astype(int)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    return sp.csr_matrix(X), y


def objective(X, y, coef, intercept, C, loss):
    ys = np.where(y == 1, 1.0, -1.0)
    w = np.r_[np.ravel(coef), intercept]
    return svm_primal_objective(X, ys, w, np.full(len(y), C), loss, 1.0)


def timed(repeats, fit, *args):
    """``(wall seconds, CPU seconds, result)`` of the best of ``repeats`` runs for fits
    under 10 s (on a shared machine a single 1-s timing is mostly noise), one run
    otherwise. All three solvers are single-threaded, so CPU time is the fairer ratio when
    other jobs share the cores."""
    best = None
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        out = fit(*args)
        dt, dc = time.perf_counter() - t, time.process_time() - c
        if best is None or dt < best[0]:
            best = (dt, dc, out)
        if dt > 10.0:
            break
    return best


def run(name, X, y, C, tol, max_iter, rows, repeats=3):
    yy = np.where(y == 1, 1.0, -1.0)
    for loss in ("hinge", "squared_hinge"):
        kw = dict(C=C, loss=loss, dual=True, tol=tol, max_iter=max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            LinearSVC(**kw).fit(X[:50], y[:50])  # numba cache load, not timed
            t_ours, c_ours, ours = timed(repeats, LinearSVC(random_state=0, **kw).fit, X, y)
            t_sk, c_sk, ref = timed(repeats, SkLinearSVC(random_state=0, **kw).fit, X, y)
        f_ours = objective(X, y, ours.coef_, ours.intercept_[0], C, loss)
        f_sk = objective(X, y, ref.coef_, ref.intercept_[0], C, loss)
        rows.append([name, loss, "bisvm.LinearSVC", f"{t_ours:.2f}", ours.n_iter_,
                     f"{f_ours:.6g}", f"{ours.score(X, y):.4f}", "1.00", "1.00"])
        rows.append([name, loss, "sklearn LinearSVC", f"{t_sk:.2f}", ref.n_iter_,
                     f"{f_sk:.6g}", f"{ref.score(X, y):.4f}", f"{t_ours / t_sk:.2f}",
                     f"{c_ours / c_sk:.2f}"])
        if liblinearutil is not None:
            solver = 3 if loss == "hinge" else 1
            t = time.perf_counter()
            prob = liblinearutil.problem(yy, X, bias=1)
            t_conv = time.perf_counter() - t
            t_ll, c_ll, m = timed(repeats, liblinearutil.train, prob,
                            f"-s {solver} -c {C} -e {tol} -B 1 -q")
            w = np.array([m.w[j] for j in range(X.shape[1] + 1)])
            lab = m.get_labels()
            if lab[0] != 1:  # LIBLINEAR's first label is its positive class
                w = -w
            f_ll = svm_primal_objective(X, yy, w, np.full(len(y), C), loss, 1.0)
            acc = float(np.mean(np.sign(np.asarray(X @ w[:-1]).ravel() + w[-1]) == yy))
            rows.append([name, loss, "liblinear-official", f"{t_ll:.2f} (+{t_conv:.2f} load)",
                         "-", f"{f_ll:.6g}", f"{acc:.4f}", f"{t_ours / t_ll:.2f}",
                         f"{c_ours / c_ll:.2f}"])
        print(*rows[-3:], sep="\n", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="20000 rows instead of 200000")
    ap.add_argument("--C", type=float, default=0.1)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3,
                    help="best of this many runs for fits under 10 s")
    args = ap.parse_args()
    n = 20000 if args.quick else 200000
    rows = []
    X, y = make_classification(n_samples=n, n_features=200, random_state=0)
    run(f"dense {n}×200", X, y, args.C, args.tol, args.max_iter, rows, args.repeats)
    del X
    Xs, ys = sparse_problem(n, 20000, 20)
    run(f"sparse CSR {n}×20000 (nnz {Xs.nnz})", Xs, ys, args.C, args.tol, args.max_iter,
        rows, args.repeats)
    head = ["data", "loss", "solver", "fit seconds", "epochs", "primal objective",
            "train accuracy", "time ratio ours/this", "CPU-time ratio ours/this"]
    lines = [
        "# bisvm.LinearSVC vs LIBLINEAR",
        "",
        f"`python benchmarks/bench_linear_svc.py{' --quick' if args.quick else ''}` — "
        f"C={args.C}, tol={args.tol}, max_iter={args.max_iter}, dual coordinate descent, "
        f"best of {args.repeats} runs for fits under 10 s, "
        "bias feature 1. Machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared). "
        "liblinear-official: "
        + ("installed" if liblinearutil is not None else "not installed (pip failed)")
        + "; its 'load' time is the conversion to its own sparse format, not included in "
        "the ratio.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ] + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    out = Path(__file__).parent / "results" / "bench_linear_svc.md"
    out.parent.mkdir(exist_ok=True)
    if args.quick:
        out = out.with_name("bench_linear_svc_quick.md")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
