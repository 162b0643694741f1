"""Bit-level fingerprint of every public estimator and path function but ``BilevelSVC``.

The companion of ``fit_hashes.py`` (which covers ``BilevelSVC`` alone): a fixed list of
small fits, one process, every thread pool pinned to one thread before numpy is
imported, warnings silenced. For each fit it hashes (sha256, 16 hex digits) the fitted
arrays that define the model (``coef_``, ``intercept_``, ``dual_coef_``, ``support_``,
learned hyperparameters) and the outputs on held-out rows (``predict``,
``decision_function``, ``predict_proba`` where the estimator has them), then one digest
of all. Two source trees with the same digest fit and predict every case to the same
bits: the guard of a change that must not alter behaviour (documentation, renaming,
code sharing).

Usage::

    PYTHONPATH=/old/src python benchmarks/estimator_hashes.py --out old.json
    PYTHONPATH=/new/src python benchmarks/estimator_hashes.py --compare old.json
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import bisvm  # noqa: E402

warnings.simplefilter("ignore")

ARRAYS = ("coef_", "intercept_", "dual_coef_", "support_", "support_vectors_", "C_", "gamma_",
          "gamma", "epsilon_", "ridge_", "selectivity_", "mu_", "alpha_", "penalty_weights_",
          "widths_", "scores_", "selection_frequency_", "l2_penalty_", "n_iter_")
OUTPUTS = ("predict", "decision_function", "predict_proba")


def _scaled(X):
    return StandardScaler().fit_transform(X)


def datasets():
    """Small deterministic problems: (name, X_train, y_train, X_test)."""
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xb = _scaled(Xb)
    Xi, yi = load_iris(return_X_y=True)
    Xi = _scaled(Xi)
    Xw, yw = load_wine(return_X_y=True)
    Xw = _scaled(Xw)
    Xd, yd = load_diabetes(return_X_y=True)
    Xd = _scaled(Xd)
    rng = np.random.default_rng(0)
    Xs = sp.random(150, 60, density=0.1, random_state=1, format="csr")
    ys = np.sign(Xs @ rng.standard_normal(60) + 0.01)
    return {
        "cancer": (Xb[:300], yb[:300], Xb[300:]),
        "iris": (Xi[::2], yi[::2], Xi[1::2]),
        "wine": (Xw[::2], yw[::2], Xw[1::2]),
        "diabetes": (Xd[:300], yd[:300], Xd[300:]),
        "sparse": (Xs[:100], ys[:100], Xs[100:]),
    }


def cases():
    """(name, data name, estimator factory) for every fit."""
    b = bisvm
    out = []
    for data in ("cancer", "iris", "sparse"):
        out += [(f"SVC/rbf/{data}", data, lambda: b.SVC()),
                (f"SVC/linear-proba/{data}", data,
                 lambda: b.SVC(kernel="linear", probability=True, random_state=0)),
                (f"NuSVC/{data}", data, lambda: b.NuSVC(nu=0.3)),
                (f"LinearSVC/{data}", data, lambda: b.LinearSVC(random_state=0)),
                (f"LinearSVC/l1/{data}", data,
                 lambda: b.LinearSVC(penalty="l1", dual=False, C=0.5))]
    out += [("SVC/poly-ovr/wine", "wine",
             lambda: b.SVC(kernel="poly", decision_function_shape="ovr")),
            ("SVC/class_weight/cancer", "cancer", lambda: b.SVC(class_weight="balanced")),
            ("OneClassSVM/cancer", "cancer", lambda: b.OneClassSVM(nu=0.2)),
            ("LinearSVCCV/cancer", "cancer", lambda: b.LinearSVCCV(Cs=5, cv=3)),
            ("KernelLogisticRegression/cancer", "cancer",
             lambda: b.KernelLogisticRegression(C=1.0)),
            ("SelectiveLogisticRegression/cancer", "cancer",
             lambda: b.SelectiveLogisticRegression()),
            ("SelectiveLogisticRegressionCV/cancer", "cancer",
             lambda: b.SelectiveLogisticRegressionCV(n_mu=10)),
            ("ElasticNetSVC/cancer", "cancer", lambda: b.ElasticNetSVC()),
            ("ElasticNetSVC/iris", "iris", lambda: b.ElasticNetSVC()),
            ("AutoSVC/cancer", "cancer", lambda: b.AutoSVC(random_state=0)),
            ("AutoSVC/per-feature/wine", "wine",
             lambda: b.AutoSVC(widths="per_feature", random_state=0)),
            ("StabilitySelection/cancer", "cancer",
             lambda: b.StabilitySelection(n_pairs=5, random_state=0)),
            ("SVR/diabetes", "diabetes", lambda: b.SVR(C=10.0)),
            ("NuSVR/diabetes", "diabetes", lambda: b.NuSVR(C=10.0)),
            ("LinearSVR/diabetes", "diabetes", lambda: b.LinearSVR(random_state=0)),
            ("KernelRidge/rbf/diabetes", "diabetes", lambda: b.KernelRidge(kernel="rbf")),
            ("SelectiveRegression/diabetes", "diabetes", lambda: b.SelectiveRegression()),
            ("SelectiveRegressionCV/diabetes", "diabetes", lambda: b.SelectiveRegressionCV()),
            ("SelectiveRegressionCV/kfold/diabetes", "diabetes",
             lambda: b.SelectiveRegressionCV(criterion="kfold")),
            ("AutoSVR/diabetes", "diabetes", lambda: b.AutoSVR(random_state=0)),
            ("BilevelSVR/diabetes", "diabetes", lambda: b.BilevelSVR(random_state=0)),
            ("BilevelSVR/epsilon/diabetes", "diabetes",
             lambda: b.BilevelSVR(loss="epsilon_insensitive", random_state=0)),
            ("BilevelSVR/vector/diabetes", "diabetes",
             lambda: b.BilevelSVR(model="vector", random_state=0))]
    return out


def short_hash(a):
    a = np.ascontiguousarray(np.asarray(a))
    if a.dtype == object:
        return hashlib.sha256(repr(a.tolist()).encode()).hexdigest()[:16]
    h = hashlib.sha256(repr((a.shape, a.dtype.str)).encode())
    h.update(a.tobytes())
    return h.hexdigest()[:16]


def fingerprint(est, X_test):
    parts = {}
    for name in ARRAYS:
        try:
            v = getattr(est, name)
        except (AttributeError, ValueError):
            continue
        if v is None or callable(v) or isinstance(v, str):
            continue
        if sp.issparse(v):
            v = v.toarray()
        parts[name] = short_hash(v)
    for name in OUTPUTS:
        if hasattr(est, name):
            try:
                parts[name] = short_hash(getattr(est, name)(X_test))
            except (AttributeError, ValueError, NotImplementedError):
                continue
    return parts


def path_cases(data):
    X, y, _ = data["cancer"]
    yb = np.where(y > 0, 1, -1)
    out = {}
    t0 = time.perf_counter()
    p = bisvm.l1_svm_path(X[:120, :10], yb[:120])
    out["l1_svm_path/cancer"] = {k: short_hash(getattr(p, k)) for k in vars(p)
                                 if isinstance(getattr(p, k), np.ndarray)}
    p = bisvm.l1_sqhinge_path(X[:120, :10], yb[:120])
    out["l1_sqhinge_path/cancer"] = {k: short_hash(getattr(p, k)) for k in vars(p)
                                     if isinstance(getattr(p, k), np.ndarray)}
    coefs = bisvm.linear_svc_path(X, y, [0.01, 0.1, 1.0])
    out["linear_svc_path/cancer"] = {"path": short_hash(np.asarray(coefs[0] if isinstance(
        coefs, tuple) else coefs, dtype=float))}
    print(f"{'paths':45s} {time.perf_counter() - t0:6.2f}s", flush=True)
    return out


def run(only=None):
    data = datasets()
    fits = {}
    for name, dname, make in cases():
        if only and only not in name:
            continue
        X, y, Xt = data[dname]
        t0 = time.perf_counter()
        est = make().fit(X, y)
        fits[name] = fingerprint(est, Xt)
        print(f"{name:45s} {time.perf_counter() - t0:6.2f}s "
              f"{short_hash(json.dumps(fits[name], sort_keys=True).encode())}", flush=True)
    if not only or "path" in only:
        fits.update(path_cases(data))
    return fits


def digest(fits):
    return hashlib.sha256(json.dumps(fits, sort_keys=True).encode()).hexdigest()[:16]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="write the hashes to this JSON file")
    ap.add_argument("--compare", help="compare with this JSON file; exit 1 on a mismatch")
    ap.add_argument("--only", help="run only the fits whose name contains this substring")
    args = ap.parse_args(argv)
    fits = run(args.only)
    print(f"{len(fits)} fits, digest {digest(fits)}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"digest": digest(fits), "fits": fits}, f, indent=1, sort_keys=True)
    if args.compare:
        with open(args.compare) as f:
            old = json.load(f)["fits"]
        bad = [k for k in fits if k in old and old[k] != fits[k]]
        missing = [k for k in old if k not in fits and not args.only]
        for k in bad:
            diff = {p: (old[k].get(p), fits[k].get(p)) for p in set(old[k]) | set(fits[k])
                    if old[k].get(p) != fits[k].get(p)}
            print(f"DIFFERS {k}: {diff}")
        for k in missing:
            print(f"MISSING {k}")
        print(f"compared {len(fits)} fits: {len(bad)} differ, {len(missing)} missing")
        return 1 if bad or missing else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
