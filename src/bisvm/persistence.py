"""Model files: fitted estimators as data (JSON + npz), never pickle.

Format ``bisvm-model``, version 1
---------------------------------
A model file (extension ``.bisvm``) is a zip archive with exactly two members:

``meta.json`` (UTF-8, strict JSON: no NaN/Infinity literals)
    ``format``          ``"bisvm-model"``
    ``format_version``  ``1``
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
class against the allow-list and the parameter names against its constructor. Any failure
raises :class:`ModelFileError` (a :class:`ValueError`) with one line naming the problem.
The sha256 digests detect corruption and careless edits, not a deliberate forgery (the file
is not signed); a forged file can still only describe an allowed estimator with data.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import io
import json
import math
import os
import re
import struct
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "LoadedModel",
    "ModelFileError",
    "check_round_trip",
    "load_model",
    "register_estimator",
    "save_model",
]

FORMAT_NAME = "bisvm-model"
FORMAT_VERSION = 1

#: Largest ``meta.json`` accepted (bytes, uncompressed).
MAX_META_BYTES = 16 * 2**20
#: Default cap on the uncompressed size of ``arrays.npz`` and of all arrays in it.
MAX_MODEL_BYTES = 2**30

_MEMBERS = ("meta.json", "arrays.npz")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_ARRAY_KINDS = "biufcUS"
_ATTR_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*_$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_REGISTRY: dict[str, type] = {}


class ModelFileError(ValueError):
    """A model file is missing, truncated, tampered with, foreign or of another version."""


def class_path(cls):
    """``"module.QualName"`` of a class, as stored in model files."""
    return f"{cls.__module__}.{cls.__qualname__}"


def register_estimator(cls=None, *, name=None):
    """Allow a class to be stored in and loaded from model files.

    Use as a decorator (``@register_estimator``) or a call (``register_estimator(cls)``).
    bisvm's own estimator classes and dataclass records (such as a fit's history entries)
    are allowed without it; registering is how tests and applications allow others (e.g.
    scikit-learn's estimators, or a dataclass of their own). Registration is by class path,
    so a file names its class as ``module.QualName``.

    Parameters
    ----------
    cls : type
    name : str, optional
        Class path to register under (default :func:`class_path` of ``cls``).

    Returns
    -------
    cls
    """

    def add(c):
        if not isinstance(c, type) or not (hasattr(c, "get_params") or dataclasses.is_dataclass(c)):
            raise TypeError(f"register_estimator expects an estimator or dataclass type, got {c!r}")
        _REGISTRY[name or class_path(c)] = c
        return c

    return add if cls is None else add(cls)


def _is_kind(cls, kind):
    from sklearn.base import BaseEstimator

    if not isinstance(cls, type):
        return False
    if kind == "record":
        return dataclasses.is_dataclass(cls)
    return issubclass(cls, BaseEstimator)


def _is_bisvm_class(cls, kind):
    mod = getattr(cls, "__module__", "") or ""
    return _is_kind(cls, kind) and (mod == "bisvm" or mod.startswith("bisvm."))


def _allowed_for_save(cls, kind):
    path = class_path(cls)
    return _REGISTRY.get(path) is cls or (_is_bisvm_class(cls, kind) and "<" not in path)


def _resolve_class(path, kind="estimator"):
    """Class for a stored path: the registry, else a bisvm module's own class of that kind
    (``"estimator"``: a scikit-learn estimator; ``"record"``: a dataclass)."""
    if not isinstance(path, str):
        raise ModelFileError(f"{kind} class must be a string, got {type(path).__name__}")
    if path in _REGISTRY:
        if not _is_kind(_REGISTRY[path], kind):
            raise ModelFileError(f"{path!r} is not an {kind} class")
        return _REGISTRY[path]
    module, _, name = path.rpartition(".")
    parts = module.split(".")
    if (
        parts[0] != "bisvm"
        or not all(_IDENT_RE.match(p) for p in parts)
        or not _IDENT_RE.match(name)
        or name.startswith("_")
    ):
        raise ModelFileError(
            f"estimator class {path[:120]!r} is not allowed: only bisvm estimators and "
            "classes registered with bisvm.persistence.register_estimator can be loaded"
        )
    try:
        mod = importlib.import_module(module)
    except ImportError:
        raise ModelFileError(
            f"estimator class {path!r}: module {module!r} does not exist in this bisvm"
        ) from None
    cls = getattr(mod, name, None)
    if not _is_bisvm_class(cls, kind) or cls.__module__ != module:
        raise ModelFileError(f"{path!r} is not a bisvm {kind} class")
    return cls


# --------------------------------------------------------------------------------------
# encoding


def _sha256(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


class _Encoder:
    """Turns values into JSON, moving arrays into ``self.arrays``."""

    def __init__(self):
        self.arrays = {}
        self.entries = {}

    def _store(self, key, a, where, *, object_as_str=False):
        key = key if key not in self.arrays else f"{key}~{len(self.arrays)}"
        if a.dtype.kind not in _ARRAY_KINDS or a.dtype.names is not None:
            raise TypeError(
                f"{where}: arrays of dtype {a.dtype} cannot be stored in a model file "
                "(numbers, booleans and strings only)"
            )
        self.arrays[key] = a
        self.entries[key] = {
            "shape": list(a.shape),
            "dtype": a.dtype.str,
            "sha256": _sha256(a),
            "object": object_as_str,
        }
        return key

    def array(self, a, key, where):
        if a.dtype.kind == "O":
            if not all(isinstance(v, str) for v in a.flat):
                raise TypeError(
                    f"{where}: object array with non-string elements cannot be stored in a "
                    "model file (no pickle)"
                )
            s = a.astype(str) if a.size else np.empty(a.shape, dtype="<U1")
            return {"$array": self._store(key, s, where, object_as_str=True)}
        return {"$array": self._store(key, a, where)}

    def value(self, v, key, where):
        from sklearn.base import BaseEstimator

        # numpy first: np.float64 is a float and np.str_ a str, but must come back as such
        if isinstance(v, np.ndarray):
            return self.array(v, key, where)
        if isinstance(v, np.generic):
            a = np.asarray(v)
            if a.dtype.kind not in _ARRAY_KINDS:
                raise TypeError(f"{where}: numpy scalar of dtype {a.dtype} cannot be stored")
            return {"$scalar": self._store(key, a, where)}
        if v is None or isinstance(v, bool | str | int):
            return v
        if isinstance(v, float):
            if math.isfinite(v):
                return v
            return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
        if isinstance(v, np.dtype):
            return {"$dtype": v.str}
        if isinstance(v, type) and issubclass(v, np.generic):
            return {"$dtype": np.dtype(v).str, "type": True}
        if isinstance(v, tuple):
            return {
                "$tuple": [self.value(x, f"{key}/{i}", f"{where}[{i}]") for i, x in enumerate(v)]
            }
        if isinstance(v, list):
            return [self.value(x, f"{key}/{i}", f"{where}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, dict):
            if all(isinstance(k, str) and not k.startswith("$") for k in v):
                return {k: self.value(x, f"{key}/{k}", f"{where}[{k!r}]") for k, x in v.items()}
            items = []
            for i, (k, x) in enumerate(v.items()):
                kk = self.value(k, f"{key}/k{i}", f"{where} key {k!r}")
                if isinstance(kk, dict) and ("$array" in kk or "$estimator" in kk):
                    raise TypeError(f"{where}: dict key {k!r} cannot be stored")
                items.append([kk, self.value(x, f"{key}/v{i}", f"{where}[{k!r}]")])
            return {"$dict": items}
        if isinstance(v, BaseEstimator):
            return self.estimator(v, key, where)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self.record(v, key, where)
        raise TypeError(
            f"{where}: a {type(v).__module__}.{type(v).__qualname__} cannot be stored in a "
            "model file (only arrays, numbers, strings, bools, None, lists, tuples, dicts "
            "and estimators)"
        )

    def record(self, obj, key, where):
        cls = type(obj)
        if not _allowed_for_save(cls, "record"):
            raise TypeError(
                f"{where}: dataclass {class_path(cls)} is not defined in bisvm; register it "
                "with bisvm.persistence.register_estimator to store it"
            )
        fields = {
            f.name: self.value(getattr(obj, f.name), f"{key}/{f.name}", f"{where}.{f.name}")
            for f in dataclasses.fields(obj)
            if f.init
        }
        return {"$record": {"class": class_path(cls), "fields": fields}}

    def estimator(self, est, key, where):
        cls = type(est)
        if not _allowed_for_save(cls, "estimator"):
            raise TypeError(
                f"{where}: class {class_path(cls)} is not a bisvm estimator; register it with "
                "bisvm.persistence.register_estimator to store it"
            )
        prefix = f"{key}/" if key else ""
        params = {
            k: self.value(v, f"{prefix}param/{k}", f"{where}.{k} (parameter)")
            for k, v in est.get_params(deep=False).items()
        }
        attrs = {}
        for name in _fitted_attribute_names(est):
            attrs[name] = self.value(getattr(est, name), f"{prefix}attr/{name}", f"{where}.{name}")
        return {"$estimator": {"class": class_path(cls), "params": params, "attributes": attrs}}


def _fitted_attribute_names(est):
    names = [k for k in vars(est) if k.endswith("_") and not k.startswith("_")]
    for k in getattr(type(est), "_persist_attrs", ()):
        if k in vars(est) and k not in names:
            names.append(k)
    return names


class _Decoder:
    """Inverse of :class:`_Encoder` on untrusted JSON; arrays come from ``self.arrays``."""

    def __init__(self, arrays, entries):
        self.arrays = arrays
        self.entries = entries
        self.used = set()

    def _array(self, key):
        if not isinstance(key, str) or key not in self.arrays:
            raise ModelFileError(
                f"meta.json refers to array {str(key)[:80]!r}, absent from arrays.npz"
            )
        self.used.add(key)
        a = self.arrays[key]
        return a.astype(object) if self.entries[key].get("object") else a

    def value(self, v, where):
        if v is None or isinstance(v, bool | str | int | float):
            return v
        if isinstance(v, list):
            return [self.value(x, where) for x in v]
        if not isinstance(v, dict):
            raise ModelFileError(f"{where}: unexpected JSON value")
        tags = [k for k in v if k.startswith("$")]
        if not tags:
            return {k: self.value(x, f"{where}.{k}") for k, x in v.items()}
        tag = tags[0]
        if len(tags) != 1:
            raise ModelFileError(f"{where}: malformed tagged value {sorted(v)!r}")
        body = v[tag]
        if tag == "$array":
            return self._array(body)
        if tag == "$scalar":
            a = self._array(body)
            if a.shape != ():
                raise ModelFileError(f"{where}: scalar array {body!r} is not 0-d")
            return a[()]
        if tag == "$tuple" and isinstance(body, list):
            return tuple(self.value(x, where) for x in body)
        if tag == "$dict" and isinstance(body, list):
            out = {}
            for item in body:
                if not (isinstance(item, list) and len(item) == 2):
                    raise ModelFileError(f"{where}: malformed $dict entry")
                k = self.value(item[0], where)
                try:
                    out[k] = self.value(item[1], where)
                except TypeError:
                    raise ModelFileError(f"{where}: unhashable dict key") from None
            return out
        if tag == "$float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if tag == "$dtype" and isinstance(body, str):
            try:
                dt = np.dtype(body)
            except TypeError:
                raise ModelFileError(f"{where}: bad dtype {body[:40]!r}") from None
            if dt.kind not in _ARRAY_KINDS or dt.names is not None:
                raise ModelFileError(f"{where}: dtype {body[:40]!r} is not allowed")
            return dt.type if v.get("type") is True else dt
        if tag == "$estimator" and isinstance(body, dict):
            return self.estimator(body, where)
        if tag == "$record" and isinstance(body, dict):
            return self.record(body, where)
        raise ModelFileError(f"{where}: unknown or malformed tag {tag[:40]!r}")

    def record(self, node, where):
        if set(node) != {"class", "fields"} or not isinstance(node["fields"], dict):
            raise ModelFileError(f"{where}: malformed record")
        cls = _resolve_class(node["class"], "record")
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        if set(node["fields"]) != names:
            diff = sorted(set(node["fields"]) ^ names)
            raise ModelFileError(f"{where}: {class_path(cls)} field {diff[0][:60]!r} mismatch")
        fields = {k: self.value(x, f"{where}.{k}") for k, x in node["fields"].items()}
        try:
            return cls(**fields)
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"{where}: cannot construct {class_path(cls)}: {exc}") from None

    def estimator(self, node, where):
        if set(node) != {"class", "params", "attributes"} or not (
            isinstance(node["params"], dict) and isinstance(node["attributes"], dict)
        ):
            raise ModelFileError(f"{where}: malformed estimator record")
        cls = _resolve_class(node["class"], "estimator")
        allowed = set(cls._get_param_names()) if hasattr(cls, "_get_param_names") else set()
        unknown = sorted(set(node["params"]) - allowed)
        if unknown:
            raise ModelFileError(f"{where}: {class_path(cls)} has no parameter {unknown[0][:60]!r}")
        params = {k: self.value(x, f"{where}.{k}") for k, x in node["params"].items()}
        try:
            est = cls(**params)
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"{where}: cannot construct {class_path(cls)}: {exc}") from None
        extra_names = set(getattr(cls, "_persist_attrs", ()))
        for name, x in node["attributes"].items():
            if not (_ATTR_RE.match(name) or name in extra_names) or name.startswith("__"):
                raise ModelFileError(f"{where}: attribute name {name[:60]!r} is not allowed")
            val = self.value(x, f"{where}.{name}")
            try:
                setattr(est, name, val)
            except (AttributeError, TypeError, ValueError) as exc:
                raise ModelFileError(f"{where}.{name}: cannot be set: {exc}") from None
        return est


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
    scaler : bisvm.data.Scaler or None
        Apply ``scaler.transform`` to raw features before ``estimator``.
    schema : dict or None
        :attr:`bisvm.data.Dataset.schema`; pass to ``read_table(..., schema=...)``.
    extra : object
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
    """Write a fitted estimator to a model file (format described in the module docstring).

    Parameters
    ----------
    estimator : estimator
        A bisvm estimator, or one of a class registered with :func:`register_estimator`.
        Fitted attributes that are estimators (lists of one-vs-rest sub-models, ...) are
        stored recursively.
    path : str or path-like
        Written atomically (a temporary file in the same directory, then renamed).
    feature_names : sequence of str, optional
    scaler : bisvm.data.Scaler or its ``to_dict()`` record, optional
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
    """
    from bisvm._version import __version__
    from bisvm.data import Scaler, check_schema

    if not hasattr(estimator, "get_params"):
        raise TypeError(f"save_model expects an estimator, got {type(estimator).__name__}")
    enc = _Encoder()
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
        "format_version": FORMAT_VERSION,
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


def _sniff_foreign(head):
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "a Python pickle (bisvm never loads pickles)"
    if head.startswith(b"\x93NUMPY"):
        return "a bare .npy array"
    if head.lstrip()[:1] in (b"{", b"["):
        return "a JSON/text file"
    return "not a zip container"


def _read_member(zf, info, cap, what):
    if info.flag_bits & 0x1:
        raise ModelFileError(f"{what} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ModelFileError(f"{what} uses an unsupported compression method")
    if info.file_size > cap:
        raise ModelFileError(
            f"{what} declares {info.file_size} bytes uncompressed, more than the limit of "
            f"{cap} bytes"
        )
    try:
        with zf.open(info) as fh:
            data = fh.read(cap + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError) as exc:
        raise ModelFileError(f"{what} is corrupt or truncated ({exc})") from None
    if len(data) != info.file_size:
        raise ModelFileError(f"{what}: {len(data)} bytes, its header says {info.file_size}")
    return data


def _members(zf, what):
    infos = zf.infolist()
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        raise ModelFileError(f"{what} has duplicate member names")
    return {i.filename: i for i in infos}


def _read_arrays(npz_bytes, entries, cap):
    try:
        inner = zipfile.ZipFile(io.BytesIO(npz_bytes))
    except (zipfile.BadZipFile, EOFError, ValueError, OSError):
        raise ModelFileError(
            "arrays.npz is not a valid npz archive (truncated or tampered)"
        ) from None
    members = _members(inner, "arrays.npz")
    total = sum(i.file_size for i in members.values())
    if total > cap:
        raise ModelFileError(
            f"arrays.npz declares {total} bytes uncompressed, more than the limit of {cap} bytes"
        )
    arrays = {}
    for name, info in members.items():
        if not name.endswith(".npy"):
            raise ModelFileError(f"arrays.npz: unexpected member {name[:80]!r}")
        key = name[:-4]
        if key not in entries:
            raise ModelFileError(f"arrays.npz: array {key[:80]!r} is not described in meta.json")
        data = _read_member(inner, info, cap, f"array {key!r}")
        arrays[key] = _load_npy(data, key, entries[key])
    missing = sorted(set(entries) - set(arrays))
    if missing:
        raise ModelFileError(f"array {missing[0][:80]!r} described in meta.json is missing")
    return arrays


def _load_npy(data, key, entry):
    """Check an .npy member's header against its size and meta.json, then load it."""
    fp = io.BytesIO(data)
    version = np.lib.format.read_magic(fp)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
    else:
        raise ModelFileError(f"array {key!r}: unsupported .npy version {version}")
    if dtype.hasobject:
        raise ModelFileError(f"array {key!r} is an object array (pickle): refused")
    if dtype.kind not in _ARRAY_KINDS or dtype.names is not None:
        raise ModelFileError(f"array {key!r}: dtype {dtype} is not allowed")
    if not isinstance(entry, dict):
        raise ModelFileError(f"meta.json: malformed entry for array {key!r}")
    if list(shape) != entry.get("shape") or dtype.str != entry.get("dtype"):
        raise ModelFileError(
            f"array {key!r}: shape {tuple(shape)} dtype {dtype.str} in arrays.npz, meta.json "
            f"says shape {tuple(entry.get('shape') or ())} dtype {entry.get('dtype')}"
        )
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes != len(data) - fp.tell():
        raise ModelFileError(
            f"array {key!r}: header declares {nbytes} bytes of data, {len(data) - fp.tell()} "
            "are present (truncated or tampered)"
        )
    fp.seek(0)
    a = np.load(fp, allow_pickle=False)
    a = np.array(a, copy=True, order="K")  # writeable, freshly aligned like a fitted array
    if _sha256(a) != entry.get("sha256"):
        raise ModelFileError(f"array {key!r}: sha256 does not match meta.json (tampered)")
    return a


def load_model(path, *, max_bytes=MAX_MODEL_BYTES):
    """Read a model file written by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int
        Cap on the uncompressed size of the arrays (defends against zip bombs and headers
        that declare huge arrays).

    Returns
    -------
    LoadedModel

    Raises
    ------
    ModelFileError
        Missing, truncated, tampered, foreign (another zip, a pickle, random bytes) or
        too large a file, an unsupported format version, an estimator class that is not
        allowed; the message is one line naming the file and the problem.
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
        raise ModelFileError(f"not a bisvm model file: {_sniff_foreign(raw[:16])}")
    zf = zipfile.ZipFile(io.BytesIO(raw))
    members = _members(zf, "the archive")
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
    meta_bytes = _read_member(zf, members["meta.json"], MAX_META_BYTES, "meta.json")
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
    npz_bytes = _read_member(zf, members["arrays.npz"], max_bytes, "arrays.npz")
    arrays = _read_arrays(npz_bytes, entries, max_bytes)

    dec = _Decoder(arrays, entries)
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
        for name in _fitted_attribute_names(a):
            assert name in vars(b), f"{where}.{name} is missing after loading"
            _assert_same_value(getattr(a, name), getattr(b, name), f"{where}.{name}")
        return
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), f"{where}: {type(b)} after loading, {type(a)} before"
        for f in dataclasses.fields(a):
            _assert_same_value(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
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
