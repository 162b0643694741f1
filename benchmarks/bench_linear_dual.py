"""bisvm's dual coordinate descent against LIBLINEAR (``pip install liblinear-official``),
one thread against one thread, each fit in its own process.

Rows:

* ``stall`` — dense 30,000 × 200, half the columns random mixtures of the other half
  (nearly collinear), squared hinge, C = 1, intercept (LIBLINEAR ``-B 1``):
  ``LinearSVC(dual=True)`` against LIBLINEAR ``-s 1`` (its dual, which falls back on its
  primal solver after 300 epochs); the optimum is LIBLINEAR ``-s 2 -e 1e-8``.
* ``sparse hinge`` — CSR 300,000 × 50,000, 40 non-zeros a row (Zipf column popularity,
  log-normal values, unit rows as in rcv1/news20), labels of a sparse linear model with
  5 % flipped, hinge, C = 1, no intercept: ``LinearSVC(loss="hinge")`` at several ``tol``
  of LIBLINEAR's projected-gradient rule (the default) and of the duality-gap rule against
  LIBLINEAR ``-s 3`` at several ``-e``; each LIBLINEAR run is paired with the fastest
  bisvm run whose objective is at most LIBLINEAR's ("at equal objective").
* ``sparse hinge, 1,000,000 rows`` — the same pairing on the rcv1/news20-shaped CSR
  1,000,000 × 100,000 of ``_linear_scale_data`` (about 50 non-zeros a row), and the L2-loss
  SVR's dual (``LinearSVR(loss="squared_epsilon_insensitive", dual=True)``) beside
  LIBLINEAR ``-s 12`` on its regression targets (ε = 0.1).
* ``C path`` — dense 20,000 × 100 (``make_classification``, 20 informative, 5 % flipped),
  hinge, 10 values of C in ``logspace(-3, 2)`` ascending: one process fitting the path
  with ``warm_start=True`` against 10 cold fits, each in its own process, all on the
  duality-gap rule. A cold fit that stops on ``max_iter`` short of ``tol`` makes the
  ratio an upper bound of the ratio at equal accuracy (the table says which did).

Each fit runs in a fresh process (multiprocessing ``spawn``) that imports the library
(and loads bisvm's compiled epochs), loads the data from an ``.npy`` cache, records its
resident memory and resets the kernel's peak counter (Linux ``clear_refs``), fits, and
reports CPU seconds of the fit alone (``time.process_time``) and the peak resident memory
(``VmHWM``) above the memory held before the fit: what the fit itself adds. The
objective of every solution is computed by the same function,
:func:`bisvm.solvers.dual.dual_cd.svm_primal_objective`.

    OMP_NUM_THREADS=1 python benchmarks/bench_linear_dual.py            # full size
    OMP_NUM_THREADS=1 python benchmarks/bench_linear_dual.py --quick    # a tenth
    python benchmarks/bench_linear_dual.py --sections scale --out bench_linear_dual_scale
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"  # before numpy: one thread against one thread

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing as mp  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))
SECTIONS = ("stall", "sparse", "scale", "path")
EPSILON = 0.1  # the tube of the regression row (LIBLINEAR's -p default)


# ---------------------------------------------------------------- data

def stall_problem(n, seed=0):
    from sklearn.datasets import make_classification
    rng = np.random.default_rng(seed)
    X, y = make_classification(n, 100, n_informative=20, n_redundant=30, flip_y=0.05,
                               random_state=seed)
    X = np.c_[X, X @ (rng.normal(size=(100, 100)) / 10.0)]
    return np.ascontiguousarray(X), 2.0 * y - 1.0


def sparse_problem(n, d, nnz_per_row, seed=0):
    rng = np.random.default_rng(seed)
    indptr = np.arange(n + 1, dtype=np.int64) * nnz_per_row
    pop = 1.0 / np.arange(1, d + 1) ** 0.8
    pop /= pop.sum()
    indices = rng.choice(d, size=n * nnz_per_row, p=pop).astype(np.int32)
    data = rng.lognormal(0.0, 0.5, size=n * nnz_per_row)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, d))
    X.sum_duplicates()
    X = sp.csr_matrix(sp.diags(1.0 / np.sqrt(X.multiply(X).sum(axis=1).A.ravel())) @ X)
    w = rng.normal(size=d) * (rng.random(d) < 0.2)
    z = X @ w
    y = np.where(z > np.median(z), 1.0, -1.0)
    flip = rng.random(n) < 0.05
    y[flip] = -y[flip]
    return X, y


def path_problem(n, seed=0):
    from sklearn.datasets import make_classification
    X, y = make_classification(n, 100, n_informative=20, flip_y=0.05, random_state=seed)
    return np.ascontiguousarray(X), 2.0 * y - 1.0


def save(name, X, y, cache):
    base = cache / name
    if sp.issparse(X):
        np.save(f"{base}_data.npy", X.data)
        np.save(f"{base}_indices.npy", X.indices)
        np.save(f"{base}_indptr.npy", X.indptr)
        np.save(f"{base}_shape.npy", np.array(X.shape))
    else:
        np.save(f"{base}_X.npy", X)
    np.save(f"{base}_y.npy", y)
    return str(base)


def load(base):
    if os.path.exists(f"{base}_X.npy"):
        X = np.load(f"{base}_X.npy")
    else:
        X = sp.csr_matrix((np.load(f"{base}_data.npy"), np.load(f"{base}_indices.npy"),
                           np.load(f"{base}_indptr.npy")),
                          shape=tuple(np.load(f"{base}_shape.npy")))
    return X, np.load(f"{base}_y.npy")


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _reset_peak():
    """Reset the kernel's peak resident memory of this process (Linux ``clear_refs``
    ``5``), so that the peak read after the fit is the fit's, not the imports'."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:  # pragma: no cover - not Linux, or not allowed
        return False


def _peak_mb(reset):
    """The peak resident memory since :func:`_reset_peak` (``VmHWM``), or since the
    start of the process (``ru_maxrss``) when it could not be reset."""
    if reset:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------- worker

def _scale_data(task):
    """The 1,000,000-row problem from the /tmp cache of ``_linear_scale_data``."""
    from _linear_scale_data import load as scale_load
    X, y, y_reg = scale_load(*task["scale"])
    return X, (y_reg if task["loss"] == "squared_epsilon_insensitive" else y)


def _liblinear_w(X, y, opts, bias):
    from liblinear import liblinearutil as ll
    prob = ll.problem(y, X if sp.issparse(X) else sp.csr_matrix(X), bias=1 if bias else -1)
    t0 = time.process_time()
    m = ll.train(prob, opts + " -q")
    cpu = time.process_time() - t0
    d = X.shape[1] + (1 if bias else 0)
    w = np.array([m.w[j] for j in range(d)])
    if not m.is_regression_model() and m.get_labels()[0] != 1:
        w = -w  # LIBLINEAR's first label is its positive class
    return w, cpu, {}


def _bisvm_w(X, y, params, bias, Cs=None, regression=False):
    from bisvm.estimators.linear import LinearSVC
    from bisvm.estimators.linear_svr import LinearSVR
    extra = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        if regression:
            est = LinearSVR(**params).fit(X, y)
        elif Cs is None:
            est = LinearSVC(**params).fit(X, y)
        else:  # the warm path: one estimator, ascending C
            est = LinearSVC(warm_start=True, **params)
            objs, iters, done = [], [], []
            for C in Cs:
                est.set_params(C=C).fit(X, y)
                objs.append(float(est.objective_[0]))
                iters.append(int(est.n_iter_))
                done.append(_converged(est, params))
            extra = {"path_objectives": objs, "path_n_iter": iters, "path_converged": done,
                     "converged": all(done)}
        cpu = time.process_time() - t0
    coef = np.atleast_2d(est.coef_)[0]
    w = np.r_[coef, np.ravel(est.intercept_)[0]] if bias else coef
    extra.update(n_iter=int(est.n_iter_),
                 certificate=str(np.ravel(est.certificate_name_)[0]),
                 certificate_value=float(np.ravel(est.certificate_)[0]),
                 converged=bool(extra.pop("converged", True) and _converged(est, params)))
    return w, cpu, extra


def _converged(est, params):
    """Whether the fit met its rule before ``max_iter`` (its certificate at most tol, or
    a switch to the primal, which stops on its own relative gradient norm)."""
    name = str(np.ravel(est.certificate_name_)[0])
    value = float(np.ravel(est.certificate_)[0])
    return name == "relative_gradient_norm" or value <= params.get("tol", 1e-4)


def worker(task):
    from bisvm.estimators.linear import LinearSVC
    from bisvm.solvers.dual.dual_cd import svm_primal_objective, svr_primal_objective
    regression = task["loss"] == "squared_epsilon_insensitive"
    if task["lib"] == "liblinear":
        from liblinear import liblinearutil  # noqa: F401
    else:  # the compiled epochs loaded before the baseline is read
        Xw, yw = stall_problem(60)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for loss in ("hinge", "squared_hinge"):
                LinearSVC(loss=loss, dual=True, max_iter=3).fit(Xw, yw)
                LinearSVC(loss=loss, dual=True, max_iter=3).fit(sp.csr_matrix(Xw), yw)
            if regression:
                from bisvm.estimators.linear_svr import LinearSVR
                LinearSVR(loss="squared_epsilon_insensitive", dual=True, max_iter=3).fit(
                    sp.csr_matrix(Xw), yw)
    X, y = _scale_data(task) if "scale" in task else load(task["data"])
    rss0 = _rss_mb()
    reset = _reset_peak()
    bias = task["bias"]
    if task["lib"] == "liblinear":
        w, cpu, extra = _liblinear_w(X, y, task["opts"], bias)
    else:
        w, cpu, extra = _bisvm_w(X, y, task["params"], bias, task.get("Cs"), regression)
    peak = _peak_mb(reset)
    cost = np.full(len(y), task["C"])
    if regression:
        obj = svr_primal_objective(X, y, w, cost, task["loss"], EPSILON, 1.0 if bias else 0.0)
    else:
        obj = svm_primal_objective(X, y, w, cost, task["loss"], 1.0 if bias else 0.0)
    return dict(task, cpu=cpu, objective=obj, rss_data_mb=rss0, peak_over_data_mb=peak - rss0,
                **extra)


def run(tasks):
    """Each task in its own spawned process, one after the other."""
    ctx = mp.get_context("spawn")
    out = []
    for t in tasks:
        with ctx.Pool(1, maxtasksperchild=1) as pool:
            r = pool.apply(worker, (t,))
        print(json.dumps({k: v for k, v in r.items() if k not in ("data",)}, default=str),
              flush=True)
        out.append(r)
    return out


# ---------------------------------------------------------------- report

def _fmt(x, p=3):
    return f"{x:.{p}g}" if isinstance(x, float) else str(x)


def report(rows, args, load_avg, command):
    lines = [
        "# Dual coordinate descent against LIBLINEAR (one thread, one process per fit)", "",
        f"`OMP_NUM_THREADS=1 {command}`", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs "
        f"(1-minute load average from {load_avg[0]:.1f} to {load_avg[1]:.1f} at the starts "
        "and ends of the runs: CPU seconds are less affected by the load than wall time, but not "
        "immune to it, through shared caches and memory bandwidth). liblinear-official "
        f"{_liblinear_version()}. CPU s is the fit alone; peak MB is the resident memory "
        "above that held once the library is imported and the data loaded (LIBLINEAR's "
        "includes its own copy of the data in its sparse format).", ""]
    by = {}
    for r in rows:
        by.setdefault(r["row"], []).append(r)
    for name, rs in by.items():
        lines += [f"## {name}", "", rs[0]["about"], "",
                  "| solver | settings | CPU s | objective | rel. to optimum | certificate | "
                  "peak MB over data |", "|---|---|---|---|---|---|---|"]
        for r in rs:
            cert = (f"{r['certificate']} {r['certificate_value']:.2e}" if "certificate" in r
                    else "")
            if r.get("converged") is False:
                cert += " (max_iter reached)"
            opt = _best(rs, r)
            rel = "—" if opt is None else f"{(r['objective'] - opt) / opt:.2e}"
            lines.append(f"| {r['label']} | {r['settings']} | {r['cpu']:.2f} | "
                         f"{r['objective']:.10g} | {rel} | {cert} | "
                         f"{r['peak_over_data_mb']:.0f} |")
        lines.append("")
        lines += _verdict(rs)
    (RESULTS / f"{args.out}.md").write_text("\n".join(lines) + "\n")


def _best(rs, r):
    """The reference objective of row ``r``: LIBLINEAR ``-s 2 -e 1e-8`` (stall), the
    lowest of the runs (paired sections), the better of the warm and the cold fit at the
    same C (path; None for the path row itself, which holds ten problems)."""
    if r["kind"] == "stall":
        return next(x["objective"] for x in rs if x.get("optimum"))
    if r["kind"] == "match":
        return min(x["objective"] for x in rs)
    if "path_objectives" in r:
        return None
    warm = next((x for x in rs if "path_objectives" in x), None)
    if warm is None:
        return min(x["objective"] for x in rs)
    k = [x for x in rs if x is not warm].index(r)
    return min(r["objective"], warm["path_objectives"][k])


def _verdict(rs):
    out = []
    kind = rs[0]["kind"]
    if kind == "stall":
        ours = [r for r in rs if r["lib"] == "bisvm"]
        s1 = [r for r in rs if r["lib"] == "liblinear" and not r.get("optimum")]
        for a in ours:
            for b in s1:
                out.append(f"* {a['label']} ({a['settings']}) / {b['label']} ({b['settings']}):"
                           f" CPU ratio **{a['cpu'] / b['cpu']:.2f}**")
    elif kind == "match":
        ours = sorted((r for r in rs if r["lib"] == "bisvm"), key=lambda r: r["cpu"])
        for b in (r for r in rs if r["lib"] == "liblinear"):
            match = next((a for a in ours if a["objective"] <= b["objective"]), None)
            if match is None:
                out.append(f"* LIBLINEAR {b['settings']} (objective {b['objective']:.10g}): "
                           "no bisvm run reached its objective")
            else:
                out.append(f"* LIBLINEAR {b['settings']} (objective {b['objective']:.10g}): "
                           f"fastest bisvm run at an equal or lower objective is "
                           f"{match['settings']}, CPU ratio **{match['cpu'] / b['cpu']:.2f}**")
    else:
        warm = next(r for r in rs if "path_objectives" in r)
        cold = [r for r in rs if r is not warm]
        total = sum(r["cpu"] for r in cold)
        out.append(f"* warm path {warm['cpu']:.2f} s / 10 cold fits {total:.2f} s: CPU ratio "
                   f"**{warm['cpu'] / total:.3f}**")
        capped = sum(r.get("converged") is False for r in cold)
        if capped:
            out.append(f"* {capped} of the {len(cold)} cold fits stopped on max_iter short of "
                       "tol: converging would cost them more, so the ratio at equal "
                       "accuracy is lower still" + (
                           "" if all(warm.get("path_converged", [])) else
                           " (but some warm fits stopped on max_iter too, see below)"))
        out.append("* per C, objective of the warm fit relative to the cold fit: " + ", ".join(
            f"C={r['C']:.3g}: {(o - r['objective']) / r['objective']:+.1e}"
            for r, o in zip(cold, warm["path_objectives"], strict=True)))
        done = warm.get("path_converged", [True] * len(cold))
        out.append("* epochs per C, warm / cold (* where max_iter was reached): " + ", ".join(
            f"{i}{'' if ok else '*'}/{r['n_iter']}{'' if r.get('converged', True) else '*'}"
            for r, i, ok in zip(cold, warm["path_n_iter"], done, strict=True)))
    return out + [""]


def _liblinear_version():
    try:
        from importlib.metadata import version
        return version("liblinear-official")
    except Exception:  # pragma: no cover - optional reference
        return "not installed"


def _stall_tasks(scale, cache):
    Xs, ys = stall_problem(30000 // scale)
    base = save("stall", Xs, ys, cache)
    about = (f"dense {Xs.shape[0]:,} × {Xs.shape[1]}, half the columns mixtures of the other "
             "half; squared hinge, C = 1, intercept feature 1 (`-B 1`).")
    common = dict(row="stall", kind="stall", about=about, data=base, bias=True, C=1.0,
                  loss="squared_hinge")
    out = [dict(common, lib="liblinear", label="LIBLINEAR -s 2", settings="-e 1e-8",
                opts="-s 2 -c 1 -e 1e-8 -B 1", optimum=True)]
    for e in (0.1, 1e-4):
        out.append(dict(common, lib="liblinear", label="LIBLINEAR -s 1", settings=f"-e {e}",
                        opts=f"-s 1 -c 1 -e {e} -B 1"))
    for stopping in STOPPING:
        out.append(dict(common, lib="bisvm", label="bisvm LinearSVC(dual=True)",
                        settings=f"{STOPPING[stopping]} tol 1e-4",
                        params=dict(dual=True, C=1.0, tol=1e-4, stopping=stopping,
                                    random_state=0)))
    return out


#: how the tables name the stopping rules
STOPPING = {"projected_gradient": "projected gradient", "duality_gap": "gap"}
#: (rule, tol) of the bisvm hinge runs paired with LIBLINEAR -s 3
HINGE_RUNS = ([("projected_gradient", t) for t in (0.1, 0.07, 0.05, 0.03, 0.02, 0.01, 0.005)]
              + [("duality_gap", t) for t in (1e-3, 5e-4, 3e-4, 1e-4, 5e-5, 3e-5)])


def _hinge_tasks(common, runs=HINGE_RUNS):
    out = [dict(common, lib="liblinear", label="LIBLINEAR -s 3", settings=f"-e {e}",
                opts=f"-s 3 -c 1 -e {e} -B -1") for e in (0.1, 0.01)]
    for stopping, tol in runs:
        out.append(dict(common, lib="bisvm", label="bisvm LinearSVC(loss='hinge')",
                        settings=f"{STOPPING[stopping]} tol {tol:g}",
                        params=dict(loss="hinge", dual=True, C=1.0, tol=tol,
                                    stopping=stopping, fit_intercept=False,
                                    random_state=0)))
    return out


def _sparse_tasks(scale, cache):
    X, y = sparse_problem(300000 // scale, 50000 // scale, 40)
    base = save("sparse", X, y, cache)
    about = (f"CSR {X.shape[0]:,} × {X.shape[1]:,}, {X.nnz:,} non-zeros "
             f"({X.data.nbytes + X.indices.nbytes + X.indptr.nbytes >> 20} MB), unit rows; "
             "hinge, C = 1, no intercept.")
    return _hinge_tasks(dict(row="sparse hinge", kind="match", about=about, data=base,
                             bias=False, C=1.0, loss="hinge"))


def _scale_tasks(scale):
    from _linear_scale_data import load as scale_load
    shape = (1_000_000 // scale, 100_000 // scale, 50, 0)
    X = scale_load(*shape)[0]
    size = f"{X.shape[0]:,} × {X.shape[1]:,}, {X.nnz:,} non-zeros ({_csr_mb(X)} MB)"
    del X
    about = (f"CSR {size}, `_linear_scale_data` (rcv1/news20-shaped, unit rows); hinge, "
             "C = 1, no intercept.")
    runs = ([("projected_gradient", t) for t in (0.1, 0.05, 0.02, 0.01)]
            + [("duality_gap", t) for t in (1e-3, 3e-4, 1e-4)])
    out = _hinge_tasks(dict(row=f"sparse hinge, {shape[0]:,} rows", kind="match",
                            about=about, scale=shape, bias=False, C=1.0, loss="hinge"), runs)
    about = (f"CSR {size}, the same generator's regression targets; L2-loss SVR "
             f"(squared ε-insensitive, ε = {EPSILON}), C = 1, no intercept; dual solvers.")
    common = dict(row=f"L2-loss SVR dual, {shape[0]:,} rows", kind="match", about=about,
                  scale=shape, bias=False, C=1.0, loss="squared_epsilon_insensitive")
    out += [dict(common, lib="liblinear", label="LIBLINEAR -s 12", settings=f"-e {e}",
                 opts=f"-s 12 -c 1 -p {EPSILON} -e {e} -B -1") for e in (0.1, 0.01)]
    for stopping, tol in [("projected_gradient", t) for t in (0.1, 0.03, 0.01, 0.005)] + [
            ("duality_gap", t) for t in (1e-3, 1e-4, 3e-5)]:
        out.append(dict(common, lib="bisvm", label="bisvm LinearSVR(dual=True)",
                        settings=f"{STOPPING[stopping]} tol {tol:g}",
                        params=dict(loss="squared_epsilon_insensitive", dual=True,
                                    epsilon=EPSILON, C=1.0, tol=tol, stopping=stopping,
                                    fit_intercept=False, random_state=0)))
    return out


def _csr_mb(X):
    return (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) >> 20


def _path_tasks(scale, cache):
    Xp, yp = path_problem(20000 // scale)
    base = save("path", Xp, yp, cache)
    Cs = np.logspace(-3, 2, 10)
    about = (f"dense {Xp.shape[0]:,} × {Xp.shape[1]}, hinge, intercept, tol 1e-4 (duality "
             "gap), max_iter 1000, C in logspace(-3, 2, 10) ascending.")
    common = dict(row="C path", kind="path", about=about, data=base, bias=True, loss="hinge")
    kw = dict(loss="hinge", dual=True, tol=1e-4, stopping="duality_gap", max_iter=1000,
              random_state=0)
    out = [dict(common, lib="bisvm", label="bisvm warm path", settings="10 C, one process",
                C=float(Cs[-1]), Cs=[float(c) for c in Cs], params=kw)]
    for C in Cs:
        out.append(dict(common, lib="bisvm", label="bisvm cold", settings=f"C={C:.3g}",
                        C=float(C), params=dict(kw, C=float(C))))
    return out


def tasks(args, cache):
    scale = 10 if args.quick else 1
    out = []
    for section in args.sections.split(","):
        if section == "scale":
            out += _scale_tasks(scale)
        else:
            out += {"stall": _stall_tasks, "sparse": _sparse_tasks,
                    "path": _path_tasks}[section](scale, cache)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the rows")
    ap.add_argument("--sections", default="stall,sparse,path",
                    help=f"comma-separated, of {SECTIONS}")
    ap.add_argument("--out", default=None,
                    help="results name (default bench_linear_dual[_quick])")
    ap.add_argument("--rows", default="",
                    help="only the tasks whose row name contains this text")
    ap.add_argument("--append", action="store_true",
                    help="merge into the .json of an earlier run (a rerun replaces its row)")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the .md from the .json of an earlier run")
    args = ap.parse_args()
    if any(x not in SECTIONS for x in args.sections.split(",")):
        ap.error(f"--sections: choose among {SECTIONS}")
    args.out = args.out or f"bench_linear_dual{'_quick' if args.quick else ''}"
    command = shlex.join(["python", "benchmarks/bench_linear_dual.py"] + sys.argv[1:])
    if args.report_only:
        saved = json.loads((RESULTS / f"{args.out}.json").read_text())
        loads = [x[0] for x in saved["load_average"]]
        report(saved["rows"], args, (min(loads), max(loads)), saved["command"])
        return
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        rows = run([t for t in tasks(args, Path(tmp)) if args.rows in t["row"]])
    load1 = os.getloadavg()
    rows = [{k: v for k, v in r.items() if k != "data"} for r in rows]
    loads = [load0, load1]
    saved = RESULTS / f"{args.out}.json"
    if args.append and saved.exists():
        old = json.loads(saved.read_text())
        new = {(r["row"], r["settings"]) for r in rows}
        keep = [r for r in old["rows"] if (r["row"], r["settings"]) not in new]
        order = [r["row"] for r in old["rows"]]
        rows = sorted(keep + rows, key=lambda r: order.index(r["row"]) if r["row"] in order
                      else len(order))
        command = f"{old['command']}` then `{command}"
        loads = old["load_average"] + loads
    RESULTS.mkdir(exist_ok=True)
    saved.write_text(json.dumps({"command": command, "load_average": loads, "rows": rows},
                                indent=1, default=str))
    report(rows, args, (min(x[0] for x in loads), max(x[0] for x in loads)), command)


if __name__ == "__main__":
    main()
