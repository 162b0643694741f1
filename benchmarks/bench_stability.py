"""Exact recovery of two informative features: stability selection beside bisvm's and
scikit-learn's selectors.

The problem: 200 rows × 400 features, X standard normal, y ~ Bernoulli(σ(1.5 x_a − 1.5
x_b)) for two columns a ≠ b drawn with the seed (:func:`problem`). A method *recovers*
the support when it selects exactly {a, b}. Methods:

* ``stability``: ``StabilitySelection(random_state=0)`` with its defaults (BilevelSVC()
  on 50 complementary pairs of 100 rows, threshold 0.7); its frequencies also give the
  row ``stability@0.6`` (threshold 0.6, the same fits, no extra time);
* ``bilevel``: ``BilevelSVC(random_state=0)`` alone;
* ``selective-min`` / ``selective-1se``: ``SelectiveLogisticRegressionCV`` with
  ``selection_rule="min"`` / ``"1se"`` (defaults otherwise);
* ``l1-logregcv``: scikit-learn's L1 ``LogisticRegressionCV(Cs=10, cv=5,
  solver="liblinear")``;
* ``rfecv``: scikit-learn's ``RFECV(LinearSVC(), cv=5)`` (step 1).

Each (method, seed) fit runs in a fresh Python process with one BLAS/OpenMP thread
(``OMP_NUM_THREADS=1`` and friends, ``n_jobs=1``); the CPU seconds are those of the fit
alone (``time.process_time`` around ``fit``), imports excluded; one untimed fit on a
small problem first fills numba's on-disk cache, so that no timed fit compiles.

Seeds: the defaults of StabilitySelection (threshold, number of pairs, base estimator)
were chosen on the tuning seeds 0-9 (``--seeds 0-9``, the frequencies of each seed in
``results/bench_stability_tuning.md``); the evaluation seeds 1001-1005 were run once,
after that choice.

Usage::

    python benchmarks/bench_stability.py                 # seeds 1001-1005
    python benchmarks/bench_stability.py --seeds 0-9 --methods stability \
        --name bench_stability_tuning

Set ``PYTHONPATH`` to import bisvm from a clean export of a commit (``git archive``);
the report names the directory bisvm was imported from.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
METHODS = ("stability", "bilevel", "selective-min", "selective-1se", "l1-logregcv", "rfecv")
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
           "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def problem(seed, n=200, p=400, strength=1.5):
    """X (n × p, standard normal), y ~ Bernoulli(σ(s x_a − s x_b)), and {a, b}."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    a, b = rng.choice(p, 2, replace=False)
    z = strength * (X[:, a] - X[:, b])
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return X, y, sorted([int(a), int(b)])


def _make(method):
    if method == "stability":
        from bisvm import StabilitySelection

        return StabilitySelection(random_state=0, n_jobs=1)
    if method == "bilevel":
        from bisvm import BilevelSVC

        return BilevelSVC(random_state=0)
    if method.startswith("selective-"):
        from bisvm import SelectiveLogisticRegressionCV

        return SelectiveLogisticRegressionCV(selection_rule=method.split("-")[1])
    if method == "l1-logregcv":
        from sklearn.linear_model import LogisticRegressionCV

        return LogisticRegressionCV(Cs=10, l1_ratios=(1.0,), solver="liblinear", cv=5,
                                    scoring="accuracy", random_state=0,
                                    use_legacy_attributes=False)
    if method == "rfecv":
        from sklearn.feature_selection import RFECV
        from sklearn.svm import LinearSVC

        return RFECV(LinearSVC(random_state=0), cv=5)
    raise ValueError(f"unknown method {method!r}")


def _support(method, est):
    if method == "l1-logregcv":
        return np.flatnonzero(est.coef_.ravel() != 0)
    return np.flatnonzero(est.support_)


def worker(method, seed):
    """Fit one method on one seed in this process; print a JSON record."""
    X, y, truth = problem(seed)
    est = _make(method)
    c0, w0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    import bisvm

    rec = {"method": method, "seed": seed, "truth": truth, "cpu": cpu, "wall": wall,
           "support": _support(method, est).tolist(),
           "bisvm": str(Path(bisvm.__file__).parent)}
    if method == "stability":
        f = est.selection_frequency_
        rec.update(
            support_at_0_6=np.flatnonzero(f >= 0.6).tolist(),
            truth_frequency=[float(f[i]) for i in truth],
            top_noise_frequency=float(np.delete(f, truth).max()),
            average_selected=est.average_selected_,
            bound=est.false_selection_bound_,
            bound_unimodal=est.false_selection_bound_unimodal_,
            estimator=repr(est.estimator_),
        )
    print(json.dumps(rec))


def _seeds(text):
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def warm():
    """Fit bisvm's methods once on a small problem, untimed: numba compiles its functions
    into its on-disk cache on the first call, which every later process then loads."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 30))
    y = (X[:, 0] - X[:, 1] + rng.standard_normal(60) > 0).astype(int)
    for method in ("bilevel", "selective-min"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _make(method).fit(X, y)


def run(methods, seeds):
    env = dict(os.environ, **dict.fromkeys(THREADS, "1"))
    subprocess.run([sys.executable, __file__, "--warm"], env=env, check=True)
    records = []
    for method in methods:
        for seed in seeds:
            r = subprocess.run([sys.executable, __file__, "--worker", method, str(seed)],
                               capture_output=True, text=True, env=env, check=False)
            if r.returncode:
                raise RuntimeError(f"{method} seed {seed} failed:\n{r.stderr[-2000:]}")
            rec = json.loads(r.stdout.strip().splitlines()[-1])
            records.append(rec)
            print(f"{method:14s} seed {seed}: support {rec['support']} (truth {rec['truth']}), "
                  f"{rec['cpu']:.1f} s CPU", flush=True)
    return records


def _rows(records):
    """Per method: the records, with ``stability@0.6`` derived from ``stability``."""
    by = {}
    for r in records:
        by.setdefault(r["method"], []).append(r)
        if r["method"] == "stability":
            by.setdefault("stability@0.6", []).append(
                dict(r, method="stability@0.6", support=r["support_at_0_6"]))
    return by


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                              capture_output=True, text=True).stdout.strip() or "?"
    except OSError:
        return "?"


def report(records, seeds, command, path, commit):
    by = _rows(records)
    ref = np.mean([r["cpu"] for r in by["l1-logregcv"]]) if "l1-logregcv" in by else None
    where = sorted({r["bisvm"] for r in records})
    L = [f"`{command}`", "",
         "# Stability selection: exact recovery on the 200 × 400 logistic problem", "",
         "X standard normal, y ~ Bernoulli(σ(1.5 x_a − 1.5 x_b)) for two columns a, b drawn "
         "with the seed; *exact* = the selected set is {a, b}. Each (method, seed) fit in a "
         "fresh process, one thread (BLAS/OpenMP/numba = 1, `n_jobs=1`); CPU seconds of "
         "the fit alone.", "",
         f"Seeds: {', '.join(map(str, seeds))}. Machine: {platform.machine()}, "
         f"{os.cpu_count()} cores (shared; load average at the end "
         f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}), Python "
         f"{platform.python_version()}; bisvm imported from {', '.join(where)} "
         f"(repository HEAD {commit} when the run started).", "",
         "| method | exact | seeds exact | support sizes | mean CPU s | CPU / L1-CV |",
         "|---|---|---|---|---|---|"]
    for method, rs in by.items():
        exact = [r["seed"] for r in rs if sorted(r["support"]) == r["truth"]]
        sizes = [len(r["support"]) for r in rs]
        cpu = np.mean([r["cpu"] for r in rs])
        ratio = f"{cpu / ref:.1f}" if ref else "n/a"
        L.append(f"| {method} | {len(exact)}/{len(rs)} | {', '.join(map(str, exact)) or '-'} "
                 f"| {', '.join(map(str, sizes))} | {cpu:.2f} | {ratio} |")
    if "stability" in by:
        L += ["", "## Stability selection per seed", "",
              "| seed | truth | frequencies of a, b | highest noise frequency | q̂ | "
              "bound q̂²/((2τ−1)p) | unimodal bound |", "|---|---|---|---|---|---|---|"]
        for r in by["stability"]:
            L.append(f"| {r['seed']} | {r['truth']} | "
                     f"{', '.join(f'{f:.2f}' for f in r['truth_frequency'])} | "
                     f"{r['top_noise_frequency']:.2f} | {r['average_selected']:.2f} | "
                     f"{r['bound']:.3f} | {r['bound_unimodal']:.3f} |")
        L += ["", f"Refitted estimator: `{by['stability'][0]['estimator']}`."]
    L += ["", "## Supports per seed", "", "| method | " + " | ".join(map(str, seeds)) + " |",
          "|---|" + "---|" * len(seeds)]
    for method, rs in by.items():
        cells = {r["seed"]: ("**exact**" if sorted(r["support"]) == r["truth"] else
                             str(r["support"][:12]) + ("…" if len(r["support"]) > 12 else ""))
                 for r in rs}
        L.append(f"| {method} | " + " | ".join(cells.get(s, "") for s in seeds) + " |")
    path.write_text("\n".join(L) + "\n")
    path.with_suffix(".json").write_text(json.dumps(
        {"command": command, "seeds": seeds, "records": records}, indent=1))
    print(f"wrote {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1001-1005", help="e.g. 1001-1005 or 0-9 or 3,7")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--name", default="bench_stability", help="results/<name>.md and .json")
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "SEED"), help=argparse.SUPPRESS)
    ap.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.warm:
        warm()
        return
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return
    seeds = _seeds(args.seeds)
    methods = args.methods.split(",")
    command = "python benchmarks/bench_stability.py " + " ".join(argv or sys.argv[1:])
    commit = _commit()
    records = run(methods, seeds)
    report(records, seeds, command.strip(), HERE / "results" / f"{args.name}.md", commit)


if __name__ == "__main__":
    main()
