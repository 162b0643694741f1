"""Moved to :mod:`bisvm.solvers.dual.active_set`."""
from .dual.active_set import ActiveSetResult, solve_active_set  # noqa: F401,E501  # shim16: removed in step 9
