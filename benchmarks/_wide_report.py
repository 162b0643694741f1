"""The report of ``bench_wide.py``: means over seeds, the targets for
``BilevelSVC()`` and whether each holds, the ratios bisvm ÷ each peer, the start-up
costs; written as markdown and as JSON (with every run's raw numbers)."""

from __future__ import annotations

import json
import statistics

PEERS = ("sparho-wl1", "sparho-l1log", "logregcv", "svc-grid")
BISVM = ("bisvm", "bisvm-scalar")
# CPU-second limits for BilevelSVC() (vector, defaults); on the leukemia
# shape it must also be no slower than sparho's per-feature weighted L1 in the same run.
TIME_TARGETS = {"leukemia": 2.0, "wide": 2.0, "sparse": 60.0, "tall": 120.0}
ACCURACY_MARGIN = 0.01

SETTINGS = """\
Settings (each tool's documented defaults unless stated):
* `bisvm`: `BilevelSVC(random_state=0)` — vector model, margin criterion over 5 folds,
  defaults; `bisvm-scalar`: the same with `model="scalar"`. Features kept: `support_`.
* `sparho-wl1`: `Problem(SquaredLoss(), WeightedL1(), X, y - mean(y))` (sparho 0.2 has
  `WeightedL1` for the squared loss only, and no intercept), `hoag_search` with the
  settings of sparho's own benchmark (`benchmarks/lasso_libsvm.py`: `CrossVal.kfold(k=5,
  warm_start=True)` of the held-out MSE, `n_iter=30`, inner tolerance 1e-2 → 1e-6
  exponentially), solver `SklearnWeightedLasso(tol=1e-6, max_iter=50000)`, start
  α_j = α_max/10 for every j; prediction `sign(X @ coef + mean(y))`. CSR input is
  converted to CSC first (sparho's `DesignMatrix` is dense or CSC).
* `sparho-l1log`: `Problem(LogisticLoss(), L1(), X, y)` (no intercept),
  `CrossVal.kfold(k=5, base=HeldOutLogistic, warm_start=True)`, the same `hoag_search`
  settings, solver `SklearnLogisticRegression(tol=1e-6, max_iter=10000)` (liblinear),
  start α = α_max/10; prediction `sign(X @ coef)`.
* `logregcv`: `LogisticRegressionCV(Cs=10, l1_ratios=(1.0,), solver="liblinear", cv=5,
  scoring="accuracy", random_state=0)`.
* `svc-grid`: `GridSearchCV(LinearSVC(penalty="l1", dual=False, random_state=0),
  {"C": 10**[-3, -2.5, …, 1]}, cv=5)`.
Features kept = nonzero coefficients (bisvm: `support_`, |w_j| above its threshold).
"""


def _mean(values):
    return statistics.fmean(values) if values else float("nan")


def summarize(runs, problem, tool):
    """Means over the seeds that finished, and the count of stopped / failed seeds."""
    rs = [r for r in runs if r["problem"] == problem and r["tool"] == tool]
    ok = [r for r in rs if r["status"] == "ok"]
    stopped = [r for r in rs if r["status"] == "stopped"]
    s = {"problem": problem, "tool": tool, "seeds": len(rs), "ok": len(ok),
         "stopped": len(stopped), "skipped": sum(r["status"].startswith("skipped") for r in rs),
         "errors": sorted({r["status"] for r in rs
                           if r["status"] not in ("ok", "stopped")
                           and not r["status"].startswith("skipped")})}
    for key in ("fit_cpu_s", "fit_wall_s", "accuracy", "kept", "true_kept", "import_s",
                "warmup_cpu_s"):
        s[key] = _mean([r[key] for r in ok])
    s["accuracy_sd"] = statistics.stdev([r["accuracy"] for r in ok]) if len(ok) > 1 else 0.0
    if stopped:
        s["limit_s"] = stopped[0]["limit_s"]
    infos = [r.get("info", {}) for r in ok]
    s["solver"] = sorted({str(i["solver"]) for i in infos if "solver" in i})
    s["n_informative"] = ok[0]["n_informative"] if ok else None
    return s


def time_cell(s, key="fit_cpu_s"):
    if s["stopped"]:
        note = "" if s["stopped"] + s["skipped"] == s["seeds"] else \
            f", {s['stopped']}/{s['seeds']} seeds"
        return f"> {s['limit_s']:g} s (stopped{note})" if key == "fit_cpu_s" else "—"
    if not s["ok"]:
        return "error" if s["errors"] else "—"
    return f"{s[key]:.2f}"


def acc_cell(s):
    if not s["ok"]:
        return "—"
    return f"{100 * s['accuracy']:.1f} ± {100 * s['accuracy_sd']:.1f}"


def best_peer(summary, problem):
    done = [s for s in summary if s["problem"] == problem and s["tool"] in PEERS
            and s["ok"] == s["seeds"] and s["ok"]]
    return max(done, key=lambda s: s["accuracy"]) if done else None


def target_rows(summary, problems, quick):
    rows = []
    for p in problems:
        s = next((x for x in summary if x["problem"] == p and x["tool"] == "bisvm"), None)
        limit = TIME_TARGETS[p]
        sparho = next((x for x in summary if x["problem"] == p and x["tool"] == "sparho-wl1"),
                      None)
        want = f"CPU < {limit:g} s"
        if p == "leukemia":
            want += " and ≤ sparho-wl1 CPU" + (f" ({sparho['fit_cpu_s']:.2f} s)"
                                                if sparho and sparho["ok"] else "")
        if s is None or not s["seeds"]:
            verdict = "not run"
        elif s["stopped"]:
            verdict = "fails" if s["limit_s"] >= limit else "not measured (stopped)"
        elif not s["ok"]:
            verdict = "not measured (error)"
        else:
            holds = s["fit_cpu_s"] < limit
            if p == "leukemia":
                holds = holds and sparho is not None and sparho["ok"] > 0 \
                    and s["fit_cpu_s"] <= sparho["fit_cpu_s"]
            verdict = "holds" if holds else "fails"
        rows.append((p, "time", want, time_cell(s) if s else "—", verdict))
        best = best_peer(summary, p)
        if best is None or s is None or not s["ok"]:
            verdict, got = "not measured", acc_cell(s) if s else "—"
        else:
            got = acc_cell(s)
            holds = s["accuracy"] >= best["accuracy"] - ACCURACY_MARGIN and s["ok"] == s["seeds"]
            verdict = "holds" if holds else "fails"
        want = "accuracy ≥ best peer − 1 point" + (
            f" ({best['tool']}: {100 * best['accuracy']:.1f})" if best else "")
        rows.append((p, "accuracy", want, got, verdict))
    if quick:
        rows = [(p, k, w, g, v + " (quick sizes: for reference only)") for p, k, w, g, v in rows]
    return rows


def ratio_cell(b, peer):
    if b is None or peer is None:
        return "—"
    if peer["stopped"] and b["ok"] and not b["stopped"]:
        return f"< {b['fit_cpu_s'] / peer['limit_s']:.3g}"
    if not peer["ok"] or peer["stopped"]:
        return "—"
    if b["stopped"]:
        return f"> {b['limit_s'] / peer['fit_cpu_s']:.3g}"
    if not b["ok"]:
        return "—"
    return f"{b['fit_cpu_s'] / peer['fit_cpu_s']:.3g}"


def write_report(out, meta, runs):
    """Write ``out.md`` and ``out.json``; returns the markdown."""
    problems = list(meta["problems"])
    tools = list(meta["tools"])
    summary = [summarize(runs, p, t) for p in problems for t in tools]
    title = "# bisvm `BilevelSVC` on wide, sparse and tall data"
    L = [title + (" — quick sizes" if meta["quick"] else ""),
         "", f"`{meta['command']}` — {meta['date_utc']}, bisvm commit {meta['bisvm_commit']}.",
         f"Machine: {meta['machine']}. Every fit in its own process with "
         + ", ".join(f"{k}=1" for k in meta["thread_env"]) + " (threadpoolctl reports "
         "one thread for every pool; sparho's Rust core has no thread pool). Versions: "
         + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".",
         f"Seeds: {meta['seeds']} (data and test rows differ per seed); time limit per fit "
         f"{meta['timeout_s']:g} s (a tool stopped on one seed is not run on that problem's "
         "later seeds). Times are the fit alone (after imports and a warm-up fit "
         "on a tiny problem of the same kind; those are in the start-up table), mean over "
         "seeds; accuracy is mean ± sd over seeds, in %, on test rows never used in tuning.",
         "", "Problems (the shape is the training matrix):", ""]
    for p, info in meta["problems"].items():
        nnz = [v.get("nnz") for k, v in meta["data"].items() if k.startswith(p + "/")]
        extra = f", nnz {nnz[0]:,} (seed 0)" if nnz and nnz[0] else ""
        if info.get("bayes_accuracy") is not None:
            extra += (f"; Bayes accuracy {100 * info['bayes_accuracy']:.1f} % (exact, "
                      "`_wide_data.bayes_accuracy`: no classifier can do better on average)")
        L.append(f"* `{p}`: {info['label']}, {info['k']} informative columns, "
                 f"{info['n_test']:,} test rows{extra}.")
    L += ["", SETTINGS, "## Results", "",
          "| problem | tool | fit CPU s | fit wall s | test accuracy % | features kept | "
          "informative kept | lower-level method |", "|---|---|---|---|---|---|---|---|"]
    for s in summary:
        kept = f"{s['kept']:.1f}" if s["ok"] else "—"
        true = f"{s['true_kept']:.1f} / {s['n_informative']}" if s["ok"] else "—"
        L.append(f"| {s['problem']} | {s['tool']} | {time_cell(s)} | "
                 f"{time_cell(s, 'fit_wall_s')} | {acc_cell(s)} | {kept} | {true} | "
                 f"{', '.join(s['solver']) or ''} |")
    errors = [s for s in summary if s["errors"]]
    if errors:
        L += [""] + [f"* {s['problem']} / {s['tool']}: {'; '.join(s['errors'])}"
                     for s in errors]
    L += ["", "## Targets for `BilevelSVC()` (vector, defaults)", "",
          "| problem | what | target | measured | verdict |", "|---|---|---|---|---|"]
    L += [f"| {p} | {k} | {w} | {g} | {v} |" for p, k, w, g, v in
          target_rows(summary, problems, meta["quick"])]
    peers = [t for t in tools if t in PEERS]
    if peers:
        L += ["", "## CPU-time ratios bisvm ÷ peer (below 1: bisvm faster)", "",
              "| problem | bisvm row | " + " | ".join(peers) + " |",
              "|---|---|" + "---|" * len(peers)]
    for p in problems if peers else ():
        for b in (t for t in tools if t in BISVM):
            bs = next(s for s in summary if s["problem"] == p and s["tool"] == b)
            cells = [ratio_cell(bs, next(s for s in summary if s["problem"] == p
                                         and s["tool"] == t)) for t in peers]
            L.append(f"| {p} | {b} | " + " | ".join(cells) + " |")
    L += ["", "## Start-up (seconds: imports, wall + warm-up fit, CPU)", "",
          "| tool | " + " | ".join(problems) + " |", "|---|" + "---|" * len(problems)]
    for t in tools:
        cells = []
        for p in problems:
            s = next(x for x in summary if x["problem"] == p and x["tool"] == t)
            cells.append(f"{s['import_s']:.1f} + {s['warmup_cpu_s']:.2f}" if s["ok"] else "—")
        L.append(f"| {t} | " + " | ".join(cells) + " |")
    L += ["", "Run time of the benchmark (wall, all tools and seeds, data generation and "
          "start-up included): " + ", ".join(f"{p} {v / 60:.1f} min" for p, v in
                                              meta["seconds_per_problem"].items())
          + f"; total {meta['total_seconds'] / 60:.1f} min.", ""]
    text = "\n".join(L)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(text)
    out.with_suffix(".json").write_text(json.dumps(
        {"meta": meta, "summary": summary, "runs": runs}, indent=1, default=str))
    return text
