"""One source of the command line's defaults and choices: the estimators'.

An option that sets an estimator's parameter takes that parameter's default (what
``get_params()`` of a default instance returns) and, for a text option, the values its
``StrOptions`` constraint in ``_parameter_constraints`` accepts (scikit-learn's
documented way of declaring valid parameters). Building the parser must not import
numpy or scikit-learn (``bisvm --help`` and argument errors answer at once), so the
parser reads them from :data:`ESTIMATOR_DEFAULTS` and :data:`ESTIMATOR_CHOICES`, a copy
that :func:`snapshot` recomputes from the estimator classes; the test suite compares the
two, so the copy cannot drift from the estimators; :func:`format_snapshot` gives the
current copy's source text.

Where the command line deliberately differs from an estimator, the difference is in
:data:`CLI_DIFFERENCES`, with its reason; nowhere else.
"""

from __future__ import annotations

import dataclasses
import pprint

__all__ = ["check_exact_l1", "ESTIMATOR_DEFAULTS", "ESTIMATOR_CHOICES", "CLI_DIFFERENCES",
           "Difference",
           "CHOICE_EXCLUSIONS", "option_choices",
           "default", "choices", "default_text", "estimator_default", "estimator_choices",
           "snapshot", "format_snapshot", "classification_defaults", "difference"]

#: The defaults of the estimator parameters that options set, by class name (the public
#: class of :mod:`bisvm` with that name). Checked against the estimators by the tests.
ESTIMATOR_DEFAULTS = {
    "BilevelSVC": {
        "criterion": "scaled_margin", "cv": 5, "hinge_smoothing": 0.25,
        "l1_smoothing": 0.01, "l2_penalty": "auto", "learn_l2_penalty": False,
        "max_iter": 100, "model": "auto", "n_jobs": None, "penalize_intercept": "auto",
        "validation_fraction": 0.2,
    },
    "BilevelSVR": {
        "criterion": "mse", "cv": 5, "epsilon": 0.1, "l1_smoothing": "auto",
        "l2_penalty": "auto", "loss": "squared", "loss_smoothing": 0.1, "max_iter": 100,
        "model": "auto", "n_jobs": None, "penalize_intercept": "auto",
    },
    "StabilitySelection": {"n_pairs": 50, "threshold": 0.7},
    "AutoSVC": {"approximation": "auto", "n_components": 500, "widths": "shared"},
    "AutoSVR": {"approximation": "auto", "n_components": 500, "widths": "shared"},
    "SelectiveRegressionCV": {"n_mu": 50, "selection_rule": "min"},
    "SelectiveLogisticRegressionCV": {"n_mu": 50, "selection_rule": "min"},
    "KernelRidge": {"fit_intercept": False},
}

#: The values of the text parameters that options choose among: each parameter's
#: ``StrOptions``, sorted. Checked against the estimators by the tests.
ESTIMATOR_CHOICES = {
    "BilevelSVC": {
        "class_weight": ("balanced",),
        "criterion": ("holdout", "holdout_logistic", "holdout_margin",
                      "holdout_scaled_margin", "kfold", "logistic", "margin",
                      "scaled_margin"),
        "model": ("auto", "group", "scalar", "vector"),
    },
    "BilevelSVR": {
        "criterion": ("mae", "mse"),
        "loss": ("epsilon_insensitive", "huber", "squared"),
        "model": ("auto", "group", "scalar", "vector"),
    },
    "AutoSVC": {"approximation": ("auto", "nystroem"), "widths": ("per_feature", "shared")},
    "AutoSVR": {"approximation": ("auto", "nystroem"), "widths": ("per_feature", "shared")},
    "SelectiveRegressionCV": {"selection_rule": ("1se", "min")},
    "SelectiveLogisticRegressionCV": {"selection_rule": ("1se", "min")},
    "SVC": {"kernel": ("laplacian", "linear", "poly", "precomputed", "rbf", "sigmoid"),
            "loss": ("hinge", "squared_hinge")},
    "LinearSVC": {"loss": ("hinge", "squared_hinge"), "penalty": ("l1", "l2")},
}


@dataclasses.dataclass(frozen=True)
class Difference:
    """One place where an option's default is deliberately not the estimator's.

    Attributes
    ----------
    commands : tuple of str
        The subcommands whose option this is.
    option : str
        The option (``"--seed"``), or ``"--model NAME"`` for a value the CLI gives a
        model's constructor without an option.
    estimators : tuple of str
        The estimator classes (names in :mod:`bisvm`) whose parameter it sets.
    parameter : str
        The constructor parameter.
    cli_default : object
        The option's default (``None``: unset, resolved as ``reason`` says).
    reason : str
        Why the command line differs.
    """

    commands: tuple
    option: str
    estimators: tuple
    parameter: str
    cli_default: object
    reason: str


_SELECTION = ("select", "report")

#: Every deliberate difference between an option's default and its estimator's.
CLI_DIFFERENCES = (
    Difference(("select", "report", "fit", "tune"), "--seed", ("*",), "random_state", 0,
               "a command line gives the same output each time it is run; the "
               "estimators' None draws fresh randomness"),
    Difference(_SELECTION, "--criterion", ("BilevelSVC",), "criterion", None,
               "the option serves both tasks: unset, a classification takes "
               "BilevelSVC's default and a regression, whose criterion is "
               "--regression-criterion, refuses the option when it is given"),
    Difference(_SELECTION, "--hinge-smoothing", ("BilevelSVC",), "hinge_smoothing", None,
               "classification only: unset, a classification takes BilevelSVC's "
               "default and a regression refuses the option when it is given"),
    Difference(_SELECTION, "--l1-smoothing", ("BilevelSVC", "BilevelSVR"), "l1_smoothing",
               None, "the two estimators' defaults differ: unset, each task takes its "
               "estimator's default"),
    Difference(_SELECTION, "--stability", ("StabilitySelection",), "n_pairs", 0,
               "stability selection costs two fits per pair, so it runs only when "
               "asked: 0 turns it off"),
    Difference(("fit", "tune"), "--model kernel-ridge", ("KernelRidge",), "fit_intercept",
               True, "a table's columns and target are not centred, and kernel ridge "
               "without an intercept would fit the target's mean through the kernel; "
               "--param fit_intercept=false restores the estimator's default"),
)

#: (option, value) -> why an estimator's accepted value is not among the option's choices
CHOICE_EXCLUSIONS = {
    ("--kernel", "precomputed"): "a table holds features, not a kernel matrix between "
                                 "its rows",
}


def difference(option, parameter=None):
    """The :class:`Difference` of ``option`` (and ``parameter``, when given)."""
    for d in CLI_DIFFERENCES:
        if d.option == option and parameter in (None, d.parameter):
            return d
    raise KeyError(option)


def default(estimator, parameter):
    """The default of ``estimator``'s ``parameter`` from :data:`ESTIMATOR_DEFAULTS`.

    Parameters
    ----------
    estimator : str
        A class name of :mod:`bisvm` (``"BilevelSVC"``).
    parameter : str
        A constructor parameter.

    Returns
    -------
    object
        The value a default instance's ``get_params()`` gives.
    """
    return ESTIMATOR_DEFAULTS[estimator][parameter]


def choices(estimator, parameter):
    """The accepted text values of ``estimator``'s ``parameter`` (sorted tuple), from
    :data:`ESTIMATOR_CHOICES`."""
    return ESTIMATOR_CHOICES[estimator][parameter]


def option_choices(option, *estimator_parameters):
    """The choices of ``option``: the union of the text values of the given
    ``(estimator, parameter)`` pairs, less :data:`CHOICE_EXCLUSIONS`, sorted."""
    found = set()
    for estimator, parameter in estimator_parameters:
        found |= set(choices(estimator, parameter))
    return tuple(sorted(v for v in found if (option, v) not in CHOICE_EXCLUSIONS))


def default_text(estimator, parameter):
    """``"default <value>, <estimator>'s"``: an estimator parameter's default, for help
    texts."""
    return f"default {default(estimator, parameter)}, {estimator}'s"


def classification_defaults():
    """The values that the task-dependent options of ``bisvm select`` (their default is
    None, :data:`CLI_DIFFERENCES`) take on a classification: BilevelSVC's."""
    return {d.parameter: default("BilevelSVC", d.parameter) for d in CLI_DIFFERENCES
            if d.commands == _SELECTION and d.cli_default is None
            and "BilevelSVC" in d.estimators}


def _estimator_class(estimator):
    if isinstance(estimator, str):
        import bisvm

        return getattr(bisvm, estimator)
    return estimator


def estimator_default(estimator, parameter):
    """The default of a constructor parameter, read from the estimator itself.

    Parameters
    ----------
    estimator : type or str
        An estimator class, or its name in :mod:`bisvm`.
    parameter : str
        A constructor parameter.

    Returns
    -------
    object
        ``estimator().get_params(deep=False)[parameter]``.

    Raises
    ------
    ValueError
        When the estimator has no such parameter.
    """
    cls = _estimator_class(estimator)
    params = cls().get_params(deep=False)
    if parameter not in params:
        raise ValueError(f"parameter: {cls.__name__} has no parameter {parameter!r}")
    return params[parameter]


def estimator_choices(estimator, parameter):
    """The text values a parameter's ``StrOptions`` constraints accept, sorted.

    Parameters
    ----------
    estimator : type or str
        An estimator class, or its name in :mod:`bisvm`.
    parameter : str
        A constructor parameter.

    Returns
    -------
    tuple of str
        The union of the options of the parameter's string-option constraints in the
        class's ``_parameter_constraints``; empty when it has none.
    """
    cls = _estimator_class(estimator)
    constraints = getattr(cls, "_parameter_constraints", {}).get(parameter, ())
    if not isinstance(constraints, (list, tuple)):  # "no_validation"
        return ()
    found = set()
    for c in constraints:
        # scikit-learn's StrOptions: an Options constraint over str (read by duck
        # typing: the class lives in a private module)
        if getattr(c, "type", None) is str and isinstance(getattr(c, "options", None), set):
            found |= c.options
    return tuple(sorted(found))


def snapshot():
    """:data:`ESTIMATOR_DEFAULTS` and :data:`ESTIMATOR_CHOICES` recomputed from the
    estimator classes (imports them): ``(defaults, choices)``."""
    defaults = {name: {p: estimator_default(name, p) for p in params}
                for name, params in ESTIMATOR_DEFAULTS.items()}
    options = {name: {p: estimator_choices(name, p) for p in params}
               for name, params in ESTIMATOR_CHOICES.items()}
    return defaults, options


def format_snapshot():
    """The source text of the two tables as :func:`snapshot` computes them now, to paste
    here when an estimator's default or choices change."""
    current_defaults, current_choices = snapshot()
    return ("ESTIMATOR_DEFAULTS = " + pprint.pformat(current_defaults, sort_dicts=True)
            + "\n\nESTIMATOR_CHOICES = " + pprint.pformat(current_choices, sort_dicts=True))


def check_exact_l1(value, estimator):
    """Refuse ``--l1-smoothing 0`` (the exact L1 penalty, BilevelSVC's) and ``auto``
    (BilevelSVR's rule) for an ``estimator`` (class name) that does not take it."""
    if value == "auto" and estimator not in ("BilevelSVR",):
        raise ValueError(f"--l1-smoothing auto is the regression's rule (BilevelSVR); "
                         f"{estimator} takes a number >= 0")
    if value == 0 and estimator == "BilevelSVR":
        raise ValueError("--l1-smoothing 0 (the exact L1 penalty) is available for "
                         "classification only; a regression (BilevelSVR) needs a positive "
                         "--l1-smoothing or auto")
