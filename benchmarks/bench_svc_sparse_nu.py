"""bisvm's kernel SVMs on sparse input and the ν formulations beside scikit-learn's
(LIBSVM), in one run, single-threaded, CPU time.

Workloads:

* ``sparse_rbf_svc``: SVC, RBF kernel (gamma='scale'), on a 20,000 × 20,000 CSR matrix
  of density 0.002 (uniform(0, 1) values; labels from a noisy linear score);
* ``sparse_linear_svc``: the same data, linear kernel;
* ``nu_svc``: NuSVC (ν = 0.3, RBF) on ``make_classification(10000, 20)`` standardised;
* ``one_class``: OneClassSVM (ν = 0.1, RBF) on the same 10,000 rows;
* ``nu_svr``: NuSVR (ν = 0.3, C = 1, RBF) on ``make_regression(10000, 20, noise=10)``
  standardised.

Both libraries use tol=1e-3 and cache_size=200 MB. The fits alternate (LIBSVM first) in
one process after a warm-up that compiles bisvm's numba code for every input type, and
each is timed with ``time.process_time`` (BLAS, OpenMP and numba limited to one thread
before numpy is imported). Reported per workload: median CPU seconds of each library,
their ratio (bisvm / LIBSVM; < 1: bisvm faster), iterations, support vectors, the share
of support vectors in common, the largest difference of decision values on 2,000 rows
(relative to their spread) and the share of equal predictions.

Usage::

    python benchmarks/bench_svc_sparse_nu.py            # full sizes, 3 repeats (sparse: 1)
    python benchmarks/bench_svc_sparse_nu.py --quick    # 5,000 rows, 1 repeat

Writes ``benchmarks/results/bench_svc_sparse_nu.md`` (``..._quick.md`` with ``--quick``).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
           "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

HERE = Path(__file__).resolve().parent


def sparse_problem(n, density=0.002, seed=0):
    """CSR ``n × n`` matrix with uniform(0, 1) non-zeros and labels from a noisy linear
    score (about half positive)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, n, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.uniform(0.0, 1.0, size=k))
    score = X @ rng.normal(size=n)
    score += 0.5 * score.std() * rng.normal(size=n)
    return X, (score > np.median(score)).astype(int)


def dense_problem(n, task):
    from sklearn.datasets import make_classification, make_regression
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        X, y = make_classification(n, 20, n_informative=10, flip_y=0.05, random_state=0)
        return StandardScaler().fit_transform(X), y
    X, y = make_regression(n, 20, noise=10.0, random_state=0)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def workloads(quick):
    import sklearn.svm as sk

    import bisvm.estimators.nu_svm as nu
    import bisvm.estimators.svm as ours

    n_sparse = 5000 if quick else 20000
    n_dense = 5000 if quick else 10000
    Xs, ys = sparse_problem(n_sparse)
    Xc, yc = dense_problem(n_dense, "classification")
    Xr, yr = dense_problem(n_dense, "regression")
    return [
        ("sparse_rbf_svc", Xs, ys, ours.SVC(), sk.SVC()),
        ("sparse_linear_svc", Xs, ys, ours.SVC(kernel="linear"), sk.SVC(kernel="linear")),
        ("nu_svc", Xc, yc, nu.NuSVC(nu=0.3), sk.NuSVC(nu=0.3)),
        ("one_class", Xc, None, nu.OneClassSVM(nu=0.1), sk.OneClassSVM(nu=0.1)),
        ("nu_svr", Xr, yr, nu.NuSVR(nu=0.3), sk.NuSVR(nu=0.3)),
    ]


def warm_up():
    """Compile bisvm's numba code for dense/sparse input and both cache dtypes."""
    import bisvm.estimators.nu_svm as nu
    import bisvm.estimators.svm as ours

    Xs, ys = sparse_problem(400, density=0.02)
    Xc, yc = dense_problem(400, "classification")
    for cache in (200, 0.1):  # float64 and float32 column pools
        for X in (Xs, Xc):
            ours.SVC(cache_size=cache).fit(X, ys if X is Xs else yc)
            ours.SVC(kernel="linear", cache_size=cache).fit(X, ys if X is Xs else yc)
        nu.NuSVC(cache_size=cache).fit(Xc, yc)
        nu.OneClassSVM(cache_size=cache).fit(Xc)
        nu.NuSVR(cache_size=cache).fit(Xc, yc.astype(float))


def _fit(est, X, y):
    from sklearn.base import clone

    est = clone(est)
    t = time.process_time()
    est.fit(X) if y is None else est.fit(X, y)
    return est, time.process_time() - t


def _decision(est, X):
    if hasattr(est, "decision_function"):
        return np.ravel(est.decision_function(X))
    return est.predict(X)


def _iterations(model):
    return int(np.sum(model.n_iter_))


def compare(name, X, y, ours, ref, repeats):
    t_ours, t_ref = [], []
    for _ in range(repeats):
        m_ref, t = _fit(ref, X, y)
        t_ref.append(t)
        m_ours, t = _fit(ours, X, y)
        t_ours.append(t)
        print(f"  {name}: LIBSVM {t_ref[-1]:.2f} s, bisvm {t_ours[-1]:.2f} s", flush=True)
    rows = np.random.default_rng(1).choice(X.shape[0], min(2000, X.shape[0]), replace=False)
    d_ref = _decision(m_ref, X[rows])
    d_ours = _decision(m_ours, X[rows])
    spread = float(np.ptp(d_ref)) or 1.0
    common = np.intersect1d(m_ours.support_, m_ref.support_).size
    return {
        "workload": name,
        "shape": f"{X.shape[0]} × {X.shape[1]}" + (" (CSR)" if sp.issparse(X) else ""),
        "ours": statistics.median(t_ours),
        "ref": statistics.median(t_ref),
        "iters": f"{_iterations(m_ours)} / {_iterations(m_ref)}",
        "svs": f"{m_ours.support_.size} / {m_ref.support_.size}",
        "common": common / max(m_ours.support_.size, m_ref.support_.size, 1),
        "dec": float(np.max(np.abs(d_ours - d_ref))) / spread,
        "same": float(np.mean(m_ours.predict(X[rows]) == m_ref.predict(X[rows])))
        if y is None or np.issubdtype(np.asarray(y).dtype, np.integer) else float("nan"),
    }


def write_markdown(results, quick, repeats):
    import sklearn

    out = HERE / "results" / ("bench_svc_sparse_nu_quick.md" if quick
                              else "bench_svc_sparse_nu.md")
    lines = [
        "# Sparse SVC, ν-SVC, one-class SVM and ν-SVR: bisvm vs scikit-learn (LIBSVM)",
        "",
        f"Command: `python benchmarks/bench_svc_sparse_nu.py{' --quick' if quick else ''}` "
        f"({repeats} fit(s) per library and workload, median CPU time, one thread).",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared), Python "
        f"{platform.python_version()}, scikit-learn {sklearn.__version__}. tol=1e-3, "
        "cache_size=200 MB, gamma='scale' for both. Ratio = bisvm / LIBSVM CPU time "
        "(< 1: bisvm faster).",
        "",
        "| workload | n × d | bisvm s | LIBSVM s | ratio | iterations bisvm / LIBSVM "
        "| SVs bisvm / LIBSVM | common SVs | max decision diff / spread | same predictions |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        same = "—" if np.isnan(r["same"]) else f"{100 * r['same']:.2f} %"
        lines.append(
            f"| {r['workload']} | {r['shape']} | {r['ours']:.2f} | {r['ref']:.2f} | "
            f"**{r['ours'] / r['ref']:.2f}** | {r['iters']} | {r['svs']} | "
            f"{100 * r['common']:.2f} % | {r['dec']:.1e} | {same} |"
        )
    lines += [
        "",
        "Decision values and predictions on 2,000 random training rows (ν-SVR: "
        "predictions, no label agreement).",
        "",
    ]
    out.write_text("\n".join(lines))
    print(f"wrote {out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--sparse-repeats", type=int, default=1,
                        help="fits of the sparse workloads (LIBSVM takes minutes there)")
    parser.add_argument("--only", nargs="*", default=None, help="workload names")
    args = parser.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    warm_up()
    results = []
    for name, X, y, ours, ref in workloads(args.quick):
        if args.only and name not in args.only:
            continue
        r = args.sparse_repeats if sp.issparse(X) else repeats
        results.append(compare(name, X, y, ours, ref, r))
    write_markdown(results, args.quick, f"{repeats} (sparse workloads: {args.sparse_repeats})")


if __name__ == "__main__":
    main()
