"""bisvm: support vector machines that tune themselves.

Public API only; see ``DESIGN.md`` for the layers. The names below are loaded when first
used (PEP 562 module ``__getattr__``): ``import bisvm`` costs no scikit-learn, numba or
matplotlib import, so that ``bisvm --help`` answers at once, and ``bisvm.SVC`` or
``from bisvm import SVC`` imports only what that name needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__

# public name -> the module that defines it (relative to this package)
_LAZY = {
    "DataError": "data",
    "Dataset": "data",
    "Scaler": "data",
    "binary_target": "data",
    "list_datasets": "data",
    "load_dataset": "data",
    "parse_groups": "data",
    "read_table": "data",
    "train_test_split_seeded": "data",
    "KernelLogisticRegression": "estimators.kernel_logistic",
    "KernelRidge": "estimators.kernel_ridge",
    "LinearSVC": "estimators.linear",
    "LinearSVCCV": "estimators.linear_cv",
    "LinearSVR": "estimators.linear_svr",
    "linear_svc_path": "estimators.linear_cv",
    "NuSVC": "estimators.nu_svm",
    "NuSVR": "estimators.nu_svm",
    "OneClassSVM": "estimators.nu_svm",
    "SelectiveLogisticRegression": "estimators.selective",
    "SelectiveLogisticRegressionCV": "estimators.selective",
    "SelectiveRegression": "estimators.selective",
    "SelectiveRegressionCV": "estimators.selective",
    "AutoSVC": "estimators.auto_svc",
    "BilevelSVC": "estimators.sparse",
    "BilevelSVR": "estimators.bilevel_svr",
    "AutoSVR": "estimators.auto_svr",
    "ElasticNetSVC": "estimators.sparse",
    "SVC": "estimators.svm",
    "SVR": "estimators.svm",
    "StabilitySelection": "estimators.stability",
    "ModelFileError": "persistence",
    "load_model": "persistence",
    "register_estimator": "persistence",
    "save_model": "persistence",
    "l1_svm_path": "solvers.paths.l1_hinge",
    "l1_sqhinge_path": "solvers.paths.rz_path",
}
# public submodules reached as attributes (``bisvm.kernels.rbf_kernel``)
_SUBMODULES = ("kernels",)

__all__ = [
    "__version__",
    "kernels",
    "DataError",
    "Dataset",
    "Scaler",
    "binary_target",
    "list_datasets",
    "load_dataset",
    "parse_groups",
    "read_table",
    "train_test_split_seeded",
    "KernelLogisticRegression",
    "KernelRidge",
    "LinearSVC",
    "LinearSVCCV",
    "LinearSVR",
    "linear_svc_path",
    "NuSVC",
    "NuSVR",
    "OneClassSVM",
    "SelectiveLogisticRegression",
    "SelectiveLogisticRegressionCV",
    "SelectiveRegression",
    "SelectiveRegressionCV",
    "AutoSVC",
    "BilevelSVC",
    "BilevelSVR",
    "AutoSVR",
    "ElasticNetSVC",
    "SVC",
    "SVR",
    "StabilitySelection",
    "ModelFileError",
    "load_model",
    "register_estimator",
    "save_model",
    "l1_svm_path",
    "l1_sqhinge_path",
]


def __getattr__(name):
    """Import the module behind a public name on first use and cache the name here."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # static analysers and IDEs see the names; nothing runs at import
    from bisvm import kernels
    from bisvm.data import (
        DataError,
        Dataset,
        Scaler,
        binary_target,
        list_datasets,
        load_dataset,
        parse_groups,
        read_table,
        train_test_split_seeded,
    )
    from bisvm.estimators.auto_svc import AutoSVC
    from bisvm.estimators.auto_svr import AutoSVR
    from bisvm.estimators.bilevel_svr import BilevelSVR
    from bisvm.estimators.kernel_logistic import KernelLogisticRegression
    from bisvm.estimators.kernel_ridge import KernelRidge
    from bisvm.estimators.linear import LinearSVC
    from bisvm.estimators.linear_cv import LinearSVCCV, linear_svc_path
    from bisvm.estimators.linear_svr import LinearSVR
    from bisvm.estimators.nu_svm import NuSVC, NuSVR, OneClassSVM
    from bisvm.estimators.selective import (
        SelectiveLogisticRegression,
        SelectiveLogisticRegressionCV,
        SelectiveRegression,
        SelectiveRegressionCV,
    )
    from bisvm.estimators.sparse import BilevelSVC, ElasticNetSVC
    from bisvm.estimators.stability import StabilitySelection
    from bisvm.estimators.svm import SVC, SVR
    from bisvm.persistence import ModelFileError, load_model, register_estimator, save_model
    from bisvm.solvers.paths.l1_hinge import l1_svm_path
    from bisvm.solvers.paths.rz_path import l1_sqhinge_path
