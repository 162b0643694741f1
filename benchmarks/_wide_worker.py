"""One fit of ``bench_wide.py``, in a process of its own (run by ``bench_wide.py``).

    python benchmarks/_wide_worker.py data --problem P --seed S [--quick] --out PREFIX
    python benchmarks/_wide_worker.py fit --problem P --seed S --tool T --data PREFIX [--quick]

``data`` generates the problem (``_wide_data.make_problem``) and saves it under PREFIX.
``fit`` measures, in this order: the tool's imports (seconds of wall time), a warm-up fit on
a tiny problem of the same kind (so numba compilations and other first-call costs are not
charged to the real fit), then the real fit on the saved training rows (CPU seconds by
``time.process_time``, which counts every thread of the process, and wall seconds), and
evaluates it on the test rows. It prints JSON lines prefixed by ``@@``: an event when the
real fit starts (so the caller can stop a fit that exceeds its time limit) and the result.

Only the standard library is imported before the tool, so the import time includes
numpy/scipy/scikit-learn as a user's fresh process would pay them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))

# Settings shared by the sparho rows: its benchmark's HOAG configuration
# (benchmarks/lasso_libsvm.py of github.com/dvillacis/sparho: 5-fold CV with warm starts,
# 30 outer iterations, inner tolerance decreasing exponentially from 1e-2 to 1e-6).
SPARHO_HOAG = dict(n_iter=30, inner_tol=1e-6, inner_tol_initial=1e-2,
                   tolerance_decrease="exponential")
SVC_GRID = [10.0 ** e for e in (-3, -2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1)]

TOOLS = {
    "bisvm": "bisvm BilevelSVC() (vector, defaults)",
    "bisvm-scalar": 'bisvm BilevelSVC(model="scalar")',
    "sparho-wl1": "sparho weighted-L1 (per-feature α) Lasso on ±1, sign",
    "sparho-l1log": "sparho L1 logistic (scalar α)",
    "logregcv": 'LogisticRegressionCV(l1, "liblinear")',
    "svc-grid": 'GridSearchCV(LinearSVC(penalty="l1", dual=False))',
}


def import_tool(tool):
    """Import what ``tool`` needs (this is the timed start-up)."""
    import numpy  # noqa: F401

    if tool.startswith("bisvm"):
        from bisvm import BilevelSVC  # noqa: F401
    elif tool.startswith("sparho"):
        import sparho  # noqa: F401
        from sparho.adapters import SklearnLogisticRegression, SklearnWeightedLasso  # noqa: F401
    elif tool == "logregcv":
        from sklearn.linear_model import LogisticRegressionCV  # noqa: F401
    elif tool == "svc-grid":
        from sklearn.model_selection import GridSearchCV  # noqa: F401
        from sklearn.svm import LinearSVC  # noqa: F401
    else:
        raise ValueError(f"unknown tool {tool!r}")


def fit_tool(tool, X, y):
    """Fit ``tool`` on (X, y); returns ``(coef_or_support, predict, info)`` where the first
    is a feature vector whose nonzeros (or True entries) are the kept features."""
    import numpy as np

    if tool.startswith("bisvm"):
        from bisvm import BilevelSVC

        est = BilevelSVC(model="scalar", random_state=0) if tool == "bisvm-scalar" \
            else BilevelSVC(random_state=0)
        est.fit(X, y)
        info = {"solver": str(getattr(est, "solver_", "n/a")),
                "n_iter": int(np.max(getattr(est, "n_iter_", -1)))}
        return np.asarray(est.support_), est.predict, info
    if tool == "sparho-wl1":
        return _fit_sparho_wl1(X, y)
    if tool == "sparho-l1log":
        return _fit_sparho_l1log(X, y)
    if tool == "logregcv":
        from sklearn.linear_model import LogisticRegressionCV

        est = LogisticRegressionCV(Cs=10, l1_ratios=(1.0,), solver="liblinear", cv=5,
                                   scoring="accuracy", random_state=0,
                                   use_legacy_attributes=False).fit(X, y)
        return est.coef_.ravel(), est.predict, {"C": float(np.ravel(est.C_)[0])}
    if tool == "svc-grid":
        from sklearn.model_selection import GridSearchCV
        from sklearn.svm import LinearSVC

        est = GridSearchCV(LinearSVC(penalty="l1", dual=False, random_state=0),
                           {"C": SVC_GRID}, cv=5).fit(X, y)
        return (est.best_estimator_.coef_.ravel(), est.predict,
                {"C": float(est.best_params_["C"])})
    raise ValueError(f"unknown tool {tool!r}")


def _sparho_design(X):
    """sparho's design type is a dense array or CSC (its ``DesignMatrix``)."""
    import scipy.sparse as sp

    return X.tocsc() if sp.issparse(X) else X


def _fit_sparho_wl1(X, y):
    """sparho's per-feature weighted L1 (``WeightedL1``), which it ships for the squared
    loss only: a weighted Lasso on the ±1 labels, centred (sparho's problems have no
    intercept; its adapters document centring as the user's job), 5-fold CV of the
    held-out MSE, classification by the sign of ``x @ coef + mean(y)``. Start: every
    α_j = α_max / 10, α_max = ‖Xᵀ(y − ȳ)‖_∞ / n (the Lasso's all-zero threshold)."""
    import numpy as np
    from sparho import CrossVal, Problem, SquaredLoss, WeightedL1, hoag_search
    from sparho.adapters import SklearnWeightedLasso

    Xd = _sparho_design(X)
    y_mean = float(np.mean(y))
    yc = y - y_mean
    alpha_max = float(np.max(np.abs(Xd.T @ yc))) / X.shape[0]
    problem = Problem(SquaredLoss(), WeightedL1(), Xd, yc)
    cv = CrossVal.kfold(X.shape[0], k=5, warm_start=True)
    res = hoag_search(problem, hp0=np.full(X.shape[1], alpha_max / 10),
                      solver=SklearnWeightedLasso(tol=1e-6, max_iter=50_000), criterion=cv,
                      **SPARHO_HOAG)
    coef = np.asarray(res.best_coef)

    def predict(Z):
        return np.where(np.asarray(Z @ coef).ravel() + y_mean > 0, 1, -1)

    alpha = np.asarray(res.best_hyperparam)
    return coef, predict, {"outer_iter": int(res.n_iter),
                           "alpha_median": float(np.median(alpha))}


def _fit_sparho_l1log(X, y):
    """sparho's sparse logistic regression (``LogisticLoss`` + scalar ``L1``, liblinear
    inner solver, no intercept), 5-fold CV of the held-out logistic loss. Start:
    α = α_max / 10, α_max = ‖Xᵀ(y₀₁ − ½)‖_∞ (its loss is a sum, not a mean)."""
    import numpy as np
    from sparho import L1, CrossVal, HeldOutLogistic, LogisticLoss, Problem, hoag_search
    from sparho.adapters import SklearnLogisticRegression

    Xd = _sparho_design(X)
    yf = np.asarray(y, dtype=np.float64)
    alpha_max = float(np.max(np.abs(Xd.T @ (0.5 * (yf + 1.0) - 0.5))))
    problem = Problem(LogisticLoss(), L1(), Xd, yf)
    cv = CrossVal.kfold(X.shape[0], k=5, base=HeldOutLogistic, warm_start=True)
    res = hoag_search(problem, hp0=alpha_max / 10,
                      solver=SklearnLogisticRegression(tol=1e-6, max_iter=10_000),
                      criterion=cv, **SPARHO_HOAG)
    coef = np.asarray(res.best_coef)

    def predict(Z):
        return np.where(np.asarray(Z @ coef).ravel() > 0, 1, -1)

    return coef, predict, {"outer_iter": int(res.n_iter),
                           "alpha": float(res.best_hyperparam)}


def thread_report():
    """Thread counts as the libraries see them after the fit."""
    out = {}
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            out[f"{pool['user_api']}:{pool['internal_api']}"] = pool["num_threads"]
    except ImportError:  # pragma: no cover
        pass
    if "numba" in sys.modules:
        import numba

        out["numba"] = numba.get_num_threads()
    out["RAYON_NUM_THREADS"] = os.environ.get("RAYON_NUM_THREADS")
    return out


def emit(obj):
    print("@@" + json.dumps(obj), flush=True)


def save_data(args):
    import numpy as np
    import scipy.sparse as sp

    sys.path.insert(0, HERE)
    from _wide_data import PROBLEMS, QUICK, make_problem

    spec = (QUICK if args.quick else PROBLEMS)[args.problem]
    X_train, X_test, y_train, y_test, informative = make_problem(args.problem, args.seed, spec)
    if sp.issparse(X_train):
        sp.save_npz(args.out + "_Xtr.npz", X_train, compressed=False)
        sp.save_npz(args.out + "_Xte.npz", X_test, compressed=False)
        extra = {"nnz": int(X_train.nnz)}
    else:
        np.save(args.out + "_Xtr.npy", X_train)
        np.save(args.out + "_Xte.npy", X_test)
        extra = {}
    np.savez(args.out + "_y.npz", y_train=y_train, y_test=y_test, informative=informative)
    emit({"event": "data", "shape": list(X_train.shape), "n_test": int(X_test.shape[0]),
          "sparse": bool(sp.issparse(X_train)), "balance": float(np.mean(y_train > 0)),
          **extra})


def load_data(prefix):
    import numpy as np
    import scipy.sparse as sp

    if os.path.exists(prefix + "_Xtr.npz"):
        X_train = sp.load_npz(prefix + "_Xtr.npz").tocsr()
        X_test = sp.load_npz(prefix + "_Xte.npz").tocsr()
    else:
        X_train, X_test = np.load(prefix + "_Xtr.npy"), np.load(prefix + "_Xte.npy")
    d = np.load(prefix + "_y.npz")
    return X_train, X_test, d["y_train"], d["y_test"], d["informative"]


def timed_fit(tool, X, y):
    """(result of fit_tool, CPU seconds, wall seconds, warning messages)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c0, w0 = time.process_time(), time.perf_counter()
        out = fit_tool(tool, X, y)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return out, cpu, wall, sorted({f"{w.category.__name__}: {str(w.message)[:120]}"
                                   for w in caught})


def run_fit(args):
    t0 = time.perf_counter()
    import_tool(args.tool)
    import_s = time.perf_counter() - t0
    import numpy as np

    sys.path.insert(0, HERE)
    from _wide_data import WARMUP, make_problem

    Xw, _, yw, _, _ = make_problem(args.problem, 1000 + args.seed, WARMUP[args.problem])
    try:
        _, warm_cpu, warm_wall, _ = timed_fit(args.tool, Xw, yw)
    except Exception as exc:  # the real fit would fail the same way; report it
        emit({"event": "result", "status": f"error: {type(exc).__name__}: {exc}"[:300],
              "import_s": import_s})
        return
    X_train, X_test, y_train, y_test, informative = load_data(args.data)
    emit({"event": "fit_start"})
    try:
        (kept, predict, info), cpu, wall, warns = timed_fit(args.tool, X_train, y_train)
    except Exception as exc:
        emit({"event": "result", "status": f"error: {type(exc).__name__}: {exc}"[:300],
              "import_s": import_s, "warmup_cpu_s": warm_cpu, "warmup_wall_s": warm_wall})
        return
    kept_idx = np.flatnonzero(np.asarray(kept))
    acc = float(np.mean(np.asarray(predict(X_test)).ravel() == y_test))
    emit({"event": "result", "status": "ok", "import_s": import_s,
          "warmup_cpu_s": warm_cpu, "warmup_wall_s": warm_wall,
          "fit_cpu_s": cpu, "fit_wall_s": wall, "accuracy": acc,
          "kept": int(kept_idx.size),
          "true_kept": int(np.isin(kept_idx, informative).sum()),
          "n_informative": int(informative.size), "info": info,
          "warnings": warns[:5], "n_warning_kinds": len(warns),
          "threads": thread_report()})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["data", "fit"])
    p.add_argument("--problem", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tool")
    p.add_argument("--data", help="prefix of the saved problem (fit mode)")
    p.add_argument("--out", help="prefix to save the problem under (data mode)")
    args = p.parse_args(argv)
    if args.mode == "data":
        save_data(args)
    else:
        run_fit(args)


if __name__ == "__main__":
    main()
