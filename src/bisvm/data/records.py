"""The dataset record and its schema, the size limits, and the message helpers the readers share."""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

# A dense matrix larger than this (elements) is refused rather than allocated.
MAX_DENSE_ELEMENTS = 100_000_000


# An svmlight file declaring more features than this is refused: a one-line file can
# declare feature index 10**9, and scaling, coefficients and penalty weights all hold one
# float per feature (2**24 hashed features, the largest common setting, fit under it).
MAX_FEATURES = 20_000_000


# read_table(..., sparse="auto") keeps an svmlight matrix in CSR form when it has more
# than this many entries and at most this share of them stored.
SPARSE_AUTO_MIN_ENTRIES = 1_000_000


SPARSE_AUTO_MAX_DENSITY = 0.5


MISSING_HINT = "pass drop_missing=True (CLI: --drop-missing) to drop such rows"


class DataError(ValueError):
    """Bad input data, described in one line naming the file, column and row.

    Every check that can be phrased in the user's terms is made when the data is read, so
    that the message points at the cell to fix rather than at an array deep inside a
    solver. It is a :class:`ValueError`, so ``except ValueError`` catches it too.

    Parameters
    ----------
    message : str
        The one-line description.
    path : str, optional
        The file (or bundled dataset name) the data came from.
    column : str, optional
        The column at fault.
    row : int, optional
        The data row at fault, counted from 1 for the first data row.

    Attributes
    ----------
    path : str or None
        As given.
    column : str or None
        As given.
    row : int or None
        As given.

    Examples
    --------
    >>> from bisvm import DataError, load_dataset
    >>> try:
    ...     load_dataset("no-such-set")
    ... except DataError as err:
    ...     print(err.path)
    no-such-set
    """

    def __init__(self, message, *, path=None, column=None, row=None):
        super().__init__(message)
        self.path = path
        self.column = column
        self.row = row


@dataclass(frozen=True, eq=False)
class Dataset:
    """A feature matrix with its target and what is known about its columns.

    The readers (:func:`read_table`, :func:`load_dataset`) build it; it is frozen, so
    that what was read is what the estimators and the model file see.

    Parameters
    ----------
    X : ndarray of float64, or scipy.sparse.csr_matrix, shape (n_samples, n_features)
        Dense for CSV, Parquet and bundled data; a CSR matrix (float64, finite stored
        values, no explicit zeros) for svmlight files read with ``sparse=True`` or, by
        default, when the file is large and sparse (see :func:`read_table`). Test with
        ``scipy.sparse.issparse(ds.X)``.
    y : ndarray, shape (n_samples,), or None
        Target values as read (ints, floats, bools or strings); ``None`` when the table
        was read without a target.
    feature_names : list of str, or NumberedNames
        Column names of ``X`` (after one-hot encoding); ``x0 ... x{d-1}`` made on demand
        (:class:`NumberedNames`) for svmlight files.
    target_names : list or None
        The distinct target values (class labels) for bundled sets and for targets
        that look like classes; ``None`` for a continuous target.
    groups : dict of str to list of int, or None
        Feature groups (Breast Cancer: mean / se / worst).
    description : str
        One line saying what this is.
    target : str or None
        Name of the target column.
    columns : list of str
        Feature columns of the source table, before encoding.
    encoded : dict of str to list of str
        For each one-hot encoded source column, the new columns it became.
    categories : dict of str to list of str
        For each one-hot encoded source column, its categories (in column order).
    dropped_rows : int
        Rows dropped for missing or infinite values (``drop_missing=True``).
    notes : tuple of str
        Human-readable lines on what was done (encodings, dropped rows), for the CLI.
    source : str
        File path or ``"bundled:<name>"``.
    svmlight_base : {0, 1} or None
        For svmlight files, whether the file's feature indices count from 0 or from 1
        (sklearn's rule: from 1 unless index 0 occurs); ``x0`` is the first feature either
        way. Kept in :attr:`schema` so that a prediction file is read with the same base,
        with whether ``X`` was sparse (a prediction file is then read the same way).

    See Also
    --------
    read_table : Read a CSV, TSV, Parquet or svmlight file into a Dataset.
    load_dataset : Load a bundled dataset.

    Examples
    --------
    >>> from bisvm import load_dataset
    >>> ds = load_dataset("iris")
    >>> ds.n_samples, ds.n_features
    (150, 4)
    >>> ds.feature_names[0]
    'sepal length (cm)'
    """

    X: np.ndarray | object  # ndarray, or scipy.sparse.csr_matrix for svmlight input
    y: np.ndarray | None
    feature_names: Sequence[str]
    target_names: list | None = None
    groups: dict[str, list[int]] | None = None
    description: str = ""
    target: str | None = None
    columns: list[str] = field(default_factory=list)
    encoded: dict[str, list[str]] = field(default_factory=dict)
    categories: dict[str, list[str]] = field(default_factory=dict)
    dropped_rows: int = 0
    notes: tuple[str, ...] = ()
    source: str = ""
    svmlight_base: int | None = None

    @property
    def n_samples(self):
        """Number of rows of :attr:`X`."""
        return self.X.shape[0]

    @property
    def n_features(self):
        """Number of columns of :attr:`X`, after one-hot encoding."""
        return self.X.shape[1]

    @property
    def schema(self):
        """JSON-able record of the feature columns and their encoding.

        Store it with a model (``save_model(..., schema=ds.schema)``) and pass it back to
        ``read_table(path, schema=...)`` to read new data into the same columns.

        Examples
        --------
        >>> from bisvm import load_dataset
        >>> sorted(load_dataset("wine").schema)
        ['categories', 'columns', 'feature_names', 'target']
        """
        out = {
            "columns": list(self.columns),
            "categories": {k: list(v) for k, v in self.categories.items()},
            "feature_names": list(self.feature_names),
            "target": self.target,
        }
        if self.svmlight_base is not None:
            out["svmlight_base"] = self.svmlight_base
            out["svmlight_sparse"] = bool(is_sparse(self.X))
        return out


class NumberedNames(Sequence):
    """The feature names ``x0, x1, ..., x{d-1}`` of an svmlight file, made on demand.

    A read-only sequence of str that compares equal to the list of the same names; it
    holds only ``d``, since a file with 10**7 features would otherwise hold 10**7 strings,
    and ``index`` is O(1).
    """

    __slots__ = ("_n",)
    _PATTERN = re.compile(r"x(0|[1-9][0-9]*)")

    def __init__(self, n):
        n = operator.index(n)
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        self._n = n

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [f"x{j}" for j in range(*i.indices(self._n))]
        j = operator.index(i)
        if j < 0:
            j += self._n
        if not 0 <= j < self._n:
            raise IndexError("feature index out of range")
        return f"x{j}"

    def __iter__(self):
        return (f"x{j}" for j in range(self._n))

    def index(self, name, start=0, stop=None):
        m = self._PATTERN.fullmatch(name) if isinstance(name, str) else None
        lo, hi, _ = slice(start, stop).indices(self._n)
        if m is None or not lo <= int(m.group(1)) < hi:
            raise ValueError(f"{name!r} is not in the feature names")
        return int(m.group(1))

    def __contains__(self, name):
        try:
            self.index(name)
        except ValueError:
            return False
        return True

    def __eq__(self, other):
        if isinstance(other, NumberedNames):
            return self._n == other._n
        if isinstance(other, list | tuple):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        tail = f", ..., x{self._n - 1}" if self._n > 3 else ""
        return f"NumberedNames({self._n}: {', '.join(self[:3])}{tail})"


def short_list(items, k=12):
    items = [repr(str(i)) for i in items]
    if len(items) > k:
        return ", ".join(items[:k]) + f", ... ({len(items)} in all)"
    return ", ".join(items)


def looks_like_classes(y, uniq):
    if y.dtype.kind in "biuUSO":
        return uniq.size <= max(50, int(np.sqrt(y.size)))
    return False


def check_schema(schema):
    """Validate a schema dict (it may come from a model file)."""
    if not isinstance(schema, Mapping):
        raise ValueError("schema must be a dict as given by Dataset.schema")
    try:
        columns = [str(c) for c in schema["columns"]]
        categories = {str(k): [str(x) for x in v] for k, v in dict(schema["categories"]).items()}
        feature_names = [str(f) for f in schema["feature_names"]]
        target = schema.get("target")
    except (KeyError, TypeError) as exc:
        raise ValueError(f"schema is malformed: {exc}") from None
    if not set(categories) <= set(columns):
        raise ValueError("schema is malformed: categories name columns that are not features")
    base = schema.get("svmlight_base")
    if base is not None and (isinstance(base, bool) or base not in (0, 1)):
        raise ValueError(f"schema is malformed: svmlight_base must be 0 or 1, got {base!r}")
    out = {
        "columns": columns,
        "categories": categories,
        "feature_names": feature_names,
        "target": None if target is None else str(target),
    }
    if base is not None:
        out["svmlight_base"] = int(base)
    kept = schema.get("svmlight_sparse")
    if kept is not None:
        if not isinstance(kept, bool):
            raise ValueError(f"schema is malformed: svmlight_sparse must be true or false, "
                             f"got {kept!r}")
        out["svmlight_sparse"] = kept
    return out


def is_sparse(X):
    import scipy.sparse as sp

    return sp.issparse(X)


def py_scalar(v):
    return v.item() if isinstance(v, np.generic) else v


#: File extensions and the reader of each.
TABLE_FORMATS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".svm": "svmlight",
    ".svmlight": "svmlight",
    ".libsvm": "svmlight",
}


def table_format(path, fmt):
    """The reader of a file: ``fmt`` when given (aliases resolved), else by extension."""
    if fmt is not None:
        f = str(fmt).lower()
        f = {"tsv": "csv", "libsvm": "svmlight", "pq": "parquet"}.get(f, f)
        if f not in ("csv", "parquet", "svmlight"):
            raise DataError(
                f"{path}: unknown format {fmt!r}; use csv, parquet or svmlight", path=str(path)
            )
        return f
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in TABLE_FORMATS:
        raise DataError(
            f"{path}: cannot tell the format from the extension {ext or '(none)'!r}; "
            f"use one of {', '.join(TABLE_FORMATS)} or pass fmt='csv'|'parquet'|'svmlight'",
            path=str(path),
        )
    return TABLE_FORMATS[ext]
