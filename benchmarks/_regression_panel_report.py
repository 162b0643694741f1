"""The Markdown report of ``bench_regression_panel.py``: per table and method the mean
test R² over the split seeds (± its standard error), the features kept, the CPU seconds
of the fit; the candidate (``bisvm``) against the best baseline of each table with the
paired standard error of their difference over the seeds; the informative columns kept
on the synthetic problems, per seed; and one line per target of the panel.

The paired standard error of the difference is sd(R²_cand − R²_base)/√k over the k seeds
both methods completed (the seeds share the split, so the difference removes the split's
variance)."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import _regression_panel_data as data  # noqa: E402
from _regression_panel_worker import BASELINES, METHODS  # noqa: E402

METHODS_NOTE = (
    "Methods: `LassoCV(cv=5)`, `ElasticNetCV(l1_ratio=[.1, .5, .9, .95, 1], cv=5)`, sparho "
    "0.2.0's weighted Lasso (one L1 weight per feature, `hoag_search` with its defaults on a "
    "70/30 held-out split of the training rows, starting at α_max/10), "
    "`RFECV(LinearSVR(), step=0.1, cv=5)` with y standardised on the training rows, bisvm's "
    "`SelectiveRegressionCV()`, each behind a `StandardScaler` fitted on the training rows "
    "(`with_mean=False` on sparse input); `BilevelSVR()` with its defaults on the raw "
    "columns. A method reported as a timeout used more than the stated CPU seconds in its "
    "worker on the first seed that timed out; its later seeds were not run.")
CANDIDATE = "bisvm"
REFERENCE = "selective-cv"
EPSILON = "bisvm-epsilon"
LABELS = {"lassocv": "LassoCV", "enetcv": "ElasticNetCV", "sparho-wl": "sparho WL",
          "rfecv-svr": "RFECV(LinearSVR)", "selective-cv": "SelectiveRegressionCV",
          "bisvm": "BilevelSVR()", "bisvm-epsilon": "BilevelSVR(loss=\"epsilon_insensitive\")"}


def _by(records):
    out = {}
    for r in records.values():
        out.setdefault((r["table"], r["method"]), []).append(r)
    for v in out.values():
        v.sort(key=lambda r: r["seed"])
    return out


def _ok(recs):
    return [r for r in recs if r["status"] == "ok"]


def _complete(recs):
    """The records of a method on a table when every seed run finished, else None."""
    return recs if recs and all(r["status"] == "ok" for r in recs) else None


def _status_cell(recs):
    bad = [r["status"] for r in recs if r["status"] != "ok"]
    if not bad:
        return None
    if "timeout" in bad:
        t = max(r.get("timeout_s", 0) for r in recs)
        return f"timeout (>{t:.0f} CPU s, {len(bad)}/{len(recs)} seeds)"
    if "unsupported" in bad:
        return "no sparse input"
    if "skipped" in bad:
        return "not available"
    return f"{bad[0]} ({len(bad)}/{len(recs)} seeds)"


def _se(v):
    v = np.asarray(v, float)
    return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")


def _table_rows(tables, methods, by, n_seeds):
    r2, kept, cpu = [], [], []
    for t in tables:
        a, b, c = [t], [t], [t]
        for m in methods:
            recs = by.get((t, m), [])
            ok = _ok(recs)
            bad = _status_cell(recs)
            if not recs:
                a.append("—"), b.append("—"), c.append("—")
                continue
            if not ok:
                a.append(bad), b.append(bad), c.append(bad)
                continue
            suffix = f" ({bad})" if bad else (
                f" [{len(ok)} seeds]" if len(ok) < n_seeds else "")
            v = [r["r2"] for r in ok]
            a.append(f"{np.mean(v):.4f} ± {_se(v):.4f}{suffix}")
            b.append(f"{np.mean([r['kept'] for r in ok]):.1f}")
            c.append(f"{np.median([r['cpu'] for r in ok]):.3g}")
        r2.append(a), kept.append(b), cpu.append(c)
    return r2, kept, cpu


def _md(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return out


def _best_baseline(t, by, exclude=None):
    """The baseline of table ``t`` (other than ``exclude``) with the highest mean R² among
    those whose every seed finished."""
    best = None
    for m in BASELINES:
        if m == exclude:
            continue
        recs = _complete(by.get((t, m), []))
        if recs is None:
            continue
        mean = np.mean([r["r2"] for r in recs])
        if best is None or mean > best[1]:
            best = (m, mean)
    return best


def _paired(t, cand, base, by):
    c = {r["seed"]: r["r2"] for r in _ok(by.get((t, cand), []))}
    b = {r["seed"]: r["r2"] for r in _ok(by.get((t, base), []))}
    seeds = sorted(set(c) & set(b))
    d = np.array([c[s] - b[s] for s in seeds])
    return (float(d.mean()), _se(d), len(seeds)) if seeds else None


def _comparison(tables, by, cand):
    rows, diffs, below = [], [], []
    for t in tables:
        best = _best_baseline(t, by, exclude=cand)
        if best is None:
            rows.append([t, "—", "—", "no complete baseline", "", ""])
            continue
        p = _paired(t, cand, best[0], by)
        if p is None:
            rows.append([t, LABELS[best[0]], f"{best[1]:.4f}", "not run", "", ""])
            continue
        mean, se, k = p
        flag = "below by > 2 SE" if mean < -2 * se else ""
        if flag:
            below.append(t)
        diffs.append((t, mean))
        cm = np.mean([r["r2"] for r in _ok(by[(t, cand)])])
        rows.append([t, LABELS[best[0]], f"{best[1]:.4f}", f"{cm:.4f}",
                     f"{mean:+.4f} ± {se:.4f} ({k} seeds)", flag])
    return rows, diffs, below


def _synthetic_rows(by, methods):
    rows = []
    for t in data.SYNTHETIC:
        for m in methods:
            recs = by.get((t, m), [])
            if not recs:
                continue
            cells = [f"{r['informative_kept']}/{len(r['informative'])} (+{r['false_kept']})"
                     if r["status"] == "ok" else r["status"] for r in recs]
            ok = _ok(recs)
            allk = sum(r["informative_kept"] == len(r["informative"]) for r in ok)
            rows.append([t, LABELS[m], "; ".join(cells), f"{allk}/{len(recs)}"])
    return rows


def _summary(tables, by, cand):
    """One line per target of the panel for the candidate (figures only where it ran)."""
    lines = []
    if not any(_ok(by.get((t, cand), [])) for t in tables):
        return [f"- `{cand}`: no record yet (run with `--methods {cand} --reuse`)."]
    _, diffs, below = _comparison(tables, by, cand)
    if diffs:
        lines.append(f"- Mean test R² minus the best baseline of each table, averaged over "
                     f"{len(diffs)} tables: {np.mean([d for _, d in diffs]):+.4f} "
                     f"(target ≥ −0.01).")
    # the single best baseline over the tables on which every baseline finished
    full = [t for t, _ in diffs if all(_complete(by.get((t, m), [])) for m in BASELINES
                                       if m != cand)]
    overall = {m: float(np.mean([np.mean([r["r2"] for r in by[(t, m)]]) for t in full]))
               for m in BASELINES if m != cand and full}
    if overall:
        m = max(overall, key=overall.get)
        cmean = np.mean([np.mean([r["r2"] for r in _ok(by[(t, cand)])]) for t in full])
        lines.append(f"- Mean test R² over the {len(full)} tables on which every baseline "
                     f"finished: {cand} {cmean:.4f}, best single baseline {LABELS[m]} "
                     f"{overall[m]:.4f} ({cmean - overall[m]:+.4f}).")
    lines.append(f"- Tables where {cand} is below the best baseline by more than two paired "
                 f"SEs: {len(below)} ({', '.join(below) or 'none'}) (target 0).")
    common = [t for t in tables if _ok(by.get((t, cand), [])) and _ok(by.get((t, "lassocv"), []))]
    if common:
        kc = np.mean([np.mean([r["kept"] for r in _ok(by[(t, cand)])]) for t in common])
        kl = np.mean([np.mean([r["kept"] for r in _ok(by[(t, "lassocv")])]) for t in common])
        lines.append(f"- Features kept, mean over {len(common)} tables: {cand} {kc:.1f}, "
                     f"LassoCV {kl:.1f} (target ≤ LassoCV's).")
    syn = [r for t in data.SYNTHETIC for r in by.get((t, cand), [])
           if r["status"] not in ("skipped", "unsupported")]
    if syn:
        allk = sum(r["status"] == "ok" and r["informative_kept"] == len(r["informative"])
                   for r in syn)
        lines.append(f"- All 20 informative kept on {allk}/{len(syn)} synthetic seeds "
                     f"({100 * allk / len(syn):.0f} %; target ≥ 80 %).")
    ratios = []
    for t in tables:
        c, s = _ok(by.get((t, cand), [])), _ok(by.get((t, "sparho-wl"), []))
        if c and s:
            ratios.append((np.median([r["cpu"] for r in c]) /
                           np.median([r["cpu"] for r in s]), t))
    if ratios:
        ratios.sort()
        med = ratios[len(ratios) // 2] if len(ratios) % 2 else ratios[len(ratios) // 2 - 1]
        lines.append(f"- CPU time / sparho's on the median table ({med[1]}, of "
                     f"{len(ratios)} with both): {med[0]:.2f} (target ≤ 1); per table: " +
                     ", ".join(f"{t} {x:.2f}" for x, t in sorted(ratios, key=lambda z: z[1]))
                     + ".")
    dense = _ok(by.get(("dense200x2000", cand), []))
    if dense:
        lines.append(f"- CPU seconds on dense 200 × 2,000 (median of {len(dense)} seeds): "
                     f"{np.median([r['cpu'] for r in dense]):.2f} (target < 2).")
    return lines


def _table_info(tables, by, quick):
    rows = []
    for t in tables:
        recs = [r for (tt, _), v in by.items() if tt == t for r in v if "n_train" in r]
        shape = (f"{recs[0]['n_train']:,} × {recs[0]['d']:,}" if recs else "?")
        if t in data.SYNTHETIC:
            tab = data.synthetic(t, 0, quick)
            rows.append([t, tab.source, shape, f"{tab.X_test.shape[0]:,} fresh rows",
                         tab.note])
        else:
            tab = data.REAL[t]()
            rows.append([t, tab.source, f"{tab.X.shape[0]:,} × {tab.X.shape[1]:,}", shape,
                         tab.note])
    return rows


def write_report(records, out, commands, quick):
    """Write the report of ``records`` to ``out``; ``commands`` are the runs that made
    them, in order (a later run replaces the records it made)."""
    by = _by(records)
    tables = [t for t in data.names() if any((t, m) in by for m in METHODS)]
    methods = [m for m in METHODS if any((t, m) in by for t in tables)]
    seeds = sorted({r["seed"] for r in records.values()})
    lines = [f"# Regression panel{' (quick)' if quick else ''}", "",
             "Commands (in order; each run replaced the records it made):", "",
             *[f"    {c}" for c in commands], "",
             f"Report written {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC. "
             f"Split seeds {seeds}; every fit in its own process, one thread (OMP, OpenBLAS, "
             f"MKL, numba at 1; n_jobs=1); CPU seconds are `time.process_time` around "
             f"`fit` only, after the imports and a warm-up fit (recorded apart in the JSON "
             f"as `import_cpu`, `warmup_cpu`). The machine's 2 cores are shared with other "
             f"jobs, so wall times are noisy; CPU times less so.", "",
             METHODS_NOTE, "", "## Tables", ""]
    lines += _md(["table", "source", "n × d (whole table)", "training rows × d", "note"],
                 _table_info(tables, by, quick))
    head = ["table"] + [LABELS[m] for m in methods]
    r2, kept, cpu = _table_rows(tables, methods, by, len(seeds))
    lines += ["", "## Test R² (mean ± SE over seeds)", ""] + _md(head, r2)
    lines += ["", "## Features kept (mean over seeds)", ""] + _md(head, kept)
    lines += ["", "## CPU seconds of the fit (median over seeds)", ""] + _md(head, cpu)
    rows, _, _ = _comparison(tables, by, CANDIDATE)
    lines += ["", f"## {LABELS[CANDIDATE]} against the best baseline of each table", "",
              "Best baseline: the highest mean R² among the baselines that finished every "
              "seed. Difference: candidate − best, mean ± paired SE over the seeds.", ""]
    lines += _md(["table", "best baseline", "its R²", f"{CANDIDATE} R²", "difference",
                  ""], rows)
    lines += ["", "## Synthetic problems: informative columns kept per seed", "",
              "Cell: informative kept / 20 (+ other columns kept), per seed.", ""]
    lines += _md(["problem", "method", "per seed", "seeds with all 20"],
                 _synthetic_rows(by, methods))
    lines += ["", "## Targets of the panel", ""] + _summary(tables, by, CANDIDATE)
    if any((t, REFERENCE) in by for t in tables):
        lines += ["", f"For reference, the same lines with bisvm's present regressor "
                      f"{LABELS[REFERENCE]} in the candidate's place (against the best "
                      f"of the other baselines):", ""]
        lines += _summary(tables, by, REFERENCE)
    if any((t, EPSILON) in by for t in tables):
        lines += ["", f"The same lines for {LABELS[EPSILON]}, the same selection with the "
                      f"ε-insensitive loss of support vector regression:", ""]
        lines += _summary(tables, by, EPSILON)
    out.write_text("\n".join(lines) + "\n")
    print(f"report: {out}")

