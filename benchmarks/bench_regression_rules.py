"""Evidence for BilevelSVR's decision rules and defaults: each rule switched off (or
changed) one at a time, on the regression panel's tables and split seeds.

    python benchmarks/bench_regression_rules.py [--seeds 5] [--variants a,b] [--tables a,b]

Every variant is fitted on the same 75/25 splits as ``bench_regression_panel.py`` (its
data module), in one process, single-threaded; the panel itself measures CPU time
against the baselines, this script only test R² and the features kept. Writes
``results/bench_regression_rules.{json,md}``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _regression_panel_data as data  # noqa: E402

import bisvm  # noqa: E402

#: name -> (BilevelSVR parameters, what it tests)
VARIANTS = {
    "default": ({}, "BilevelSVR() as shipped"),
    "refit_all": ({"refit": True}, "refit on every feature (no restriction to the support)"),
    "no_null": ({"null_test": False}, "no null-model test"),
    "refine_1se": ({"refinement_rule": "1se"},
                   "refinement by the one-standard-error rule instead of its held-out minimum"),
    "scalar": ({"model": "scalar"}, "one L1 weight (no per-feature refinement)"),
    "epsilon": ({"loss": "epsilon_insensitive"},
                "the ε-insensitive loss of support vector regression instead of the squared one"),
    "huber": ({"loss": "huber", "epsilon": 1.345},
              "the Pseudo-Huber loss (width 1.345 standard deviations of y) instead of the "
              "squared one"),
    "mae": ({"criterion": "mae"}, "smoothed MAE criterion instead of the MSE"),
    "no_warm": ({"warm_init": False}, "refinement from a fixed start (no scalar stage)"),
}


def run(tables, seeds, variants, quick):
    records = []
    for name in tables:
        for seed in range(seeds):
            t, Xtr, Xte, ytr, yte = data.load(name, seed, quick=quick)
            for v in variants:
                params = VARIANTS[v][0]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.process_time()
                    m = bisvm.BilevelSVR(random_state=seed, **params).fit(Xtr, ytr)
                    cpu = time.process_time() - t0
                rec = {"table": name, "seed": seed, "variant": v,
                       "r2": float(m.score(Xte, yte)), "kept": int(m.support_.sum()),
                       "cpu": cpu, "null": bool(np.all(m.null_model_))}
                if t.informative is not None:
                    rec["informative_kept"] = int(m.support_[t.informative].sum())
                records.append(rec)
            print(name, seed, flush=True)
    return records


def report(records, variants, seeds, command):
    tables = list(dict.fromkeys(r["table"] for r in records))

    def cell(t, v, key):
        vals = [r[key] for r in records if r["table"] == t and r["variant"] == v]
        return float(np.mean(vals)) if vals else float("nan")

    lines = ["# BilevelSVR's decision rules, one at a time", "",
             f"Command: `{command}`", "",
             f"Test R² (mean over {seeds} split seeds) and features kept; the same 75/25 "
             "splits as the regression panel; single-threaded, one process. "
             "Variants: " + "; ".join(f"`{v}`: {VARIANTS[v][1]}" for v in variants) + ".",
             "", "| table | " + " | ".join(variants) + " |",
             "|---|" + "---|" * len(variants)]
    for t in tables:
        lines.append(f"| {t} | " + " | ".join(
            f"{cell(t, v, 'r2'):.4f} ({cell(t, v, 'kept'):.1f})" for v in variants) + " |")
    mean = {v: np.mean([cell(t, v, "r2") for t in tables]) for v in variants}
    kept = {v: np.mean([cell(t, v, "kept") for t in tables]) for v in variants}
    lines.append("| **mean** | " + " | ".join(f"**{mean[v]:.4f}** ({kept[v]:.1f})"
                                              for v in variants) + " |")
    nulls = {v: sum(r["null"] for r in records if r["variant"] == v) for v in variants}
    lines += ["", "Null-model test fired (fits returning the intercept-only model): " +
              ", ".join(f"{v} {nulls[v]}" for v in variants) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--variants", default=",".join(v for v in VARIANTS if v != "no_warm"))
    ap.add_argument("--tables", default=",".join(list(data.REAL) + ["dense200x2000"]))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results" / "bench_regression_rules"))
    args = ap.parse_args(argv)
    variants = args.variants.split(",")
    records = run(args.tables.split(","), args.seeds, variants, args.quick)
    command = "python benchmarks/bench_regression_rules.py " + " ".join(argv or sys.argv[1:])
    Path(args.out + ".json").write_text(json.dumps(records, indent=1))
    text = report(records, variants, args.seeds, command.strip())
    Path(args.out + ".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
