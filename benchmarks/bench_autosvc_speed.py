"""Speed and accuracy of the default ``AutoSVC()`` against the searches it replaces, all
on bisvm's ``SVC`` engine and measured in the same run.

    python benchmarks/bench_autosvc_speed.py [--tables ...] [--seeds 1 2 3 4 5]
        [--methods autosvc grid halving optuna autosvc_pf] [--jobs 2]
    python benchmarks/bench_autosvc_speed.py --worker TABLE SEED METHOD

Problems: the interaction problem (1,000 training and 2,000 test rows of 40
standard-normal features, ``y = 1[x_a x_b + x_c x_d > 0]`` for four columns drawn from
the seed; split seed s draws problem 100 + s) and real tables of ``bench_panel_data``
(standardised on the training rows, 25 % test rows per split seed). Baselines:
``GridSearchCV(SVC, C in 10^[-2..3] x gamma in 10^[-1.5..1] / (d var X), cv=5)``,
``HalvingGridSearchCV`` on the same grid and folds, and Optuna's TPE sampler with 50
trials on the same box (5-fold accuracy). ``autosvc_pf`` is
``AutoSVC(widths="per_feature")`` on the interaction problem, where the report also
counts the seeds whose four informative columns have the four largest importances.

Each (problem, seed, method) fit runs in its own process with one thread (OpenMP,
OpenBLAS, MKL and numba limited to 1), after a warm-up fit of the same method on a tiny
problem (imports and numba compilations are not charged); CPU seconds by
``time.process_time``. Ratios are per seed, then averaged. Results:
``benchmarks/results/bench_autosvc_speed.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ("interaction", "breast_cancer", "pima", "mroz")
METHODS = ("autosvc", "grid", "halving", "optuna", "autosvc_pf")
LABELS = {
    "autosvc": "bisvm AutoSVC()",
    "autosvc_pf": 'bisvm AutoSVC(widths="per_feature")',
    "grid": "GridSearchCV(bisvm SVC, 6 C x 6 gamma, cv=5)",
    "halving": "HalvingGridSearchCV(bisvm SVC, same grid, cv=5)",
    "optuna": "Optuna TPE, 50 trials (bisvm SVC, same box, cv=5)",
}
C_GRID = 10.0 ** np.arange(-2, 4)
GAMMA_FACTORS = 10.0 ** np.linspace(-1.5, 1.0, 6)


def interaction(seed, n_train=1000, d=40, n_test=2000):
    """Train and test rows of the interaction problem and its informative columns."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_train + n_test, d))
    cols = rng.choice(d, 4, replace=False)
    y = (X[:, cols[0]] * X[:, cols[1]] + X[:, cols[2]] * X[:, cols[3]] > 0).astype(int)
    return X[:n_train], X[n_train:], y[:n_train], y[n_train:], cols


def problem(table, seed):
    """``(X_train, X_test, y_train, y_test, informative columns or None)``."""
    if table == "interaction":
        return interaction(100 + seed)
    sys.path.insert(0, HERE)
    from bench_panel_data import load

    _, Xtr, Xte, ytr, yte = load(table, seed)
    return Xtr, Xte, ytr, yte, None


def _grid(X):
    return {"C": [float(c) for c in C_GRID],
            "gamma": [float(f / (X.shape[1] * X.var())) for f in GAMMA_FACTORS]}


class OptunaSVC:
    """Optuna's TPE over log C and log gamma on the grid's box, maximising the 5-fold
    accuracy of bisvm's SVC, then a refit at the best trial (as the grid refits)."""

    def __init__(self, n_trials=50, seed=0):
        self.n_trials, self.seed = n_trials, seed

    def fit(self, X, y):
        import optuna
        from sklearn.model_selection import StratifiedKFold, cross_val_score

        from bisvm import SVC

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        g = _grid(X)["gamma"]
        folds = StratifiedKFold(5)

        def objective(trial):
            C = trial.suggest_float("C", C_GRID[0], C_GRID[-1], log=True)
            gamma = trial.suggest_float("gamma", g[0], g[-1], log=True)
            return cross_val_score(SVC(C=C, gamma=gamma), X, y, cv=folds).mean()

        study = optuna.create_study(direction="maximize",
                                    sampler=optuna.samplers.TPESampler(seed=self.seed))
        study.optimize(objective, n_trials=self.n_trials)
        self.best_estimator_ = SVC(**study.best_params).fit(X, y)
        return self

    def predict(self, X):
        return self.best_estimator_.predict(X)


def build(method, X):
    from sklearn.model_selection import GridSearchCV

    from bisvm import SVC, AutoSVC

    if method == "autosvc":
        return AutoSVC()
    if method == "autosvc_pf":
        return AutoSVC(widths="per_feature", random_state=0)
    if method == "grid":
        return GridSearchCV(SVC(), _grid(X), cv=5)
    if method == "halving":
        from sklearn.experimental import enable_halving_search_cv  # noqa: F401
        from sklearn.model_selection import HalvingGridSearchCV

        return HalvingGridSearchCV(SVC(), _grid(X), cv=5, random_state=0)
    if method == "optuna":
        return OptunaSVC(n_trials=50 if X.shape[0] > 100 else 2)
    raise ValueError(f"unknown method {method!r}")


def worker(table, seed, method):
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((80, 4))
    build(method, Xw).fit(Xw, (Xw[:, 0] * Xw[:, 1] > 0).astype(int))
    Xtr, Xte, ytr, yte, cols = problem(table, seed)
    est = build(method, Xtr)
    t0, w0 = time.process_time(), time.perf_counter()
    est.fit(Xtr, ytr)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    out = {"table": table, "seed": seed, "method": method, "n_train": int(len(ytr)),
           "d": int(Xtr.shape[1]), "accuracy": float(np.mean(est.predict(Xte) == yte)),
           "cpu": cpu, "wall": wall}
    if method.startswith("autosvc"):
        out.update(C=float(est.C_), n_solves=int(est.n_solves_),
                   gamma=np.ravel(est.learned_gamma_).tolist()[:1] if method == "autosvc"
                   else None)
    if method == "autosvc_pf" and cols is not None:
        top = np.argsort(-est.feature_importances_)[:4]
        out["top4"] = bool(set(top.tolist()) == set(cols.tolist()))
    print("@@" + json.dumps(out))


def run(table, seed, method):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", table,
                          str(seed), method], env=env, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    return {"table": table, "seed": seed, "method": method, "error": out.stderr[-400:]}


def _by_seed(rows, table, method):
    return {r["seed"]: r for r in rows
            if r["table"] == table and r["method"] == method and "error" not in r}


def _paired(A, B, key):
    seeds = sorted(set(A) & set(B))
    return seeds, np.array([A[s][key] - B[s][key] for s in seeds])


def _se(v):
    return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")


def report(rows, args, load):
    methods = [m for m in args.methods if m != "autosvc_pf"]
    head = ("| table | n train | d | seeds | " + " | ".join(f"acc {m}" for m in methods)
            + " | AutoSVC - grid ± s.e. | " + " | ".join(f"CPU s {m}" for m in methods)
            + " | " + " | ".join(f"AutoSVC / {m}" for m in methods if m != "autosvc") + " |")
    n_cols = head.count("|") - 1
    lines = [
        "# bench_autosvc_speed", "", "```",
        "python benchmarks/bench_autosvc_speed.py " + " ".join(sys.argv[1:]), "```", "",
        f"Split seeds {args.seeds}; every fit single-threaded in its own process, "
        f"{args.jobs} processes at once; CPU seconds of the fit alone (process_time, after "
        f"a warm-up fit); load average before / after the run: {load[0]} / {load[1]} on "
        f"{os.cpu_count()} cores (CPU seconds are inflated by that load, equally for every "
        "method of the run). Methods: "
        + "; ".join(f"`{m}` = {LABELS[m]}" for m in args.methods) + ".", "",
        "Ratios are CPU(AutoSVC) / CPU(baseline), per seed, averaged over seeds.", "",
        head, "|" + "---|" * n_cols]
    summary = {m: [] for m in methods if m != "autosvc"}
    diffs = []
    for t in args.tables:
        per = {m: _by_seed(rows, t, m) for m in methods}
        A = per.get("autosvc", {})
        if not A:
            lines.append(f"| {t} | failed |" + " |" * (n_cols - 2))
            continue
        r0 = next(iter(A.values()))
        accs = [f"{np.mean([r['accuracy'] for r in per[m].values()]):.4f}"
                if per[m] else "-" for m in methods]
        seeds, da = _paired(A, per.get("grid", {}), "accuracy")
        diffs.append((t, da.mean() if da.size else np.nan, _se(da)))
        cpus = [f"{np.mean([r['cpu'] for r in per[m].values()]):.2f}" if per[m] else "-"
                for m in methods]
        ratios = []
        for m in methods:
            if m == "autosvc":
                continue
            s = sorted(set(A) & set(per[m]))
            if not s:
                ratios.append("-")
                continue
            q = float(np.mean([A[k]["cpu"] / per[m][k]["cpu"] for k in s]))
            summary[m].append(q)
            ratios.append(f"{q:.3f}")
        diff = f"{da.mean():+.4f} ± {_se(da):.4f}" if da.size else "-"
        lines.append(f"| {t} | {r0['n_train']} | {r0['d']} | {len(A)} | " + " | ".join(accs)
                     + f" | {diff} | " + " | ".join(cpus) + " | " + " | ".join(ratios) + " |")
    lines += ["", "Mean over tables of the CPU ratio: "
              + "; ".join(f"AutoSVC / {m} {np.mean(v):.3f}" for m, v in summary.items() if v)
              + ". Mean accuracy difference AutoSVC - grid: "
              + f"{np.nanmean([d for _, d, _ in diffs]):+.4f}; tables below the grid by more "
              "than two paired standard errors: "
              + (", ".join(t for t, d, s in diffs if d < -2 * s) or "none") + "."]
    if "autosvc_pf" in args.methods:
        P = _by_seed(rows, "interaction", "autosvc_pf")
        G = _by_seed(rows, "interaction", "grid")
        if P:
            s = sorted(set(P) & set(G))
            ratio = np.mean([P[k]["cpu"] / G[k]["cpu"] for k in s]) if s else float("nan")
            lines += ["", "Per-feature widths on the interaction problem: "
                      f"mean test accuracy {np.mean([r['accuracy'] for r in P.values()]):.4f} "
                      f"(grid {np.mean([r['accuracy'] for r in G.values()]):.4f}); "
                      f"informative columns ranked top 4 on "
                      f"{sum(r.get('top4', False) for r in P.values())}/{len(P)} seeds; "
                      f"mean CPU {np.mean([r['cpu'] for r in P.values()]):.2f} s, "
                      f"{ratio:.3f} x the grid's."]
    failed = [r for r in rows if "error" in r]
    if failed:
        lines += ["", f"{len(failed)} fits failed: "
                  + "; ".join(f"{r['table']}/{r['seed']}/{r['method']}" for r in failed)]
    lines += ["", "Per fit:", "", "| table | seed | method | accuracy | CPU s | C | solves |",
              "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            continue
        c = f"{r['C']:.3g}" if "C" in r else ""
        lines.append(f"| {r['table']} | {r['seed']} | {r['method']} | {r['accuracy']:.4f} | "
                     f"{r['cpu']:.2f} | {c} | {r.get('n_solves', '')} |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3)
    ap.add_argument("--tables", nargs="+", default=list(TABLES))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "bench_autosvc_speed"))
    a = ap.parse_args()
    if a.worker:
        worker(a.worker[0], int(a.worker[1]), a.worker[2])
        return
    load0 = os.getloadavg()[0]
    tasks = [(t, s, m) for t in a.tables for s in a.seeds for m in a.methods
             if m != "autosvc_pf" or t == "interaction"]
    with ThreadPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(lambda t: run(*t), tasks))
    load = (round(load0, 1), round(os.getloadavg()[0], 1))
    lines = report(rows, a, load)
    with open(a.out + ".json", "w") as f:
        json.dump({"command": sys.argv, "load": load, "rows": rows}, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
