"""SMO iteration counts of bisvm and LIBSVM at one grid point, over random subsamples.

Both solvers apply the same rules (Fan, Chen & Lin 2005: the maximal violator ``i``, the
second-order ``j``, the analytic step, shrinking every ``min(l, 1000)`` iterations, the
gradient rebuilt once the gap is within ``10 tol``, stop when ``m - M < tol``). Their
iterates still part: LIBSVM stores kernel columns in single precision (``Qfloat``) and
groups the rows by class, so ties among equal violations at the start are broken at
other rows. On a long solve (large C) the two trajectories then need different numbers
of iterations, by tens of percent either way on a single fit. This script measures
whether one needs more on average: for ``--repeats`` random 80 % subsamples of a table
it solves the C-SVC dual with

* bisvm's SMO with float64 columns (the default when every column fits in the cache),
* bisvm's SMO with float32 columns (a cache smaller than ``8 n^2`` bytes),
* scikit-learn's ``SVC`` (LIBSVM),

all at ``tol=1e-3`` with shrinking, and reports the geometric mean of the iteration
ratios with its standard error, and the largest difference of the dual objectives
(evaluated in float64 on the exact kernel; negative: bisvm's is lower, i.e. better).

Usage::

    python benchmarks/bench_kernel_speed_iterations.py --table synth --C 1000 \\
        --gamma-factor 3.1623 --repeats 40
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_kernel_grid import load_table  # noqa: E402


def dual_objective(K, y, alpha):
    """:math:`\\tfrac12\\alpha^\\top Q\\alpha - e^\\top\\alpha` with :math:`Q = yy^\\top K`."""
    v = alpha * y
    return 0.5 * v @ K @ v - alpha.sum()


def one_subsample(X, y, C, gamma, rng):
    """Iterations and dual objectives of the three solvers on one 80 % subsample."""
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.svm import SVC

    from bisvm.kernels import make_kernel
    from bisvm.solvers.dual.smo import csvc_dual, solve_smo

    idx = rng.choice(len(y), int(0.8 * len(y)), replace=False)
    Xt = X[idx]
    classes = np.unique(y)
    yt = np.where(y[idx] == classes[0], 1.0, -1.0)  # LIBSVM's sign: first class +1
    n = len(yt)
    problem = csvc_dual(Xt, yt, make_kernel("rbf", gamma=gamma), C)
    r64 = solve_smo(problem, tol=1e-3, method="smo")
    # a cache one column short of all n in float64 holds them all in float32
    r32 = solve_smo(problem, tol=1e-3, method="smo", cache_size=0.99 * 8 * n * n / 2**20)
    sk = SVC(C=C, gamma=gamma, tol=1e-3, cache_size=200).fit(Xt, y[idx])
    a_sk = np.zeros(n)
    a_sk[sk.support_] = np.abs(sk.dual_coef_[0])
    K = rbf_kernel(Xt, gamma=gamma)
    return {"bisvm64": int(r64.n_iter), "bisvm32": int(r32.n_iter),
            "libsvm": int(sk.n_iter_[0]),
            "obj_bisvm64": float(dual_objective(K, yt, r64.dual_coef)),
            "obj_bisvm32": float(dual_objective(K, yt, r32.dual_coef)),
            "obj_libsvm": float(dual_objective(K, yt, a_sk))}


def geo_ratio(a, b):
    lr = np.log(np.asarray(a, float) / np.asarray(b, float))
    return float(np.exp(lr.mean())), float(lr.std(ddof=1) / np.sqrt(lr.size))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default="synth")
    ap.add_argument("--C", type=float, default=1000.0)
    ap.add_argument("--gamma-factor", type=float, default=10 ** 0.5,
                    help="gamma = factor / (d var X)")
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_kernel_speed_iterations"))
    args = ap.parse_args(argv)
    if args.repeats < 2:
        ap.error("--repeats must be >= 2")
    warnings.simplefilter("ignore")
    X, y = load_table(args.table)
    gamma = args.gamma_factor / (X.shape[1] * X.var())
    rng = np.random.default_rng(args.seed)
    rows = [one_subsample(X, y, args.C, gamma, rng) for _ in range(args.repeats)]
    it = {k: [r[k] for r in rows] for k in ("bisvm64", "bisvm32", "libsvm")}
    summary = {
        "bisvm64/libsvm": geo_ratio(it["bisvm64"], it["libsvm"]),
        "bisvm32/libsvm": geo_ratio(it["bisvm32"], it["libsvm"]),
        "bisvm64/bisvm32": geo_ratio(it["bisvm64"], it["bisvm32"]),
    }
    d64 = [r["obj_bisvm64"] - r["obj_libsvm"] for r in rows]
    d32 = [r["obj_bisvm32"] - r["obj_libsvm"] for r in rows]
    rel = max(abs(r["obj_libsvm"]) for r in rows)
    command = "python benchmarks/bench_kernel_speed_iterations.py " + " ".join(
        argv if argv is not None else sys.argv[1:])
    lines = [f"# SMO iterations, bisvm against LIBSVM: {args.table}, C = {args.C:g}, "
             f"gamma = {gamma:.3g}", "", f"Command: `{command.strip()}`", "",
             f"{args.repeats} random 80 % subsamples of the {X.shape[0]} x {X.shape[1]} "
             "table (seed {}), C-SVC dual, RBF kernel, tol 1e-3, shrinking; LIBSVM through "
             "scikit-learn's SVC. Ratios are geometric means over the subsamples with the "
             "standard error of the mean log ratio.".format(args.seed), "",
             "| ratio of iterations | geometric mean | s.e. (log) |", "|---|---|---|"]
    for k, (g, se) in summary.items():
        lines.append(f"| {k} | {g:.3f} | {se:.3f} |")
    lines += ["", f"Mean iterations: bisvm float64 {np.mean(it['bisvm64']):.0f}, bisvm float32 "
              f"{np.mean(it['bisvm32']):.0f}, LIBSVM {np.mean(it['libsvm']):.0f}; per "
              f"subsample the ratio bisvm64/LIBSVM ranges over "
              f"{min(a / b for a, b in zip(it['bisvm64'], it['libsvm'])):.2f}-"
              f"{max(a / b for a, b in zip(it['bisvm64'], it['libsvm'])):.2f}.", "",
              f"Dual objective, bisvm minus LIBSVM (largest |objective| {rel:.4g}): float64 "
              f"columns mean {np.mean(d64):+.3g} (range {min(d64):+.3g} to {max(d64):+.3g}), "
              f"float32 columns mean {np.mean(d32):+.3g}; negative means bisvm's objective "
              "is lower (better).", ""]
    out = Path(args.out)
    out.with_suffix(".md").write_text("\n".join(lines))
    out.with_suffix(".json").write_text(json.dumps(
        {"command": command.strip(), "summary": summary, "rows": rows}, indent=1) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
