"""Which informative columns of the regression panel's dense 200 × 2,000 problem each
selection keeps: BilevelSVR's defaults and variants beside LassoCV and two adaptive Lassos.

The panel (``bench_regression_panel.py``) asks that all 20 informative columns be kept on
most synthetic seeds; this script shows, on the same draws (split seeds 0-4), how far each
rule gets and at what price in noise columns and test R²::

    python benchmarks/bench_regression_recall.py [--seeds 5]

Writes ``results/bench_regression_recall.md`` (+ ``.json``). Single process, one thread.
Adaptive Lasso (Zou 2006): LassoCV on the standardised columns rescaled by |b_j| of a first
fit b (LassoCV's, or RidgeCV's over 20 log-spaced weights), coefficients mapped back.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import numpy as np  # noqa: E402
from sklearn.linear_model import LassoCV, LinearRegression, RidgeCV  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _regression_panel_data as data  # noqa: E402

import bisvm  # noqa: E402

#: name -> BilevelSVR parameters (None: a scikit-learn baseline)
VARIANTS = {
    "BilevelSVR()": {},
    "BilevelSVR(early_stopping=False)": {"early_stopping": False},
    "BilevelSVR(l2_penalty=0.1)": {"l2_penalty": 0.1},
    "BilevelSVR(l2_penalty=1)": {"l2_penalty": 1.0},
    "BilevelSVR(l1_smoothing=0.003)": {"l1_smoothing": 0.003},
    "BilevelSVR(l1_smoothing=0.01)": {"l1_smoothing": 0.01},
    "LassoCV": None,
    "adaptive Lasso (LassoCV start)": None,
    "adaptive Lasso (RidgeCV start)": None,
    "OLS on the 20 informative (oracle)": None,
}


def _lasso(Z, y):
    return LassoCV(n_jobs=1, random_state=0).fit(Z, y)


def _fit(name, Xtr, ytr, Xte, seed, informative):
    """(coefficient support, test predictions) of one method."""
    if VARIANTS[name] is not None:
        m = bisvm.BilevelSVR(random_state=seed, **VARIANTS[name]).fit(Xtr, ytr)
        return np.flatnonzero(m.support_), m.predict(Xte)
    sc = StandardScaler().fit(Xtr)
    Z, Zte = sc.transform(Xtr), sc.transform(Xte)
    if "oracle" in name:
        # the ceiling: least squares on the true support, which no selector knows
        m = LinearRegression().fit(Z[:, informative], ytr)
        return informative, m.predict(Zte[:, informative])
    if name == "LassoCV":
        m = _lasso(Z, ytr)
        return np.flatnonzero(m.coef_), m.predict(Zte)
    if "LassoCV start" in name:
        start = np.abs(_lasso(Z, ytr).coef_)
    else:
        start = np.abs(RidgeCV(alphas=np.logspace(-2, 4, 20)).fit(Z, ytr).coef_)
    keep = start > 0
    m = _lasso(Z[:, keep] * start[keep], ytr)
    coef = np.zeros(Z.shape[1])
    coef[keep] = m.coef_ * start[keep]
    return np.flatnonzero(coef), Zte @ coef + m.intercept_


def run(seeds):
    t, Xtr, _, ytr, _ = data.load("dense200x2000", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bisvm.BilevelSVR().fit(Xtr[:, :300], ytr)  # compile and import before timing
    records = []
    for seed in range(seeds):
        t, Xtr, Xte, ytr, yte = data.load("dense200x2000", seed)
        informative = set(t.informative.tolist())
        for name in VARIANTS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c0 = time.process_time()
                support, pred = _fit(name, Xtr, ytr, Xte, seed, np.sort(t.informative))
                cpu = time.process_time() - c0
            hit = len(informative & set(support.tolist()))
            records.append({"seed": seed, "method": name, "informative": hit,
                            "others": int(support.size - hit),
                            "r2": float(r2_score(yte, pred)), "cpu": cpu})
            print(seed, name, hit, support.size - hit, f"{records[-1]['r2']:.4f}", flush=True)
    return records


def report(records, seeds, command):
    lines = ["# Informative columns kept on the dense 200 × 2,000 problem", "",
             f"Command: `{command}`", "",
             f"Split seeds 0-{seeds - 1} (the regression panel's draws); cell: informative "
             "columns kept of 20 (+ other columns kept), test R². Single process, one "
             "thread; BilevelSVR seeded with the split seed; CPU seconds of the fit "
             "(`time.process_time`, median over the seeds, after a warm-up fit; the "
             f"load average at the end of the run was {os.getloadavg()[0]:.1f}).", "",
             "| method | per seed | seeds with all 20 | mean others | mean test R² "
             "| median CPU s |",
             "|---|---|---|---|---|---|"]
    for name in VARIANTS:
        rs = [r for r in records if r["method"] == name]
        cells = "; ".join(f"{r['informative']}/20 (+{r['others']}) {r['r2']:.3f}" for r in rs)
        full = sum(r["informative"] == 20 for r in rs)
        lines.append(f"| {name} | {cells} | {full}/{len(rs)} | "
                     f"{np.mean([r['others'] for r in rs]):.1f} | "
                     f"{np.mean([r['r2'] for r in rs]):.4f} | "
                     f"{np.median([r.get('cpu', np.nan) for r in rs]):.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results" / "bench_regression_recall"))
    args = ap.parse_args(argv)
    records = run(args.seeds)
    command = "python benchmarks/bench_regression_recall.py " + " ".join(argv or sys.argv[1:])
    Path(args.out + ".json").write_text(json.dumps(records, indent=1))
    text = report(records, args.seeds, command.strip())
    Path(args.out + ".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
