"""Benchmark pages generated from ``benchmarks/results/`` when the site is built.

Every result file is written by a benchmark script and starts with the command that
produced it. At ``builder-inited`` this extension copies each ``benchmarks/results/*.md``
into ``docs/benchmarks/generated/<name>.md`` (git-ignored) with one page title, the
source path and the command kept visible, and writes one page per group of results, named
by what a user wants to know (how fast is the kernel engine, the linear engine, how well
does bilevel selection select, ...). A result file that has only a JSON record is shown as
that record. Nothing is timed at build time: the pages show stored figures.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# (slug, title, lead sentence, name prefixes); the first group whose prefix matches wins.
GROUPS = [
    ("kernel_engine", "Kernel SVMs: speed of the SMO engine",
     "SVC, SVR, NuSVC, NuSVR and OneClassSVM fitted by bisvm's SMO engine beside "
     "scikit-learn (LIBSVM), oneDAL and libsvm-official, on the same problems.",
     ("bench_kernel_speed", "bench_svc", "bench_kernel_grid")),
    ("kernel_autotune", "Kernel SVMs that tune themselves: AutoSVC and AutoSVR",
     "C and one kernel width per feature learned by hypergradient, beside grid searches.",
     ("bench_kernel_autotune", "autosvc", "kernel_autotune")),
    ("linear_engine", "Linear SVMs, L1 paths and primal solvers",
     "Dual coordinate descent beside LIBLINEAR, the L1 path of the SVM beside refitting, "
     "and the primal methods on the same problems.",
     ("bench_linear", "bench_rz_path", "bench_primal")),
    ("bilevel_selection", "Bilevel feature selection: quality and speed",
     "BilevelSVC's selections judged on test rows never used for tuning, on wide, sparse "
     "and tall data, with parallel folds and stability selection.",
     ("bench_accuracy", "bench_bilevel", "bench_panel", "bench_wide", "bench_multiclass",
      "bench_njobs", "bench_stability", "fit_hashes")),
    ("regression", "Regression: BilevelSVR beside the lasso family",
     "BilevelSVR's held-out error and selected columns beside LassoCV, ElasticNetCV, "
     "sparse-ho, RFECV and selective ridge.",
     ("bench_regression",)),
    ("loo", "Leave-one-out model selection",
     "DiffLOO, ALO and exact leave-one-out along a regularisation path.",
     ("bench_diffloo",)),
    ("other", "Start-up and other measurements",
     "Measurements that belong to no group above.", ("",)),
]

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ISSUE_NOTE = re.compile(r"\s*\((?:issue|issues)\s+#?\d+(?:\s*(?:,|and)\s*#?\d+)*\)", re.I)
PRODUCED_BY = re.compile(r"^<!--\s*produced by:\s*(.*?)\s*-->\s*$", re.I)


def _group(stem):
    for slug, _title, _lead, prefixes in GROUPS:
        if any(stem.startswith(p) for p in prefixes):
            return slug
    return "other"


def _retitle(lines, stem):
    """One ``#`` title, the other headings shifted below it without skipped levels."""
    title, body, fence = None, [], False
    whole = "\n".join(lines)
    fence, found = False, []
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and (m := HEADING.match(line)):
            found.append(len(m.group(1)))
    top = min(found) if found else 1
    # the first heading of the top level is the title; the rest keep their order of
    # depth, renumbered from 2 so that no level is skipped below the title
    rest = list(found)
    if top in rest:
        rest.remove(top)
    shift = {lv: i + 2 for i, lv in enumerate(sorted(set(rest)))}
    fence = False
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence else HEADING.match(line)
        if m is None:
            pm = PRODUCED_BY.match(line)
            if pm is None:
                body.append(line)
            elif whole.count(pm.group(1)) == 1:
                # the command was only in a comment: show it
                body.append(f"Command: `{pm.group(1)}`")
            continue
        text = ISSUE_NOTE.sub("", m.group(2))
        if title is None and len(m.group(1)) == top:
            title = text
            continue
        body.append("#" * min(shift[len(m.group(1))], 6) + " " + text)
    return title or stem.replace("_", " "), body


def _page_from_md(path):
    title, body = _retitle(path.read_text(encoding="utf-8").splitlines(), path.stem)
    head = [f"# {title}", "", f"*Result file:* `benchmarks/results/{path.name}`", ""]
    return title, "\n".join(head + body).rstrip() + "\n"


def _page_from_json(path):
    title = path.stem.replace("_", " ")
    record = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps(record, indent=1, ensure_ascii=False)
    cmd = record.get("command") if isinstance(record, dict) else None
    head = [f"# {title}", "", f"*Result file:* `benchmarks/results/{path.name}`", ""]
    if cmd:
        head += [f"Command: `{cmd}`", ""]
    return title, "\n".join(head + ["```json", text, "```"]) + "\n"


def _write_if_changed(path, text):
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate(results: Path, out: Path):
    """Write the result pages and the group pages; return {group slug: [(stem, title)]}."""
    out.mkdir(parents=True, exist_ok=True)
    md = {p.stem: p for p in sorted(results.glob("*.md"))}
    js = {p.stem: p for p in sorted(results.glob("*.json"))}
    members = {slug: [] for slug, *_ in GROUPS}
    for stem in sorted(set(md) | {s for s in js if not any(s.startswith(m) for m in md)}):
        title, text = (_page_from_md(md[stem]) if stem in md else _page_from_json(js[stem]))
        _write_if_changed(out / f"{stem}.md", text)
        members[_group(stem)].append((stem, title))
    for slug, title, lead, _ in GROUPS:
        lines = [f"# {title}", "", lead, "", "```{toctree}", ":maxdepth: 1", ""]
        # the hand-written reading of the group's results, when there is one, comes first
        if (out.parent / "summaries" / f"{slug}.md").exists():
            lines.append(f"../summaries/{slug}")
        lines += [stem for stem, _t in members[slug]] + ["```", ""]
        _write_if_changed(out / f"group_{slug}.md", "\n".join(lines))
    keep = {f"{s}.md" for s in md} | {f"{s}.md" for g in members.values() for s, _ in g}
    keep |= {f"group_{slug}.md" for slug, *_ in GROUPS}
    for stale in out.glob("*.md"):
        if stale.name not in keep:
            stale.unlink()
    return members


def _on_builder_inited(app):
    docs = Path(app.srcdir)
    generate(docs.parent / "benchmarks" / "results", docs / "benchmarks" / "generated")


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
