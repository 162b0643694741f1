"""The README's 5-minute tour is what the commands print.

Runs the tour (``scripts/readme_tour.py``) in a temporary directory, exactly as its
blocks show it, and compares every block of the README with the commands' output, times
and file sizes masked. A stale README fails here with the diff; the fix is
``python scripts/readme_tour.py`` (which rewrites the blocks).
"""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tour_module():
    spec = importlib.util.spec_from_file_location("readme_tour", ROOT / "scripts" /
                                                  "readme_tour.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["readme_tour"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


tour = _tour_module()


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return tour.run_tour(tmp_path_factory.mktemp("tour"))


def test_readme_tour_blocks_are_what_the_commands_print(outputs):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(tour.blocks_in(readme)) == {b.name for b in tour.TOUR}
    diff = tour.differences(readme, outputs)
    assert not diff, ("README.md is stale; run `python scripts/readme_tour.py`:\n" + diff)


def test_the_tour_creates_what_it_uses_and_scores_the_held_out_rows(outputs):
    fit = outputs["fit"][0][1]
    assert "test accuracy" in fit and "held-out rows" in fit and "wrote cancer.bisvm" in fit
    new_rows = outputs["predict"][0][1].splitlines()
    # BilevelSVC has probabilities: one column per class after the decision value
    assert new_rows[0] == "prediction,decision,proba_0,proba_1" and len(new_rows) == 6
    assert "accuracy on the file's target" in outputs["predict"][1][1]
    select = outputs["select"][0][1]
    assert "fewer lower-level solves" in select and "start-up" in select


def test_normalise_masks_only_what_varies():
    a = "BiSVM  4 iterations, 1.12 s\nwrote r.html (4 figures, 276 KB, 8.1 s)\n0,-8.59218880386035"
    b = "BiSVM  4 iterations, 0.98 s\nwrote r.html (4 figures, 281 KB, 7.0 s)\n0,-8.59218880386071"
    assert tour.normalise(a) == tour.normalise(b)
    assert tour.normalise("12 iterations") != tour.normalise("13 iterations")
    assert tour.normalise("accuracy 0.9441") != tour.normalise("accuracy 0.9510")


def test_rewrite_fills_every_block_and_round_trips(outputs):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    emptied = readme
    for name, body in tour.blocks_in(readme).items():
        emptied = emptied.replace(f"<!-- tour:{name} -->\n{body}", f"<!-- tour:{name} -->\n")
    filled = tour.rewrite(emptied, outputs)
    assert not tour.differences(filled, outputs)
    shown = "".join(tour.blocks_in(filled).values())
    assert shown.count("$ python -m bisvm") == sum(
        len(b.commands) for b in tour.TOUR if b.output)
