"""
How fast is the kernel SVM, against what?
=========================================

bisvm's :class:`~bisvm.SVC` trains the same dual problem as LIBSVM (and so as
scikit-learn's :class:`~sklearn.svm.SVC`): SMO with second-order working-set selection
(Fan, Chen and Lin, 2005, "Working set selection using second order information for
training support vector machines") on small problems, and on large dense ones a
working-set decomposition whose kernel rows are computed in blocks by matrix products.
Both reach the same support set and dual objective as LIBSVM up to the stopping
tolerance.

This example does not time anything: building the documentation on a shared machine
would give meaningless figures. It reads the result files that the benchmark scripts of
``benchmarks/`` wrote, where each fit ran in its own process with a fixed number of
threads beside the reference library in the same run, and plots their ratios. The
command that produced each file is printed with its figure.
"""

# %%
# Locate the stored results
# -------------------------
import json
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np


def results_dir():
    """The repository's ``benchmarks/results`` directory, searched upwards."""
    start = Path(globals().get("__file__", Path.cwd() / "x")).resolve().parent
    for folder in [start, *start.parents, Path.cwd(), *Path.cwd().resolve().parents]:
        candidate = folder / "benchmarks" / "results"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("benchmarks/results not found above this example")


def seconds(text):
    """``"648 ms"`` or ``"2.85 s"`` as seconds; None for a missing entry."""
    match = re.fullmatch(r"\s*([\d.,]+)\s*(ms|s)\s*", text)
    if match is None:
        return None
    value = float(match.group(1).replace(",", ""))
    return value / 1000.0 if match.group(2) == "ms" else value


def markdown_table(lines, heading):
    """Rows (dicts keyed by the header) of the first table after ``heading``."""
    start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    rows, header = [], None
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            if header is not None:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not set("".join(cells)) <= set("-: "):
            rows.append(dict(zip(header, cells)))
    return rows


results = results_dir()

# %%
# One thread: CPU time of one fit against scikit-learn
# ----------------------------------------------------
# ``bench_kernel_speed.md``: the same C, kernel, width and tolerance for every tool, each
# fit in its own process after a warm-up fit, one thread. A ratio below 1 means bisvm
# took less CPU time.
lines = (results / "bench_kernel_speed.md").read_text(encoding="utf-8").splitlines()
command = next(
    (m.group(1) for line in lines if (m := re.search(r"Produced by `([^`]+)`", line))),
    "python benchmarks/bench_kernel_speed.py",
)
rows = markdown_table(lines, "## One thread, CPU time")
workloads, ratios = [], []
for row in rows:
    ours, theirs = seconds(row["bisvm"]), seconds(row["scikit-learn"])
    if ours and theirs:
        workloads.append(row["workload"])
        ratios.append(ours / theirs)
        print(f"{row['workload']:<42s} bisvm {row['bisvm']:>8s}  "
              f"scikit-learn {row['scikit-learn']:>8s}  ratio {ours / theirs:.2f}")
print("command:", command)
print(next((line for line in lines if line.startswith("Machine:")), ""))

fig, ax = plt.subplots(figsize=(8, 0.5 * len(workloads) + 1.5))
ypos = np.arange(len(workloads))[::-1]
ax.barh(ypos, ratios, color="tab:blue")
ax.axvline(1.0, color="k", ls="--", lw=0.8)
ax.set_yticks(ypos, workloads)
ax.set_xlabel("CPU time, bisvm / scikit-learn (one thread)")
ax.set_title(command, fontsize=9, family="monospace")
fig.tight_layout()

# %%
# A grid search: 36 points of (C, gamma), five folds each
# -------------------------------------------------------
# ``bench_kernel_grid.json``: the whole grid fitted by bisvm's and by scikit-learn's SVC,
# one thread each, on six tables; the ratio of their summed CPU times, and at every grid
# point the ratio of that point's time.
grid = json.loads((results / "bench_kernel_grid.json").read_text(encoding="utf-8"))
print("command:", grid["command"])
names = list(grid["summary"])
fig, ax = plt.subplots(figsize=(8, 4))
for k, name in enumerate(names):
    summary = grid["summary"][name]
    points = [p["ratio"] for p in summary.get("points", [])]
    ax.scatter(np.full(len(points), k) + np.linspace(-0.2, 0.2, len(points)), points,
               s=8, alpha=0.5, color="tab:gray")
    ax.scatter([k], [summary["ratio"]], marker="D", color="tab:red", zorder=3)
    rows_, cols_ = summary["shape"]
    print(f"{name:<8s} {rows_} x {cols_}: whole grid ratio {summary['ratio']:.2f}")
ax.axhline(1.0, color="k", ls="--", lw=0.8)
ax.set_xticks(range(len(names)), names)
ax.set_ylabel("CPU time, bisvm / scikit-learn")
ax.set_title(grid["command"], fontsize=9, family="monospace")
ax.scatter([], [], marker="D", color="tab:red", label="whole grid")
ax.scatter([], [], s=8, color="tab:gray", label="one grid point")
ax.legend(loc="upper right")
fig.tight_layout()
