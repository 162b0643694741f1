r"""Regularisation paths: whole solution paths λ ↦ (β(λ), b(λ)) traced exactly by events,
each a :class:`~bisvm.solvers.paths.base.PathResult` whose ``result_at(lam)`` is the solver
contract's :class:`~bisvm.solvers.base.SolverResult` at any λ.

==================  ====================================================================
``l1_hinge``        :func:`l1_svm_path` (the 1-norm SVM, hinge loss, piecewise linear):
                    the parametric simplex method of ``_simplex``
``rz_path``         :func:`l1_sqhinge_path` (the L1-regularised L2-SVM, squared hinge or
                    modified Huber, linear or kernel): Rosset–Zhu event tracking, the state
                    in ``_rz_tracker.RZTracker``, the event search in ``_rz_events``
``base``            :class:`PathResult`
==================  ====================================================================
"""

from .base import PathResult
from .l1_hinge import L1SVMPath, l1_svm_objective, l1_svm_path, solve_l1_hinge_path
from .rz_path import L1SqHingePath, l1_sqhinge_objective, l1_sqhinge_path, loss_value_derivative

__all__ = [
    "PathResult",
    "L1SVMPath",
    "l1_svm_path",
    "l1_svm_objective",
    "solve_l1_hinge_path",
    "L1SqHingePath",
    "l1_sqhinge_path",
    "l1_sqhinge_objective",
    "loss_value_derivative",
]
