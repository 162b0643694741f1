"""Moved to :mod:`bisvm.solvers.paths.l1_hinge`."""
from .paths.l1_hinge import L1SVMPath, l1_svm_objective, l1_svm_path  # noqa: F401  # shim16: removed in step 9
