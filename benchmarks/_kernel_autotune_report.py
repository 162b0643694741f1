"""Markdown tables of ``bench_kernel_autotune.py`` from its per-fit records.

Every comparison is paired by split seed: an accuracy difference is the mean over the
seeds where both methods finished of (method - reference), with the standard error of
those differences (``s.d. / sqrt(seeds)``); a CPU ratio is the mean of the per-seed
ratios. Averages over tables are plain means of the per-table figures (the CPU ratio's
geometric mean is given beside it, since ratios multiply).
"""

from __future__ import annotations

import numpy as np
from _kernel_autotune_worker import METHODS


def _by_seed(rows, problem, method):
    return {r["seed"]: r for r in rows if r["problem"] == problem and r["method"] == method
            and "error" not in r}


def paired(rows, problem, method, ref):
    """``(mean diff, s.e., mean CPU ratio, seeds)`` of ``method`` against ``ref``."""
    a, b = _by_seed(rows, problem, method), _by_seed(rows, problem, ref)
    seeds = sorted(set(a) & set(b))
    if not seeds:
        return None
    d = np.array([a[s]["accuracy"] - b[s]["accuracy"] for s in seeds])
    se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else float("nan")
    ratio = float(np.mean([a[s]["cpu"] / max(b[s]["cpu"], 1e-9) for s in seeds]))
    return float(d.mean()), float(se), ratio, len(seeds)


def gp_peer(rows, problem):
    """The per-feature AutoSVC fit that saw the GP's rows: its refit on the GP's
    subsample where there is one, else the fit on all training rows."""
    return "autosvc_pf_gp" if _by_seed(rows, problem, "autosvc_pf_gp") else "autosvc_pf"


def _mean(rows, problem, method, key):
    v = [r[key] for r in _by_seed(rows, problem, method).values()]
    return float(np.mean(v)) if v else None


def _f(x, fmt=".4f"):
    return "-" if x is None else format(x, fmt)


def _diff(p):
    if p is None:
        return "-"
    flag = " **(< -2 s.e.)**" if p[1] == p[1] and p[0] < -2 * p[1] else ""
    return f"{p[0]:+.4f} ± {p[1]:.4f}{flag}"


def _ratio(p):
    return "-" if p is None else f"{p[2]:.3f}"


def _summary(rows, tables, method, refs):
    lines = []
    for ref in refs:
        ps = [paired(rows, t, method, ref) for t in tables]
        ps = [p for p in ps if p is not None]
        if not ps:
            continue
        diffs = np.array([p[0] for p in ps])
        ratios = np.array([p[2] for p in ps])
        below = sum(1 for p in ps if p[1] == p[1] and p[0] < -2 * p[1])
        lines.append(
            f"- {METHODS[method]} against {METHODS[ref]}, {len(ps)} tables: mean accuracy "
            f"difference {diffs.mean():+.4f} (best {diffs.max():+.4f}, worst "
            f"{diffs.min():+.4f}); tables below by more than two paired s.e.: {below}; "
            f"CPU ratio mean {ratios.mean():.3f}, geometric mean "
            f"{np.exp(np.log(ratios).mean()):.3f}, range {ratios.min():.3f}-{ratios.max():.3f}.")
    return lines


def section(title, intro, columns):
    """The opening lines of a markdown section: heading, text, table head."""
    return [f"## {title}", "", intro, "", "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns)]


def search_table(rows, tables):
    """Default AutoSVC against the grid, Halving and Optuna (all on bisvm's SVC)."""
    out = section("Real tables: AutoSVC against the searches on bisvm's SVC",
                  "Accuracy on the held-out rows (mean over seeds); paired difference "
                  "against the grid; CPU ratio AutoSVC / search (< 1: AutoSVC cheaper).",
                  ["table", "rows", "fit rows", "d", "seeds", "AutoSVC", "grid", "Halving",
                   "Optuna", "AutoSVC - grid", "CPU s AutoSVC", "CPU s grid", "/ grid",
                   "/ Halving", "/ Optuna"])
    for t in tables:
        a = _by_seed(rows, t, "autosvc")
        if not a:
            out.append(f"| {t} | no finished fit |" + " |" * 13)
            continue
        r0 = next(iter(a.values()))
        pg, ph, po = (paired(rows, t, "autosvc", m) for m in ("grid", "halving", "optuna"))
        accs = " | ".join(_f(_mean(rows, t, m, "accuracy"))
                          for m in ("autosvc", "grid", "halving", "optuna"))
        out.append(
            f"| {t} | {r0['n_rows']:,} | {r0['n_train']:,} | {r0['d']} | {len(a)} | {accs} | "
            f"{_diff(pg)} | {_f(_mean(rows, t, 'autosvc', 'cpu'), '.2f')} | "
            f"{_f(_mean(rows, t, 'grid', 'cpu'), '.2f')} | {_ratio(pg)} | {_ratio(ph)} | "
            f"{_ratio(po)} |")
    return out + ["", *_summary(rows, tables, "autosvc", ("grid", "halving", "optuna")), ""]


def per_feature_table(rows, tables):
    """Per-feature AutoSVC against the grid and the Gaussian process (on the GP's rows)."""
    out = section("Real tables: per-feature widths",
                  'AutoSVC(widths="per_feature") against the grid and, on tables of at most '
                  "2,000 rows, the anisotropic-RBF Gaussian process classifier. The "
                  "comparison with the GP is paired on rows as well as seeds: where the GP "
                  "was fitted on a subsample, AutoSVC was fitted once more on the same rows "
                  '(column "on GP rows").',
                  ["table", "per-feature acc", "features kept (mean)", "- grid", "CPU / grid",
                   "GP fit rows", "per-feature on GP rows", "GP acc", "- GP (same rows)",
                   "CPU / GP (same rows)"])
    for t in tables:
        pf = _by_seed(rows, t, "autosvc_pf")
        if not pf:
            continue
        kept = np.mean([len(r.get("support", [])) for r in pf.values()])
        mine = gp_peer(rows, t)
        pg, pp = paired(rows, t, "autosvc_pf", "grid"), paired(rows, t, mine, "gp")
        gp = _by_seed(rows, t, "gp")
        gp_rows = f"{next(iter(gp.values()))['n_train']:,}" if gp else "-"
        on_gp = (_f(_mean(rows, t, mine, "accuracy")) if mine == "autosvc_pf_gp"
                 else "(all rows)")
        out.append(f"| {t} | {_f(_mean(rows, t, 'autosvc_pf', 'accuracy'))} | "
                   f"{kept:.1f} of {next(iter(pf.values()))['d']} | {_diff(pg)} | "
                   f"{_ratio(pg)} | {gp_rows} | {on_gp} | "
                   f"{_f(_mean(rows, t, 'gp', 'accuracy'))} | {_diff(pp)} | {_ratio(pp)} |")
    return out + ["", *_summary(rows, tables, "autosvc_pf", ("grid",)),
                  *_summary(rows, [t for t in tables if gp_peer(rows, t) == "autosvc_pf_gp"],
                            "autosvc_pf_gp", ("gp",)),
                  *_summary(rows, [t for t in tables if gp_peer(rows, t) == "autosvc_pf"],
                            "autosvc_pf", ("gp",)), ""]


def engine_table(rows, tables):
    """bisvm's grid and AutoSVC against the same grid on scikit-learn's SVC."""
    out = section("Engine and method apart (tables of at most 5,000 rows)",
                  "The same grid on scikit-learn's SVC (LIBSVM): the engine ratio is bisvm "
                  "grid / scikit-learn grid (same points, same folds); the method ratio is "
                  "AutoSVC / scikit-learn grid.",
                  ["table", "sklearn grid acc", "CPU s sklearn grid",
                   "bisvm grid / sklearn grid", "AutoSVC / sklearn grid",
                   "AutoSVC - sklearn grid"])
    for t in tables:
        if not _by_seed(rows, t, "sk_grid"):
            continue
        pe, pm = paired(rows, t, "grid", "sk_grid"), paired(rows, t, "autosvc", "sk_grid")
        out.append(f"| {t} | {_f(_mean(rows, t, 'sk_grid', 'accuracy'))} | "
                   f"{_f(_mean(rows, t, 'sk_grid', 'cpu'), '.2f')} | {_ratio(pe)} | "
                   f"{_ratio(pm)} | {_diff(pm)} |")
    return out


def all_rows_table(rows, tables, max_train):
    """AutoSVC() on all training rows of the subsampled tables."""
    full = [t for t in tables if _by_seed(rows, t, "autosvc_all")]
    if not full:
        return []
    out = ["", *section(
        f"Tables subsampled to {max_train:,} training rows",
        "On these tables every method above was fitted on the same stratified subsample "
        f"of {max_train:,} training rows (drawn with the split seed; test rows unchanged), "
        "so that the comparisons above are paired on rows. AutoSVC() was also fitted on all "
        "training rows; the last two columns set it against the grid on the subsample "
        "(paired on seeds, not rows: what the cheaper method buys with the rows it can "
        "afford).",
        ["table", "training rows", "seeds", "AutoSVC acc (all rows)", "- AutoSVC on subsample",
         "CPU s (all rows)", "- grid on subsample", "CPU / grid on subsample"])]
    for t in full:
        a = _by_seed(rows, t, "autosvc_all")
        ps, pg = (paired(rows, t, "autosvc_all", m) for m in ("autosvc", "grid"))
        out.append(f"| {t} | {next(iter(a.values()))['n_train']:,} | {len(a)} | "
                   f"{_f(_mean(rows, t, 'autosvc_all', 'accuracy'))} | {_diff(ps)} | "
                   f"{_f(_mean(rows, t, 'autosvc_all', 'cpu'), '.2f')} | {_diff(pg)} | "
                   f"{_ratio(pg)} |")
    return out


def panel_tables(rows, tables, max_train):
    """Every section of the real tables."""
    return [*search_table(rows, tables), *per_feature_table(rows, tables),
            *engine_table(rows, tables), *all_rows_table(rows, tables, max_train)]


def interaction_table(rows):
    """Every method on the interaction problem."""
    rs = [r for r in rows if r["problem"] == "interaction"]
    if not rs:
        return []
    out = section("Interaction problem",
                  "1,000 training and 2,000 test rows of 40 standard-normal features, "
                  "y = 1[x_a x_b + x_c x_d > 0] for four columns drawn from the seed.",
                  ["method", "fit rows", "mean test accuracy", "± s.e.", "- grid (paired)",
                   "informative = top 4", "mean CPU s", "CPU / grid", "seeds"])
    for m in METHODS:
        ok = _by_seed(rows, "interaction", m)
        if not ok:
            continue
        acc = np.array([r["accuracy"] for r in ok.values()])
        se = acc.std(ddof=1) / np.sqrt(acc.size) if acc.size > 1 else float("nan")
        tops = [r["top_k"] for r in ok.values() if "top_k" in r]
        top = f"{sum(tops)}/{len(tops)}" if tops else "n/a"
        p = paired(rows, "interaction", m, "grid") if m != "grid" else None
        out.append(f"| {METHODS[m]} | {next(iter(ok.values()))['n_train']} | "
                   f"{acc.mean():.4f} | {se:.4f} | {_diff(p)} | {top} | "
                   f"{np.mean([r['cpu'] for r in ok.values()]):.1f} | {_ratio(p)} | "
                   f"{len(ok)} |")
    mine = gp_peer(rows, "interaction")
    p = paired(rows, "interaction", mine, "gp")
    if p is not None:
        out += ["", f"{METHODS[mine]} against the Gaussian process, on the same rows and "
                f"seeds: accuracy difference {_diff(p)}, CPU ratio {p[2]:.3f} "
                f"({p[3]} seeds)."]
    return out


def per_fit(rows):
    out = section("Per fit", "CPU and wall seconds of the fit alone; what it found.",
                  ["problem", "method", "seed", "fit rows", "accuracy", "CPU s", "wall s",
                   "found"])
    keys = ("C", "gamma", "n_solves", "support", "top_k", "n_starts", "log_evidence")
    for r in sorted(rows, key=lambda r: (r["problem"], r["method"], r["seed"])):
        if "error" in r:
            out.append(f"| {r['problem']} | {r['method']} | {r['seed']} | error: "
                       f"{r['error'][-100:].strip()!r} | | | | |".replace("\n", " "))
            continue
        found = {k: (round(r[k], 6) if isinstance(r[k], float) else r[k])
                 for k in keys if r.get(k) is not None}
        out.append(f"| {r['problem']} | {r['method']} | {r['seed']} | {r['n_train']} | "
                   f"{r['accuracy']:.4f} | {r['cpu']:.2f} | {r['wall']:.1f} | {found} |")
    return out
