"""The bundled data sets (scikit-learn's copies: no download)."""

from __future__ import annotations

import numpy as np

from ..names import DATASETS
from .records import DataError, Dataset

BREAST_CANCER_GROUPS = {
    "mean": list(range(0, 10)),
    "se": list(range(10, 20)),
    "worst": list(range(20, 30)),
}


# scikit-learn's loader of each bundled set; the names and descriptions are the public
# list :data:`bisvm.names.DATASETS`
_LOADERS = {"iris": "load_iris", "breast-cancer": "load_breast_cancer", "wine": "load_wine",
            "digits": "load_digits"}
if set(_LOADERS) != set(DATASETS):
    raise ImportError("bisvm.data.bundled: the loaders do not match bisvm.names.DATASETS")
_BUNDLED = {name: (_LOADERS[name], desc) for name, desc in DATASETS.items()}


def list_datasets():
    """List the bundled datasets (no download needed).

    Returns
    -------
    dict of str to str
        Each dataset's name (as :func:`load_dataset` takes it) and a one-line
        description.

    Examples
    --------
    >>> from bisvm import list_datasets
    >>> sorted(list_datasets())
    ['breast-cancer', 'digits', 'iris', 'wine']
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
        ``{"mean": 0-9, "se": 10-19, "worst": 20-29}``, the grouping of the group-sparse
        experiments of González Vallejo (2024); the other sets have ``groups=None``.

    Raises
    ------
    DataError
        For a name that is not bundled.

    References
    ----------
    C. L. González Vallejo, "Selección de variables a través de máquinas de soporte
    vectorial dispersas: un enfoque de optimización binivel", master's thesis, Escuela
    Politécnica Nacional, Quito, 2024.

    Examples
    --------
    >>> from bisvm import load_dataset
    >>> ds = load_dataset("breast-cancer")
    >>> ds.X.shape, sorted(ds.groups)
    ((569, 30), ['mean', 'se', 'worst'])
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
