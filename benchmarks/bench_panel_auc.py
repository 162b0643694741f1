"""Do the models the null-model test judges carry signal? Held-out AUC.

On the panel's unbalanced tables where the majority class is hard to beat on accuracy
(Affairs, email, NHEFS, and bfi for contrast), for each split seed: ``BilevelSVC()`` as
it comes against the CV-tuned L2 and L1 ``LinearSVC`` of the panel
(:func:`bench_panel.make_method`). For each: the area under the ROC curve of the
decision values on the test rows (0.5: no ranking; the intercept-only model that the
misclassification null test returned on Affairs, email and NHEFS, the ``[accnull]`` rows
of bench_panel.md, has 0.5 by construction), the test accuracy, the balanced accuracy,
the share of test rows predicted positive, the positive share and the features kept.
Same splits, scaling and seeds as ``bench_panel.py``; single-threaded.

A second table sweeps the operating point of ``BilevelSVC()``'s test decision values on
bfi: the threshold that gives a share r of the test rows to the majority class, and the
test accuracy and balanced accuracy there (mean over seeds), beside the baselines' own
operating points, to tell a threshold that sits in the wrong place from outputs whose
ROC curve is lower where it matters.

Usage::

    python benchmarks/bench_panel_auc.py        # -> results/bench_panel_auc.md
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_panel as bp  # noqa: E402
import bench_panel_data as data  # noqa: E402

PROBLEMS = ("affairs", "email", "nhefs", "bfi")
METHODS = ("bisvm-auto", "l2cv", "l1cv")


RATES = np.linspace(0.70, 0.95, 11)


def _sweep(dec, pos):
    """Accuracy and balanced accuracy at the thresholds that give a share ``r`` of the
    rows to the positive class, for each ``r`` of :data:`RATES`."""
    acc, bal = [], []
    for r in RATES:
        p = dec > np.quantile(dec, 1 - r)
        acc.append(np.mean(p == pos))
        bal.append(0.5 * (np.mean(p[pos]) + np.mean(~p[~pos])))
    return acc, bal


def main(seeds=5):
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score

    lines = ["# Held-out AUC of the models on the unbalanced tables", "",
             f"Command: `python benchmarks/bench_panel_auc.py`; split seeds 0-{seeds - 1} "
             "(bench_panel.py's splits and scaling); mean over seeds.", "",
             "| table | method | test AUC | accuracy % | balanced accuracy % | predicted "
             "positive | positive share | features kept |", "|---|---|---|---|---|---|---|---|"]
    sweep = []
    for name in PROBLEMS:
        res = {m: [] for m in METHODS}
        for seed in range(seeds):
            table, Xtr, Xte, ytr, yte = data.load(name, seed)
            for m in METHODS:
                est = bp.make_method(m, seed, table, {})
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(Xtr, ytr)
                dec = est.decision_function(Xte)
                pred = est.predict(Xte)
                pos = np.unique(ytr)[1]
                if name == "bfi" and m == "bisvm-auto":
                    sweep.append(_sweep(dec, yte == pos))
                res[m].append((roc_auc_score(yte == pos, dec), accuracy_score(yte, pred),
                               balanced_accuracy_score(yte, pred), np.mean(pred == pos),
                               np.mean(yte == pos), bp.kept_mask(est, Xtr.shape[1]).sum()))
        for m, v in res.items():
            v = np.asarray(v, dtype=float).mean(axis=0)
            lines.append(f"| {name} | {m} | {v[0]:.3f} | {100 * v[1]:.1f} | {100 * v[2]:.1f} "
                         f"| {v[3]:.3f} | {v[4]:.3f} | {v[5]:.1f} |")
            print(lines[-1], flush=True)
    lines += ["", "bfi, `bisvm-auto`: test accuracy and balanced accuracy when a share r of "
              "the test rows is given to the majority (positive) class", "",
              "| r | " + " | ".join(f"{r:.3f}" for r in RATES) + " |",
              "|---|" + "---|" * len(RATES),
              "| accuracy % | " + " | ".join(f"{100 * a:.1f}" for a in
                                           np.mean([s[0] for s in sweep], axis=0)) + " |",
              "| balanced % | " + " | ".join(f"{100 * b:.1f}" for b in
                                           np.mean([s[1] for s in sweep], axis=0)) + " |"]
    out = HERE / "results" / "bench_panel_auc.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
