"""svmlight/libsvm files, kept sparse (CSR) when large and sparse."""

from __future__ import annotations

import os

import numpy as np

from .records import (
    MAX_DENSE_ELEMENTS,
    MAX_FEATURES,
    MISSING_HINT,
    SPARSE_AUTO_MAX_DENSITY,
    SPARSE_AUTO_MIN_ENTRIES,
    DataError,
    Dataset,
    NumberedNames,
    check_schema,
    looks_like_classes,
    py_scalar,
)


def read_svmlight(path, *, drop_missing, sparse, schema, features_only):
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
        sch = check_schema(schema)
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
                f"{MISSING_HINT}",
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
            f"{path}: the target has a single value {py_scalar(uniq[0])!r} (one class): "
            "nothing to learn",
            path=path,
            column="target",
        )
    kind = "svmlight, sparse CSR" if keep_sparse else "svmlight"
    return Dataset(
        X=X,
        y=None if features_only else y,
        feature_names=names,
        target_names=uniq.tolist() if looks_like_classes(y, uniq) and not features_only
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


def check_sparse_option(sparse):
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
