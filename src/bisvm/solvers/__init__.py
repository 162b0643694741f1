"""Solvers: one module per algorithm of the documents. A solver takes a problem and an
explicit warm start and returns a frozen :class:`~bisvm.solvers.base.SolverResult`."""

from .base import (
    CERTIFICATES,
    ActivePartition,
    ConvergenceRecord,
    SelectivityPath,
    SmoothProblem,
    SolverResult,
)
from .cg import conjugate_gradient, minimize_nonlinear_cg, solve_nonlinear_cg
from .coordinate import solve_block_coordinate_descent
from .crammer_singer import solve_crammer_singer
from .dual_cd import solve_dual_cd, solve_dual_cd_svr
from .finite_newton import greedy_kernel_finite_newton, solve_finite_newton
from .gradient import minimize_gradient_descent, solve_gradient_descent
from .lbfgs import minimize_lbfgs, solve_lbfgs
from .newton import minimize_newton, solve_newton
from .path import L1SVMPath, l1_svm_path
from .primal import solve_truncated_newton, solve_woodbury_newton
from .primal.exact_l1 import WeightedL1SVMProblem, solve_exact_l1
from .problems import DualProblem, KernelExpansionProblem, LinearProblem
from .quasi_newton import minimize_bfgs, solve_bfgs
from .rz_path import L1SqHingePath, l1_sqhinge_path
from .selective import (
    SelectiveNewtonFactor,
    SelectiveProblem,
    selectivity_grid,
    selectivity_max,
    solve_dual_newton,
    solve_selectivity_path,
)
from .svr_primal import solve_svr_finite_newton

__all__ = [
    "CERTIFICATES",
    "ActivePartition",
    "ConvergenceRecord",
    "SelectivityPath",
    "SmoothProblem",
    "KernelExpansionProblem",
    "DualProblem",
    "LinearProblem",
    "SolverResult",
    "minimize_lbfgs",
    "minimize_newton",
    "solve_lbfgs",
    "solve_newton",
    "conjugate_gradient",
    "minimize_nonlinear_cg",
    "solve_nonlinear_cg",
    "solve_block_coordinate_descent",
    "minimize_gradient_descent",
    "solve_gradient_descent",
    "minimize_bfgs",
    "solve_bfgs",
    "solve_dual_cd",
    "solve_dual_cd_svr",
    "solve_crammer_singer",
    "solve_svr_finite_newton",
    "solve_finite_newton",
    "greedy_kernel_finite_newton",
    "L1SVMPath",
    "l1_svm_path",
    "L1SqHingePath",
    "solve_woodbury_newton",
    "solve_truncated_newton",
    "solve_exact_l1",
    "WeightedL1SVMProblem",
    "l1_sqhinge_path",
    "SelectiveProblem",
    "SelectiveNewtonFactor",
    "solve_dual_newton",
    "solve_selectivity_path",
    "selectivity_max",
    "selectivity_grid",
]
