"""One fit of one tool on one workload, in its own process (see bench_kernel_speed.py).

Usage::

    python benchmarks/bench_kernel_worker.py TOOL WORKLOAD THREADS [REPEATS]

``TOOL`` is ``bisvm``, ``sklearn`` (LIBSVM inside scikit-learn), ``sklearnex`` (Intel
oneDAL) or ``libsvm`` (libsvm-official's Python binding). The thread count is fixed by the
parent through the environment (``OMP_NUM_THREADS``, ``NUMBA_NUM_THREADS``, ...) and here
(oneDAL's ``daalinit``, bisvm's ``n_jobs``). A warm-up fit on the first 300 rows runs
first (numba's compilation, oneDAL's dispatch; for bisvm also a solve of those rows by
the working-set solver, which the timed fit of a large problem takes), then
``REPEATS`` timed fits; the worker prints one JSON line: the median CPU and wall
seconds of the timed fits, the peak resident memory of the process, the support set,
the dual objective (:func:`dual_objective`, the same formula for every tool) and bisvm's
solver profile.
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

WORKLOADS = ("rbf_svc_15000x50", "rbf_svc_16000x40", "rbf_svr_7500x20", "poly3_svc_3750x20",
             "rbf_svc_breast_cancer", "rbf_svc_digits", "oneclass_10000x20",
             "rbf_svc_100000x50", "rbf_svr_50000x20")


def make_workload(name):
    """``(X, y, params, task)``; ``params`` carry a numeric gamma (``1 / (d Var X)``,
    scikit-learn's ``"scale"``) so that every tool uses the same kernel."""
    from sklearn.datasets import (
        load_breast_cancer,
        load_digits,
        make_classification,
        make_regression,
    )
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    def std(X):
        return StandardScaler().fit_transform(X)

    task = "svc"
    extra = {"kernel": "rbf", "C": 1.0}
    if name.startswith("rbf_svc_") and name[8].isdigit():
        n, d = (int(v) for v in name[8:].split("x"))
        X, y = make_classification(n_samples=n, n_features=d, n_informative=20,
                                   random_state=0 if d == 50 else 1)
        X = std(X)
    elif name in ("rbf_svr_7500x20", "rbf_svr_50000x20"):
        X, y = make_regression(n_samples=int(name[8:].split("x")[0]), n_features=20,
                               n_informative=10, noise=10.0, random_state=0)
        X = std(X)
        y = (y - y.mean()) / y.std()
        task = "svr"
        extra["epsilon"] = 0.1
    elif name == "poly3_svc_3750x20":
        X, y = make_classification(n_samples=5000, n_features=20, n_informative=10,
                                   random_state=0)
        X = std(X)
        X, _, y, _ = train_test_split(X, y, random_state=0)
        extra = {"kernel": "poly", "degree": 3, "coef0": 1.0, "C": 1.0}
    elif name == "rbf_svc_breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
        X, _, y, _ = train_test_split(X, y, random_state=0)
        X = std(X)
    elif name == "rbf_svc_digits":
        X, y = load_digits(return_X_y=True)
        X, _, y, _ = train_test_split(X / 16.0, (y == 0).astype(int), random_state=0)
    elif name == "oneclass_10000x20":
        X = np.random.default_rng(0).normal(size=(10000, 20))
        y = None
        task = "oneclass"
        extra = {"kernel": "rbf", "nu": 0.5}
    else:
        raise ValueError(name)
    X = np.ascontiguousarray(X, dtype=np.float64)
    extra["gamma"] = float(1.0 / (X.shape[1] * X.var()))
    return X, y, extra, task


def kernel_block(A, B, params):
    from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

    if params["kernel"] == "rbf":
        return rbf_kernel(A, B, gamma=params["gamma"])
    return polynomial_kernel(A, B, degree=params["degree"], gamma=params["gamma"],
                             coef0=params["coef0"])


def dual_objective(X, y, params, task, support, coef):
    r"""LIBSVM's dual objective from the support set and the dual coefficients
    (:math:`c = y\alpha` for C-SVC, :math:`\beta = \alpha - \alpha^*` for ε-SVR, α for
    the one-class SVM): :math:`\tfrac12 c^\top Kc - \sum|c|`,
    :math:`\tfrac12\beta^\top K\beta - z^\top\beta + \varepsilon\sum|\beta|`, or
    :math:`\tfrac12\alpha^\top K\alpha`; the quadratic form in blocks of rows."""
    S = X[support]
    quad = 0.0
    for r0 in range(0, support.size, 2000):
        quad += float(coef[r0:r0 + 2000] @ (kernel_block(S[r0:r0 + 2000], S, params) @ coef))
    if task == "svc":
        return 0.5 * quad - float(np.abs(coef).sum())
    if task == "svr":
        return 0.5 * quad - float(y[support] @ coef) + params["epsilon"] * float(
            np.abs(coef).sum())
    return 0.5 * quad


def _estimator(tool, task, params, threads, cache_size=200):
    if tool == "bisvm":
        import bisvm as mod

        extra = {"n_jobs": threads}
    elif tool == "sklearn":
        import sklearn.svm as mod

        extra = {}
    else:
        import daal4py
        import sklearnex.svm as mod

        daal4py.daalinit(threads)
        extra = {}
    cls = {"svc": "SVC", "svr": "SVR", "oneclass": "OneClassSVM"}[task]
    return getattr(mod, cls)(tol=1e-3, cache_size=cache_size, **params, **extra)


def _libsvm_problem(X, y):
    """libsvm-official's problem (its conversion of X to LIBSVM's sparse nodes is not
    part of the fit, as scikit-learn's call into LIBSVM converts nothing)."""
    from libsvm.svmutil import svm_problem

    labels = np.zeros(X.shape[0]) if y is None else np.asarray(y, dtype=float)
    return svm_problem(labels, X)


def _libsvm_fit(prob, params, task):
    from libsvm.svmutil import svm_parameter, svm_train

    s = {"svc": 0, "svr": 3, "oneclass": 2}[task]
    t = {"rbf": 2, "poly": 1}[params["kernel"]]
    opts = f"-s {s} -t {t} -g {params['gamma']!r} -e 0.001 -m 200 -q"
    if params["kernel"] == "poly":
        opts += f" -d {params['degree']} -r {params['coef0']!r}"
    if task == "oneclass":
        opts += f" -n {params['nu']!r}"
    else:
        opts += f" -c {params['C']!r}"
    if task == "svr":
        opts += f" -p {params['epsilon']!r}"
    return svm_train(prob, svm_parameter(opts))


def fit_once(tool, X, y, params, task, threads, cache_size=200):
    """Fit and return ``(support, coef)`` (support sorted); ``X`` is libsvm-official's
    prepared problem for that tool."""
    if tool == "libsvm":
        m = _libsvm_fit(X, params, task)
        sup = np.asarray(m.get_sv_indices(), dtype=np.int64) - 1
        coef = np.asarray([c[0] for c in m.get_sv_coef()])
    else:
        est = _estimator(tool, task, params, threads, cache_size)
        est.fit(X) if task == "oneclass" else est.fit(X, y)
        sup = np.asarray(est.support_, dtype=np.int64)
        coef = np.asarray(est.dual_coef_).ravel()
        fit_once.last = est
    order = np.argsort(sup)
    return sup[order], coef[order]


def main():
    tool, name, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    X, y, params, task = make_workload(name)
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    small = (X[:300], None if y is None else y[:300])
    data = X
    if tool == "libsvm":
        small = (_libsvm_problem(*small), small[1])
        data = _libsvm_problem(X, y)
    fit_once(tool, small[0], small[1], params, task, threads)
    if tool == "bisvm":  # the float32 column pool of the large problems: its own code
        fit_once(tool, small[0], small[1], params, task, threads, cache_size=0.1)
        if task != "oneclass":  # the working-set solver that large problems take
            _bisvm_profile(small[0], small[1], params, task, threads, method="working_set")
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        sup, coef = fit_once(tool, data, y, params, task, threads)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    out = {
        "tool": tool, "workload": name, "threads": threads,
        "cpu_s": float(np.median(cpu)), "wall_s": float(np.median(wall)),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "data_rss_mb": rss_data, "n_sv": int(sup.size), "support": sup.tolist(),
        "objective": dual_objective(X, y, params, task, sup, coef),
    }
    if tool == "bisvm" and X.shape[0] <= 20000:
        out["profile"], out["solver"] = _bisvm_profile(X, y, params, task, threads)
    print(json.dumps(out))


def _bisvm_profile(X, y, params, task, threads, method="auto"):
    """Seconds per phase of one more solve (the estimator does not keep the solver's
    record): the same dual, solved directly by ``solve_smo`` (``method="auto"``, as the
    estimator), and the solver it took (``"smo"`` or ``"working_set"``)."""
    from bisvm.kernels import make_kernel
    from bisvm.solvers.dual.nu_smo import one_class_dual
    from bisvm.solvers.dual.smo import csvc_dual, epsilon_svr_dual, solve_smo

    ker = make_kernel(params["kernel"], gamma=params["gamma"], coef0=params.get("coef0", 0.0),
                      degree=params.get("degree", 3))
    if task == "svc":
        pb = csvc_dual(X, np.where(y == np.unique(y)[0], 1.0, -1.0), ker, params["C"])
    elif task == "svr":
        pb = epsilon_svr_dual(X, y, ker, params["C"], params["epsilon"])
    else:
        pb = one_class_dual(X, ker, params["nu"])
    res = solve_smo(pb, n_jobs=threads, method=method)
    solver = "working_set" if "subproblem" in res.stats["profile"] else "smo"
    return dict(res.stats["profile"]), solver


if __name__ == "__main__":
    main()
