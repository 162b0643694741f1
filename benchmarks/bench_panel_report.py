"""Markdown report of ``bench_panel.py`` from its JSON-lines results."""

from __future__ import annotations

import json
import platform
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

BASELINES = ("l2cv", "l1cv", "rfecv")
UNBALANCED = 0.35  # minority class share below which a table counts as unbalanced
VARIANTS_NOTE = """The committed results were made by
`python benchmarks/bench_panel.py --seeds 5 --fresh` (every method), then, with the
staged BilevelSVC fit (scalar scan, scalar stage on all rows, held-out judgement of the
refinement), `--methods bisvm-scalar,bisvm-vector,bisvm-group` (the defaults of that
time, now the `[prev]` rows),
`--methods bisvm-vector --variant 'min={"refinement_rule": "min"}'` and
`--methods bisvm-scalar,bisvm-vector` with `--variant 'margin={"criterion": "margin",
"refinement_rule": "min"}'`, `'scalar1se={"scalar_rule": "1se"}'`,
`'1se_error={"scalar_rule": "1se_error"}'`, `'balanced={"balanced_criterion":
"auto"}'` and `'rep3={"cv_repeats": 3}'` (each with `--seeds 5`). Then the remedies of
the current defaults, each from the `[prev]` settings (`model="vector"`,
`scalar_rule="min"`, `null_test=False`, `threshold="zero"`) with `--seeds 5`:
`--methods bisvm-vector` with `'null={"null_test": true}'`, `'cal={"threshold":
"calibrated"}'`, `'nullcal={"null_test": true, "threshold": "calibrated"}'`,
`'exact={"l1_smoothing": 0}'` and `'a001={"l2_penalty": 0.001}'`; `--methods
bisvm-scalar,bisvm-vector` with `'nca={"null_test": true, "threshold": "calibrated",
"scalar_rule": "auto"}'`; `--methods bisvm-auto` with `'auto_nonull={"model": "auto",
"threshold": "calibrated", "scalar_rule": "auto"}'`; last, the current defaults,
`--methods bisvm-auto,bisvm-scalar,bisvm-vector,bisvm-group` (`bisvm-auto` is
`BilevelSVC()` as it comes). Then the one-standard-error thresholds and the balanced
null test, from the current defaults, each `--seeds 5 --methods bisvm-auto --variant`:
`'1seb={"threshold": "1se_balanced"}'`, `'1seb_nonull={"threshold": "1se_balanced",
"null_test": false}'`, `'1seb_balnull={"threshold": "1se_balanced", "null_test":
"balanced"}'`, `'cal_balnull={"null_test": "balanced"}'`, `'gated={"threshold":
"1se_gated"}'`, `'gated_nonull={"threshold": "1se_gated", "null_test": false}'` and
`'gated_balnull={"threshold": "1se_gated", "null_test": "balanced"}'`. `[before]` rows
are BilevelSVC's defaults at commit 42fe9bb, before this panel retuned them (criterion `"margin"`,
held-out early stopping only when the weights outnumber the rows of a fold), from a run
of the same script on that code. A `[name]` row is BilevelSVC with those keyword
arguments (the others at their default of the time). `[accnull]` rows are the defaults
of commit 0ed236e, whose null-model test judged the misclassification rate (copied from
that run's records); the current defaults judge the log-loss of the calibrated
out-of-fold outputs (`--seeds 5 --methods bisvm-auto,bisvm-scalar,bisvm-vector,
bisvm-group`, run after the change), and from them `--seeds 5 --methods bisvm-auto
--variant 'zero={"threshold": "zero"}'`. Every row above was fitted with the thesis's
refit on every feature (`refit=True`). The current defaults refit on the selected
features only (`refit="support"`): the `[refitall]` rows are the defaults of commit
0696631 (`refit=True`, copied from that run's records), the plain `bisvm-*` rows a run of
`--seeds 5 --methods bisvm-auto,bisvm-scalar,bisvm-vector,bisvm-group` after the
change."""

LIMITS_NOTE = """What the default (`bisvm-auto`) does and does not reach. Since
`refit="support"` the model predicts from the features it reports and no others (the
thesis's refit, `[refitall]`, keeps every coefficient nonzero: on biopsy two seeds'
models used all nine features at |w| ≈ 0.002 while reporting none, and on the
200 × 2,000 problem the 1,980 unreported coefficients cost 2.1 points of test accuracy).
Counted exactly, it keeps 11.4 features on average against L1-CV's 11.8, with the
refinement's one-standard-error rule preferring the sparsest iterate the held-out rows
cannot tell from the scalar model (12.2 without it). Balanced accuracy on the 7
unbalanced tables averages 65.4 %, against L2-CV's 65.3, L1-CV's 65.2 and RFECV's 65.0
(65.38 against 65.28 in the JSON records); per table it stays 0.3 points under the best
baseline's on average (worst bfi −2.2). (1)
The misclassification null test of the `[accnull]` rows returned the intercept-only
model on Affairs, email and NHEFS (balanced accuracy 50 %, Affairs −4.5); the log-loss
test keeps the learned models, which rank the test rows with AUC 0.68, 0.83 and 0.56
(`benchmarks/bench_panel_auc.py`; now 0.68, 0.82 and 0.56).
(2) On bfi, moving the threshold along Platt's calibration from
P > 1/2 towards P > prior trades accuracy for balanced accuracy: at a quarter of the way
−1.3 accuracy / −0.8 balanced against the best baselines, at half way −2.2 / +1.0, so
no threshold of this model's outputs meets both the 1.5-point accuracy floor and the
balanced target on bfi (out-of-fold outputs of the `[prev]` vector model, 5 seeds).
The one-standard-error rule applied to the threshold (Breiman et al.'s / glmnet's, no
tuned constant; `[1seb*]`, `[gated*]` rows) chooses per fit from the out-of-fold rows
and confirms it: every variant that reaches the balanced target (mean ≥ 0) loses 2.3 to
2.7 points of accuracy on bfi (`[gated_nonull]`: 68.9 / 62.7 against L1-CV's 71.1 /
60.8 and L2-CV's 61.0 balanced), so the default keeps `threshold="calibrated"`. The
out-of-fold rows judge the move significant on bfi; the test rows do not repay it.
On bfi the model's test AUC is 0.693 against LinearSVC's 0.708 and 0.704; at L2-CV's
operating point (about 80 % of the test rows to the majority class) its outputs give 70.1 %
accuracy and 61.2 % balanced against L2-CV's 70.3 and 61.0, but Platt's threshold, fitted
on the out-of-fold outputs, gives 84.9 % of the rows to the majority class (69.9 % and
59.1 %; `benchmarks/bench_panel_auc.py`).
On syn600x40, seeds 3 and 4 draw informative features without a linear signal (logistic
coefficients on all 2,600 rows −0.01 and −0.03 on seed 3, −0.16 on seed 4, against 0.5-1.6
for the other informative features; dropping them costs no accuracy), so a selector
aiming at accuracy keeps every informative feature on at most 3 of 5 seeds (L1-CV: 3
of 5)."""


RAW_NOTE = """Every table is fed as it comes, unscaled (`python benchmarks/bench_panel.py
--raw`). The `bisvm-*` rows fit BilevelSVC on the raw columns: it standardises inside,
with the means and variances of the rows it fits (of each fold's training rows inside
the fit), and reports its coefficients in the original units. Every baseline is
`make_pipeline(StandardScaler(), baseline)`: its scaler is fitted on the training rows of
the split, so no scaler and no tuning ever sees a test row. Such a pipeline computes what
the standardised panel (`bench_panel.md`) computes for the same baseline. The results
were made by `python benchmarks/bench_panel.py --raw --seeds 5 --methods
bisvm-auto,l2cv,l1cv,rfecv --fresh` with bisvm imported from a clean export of one
commit (`git archive` of that commit, on `PYTHONPATH`; the path below names it)."""


def _label(r):
    v = r.get("variant", "default")
    return r["method"] if v == "default" or not r["method"].startswith("bisvm") else \
        f"{r['method']}[{v}]"


def load(path):
    """Records keyed by (problem, label, seed); a later record replaces an earlier one."""
    recs = {}
    for line in Path(path).read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            recs[(r["problem"], _label(r), r["seed"])] = r
    by = defaultdict(dict)
    for (p, lab, s), r in recs.items():
        by[(p, lab)][s] = r
    return by


def _ms(vals, scale=100.0, nd=1):
    v = np.asarray(vals, float) * scale
    return f"{v.mean():.{nd}f} ± {v.std():.{nd}f}" if v.size else "—"


def _problem_rows(by):
    problems = []
    for p, _ in by:
        if p not in problems:
            problems.append(p)
    return problems


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent).stdout.strip()
    except OSError:
        return "?"


def _shapes():
    import bench_panel_data as data

    out = {}
    for name, (loader, synthetic) in data.problems().items():
        try:
            t = loader(0) if synthetic else loader()
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            out[name] = f"| {name} | unavailable: {exc} | | | | |"
            continue
        n, d = t.X.shape
        n_test = len(t.y_test) if synthetic else int(np.ceil(n * data.TEST_FRACTION))
        if t.task == "classification":
            _, c = np.unique(t.y, return_counts=True)
            bal = f"{c.min() / c.sum():.2f}" + (f" ({c.size} classes)" if c.size > 2 else "")
        else:
            bal = "regression"
        n_train = n if synthetic else n - n_test
        grp = f"{len(t.groups)}" if t.groups else "—"
        out[name] = (f"| {name} | {t.source} | {n_train} × {d} | {n_test} | {bal} | {grp} | "
                     f"{t.note} |")
    return out


def _method_table(by, p, labels, task):
    L = []
    if task == "classification":
        L.append("| method | accuracy % | balanced acc. % | features kept | informative "
                 "kept | all informative kept | exact support | CPU s |")
        L.append("|---|---|---|---|---|---|---|---|")
    else:
        L.append("| method | test R² | features kept | informative kept | all informative "
                 "kept | exact support | CPU s |")
        L.append("|---|---|---|---|---|---|---|")
    for lab in labels:
        runs = [r for r in by.get((p, lab), {}).values() if "error" not in r]
        errs = [r for r in by.get((p, lab), {}).values() if "error" in r]
        if not runs:
            if errs:
                L.append(f"| {lab} | error: {errs[0]['error'][:80]} |")
            continue
        kept = f"{np.mean([r['kept'] for r in runs]):.1f} / {runs[0]['d']}"
        if "informative" in runs[0]:
            k = runs[0]["informative"]
            ik = f"{np.mean([r['informative_kept'] for r in runs]):.1f} / {k}"
            allk = f"{sum(r['informative_kept'] == k for r in runs)}/{len(runs)}"
            ex = f"{sum(r['exact_support'] for r in runs)}/{len(runs)}"
        else:
            ik = allk = ex = "—"
        cpu = f"{np.mean([r['cpu'] for r in runs]):.2f}"
        if task == "classification":
            L.append(f"| {lab} | {_ms([r['accuracy'] for r in runs])} | "
                     f"{_ms([r['balanced_accuracy'] for r in runs])} | {kept} | {ik} | "
                     f"{allk} | {ex} | {cpu} |")
        else:
            L.append(f"| {lab} | {_ms([r['r2'] for r in runs], 1.0, 3)} | {kept} | {ik} | "
                     f"{allk} | {ex} | {cpu} |")
    return L


def _mean(by, p, lab, key):
    runs = [r for r in by.get((p, lab), {}).values() if key in r]
    return float(np.mean([r[key] for r in runs])) if runs else np.nan


def summary(by, bisvm_labels, shapes_minority):
    """Per bisvm variant: the panel's targets against the best of L2-CV, L1-CV, RFECV."""
    problems = [p for p in _problem_rows(by) if any(
        "accuracy" in r for r in by.get((p, "l2cv"), {}).values())]
    L = ["| method | mean gap to best baseline (points) | worst gap (table) | tables "
         "within 1.5 points | mean features kept (L1-CV) | unbalanced: balanced acc. − "
         "best baseline's (mean, worst) | synthetic: seeds keeping every informative "
         "feature |", "|---|---|---|---|---|---|---|"]
    for lab in bisvm_labels:
        gaps, kept, kept_l1, bal = {}, [], [], []
        syn_ok = syn_n = 0
        for p in problems:
            a = _mean(by, p, lab, "accuracy")
            if np.isnan(a):
                continue
            best = max(_mean(by, p, b, "accuracy") for b in BASELINES)
            gaps[p] = 100 * (a - best)
            kept.append(_mean(by, p, lab, "kept"))
            kept_l1.append(_mean(by, p, "l1cv", "kept"))
            if shapes_minority.get(p, 1.0) < UNBALANCED:
                bb = max(_mean(by, p, b, "balanced_accuracy") for b in BASELINES)
                bal.append(100 * (_mean(by, p, lab, "balanced_accuracy") - bb))
            for r in by[(p, lab)].values():
                if "informative" in r:
                    syn_n += 1
                    syn_ok += r["informative_kept"] == r["informative"]
        if not gaps:
            continue
        worst = min(gaps, key=gaps.get)
        within = sum(g >= -1.5 for g in gaps.values())
        b = f"{np.mean(bal):+.1f}, {min(bal):+.1f}" if bal else "—"
        s = f"{syn_ok}/{syn_n}" if syn_n else "—"
        L.append(f"| {lab} | {np.mean(list(gaps.values())):+.2f} | {gaps[worst]:+.1f} "
                 f"({worst}) | {within}/{len(gaps)} | {np.mean(kept):.1f} "
                 f"({np.nanmean(kept_l1):.1f}) | {b} | {s} |")
    return L


def gap_table(by, labels):
    """Per table: each bisvm label's mean test accuracy and balanced accuracy minus the
    best baseline's (points), with the best baseline named."""
    problems = [p for p in _problem_rows(by) if any(
        "accuracy" in r for r in by.get((p, "l2cv"), {}).values())]
    L = ["| table | best baseline: accuracy % (method) | " + " | ".join(
        f"{lab}: accuracy %, gap (balanced gap)" for lab in labels) + " |",
        "|---|---|" + "---|" * len(labels)]
    for p in problems:
        accs = {b: _mean(by, p, b, "accuracy") for b in BASELINES}
        best = max(accs, key=lambda b: accs[b])
        bb = max(_mean(by, p, b, "balanced_accuracy") for b in BASELINES)
        cells = []
        for lab in labels:
            a = _mean(by, p, lab, "accuracy")
            ba = _mean(by, p, lab, "balanced_accuracy")
            cells.append("—" if np.isnan(a) else
                         f"{100 * a:.1f}, {100 * (a - accs[best]):+.1f} "
                         f"({100 * (ba - bb):+.1f})")
        L.append(f"| {p} | {100 * accs[best]:.1f} ({best}) | " + " | ".join(cells) + " |")
    return L


def baseline_agreement(by, std_path):
    """How many baseline fits of the raw run (a scaler in a Pipeline) give the same test
    accuracy and kept count as the same (table, seed) of the standardised panel."""
    if not Path(std_path).exists():
        return []
    std = load(std_path)
    same = total = 0
    for (p, lab), runs in by.items():
        if lab not in BASELINES:
            continue
        for seed, r in runs.items():
            q = std.get((p, lab), {}).get(seed)
            if q is None or "accuracy" not in r:
                continue
            total += 1
            same += q.get("accuracy") == r["accuracy"] and q.get("kept") == r["kept"]
    return ["", f"Baseline fits equal to the standardised panel's (`{Path(std_path).name}`, "
                f"same table and seed: test accuracy and features kept): {same} of {total}."]


def multiclass_changes(by, labels):
    """One-vs-rest tables: test rows whose class the calibrated arg-max (``predict``)
    changes from the arg-max of the uncalibrated decision values, per bisvm label."""
    L = []
    for p in _problem_rows(by):
        for lab in labels:
            runs = [r for r in by.get((p, lab), {}).values() if "ovr_changed" in r]
            if not runs:
                continue
            if not L:
                L = ["", "## One-vs-rest: predictions changed by the calibrated arg-max", "",
                     "`predict` is the arg-max of `predict_proba` (each class's Platt slope "
                     "times its decision value); the uncalibrated rule is the arg-max of "
                     "the decision values x·w_k + b_k.", "",
                     "| table | method | test rows changed (all seeds) | accuracy %: "
                     "calibrated arg-max | uncalibrated arg-max |", "|---|---|---|---|---|"]
            ch = sum(r["ovr_changed"] for r in runs)
            n = sum(r["n_test"] for r in runs)
            L.append(f"| {p} | {lab} | {ch} / {n} | "
                     f"{_ms([r['accuracy'] for r in runs])} | "
                     f"{_ms([r['ovr_raw_accuracy'] for r in runs])} |")
    return L


def write_report(json_path, md_path, command, raw=False):
    by = load(json_path)
    shapes = _shapes()
    minority = {}
    import bench_panel_data as data

    for name, (loader, synthetic) in data.problems().items():
        try:
            t = loader(0) if synthetic else loader()
        except Exception:  # noqa: BLE001
            continue
        if t.task == "classification":
            _, c = np.unique(t.y, return_counts=True)
            minority[name] = c.min() / c.sum()
    labels = []
    for _, lab in by:
        if lab not in labels:
            labels.append(lab)
    order = ["bisvm-auto", "bisvm-scalar", "bisvm-vector", "bisvm-group"]
    labels.sort(key=lambda lab: (next((i for i, o in enumerate(order) if lab.startswith(o)),
                                      3), lab))
    seeds = sorted({s for d in by.values() for s in d})
    import sklearn

    import bisvm

    title = ("# Held-out evaluation panel on raw (unscaled) tables" if raw else
             "# Held-out evaluation panel")
    L = [title, "", RAW_NOTE if raw else VARIANTS_NOTE, "",
         f"Last command: `python benchmarks/bench_panel.py {command}` — "
         f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
         + (f"report written at commit {_commit()}; bisvm imported from "
            f"`{Path(bisvm.__file__).parent.parent}`." if raw
            else f"bisvm commit {_commit()}."),
         f"Machine: {platform.machine()}, 2 cores shared with other jobs; every fit single-"
         f"threaded (OMP/OpenBLAS/MKL = 1), CPU seconds of the fit. numpy {np.__version__}, "
         f"scikit-learn {sklearn.__version__}, bisvm {getattr(bisvm, '__version__', '?')}.",
         f"Split seeds: {', '.join(map(str, seeds))}. Real tables: 70/30 stratified split "
         "per seed; synthetic problems: a new draw per seed with 2,000 test rows. Test rows "
         "are never used for tuning; "
         + ("every scaler is fitted on training rows only" if raw
            else "the scaler is fitted on training rows") + ". Accuracy and "
         "balanced accuracy are mean ± sd over seeds, in %.", "",
         "## Problems", "",
         "| problem | source | training rows × features | test rows | minority share | "
         "groups | note |", "|---|---|---|---|---|---|---|"]
    L += [shapes[p] for p in _problem_rows(by) if p in shapes]
    bis = [lab for lab in labels if lab.startswith("bisvm")]
    L += ["", "## Summary: BilevelSVC against the best of L2-CV, L1-CV and RFECV", "",
          "Gap = BilevelSVC's mean test accuracy minus the best mean of the three baselines "
          "on that table (positive: BilevelSVC better). Unbalanced: minority share < "
          f"{UNBALANCED}.", ""]
    L += summary(by, bis, minority)
    if raw:
        L += ["", "## Per table: gap to the best baseline (points)", ""]
        L += gap_table(by, bis)
        L += baseline_agreement(by, Path(json_path).with_name("bench_panel.json"))
    else:
        L += ["", LIMITS_NOTE]
    L += multiclass_changes(by, bis)
    for p in _problem_rows(by):
        task = next(iter(by[(p, next(lab for q, lab in by if q == p))].values()))["task"]
        L += ["", f"## {p}", ""]
        L += _method_table(by, p, [lab for lab in labels if (p, lab) in by], task)
    Path(md_path).write_text("\n".join(L) + "\n")
