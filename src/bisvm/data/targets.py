"""Seeded train/test splits and two-class targets mapped to ±1."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .records import DataError, py_scalar, short_list


def train_test_split_seeded(X, y, test_size=0.2, random_state=0, stratify=True):
    """Split rows into a training and a test part, reproducibly.

    A thin wrapper of :func:`sklearn.model_selection.train_test_split` that stratifies
    classification targets by default and states in its errors what to change.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix, shape (n, d)
        A sparse matrix is split by row indexing (sklearn's ``_safe_indexing``): a CSR
        ``X`` gives CSR parts, never a dense copy.
    y : array-like, shape (n,)
        Target values.
    test_size : float in (0, 1) or int in [1, n-1]
        Share (float) or number (int) of rows in the test part.
    random_state : int
        The same seed gives the same split.
    stratify : bool
        Keep the class proportions in both parts when ``y`` is a classification target
        (binary or multiclass); ignored for a continuous target.

    Returns
    -------
    X_train, X_test : ndarray or scipy.sparse matrix
        The rows of the two parts.
    y_train, y_test : ndarray
        Their targets.

    Examples
    --------
    >>> from bisvm import load_dataset, train_test_split_seeded
    >>> ds = load_dataset("iris")
    >>> X_tr, X_te, y_tr, y_te = train_test_split_seeded(ds.X, ds.y, test_size=0.2)
    >>> X_tr.shape, X_te.shape
    ((120, 4), (30, 4))
    """
    from sklearn.model_selection import train_test_split
    from sklearn.utils.multiclass import type_of_target

    y_arr = np.asarray(y)
    n = y_arr.shape[0]
    if isinstance(test_size, bool) or not isinstance(
        test_size, int | float | np.integer | np.floating
    ):
        raise ValueError(f"test_size must be a float in (0, 1) or an int, got {test_size!r}")
    if isinstance(test_size, int | np.integer):
        if not 1 <= test_size <= n - 1:
            raise ValueError(f"test_size={test_size} must be between 1 and n-1={n - 1}")
    elif not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size={test_size} must be in (0, 1)")
    strat = None
    if stratify:
        kind = type_of_target(y_arr)
        if kind in ("binary", "multiclass"):
            labels, counts = np.unique(y_arr, return_counts=True)
            if counts.min() < 2:
                lab = labels[int(np.argmin(counts))]
                raise DataError(
                    f"class {py_scalar(lab)!r} has only {counts.min()} sample, too few for a "
                    "stratified split; pass stratify=False or add samples",
                    column="target",
                )
            strat = y_arr
    try:
        return train_test_split(
            X, y_arr, test_size=test_size, random_state=random_state, stratify=strat
        )
    except ValueError as exc:
        raise DataError(f"cannot split: {exc}") from None


@dataclass(frozen=True, eq=False)
class BinaryTarget:
    """A two-class target mapped to ±1, with the way back.

    Attributes
    ----------
    y : ndarray of float64, values in {-1.0, +1.0}
    negative, positive : object
        The original labels mapped to -1 and +1.
    """

    y: np.ndarray
    negative: object
    positive: object

    @property
    def classes(self):
        """``[negative, positive]`` as an array (the order of sklearn's ``classes_``)."""
        return np.asarray([self.negative, self.positive])

    def inverse(self, values):
        """Map ±1 predictions (or any decision values: sign > 0 → positive) to labels."""
        v = np.asarray(values, dtype=np.float64)
        return np.where(v > 0, self.classes[1], self.classes[0])


def binary_target(y, positive=None, *, one_vs_rest=False):
    """Map a two-label target to ±1.

    Parameters
    ----------
    y : array-like, shape (n,)
        Strings, bools, {0, 1}, {-1, 1}, or any two distinct labels.
    positive : label, optional
        The label that becomes +1. By default the larger of the two labels in sorted order
        (1 for {0, 1} and {-1, 1}, True for booleans; the order of sklearn's ``classes_``).
    one_vs_rest : bool
        With ``positive`` given, allow more than two labels: ``positive`` → +1, every other
        label → -1 (e.g. Wine class 0 against the rest).

    Returns
    -------
    BinaryTarget
        ``y`` as floats in {-1.0, +1.0}, with the labels ``negative`` and ``positive``
        and :meth:`BinaryTarget.inverse` to map predictions back.

    Raises
    ------
    ValueError
        One class, more than two (unless ``one_vs_rest``), a ``positive`` label that does
        not occur, missing labels.

    Examples
    --------
    >>> from bisvm import binary_target
    >>> t = binary_target(["no", "yes", "yes"])
    >>> t.y
    array([-1.,  1.,  1.])
    >>> t.inverse([0.3, -2.0]).tolist()
    ['yes', 'no']
    """
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.ravel() if y.ndim == 2 and 1 in y.shape else None
        if y is None:
            raise ValueError("target must be 1-D")
    if y.size == 0:
        raise ValueError("target is empty")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(
            f"target has a missing or infinite value at row {int(np.argmin(np.isfinite(y)))}"
        )
    if y.dtype.kind == "O":
        if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in y):
            raise ValueError("target has a missing value")
        try:
            labels = np.unique(y)
        except TypeError:
            y = y.astype(str)
            labels = np.unique(y)
    else:
        labels = np.unique(y)
    if labels.size < 2:
        raise ValueError(f"target has one class ({labels[0]!r}): need two to train a classifier")
    if positive is None:
        if labels.size > 2:
            raise ValueError(
                f"target has {labels.size} classes ({short_list(labels.tolist(), 6)}), "
                "a binary model needs two; choose one positive class (one-vs-rest)"
            )
        negative, positive = labels[0], labels[1]
    else:
        matches = [lab for lab in labels.tolist() if lab == positive or str(lab) == str(positive)]
        if not matches:
            raise ValueError(
                f"positive label {positive!r} is not in the target (labels: "
                f"{short_list(labels.tolist(), 6)})"
            )
        positive = matches[0]
        others = [lab for lab in labels.tolist() if lab != positive]
        if len(others) > 1 and not one_vs_rest:
            raise ValueError(
                f"target has {labels.size} classes; pass one_vs_rest=True to set {positive!r} "
                "against the rest"
            )
        negative = others[0] if len(others) == 1 else "rest"
    out = np.where(y == positive, 1.0, -1.0)
    return BinaryTarget(y=out, negative=py_scalar(negative), positive=py_scalar(positive))
