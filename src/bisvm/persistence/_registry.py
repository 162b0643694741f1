"""Which classes a model file may name: the allow-list of :mod:`bisvm.persistence`.

A file names its estimator (and dataclass record) classes by path, ``module.QualName``.
Loading resolves a path only through :func:`register_estimator`'s registry or, for
bisvm's own classes, by importing that ``bisvm.*`` module: never any other module, so a
file cannot make the loader import or construct anything outside that list.
"""

from __future__ import annotations

import dataclasses
import importlib
import re

__all__ = ["ModelFileError", "allowed_for_save", "class_path", "is_registered",
           "register_estimator", "resolve_class", "unregister_estimator"]

_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_REGISTRY: dict[str, type] = {}


class ModelFileError(ValueError):
    """A model file is missing, truncated, tampered with, foreign or of another version.

    Raised by :func:`load_model` with one line naming the file and the problem; it is a
    :class:`ValueError`.

    Examples
    --------
    >>> import os, tempfile
    >>> from bisvm import ModelFileError, load_model
    >>> path = os.path.join(tempfile.mkdtemp(), "not-a-model.bisvm")
    >>> with open(path, "w") as f:
    ...     _ = f.write("hello")
    >>> try:
    ...     load_model(path)
    ... except ModelFileError:
    ...     print("refused")
    refused
    """


def class_path(cls):
    """``"module.QualName"`` of a class, as stored in model files."""
    return f"{cls.__module__}.{cls.__qualname__}"


def register_estimator(cls=None, *, name=None):
    """Allow a class to be stored in and loaded from model files.

    Use as a decorator (``@register_estimator``) or a call (``register_estimator(cls)``).
    bisvm's own estimator classes and dataclass records (such as a fit's history entries)
    are allowed without it; registering is how tests and applications allow others (e.g.
    scikit-learn's estimators, or a dataclass of their own). Registration is by class path,
    so a file names its class as ``module.QualName``. The class ``cls`` must be an
    estimator (it has ``get_params``) or a dataclass; called without it,
    ``register_estimator(name=...)`` returns the decorator.

    Parameters
    ----------
    name : str, optional
        Class path to register under (default ``module.QualName`` of the class).

    Returns
    -------
    type or callable
        The class itself, unchanged (so the decorator form leaves it as it was), or,
        without ``cls``, the decorator.

    Raises
    ------
    TypeError
        For a class that is neither an estimator nor a dataclass.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.linear_model import LogisticRegression
    >>> from bisvm import load_dataset, load_model, register_estimator, save_model
    >>> _ = register_estimator(LogisticRegression)
    >>> ds = load_dataset("iris")
    >>> path = os.path.join(tempfile.mkdtemp(), "lr.bisvm")
    >>> _ = save_model(LogisticRegression(max_iter=500).fit(ds.X, ds.y), path)
    >>> type(load_model(path).estimator).__name__
    'LogisticRegression'
    >>> from bisvm.persistence import unregister_estimator
    >>> unregister_estimator(LogisticRegression)
    True
    """

    def add(c):
        if not isinstance(c, type) or not (hasattr(c, "get_params") or dataclasses.is_dataclass(c)):
            raise TypeError(f"register_estimator expects an estimator or dataclass type, got {c!r}")
        _REGISTRY[name or class_path(c)] = c
        return c

    return add if cls is None else add(cls)


def _key(cls_or_path):
    return cls_or_path if isinstance(cls_or_path, str) else class_path(cls_or_path)


def is_registered(cls_or_path):
    """Whether a class (or a class path) is on the allow-list of :func:`register_estimator`
    (bisvm's own classes are allowed without being on it)."""
    return _key(cls_or_path) in _REGISTRY


def unregister_estimator(cls_or_path):
    """Take a class (or a class path) off the allow-list; files naming it no longer load.

    Returns
    -------
    bool
        Whether it was registered.
    """
    return _REGISTRY.pop(_key(cls_or_path), None) is not None


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


def allowed_for_save(cls, kind):
    """Whether instances of ``cls`` may be written: registered, or a bisvm class of that
    kind defined at module level."""
    path = class_path(cls)
    return _REGISTRY.get(path) is cls or (_is_bisvm_class(cls, kind) and "<" not in path)


#: Classes that moved to another module: the path older files name -> the current one.
MOVED_CLASSES = {
    "bisvm.selection.bilevel.HistoryEntry": "bisvm.selection.outer.HistoryEntry",
}


def resolve_class(path, kind="estimator"):
    """Class for a stored path: the registry, else a bisvm module's own class of that kind
    (``"estimator"``: a scikit-learn estimator; ``"record"``: a dataclass)."""
    if not isinstance(path, str):
        raise ModelFileError(f"{kind} class must be a string, got {type(path).__name__}")
    if path in _REGISTRY:
        if not _is_kind(_REGISTRY[path], kind):
            raise ModelFileError(f"{path!r} is not an {kind} class")
        return _REGISTRY[path]
    # files written before a class moved name its old module
    path = MOVED_CLASSES.get(path, path)
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
