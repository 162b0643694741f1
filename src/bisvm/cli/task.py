"""Whether a target column asks for classification or regression (``--task``).

A column of labels and a column of measurements can hold the same dtype: class codes are
often small integers, and a count or a score on a 0-100 scale is an integer too. The
rule of ``--task auto`` reads only the column: text, categories and booleans are labels;
numbers with a fractional part are measurements; integers (and integer-valued floats,
which is what a CSV reader makes of an integer column with a missing cell) are labels
when they take at most :data:`MAX_CLASSES` distinct values, measurements beyond. The
threshold is the usual one of table tools (at most 20 levels make a factor), and the
reason is printed with the choice, so a wrong guess costs one ``--task`` option.

Standard library at import (``bisvm --help`` must not load numpy).
"""

from __future__ import annotations

#: ``--task`` choices
TASKS = ("auto", "classification", "regression")

#: Most distinct integer values that ``--task auto`` reads as class labels.
MAX_CLASSES = 20

TASK_HELP = (
    "classification or regression; auto (the default): a target of text, categories or "
    "booleans is a class label, numbers with a fractional part are a regression target, "
    f"integers are class labels up to {MAX_CLASSES} distinct values and a regression "
    "target beyond; the output says which was chosen and why")


def add_task_option(g):
    """``--task auto|classification|regression`` on an argparse group."""
    g.add_argument("--task", choices=TASKS, default="auto", help=TASK_HELP)


def detect_task(y, requested="auto", *, target=None):
    """The task of target ``y``: ``(task, reason)``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    requested : {"auto", "classification", "regression"}
        ``--task``; an explicit task is returned as it is, after checking that a
        regression target is numeric.
    target : str, optional
        The column's name, for the messages.

    Returns
    -------
    task : {"classification", "regression"}
    reason : str
        One line saying why (``"--task regression"`` when it was asked for).

    Raises
    ------
    ValueError
        ``requested`` is not a task, or regression was asked for on a column that holds
        no numbers.
    """
    import numpy as np

    if requested not in TASKS:
        raise ValueError(f"--task must be one of {', '.join(TASKS)}, got {requested!r}")
    y = np.asarray(y)
    name = f"the target {target!r}" if target else "the target"
    numeric = y.dtype.kind in "iuf"
    if requested == "regression":
        if not numeric:
            raise ValueError(f"--task regression: {name} is not numeric (dtype "
                             f"{y.dtype}); a regression target must hold numbers")
        return "regression", "--task regression"
    if requested == "classification":
        return "classification", "--task classification"
    if not numeric:
        what = "booleans" if y.dtype.kind == "b" else "labels that are not numbers"
        return "classification", f"auto: {name} holds {what}"
    values = np.unique(y[np.isfinite(y)] if y.dtype.kind == "f" else y)
    if y.dtype.kind == "f" and np.any(values != np.round(values)):
        return "regression", (f"auto: {name} holds numbers with a fractional part "
                              f"({values.size} distinct values)")
    if values.size > MAX_CLASSES:
        return "regression", (f"auto: {name} holds {values.size} distinct integers, more "
                              f"than {MAX_CLASSES}")
    return "classification", (f"auto: {name} holds {values.size} distinct integers, at "
                               f"most {MAX_CLASSES}")
