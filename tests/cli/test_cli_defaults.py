"""The command line takes its defaults and choices from the estimators.

For every subcommand, each option that sets an estimator parameter is listed below with
the estimators and the parameter it sets, and how its default relates to theirs:

* ``SAME``: the parsed default equals every listed estimator's ``get_params()`` default;
* ``UNSET``: the parsed default is None and the command passes nothing, so the
  estimator's own default applies (checked by building the estimator);
* ``DIFFERS``: a deliberate difference, which must be the entry of
  :data:`bisvm.cli.defaults.CLI_DIFFERENCES` (with its reason) for that option;
* ``NOT_A_PARAMETER``: an option whose name is an estimator parameter's but which sets
  something else (the reason is given).

An option of a subcommand that is not listed and shares its name with a parameter of
one of the subcommand's estimators fails the test, so a new option cannot be forgotten.
Choices are compared with the parameters' ``StrOptions``. The last tests check that
every ``--flag`` a message names exists where the message can come from, and that the
exact-L1 mode (``--l1-smoothing 0``) is reachable.
"""

import argparse
import ast
import dataclasses
import functools
import pathlib
import re

import numpy as np
import pandas as pd
import pytest
from cli_run import cli_json, in_process

import bisvm
from bisvm import cli
from bisvm.cli import defaults, models
from bisvm.cli.defaults import (
    CHOICE_EXCLUSIONS,
    CLI_DIFFERENCES,
    estimator_choices,
    estimator_default,
)

SAME, UNSET, DIFFERS, NOT_A_PARAMETER = "same", "unset", "differs", "not a parameter"

SELECTION_ESTIMATORS = ("BilevelSVC", "BilevelSVR", "AutoSVC", "AutoSVR",
                        "StabilitySelection")
BILEVEL = ("BilevelSVC", "BilevelSVR")
AUTO = ("AutoSVC", "AutoSVR")
SELECTIVE_CV = ("SelectiveRegressionCV", "SelectiveLogisticRegressionCV")
MODEL_CLASSES = ("SVC", "SVR", "LinearSVC", "KernelRidge", "KernelLogisticRegression",
                 "ElasticNetSVC", "BilevelSVC", "BilevelSVR", "SelectiveRegression",
                 "SelectiveLogisticRegression")

#: the estimators each subcommand builds
ESTIMATORS = {
    "select": SELECTION_ESTIMATORS,
    "report": SELECTION_ESTIMATORS,
    "fit": MODEL_CLASSES,
    "tune": MODEL_CLASSES + AUTO + SELECTIVE_CV,
    "predict": (),
    "datasets": (),
}

VERBOSE = (NOT_A_PARAMETER, (), "verbose",
           "progress lines on stderr; the estimators' verbose follows where progress goes")
SEED = (DIFFERS, ("*",), "random_state", None)

_SELECTION_COMMON = {
    "criterion": (DIFFERS, ("BilevelSVC",), "criterion", None),
    "cv": (SAME, BILEVEL, "cv", None),
    "l2_penalty": (SAME, BILEVEL, "l2_penalty", None),
    "hinge_smoothing": (DIFFERS, ("BilevelSVC",), "hinge_smoothing", None),
    "l1_smoothing": (DIFFERS, BILEVEL, "l1_smoothing", None),
    "max_iter": (SAME, BILEVEL, "max_iter", None),
    "loss": (SAME, ("BilevelSVR",), "loss", None),
    "epsilon": (SAME, ("BilevelSVR",), "epsilon", None),
    "loss_smoothing": (SAME, ("BilevelSVR",), "loss_smoothing", None),
    "regression_criterion": (SAME, ("BilevelSVR",), "criterion", None),
    "stability": (DIFFERS, ("StabilitySelection",), "n_pairs", None),
    "stability_threshold": (UNSET, ("StabilitySelection",), "threshold", None),
    "n_jobs": (SAME, BILEVEL + ("StabilitySelection",), "n_jobs", None),
    "groups": (UNSET, BILEVEL, "feature_groups", None),
    "seed": SEED,
    "verbose": VERBOSE,
}

_MODEL_ARGS = {dest: (UNSET, MODEL_CLASSES, pname, None)  # the --model estimators
               for dest, pname in {
                   "C": "C", "kernel": "kernel", "gamma": "gamma", "degree": "degree",
                   "coef0": "coef0", "epsilon": "epsilon", "ridge": "ridge",
                   "penalty": "penalty", "loss": "loss", "probability": "probability",
                   "class_weight": "class_weight", "penalty_weight": "penalty_weight",
                   "l2_penalty": "l2_penalty", "hinge_smoothing": "hinge_smoothing",
                   "l1_smoothing": "l1_smoothing", "loss_smoothing": "loss_smoothing",
                   "bilevel_model": "model", "criterion": "criterion", "cv": "cv",
                   "selectivity": "selectivity", "max_iter": "max_iter", "tol": "tol"}.items()}
_MODEL_ARGS.update({
    "model": (NOT_A_PARAMETER, (), "model", "chooses the estimator; --bilevel-model is "
              "BilevelSVC's and BilevelSVR's model"),
    "groups": (UNSET, ("ElasticNetSVC", "BilevelSVC", "BilevelSVR"), "feature_groups", None),
    "seed": SEED,
    "verbose": VERBOSE,
})

#: subcommand -> {argparse dest: (kind, estimators, parameter, reason)}
MAPPING = {
    "select": {
        **_SELECTION_COMMON,
        "model": (SAME, BILEVEL, "model", None),
        "validation_fraction": (SAME, ("BilevelSVC",), "validation_fraction", None),
        "learn_l2": (SAME, ("BilevelSVC",), "learn_l2_penalty", None),
        "free_intercept": (UNSET, BILEVEL, "penalize_intercept", None),
        "approximation": (UNSET, AUTO, "approximation", None),
        "n_components": (UNSET, AUTO, "n_components", None),
    },
    "report": {
        **_SELECTION_COMMON,
        "bilevel_model": (SAME, BILEVEL, "model", None),
        "model": (NOT_A_PARAMETER, (), "model", "the saved model file to report"),
        "free_intercept": (UNSET, BILEVEL, "penalize_intercept", None),
    },
    "fit": dict(_MODEL_ARGS),
    "tune": {
        **_MODEL_ARGS,
        "widths": (UNSET, AUTO, "widths", None),
        "approximation": (UNSET, AUTO, "approximation", None),
        "n_components": (UNSET, AUTO, "n_components", None),
        "selection_rule": (UNSET, SELECTIVE_CV, "selection_rule", None),
        "grid_size": (UNSET, SELECTIVE_CV, "n_mu", None),
        "n_jobs": (SAME, BILEVEL + AUTO, "n_jobs", None),
    },
    "predict": {},
    "datasets": {},
}

#: the parameters of the estimators that are not set through an option of that name
#: (the dest differs, e.g. --learn-l2 -> learn_l2_penalty, or a search's own option)
OPTION_NAMES_NOT_MAPPED = {"tune": {"n_iter": "the random search's draws (bisvm.parallel."
                                              "search), not a constructor parameter"}}


def subparsers():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def minimal_argv(command):
    return {"tune": ["tune", "--method", "grid"], "predict": ["predict", "--data", "x.csv"]
            }.get(command, [command])


def parsed(command):
    return cli.build_parser().parse_args(minimal_argv(command))


def actions(command):
    return {a.dest: a for a in subparsers()[command]._actions
            if a.option_strings and a.dest != "help"}


@functools.cache
def _params(name):
    return tuple(getattr(bisvm, name)().get_params(deep=False).items())


def params_of(name):
    return dict(_params(name))


def estimators_with(entry, command):
    kind, ests, pname, _ = entry
    if ests == ("*",):  # every estimator of the command
        ests = ESTIMATORS[command]
    found = tuple(e for e in ests if pname in params_of(e))
    assert found, (command, pname)
    return found


def test_the_copy_of_the_estimator_defaults_and_choices_is_current():
    current_defaults, current_choices = defaults.snapshot()
    assert current_defaults == defaults.ESTIMATOR_DEFAULTS, (
        "paste bisvm.cli.defaults.format_snapshot() into bisvm/cli/defaults.py")
    assert current_choices == defaults.ESTIMATOR_CHOICES


def test_helpers_read_the_estimators():
    assert estimator_default(bisvm.BilevelSVC, "l2_penalty") == bisvm.BilevelSVC().l2_penalty
    assert estimator_default("BilevelSVR", "l1_smoothing") == bisvm.BilevelSVR().l1_smoothing
    # independent reading of the constraints through scikit-learn's class
    ref = set()
    for c in bisvm.BilevelSVC._parameter_constraints["model"]:
        if type(c).__name__ == "StrOptions":
            ref |= c.options
    assert estimator_choices(bisvm.BilevelSVC, "model") == tuple(sorted(ref))
    assert estimator_choices(bisvm.BilevelSVC, "cv") == ()  # no validation declared
    assert estimator_choices(bisvm.BilevelSVC, "hinge_smoothing") == ()  # numbers only
    with pytest.raises(ValueError, match="no parameter 'nope'"):
        estimator_default(bisvm.BilevelSVC, "nope")


@pytest.mark.parametrize("command", sorted(MAPPING))
def test_every_mapped_option_exists(command):
    acts = actions(command)
    missing = sorted(set(MAPPING[command]) - set(acts))
    assert not missing, f"bisvm {command}: mapped options not in the parser: {missing}"


@pytest.mark.parametrize("command", sorted(MAPPING))
def test_no_option_named_as_a_parameter_is_left_unmapped(command):
    names = set()
    for e in ESTIMATORS[command]:
        names |= set(params_of(e))
    unmapped = [d for d in actions(command) if d in names and d not in MAPPING[command]
                and d not in OPTION_NAMES_NOT_MAPPED.get(command, {})]
    assert not unmapped, f"bisvm {command}: map these options in MAPPING: {unmapped}"


def _check_default(command, dest, entry, value):
    kind, _, pname, _ = entry
    if kind == SAME:
        for e in estimators_with(entry, command):
            assert value == estimator_default(e, pname), (command, dest, e)
    elif kind == UNSET:
        assert value in (None, False), (command, dest, value)
    elif kind == DIFFERS:
        option = "--" + dest.replace("_", "-")
        d = defaults.difference(option, pname)
        assert command in d.commands and value == d.cli_default, (command, dest, value)
        for e in d.estimators:
            if e != "*":
                assert value != estimator_default(e, pname), (
                    f"{option} equals {e}'s default: drop the CLI_DIFFERENCES entry")
        assert len(d.reason.split()) >= 8


@pytest.mark.parametrize("command", sorted(MAPPING))
def test_parsed_defaults_are_the_estimators(command):
    args = parsed(command)
    for dest, entry in MAPPING[command].items():
        _check_default(command, dest, entry, getattr(args, dest))


def test_every_difference_is_an_option_of_its_commands():
    for d in CLI_DIFFERENCES:
        for command in d.commands:
            if d.option.startswith("--model "):
                spec = models.MODELS[d.option.split()[1]]
                assert spec.defaults[d.parameter] == d.cli_default
                assert d.cli_default != estimator_default(spec.cls, d.parameter)
                continue
            dest = d.option[2:].replace("-", "_")
            assert dest in actions(command), (command, d.option)
            assert getattr(parsed(command), dest) == d.cli_default


def test_select_options_dataclass_defaults_are_the_parsers():
    from bisvm.cli.select import SelectOptions

    args = parsed("select")
    for f in dataclasses.fields(SelectOptions):
        assert getattr(args, f.name, f.default) == f.default, f.name


def test_select_builds_the_estimators_with_their_defaults():
    """Unset and task-dependent options resolve to the estimators' own defaults."""
    from bisvm.cli.select import (
        CLASSIFICATION_DEFAULTS,
        LINEAR_DEFAULTS,
        SelectOptions,
        bilevel_estimator,
    )
    from bisvm.cli.select_kernel import kernel_selector
    from bisvm.cli.select_regression import regression_estimator

    opts = SelectOptions.from_args(parsed("select"))
    clf = bilevel_estimator(dataclasses.replace(opts, **CLASSIFICATION_DEFAULTS),
                            bisvm.BilevelSVC, None).get_params(deep=False)
    reg = regression_estimator(opts, None).get_params(deep=False)
    for built, name in ((clf, "BilevelSVC"), (reg, "BilevelSVR")):
        ref = params_of(name)
        differ = {k for k in ref if built[k] != ref[k]}
        assert differ <= {"random_state", "verbose"}, (name, differ)
        assert built["random_state"] == opts.seed
    for model, name in (("svc", "AutoSVC"), ("svr", "AutoSVR")):
        built = kernel_selector(opts, model, linear_defaults=LINEAR_DEFAULTS)
        built = built.get_params(deep=False)
        ref = params_of(name)
        assert {k for k in ref if built[k] != ref[k]} <= {"random_state", "widths"}, name
        assert built["widths"] == "per_feature"


@pytest.mark.parametrize("command", ["fit", "tune"])
def test_model_options_left_out_keep_every_estimators_default(command):
    from bisvm.cli.models import MODELS, build_estimator

    for name, spec in MODELS.items():
        args = cli.build_parser().parse_args([*minimal_argv(command), "--model", name])
        built = build_estimator(args, spec, ["a", "b"]).get_params(deep=False)
        ref = params_of(spec.cls)
        expected = {"verbose", "random_state", *spec.defaults}
        assert {k for k in ref if built[k] != ref[k]} <= expected, name
        for k, v in spec.defaults.items():
            assert built[k] == v == defaults.difference(f"--model {name}", k).cli_default


def _estimator_strings(ests, pname):
    found = set()
    for e in ests:
        if pname in params_of(e):
            found |= set(estimator_choices(e, pname))
    return found


@pytest.mark.parametrize("command", sorted(MAPPING))
def test_choices_are_the_estimators_string_options(command):
    acts = actions(command)
    for dest, entry in MAPPING[command].items():
        kind, _, pname, _ = entry
        if kind == NOT_A_PARAMETER:
            continue
        ests = estimators_with(entry, command)
        strings = _estimator_strings(ests, pname)
        a = acts[dest]
        option = a.option_strings[-1]
        if a.nargs == 0:  # an on/off flag chooses no word
            continue
        if a.choices is not None:
            cli_values = set(a.choices)
            if dest == "approximation":  # "none" is the estimators' None (exact kernel)
                cli_values -= {"none"}
                assert all(None in getattr(bisvm, e)._parameter_constraints[pname]
                           for e in ests)
            excluded = {v for (o, v) in CHOICE_EXCLUSIONS if o == option}
            assert cli_values == strings - excluded, (command, dest)
        else:
            # a parameter that takes numbers and a few words: the option's type takes
            # the words
            for word in strings:
                assert a.type is not None and a.type(word) == word, (command, dest, word)


def test_l2_penalty_auto_is_parsed_and_numbers_still_are():
    args = cli.build_parser().parse_args(["select", "--l2-penalty", "0.5"])
    assert args.l2_penalty == 0.5
    assert cli.build_parser().parse_args(["select", "--l2-penalty", "auto"]).l2_penalty == \
        "auto"
    assert cli.build_parser().parse_args(["select", "--l1-smoothing", "0"]).l1_smoothing == 0


# ------------------------------------------------------------------ every named flag exists

SRC = pathlib.Path(bisvm.__file__).parent
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")
MESSAGE_CALLS = {"warn", "print", "p", "ValueError", "TypeError", "DataError",
                 "ArgumentTypeError", "error", "exit"}

#: CLI module -> the subcommands its messages can come from
MODULE_COMMANDS = {
    "__init__": ("select", "fit", "predict", "tune", "report", "datasets"),
    "argtypes": ("select", "fit", "tune", "report"),
    "output": ("select", "fit", "tune", "report"),
    "defaults": ("select", "fit", "tune", "report"),
    "common": ("select", "fit", "predict", "tune", "report"),
    "select": ("select", "report"), "select_shared": ("select", "report"),
    "select_regression": ("select", "report"), "select_kernel": ("select",),
    "kernel_tune": ("select", "tune"), "learned": ("select", "fit", "tune", "report"),
    "task": ("select", "tune", "report"), "models": ("fit", "tune"), "fit": ("fit",),
    "tune": ("tune",), "predict": ("predict", "report"), "report": ("report",),
    "datasets": ("datasets",),
}
TABLE_COMMANDS = ("select", "fit", "predict", "tune", "report")
#: (flag, subcommand) -> why a reader's message naming the flag is not shown there
READER_FLAG_EXCEPTIONS = {
    ("--sparse", "tune"): "tune reads the rows densely; its reader error is rewritten "
                          "without the flag (common.read_data)",
    ("--sparse", "predict"): "the model's schema decides; the error is rewritten "
                             "(predict.read_for_model)",
    ("--sparse", "report"): "the selection run keeps svmlight rows sparse; a model's "
                            "rows are read by predict.read_for_model, which rewrites it",
}


def _strings(node):
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value)
    return out


def message_flags(path):
    """The ``--flag`` tokens of the messages in ``path``: strings raised, warned or
    printed, strings assigned to a name that such a message uses (a hint built before
    the raise), and module-level ``*_HINT`` constants that other modules' messages use."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    texts, used = [], set()
    for node in ast.walk(tree):
        message = isinstance(node, ast.Raise)
        if isinstance(node, ast.Call):
            f = node.func
            message = (f.attr if isinstance(f, ast.Attribute)
                       else getattr(f, "id", None)) in MESSAGE_CALLS
        if message:
            texts += _strings(node)
            used |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            names = {getattr(t, "id", "") for t in node.targets}
            if names & used or any(n.endswith("_HINT") for n in names):
                texts += _strings(node.value)
    return {m for t in texts for m in FLAG.findall(t)}


def accepted(command):
    return set(subparsers()[command]._option_string_actions)


def test_the_scan_finds_the_flags_of_known_messages():
    data = SRC / "data"
    assert "--categorical" in message_flags(data / "tables.py")
    assert "--drop-column" in message_flags(data / "tables.py")
    assert "--drop-missing" in message_flags(data / "records.py")
    assert "--sparse" in message_flags(data / "svmlight.py")
    assert "--l1-smoothing" in message_flags(SRC / "cli" / "defaults.py")


def test_every_flag_a_message_names_is_an_option():
    top = set(cli.build_parser()._option_string_actions)
    every = set().union(top, *(accepted(c) for c in subparsers()))
    unknown = {}
    for path in sorted(SRC.rglob("*.py")):
        bad = message_flags(path) - every
        if bad:
            unknown[str(path.relative_to(SRC))] = sorted(bad)
    assert not unknown, unknown


def test_the_readers_flags_exist_on_every_command_that_reads_a_table():
    flags = set().union(*(message_flags(p) for p in (SRC / "data").rglob("*.py")))
    assert {"--categorical", "--drop-column", "--drop-missing", "--encoding"} <= flags
    missing = [(f, c) for f in sorted(flags) for c in TABLE_COMMANDS
               if f not in accepted(c) and (f, c) not in READER_FLAG_EXCEPTIONS]
    assert not missing, missing
    for (f, c) in READER_FLAG_EXCEPTIONS:
        assert f in flags and f not in accepted(c)  # not stale


def test_cli_messages_name_flags_of_the_commands_they_come_from():
    modules = {p.stem for p in (SRC / "cli").glob("*.py")}
    assert modules == set(MODULE_COMMANDS), "map the new module in MODULE_COMMANDS"
    wrong = {}
    for stem, commands in MODULE_COMMANDS.items():
        ok = set().union(*(accepted(c) for c in commands))
        bad = message_flags(SRC / "cli" / f"{stem}.py") - ok
        if bad:
            wrong[stem] = sorted(bad)
    assert not wrong, wrong


def test_predict_reads_a_schemaless_model_with_the_column_options(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 40
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] > 0).astype(int)
    model = tmp_path / "m.bisvm"
    est = bisvm.LinearSVC().fit(X, y)
    bisvm.save_model(est, model, feature_names=["a", "b"])  # no column schema
    table = tmp_path / "new.csv"
    pd.DataFrame({"id": [f"row{i}" for i in range(n)], "a": X[:, 0],
                  "b": X[:, 1]}).to_csv(table, index=False)
    code, _, err = in_process(["predict", str(model), "--data", str(table)], capsys)
    assert code == 2 and "--drop-column" in err
    out = cli_json(["predict", str(model), "--data", str(table), "--drop-column", "id",
                    "--json"], capsys)
    assert out["n_rows"] == n
    assert out["predictions"]["prediction"] == est.predict(X).tolist()


def test_predict_refuses_column_options_when_the_model_has_a_schema(tmp_path, capsys):
    path = tmp_path / "t.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame({"a": rng.normal(size=30), "y": np.arange(30) % 2}).to_csv(path,
                                                                            index=False)
    model = tmp_path / "m.bisvm"
    cli_json(["fit", "--data", str(path), "--target", "y", "--model", "linear-svc",
              "--save", str(model), "--json"], capsys)
    code, _, err = in_process(["predict", str(model), "--data", str(path),
                               "--categorical", "a"], capsys)
    assert code == 2 and "--categorical" in err and "schema" in err


def test_tune_rewrites_the_readers_sparse_hint(tmp_path, capsys):
    from bisvm.data import MAX_DENSE_ELEMENTS

    path = tmp_path / "wide.svm"
    d = MAX_DENSE_ELEMENTS // 7 + 1  # seven rows of d features exceed the dense limit
    path.write_text("".join(f"{i % 2} 1:1.0 {d}:2.0\n" for i in range(7)))
    code, _, err = in_process(["tune", "--data", str(path), "--method", "kfold",
                               "--model", "svc"], capsys)
    assert code == 2 and "too large to hold densely" in err
    assert "--sparse" not in err and "bisvm tune reads the rows densely" in err


def test_without_sparse_hint_keeps_other_errors():
    from bisvm.cli.common import without_sparse_hint

    other = ValueError("t.csv: no such file")
    assert without_sparse_hint(other, "predict", "x") is other
    exc = ValueError("f.svm: 6 rows x 9 features is too large to hold densely (limit 5 "
                     "values); read it as a sparse matrix (sparse='auto' or True; CLI: "
                     "--sparse auto)")
    msg = str(without_sparse_hint(exc, "predict", "split the file"))
    assert msg == ("f.svm: 6 rows x 9 features is too large to hold densely (limit 5 "
                   "values); bisvm predict reads the rows densely: split the file")


# ------------------------------------------------------------------ the exact-L1 mode

def test_exact_l1_mode_is_reachable_from_select(capsys):
    out = cli_json(["select", "--dataset", "iris", "--l1-smoothing", "0", "--no-grid",
                    "--max-iter", "3", "--json"], capsys)
    assert out["task"] == "classification"
    assert out["lower_level_solver"] == "exact_l1"
    coef = np.array(list(out["coefficients"].values()))
    # exact zeros, not small Pseudo-Huber values: the selected features are the nonzeros
    assert set(out["selected_features"]) == {k for k, v in out["coefficients"].items()
                                            if v != 0.0}
    assert np.all(np.isfinite(coef))


def test_exact_l1_mode_is_refused_for_regression_naming_the_option(capsys):
    code, _, err = in_process(["select", "--dataset", "iris", "--target",
                               "petal width (cm)", "--l1-smoothing", "0"], capsys)
    assert code == 2 and "--l1-smoothing 0" in err and "classification" in err
    code, _, err = in_process(["fit", "--dataset", "iris", "--target", "petal width (cm)",
                               "--model", "bilevel-svr", "--l1-smoothing", "0"], capsys)
    assert code == 2 and "--l1-smoothing 0" in err


def test_l1_smoothing_auto_is_the_regressions_rule_only(capsys):
    code, _, err = in_process(["select", "--dataset", "iris", "--l1-smoothing", "auto",
                               "--no-grid"], capsys)
    assert code == 2 and "--l1-smoothing auto" in err and "BilevelSVC" in err


# ------------------------------------------------------------------ help texts

@pytest.mark.parametrize("command", sorted(MAPPING))
def test_every_option_says_its_default(command):
    quiet = (argparse._HelpAction, argparse._VersionAction, argparse._StoreTrueAction,
             argparse._StoreConstAction)
    silent = [a.option_strings[-1] for a in subparsers()[command]._actions
              if a.option_strings and not isinstance(a, quiet) and not a.required
              and "default" not in (a.help or "").lower()]
    assert not silent, f"bisvm {command}: say the default of {silent}"
