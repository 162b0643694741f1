"""Model files: fitted estimators as data (JSON + npz), never pickle.

The package: this module writes and reads files (:func:`save_model`, :func:`load_model`)
and checks round trips; :mod:`._archive` reads the zip container and its arrays
defensively, :mod:`._codec` maps values to tagged JSON and back, :mod:`._sparse` does
the same for CSR matrices, :mod:`._registry` holds the allow-list of classes.

Format ``bisvm-model``, versions 1 and 2
----------------------------------------
A model file (extension ``.bisvm``) is a zip archive with exactly two members:

``meta.json`` (UTF-8, strict JSON: no NaN/Infinity literals)
    ``format``          ``"bisvm-model"``
    ``format_version``  ``1``, or ``2`` when the file holds a sparse matrix (the lowest
                        version that describes the file is written, so models without
                        sparse matrices stay readable by a bisvm that reads version 1)
    ``bisvm_version``   version of bisvm that wrote the file
    ``environment``     versions of Python, numpy and scikit-learn (information only)
    ``estimator``       an *estimator node* (below)
    ``feature_names``   list of str, or null
    ``scaler``          :meth:`bisvm.data.Scaler.to_dict` record, or null
    ``schema``          :attr:`bisvm.data.Dataset.schema` record, or null
    ``extra``           any value (encoded as below), or null
    ``arrays``          for each array in ``arrays.npz``: ``{"shape": [...], "dtype": "<f8",
                        "sha256": hex digest of the C-order bytes, "object": bool}``

``arrays.npz``
    a standard numpy ``.npz`` archive (written by :func:`numpy.savez`, read member by member
    with :func:`numpy.load` and ``allow_pickle=False``) holding every array of the model,
    under keys that say where it belongs (``attr/coef_``,
    ``attr/estimators_/0/attr/coef_``, ``param/...``, ``extra/...``).

An *estimator node* is ``{"$estimator": {"class": "module.Class", "params": {name: value},
"attributes": {name: value}}}``: the constructor parameters (``get_params(deep=False)``)
and the fitted attributes — every instance attribute whose name ends in ``_`` and does
not start with ``_``, plus the names a class lists in ``_persist_attrs`` (for private state
its ``predict`` needs). Values are JSON with these tagged forms:

==========================================  ===============================================
``{"$array": key}``                         numpy array stored in ``arrays.npz``
``{"$scalar": key}``                        numpy scalar, stored as a 0-d array
``{"$tuple": [...]}``                       tuple
``{"$dict": [[key, value], ...]}``          dict whose keys are not all plain strings
``{"$float": "nan" | "inf" | "-inf"}``      non-finite float
``{"$dtype": "<f8"}``                       numpy dtype
``{"$estimator": {...}}``                   nested estimator (one-vs-rest sub-models, ...)
``{"$record": {"class": c, "fields": {}}}``  dataclass instance (e.g. a history entry)
``{"$csr": {...}}``                         scipy CSR matrix (version 2): ``class``,
                                            ``shape`` and the array keys of ``data``,
                                            ``indices``, ``indptr`` (:mod:`._sparse`)
==========================================  ===============================================

Object arrays are stored only when every element is a string (e.g. ``classes_`` of string
labels): they are written as unicode arrays with ``"object": true`` and turned back into
object arrays on loading. Anything else (functions, arbitrary objects, other object arrays)
makes :func:`save_model` raise :class:`TypeError` naming the attribute.

Why loading cannot run code
---------------------------
Nothing is unpickled (``allow_pickle=False``; object dtypes in an ``.npy`` header are
refused before reading) and nothing is evaluated. The class named in the file is looked up
in an allow-list: classes registered with :func:`register_estimator`, and estimator classes
and dataclasses defined in bisvm's own modules (resolved by importing that ``bisvm.*``
module, never any other). The constructor receives only JSON-decoded values, and only
attribute names that are fitted-attribute names of the allowed form are set.

What loading checks
-------------------
The zip container (members, compression, declared sizes against a cap, CRCs), the format
name and version, each array's ``.npy`` header (dtype kind, shape × itemsize = the bytes
present) before any allocation, then shape, dtype and sha256 against ``meta.json``, the
class against the allow-list and the parameter names against its constructor, and each
sparse matrix's structure (``indptr`` from 0, non-decreasing, to the number of entries;
column indices in range) before it is built. Any failure
raises :class:`ModelFileError` (a :class:`ValueError`) with one line naming the problem.
The sha256 digests detect corruption and careless edits, not a deliberate forgery (the file
is not signed); a forged file can still only describe an allowed estimator with data.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import struct
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from bisvm.persistence._archive import read_arrays, read_member, sniff_foreign, zip_members
from bisvm.persistence._codec import Decoder, Encoder, fitted_attribute_names
from bisvm.persistence._registry import (
    ModelFileError,
    class_path,
    is_registered,
    register_estimator,
    unregister_estimator,
)
from bisvm.persistence._sparse import same_sparse

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "LoadedModel",
    "ModelFileError",
    "check_round_trip",
    "class_path",
    "load_model",
    "is_registered",
    "register_estimator",
    "unregister_estimator",
    "save_model",
]

FORMAT_NAME = "bisvm-model"
#: The newest format version this bisvm reads (and writes, when a file needs it).
FORMAT_VERSION = 2

#: Largest ``meta.json`` accepted (bytes, uncompressed).
MAX_META_BYTES = 16 * 2**20
#: Default cap on the uncompressed size of ``arrays.npz`` and of all arrays in it.
MAX_MODEL_BYTES = 2**30

_MEMBERS = ("meta.json", "arrays.npz")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


# --------------------------------------------------------------------------------------
# saving


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """What :func:`load_model` returns.

    Attributes
    ----------
    estimator : estimator
        The fitted estimator, predicting bit for bit what the saved one did.
    feature_names : list of str or None
        Names of the input columns, as saved.
    scaler : bisvm.data.Scaler or None
        Apply ``scaler.transform`` to raw features before ``estimator``.
    schema : dict or None
        :attr:`bisvm.data.Dataset.schema`; pass to ``read_table(..., schema=...)``.
    extra : object
        The ``extra`` value given to :func:`save_model`.
    meta : dict
        The raw ``meta.json`` (format and bisvm versions, environment, ...).
    """

    estimator: object
    feature_names: list | None
    scaler: object
    schema: dict | None
    extra: object
    meta: dict


def save_model(estimator, path, *, feature_names=None, scaler=None, schema=None, extra=None):
    """Write a fitted estimator to a model file.

    The file is data (JSON and ``.npz`` arrays in a zip archive, described in
    :mod:`bisvm.persistence`), never a pickle, so loading it cannot run code.

    Parameters
    ----------
    estimator : estimator
        A bisvm estimator, or one of a class registered with :func:`register_estimator`.
        Fitted attributes that are estimators (lists of one-vs-rest sub-models, ...) are
        stored recursively.
    path : str or path-like
        Written atomically (a temporary file in the same directory, then renamed).
    feature_names : sequence of str, optional
        Names of the estimator's input columns, one per feature.
    scaler : bisvm.data.Scaler or its ``to_dict()`` record, optional
        The scaling applied to raw features before the estimator, stored with it.
    schema : dict, optional
        :attr:`bisvm.data.Dataset.schema` of the training table.
    extra : object, optional
        Anything made of the storable values (arrays, numbers, strings, lists, dicts).

    Returns
    -------
    str
        The path written.

    Raises
    ------
    TypeError
        A fitted attribute, parameter or ``extra`` value that cannot be stored (named), or
        an estimator class that is not allowed.
    ValueError
        ``feature_names`` or the scaler disagree with the estimator's number of features.

    See Also
    --------
    load_model : Read the file back.

    Examples
    --------
    >>> import os, tempfile
    >>> from bisvm import SVC, load_dataset, load_model, save_model
    >>> ds = load_dataset("iris")
    >>> clf = SVC().fit(ds.X, ds.y)
    >>> path = save_model(clf, os.path.join(tempfile.mkdtemp(), "iris.bisvm"),
    ...                   feature_names=ds.feature_names)
    >>> loaded = load_model(path)
    >>> bool((loaded.estimator.predict(ds.X) == clf.predict(ds.X)).all())
    True
    """
    from bisvm._version import __version__
    from bisvm.data import Scaler, check_schema

    if not hasattr(estimator, "get_params"):
        raise TypeError(f"save_model expects an estimator, got {type(estimator).__name__}")
    enc = Encoder()
    est_node = enc.estimator(estimator, "", type(estimator).__name__)
    n_in = getattr(estimator, "n_features_in_", None)
    if feature_names is not None:
        feature_names = [str(f) for f in feature_names]
        if n_in is not None and len(feature_names) != n_in:
            raise ValueError(
                f"feature_names has {len(feature_names)} names, the estimator was fitted on "
                f"{n_in} features"
            )
    scaler_rec = None
    if scaler is not None:
        sc = Scaler.from_dict(scaler) if isinstance(scaler, Mapping) else scaler
        if not isinstance(sc, Scaler):
            raise TypeError(f"scaler must be a bisvm.data.Scaler, got {type(scaler).__name__}")
        scaler_rec = sc.to_dict()
        if n_in is not None and len(scaler_rec["scale"]) != n_in:
            raise ValueError(
                f"the scaler has {len(scaler_rec['scale'])} features, the estimator {n_in}"
            )
    import sklearn

    meta = {
        "format": FORMAT_NAME,
        "format_version": enc.version,
        "bisvm_version": __version__,
        "environment": {
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "scikit-learn": sklearn.__version__,
        },
        "estimator": est_node,
        "feature_names": feature_names,
        "scaler": scaler_rec,
        "schema": None if schema is None else check_schema(schema),
        "extra": None if extra is None else enc.value(extra, "extra", "extra"),
        "arrays": enc.entries,
    }
    meta_bytes = json.dumps(meta, allow_nan=False, ensure_ascii=False, indent=1).encode()
    npz = io.BytesIO()
    np.savez(npz, allow_pickle=False, **enc.arrays)

    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bisvm-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w") as zf:
            for name, data in zip(_MEMBERS, (meta_bytes, npz.getvalue())):
                info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# --------------------------------------------------------------------------------------
# loading



def load_model(path, *, max_bytes=MAX_MODEL_BYTES):
    """Read a model file written by :func:`save_model`.

    Every part of the file is checked before it is used (see :mod:`bisvm.persistence`);
    only allowed classes are built, from JSON values and arrays.

    Parameters
    ----------
    path : str or path-like
        The model file.
    max_bytes : int
        Cap on the uncompressed size of the arrays (defends against zip bombs and headers
        that declare huge arrays).

    Returns
    -------
    LoadedModel
        The fitted estimator with the feature names, scaler, schema and extra data
        stored beside it.

    Raises
    ------
    ModelFileError
        Missing, truncated, tampered, foreign (another zip, a pickle, random bytes) or
        too large a file, an unsupported format version, an estimator class that is not
        allowed; the message is one line naming the file and the problem.

    See Also
    --------
    save_model : Write a model file.

    Examples
    --------
    >>> import os, tempfile
    >>> from bisvm import LinearSVC, load_dataset, load_model, save_model
    >>> ds = load_dataset("breast-cancer")
    >>> path = os.path.join(tempfile.mkdtemp(), "model.bisvm")
    >>> _ = save_model(LinearSVC().fit(ds.X, ds.y), path, schema=ds.schema)
    >>> loaded = load_model(path)
    >>> type(loaded.estimator).__name__, loaded.schema["target"]
    ('LinearSVC', 'target')
    """
    path = os.fspath(path)
    try:
        return _load(path, max_bytes)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
        EOFError,
        OSError,
        KeyError,
        IndexError,
        ValueError,
        TypeError,
        AttributeError,
        UnicodeDecodeError,
        RecursionError,
        NotImplementedError,
        OverflowError,
        MemoryError,
        struct.error,
    ) as exc:
        detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise ModelFileError(
            f"{path}: corrupt or truncated model file ({type(exc).__name__}"
            f"{': ' + detail if detail else ''})"
        ) from None


def _load(path, max_bytes):
    from bisvm.data import Scaler, check_schema

    if not os.path.exists(path):
        raise ModelFileError("no such file")
    if os.path.isdir(path):
        raise ModelFileError("is a directory, not a model file")
    size = os.path.getsize(path)
    if size == 0:
        raise ModelFileError("empty file, not a bisvm model")
    if size > max_bytes + MAX_META_BYTES + 2**20:
        raise ModelFileError(f"file of {size} bytes exceeds the limit of {max_bytes} bytes")
    with open(path, "rb") as fh:
        raw = fh.read()
    if not zipfile.is_zipfile(io.BytesIO(raw)):
        raise ModelFileError(f"not a bisvm model file: {sniff_foreign(raw[:16])}")
    zf = zipfile.ZipFile(io.BytesIO(raw))
    members = zip_members(zf, "the archive")
    if "meta.json" not in members:
        names = sorted(members)
        kind = (
            "a numpy .npz archive"
            if names and all(n.endswith(".npy") for n in names)
            else "a zip archive"
        )
        raise ModelFileError(
            f"not a bisvm model file: {kind} without meta.json "
            f"(members: {', '.join(n[:40] for n in names[:5]) or 'none'})"
        )
    unexpected = sorted(set(members) - set(_MEMBERS))
    if unexpected:
        raise ModelFileError(f"unexpected member {unexpected[0][:80]!r} in the archive")
    if "arrays.npz" not in members:
        raise ModelFileError("arrays.npz is missing from the archive")
    meta_bytes = read_member(zf, members["meta.json"], MAX_META_BYTES, "meta.json")
    try:
        meta = json.loads(meta_bytes.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"meta.json is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        fmt = meta.get("format") if isinstance(meta, dict) else None
        raise ModelFileError(f"not a bisvm model file (format {str(fmt)[:40]!r})")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(f"invalid format version {str(version)[:20]!r}")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"format version {version} was written by a newer bisvm "
            f"({str(meta.get('bisvm_version'))[:20]}); this bisvm reads version "
            f"{FORMAT_VERSION}: upgrade bisvm"
        )
    entries = meta.get("arrays")
    if not isinstance(entries, dict):
        raise ModelFileError("meta.json: 'arrays' is missing or malformed")
    npz_bytes = read_member(zf, members["arrays.npz"], max_bytes, "arrays.npz")
    arrays = read_arrays(npz_bytes, entries, max_bytes)

    dec = Decoder(arrays, entries, version)
    node = meta.get("estimator")
    if not (isinstance(node, dict) and set(node) == {"$estimator"}):
        raise ModelFileError("meta.json: 'estimator' is missing or malformed")
    estimator = dec.value(node, "estimator")
    extra = dec.value(meta.get("extra"), "extra")
    unused = sorted(set(arrays) - dec.used)
    if unused:
        raise ModelFileError(f"array {unused[0][:80]!r} is not referenced by meta.json")

    n_in = getattr(estimator, "n_features_in_", None)
    feature_names = meta.get("feature_names")
    if feature_names is not None:
        if not (isinstance(feature_names, list) and all(isinstance(f, str) for f in feature_names)):
            raise ModelFileError("meta.json: 'feature_names' must be a list of strings")
        if isinstance(n_in, int) and len(feature_names) != n_in:
            raise ModelFileError(
                f"meta.json: {len(feature_names)} feature names for an estimator of {n_in} features"
            )
    scaler = None
    if meta.get("scaler") is not None:
        try:
            scaler = Scaler.from_dict(meta["scaler"])
        except ValueError as exc:
            raise ModelFileError(f"meta.json: {exc}") from None
        if isinstance(n_in, int) and scaler.n_features_in_ != n_in:
            raise ModelFileError(
                f"meta.json: the scaler has {scaler.n_features_in_} features, the estimator {n_in}"
            )
    schema = meta.get("schema")
    if schema is not None:
        try:
            schema = check_schema(schema)
        except ValueError as exc:
            raise ModelFileError(f"meta.json: {exc}") from None
    return LoadedModel(
        estimator=estimator,
        feature_names=feature_names,
        scaler=scaler,
        schema=schema,
        extra=extra,
        meta=meta,
    )


def _reject_constant(name):
    raise ModelFileError(f"meta.json contains the non-standard JSON constant {name}")


# --------------------------------------------------------------------------------------
# test helper

_OUTPUT_METHODS = (
    "predict",
    "decision_function",
    "predict_proba",
    "predict_log_proba",
    "transform",
    "score_samples",
)


def _same(a, b):
    if sp.issparse(a) or sp.issparse(b):
        return sp.issparse(a) and sp.issparse(b) and same_sparse(a, b)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "O":
        return a.tolist() == b.tolist()
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _assert_same_value(a, b, where):
    from sklearn.base import BaseEstimator

    if isinstance(a, BaseEstimator):
        assert type(a) is type(b), f"{where}: class {type(b)} after loading, {type(a)} before"
        for name in fitted_attribute_names(a):
            assert name in vars(b), f"{where}.{name} is missing after loading"
            _assert_same_value(getattr(a, name), getattr(b, name), f"{where}.{name}")
        return
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), f"{where}: {type(b)} after loading, {type(a)} before"
        for f in dataclasses.fields(a):
            _assert_same_value(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
        return
    if sp.issparse(a):
        assert _same(a, b), f"{where} differs after loading"
        return
    if isinstance(a, np.ndarray | np.generic):
        assert _same(a, b) and type(a) is type(b), f"{where} differs after loading"
        return
    if isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b), f"{where} differs after loading"
        for i, (u, v) in enumerate(zip(a, b)):
            _assert_same_value(u, v, f"{where}[{i}]")
        return
    if isinstance(a, dict):
        assert type(b) is dict and list(a) == list(b), f"{where} keys differ after loading"
        for k in a:
            _assert_same_value(a[k], b[k], f"{where}[{k!r}]")
        return
    if isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), f"{where} differs after loading"
        return
    assert type(a) is type(b) and a == b, f"{where}: {b!r} after loading, {a!r} before"


def check_round_trip(estimator, X, path=None, **save_kwargs):
    """Save, load and check that the loaded estimator is the same, bit for bit.

    A reusable test helper: every fitted attribute must come back with the same type,
    dtype, shape and bytes, and every output method the estimator has (``predict``,
    ``decision_function``, ``predict_proba``, ``predict_log_proba``, ``transform``,
    ``score_samples``) must return identical bytes on ``X``.

    Parameters
    ----------
    estimator : fitted estimator
    X : array-like
        Rows to predict.
    path : str or path-like, optional
        Where to write the file (default: a temporary directory, removed afterwards).
    **save_kwargs
        Passed to :func:`save_model`.

    Returns
    -------
    LoadedModel

    Raises
    ------
    AssertionError
        Naming the attribute or method that differs.
    """
    if path is None:
        with tempfile.TemporaryDirectory() as d:
            return check_round_trip(estimator, X, os.path.join(d, "model.bisvm"), **save_kwargs)
    save_model(estimator, path, **save_kwargs)
    loaded = load_model(path)
    est = loaded.estimator
    name = type(estimator).__name__
    assert type(est) is type(estimator), f"loaded a {type(est).__name__}, saved a {name}"
    assert repr(est.get_params(deep=False)) == repr(estimator.get_params(deep=False)), (
        f"{name}: parameters differ after loading"
    )
    _assert_same_value(estimator, est, name)
    checked = 0
    for method in _OUTPUT_METHODS:
        if not hasattr(estimator, method):
            continue
        before = getattr(estimator, method)(X)
        after = getattr(est, method)(X)
        assert _same(before, after), f"{name}.{method} differs after loading"
        checked += 1
    assert checked, f"{name} has none of {', '.join(_OUTPUT_METHODS)}"
    return loaded
