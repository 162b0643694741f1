"""Test accuracy and features kept: BiSVM models and criteria against scikit-learn's
LinearSVC (C by 5-fold CV) and the L1 LinearSVC, on rows never used for tuning.

Data: Breast Cancer, Wine (class 0 vs rest), the churn-shaped table
(``bisvm.synthetic.make_churn_like``, subsampled with ``--churn-rows``). For each split
seed: stratified 75/25 train/test split, StandardScaler fitted on the training rows,
every method tuned on the training rows only. Writes
``benchmarks/results/bench_accuracy.md``.

    python benchmarks/bench_accuracy.py            # 10 seeds
    python benchmarks/bench_accuracy.py --quick    # 3 seeds, fewer variants
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from bisvm.estimators.sparse import BilevelSVC
from bisvm.synthetic import make_churn_like

BC_GROUPS = {"mean": list(range(10)), "se": list(range(10, 20)), "worst": list(range(20, 30))}


def datasets(churn_rows):
    bc = load_breast_cancer()
    yield "breast-cancer", bc.data, bc.target, BC_GROUPS
    wi = load_wine()
    yield "wine (0 vs rest)", wi.data, (wi.target == 0).astype(int), None
    df = make_churn_like(random_state=0)
    if churn_rows and churn_rows < len(df):
        df = df.sample(churn_rows, random_state=0)
    X = pd.get_dummies(df.drop(columns="churn"), dtype=float).to_numpy()
    yield "churn-shaped", X, (df["churn"] == "Yes").to_numpy().astype(int), None


def methods(quick):
    grid = {"C": np.logspace(-3, 2, 11)}
    yield "LinearSVC L2 (C by 5-fold CV)", lambda s, g: GridSearchCV(
        LinearSVC(max_iter=20000), grid, cv=5)
    yield "LinearSVC L1 (C by 5-fold CV)", lambda s, g: GridSearchCV(
        LinearSVC(penalty="l1", dual=False, max_iter=20000), grid, cv=5)
    configs = [
        # (label, model, criterion, penalize_intercept, learn_l2)
        ("scalar / holdout (thesis)", "scalar", "holdout", True, False),
        ("vector / holdout (thesis)", "vector", "holdout", True, False),
        ("vector / kfold (thesis J over 5 folds)", "vector", "kfold", True, False),
        ("vector / scaled margin (default)", "vector", "scaled_margin", True, False),
        ("vector / margin", "vector", "margin", True, False),
        ("vector / logistic, free intercept, learned α", "vector", "logistic", False, True),
        ("scalar / margin, free intercept", "scalar", "margin", False, False),
        ("group / margin, free intercept", "group", "margin", False, False),
        ("vector / margin, free intercept", "vector", "margin", False, False),
    ]
    if quick:
        configs = [c for c in configs if "thesis" not in c[0] or "vector / holdout" in c[0]]
    for label, model, crit, pen_b, l2 in configs:
        def make(s, g, model=model, crit=crit, pen_b=pen_b, l2=l2, label=label):
            if model == "group" and g is None:
                return None
            # the thesis's rows keep its decision rule: the refit on every feature, the
            # SVM's sign, no null-model test
            thesis = dict(refit=True, null_test=False, threshold="zero") \
                if "thesis" in label else {}
            return BilevelSVC(model=model, criterion=crit, random_state=s,
                              penalize_intercept=pen_b, learn_l2_penalty=l2,
                              groups=g if model == "group" else None, **thesis)
        yield f"BilevelSVC {label}", make


def n_features_kept(est):
    if hasattr(est, "support_"):
        return int(np.sum(est.support_))
    best = est.best_estimator_
    return int(np.sum(np.any(np.abs(best.coef_) > 1e-8, axis=0)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--churn-rows", type=int, default=5000)
    ap.add_argument("--only", default=None, help="substring filter on method names")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_accuracy.md"))
    args = ap.parse_args()
    n_seeds = args.seeds or (3 if args.quick else 10)
    warnings.simplefilter("ignore", ConvergenceWarning)
    rows = []
    for dname, X, y, groups in datasets(args.churn_rows):
        for mname, make in methods(args.quick):
            if args.only and not any(t in mname for t in args.only.split("|")):
                continue
            accs, kept, secs = [], [], []
            for s in range(n_seeds):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=s,
                                                      stratify=y)
                sc = StandardScaler().fit(Xtr)
                est = make(s, groups)
                if est is None:
                    break
                t = time.perf_counter()
                est.fit(sc.transform(Xtr), ytr)
                secs.append(time.perf_counter() - t)
                accs.append(est.score(sc.transform(Xte), yte))
                kept.append(n_features_kept(est))
            if not accs:
                continue
            rows.append(dict(data=dname, method=mname, acc=np.mean(accs),
                             acc_sd=np.std(accs), kept=np.mean(kept), d=X.shape[1],
                             sec=np.mean(secs)))
            r = rows[-1]
            print(f"{dname:18s} {mname:34s} acc {r['acc']:.4f} ± {r['acc_sd']:.4f} "
                  f"kept {r['kept']:.1f}/{r['d']} {r['sec']:.2f}s", flush=True)
    lines = [f"Test accuracy over {n_seeds} split seeds (75/25, standardised on training "
             "rows; churn-shaped table subsampled to "
             f"{args.churn_rows} rows). Command: `python benchmarks/bench_accuracy.py"
             f"{' --quick' if args.quick else ''}`.", "",
             "| data | method | test accuracy (mean ± sd) | features kept | fit seconds |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['data']} | {r['method']} | {r['acc']:.4f} ± {r['acc_sd']:.4f} | "
                     f"{r['kept']:.1f} / {r['d']} | {r['sec']:.2f} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
