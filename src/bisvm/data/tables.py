"""CSV/TSV and Parquet tables: :func:`read_table` and the column checks behind it."""

from __future__ import annotations

import csv
import io
import os

import numpy as np

from .records import (
    MISSING_HINT,
    DataError,
    Dataset,
    check_schema,
    looks_like_classes,
    short_list,
    table_format,
)
from .svmlight import check_sparse_option, read_svmlight


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
        The file to read.
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
        For svmlight files only (CSV and Parquet tables are dense): ``True`` keeps ``X`` as the
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
        The features, the target and what was done to the columns (:attr:`Dataset.notes`).

    Raises
    ------
    DataError
        Missing or empty file, no rows, ragged CSV rows, bad encoding, duplicate column
        names, missing target column, a column that cannot be parsed, missing or
        infinite values, a constant target.

    Examples
    --------
    >>> import os, tempfile
    >>> from bisvm import read_table
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     for line in ["size,colour,label", "1.5,red,yes", "2.0,blue,no", "0.5,red,no"]:
    ...         print(line, file=f)
    >>> ds = read_table(path, target="label")
    >>> ds.feature_names
    ['size', 'colour=blue', 'colour=red']
    >>> ds.y.tolist()
    ['yes', 'no', 'no']
    """
    path_str = os.fspath(path) if not isinstance(path, str) else path
    check_sparse_option(sparse)
    kind = table_format(path_str, fmt)
    if not os.path.exists(path_str):
        raise DataError(f"{path_str}: no such file", path=path_str)
    if os.path.isdir(path_str):
        raise DataError(f"{path_str}: is a directory, not a data file", path=path_str)
    if os.path.getsize(path_str) == 0:
        raise DataError(f"{path_str}: empty file", path=path_str)
    if kind == "svmlight":
        return read_svmlight(path_str, drop_missing=drop_missing, sparse=sparse, schema=schema,
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
    if len(frame) == 0:
        raise DataError(f"{path}: no data rows", path=path)
    if schema is not None:
        schema = check_schema(schema)
    target, feature_cols, forced = _columns(frame, path, target=target, categorical=categorical,
                                            drop_columns=drop_columns, schema=schema)
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
                f"{path}: column {col!r}, {_where(first, lines)}: {what}; {MISSING_HINT}",
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

    X, feature_names, encoded, categories = _encode(path, lines, feature_cols, kinds, keep,
                                                    schema, notes)
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
        if looks_like_classes(y, uniq):
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


def _columns(frame, path, *, target, categorical, drop_columns, schema):
    """The target column (or False), the feature columns and the columns forced to be
    categorical, checked against the frame (and the model's checked ``schema``)."""
    names = [str(c) for c in frame.columns]
    if schema is not None:
        if target is None:
            target = schema["target"] if schema["target"] in names else False
    # target column
    if target is None:
        target = names[-1]
    if target is not False:
        target = str(target)
        if target not in names:
            raise DataError(
                f"{path}: no target column {target!r}; columns are {short_list(names)}",
                path=path,
                column=target,
            )
    drop = {str(c) for c in drop_columns}
    unknown = sorted(drop - set(names))
    if unknown:
        raise DataError(
            f"{path}: cannot drop column {unknown[0]!r}: no such column; columns are "
            f"{short_list(names)}",
            path=path,
            column=unknown[0],
        )
    if schema is not None:
        missing_cols = [c for c in schema["columns"] if c not in names]
        if missing_cols:
            raise DataError(
                f"{path}: column {missing_cols[0]!r} used by the model is missing; columns are "
                f"{short_list(names)}",
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
                    f"{short_list(feature_cols)}",
                    path=path,
                    column=bad[0],
                )
    if not feature_cols:
        raise DataError(f"{path}: no feature columns besides the target {target!r}", path=path)
    return target, feature_cols, forced


def _encode(path, lines, feature_cols, kinds, keep, schema, notes):
    """X (numeric columns as they are, categorical ones one-hot; rows ``keep``), its
    feature names, and the encoded columns and categories; with a ``schema`` the
    categories of training, an unseen one an error naming the row."""
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
                    f"was not seen in training (known: {short_list(cats, 8)})",
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
    return X, feature_names, encoded, categories


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
