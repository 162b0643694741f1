"""Moved to :mod:`bisvm.solvers.dual.dual_cd`."""
from .dual.dual_cd import *  # noqa: F401,F403  # shim16: removed in step 9
