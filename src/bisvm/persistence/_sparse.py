r"""Sparse matrices in model files (format version 2): scipy CSR as its three arrays.

A CSR matrix of shape :math:`(m, n)` with :math:`z` stored entries is the triple
(``data`` of length :math:`z`, ``indices`` of length :math:`z`, ``indptr`` of length
:math:`m + 1`): row :math:`i` holds ``data[indptr[i]:indptr[i+1]]`` in the columns
``indices[indptr[i]:indptr[i+1]]`` (scipy's ``csr_matrix``/``csr_array``; the format of
LIBSVM's sparse models and of scikit-learn's ``support_vectors_`` after a sparse fit).
In ``meta.json`` it is the node

.. code-block:: json

    {"$csr": {"class": "csr_matrix", "shape": [m, n],
              "data": key, "indices": key, "indptr": key}}

whose keys name arrays of ``arrays.npz`` (checked like every array there: header, shape,
dtype, sha256). The three arrays are written exactly as the matrix holds them (dtype of
``data``, int32/int64 indices, row order within a row), so a loaded matrix is the saved one
bit for bit. On loading the triple must be a consistent CSR structure — ``indptr``
starting at 0, non-decreasing and ending at :math:`z`, every column index in
:math:`[0, n)` — or the file is refused: an inconsistent triple would otherwise give
wrong products or read outside the arrays in compiled code.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bisvm.persistence._registry import ModelFileError

__all__ = ["CSR_CLASSES", "csr_parts", "build_csr", "same_sparse"]

#: the scipy classes a ``$csr`` node may name, and back
CSR_CLASSES = {"csr_matrix": sp.csr_matrix, "csr_array": sp.csr_array}

_DATA_KINDS = "biufc"
_MAX_DIM = 2**62


def csr_parts(m, where):
    """``(class name, shape, {"data": ..., "indices": ..., "indptr": ...})`` of a CSR
    matrix to store; ``TypeError`` (naming ``where``) for any other sparse format."""
    name = next((n for n, c in CSR_CLASSES.items() if type(m) is c), None)
    if name is None:
        raise TypeError(
            f"{where}: a {type(m).__module__}.{type(m).__qualname__} cannot be stored in a "
            "model file (sparse matrices only as scipy csr_matrix or csr_array; convert with "
            ".tocsr())"
        )
    if m.data.dtype.kind not in _DATA_KINDS:
        raise TypeError(f"{where}: sparse matrix of dtype {m.data.dtype} cannot be stored")
    parts = {"data": m.data, "indices": m.indices, "indptr": m.indptr}
    return name, [int(m.shape[0]), int(m.shape[1])], parts


def _check_shape(shape, where):
    if not (isinstance(shape, list) and len(shape) == 2
            and all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < _MAX_DIM
                    for d in shape)):
        raise ModelFileError(f"{where}: sparse matrix shape must be two non-negative "
                             f"integers, got {str(shape)[:60]}")
    return shape


def build_csr(cls_name, shape, data, indices, indptr, where):
    """The CSR matrix of a stored triple, after checking that it is one.

    Raises
    ------
    ModelFileError
        Unknown class, malformed shape, arrays of the wrong dimension or dtype kind, or an
        inconsistent structure (``indptr`` not starting at 0, decreasing, not ending at
        ``len(data)``; an index outside ``[0, n_columns)``), naming ``where``.
    """
    cls = CSR_CLASSES.get(cls_name) if isinstance(cls_name, str) else None
    if cls is None:
        raise ModelFileError(f"{where}: sparse class {str(cls_name)[:40]!r} is not allowed "
                             f"(one of {', '.join(CSR_CLASSES)})")
    n_rows, n_cols = _check_shape(shape, where)
    if data.ndim != 1 or data.dtype.kind not in _DATA_KINDS:
        raise ModelFileError(f"{where}: CSR data must be a 1-d numeric array")
    for name, a in (("indices", indices), ("indptr", indptr)):
        if a.ndim != 1 or a.dtype.kind != "i" or a.dtype.itemsize not in (4, 8):
            raise ModelFileError(f"{where}: CSR {name} must be a 1-d int32 or int64 array")
    if indptr.size != n_rows + 1:
        raise ModelFileError(f"{where}: CSR indptr has {indptr.size} entries for {n_rows} "
                             f"rows (needs {n_rows + 1})")
    if indices.size != data.size:
        raise ModelFileError(f"{where}: CSR indices ({indices.size}) and data ({data.size}) "
                             "differ in length")
    if indptr[0] != 0 or indptr[-1] != data.size:
        raise ModelFileError(f"{where}: CSR indptr must run from 0 to {data.size} (the number "
                             f"of stored entries), runs from {indptr[0]} to {indptr[-1]}")
    if np.any(np.diff(indptr) < 0):
        raise ModelFileError(f"{where}: CSR indptr is not non-decreasing (rows of negative "
                             "length)")
    if indices.size and (indices.min() < 0 or indices.max() >= n_cols):
        raise ModelFileError(f"{where}: CSR column index out of range [0, {n_cols}) "
                             f"(min {indices.min()}, max {indices.max()})")
    m = cls((n_rows, n_cols), dtype=data.dtype)
    # set the arrays themselves: the (data, indices, indptr) constructor may narrow int64
    # indices to int32, and a loaded matrix must be the saved one bit for bit
    m.data, m.indices, m.indptr = data, indices, indptr
    return m


def same_sparse(a, b):
    """Whether two sparse matrices are the same object-for-object: class, shape, and the
    dtype and bytes of each stored array."""
    if type(a) is not type(b) or a.shape != b.shape or a.format != b.format:
        return False
    if a.format != "csr":
        return (a != b).nnz == 0
    return all(
        u.dtype == v.dtype and u.shape == v.shape
        and np.ascontiguousarray(u).tobytes() == np.ascontiguousarray(v).tobytes()
        for u, v in ((a.data, b.data), (a.indices, b.indices), (a.indptr, b.indptr))
    )
