"""The README's 5-minute tour, run for real: its command blocks and printed outputs come from here.

Every block of the tour in ``README.md`` sits between ``<!-- tour:NAME -->`` and
``<!-- /tour:NAME -->`` markers. This script runs the tour's commands in a new temporary
directory (the tour creates every file it uses), exactly as a user would type them
(``python`` is this interpreter, ``bisvm`` the package of this checkout), and

* ``python scripts/readme_tour.py`` rewrites those blocks with the commands and what they
  printed (run it after any change that moves a printed figure, and commit the README);
* ``python scripts/readme_tour.py --check`` exits 1 and prints a diff when the README
  differs from what the commands print, in the figures that are deterministic (times,
  file sizes and speed ratios are masked; long decimals compared to 6 significant digits).

``tests/cli/test_cli_tour.py`` runs the check.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


@dataclass(frozen=True)
class Block:
    """One generated README block: commands run in order in the tour directory.

    ``output``: show each command's stdout after it (``$ command`` lines); else the block
    is a ``bash`` block of the commands alone (set-up steps). ``head``: keep at most this
    many lines of each output (then ``...``).
    """

    name: str
    commands: tuple
    output: bool = True
    head: int | None = None


TOUR = (
    Block("data", (
        "python -c \"from sklearn.datasets import load_breast_cancer; "
        "load_breast_cancer(as_frame=True).frame.to_csv('cancer.csv', index=False)\"",
    ), output=False),
    Block("select", ("python -m bisvm select --data cancer.csv --target target",)),
    Block("report", ("python -m bisvm report --data cancer.csv --target target "
                     "--out report.html",)),
    Block("fit", ("python -m bisvm fit --data cancer.csv --target target --model bilevel "
                  "--test-size 0.25 --save cancer.bisvm",)),
    Block("new", (
        "python -c \"import pandas as pd; pd.read_csv('cancer.csv').drop(columns='target')"
        ".sample(5, random_state=1).to_csv('new.csv', index=False)\"",
    ), output=False),
    Block("predict", (
        "python -m bisvm predict cancer.bisvm --data new.csv",
        "python -m bisvm predict cancer.bisvm --data cancer.csv --output predictions.csv",
    )),
)

_MARK = re.compile(r"<!-- tour:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /tour:(?P=name) -->",
                   re.S)


def _env():
    env = dict(os.environ)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # single-threaded, as the benchmarks: the figures must not depend on the core count
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        env[var] = "1"
    return env


def run_tour(workdir):
    """Run every block's commands in ``workdir``; returns ``{name: [(command, stdout)]}``.

    Raises ``RuntimeError`` naming the command that failed.
    """
    env = _env()
    outputs = {}
    for block in TOUR:
        outputs[block.name] = []
        for cmd in block.commands:
            argv = shlex.split(cmd)
            if argv[0] == "python":
                argv[0] = sys.executable
            r = subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True,
                               timeout=600)
            if r.returncode != 0:
                raise RuntimeError(f"tour step failed ({r.returncode}): {cmd}\n{r.stderr}")
            outputs[block.name].append((cmd, r.stdout))
    return outputs


def render(block, results):
    """The Markdown of one block (fenced code) from its commands' outputs."""
    if not block.output:
        return "```bash\n" + "\n".join(cmd for cmd, _ in results) + "\n```\n"
    lines = []
    for cmd, out in results:
        lines.append(f"$ {cmd}")
        text = out.rstrip("\n").splitlines()
        if block.head is not None and len(text) > block.head:
            text = text[:block.head] + ["..."]
        lines.extend(text)
    return "```\n" + "\n".join(lines) + "\n```\n"


def blocks_in(text):
    """``{name: body}`` of the generated blocks of a README text."""
    return {m["name"]: m["body"] for m in _MARK.finditer(text)}


def rewrite(text, outputs):
    """The README text with every tour block replaced by what the commands printed."""
    known = {b.name: b for b in TOUR}
    missing = [b.name for b in TOUR if b.name not in blocks_in(text)]
    if missing:
        raise ValueError(f"README has no <!-- tour:NAME --> block for {', '.join(missing)}")

    def sub(m):
        name = m["name"]
        if name not in known:
            raise ValueError(f"README block tour:{name} is not a step of scripts/readme_tour.py")
        body = render(known[name], outputs[name])
        return f"<!-- tour:{name} -->\n{body}<!-- /tour:{name} -->"

    return _MARK.sub(sub, text)


_TIME = re.compile(r"\b\d+(?:\.\d+)? s\b")
_SIZE = re.compile(r"\b\d+ KB\b")
_RATIO = re.compile(r"\b\d+(?:\.\d+)?x less time\b")
_LONG = re.compile(r"-?\d+\.\d{7,}(?:e[-+]?\d+)?")


def normalise(text):
    """``text`` with the figures that vary from run to run masked (seconds, KB, the time
    ratio) and long decimals (full-precision decision values) cut to 6 significant
    digits; what remains must match exactly."""
    text = _TIME.sub("<seconds> s", text)
    text = _SIZE.sub("<size> KB", text)
    text = _RATIO.sub("<ratio>x less time", text)
    return _LONG.sub(lambda m: f"{float(m.group()):.6g}", text)


def differences(readme_text, outputs):
    """Unified diff (normalised) between the README's blocks and the commands' output;
    empty when they agree."""
    have = blocks_in(readme_text)
    diff = []
    for block in TOUR:
        want = normalise(render(block, outputs[block.name]))
        got = normalise(have.get(block.name, ""))
        if want != got:
            diff.extend(difflib.unified_diff(
                got.splitlines(), want.splitlines(), f"README tour:{block.name}",
                "what the commands print", lineterm=""))
    return "\n".join(diff)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true",
                   help="compare only: exit 1 with a diff when the README is stale")
    p.add_argument("--readme", type=Path, default=README)
    args = p.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="bisvm-tour-") as tmp:
        outputs = run_tour(tmp)
    if args.check:
        diff = differences(text, outputs)
        if diff:
            print(diff)
            print(f"\n{args.readme} is stale: run python scripts/readme_tour.py",
                  file=sys.stderr)
            return 1
        print(f"{args.readme}: the tour's blocks match what the commands print")
        return 0
    new = rewrite(text, outputs)
    args.readme.write_text(new, encoding="utf-8")
    print(f"{args.readme}: {'rewrote' if new != text else 'unchanged,'} "
          f"{len(TOUR)} tour blocks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
