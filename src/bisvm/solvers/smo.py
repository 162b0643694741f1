"""Moved to :mod:`bisvm.solvers.dual.smo`."""
from .dual.smo import *  # noqa: F401,F403  # shim16: removed in step 9
