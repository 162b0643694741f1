"""One fit of ``bench_kernel_autotune.py`` in a process of its own.

    python benchmarks/_kernel_autotune_worker.py --method M --seed S [--n-train N] [--d D]
        [--gp-rows R]

The interaction problem: ``n_train + 2000`` rows of ``d`` standard-normal features and
``y = 1[x_a x_b + x_c x_d > 0]`` for four columns drawn from the seed. The worker first
fits the method once on a tiny problem of the same kind (numba compilations and other
first-call costs are not charged), then times the real fit by ``time.process_time``
(every thread of the process) and prints one JSON line prefixed by ``@@``: test accuracy,
whether the four informative features have the four largest importances (None for a
method without per-feature importances), CPU and wall seconds.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

METHODS = ("autosvc_per_feature", "autosvc_shared", "grid_svc", "gp_ard", "l1_logistic_cv",
           "bilevel_svc")


def make_problem(seed, n_train, d, n_test=2000):
    """Train and test rows of the interaction problem and its informative columns."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_train + n_test, d))
    cols = rng.choice(d, 4, replace=False)
    y = (X[:, cols[0]] * X[:, cols[1]] + X[:, cols[2]] * X[:, cols[3]] > 0).astype(int)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], cols


def build(method, d, X):
    """The estimator of ``method`` (and the number of training rows it is given)."""
    from sklearn.model_selection import GridSearchCV

    from bisvm import SVC, BilevelSVC
    from bisvm.estimators.auto_svc import AutoSVC

    if method == "autosvc_per_feature":
        return AutoSVC(widths="per_feature", random_state=0)
    if method == "autosvc_shared":
        return AutoSVC()
    if method == "grid_svc":
        g = 1.0 / (d * X.var())
        grid = {"C": list(10.0 ** np.arange(-2, 4)),
                "gamma": list(g * 10.0 ** np.linspace(-1.5, 1.0, 6))}
        return GridSearchCV(SVC(), grid, cv=5)
    if method == "gp_ard":
        from sklearn.gaussian_process import GaussianProcessClassifier
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel

        return GaussianProcessClassifier(ConstantKernel(1.0) * RBF(np.ones(d)), random_state=0)
    if method == "l1_logistic_cv":
        from sklearn.linear_model import LogisticRegressionCV

        return LogisticRegressionCV(Cs=10, cv=5, l1_ratios=(1.0,), solver="saga",
                                    max_iter=5000)
    if method == "bilevel_svc":
        return BilevelSVC()
    raise ValueError(method)


def importances(method, est):
    """Per-feature importances of a fitted ``est`` (None where the method has none)."""
    if method.startswith("autosvc") and method.endswith("per_feature"):
        return est.feature_importances_
    if method == "gp_ard":
        ls = np.asarray(est.kernel_.k2.length_scale, float)
        return 1.0 / ls**2
    if method == "l1_logistic_cv":
        return np.abs(est.coef_).ravel()
    if method == "bilevel_svc":
        imp = getattr(est, "feature_importances_", None)
        return np.abs(np.asarray(est.coef_)).ravel() if imp is None else np.asarray(imp)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", required=True, choices=METHODS)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n-train", type=int, default=1000)
    ap.add_argument("--d", type=int, default=40)
    ap.add_argument("--gp-rows", type=int, default=500)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    Xw, yw, _, _, _ = make_problem(0, 60, 6, n_test=10)
    build(a.method, 6, Xw).fit(Xw, yw)
    Xtr, ytr, Xte, yte, cols = make_problem(a.seed, a.n_train, a.d)
    if a.method == "gp_ard":
        Xtr, ytr = Xtr[: a.gp_rows], ytr[: a.gp_rows]
    est = build(a.method, a.d, Xtr)
    t0, w0 = time.process_time(), time.perf_counter()
    est.fit(Xtr, ytr)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    acc = float(np.mean(est.predict(Xte) == yte))
    imp = importances(a.method, est)
    top4 = None if imp is None else bool(set(np.argsort(-imp)[:4]) == set(cols))
    extra = {}
    if a.method.startswith("autosvc"):
        extra = {"C": est.C_, "n_solves": est.n_solves_,
                 "support": [int(j) for j in np.flatnonzero(est.support_)]}
    print("@@" + json.dumps({"method": a.method, "seed": a.seed, "n_train": int(len(ytr)),
                             "d": a.d, "accuracy": acc, "top4": top4, "cpu": cpu,
                             "wall": wall, "informative": sorted(int(c) for c in cols),
                             **extra}))


if __name__ == "__main__":
    main()
