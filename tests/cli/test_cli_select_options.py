"""The typed selection options of ``bisvm select``/``bisvm report`` and the public name
lists (:mod:`bisvm.names`) that the command line, the estimator and the data loader
share."""

import dataclasses
import re
from pathlib import Path

import pytest

from bisvm import names
from bisvm.cli import build_parser
from bisvm.cli.select import SelectOptions, SelectRun


def _choices(command, option):
    """The ``choices`` of ``option`` in the parser of subcommand ``command``."""
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    action = next(a for a in sub.choices[command]._actions if option in a.option_strings)
    return action.choices


def test_select_options_from_a_parsed_command_line():
    args = build_parser().parse_args([
        "select", "--dataset", "iris", "--model", "scalar", "--criterion", "holdout",
        "--cv", "3", "--l2-penalty", "0.5", "--learn-l2", "--no-grid", "--seed", "7",
        "--test-size", "0.3", "--json"])
    opts = SelectOptions.from_args(args)
    assert (opts.dataset, opts.model, opts.criterion) == ("iris", "scalar", "holdout")
    assert (opts.cv, opts.l2_penalty, opts.seed, opts.test_size) == (3, 0.5, 7, 0.3)
    assert opts.learn_l2 and opts.no_grid and opts.json
    assert not opts.free_intercept and opts.out is None and opts.sparse == "auto"
    # every field is an option of `bisvm select`, and the defaults are the parser's
    defaults = SelectOptions.from_args(build_parser().parse_args(["select"]))
    assert defaults == SelectOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.model = "vector"


def test_select_run_is_frozen_and_carries_what_report_reads():
    fields = {f.name for f in dataclasses.fields(SelectRun)}
    assert {"result", "estimator", "grid", "names", "X_train", "X_test", "y_train",
            "y_test", "binary_target"} <= fields
    assert SelectRun.__dataclass_params__.frozen


def test_report_builds_select_options_without_a_hand_made_namespace():
    import bisvm.cli.report as report
    import bisvm.cli.select as select

    for mod in (report, select):
        text = Path(mod.__file__).read_text(encoding="utf-8")
        assert not re.search(r"Namespace\(", text), mod.__name__
    assert "SelectOptions(" in Path(report.__file__).read_text(encoding="utf-8")
    assert not hasattr(select, "report_options")


def test_criterion_names_are_the_choices_of_select_and_report():
    assert sorted(names.CRITERIA) == sorted(_choices("select", "--criterion"))
    assert sorted(names.CRITERIA) == sorted(_choices("report", "--criterion"))
    for c in names.CRITERIA.values():
        assert c.split in ("holdout", "kfold") and c.description


def test_criterion_names_agree_with_bilevel_svc():
    # BilevelSVC validates and splits by this table (estimators/sparse.py) until it
    # reads names.CRITERIA itself
    from bisvm.selection.staged import CRITERIA as est_criteria

    assert set(est_criteria) == set(names.CRITERIA)
    for name, (split, loss) in est_criteria.items():
        assert (names.CRITERIA[name].split, names.CRITERIA[name].loss) == (split, loss)


def test_dataset_names_are_the_bundled_sets_and_the_dataset_choices():
    from bisvm import data

    assert data.list_datasets() == dict(names.DATASETS)
    assert list(_choices("select", "--dataset")) == list(names.DATASETS)
    for name in names.DATASETS:
        assert data.load_dataset(name).description == names.DATASETS[name]
