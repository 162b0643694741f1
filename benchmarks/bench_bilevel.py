"""BiSVM L-BFGS against the thesis's 149-point grid search, in the same run.

1. Breast Cancer (80/20 split, standardised on the training rows, the thesis's J, α=0.01,
   μ=0.25, γ=0.01), scalar model: lower-level solves, solver steps and wall time of
   BiSVM L-BFGS (Newton and L-BFGS lower levels), of the grid, and of scipy's L-BFGS-B
   on β ≥ 0 with the same hypergradient (no log scale, no step cap) -- as ratios.
2. Whole-fit time of ``BilevelSVC`` (vector model, default settings) on Breast Cancer and
   on the 27,405 × 16 churn-shaped table (``bisvm.synthetic.make_churn_like``).

Writes ``benchmarks/results/bench_bilevel.md``.

    python benchmarks/bench_bilevel.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.optimize as so
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from bisvm.estimators.sparse import BilevelSVC
from bisvm.selection.bilevel import (
    THESIS_GRID,
    BilevelObjective,
    Fold,
    LowerLevel,
    bisvm_lbfgs,
    grid_search,
    make_hyper_model,
)
from bisvm.synthetic import make_churn_like


def bc_fold(seed):
    d = load_breast_cancer()
    y = np.where(d.target == 1, 1.0, -1.0)
    Xtr, Xva, ytr, yva = train_test_split(d.data, y, test_size=0.2, random_state=seed,
                                          stratify=y)
    sc = StandardScaler().fit(Xtr)

    def aug(Z):
        return np.c_[sc.transform(Z), np.ones(len(Z))]

    return Fold(aug(Xtr), ytr, aug(Xva), yva)


def plain_lbfgsb(obj):
    """scipy L-BFGS-B on β in [0, inf) from 0.01, same hypergradient and warm starts."""
    state = {"warm": None, "solves": 0, "iters": 0}

    def fg(b):
        ev = obj.evaluate(np.maximum(b, 1e-12), state["warm"], 1e-9)
        state["warm"] = ev.coefs
        state["solves"] += 1
        state["iters"] += ev.lower_iterations
        return ev.value, ev.grad

    t = time.perf_counter()
    r = so.minimize(fg, np.array([0.01]), jac=True, method="L-BFGS-B",
                    bounds=[(0, None)], options=dict(gtol=1e-5))
    return dict(value=r.fun, beta=r.x[0], solves=state["solves"], iters=state["iters"],
                sec=time.perf_counter() - t)


def best_of(f, repeats):
    out = None
    for _ in range(repeats):
        r = f()
        if out is None or r["sec"] < out["sec"]:
            out = r
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="best-of timing repeats")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_bilevel.md"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    lines = ["### BiSVM L-BFGS vs the 149-point grid (Breast Cancer, scalar model, thesis J)",
             "", f"Best of {args.repeats} runs per seed; ratios are grid / method.", "",
             "| split seed | method | J | β | lower-level solves | solver steps | seconds |"
             " solves ratio | time ratio |", "|---|---|---|---|---|---|---|---|---|"]
    for seed in range(args.seeds):
        fold = bc_fold(seed)
        hyper = make_hyper_model("scalar", 30)
        objs = {s: BilevelObjective((fold,), LowerLevel(solver=s), hyper)
                for s in ("newton", "lbfgs")}

        def run_grid(o=objs["newton"]):
            g = grid_search(o, THESIS_GRID)
            return dict(value=g.best_value, beta=g.best_beta, solves=g.lower_solves,
                        iters=g.lower_iterations, sec=g.seconds)

        def run_bisvm(o):
            r = bisvm_lbfgs(o, 0.01)
            return dict(value=r.value, beta=r.beta[0], solves=r.lower_solves,
                        iters=r.lower_iterations, sec=r.seconds)

        grid = best_of(run_grid, args.repeats)
        on, ol = objs["newton"], objs["lbfgs"]
        rows = [("grid search, 149 β (Newton, warm starts)", grid),
                ("BiSVM L-BFGS, Newton lower level",
                 best_of(lambda o=on: run_bisvm(o), args.repeats)),
                ("BiSVM L-BFGS, L-BFGS lower level",
                 best_of(lambda o=ol: run_bisvm(o), args.repeats)),
                ("scipy L-BFGS-B on β ≥ 0 (Newton lower level)",
                 best_of(lambda o=on: plain_lbfgsb(o), args.repeats))]
        for name, r in rows:
            lines.append(
                f"| {seed} | {name} | {r['value']:.4f} | {r['beta']:.4f} | {r['solves']} | "
                f"{r['iters']} | {r['sec']:.3f} | {grid['solves'] / r['solves']:.1f} | "
                f"{grid['sec'] / r['sec']:.1f} |")
            print(lines[-1], flush=True)
    lines += ["", "### Whole `BilevelSVC` fit (vector model, default settings)", "",
              "| data | rows × columns (with bias) | criterion | seconds (best of "
              f"{args.repeats}) | features kept |", "|---|---|---|---|---|"]
    d = load_breast_cancer()
    Xb = StandardScaler().fit_transform(d.data)
    df = make_churn_like(random_state=0)
    Xc = StandardScaler().fit_transform(
        pd.get_dummies(df.drop(columns="churn"), dtype=float).to_numpy())
    yc = (df["churn"] == "Yes").to_numpy().astype(int)
    for name, X, y in (("breast-cancer", Xb, d.target), ("churn-shaped", Xc, yc)):
        for crit in ("holdout", BilevelSVC().criterion):
            best = None
            for _ in range(args.repeats if len(y) < 1000 else max(1, args.repeats // 2)):
                t = time.perf_counter()
                m = BilevelSVC(model="vector", criterion=crit, random_state=0).fit(X, y)
                sec = time.perf_counter() - t
                best = sec if best is None else min(best, sec)
            lines.append(f"| {name} | {X.shape[0]} × {X.shape[1] + 1} | {crit} | {best:.2f} | "
                         f"{int(m.support_.sum())} / {X.shape[1]} |")
            print(lines[-1], flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("Command: `python benchmarks/bench_bilevel.py`\n\n"
                              + "\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
