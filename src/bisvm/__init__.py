"""bisvm: support vector machines that tune themselves.

Public API only; see ``DESIGN.md`` for the layers.
"""

__version__ = "0.1.0"

from bisvm import kernels  # noqa: E402
from bisvm.data import (  # noqa: E402
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
from bisvm.estimators.kernel_logistic import KernelLogisticRegression  # noqa: E402
from bisvm.estimators.kernel_ridge import KernelRidge  # noqa: E402
from bisvm.estimators.linear import LinearSVC  # noqa: E402
from bisvm.estimators.linear_svr import LinearSVR  # noqa: E402
from bisvm.estimators.nu_svm import NuSVC, NuSVR, OneClassSVM  # noqa: E402
from bisvm.estimators.selective import (  # noqa: E402
    SelectiveLogisticRegression,
    SelectiveLogisticRegressionCV,
    SelectiveRegression,
    SelectiveRegressionCV,
)
from bisvm.estimators.sparse import BilevelSVC, ElasticNetSVC  # noqa: E402
from bisvm.estimators.svm import SVC, SVR  # noqa: E402
from bisvm.persistence import ModelFileError, load_model, register_estimator, save_model  # noqa: E402
from bisvm.solvers.path import l1_svm_path  # noqa: E402
from bisvm.solvers.rz_path import l1_sqhinge_path  # noqa: E402

__all__ = [
    "__version__",
    "BilevelSVC",
    "ElasticNetSVC",
    "DataError",
    "Dataset",
    "Scaler",
    "binary_target",
    "list_datasets",
    "load_dataset",
    "parse_groups",
    "read_table",
    "train_test_split_seeded",
    "ModelFileError",
    "load_model",
    "register_estimator",
    "save_model",
    "LinearSVC",
    "LinearSVR",
    "KernelLogisticRegression",
    "l1_svm_path",
    "l1_sqhinge_path",
    "kernels",
    "KernelRidge",
    "SVC",
    "SVR",
    "NuSVC",
    "NuSVR",
    "OneClassSVM",
    "SelectiveRegression",
    "SelectiveLogisticRegression",
    "SelectiveRegressionCV",
    "SelectiveLogisticRegressionCV",
]
