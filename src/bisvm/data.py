"""Data layer: bundled datasets, table readers, feature groups, scaling, splits, targets.

Everything a user hands to bisvm passes through here before an estimator sees it, so every
check that can be phrased in the user's terms (file, column, row) is made here and raised
as :class:`DataError`, a :class:`ValueError` whose message is one line naming the file,
the column and the row. The CLI prints that line and exits with code 2.

Readers
-------
:func:`read_table` reads CSV/TSV (pandas), Parquet (pandas + pyarrow) and svmlight/libsvm
(:func:`sklearn.datasets.load_svmlight_file`) into a frozen :class:`Dataset`; an svmlight
matrix stays a ``scipy.sparse`` CSR matrix when it is large and sparse (``sparse="auto"``),
and :class:`Scaler` and :func:`train_test_split_seeded` keep it so:

* the target column is chosen by name (default: the last column; ``target=False`` reads
  features only, e.g. for prediction);
* numeric and boolean columns are features as they are; text columns with at most
  ``max_categories`` distinct values are one-hot encoded into columns ``"<col>=<value>"``
  (reported in :attr:`Dataset.encoded` and :attr:`Dataset.notes`); a text column whose
  values are mostly numbers is an error naming the first value that is not one (a typo
  should not silently become a category);
* missing (empty, ``NA``, ``nan``) and infinite values are errors naming the column and
  the first row, or, with ``drop_missing=True``, their rows are dropped and counted;
* :attr:`Dataset.schema` records the columns and categories, and
  ``read_table(..., schema=...)`` re-applies them to new data so that a model sees the
  same feature columns at prediction time as at training time.

Rows are numbered from 1 for the first data row; for CSV the file line is given too.
"""

from __future__ import annotations

import csv
import io
import math
import operator
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "MAX_DENSE_ELEMENTS",
    "MAX_FEATURES",
    "SPARSE_AUTO_MIN_ENTRIES",
    "SPARSE_AUTO_MAX_DENSITY",
    "DataError",
    "Dataset",
    "NumberedNames",
    "BinaryTarget",
    "Scaler",
    "binary_target",
    "list_datasets",
    "load_dataset",
    "parse_groups",
    "read_table",
    "train_test_split_seeded",
    "BREAST_CANCER_GROUPS",
]

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

_MISSING_HINT = "pass drop_missing=True (CLI: --drop-missing) to drop such rows"


class DataError(ValueError):
    """Bad input data; the message is one line naming the file, column and row.

    Attributes
    ----------
    path, column, row : str or int or None
        What the message names, for programs that want it (``row`` counts data rows
        from 1).
    """

    def __init__(self, message, *, path=None, column=None, row=None):
        super().__init__(message)
        self.path = path
        self.column = column
        self.row = row


@dataclass(frozen=True, eq=False)
class Dataset:
    """A feature matrix with its target and what is known about its columns.

    Attributes
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
        return self.X.shape[0]

    @property
    def n_features(self):
        return self.X.shape[1]

    @property
    def schema(self):
        """JSON-able record of the feature columns and their encoding.

        Store it with a model (``save_model(..., schema=ds.schema)``) and pass it back to
        ``read_table(path, schema=...)`` to read new data into the same columns.
        """
        out = {
            "columns": list(self.columns),
            "categories": {k: list(v) for k, v in self.categories.items()},
            "feature_names": list(self.feature_names),
            "target": self.target,
        }
        if self.svmlight_base is not None:
            out["svmlight_base"] = self.svmlight_base
            out["svmlight_sparse"] = bool(_issparse(self.X))
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


# --------------------------------------------------------------------------------------
# bundled datasets

BREAST_CANCER_GROUPS = {
    "mean": list(range(0, 10)),
    "se": list(range(10, 20)),
    "worst": list(range(20, 30)),
}

_BUNDLED = {
    "iris": (
        "load_iris",
        "Iris flowers: 150 samples, 4 features, 3 classes (setosa, versicolor, virginica)",
    ),
    "breast-cancer": (
        "load_breast_cancer",
        "Wisconsin diagnostic breast cancer: 569 samples, 30 features in 3 groups "
        "(mean, se, worst), 2 classes",
    ),
    "wine": ("load_wine", "Wine cultivars: 178 samples, 13 features, 3 classes"),
    "digits": ("load_digits", "Handwritten digits 8x8: 1797 samples, 64 features, 10 classes"),
}


def list_datasets():
    """Names of the bundled datasets (no download needed) with a one-line description.

    Returns
    -------
    dict of str to str
    """
    return {name: desc for name, (_, desc) in _BUNDLED.items()}


def _canonical_name(name):
    key = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    return {"cancer": "breast-cancer", "breastcancer": "breast-cancer"}.get(key, key)


def load_dataset(name):
    """Load a bundled dataset from :mod:`sklearn.datasets` (shipped with scikit-learn).

    Parameters
    ----------
    name : {"iris", "breast-cancer", "wine", "digits"}
        Case and ``_``/``-`` are ignored.

    Returns
    -------
    Dataset
        Breast Cancer carries its three feature groups
        ``{"mean": 0-9, "se": 10-19, "worst": 20-29}`` (the thesis's grouping,
        seed-000 §6); the other sets have ``groups=None``.
    """
    key = _canonical_name(name)
    if key not in _BUNDLED:
        raise DataError(
            f"unknown dataset {name!r}; available: {', '.join(_BUNDLED)}", path=str(name)
        )
    import sklearn.datasets

    loader, desc = _BUNDLED[key]
    bunch = getattr(sklearn.datasets, loader)()
    X = np.ascontiguousarray(bunch.data, dtype=np.float64)
    groups = (
        {k: list(v) for k, v in BREAST_CANCER_GROUPS.items()} if key == "breast-cancer" else None
    )
    feature_names = [str(f) for f in bunch.feature_names]
    return Dataset(
        X=X,
        y=np.asarray(bunch.target),
        feature_names=feature_names,
        target_names=[str(t) for t in bunch.target_names],
        groups=groups,
        description=desc,
        target="target",
        columns=list(feature_names),
        source=f"bundled:{key}",
    )


# --------------------------------------------------------------------------------------
# table readers

_FORMATS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".svm": "svmlight",
    ".svmlight": "svmlight",
    ".libsvm": "svmlight",
}


def _fmt_for(path, fmt):
    if fmt is not None:
        f = str(fmt).lower()
        f = {"tsv": "csv", "libsvm": "svmlight", "pq": "parquet"}.get(f, f)
        if f not in ("csv", "parquet", "svmlight"):
            raise DataError(
                f"{path}: unknown format {fmt!r}; use csv, parquet or svmlight", path=str(path)
            )
        return f
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in _FORMATS:
        raise DataError(
            f"{path}: cannot tell the format from the extension {ext or '(none)'!r}; "
            f"use one of {', '.join(_FORMATS)} or pass fmt='csv'|'parquet'|'svmlight'",
            path=str(path),
        )
    return _FORMATS[ext]


def read_table(
    path,
    target=None,
    *,
    fmt=None,
    drop_missing=False,
    categorical="auto",
    max_categories=20,
    drop_columns=(),
    encoding=None,
    sep=None,
    schema=None,
    sparse="auto",
):
    """Read a CSV, Parquet or svmlight/libsvm file into a :class:`Dataset`.

    Parameters
    ----------
    path : str or path-like
    target : str, None or False
        Name of the target column; ``None`` takes the last column (CSV/Parquet); ``False``
        reads features only (``Dataset.y`` is ``None``). svmlight files always carry their
        target (the first token of each line); ``False`` drops it, any other value is
        ignored.
    fmt : {"csv", "parquet", "svmlight"}, optional
        Overrides the format chosen from the extension (.csv/.tsv/.txt,
        .parquet/.pq, .svm/.svmlight/.libsvm).
    drop_missing : bool
        Drop rows with a missing or infinite feature or target (their number is in
        ``Dataset.dropped_rows`` and ``Dataset.notes``) instead of raising.
    categorical : "auto", "none" or sequence of str
        ``"auto"``: text columns with at most ``max_categories`` distinct values are
        one-hot encoded; ``"none"``: every feature must be numeric; a list names columns to
        one-hot encode (even numeric codes), the other text columns being handled as in
        ``"auto"``.
    max_categories : int
        A text column with more distinct values is an error (an identifier or free text
        is not a feature; drop it with ``drop_columns``).
    drop_columns : sequence of str
        Columns to ignore (e.g. an identifier).
    encoding : str, optional
        Text encoding of a CSV file. By default the file must be UTF-8 (a BOM is
        accepted); another encoding (``"latin-1"``, ``"cp1252"``, ...) is used only when
        given here.
    sep : str, optional
        CSV field separator; by default ``,`` for .csv (``;`` or tab when the header
        has no comma but one of those), tab for .tsv, sniffed for .txt.
    schema : dict, optional
        :attr:`Dataset.schema` of the training data: read exactly its feature columns (in
        its order, other columns ignored), one-hot encode with its categories (an unseen
        category is an error) and, when ``target`` is ``None``, take its target column if
        the file has it.
    sparse : "auto", True or False
        svmlight only (CSV and Parquet tables are dense): ``True`` keeps ``X`` as the
        ``scipy.sparse.csr_matrix`` that :func:`sklearn.datasets.load_svmlight_file`
        builds, ``False`` makes it a dense array (refused above
        :data:`MAX_DENSE_ELEMENTS` values), ``"auto"`` keeps it sparse when the dense
        copy would be refused, or would hold more than :data:`SPARSE_AUTO_MIN_ENTRIES`
        values of which at most :data:`SPARSE_AUTO_MAX_DENSITY` are stored. With a
        ``schema`` of svmlight training data, ``"auto"`` reads the matrix as the training
        matrix was (sparse or dense), so that the model gets what it was fitted on.

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        Missing or empty file, no rows, ragged CSV rows, bad encoding, duplicate column
        names, missing target column, a column that cannot be parsed, missing or
        infinite values, a constant target.
    """
    path_str = os.fspath(path) if not isinstance(path, str) else path
    _check_sparse_option(sparse)
    kind = _fmt_for(path_str, fmt)
    if not os.path.exists(path_str):
        raise DataError(f"{path_str}: no such file", path=path_str)
    if os.path.isdir(path_str):
        raise DataError(f"{path_str}: is a directory, not a data file", path=path_str)
    if os.path.getsize(path_str) == 0:
        raise DataError(f"{path_str}: empty file", path=path_str)
    if kind == "svmlight":
        return _read_svmlight(path_str, drop_missing=drop_missing, sparse=sparse, schema=schema,
                              features_only=target is False)
    if kind == "parquet":
        frame, lines = _read_parquet(path_str), None
    else:
        frame, lines = _read_csv(path_str, encoding=encoding, sep=sep)
    return _frame_to_dataset(
        frame,
        path_str,
        lines,
        target=target,
        drop_missing=drop_missing,
        categorical=categorical,
        max_categories=max_categories,
        drop_columns=drop_columns,
        schema=schema,
    )


def _decode(path, raw, encoding):
    if encoding is not None:
        try:
            return raw.decode(encoding)
        except LookupError:
            raise DataError(f"{path}: unknown encoding {encoding!r}", path=path) from None
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise DataError(
                f"{path}: not valid {encoding} text (byte 0x{raw[exc.start]:02x} on line {line})",
                path=path,
            ) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(
            f"{path}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} on line {line}); "
            "if the file uses another encoding, pass it with encoding='latin-1' "
            "(CLI: --encoding latin-1)",
            path=path,
        ) from None


def _choose_sep(path, text, sep):
    if sep is not None:
        return sep
    ext = os.path.splitext(path)[1].lower()
    if ext == ".tsv":
        return "\t"
    first = text.split("\n", 1)[0]
    if ext == ".txt":
        try:
            return csv.Sniffer().sniff(text[:65536], delimiters=",\t;|").delimiter
        except csv.Error:
            pass
    if "," not in first:
        for cand in ("\t", ";"):
            if cand in first:
                return cand
    return ","


def _read_csv(path, *, encoding, sep):
    """Read a delimited text file; returns the frame and the file line of each data row.

    The structure (header, ragged rows, NUL bytes) is checked with :mod:`csv` first so
    that the error can name the line; pandas then parses the values.
    """
    import pandas as pd

    with open(path, "rb") as fh:
        raw = fh.read()
    text = _decode(path, raw, encoding)
    if not text.strip():
        raise DataError(f"{path}: empty file (only whitespace)", path=path)
    nul = text.find("\x00")
    if nul >= 0:
        raise DataError(
            f"{path}: NUL character on line {text.count(chr(10), 0, nul) + 1}: a binary file or "
            "UTF-16/32 text (pass encoding='utf-16' if so), cannot be parsed as CSV",
            path=path,
        )
    sep = _choose_sep(path, text, sep)
    header = None
    lines = []
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if header is None:
                header = row
                continue
            if len(row) != len(header):
                raise DataError(
                    f"{path}: ragged row {len(lines) + 1} (line {reader.line_num}): "
                    f"{len(row)} fields, the header has {len(header)}",
                    path=path,
                    row=len(lines) + 1,
                )
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise DataError(f"{path}: cannot be parsed as CSV: {exc}", path=path) from None
    names = [h.strip() for h in header]
    _check_duplicates(path, names)
    if not lines:
        raise DataError(f"{path}: no data rows (header only)", path=path)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, low_memory=False, skipinitialspace=True)
    except (ValueError, pd.errors.ParserError, csv.Error, OverflowError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{path}: cannot be parsed as CSV: {msg}", path=path) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if len(frame) != len(lines):
        lines = None  # the two parsers disagree on blank lines: give rows only
    return frame, lines


def _read_parquet(path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            f"{path}: reading Parquet needs pyarrow: pip install pyarrow "
            "(or pip install 'bisvm[parquet]')",
            path=path,
        ) from None
    try:
        pfile = pq.ParquetFile(path)
        _check_duplicates(path, [str(c) for c in pfile.schema_arrow.names])
        frame = pfile.read().to_pandas()
    except DataError:
        raise
    except Exception as exc:  # pyarrow raises its own ArrowInvalid/OSError family
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{path}: cannot be read as Parquet: {msg}", path=path) from None
    frame.columns = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise DataError(f"{path}: no rows", path=path)
    return frame


def _check_duplicates(path, names):
    seen = set()
    for name in names:
        if name in seen:
            raise DataError(f"{path}: duplicate column name {name!r}", path=path, column=name)
        seen.add(name)


def _where(row, lines):
    """'row 3 (line 4)': rows count data rows from 1."""
    if lines is not None:
        return f"row {row + 1} (line {lines[row]})"
    return f"row {row + 1}"


def _short_list(items, k=12):
    items = [repr(str(i)) for i in items]
    if len(items) > k:
        return ", ".join(items[:k]) + f", ... ({len(items)} in all)"
    return ", ".join(items)


def _is_numeric_series(s):
    import pandas as pd

    return pd.api.types.is_bool_dtype(s) or (
        pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_complex_dtype(s)
    )


def _numeric_values(s):
    """A float64 array of a numeric/boolean series (missing → NaN)."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(s):
        return s.astype("float64").to_numpy(dtype=np.float64, na_value=np.nan)
    return s.to_numpy(dtype=np.float64, na_value=np.nan)


def _text_column(path, name, s, lines, *, allow_categorical, max_categories):
    """Classify a non-numeric column: ("numeric", values) or ("categorical", None)."""
    import pandas as pd

    present = s.notna().to_numpy()
    n_present = int(present.sum())
    if n_present == 0:
        return "numeric", np.full(len(s), np.nan)
    as_num = pd.to_numeric(s.where(s.notna(), None).astype(object), errors="coerce")
    is_num = as_num.notna().to_numpy()
    n_num = int(is_num.sum())
    if n_num == n_present:
        return "numeric", as_num.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = int(np.flatnonzero(present & ~is_num)[0])
    value = str(s.iloc[bad])[:40]
    if n_num >= 0.5 * n_present or not allow_categorical:
        why = (
            f"mostly numbers but {value!r} is not a number"
            if allow_categorical
            else f"{value!r} is not a number"
        )
        hint = (
            "; fix the value, mark it missing, or pass categorical=[...] (CLI: --categorical) "
            "to one-hot encode the column"
            if allow_categorical
            else "; allow one-hot encoding with categorical='auto'"
        )
        raise DataError(
            f"{path}: column {name!r}, {_where(bad, lines)}: {why}{hint}",
            path=path,
            column=name,
            row=bad + 1,
        )
    n_distinct = int(s[present].astype(str).nunique())
    if n_distinct > max_categories:
        raise DataError(
            f"{path}: column {name!r} is text with {n_distinct} distinct values (more than "
            f"max_categories={max_categories}), so cannot be parsed as a feature; drop it "
            "(drop_columns, CLI: --drop-column) or raise max_categories",
            path=path,
            column=name,
        )
    return "categorical", None


def _frame_to_dataset(
    frame, path, lines, *, target, drop_missing, categorical, max_categories, drop_columns, schema
):
    names = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise DataError(f"{path}: no data rows", path=path)
    if schema is not None:
        schema = _check_schema(schema)
        if target is None:
            target = schema["target"] if schema["target"] in names else False
    # target column
    if target is None:
        target = names[-1]
    if target is not False:
        target = str(target)
        if target not in names:
            raise DataError(
                f"{path}: no target column {target!r}; columns are {_short_list(names)}",
                path=path,
                column=target,
            )
    drop = {str(c) for c in drop_columns}
    unknown = sorted(drop - set(names))
    if unknown:
        raise DataError(
            f"{path}: cannot drop column {unknown[0]!r}: no such column; columns are "
            f"{_short_list(names)}",
            path=path,
            column=unknown[0],
        )
    if schema is not None:
        missing_cols = [c for c in schema["columns"] if c not in names]
        if missing_cols:
            raise DataError(
                f"{path}: column {missing_cols[0]!r} used by the model is missing; columns are "
                f"{_short_list(names)}",
                path=path,
                column=missing_cols[0],
            )
        feature_cols = list(schema["columns"])
        forced = set(schema["categories"])
    else:
        feature_cols = [c for c in names if c != target and c not in drop]
        if isinstance(categorical, str):
            if categorical not in ("auto", "none"):
                raise ValueError(
                    f"categorical must be 'auto', 'none' or a list of columns, got {categorical!r}"
                )
            forced = set()
        else:
            forced = {str(c) for c in categorical}
            bad = sorted(forced - set(feature_cols))
            if bad:
                raise DataError(
                    f"{path}: categorical column {bad[0]!r} is not a feature column; features are "
                    f"{_short_list(feature_cols)}",
                    path=path,
                    column=bad[0],
                )
    if not feature_cols:
        raise DataError(f"{path}: no feature columns besides the target {target!r}", path=path)
    if not isinstance(max_categories, int | np.integer) or max_categories < 1:
        raise ValueError(f"max_categories must be a positive integer, got {max_categories!r}")

    allow_cat = schema is None and categorical != "none"
    n = len(frame)
    kinds = {}  # column -> ("numeric", float array) | ("categorical", str array)
    bad_mask = np.zeros(n, dtype=bool)
    for c in feature_cols:
        s = frame[c]
        if c in forced:
            kind, v = "categorical", None
        elif _is_numeric_series(s):
            kind, v = "numeric", _numeric_values(s)
        else:
            kind, v = _text_column(
                path, c, s, lines, allow_categorical=allow_cat, max_categories=max_categories
            )
        if kind == "categorical":
            present = s.notna().to_numpy()
            v = np.where(present, s.astype(str).to_numpy(dtype=object), None)
            bad_mask |= ~present
        else:
            bad_mask |= ~np.isfinite(v)
        kinds[c] = (kind, v)

    y = None
    if target is not False:
        ys = frame[target]
        if _is_numeric_series(ys):
            y_num = _numeric_values(ys)
            bad_mask |= ~np.isfinite(y_num)
        else:
            bad_mask |= ~ys.notna().to_numpy()

    n_dropped = 0
    notes = []
    keep = None
    if bad_mask.any():
        first = int(np.flatnonzero(bad_mask)[0])
        if not drop_missing:
            col, what = _first_bad_cell(frame, kinds, target, first)
            raise DataError(
                f"{path}: column {col!r}, {_where(first, lines)}: {what}; {_MISSING_HINT}",
                path=path,
                column=col,
                row=first + 1,
            )
        n_dropped = int(bad_mask.sum())
        keep = ~bad_mask
        if not keep.any():
            raise DataError(
                f"{path}: no rows left after dropping {n_dropped} rows with missing or "
                "infinite values",
                path=path,
            )
        notes.append(
            f"dropped {n_dropped} of {n} rows with missing or infinite values "
            f"(first: {_where(first, lines)})"
        )

    blocks, feature_names, encoded, categories = [], [], {}, {}
    for c in feature_cols:
        kind, v = kinds[c]
        if keep is not None:
            v = v[keep]
        if kind == "numeric":
            blocks.append(v[:, None])
            feature_names.append(c)
            continue
        if schema is not None:
            cats = list(schema["categories"][c])
            unseen = ~np.isin(v.astype(str), np.asarray(cats, dtype=str))
            if unseen.any():
                i = int(np.flatnonzero(unseen)[0])
                row = int(np.flatnonzero(keep)[i]) if keep is not None else i
                raise DataError(
                    f"{path}: column {c!r}, {_where(row, lines)}: category {str(v[i])[:40]!r} "
                    f"was not seen in training (known: {_short_list(cats, 8)})",
                    path=path,
                    column=c,
                    row=row + 1,
                )
        else:
            cats = sorted({str(x) for x in v})
        new = [f"{c}={cat}" for cat in cats]
        blocks.append(
            (v.astype(str)[:, None] == np.asarray(cats, dtype=str)[None, :]).astype(np.float64)
        )
        feature_names.extend(new)
        encoded[c] = new
        categories[c] = cats
        if schema is None:
            notes.append(f"one-hot encoded column {c!r} into {len(new)} columns: {', '.join(new)}")
    X = np.ascontiguousarray(np.hstack(blocks), dtype=np.float64)
    if schema is not None and feature_names != schema["feature_names"]:
        raise DataError(
            f"{path}: the columns do not encode to the model's features "
            f"({len(feature_names)} vs {len(schema['feature_names'])})",
            path=path,
        )
    _check_duplicates(path, feature_names)

    target_names = None
    if target is not False:
        ys = frame[target] if keep is None else frame[target][keep]
        y = _target_array(ys)
        uniq = np.unique(y)
        # a file read with a trained model's schema is scored, not learned from: any
        # number of classes will do
        if uniq.size < 2 and schema is None:
            raise DataError(
                f"{path}: target column {target!r} has a single value {str(uniq[0])[:40]!r} "
                "(one class): nothing to learn",
                path=path,
                column=target,
            )
        if _looks_like_classes(y, uniq):
            target_names = uniq.tolist()
    desc = f"{os.path.basename(path)}: {X.shape[0]} rows, {X.shape[1]} features"
    if target is not False:
        desc += f", target {target!r}"
    return Dataset(
        X=X,
        y=y,
        feature_names=feature_names,
        target_names=target_names,
        groups=None,
        description=desc,
        target=target if target is not False else None,
        columns=feature_cols,
        encoded=encoded,
        categories=categories,
        dropped_rows=n_dropped,
        notes=tuple(notes),
        source=path,
    )


def _first_bad_cell(frame, kinds, target, row):
    for c, (kind, v) in kinds.items():
        if kind == "numeric":
            if not np.isfinite(v[row]):
                return c, ("missing value" if np.isnan(v[row]) else f"infinite value {v[row]}")
        elif v[row] is None:
            return c, "missing value"
    val = frame[target].iloc[row]
    try:
        if np.isinf(float(val)):
            return target, f"infinite target value {float(val)}"
    except (TypeError, ValueError):
        pass
    return target, "missing target value"


def _target_array(s):
    import pandas as pd

    if pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=bool)
    if pd.api.types.is_integer_dtype(s):
        return s.to_numpy(dtype=np.int64)
    if _is_numeric_series(s):
        v = s.to_numpy(dtype=np.float64)
        if np.all(v == np.round(v)) and np.all(np.abs(v) < 2**53):
            return v.astype(np.int64)
        return v
    return s.astype(str).to_numpy(dtype=str)


def _looks_like_classes(y, uniq):
    if y.dtype.kind in "biuUSO":
        return uniq.size <= max(50, int(np.sqrt(y.size)))
    return False


def _check_schema(schema):
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


def _read_svmlight(path, *, drop_missing, sparse, schema, features_only):
    """Read an svmlight/libsvm file; ``X`` stays CSR unless :func:`_keep_sparse` says not.

    Everything here works on the CSR arrays (``data``, ``indices``, ``indptr``): a
    densified copy of a 20,000 x 50,000 file would take 8 GB. With the ``schema`` of a
    model trained on an svmlight file, the index base is the training file's and the
    matrix gets the training number of columns (a prediction file need not reach the
    last feature index), and its labels may be all alike (placeholders are common in
    svmlight files of new rows); ``features_only`` returns ``y=None``.
    """
    from sklearn.datasets import load_svmlight_file

    base = n_model = None
    if schema is not None:
        sch = _check_schema(schema)
        n_sch = len(sch["feature_names"])
        if "svmlight_base" in sch or NumberedNames(n_sch) == sch["feature_names"]:
            base, n_model = sch.get("svmlight_base"), n_sch
            if sparse == "auto":  # the model saw dense rows unless the schema says not
                sparse = sch.get("svmlight_sparse", False)
    try:
        # raw indices; the base is decided below (sklearn's "auto" per file could read a
        # prediction file with another base than its training file)
        Xs, y = load_svmlight_file(path, dtype=np.float64, zero_based=True)
    except (ValueError, OverflowError, UnicodeDecodeError, IndexError, TypeError) as exc:
        where = _svmlight_first_bad_line(path)
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(
            f"{path}: cannot be parsed as svmlight/libsvm{where}: {msg}", path=path
        ) from None
    Xs, base = _svmlight_base(path, Xs.tocsr(), base, n_model)
    n, d = Xs.shape
    if n == 0:
        raise DataError(f"{path}: no rows", path=path)
    if d == 0:
        raise DataError(f"{path}: no features", path=path)
    if d > MAX_FEATURES:
        # a one-line file can declare feature index 10**9; every per-feature array
        # downstream (scaling, coefficients, penalty weights) would have that length
        raise DataError(
            f"{path}: the largest feature index declares {d} features, more than the "
            f"limit of {MAX_FEATURES}",
            path=path,
        )
    Xs.eliminate_zeros()  # explicit "j:0" entries carry nothing (NaN is kept: NaN != 0)
    keep_sparse = _keep_sparse(sparse, n, d, Xs.nnz)
    if not keep_sparse and n * d > MAX_DENSE_ELEMENTS:
        raise DataError(
            f"{path}: {n} rows x {d} features is too large to hold densely "
            f"(limit {MAX_DENSE_ELEMENTS} values); read it as a sparse matrix "
            "(sparse='auto' or True; CLI: --sparse auto)",
            path=path,
        )
    names = NumberedNames(d)
    bad_entry = ~np.isfinite(Xs.data)
    bad = ~np.isfinite(y)
    if bad_entry.any():
        bad[np.repeat(np.arange(n), np.diff(Xs.indptr))[bad_entry]] = True
    notes = []
    n_dropped = 0
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        if not drop_missing:
            lo, hi = Xs.indptr[first], Xs.indptr[first + 1]
            cols = Xs.indices[lo:hi][bad_entry[lo:hi]]
            col = names[int(cols.min())] if cols.size else "target"
            raise DataError(
                f"{path}: column {col!r}, row {first + 1}: missing or infinite value; "
                f"{_MISSING_HINT}",
                path=path,
                column=col,
                row=first + 1,
            )
        n_dropped = int(bad.sum())
        if n_dropped == n:
            raise DataError(f"{path}: no rows left after dropping missing values", path=path)
        Xs, y = Xs[~bad], y[~bad]
        notes.append(f"dropped {n_dropped} of {n} rows with missing or infinite values")
    if keep_sparse:
        X = Xs
        notes.append(
            f"svmlight: X kept sparse (CSR, {Xs.nnz} stored values, "
            f"{Xs.nnz / (Xs.shape[0] * d):.2%} of {Xs.shape[0]} x {d})"
        )
    else:
        X = np.ascontiguousarray(Xs.toarray(), dtype=np.float64)
    if np.all(y == np.round(y)):
        y = y.astype(np.int64)
    uniq = np.unique(y)
    if uniq.size < 2 and n_model is None and not features_only:
        raise DataError(
            f"{path}: the target has a single value {_py(uniq[0])!r} (one class): nothing to learn",
            path=path,
            column="target",
        )
    kind = "svmlight, sparse CSR" if keep_sparse else "svmlight"
    return Dataset(
        X=X,
        y=None if features_only else y,
        feature_names=names,
        target_names=uniq.tolist() if _looks_like_classes(y, uniq) and not features_only
        else None,
        description=f"{os.path.basename(path)}: {X.shape[0]} rows, {d} features ({kind})",
        target="target",
        columns=names,
        dropped_rows=n_dropped,
        notes=tuple(notes),
        source=path,
        svmlight_base=base,
    )


def _svmlight_base(path, Xs, base, n_model):
    """Shift raw (zero-based) indices of a one-based file and widen to ``n_model``
    columns; ``base=None`` applies sklearn's rule (one-based unless index 0 occurs)."""
    import scipy.sparse as sp

    n, d = Xs.shape
    has_zero = Xs.nnz > 0 and int(Xs.indices.min()) == 0
    if base is None:
        base = 0 if has_zero or Xs.nnz == 0 else 1
    if base == 1:
        if has_zero:
            raise DataError(
                f"{path}: feature index 0 in a file read as one-based (the model's training "
                "file had no index 0)",
                path=path,
            )
        Xs = sp.csr_matrix((Xs.data, Xs.indices - 1, Xs.indptr), shape=(n, max(d - 1, 0)))
        d -= 1
    if n_model is not None:
        if d > n_model:
            raise DataError(
                f"{path}: feature index {d - 1 + base} is beyond the {n_model} features "
                "the model was trained on",
                path=path,
            )
        Xs = sp.csr_matrix((Xs.data, Xs.indices, Xs.indptr), shape=(n, n_model))
    return Xs, base


def _check_sparse_option(sparse):
    if sparse not in (True, False, "auto") or isinstance(sparse, np.bool_):
        raise ValueError(f"sparse must be 'auto', True or False, got {sparse!r}")
    return sparse


def _keep_sparse(sparse, n, d, nnz):
    """The ``sparse="auto"`` rule: CSR when a dense copy would be refused, or when it
    would be large (more than :data:`SPARSE_AUTO_MIN_ENTRIES` values) and at most
    :data:`SPARSE_AUTO_MAX_DENSITY` of it stored; small or dense files are read densely
    (cheap, and every solver and plot takes them)."""
    if sparse != "auto":
        return bool(sparse)
    size = n * d
    if size > MAX_DENSE_ELEMENTS:
        return True
    return size > SPARSE_AUTO_MIN_ENTRIES and nnz <= SPARSE_AUTO_MAX_DENSITY * size


def _svmlight_first_bad_line(path):
    """Find the first line that is not ``label [qid:q] idx:val ...`` (for the message)."""
    try:
        with open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                line = raw.split(b"#", 1)[0].strip()
                if not line:
                    continue
                tokens = line.split()
                try:
                    float(tokens[0])
                    for tok in tokens[1:]:
                        key, _, val = tok.partition(b":")
                        if key == b"qid":
                            int(val)
                            continue
                        if not _ or int(key) < 0:
                            raise ValueError
                        float(val)
                except ValueError:
                    return f" (line {lineno})"
    except OSError:
        pass
    return ""


# --------------------------------------------------------------------------------------
# feature groups

_RANGE_RE = re.compile(r"^\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?$")


def parse_groups(spec, feature_names):
    """Parse a feature-group specification into ``{group name: [feature indices]}``.

    Two forms, which can be mixed, separated by commas:

    * index ranges, ``"mean=0-9,se=10-19,worst=20-29"``: inclusive 0-based ranges; a group
      may list several ranges or indices joined by ``+`` (``"a=0-3+7+9-10"``);
    * name prefixes, ``"mean,error,worst"``: a group per token, holding the features whose
      name starts with it (case-insensitive). A token that starts no name matches the
      features that contain it as a whole word (so ``error`` finds Breast Cancer's
      ``"radius error"``, ...).

    Features covered by no group are put in singleton groups named after the feature, after
    the given groups, in feature order (a group penalty then treats them as individual
    features).

    Parameters
    ----------
    spec : str or mapping of str to sequence of int
    feature_names : sequence of str

    Returns
    -------
    dict of str to list of int

    Raises
    ------
    DataError
        On an unknown prefix, an index out of range, a reversed range, overlapping groups,
        an empty or duplicate group name, naming the offending token.
    """
    names = [str(f) for f in feature_names]
    d = len(names)
    if isinstance(spec, Mapping):
        groups = {}
        for k, v in spec.items():
            idx = [int(i) for i in v]
            for i in idx:
                if not 0 <= i < d:
                    raise DataError(f"group {k!r}: index {i} out of range 0-{d - 1}", column=str(k))
            groups[str(k)] = idx
        return _finish_groups(groups, names, spec_text=str(dict(spec)))
    if not isinstance(spec, str) or not spec.strip():
        raise DataError(f"empty group specification {spec!r}")
    groups = {}
    for token in spec.split(","):
        tok = token.strip()
        if not tok:
            raise DataError(f"group specification {spec!r}: empty group between commas")
        if "=" in tok:
            name, _, ranges = (t.strip() for t in tok.partition("="))
            if not name:
                raise DataError(f"group token {tok!r}: missing group name before '='")
            idx = []
            for part in ranges.split("+"):
                m = _RANGE_RE.match(part)
                if not m:
                    raise DataError(
                        f"group token {tok!r}: {part.strip()!r} is not an index or a range a-b"
                    )
                lo = int(m.group(1))
                hi = int(m.group(2)) if m.group(2) is not None else lo
                if lo > hi:
                    raise DataError(f"group token {tok!r}: range {lo}-{hi} is reversed")
                if lo < 0 or hi >= d:
                    raise DataError(
                        f"group token {tok!r}: index {hi if hi >= d else lo} out of range "
                        f"0-{d - 1} ({d} features)"
                    )
                idx.extend(range(lo, hi + 1))
        else:
            name = tok
            low = tok.lower()
            idx = [j for j, f in enumerate(names) if f.lower().startswith(low)]
            if not idx:
                word = re.compile(r"(?:^|[^0-9a-z])" + re.escape(low) + r"(?:$|[^0-9a-z])")
                idx = [j for j, f in enumerate(names) if word.search(f.lower())]
            if not idx:
                raise DataError(
                    f"group token {tok!r}: no feature name starts with it or contains it as a "
                    f"word (features: {_short_list(names, 6)})"
                )
        if name in groups:
            raise DataError(f"group token {tok!r}: group {name!r} given twice")
        if len(set(idx)) != len(idx):
            raise DataError(f"group token {tok!r}: lists a feature twice")
        groups[name] = idx
    return _finish_groups(groups, names, spec_text=spec)


def _finish_groups(groups, names, spec_text):
    owner = {}
    for g, idx in groups.items():
        if not idx:
            raise DataError(f"group {g!r} is empty", column=g)
        for j in idx:
            if j in owner:
                raise DataError(
                    f"group {g!r} overlaps group {owner[j]!r} at feature {j} ({names[j]!r})",
                    column=g,
                )
            owner[j] = g
    out = {g: list(idx) for g, idx in groups.items()}
    for j, f in enumerate(names):
        if j not in owner:
            key = f
            while key in out:
                key = key + "_"
            out[key] = [j]
    return out


# --------------------------------------------------------------------------------------
# scaling


class Scaler(TransformerMixin, BaseEstimator):
    r"""Affine feature scaling :math:`x \mapsto (x - o) / s`, fitted on training rows only.

    Parameters
    ----------
    method : {"standard", "minmax", "none"}
        ``"standard"``: :math:`o = \bar x_j`, :math:`s = \operatorname{sd}(x_j)` (ddof 0);
        ``"minmax"``: :math:`o = \min x_j`, :math:`s = \max x_j - \min x_j` (maps the
        training range to [0, 1]); ``"none"``: identity. A column that is constant on the
        training rows (``s`` at round-off level) gets ``s = 1``, so it maps to a constant
        instead of dividing by zero.

    Notes
    -----
    Sparse input (any ``scipy.sparse`` matrix, fitted as CSR) is never densified: a
    nonzero offset would turn every implicit zero into :math:`-o_j/s_j`, i.e. make the
    matrix dense. So on sparse ``X`` the offset is 0 and only the divisor is fitted, from
    the stored values (:func:`sklearn.utils.sparsefuncs.mean_variance_axis` and
    ``min_max_axis``, which count the implicit zeros):

    * ``"standard"`` becomes *standard without centering*,
      :math:`s_j = \operatorname{sd}(x_j)` (ddof 0), ``effective_method_ =
      "standard-uncentered"``; the scaled columns have unit variance but keep their mean;
    * ``"minmax"`` becomes *max-abs* scaling, :math:`s_j = \max_i |x_{ij}|`
      (``"maxabs"``), which maps each column into [-1, 1] (into [0, 1], as min-max does,
      for a nonnegative column with an implicit zero);
    * ``"none"`` stays the identity.

    Columns that are all zero on the training rows, or constant at round-off level
    relative to their mean, get :math:`s_j = 1`. :meth:`transform` of sparse ``X`` by a
    scaler with a zero offset returns a CSR matrix with the same sparsity pattern; by a
    centering scaler (fitted on dense rows) it returns the dense result, refused above
    :data:`MAX_DENSE_ELEMENTS` values.

    Attributes
    ----------
    offset_, scale_ : ndarray of shape (n_features,)
    effective_method_ : str
        ``method``, or ``"standard-uncentered"`` / ``"maxabs"`` when fitted on sparse X.
    n_features_in_ : int
    """

    _EFFECTIVE = {"standard": ("standard", "standard-uncentered"), "minmax": ("minmax", "maxabs"),
                  "none": ("none",)}

    def __init__(self, method="standard"):
        self.method = method

    def fit(self, X, y=None):
        if self.method not in ("standard", "minmax", "none"):
            raise ValueError(f"method must be 'standard', 'minmax' or 'none', got {self.method!r}")
        if _issparse(X):
            X = _finite_sparse(X, "X")
            offset = np.zeros(X.shape[1])
            scale, magnitude = _sparse_divisor(X, self.method)
            effective = {"standard": "standard-uncentered", "minmax": "maxabs"}.get(
                self.method, "none")
        else:
            X = _finite_matrix(X, "X")
            offset, scale = _dense_offset_scale(X, self.method)
            magnitude, effective = np.abs(offset), self.method
        # round-off level spread counts as constant (cf. sklearn's _handle_zeros_in_scale)
        tiny = 10 * np.finfo(np.float64).eps * np.maximum(magnitude, 1.0)
        scale = np.where(~np.isfinite(scale) | (scale <= tiny), 1.0, scale)
        self.offset_ = np.asarray(offset, dtype=np.float64)
        self.scale_ = np.asarray(scale, dtype=np.float64)
        self.effective_method_ = effective
        self.n_features_in_ = X.shape[1]
        return self

    def describe(self):
        """One line saying which scaling is applied and, on sparse input, why."""
        check_is_fitted(self, "scale_")
        return {
            "standard": "standard (centred, divided by the training standard deviation)",
            "minmax": "minmax (training range mapped to [0, 1])",
            "none": "none",
            "standard-uncentered": "standard without centering (X is sparse and centering "
            "would make it dense): columns divided by their training standard deviation",
            "maxabs": "max-abs instead of minmax (X is sparse and a min offset would make it "
            "dense): columns divided by their largest training |value|",
        }[self.effective_method_]

    def _check_n_features(self, X):
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, the scaler was fitted on {self.n_features_in_}"
            )

    def transform(self, X):
        check_is_fitted(self, "scale_")
        if _issparse(X):
            X = _finite_sparse(X, "X")
            self._check_n_features(X)
            if np.any(self.offset_ != 0):
                return (_dense_of_sparse(X, "centering") - self.offset_) / self.scale_
            out = X.copy()
            out.data /= self.scale_[out.indices]
            return out
        X = _finite_matrix(X, "X")
        self._check_n_features(X)
        return (X - self.offset_) / self.scale_

    def inverse_transform(self, X):
        check_is_fitted(self, "scale_")
        if _issparse(X):
            X = _finite_sparse(X, "X")
            self._check_n_features(X)
            if np.any(self.offset_ != 0):
                return _dense_of_sparse(X, "un-centering") * self.scale_ + self.offset_
            out = X.copy()
            out.data *= self.scale_[out.indices]
            return out
        X = np.asarray(X, dtype=np.float64)
        return X * self.scale_ + self.offset_

    def to_dict(self):
        """JSON-able record (floats round-trip exactly through ``json``)."""
        check_is_fitted(self, "scale_")
        return {
            "method": self.method,
            "effective_method": self.effective_method_,
            "offset": [float(v) for v in self.offset_],
            "scale": [float(v) for v in self.scale_],
        }

    @classmethod
    def from_dict(cls, d):
        """Inverse of :meth:`to_dict`; validates the record (it may come from a file).
        Records written before ``effective_method`` existed read as ``method``."""
        if not isinstance(d, Mapping):
            raise ValueError("scaler record must be a dict")
        method = d.get("method")
        if method not in ("standard", "minmax", "none"):
            raise ValueError(f"scaler record: unknown method {method!r}")
        effective = d.get("effective_method", method)
        if effective not in cls._EFFECTIVE[method]:
            raise ValueError(
                f"scaler record: effective_method {effective!r} does not go with method "
                f"{method!r}"
            )
        try:
            offset = np.asarray(d["offset"], dtype=np.float64)
            scale = np.asarray(d["scale"], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"scaler record is malformed: {exc}") from None
        if offset.ndim != 1 or offset.shape != scale.shape:
            raise ValueError("scaler record: offset and scale must be lists of the same length")
        if not (np.isfinite(offset).all() and np.isfinite(scale).all() and (scale > 0).all()):
            raise ValueError("scaler record: offsets must be finite and scales finite and > 0")
        if effective != method and np.any(offset != 0):
            raise ValueError(f"scaler record: a {effective} scaling has zero offsets")
        obj = cls(method=method)
        obj.offset_ = offset
        obj.scale_ = scale
        obj.effective_method_ = effective
        obj.n_features_in_ = offset.shape[0]
        return obj


def _dense_offset_scale(X, method):
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is handled below
        if method == "standard":
            offset = X.mean(axis=0)
            scale = X.std(axis=0)
        elif method == "minmax":
            offset = X.min(axis=0)
            scale = X.max(axis=0) - offset
        else:
            offset = np.zeros(X.shape[1])
            scale = np.ones(X.shape[1])
    bad = ~(np.isfinite(offset) & np.isfinite(scale))
    if np.any(bad):
        # Finite features near the top of the float range (|x| ~ 1e300) overflow the
        # sum of squares (or max - min): recompute those columns on x / max|x| and
        # scale back, so that they are standardised rather than left unscaled.
        Xb = X[:, bad]
        m = np.max(np.abs(Xb), axis=0)
        m = np.where(m > 0, m, 1.0)
        Z = Xb / m
        if method == "standard":
            o, s = Z.mean(axis=0), Z.std(axis=0)
        else:
            o, s = Z.min(axis=0), Z.max(axis=0) - Z.min(axis=0)
        offset = np.array(offset, dtype=np.float64)
        scale = np.array(scale, dtype=np.float64)
        with np.errstate(over="ignore"):  # a range beyond the float range: cap it
            offset[bad] = o * m
            scale[bad] = np.minimum(s * m, np.finfo(np.float64).max)
    return offset, scale


def _sparse_divisor(X, method):
    """Divisor ``s`` and column magnitude (for the constant-column rule) of CSR ``X``
    without densifying it; see :class:`Scaler`."""
    from sklearn.utils.sparsefuncs import mean_variance_axis, min_max_axis

    d = X.shape[1]
    if method == "none":
        return np.ones(d), np.zeros(d)
    lo, hi = min_max_axis(X, axis=0)
    maxabs = np.maximum(np.abs(lo), np.abs(hi))
    if method == "minmax":
        return maxabs, maxabs
    with np.errstate(over="ignore", invalid="ignore"):
        mean, var = mean_variance_axis(X, axis=0)
        scale = np.sqrt(var)
    bad = ~(np.isfinite(mean) & np.isfinite(scale))
    if np.any(bad):
        # as in the dense case: |x| ~ 1e300 overflows the sum of squares; recompute the
        # columns on x / max|x| (a column-scaled copy of the stored values only)
        m = np.where(maxabs > 0, maxabs, 1.0)
        Z = X.copy()
        Z.data /= m[Z.indices]
        zmean, zvar = mean_variance_axis(Z, axis=0)
        with np.errstate(over="ignore"):
            mean = np.where(bad, zmean * m, mean)
            scale = np.where(bad, np.minimum(np.sqrt(zvar) * m, np.finfo(np.float64).max),
                             scale)
    return scale, np.abs(mean)


def _finite_matrix(X, name):
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    if not np.isfinite(X).all():
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"{name} has a non-finite value at row {i}, column {j}")
    return X


def _dense_of_sparse(X, what):
    n, d = X.shape
    if n * d > MAX_DENSE_ELEMENTS:
        raise ValueError(
            f"{what} a sparse X of {n} x {d} would make it dense (over {MAX_DENSE_ELEMENTS} "
            "values); fit the scaler on sparse rows (it then divides only) or use "
            "method='none'"
        )
    return X.toarray()


def _issparse(X):
    import scipy.sparse as sp

    return sp.issparse(X)


def _finite_sparse(X, name):
    """CSR float64 view (a copy only when the format or dtype changes) with finite stored
    values; errors name the first bad row and column."""
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}")
    try:
        X = X.tocsr().astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    finite = np.isfinite(X.data)
    if not finite.all():
        k = int(np.argmin(finite))
        i = int(np.searchsorted(X.indptr, k, side="right")) - 1
        raise ValueError(f"{name} has a non-finite value at row {i}, column {X.indices[k]}")
    return X


# --------------------------------------------------------------------------------------
# splits and targets


def train_test_split_seeded(X, y, test_size=0.2, random_state=0, stratify=True):
    """Reproducible train/test split (a thin wrapper of sklearn's ``train_test_split``).

    Parameters
    ----------
    X : array-like or scipy.sparse matrix, shape (n, d)
        A sparse matrix is split by row indexing (sklearn's ``_safe_indexing``): a CSR
        ``X`` gives CSR parts, never a dense copy.
    y : array-like, shape (n,)
    test_size : float in (0, 1) or int in [1, n-1]
    random_state : int
        The same seed gives the same split.
    stratify : bool
        Keep the class proportions in both parts when ``y`` is a classification target
        (binary or multiclass); ignored for a continuous target.

    Returns
    -------
    X_train, X_test, y_train, y_test
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
                    f"class {_py(lab)!r} has only {counts.min()} sample, too few for a stratified "
                    "split; pass stratify=False or add samples",
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

    Raises
    ------
    ValueError
        One class, more than two (unless ``one_vs_rest``), a ``positive`` label that does
        not occur, missing labels.
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
                f"target has {labels.size} classes ({_short_list(labels.tolist(), 6)}), "
                "a binary model needs two; choose one positive class (one-vs-rest)"
            )
        negative, positive = labels[0], labels[1]
    else:
        matches = [lab for lab in labels.tolist() if lab == positive or str(lab) == str(positive)]
        if not matches:
            raise ValueError(
                f"positive label {positive!r} is not in the target (labels: "
                f"{_short_list(labels.tolist(), 6)})"
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
    return BinaryTarget(y=out, negative=_py(negative), positive=_py(positive))


def _py(v):
    return v.item() if isinstance(v, np.generic) else v
