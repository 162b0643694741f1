"""The :class:`~bisvm.solvers.base.SolverResult` of a solve of the generic SVM dual, shared
by SMO (:mod:`bisvm.solvers.dual.smo`) and the working-set solver
(:mod:`bisvm.solvers.dual.working_set`), which stop on the same certificate."""

from __future__ import annotations

import numpy as np

from ..base import ConvergenceRecord, SolverResult


def dual_result(problem, alpha, G, *, rho, gap, n_iter, converged, seconds, n_samples,
                stats):
    r"""The result of :math:`\min \tfrac12\alpha^\top Q\alpha + p^\top\alpha` at ``alpha``.

    The objective is :math:`\tfrac12\alpha^\top(G + p)` with :math:`G = Q\alpha + p`;
    ``coef`` the kernel expansion over training samples, :math:`\sum_{t: s_t = s}
    y_t\alpha_t`; ``intercept`` :math:`-\rho`; certificate ``"max_violating_pair"`` (the
    final :math:`m(\alpha) - M(\alpha)`, ``gap``); ``stats`` is passed through.
    """
    objective = 0.5 * float(alpha @ (G + problem.p))
    coef = np.bincount(problem.sample_index, weights=problem.y * alpha, minlength=n_samples)
    return SolverResult(
        coef=coef,
        intercept=-float(rho),
        dual_coef=alpha,
        active_set=np.flatnonzero(alpha > 0),
        objective=objective,
        certificate_value=float(gap),
        certificate="max_violating_pair",
        n_iter=int(n_iter),
        converged=bool(converged),
        seconds=seconds,
        record=ConvergenceRecord(np.array([objective]), np.array([float(gap)]),
                                 np.array([seconds])),
        stats=stats,
    )
