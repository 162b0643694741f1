r"""What every regularisation path shares: the breakpoints in λ, the solution at each,
and the solver contract at any λ (:meth:`PathResult.result_at`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import ConvergenceRecord, SolverResult

__all__ = ["PathResult"]


@dataclass(frozen=True)
class PathResult:
    r"""A regularisation path :math:`\lambda \mapsto (\beta(\lambda), b(\lambda))` traced
    exactly by events, from :math:`\lambda_{\max}` down to ``lambda_min``.

    Attributes
    ----------
    breakpoints : ndarray of shape (K,)
        The λ of the events, decreasing.
    coefs, intercepts : ndarray
        The solution at the breakpoints or on the segments between them (each subclass
        says which; :meth:`solution` reads them).
    losses : ndarray
        The loss term at each stored solution.
    l1_norms : ndarray
        :math:`\|\beta\|_1` at each stored solution.
    lambda_min : float
        Where the tracking stopped.
    n_events : int
        Events processed (pivots, entries, exits, knot crossings).
    events : tuple of str
        What happened at each breakpoint.
    """

    breakpoints: np.ndarray
    coefs: np.ndarray
    intercepts: np.ndarray
    losses: np.ndarray
    l1_norms: np.ndarray
    lambda_min: float
    n_events: int
    events: tuple

    def solution(self, lam):  # pragma: no cover - every subclass defines it
        """``(coef, intercept)`` optimal at ``lam``."""
        raise NotImplementedError

    def objective_at(self, lam, coef, intercept):
        """The objective at ``lam`` of the solution there, when the path stores enough to
        evaluate it (NaN otherwise)."""
        return float("nan")

    def result_at(self, lam):
        """The path's solution at ``lam`` as a :class:`~bisvm.solvers.base.SolverResult`.

        ``coef`` and ``intercept`` from :meth:`solution`; certificate ``"path_vertex"``
        (value 0: the path is exact up to rounding); ``converged`` True; ``active_set``
        the nonzero coefficients; ``n_iter`` the number of breakpoints at or above
        ``lam`` (the events the path crossed to reach it); ``objective`` from
        :meth:`objective_at`; a one-entry ``record``; ``stats["lam"]``.
        """
        coef, intercept = self.solution(lam)
        coef = np.array(coef, dtype=float)
        objective = self.objective_at(lam, coef, intercept)
        return SolverResult(
            coef=coef, intercept=float(intercept), active_set=np.flatnonzero(coef),
            objective=objective, certificate_value=0.0, certificate="path_vertex", converged=True,
            n_iter=int(np.sum(self.breakpoints >= lam)), method=type(self).__name__,
            record=ConvergenceRecord(np.array([objective]), np.array([0.0]),
                                     np.array([0.0])),
            stats={"lam": float(lam)})
