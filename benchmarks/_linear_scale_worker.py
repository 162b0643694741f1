"""One fit of bench_linear_scale.py in its own process; prints one JSON line.

``python _linear_scale_worker.py '<spec json>'`` with the spec's ``rows``, ``cols``, ``nnz``,
``seed``, ``method`` (a key of :data:`FITS`) and ``C``. The data come from the /tmp cache
of ``_linear_scale_data``. The figures: CPU seconds of the fit (``time.process_time``, all
threads of the process), the growth of the resident set during the fit (peak
``VmHWM``, reset through ``/proc/self/clear_refs`` after loading the data and the
compiled code, minus the resident set at the start of the fit, freed heap returned with
``malloc_trim`` first) and ``ru_maxrss``; the objective is computed here from the returned
weights by the same formula for every library.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import resource
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _linear_scale_data import load  # noqa: E402

EPSILON = 0.1  # the tube of the regression problems (LIBLINEAR's -p default)


def objective(kind, X, y, w, C):
    """The primal objective of ``kind`` at ``w`` (no intercept), the same for every
    library."""
    z = X @ w
    if kind == "l2_hinge":
        return float(0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * z).sum())
    if kind in ("l2_sq", "l1_sq"):
        r = np.maximum(0.0, 1.0 - y * z)
        reg = 0.5 * w @ w if kind == "l2_sq" else np.abs(w).sum()
        return float(reg + C * r @ r)
    r = np.maximum(0.0, np.abs(y - z) - EPSILON)
    return float(0.5 * w @ w + C * (r @ r if kind == "svr_sq" else r.sum()))


def _bisvm(method, X, y, C, tol):
    from bisvm.losses import Hinge, SquaredEpsilonInsensitive, SquaredHinge
    from bisvm.solvers.dual.dual_cd import solve_dual_cd
    from bisvm.solvers.primal.finite_newton import solve_finite_newton
    from bisvm.solvers.primal.l1_cd import solve_l1_cd
    from bisvm.solvers.primal.svr_finite_newton import solve_svr_finite_newton
    from bisvm.solvers.problems import LinearProblem

    cost = np.full(X.shape[0], float(C))
    if method in ("bisvm_l2_hinge", "bisvm_l2_hinge_gap"):  # dual CD, either rule
        rule = "duality_gap" if method.endswith("_gap") else "projected_gradient"
        return solve_dual_cd(LinearProblem(X, y, Hinge(), cost), tol=tol, max_iter=1000,
                             stopping=rule, warn=False).coef
    if method == "bisvm_l2_sq":
        return solve_finite_newton(LinearProblem(X, y, SquaredHinge(), cost), tol=tol,
                                   max_iter=1000).coef
    if method == "bisvm_l1_sq":
        return solve_l1_cd(LinearProblem(X, y, SquaredHinge(), cost), tol=tol,
                           max_iter=1000).coef
    return solve_svr_finite_newton(LinearProblem(X, y, SquaredEpsilonInsensitive(EPSILON),
                                                 cost), tol=tol, max_iter=1000).coef


def _liblinear(opts, X, y, C, timer):
    from liblinear.liblinearutil import parameter, problem, train

    prob = problem(y, X)
    timer["convert"] = time.process_time() - timer["t0"]
    t = time.process_time()
    m = train(prob, parameter(f"{opts} -c {C} -q"))
    timer["train"] = time.process_time() - t
    w = np.array([m.w[i] for i in range(m.nr_feature)])
    if m.nr_class == 2 and m.get_labels()[0] == -1:
        w = -w  # LIBLINEAR orients w towards its first label
    return w


def _sklearn(method, X, y, C, tol):
    from sklearn.svm import LinearSVC, LinearSVR

    if method == "sklearn_l2_sq":
        est = LinearSVC(dual=False, C=C, tol=tol, fit_intercept=False, max_iter=1000)
    elif method == "sklearn_l1_sq":
        est = LinearSVC(penalty="l1", dual=False, C=C, tol=tol, fit_intercept=False,
                        max_iter=1000)
    else:
        est = LinearSVR(loss="squared_epsilon_insensitive", dual=False, epsilon=EPSILON,
                        C=C, tol=tol, fit_intercept=False, max_iter=1000)
    return est.fit(X, y).coef_.ravel()


def _estimator(method, X, y, C, tol, n_jobs):
    from bisvm import LinearSVC, LinearSVR

    if method == "bisvm_LinearSVC_hinge":  # the dual, its default rule (the gap)
        est = LinearSVC(loss="hinge", dual=True, C=C, tol=tol, fit_intercept=False,
                        random_state=0)
    elif method == "bisvm_LinearSVR_primal":
        est = LinearSVR(loss="squared_epsilon_insensitive", dual=False, epsilon=EPSILON, C=C,
                        tol=tol, fit_intercept=False)
    else:
        est = LinearSVC(penalty="l1" if method == "bisvm_LinearSVC_l1" else "l2", dual=False,
                        C=C, tol=tol, fit_intercept=False)
    if n_jobs is not None:
        est.set_params(n_jobs=n_jobs)
    return est.fit(X, y).coef_.ravel()


#: method -> (problem kind, what runs)
FITS = {
    "bisvm_l2_sq": "l2_sq", "liblinear_s2": "l2_sq", "liblinear_s1": "l2_sq",
    "sklearn_l2_sq": "l2_sq", "bisvm_LinearSVC_primal": "l2_sq",
    "bisvm_l1_sq": "l1_sq", "liblinear_s5": "l1_sq", "sklearn_l1_sq": "l1_sq",
    "bisvm_LinearSVC_l1": "l1_sq", "bisvm_LinearSVR_primal": "svr_sq",
    "bisvm_svr_sq": "svr_sq", "liblinear_s11": "svr_sq", "liblinear_s12": "svr_sq",
    "sklearn_svr_sq": "svr_sq", "liblinear_s13": "svr_l1",
    "bisvm_l2_hinge": "l2_hinge", "bisvm_l2_hinge_gap": "l2_hinge",
    "bisvm_LinearSVC_hinge": "l2_hinge", "liblinear_s3": "l2_hinge",
}


def _fit(spec, X, y, timer):
    method, C, tol = spec["method"], spec["C"], spec.get("tol")
    if method.startswith(("bisvm_LinearSVC", "bisvm_LinearSVR")):
        return _estimator(method, X, y, C, tol, spec.get("n_jobs"))
    if method.startswith("bisvm_"):
        return _bisvm(method, X, y, C, tol)
    if method.startswith("sklearn_"):
        return _sklearn(method, X, y, C, tol)
    solver = method.split("_s")[1]
    eps = f" -e {tol}" if tol is not None else ""
    return _liblinear(f"-s {solver}{eps}", X, y, C, timer)


def main(spec):
    limit = int(spec.get("cpu_limit", 1800))
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))
    X, y_class, y_reg = load(spec["rows"], spec["cols"], spec["nnz"], spec["seed"])
    kind = FITS[spec["method"]]
    y = y_class if kind in ("l2_sq", "l1_sq", "l2_hinge") else y_reg
    if spec["method"].startswith("bisvm_"):  # load the compiled kernels before measuring
        warm = dict(spec, rows=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _fit(warm, X[:2000], y[:2000], {"t0": time.process_time()})
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    with open("/proc/self/statm") as f:
        base = int(f.read().split()[1]) * resource.getpagesize()
    load_before = os.getloadavg()[0]
    timer = {"t0": time.process_time()}
    w = _fit(spec, X, y, timer)
    cpu = time.process_time() - timer["t0"]
    with open("/proc/self/status") as f:
        hwm = int(f.read().split("VmHWM:")[1].split()[0]) * 1024
    out = dict(spec, kind=kind, cpu=cpu, growth=hwm - base,
               data_bytes=int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes),
               ru_maxrss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
               objective=objective(kind, X, y, w, spec["C"]), nnz_w=int(np.count_nonzero(w)),
               load_before=load_before, load_after=os.getloadavg()[0])
    if "train" in timer:
        out.update(train_cpu=timer["train"], convert_cpu=timer["convert"])
    print(json.dumps(out))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
