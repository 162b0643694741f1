"""shim16: removed in step 9. The SVR finite Newton method lives in
:mod:`bisvm.solvers.primal.svr_finite_newton` and takes a ``LinearProblem``; this module
keeps the raw ``(X, y, cost=, epsilon=)`` call of ``estimators/linear_svr.py`` until that
caller switches."""

import numpy as np

from ..losses import SquaredEpsilonInsensitive
from .primal.svr_finite_newton import solve_svr_finite_newton as _solve
from .problems import LinearProblem

__all__ = ["solve_svr_finite_newton"]


def solve_svr_finite_newton(X, y, *, cost=1.0, epsilon=0.0, **kwargs):  # shim16
    c = np.broadcast_to(np.asarray(cost, dtype=float), (X.shape[0],))
    return _solve(LinearProblem(X, y, SquaredEpsilonInsensitive(epsilon), c), **kwargs)
