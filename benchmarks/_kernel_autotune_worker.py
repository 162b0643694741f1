"""The methods of ``bench_kernel_autotune.py`` and one timed fit (:func:`run_fit`).

    python benchmarks/_kernel_autotune_worker.py --problem NAME --seed S --method M
        [--max-train N]

run alone, fits the method once on a tiny problem (:func:`warm_up`: imports, numba
compilations and other first-call costs are not charged), then times the real fit by
``time.process_time`` (every thread of the process; set one BLAS/OpenMP thread in the
environment) and prints one JSON line prefixed by ``@@``: test accuracy, CPU and wall
seconds, the hyperparameters found, and for methods with per-feature relevances whether
the problem's informative columns rank first.

Every baseline of the bisvm engine is the same :class:`bisvm.SVC` (hinge loss, RBF,
``tol=1e-3``); the grid is ``C in 10^[-2..3]`` (6 points) times ``gamma in
10^[-1.5..1] / (d var X)`` (6 points, ``var X = 1`` on the standardised columns), and
Optuna and ``HalvingGridSearchCV`` search the same box with the same 5 stratified folds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _kernel_autotune_data import interaction, load  # noqa: E402

#: method -> label of the report
METHODS = {
    "autosvc": "bisvm AutoSVC()",
    "autosvc_pf": 'bisvm AutoSVC(widths="per_feature")',
    "autosvc_pf_gp": 'bisvm AutoSVC(widths="per_feature") on the GP\'s rows',
    "autosvc_all": "bisvm AutoSVC() on all training rows of a subsampled table",
    "grid": "GridSearchCV(bisvm SVC, 6 C x 6 gamma, cv=5)",
    "halving": "HalvingGridSearchCV(bisvm SVC, same grid, cv=5)",
    "optuna": "Optuna TPE, 50 trials (bisvm SVC, same box, cv=5)",
    "sk_grid": "GridSearchCV(scikit-learn SVC, same grid, cv=5)",
    "gp": "GaussianProcessClassifier(anisotropic RBF)",
    "l1_logistic": "LogisticRegressionCV(L1, 10 Cs, cv=5)",
    "bilevel_svc": "bisvm BilevelSVC() (linear, learned L1 weights)",
}
C_GRID = 10.0 ** np.arange(-2, 4)
GAMMA_FACTORS = 10.0 ** np.linspace(-1.5, 1.0, 6)
N_TRIALS = 50


def grid(d):
    """The 6 x 6 grid on standardised columns (``1 / (d var X) = 1 / d``)."""
    return {"C": [float(c) for c in C_GRID], "gamma": [float(f / d) for f in GAMMA_FACTORS]}


class OptunaSVC:
    """Optuna's TPE sampler over log C and log gamma on the grid's box, maximising the
    5-fold accuracy of :class:`bisvm.SVC`, then a refit on all rows at the best trial
    (what ``GridSearchCV`` does at its best point)."""

    def __init__(self, n_trials=N_TRIALS, seed=0):
        self.n_trials, self.seed = n_trials, seed

    def fit(self, X, y):
        import optuna
        from sklearn.model_selection import StratifiedKFold, cross_val_score

        from bisvm import SVC

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        g = grid(X.shape[1])["gamma"]
        folds = StratifiedKFold(5)

        def objective(trial):
            C = trial.suggest_float("C", C_GRID[0], C_GRID[-1], log=True)
            gamma = trial.suggest_float("gamma", g[0], g[-1], log=True)
            return cross_val_score(SVC(C=C, gamma=gamma), X, y, cv=folds).mean()

        study = optuna.create_study(direction="maximize",
                                    sampler=optuna.samplers.TPESampler(seed=self.seed))
        study.optimize(objective, n_trials=self.n_trials)
        self.best_params_ = study.best_params
        self.best_estimator_ = SVC(**self.best_params_).fit(X, y)
        return self

    def predict(self, X):
        return self.best_estimator_.predict(X)


class RestartedGPC:
    """scikit-learn's ``GaussianProcessClassifier`` (Laplace approximation, kernel
    ``c * RBF(l_1, ..., l_d)``: one length scale per feature, automatic relevance
    determination), hyperparameters by maximising the approximate log marginal
    likelihood (Rasmussen & Williams 2006, "Gaussian Processes for Machine Learning",
    sections 3.4 and 5.4), restarted from smoother starts as long as the fit has
    learned nothing.

    Start: ``c = 1`` and every ``l_j = sqrt(d)``. On standardised columns a squared
    distance is about ``2d``, so at ``l_j = 1`` every off-diagonal entry is about
    ``exp(-d)``, the likelihood is flat and L-BFGS-B stops where it starts. Restarts:
    the evidence of the latent function ``f = 0`` is exactly ``-n log 2`` (every
    ``p(y_i | f_i = 0) = 1/2``); a fit whose evidence does not beat it by
    ``min_gain`` nats has collapsed (length scales at their lower bound, a diagonal
    kernel), so it is refitted from length scales twice as long, up to ``max_starts``
    starts, and the fit of highest evidence is kept. Random restarts over the bounds
    (``n_restarts_optimizer``) would be drawn mostly from kernels that are diagonal or
    constant in ``d`` dimensions, and cost a full fit each.
    """

    def __init__(self, max_starts=3, min_gain=1.0):
        self.max_starts, self.min_gain = max_starts, min_gain

    def fit(self, X, y):
        from sklearn.gaussian_process import GaussianProcessClassifier
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel

        n, d = X.shape
        null = -n * np.log(2.0)
        self.n_starts_, self.gp_ = 0, None
        for k in range(self.max_starts):
            kernel = ConstantKernel(1.0, (1e-2, 1e4)) * RBF(
                np.full(d, 2.0 ** k * np.sqrt(d)), (1e-2, 1e3))
            gp = GaussianProcessClassifier(kernel, random_state=0).fit(X, y)
            self.n_starts_ += 1
            if self.gp_ is None or (gp.log_marginal_likelihood_value_
                                    > self.gp_.log_marginal_likelihood_value_):
                self.gp_ = gp
            if self.gp_.log_marginal_likelihood_value_ > null + self.min_gain:
                break
        return self

    def predict(self, X):
        return self.gp_.predict(X)


def build(method, d):
    """The estimator of ``method`` for ``d`` standardised features."""
    from sklearn.model_selection import GridSearchCV

    from bisvm import SVC, AutoSVC, BilevelSVC

    if method in ("autosvc", "autosvc_all"):
        return AutoSVC()
    if method in ("autosvc_pf", "autosvc_pf_gp"):
        return AutoSVC(widths="per_feature", random_state=0)
    if method == "grid":
        return GridSearchCV(SVC(), grid(d), cv=5)
    if method == "halving":
        from sklearn.experimental import enable_halving_search_cv  # noqa: F401
        from sklearn.model_selection import HalvingGridSearchCV

        return HalvingGridSearchCV(SVC(), grid(d), cv=5, random_state=0)
    if method == "optuna":
        return OptunaSVC()
    if method == "sk_grid":
        from sklearn.svm import SVC as SkSVC

        return GridSearchCV(SkSVC(), grid(d), cv=5)
    if method == "gp":
        return RestartedGPC()
    if method == "l1_logistic":
        from sklearn.linear_model import LogisticRegressionCV

        return LogisticRegressionCV(Cs=10, cv=5, l1_ratios=(1.0,), solver="saga",
                                    max_iter=5000)
    if method == "bilevel_svc":
        return BilevelSVC()
    raise ValueError(f"unknown method {method!r}")


def relevances(method, est):
    """Per-feature relevances of a fitted ``est`` (None where the method has none)."""
    if method in ("autosvc_pf", "autosvc_pf_gp"):
        return np.asarray(est.feature_importances_, float)
    if method == "gp":
        return 1.0 / np.asarray(est.gp_.kernel_.k2.length_scale, float) ** 2
    if method == "l1_logistic":
        return np.abs(est.coef_).ravel()
    if method == "bilevel_svc":
        imp = getattr(est, "feature_importances_", None)
        return np.abs(np.asarray(est.coef_)).ravel() if imp is None else np.asarray(imp)
    return None


def hyperparameters(method, est):
    """What the method chose (JSON-able)."""
    if method.startswith("autosvc"):
        g = np.asarray(est.gamma_, float)
        return {"C": float(est.C_), "gamma": float(g) if g.ndim == 0 else None,
                "n_solves": int(est.n_solves_),
                "support": [int(j) for j in np.flatnonzero(est.support_)]}
    if method == "gp":
        return {"n_starts": est.n_starts_,
                "log_evidence": float(est.gp_.log_marginal_likelihood_value_)}
    if hasattr(est, "best_params_"):
        return {k: float(v) for k, v in est.best_params_.items()}
    return {}


def warm_up(method):
    """Fit ``method`` once on a tiny problem: imports, numba compilations and other
    first-call costs are paid here, not by the timed fit."""
    Xw, yw, _, _, _ = interaction(0, n_train=80, d=4, n_test=10)
    build(method, 4).fit(Xw, yw)


def run_fit(problem, seed, method, max_train=None):
    """Fit ``method`` on one split, timed by ``time.process_time``; the record."""
    s = load(problem, seed, max_train)
    est = build(method, s.X_train.shape[1])
    t0, w0 = time.process_time(), time.perf_counter()
    est.fit(s.X_train, s.y_train)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    acc = float(np.mean(est.predict(s.X_test) == s.y_test))
    rec = {"problem": problem, "method": method, "seed": seed,
           "n_rows": s.n_rows, "n_train": int(s.X_train.shape[0]),
           "d": int(s.X_train.shape[1]), "accuracy": acc, "cpu": cpu, "wall": wall,
           **hyperparameters(method, est)}
    rel = relevances(method, est)
    if rel is not None and s.informative:
        k = len(s.informative)
        rec["top_k"] = bool(set(np.argsort(-rel)[:k].tolist()) == set(s.informative))
        rec["informative"] = list(s.informative)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--method", required=True, choices=list(METHODS))
    ap.add_argument("--max-train", type=int, default=None)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    warm_up(a.method)
    print("@@" + json.dumps(run_fit(a.problem, a.seed, a.method, a.max_train)))


if __name__ == "__main__":
    main()
