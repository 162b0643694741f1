"""Moved to :mod:`bisvm.solvers.dual.crammer_singer`."""
from .dual.crammer_singer import crammer_singer_objective, solve_crammer_singer  # noqa: F401,E501  # shim16: removed in step 9
