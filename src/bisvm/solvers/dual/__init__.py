r"""The dual family: the SVM duals by decomposition, coordinate descent and active sets.

Decomposition follows LIBSVM (Chang & Lin 2011), coordinate descent LIBLINEAR (Hsieh et
al. 2008).

======================  ================================================================
``smo``                 :func:`solve_smo` (SMO / decomposition, LIBSVM's rules) on a
                        :class:`~bisvm.solvers.problems.DualProblem`; the C-SVC and ε-SVR
                        duals :func:`csvc_dual`, :func:`epsilon_svr_dual`
``working_set``         :func:`solve_working_set` (working sets of many variables, kernel
                        rows by BLAS; ``solve_smo(method="auto")`` takes it on large dense
                        RBF problems)
``nu_smo``              the ν-SVC, ν-SVR and one-class duals and the ν-SVC scaling
``active_set``          :func:`solve_active_set` (a finite method with the full ``Q``, a
                        check of SMO on small problems) and :func:`active_set_qp`
``dual_cd``             :func:`solve_dual_cd`, :func:`solve_dual_cd_svr` (LIBLINEAR's dual
                        coordinate descent) on a :class:`~bisvm.solvers.problems.LinearProblem`
``crammer_singer``      :func:`solve_crammer_singer` (the multi-class sequential dual)
======================  ================================================================

The compiled loops live in the ``_smo_*`` and ``_*_kernels`` modules.
"""

from .active_set import active_set_qp, solve_active_set
from .crammer_singer import crammer_singer_objective, solve_crammer_singer
from .dual_cd import solve_dual_cd, solve_dual_cd_svr, svm_primal_objective, svr_primal_objective
from .nu_smo import nu_svc_dual, nu_svc_scaling, nu_svr_dual, one_class_dual
from .smo import csvc_dual, dense_hessian, epsilon_svr_dual, solve_smo
from .working_set import solve_working_set

__all__ = [
    "solve_smo",
    "solve_working_set",
    "csvc_dual",
    "epsilon_svr_dual",
    "dense_hessian",
    "nu_svc_dual",
    "nu_svr_dual",
    "one_class_dual",
    "nu_svc_scaling",
    "solve_active_set",
    "active_set_qp",
    "solve_dual_cd",
    "solve_dual_cd_svr",
    "svm_primal_objective",
    "svr_primal_objective",
    "solve_crammer_singer",
    "crammer_singer_objective",
]
