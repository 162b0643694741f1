"""Moved to :mod:`bisvm.solvers.paths.rz_path`."""
from .paths.rz_path import L1SqHingePath, l1_sqhinge_objective, l1_sqhinge_path  # noqa: F401,E501  # shim16: removed in step 9
