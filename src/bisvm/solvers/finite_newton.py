"""shim16: removed in step 9. The finite Newton method lives in
:mod:`bisvm.solvers.primal.finite_newton` and takes a ``LinearProblem``; this module keeps
the raw ``(X, y, cost=, R=)`` call of ``estimators/linear.py`` until that caller switches."""

import numpy as np

from ..losses import SquaredHinge
from .primal.finite_newton import *  # noqa: F401,F403
from .primal.finite_newton import solve_finite_newton as _solve
from .problems import LinearProblem


def solve_finite_newton(X, y, *, cost=1.0, R=None, **kwargs):  # shim16
    c = np.broadcast_to(np.asarray(cost, dtype=float), (X.shape[0],))
    return _solve(LinearProblem(X, y, SquaredHinge(), c, quadratic=R), **kwargs)
