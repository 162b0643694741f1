"""Moved to :mod:`bisvm.solvers.dual.nu_smo`."""
from .dual.nu_smo import greedy_fill, nu_svc_dual, nu_svc_scaling, nu_svr_dual, one_class_dual  # noqa: F401,E501  # shim16: removed in step 9
