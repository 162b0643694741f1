"""The values of a model file: JSON with tagged forms, arrays moved to ``arrays.npz``.

:class:`Encoder` turns an estimator (its constructor parameters and fitted attributes)
into the JSON of ``meta.json`` plus named arrays; :class:`Decoder` does the inverse on
untrusted JSON, building only allowed classes (:mod:`bisvm.persistence._registry`) from
decoded data. The tags are listed in :mod:`bisvm.persistence`'s docstring; ``$csr``
(sparse matrices, format version 2) is in :mod:`bisvm.persistence._sparse`.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import scipy.sparse as sp

from bisvm.persistence._archive import ARRAY_KINDS, array_sha256
from bisvm.persistence._registry import (
    ModelFileError,
    allowed_for_save,
    class_path,
    resolve_class,
)
from bisvm.persistence._sparse import build_csr, csr_parts

__all__ = ["Decoder", "Encoder", "fitted_attribute_names"]

_ATTR_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*_$")


class Encoder:
    """Turns values into JSON, moving arrays into ``self.arrays``."""

    def __init__(self):
        self.arrays = {}
        self.entries = {}
        #: the lowest format version able to describe what was encoded so far (files
        #: without sparse matrices stay readable by a bisvm that reads version 1)
        self.version = 1

    def _store(self, key, a, where, *, object_as_str=False):
        key = key if key not in self.arrays else f"{key}~{len(self.arrays)}"
        if a.dtype.kind not in ARRAY_KINDS or a.dtype.names is not None:
            raise TypeError(
                f"{where}: arrays of dtype {a.dtype} cannot be stored in a model file "
                "(numbers, booleans and strings only)"
            )
        self.arrays[key] = a
        self.entries[key] = {
            "shape": list(a.shape),
            "dtype": a.dtype.str,
            "sha256": array_sha256(a),
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
        if sp.issparse(v):
            return self.sparse(v, key, where)
        if isinstance(v, np.generic):
            a = np.asarray(v)
            if a.dtype.kind not in ARRAY_KINDS:
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

    def sparse(self, m, key, where):
        """A ``$csr`` node (format version 2; see :mod:`bisvm.persistence._sparse`)."""
        cls_name, shape, parts = csr_parts(m, where)
        node = {"class": cls_name, "shape": shape}
        for part, a in parts.items():
            node[part] = self._store(f"{key}/{part}", a, f"{where}.{part}")
        self.version = max(self.version, 2)
        return {"$csr": node}

    def record(self, obj, key, where):
        cls = type(obj)
        if not allowed_for_save(cls, "record"):
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
        if not allowed_for_save(cls, "estimator"):
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
        for name in fitted_attribute_names(est):
            attrs[name] = self.value(getattr(est, name), f"{prefix}attr/{name}", f"{where}.{name}")
        return {"$estimator": {"class": class_path(cls), "params": params, "attributes": attrs}}


def fitted_attribute_names(est):
    """Names stored for a fitted estimator: public names ending in ``_`` and the private
    state its class lists in ``_persist_attrs``."""
    names = [k for k in vars(est) if k.endswith("_") and not k.startswith("_")]
    for k in getattr(type(est), "_persist_attrs", ()):
        if k in vars(est) and k not in names:
            names.append(k)
    return names


class Decoder:
    """Inverse of :class:`Encoder` on untrusted JSON; arrays come from ``self.arrays``."""

    def __init__(self, arrays, entries, version):
        self.arrays = arrays
        self.entries = entries
        self.version = version
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
            if dt.kind not in ARRAY_KINDS or dt.names is not None:
                raise ModelFileError(f"{where}: dtype {body[:40]!r} is not allowed")
            return dt.type if v.get("type") is True else dt
        if tag == "$csr" and isinstance(body, dict):
            return self.sparse(body, where)
        if tag == "$estimator" and isinstance(body, dict):
            return self.estimator(body, where)
        if tag == "$record" and isinstance(body, dict):
            return self.record(body, where)
        raise ModelFileError(f"{where}: unknown or malformed tag {tag[:40]!r}")

    def sparse(self, node, where):
        if self.version < 2:
            raise ModelFileError(f"{where}: a sparse matrix ($csr) in a format version "
                                 f"{self.version} file (sparse matrices are version 2)")
        if set(node) != {"class", "shape", "data", "indices", "indptr"}:
            raise ModelFileError(f"{where}: malformed $csr node {sorted(node)!r}"[:160])
        parts = [self._array(node[p]) for p in ("data", "indices", "indptr")]
        return build_csr(node["class"], node["shape"], *parts, where)

    def record(self, node, where):
        if set(node) != {"class", "fields"} or not isinstance(node["fields"], dict):
            raise ModelFileError(f"{where}: malformed record")
        cls = resolve_class(node["class"], "record")
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
        cls = resolve_class(node["class"], "estimator")
        allowed = set(cls._get_param_names()) if hasattr(cls, "_get_param_names") else set()
        unknown = sorted(set(node["params"]) - allowed)
        if unknown:
            raise ModelFileError(f"{where}: {class_path(cls)} has no parameter {unknown[0][:60]!r}")
        params = {k: self.value(x, f"{where}.{k}") for k, x in node["params"].items()}
        # a parameter added after the file was written: the value that reproduces the
        # behaviour the file's model was fitted with, when it differs from the default
        for k, v in getattr(cls, "_legacy_params", {}).items():
            params.setdefault(k, v)
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
