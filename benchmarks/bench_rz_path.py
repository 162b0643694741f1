"""The whole Rosset–Zhu path (Filipczuk 2013, ch. 6) against refitting scikit-learn's nearest
equivalent at each λ of a grid.

Problem: the L1-regularised L2-SVM without ridge term and without intercept,

    min_β  λ‖β‖₁ + C Σ_i max(0, 1 − t_i x_iᵀβ)²,

which is scikit-learn's ``LinearSVC(penalty="l1", loss="squared_hinge", dual=False,
fit_intercept=False)`` (LIBLINEAR's coordinate descent) with ``C_sklearn = C / λ`` (its
objective is ours divided by λ). LIBLINEAR has no warm start through scikit-learn, so each
λ is a fit from scratch. Two grids:

* the path's own breakpoints (every λ where the active set or a margin changes), the grid
  that reproduces the path exactly (at most 300 of them, evenly spaced, to keep the run
  short; the path itself is always computed whole);
* 50 λ log-spaced from λ_max to the end of the path (what a user would run).

For each: seconds of our path (one run gives every λ; evaluating ``solution`` at the grid
included) and of the scikit-learn grid, in the same process, BLAS limited to one thread
(LIBLINEAR is single-threaded); the ratio; and the agreement: largest
``|β_path − β_sklearn|`` over the grid and the largest relative objective excess
``(f(β_sklearn) − f(β_path)) / f(β_path)`` (positive = the path is better).

Writes ``benchmarks/results/bench_rz_path.md``::

    python benchmarks/bench_rz_path.py            # three data sets, about 1-3 minutes
    python benchmarks/bench_rz_path.py --quick    # Breast Cancer only
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC as SkLinearSVC
from threadpoolctl import threadpool_limits

from bisvm import l1_sqhinge_path

C = 1.0
TOL = 1e-6
MAX_BREAKPOINTS = 300


def datasets(quick):
    X, y = load_breast_cancer(return_X_y=True)
    yield "Breast Cancer (569×30, standardised)", StandardScaler().fit_transform(X), y
    if quick:
        return
    X, y = make_classification(2000, 100, n_informative=10, n_redundant=0, random_state=0)
    yield "make_classification (2000×100)", StandardScaler().fit_transform(X), y
    X, y = make_classification(5000, 200, n_informative=20, n_redundant=0, random_state=1)
    yield "make_classification (5000×200)", StandardScaler().fit_transform(X), y


def objective(X, t, coef, lam):
    return lam * np.abs(coef).sum() + C * (np.maximum(0.0, 1.0 - t * (X @ coef)) ** 2).sum()


def sklearn_grid(X, y, lams):
    coefs = []
    t0 = time.perf_counter()
    for lam in lams:
        m = SkLinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=C / lam,
                        fit_intercept=False, tol=TOL, max_iter=10000).fit(X, y)
        coefs.append(m.coef_.ravel().copy())
    return time.perf_counter() - t0, np.array(coefs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, X, y in datasets(args.quick):
            t = np.where(y == np.unique(y)[1], 1.0, -1.0)
            l1_sqhinge_path(X[:50], y[:50], l2_penalty=0.0, fit_intercept=False)  # warm-up
            t0 = time.perf_counter()
            path = l1_sqhinge_path(X, y, C=C, l2_penalty=0.0, fit_intercept=False,
                                   lambda_min_ratio=1e-3)
            t_path = time.perf_counter() - t0
            bps = path.breakpoints[path.breakpoints > 0]
            if bps.size > MAX_BREAKPOINTS:  # keep the run to minutes: evenly spaced subset
                bps = bps[np.linspace(0, bps.size - 1, MAX_BREAKPOINTS).astype(int)]
            grids = {
                "breakpoints": bps,
                "50 log-spaced": np.geomspace(path.lambda_max, path.lambda_min, 50),
            }
            for gname, lams in grids.items():
                t0 = time.perf_counter()
                ours = np.array([path.solution(lam)[0] for lam in lams])
                t_ours = t_path + time.perf_counter() - t0
                t_sk, sk = sklearn_grid(X, y, lams)
                diff = float(np.abs(ours - sk).max())
                excess = max(
                    (objective(X, t, s, lam) - objective(X, t, o, lam))
                    / objective(X, t, o, lam) for lam, o, s in zip(lams, ours, sk))
                rows.append((name, gname, lams.size, path.n_events, t_ours, t_sk,
                             t_sk / t_ours, diff, excess))
                print(f"{name:40s} {gname:14s} λ={lams.size:5d} path {t_ours:7.3f}s "
                      f"sklearn {t_sk:7.3f}s ratio {t_sk / t_ours:7.1f}  "
                      f"max|Δβ| {diff:.1e}  obj excess {excess:.1e}", flush=True)
    out = Path(__file__).parent / "results" / "bench_rz_path.md"
    out.parent.mkdir(exist_ok=True)
    lines = [
        "# Rosset–Zhu path vs refitting LinearSVC(penalty='l1', loss='squared_hinge')",
        "",
        f"`python benchmarks/bench_rz_path.py{' --quick' if args.quick else ''}` — "
        f"min λ‖β‖₁ + C Σ max(0, 1 − t xᵀβ)², C = {C}, no intercept, path from λ_max to "
        f"1e-3 λ_max; scikit-learn {__import__('sklearn').__version__} LinearSVC with "
        f"C/λ, tol={TOL}, a fit from scratch per λ; one BLAS thread, same process. "
        "Ratio = scikit-learn seconds / path seconds (> 1: the path is faster). "
        "Objective excess = (f(β_sklearn) − f(β_path)) / f(β_path).",
        "",
        "| data | λ grid | λ values | path events | path s | sklearn s | ratio | "
        "max abs Δβ | max obj. excess |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.3f} | {r[5]:.3f} | "
                     f"{r[6]:.1f} | {r[7]:.1e} | {r[8]:.1e} |")
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
