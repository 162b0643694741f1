"""The iteration record and the argument checks every solver shares, written once.

:class:`IterationLog` collects the objective, the stopping certificate and the elapsed
time per iteration and turns them into the frozen
:class:`~bisvm.solvers.base.SolverResult` at the end (warning with
:class:`~sklearn.exceptions.ConvergenceWarning` when the solve stopped on its cap).
The checks raise the messages the solvers' tests match on ("tol", "max_iter", "must be").
"""

from __future__ import annotations

import time
from numbers import Real

import numpy as np

from ._linalg import euclidean_norm
from .base import ConvergenceRecord, SolverResult, warn_cap

_FOUR_EPS = 4 * np.finfo(float).eps

__all__ = ["IterationLog", "check_tol_max_iter", "check_real", "check_positive_int"]


class IterationLog:
    """Per-iteration objective, certificate and time of one solve.

    Parameters
    ----------
    f : float
        The objective at the start.
    value : float or ndarray
        The certificate at the start; an array is taken as a gradient and its Euclidean
        norm recorded.
    certificate : str
        The key of :data:`~bisvm.solvers.base.CERTIFICATES` the values measure.
    """

    def __init__(self, f, value, *, certificate="gradient_norm"):
        self.t0 = time.perf_counter()
        self.certificate = certificate
        self.objs = [float(f)]
        self.gns = [_certificate(value)]
        self.secs = [0.0]
        self.n_flat = 0

    def add(self, f, value):
        """Record one iteration's objective and certificate (an array: its norm)."""
        # Armijo tests pass on rounding noise once f is flat to working precision; count
        # such steps so that solvers can stop there instead of creeping on to the cap
        drop = self.objs[-1] - float(f)
        self.n_flat = self.n_flat + 1 if drop <= _FOUR_EPS * abs(f) else 0
        self.objs.append(float(f))
        self.gns.append(_certificate(value))
        self.secs.append(time.perf_counter() - self.t0)

    @property
    def stalled(self):
        """Twenty steps in a row without decrease beyond rounding."""
        return self.n_flat >= 20

    @property
    def value(self):
        """The last recorded certificate."""
        return self.gns[-1]

    def record(self):
        """The :class:`~bisvm.solvers.base.ConvergenceRecord` so far."""
        return ConvergenceRecord(np.array(self.objs), np.array(self.gns), np.array(self.secs))

    def result(self, x, n_iter, n_evals, converged, *, warn=None, **fields):
        """The frozen result at ``x``.

        ``warn=(name, max_iter, tol)`` warns that the solve stopped on its cap when it did
        not converge; ``fields`` fill the typed fields of
        :class:`~bisvm.solvers.base.SolverResult` (``intercept``, ``dual_coef``,
        ``active_set``, ``stats``, ``method``, ``factor``, ...).
        """
        if warn is not None and not converged:
            name, max_iter, tol = warn
            warn_cap(name, max_iter, self.gns[-1], tol)
        fields.setdefault("certificate", self.certificate)
        return SolverResult(
            coef=x, objective=self.objs[-1], certificate_value=self.gns[-1], n_iter=n_iter,
            n_evals=n_evals, converged=bool(converged),
            seconds=time.perf_counter() - self.t0, record=self.record(), **fields,
        )


def _certificate(value):
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype == np.float64:
        return euclidean_norm(value)
    return float(np.linalg.norm(value)) if np.ndim(value) else float(value)


def check_tol_max_iter(tol, max_iter):
    """Raise ``ValueError`` unless ``tol`` is a positive finite float and ``max_iter`` a
    positive integer."""
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}")
    check_positive_int("max_iter", max_iter)


def check_positive_int(name, value):
    """Raise ``ValueError`` unless ``value`` is an integer ≥ 1 (an integral float too)."""
    if int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_real(name, value, *, positive=False, allow_none=False):
    """A finite real ``value`` as a float: > 0 when ``positive``, else ≥ 0; ``None``
    passes through when ``allow_none``. Raises ``ValueError`` naming ``name``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    value = float(value)
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    if not positive and value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return value
