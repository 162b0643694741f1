"""Solvers: one module per algorithm of the documents. A solver takes a problem and an
explicit warm start and returns a frozen :class:`~bisvm.solvers.base.SolverResult`."""

from .base import ConvergenceRecord, SmoothProblem, SolverResult
from .lbfgs import minimize_lbfgs, solve_lbfgs
from .newton import minimize_newton, solve_newton

__all__ = [
    "ConvergenceRecord",
    "SmoothProblem",
    "SolverResult",
    "minimize_lbfgs",
    "minimize_newton",
    "solve_lbfgs",
    "solve_newton",
]
