"""Solvers, in four families (``primal/``, ``dual/``, ``paths/``, ``selective/``) over one
contract: a solver takes a frozen problem record (:mod:`~bisvm.solvers.problems`) and
explicit keyword warm starts (``w0`` primal, ``alpha0`` dual) and returns a frozen
:class:`~bisvm.solvers.base.SolverResult` with a named certificate. The line searches
(``_linesearch``), Cholesky and Newton factors (``_linalg``) and iteration records and
argument checks (``_record``) are written once and shared."""

from .base import (
    CERTIFICATES,
    ActivePartition,
    ConvergenceRecord,
    NewtonFactor,
    SelectivityPath,
    SolverResult,
)
from .dual import (
    active_set_qp,
    csvc_dual,
    epsilon_svr_dual,
    nu_svc_dual,
    nu_svr_dual,
    one_class_dual,
    solve_active_set,
    solve_crammer_singer,
    solve_dual_cd,
    solve_dual_cd_svr,
    solve_smo,
)
from .nystroem import nystroem_features, select_landmarks
from .paths import L1SqHingePath, L1SVMPath, PathResult, l1_sqhinge_path, l1_svm_path
from .primal import solve_truncated_newton, solve_woodbury_newton
from .primal.cg import conjugate_gradient, minimize_nonlinear_cg, solve_nonlinear_cg
from .primal.coordinate import solve_block_coordinate_descent
from .primal.exact_l1 import WeightedL1SVMProblem, solve_exact_l1
from .primal.finite_newton import greedy_kernel_finite_newton, solve_finite_newton
from .primal.gradient import minimize_gradient_descent, solve_gradient_descent
from .primal.kernel import solve_kernel_newton
from .primal.l1_linear import solve_l1_hinge_lp, solve_l1_squared_hinge
from .primal.lbfgs import minimize_lbfgs, solve_lbfgs
from .primal.newton import damped_newton, minimize_newton, solve_newton
from .primal.quasi_newton import minimize_bfgs, solve_bfgs
from .primal.svr_finite_newton import solve_svr_finite_newton
from .problems import DualProblem, KernelExpansionProblem, LinearProblem, SmoothProblem
from .selective import (
    SelectiveNewtonFactor,
    SelectiveProblem,
    selectivity_grid,
    selectivity_max,
    solve_dual_newton,
    solve_selectivity_path,
)

__all__ = [
    # the contract
    "SolverResult",
    "CERTIFICATES",
    "ConvergenceRecord",
    "ActivePartition",
    "SelectivityPath",
    "NewtonFactor",
    "PathResult",
    # problems
    "SmoothProblem",
    "KernelExpansionProblem",
    "DualProblem",
    "LinearProblem",
    "WeightedL1SVMProblem",
    "SelectiveProblem",
    # primal
    "damped_newton",
    "minimize_newton",
    "solve_newton",
    "solve_woodbury_newton",
    "solve_truncated_newton",
    "solve_kernel_newton",
    "minimize_lbfgs",
    "solve_lbfgs",
    "minimize_bfgs",
    "solve_bfgs",
    "conjugate_gradient",
    "minimize_nonlinear_cg",
    "solve_nonlinear_cg",
    "minimize_gradient_descent",
    "solve_gradient_descent",
    "solve_block_coordinate_descent",
    "solve_finite_newton",
    "solve_svr_finite_newton",
    "greedy_kernel_finite_newton",
    "solve_exact_l1",
    "solve_l1_hinge_lp",
    "solve_l1_squared_hinge",
    # dual
    "solve_smo",
    "csvc_dual",
    "epsilon_svr_dual",
    "nu_svc_dual",
    "nu_svr_dual",
    "one_class_dual",
    "solve_active_set",
    "active_set_qp",
    "solve_dual_cd",
    "solve_dual_cd_svr",
    "solve_crammer_singer",
    # kernel approximation
    "select_landmarks",
    "nystroem_features",
    # paths
    "L1SVMPath",
    "l1_svm_path",
    "L1SqHingePath",
    "l1_sqhinge_path",
    # selective
    "SelectiveNewtonFactor",
    "solve_dual_newton",
    "solve_selectivity_path",
    "selectivity_max",
    "selectivity_grid",
]
