r"""The validation splits of a bilevel fit, derived from the user's ``cv`` as
scikit-learn's cross-validation estimators take it.

``cv`` is an int (stratified shuffled k folds, seeded by ``random_state``), a splitter
object (anything with ``split(X, y, groups)``, such as ``GroupKFold`` or
``TimeSeriesSplit``), or an iterable of (train, test) index pairs. Every split made inside
a fit comes from it (:func:`validation_splits`, :func:`holdout_splits`), so that sample
groups or time order are honoured everywhere: a group is never on both sides of any split.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.model_selection import (
    RepeatedStratifiedKFold,
    StratifiedKFold,
    StratifiedShuffleSplit,
)

__all__ = ["check_indices", "validation_splits", "holdout_splits", "is_splitter", "check_cv_param",
           "training_size"]


def is_splitter(cv):
    """Whether ``cv`` is a splitter object (has ``split``), as opposed to an int or an
    iterable of pairs."""
    return not isinstance(cv, (str, bytes)) and callable(getattr(cv, "split", None))


def check_cv_param(cv, n_samples, *, repeats=1):
    """Validate ``cv`` (and ``cv_repeats``) and materialise an iterable of pairs.

    Returns
    -------
    int, splitter or tuple of (ndarray, ndarray)
        ``cv`` itself, or the validated pairs of an iterable.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, numbers.Integral) or repeats < 1:
        raise ValueError(f"cv_repeats must be a positive integer, got {repeats!r}")
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv must be an integer >= 2, got {cv!r}")
        return cv
    if repeats > 1:
        raise ValueError(
            "cv_repeats > 1 repeats cv's stratified random folds with new seeds; it needs an "
            f"integer cv, not {cv!r} (repeat the splits in the splitter itself, e.g. "
            "RepeatedStratifiedKFold)")
    if is_splitter(cv):
        return cv
    if isinstance(cv, (str, bytes, bool, numbers.Number)) or cv is None or \
            not hasattr(cv, "__iter__"):
        raise ValueError(
            f"cv must be an int >= 2, a scikit-learn splitter or an iterable of (train, test) "
            f"index pairs, got {cv!r}")
    pairs = []
    for k, pair in enumerate(cv):
        try:
            tr, te = pair
        except (TypeError, ValueError):
            raise ValueError(f"cv's split {k} is not a (train, test) pair") from None
        tr, te = _indices(tr, n_samples, k, "train"), _indices(te, n_samples, k, "test")
        if np.intersect1d(tr, te).size:
            raise ValueError(f"cv's split {k} has rows on both its train and test sides")
        pairs.append((tr, te))
    if not pairs:
        raise ValueError("cv is an empty iterable of splits")
    return tuple(pairs)


def check_indices(a, n, *, empty, not_integer, out_of_range, integer_error=ValueError):
    """Check that an index array is non-empty, of an integer dtype and within ``[0, n)``.

    Parameters
    ----------
    a : ndarray
        The indices.
    n : int
        The number of rows (or features) they index.
    empty, not_integer, out_of_range : str
        The message of each failure, in the caller's terms.
    integer_error : type, default=ValueError
        The exception raised for a non-integer dtype.

    Raises
    ------
    ValueError
        For an empty array or an index out of range.
    """
    if a.size == 0:
        raise ValueError(empty)
    if not np.issubdtype(a.dtype, np.integer):
        raise integer_error(not_integer)
    if a.min() < 0 or a.max() >= n:
        raise ValueError(out_of_range)


def _indices(idx, n, k, side):
    a = np.asarray(idx)
    if a.dtype == bool:
        if a.shape != (n,):
            raise ValueError(f"cv's split {k}: a boolean {side} mask must have {n} entries")
        a = np.flatnonzero(a)
    check_indices(a, n, empty=f"cv's split {k} has an empty {side} side",
                  not_integer=f"cv's split {k}: {side} indices must be integers",
                  out_of_range=f"cv's split {k}: {side} index out of range for {n} samples")
    return a.astype(np.intp, copy=False)


def validation_splits(y, split, *, validation_fraction, cv, random_state, repeats=1,
                      groups=None):
    """Training/validation index pairs of a bilevel criterion.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels to stratify on (the original classes, so that every one-vs-rest problem of
        a multiclass fit shares its folds).
    split : {"holdout", "kfold"}
        One split or all of ``cv``'s.
    validation_fraction : float
        Held-out share of ``split="holdout"`` with an integer ``cv`` (one stratified
        shuffled split); with another ``cv``, ``"holdout"`` is its first split.
    cv : int, splitter or sequence of pairs
        As validated by :func:`check_cv_param`.
    random_state : int, RandomState or None
        Seeds the integer ``cv``'s folds and the holdout split.
    repeats : int
        ``cv_repeats``: the k folds of an integer ``cv`` repeated with new shuffles.
    groups : ndarray of shape (n,), optional
        Sample groups, passed to a splitter object.
    """
    n = len(y)
    cv = check_cv_param(cv, n, repeats=repeats)
    X0 = np.zeros((n, 1))
    if not isinstance(cv, numbers.Integral):
        pairs = list(cv.split(X0, y, groups)) if is_splitter(cv) else list(cv)
        if not pairs:
            raise ValueError(f"cv {cv!r} gave no split")
        return pairs[:1] if split == "holdout" else pairs
    classes, counts = np.unique(y, return_counts=True)
    if split == "holdout":
        f = validation_fraction
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not 0 < f < 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {f!r}")
        if counts.min() < 2:
            raise ValueError(
                f"a class has {counts.min()} sample; the stratified validation split "
                "needs at least 2 samples per class"
            )
        n_val = int(np.ceil(f * n))
        if n_val < 2 or n - n_val < 2:
            raise ValueError(f"n_samples={n} is too few for validation_fraction={f}")
        sss = StratifiedShuffleSplit(1, test_size=f, random_state=random_state)
        return list(sss.split(X0, y))
    if n < cv:
        raise ValueError(f"n_samples={n} is fewer than cv={cv} folds")
    # a class rarer than k leaves some validation folds without it; scikit-learn's
    # StratifiedKFold warns about that, and every training fold still sees both classes
    # as long as the class has 2 members
    if repeats > 1:
        rskf = RepeatedStratifiedKFold(n_splits=cv, n_repeats=int(repeats),
                                       random_state=random_state)
        return list(rskf.split(X0, y))
    return list(StratifiedKFold(cv, shuffle=True, random_state=random_state).split(X0, y))


def holdout_splits(y, cv, *, random_state, groups=None):
    """Rows held out from a refinement and the folds of the others, from ``cv``.

    An integer ``cv`` holds out a stratified 1/k of the rows and splits the others into
    k stratified folds. A splitter object holds out the test rows of its *last* split (the
    latest rows of ``TimeSeriesSplit``, whole groups of ``GroupKFold``) and is applied
    again to the other rows (with their groups). An iterable of pairs holds out its last
    pair's test rows and keeps its other pairs without them.

    Returns
    -------
    rest, held : ndarray
        Sorted row indices.
    folds : list of (ndarray, ndarray)
        Training/validation pairs as positions in ``rest``; may be empty.
    """
    n = len(y)
    X0 = np.zeros((n, 1))
    if isinstance(cv, numbers.Integral):
        rest, held = next(StratifiedShuffleSplit(
            1, test_size=1.0 / cv, random_state=random_state).split(X0, y))
        rest = np.sort(rest)
        folds = validation_splits(y[rest], "kfold", validation_fraction=0.2, cv=cv,
                                  random_state=random_state)
        return rest, np.sort(held), folds
    pairs = list(cv.split(X0, y, groups)) if is_splitter(cv) else list(cv)
    held = np.unique(pairs[-1][1])
    mask = np.ones(n, dtype=bool)
    mask[held] = False
    rest = np.flatnonzero(mask)
    if is_splitter(cv):
        g = None if groups is None else np.asarray(groups)[rest]
        try:
            folds = list(cv.split(np.zeros((rest.size, 1)), y[rest], g))
        except ValueError:
            # too few rows or groups left for the splitter: no refinement folds
            folds = []
        return rest, held, folds
    pos = np.full(n, -1)
    pos[rest] = np.arange(rest.size)
    folds = []
    for tr, te in pairs[:-1]:
        tr, te = pos[tr], pos[te]
        tr, te = tr[tr >= 0], te[te >= 0]
        if tr.size and te.size:
            folds.append((tr, te))
    return rest, held, folds


def training_size(y, split, *, validation_fraction, cv, groups=None):
    """The smallest number of training rows over the splits ``cv`` makes (what
    ``model="auto"`` compares with the number of features)."""
    n = len(y)
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if split == "kfold":
            k = cv if cv >= 2 else 5
            return n - -(-n // k)
        f = validation_fraction
        return n - int(np.ceil(f * n)) if isinstance(f, numbers.Real) and 0 < f < 1 else n
    pairs = validation_splits(y, split, validation_fraction=validation_fraction, cv=cv,
                              random_state=None, groups=groups)
    return min(len(tr) for tr, _ in pairs)
