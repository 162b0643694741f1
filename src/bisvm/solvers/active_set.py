"""Moved to :mod:`bisvm.solvers.dual.active_set`."""
from .dual.active_set import active_set_qp, solve_active_set  # noqa: F401  # shim16: removed in step 9
