r"""What every solver shares: the problem record, the result record, and the warning on an
iteration cap.

A *smooth problem* is

.. math::
    \min_w F(w) = \frac{1}{n}\sum_{i=1}^n s_i\,\ell(y_i, x_i^\top w) + P(w),

with a loss ``ℓ`` from :mod:`bisvm.losses` and a smooth penalty ``P`` from
:mod:`bisvm.penalties` (González Vallejo 2024 for the smoothed elastic-net SVM; Nocedal
& Wright 2006, "Numerical optimization", for the primal methods). Solvers take the
problem and an explicit warm start and return a frozen :class:`SolverResult`; they keep
no state between calls.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._linalg import NewtonFactor
from .problems import SmoothProblem

__all__ = [
    "SmoothProblem",
    "SolverResult",
    "CERTIFICATES",
    "ActivePartition",
    "SelectivityPath",
    "ConvergenceRecord",
    "NewtonFactor",
    "warn_cap",
    "ConvergenceWarning",
]


@dataclass(frozen=True)
class ConvergenceRecord:
    """Per-iteration objective, stopping certificate and elapsed seconds of one solve.

    The column ``grad_norm`` holds the certificate the result names in
    :attr:`SolverResult.certificate` (a gradient norm, a KKT violation, a duality gap, ...);
    its name is kept because saved model files store this record
    (``ElasticNetSVC.convergence_``).
    """

    objective: np.ndarray
    grad_norm: np.ndarray
    seconds: np.ndarray

    @property
    def certificate_values(self):
        """The certificate per iteration (the ``grad_norm`` column under its general name)."""
        return self.grad_norm


#: The stopping certificates a :class:`SolverResult` can name, and what each measures.
CERTIFICATES = MappingProxyType({
    "gradient_norm": "Euclidean norm of the gradient of a smooth objective",
    "relative_gradient_norm": "gradient norm relative to its value at the start (finite Newton)",
    "kkt_violation": "largest violation of the optimality (KKT) conditions",
    "max_violating_pair": "m(alpha) - M(alpha) of the maximal violating pair (SMO, LIBSVM)",
    "projected_gradient_spread": "max - min projected gradient over the active set (dual CD)",
    "relative_violation": "largest dual violation relative to its first value (dual CD SVR)",
    "max_violation": "largest violation of the sub-problem optimality (Crammer-Singer)",
    "duality_gap": "primal minus dual objective, relative to the primal",
    "callback": "the user callback stopped the solve; the value is the last gradient norm",
    "lp_optimal": "the linear programme was solved to optimality (value 0)",
    "path_vertex": "a vertex of a piecewise-linear path, exact up to rounding (value 0)",
})


@dataclass(frozen=True)
class ActivePartition:
    r"""Which dual variables of a piecewise problem sit where: the warm-startable state of
    an active-set solver (the selective dual Newton method of Angulo Yauri 2020).

    Attributes
    ----------
    free : ndarray of bool, shape (n,)
        Variables strictly inside their box (the Newton face).
    kink : ndarray of bool, shape (n,)
        Variables at a kink of the loss.
    kink_sign : ndarray, shape (n,)
        The side of the kink (±1) for those at one, 0 elsewhere.
    """

    free: np.ndarray
    kink: np.ndarray
    kink_sign: np.ndarray


class SelectivityPath(NamedTuple):
    """A path of solves over a grid of selectivities (Algorithm B of Angulo Yauri 2020): the grid,
    one :class:`SolverResult` per grid point and the smallest selectivity whose
    solution is empty."""

    selectivities: np.ndarray
    results: list
    selectivity_max: float


@dataclass(frozen=True)
class SolverResult:
    """The frozen outcome of every solve: one type for primal, dual and path solvers.

    Attributes
    ----------
    coef : ndarray
        The primal weights ``w`` over the features: shape ``(d,)``, or ``(k, d)`` for a
        multi-class solver.
    objective : float
        The objective the solver minimised (the dual objective for a dual-only solver,
        said in its docstring).
    certificate_value : float
        The final value of the stopping certificate named by ``certificate``.
    n_iter : int
        Iterations (Newton / quasi-Newton steps, CD sweeps, SMO pairs, ...).
    n_evals : int
        Objective-and-gradient evaluations (line-search trials included).
    converged : bool
    seconds : float
    record : ConvergenceRecord
        Objective, certificate and time per iteration.
    certificate : str
        A key of :data:`CERTIFICATES`.
    factor : object or None
        A public handle on the Newton system at ``coef`` (see :class:`NewtonFactor`), for
        callers that solve with the Hessian afterwards (hypergradients, leave-one-out).
    method : str
        Which algorithm produced the result (``"dense"``, ``"woodbury"``, ``"cg"``, ...).
    intercept : float or ndarray
        The unpenalised offset ``b`` of ``Xw + b`` (0 when the solver fits none).
    dual_coef : ndarray or None
        Dual variables (α of SMO and dual CD, λ of the selective dual, ...).
    active_set : ndarray of int or None
        Indices the solver reports as active; each solver's docstring says of what
        (support vectors, nonzero weights, the greedy basis in selection order).
    dual_objective : float or None
    partition : ActivePartition or None
        A warm-startable set state (selective dual Newton).
    stats : mapping
        Read-only solver-specific diagnostics, documented by each solver.
    """

    coef: np.ndarray
    objective: float = float("nan")
    certificate_value: float = float("nan")
    n_iter: int = 0
    n_evals: int = 0
    converged: bool = False
    seconds: float = 0.0
    record: ConvergenceRecord | None = None
    certificate: str = "gradient_norm"
    factor: object = None
    method: str = ""
    intercept: float | np.ndarray = 0.0
    dual_coef: np.ndarray | None = None
    active_set: np.ndarray | None = None
    dual_objective: float | None = None
    partition: ActivePartition | None = None
    stats: Mapping = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self):
        if self.certificate not in CERTIFICATES:
            raise ValueError(f"unknown certificate {self.certificate!r}; "
                             f"expected one of {sorted(CERTIFICATES)}")
        if not isinstance(self.stats, MappingProxyType):
            object.__setattr__(self, "stats", MappingProxyType(dict(self.stats)))


def warn_cap(solver, max_iter, certificate, tol):
    """Warn with :class:`ConvergenceWarning` that ``solver`` stopped on its iteration cap."""
    warnings.warn(
        f"{solver} stopped after max_iter={max_iter} iterations with a stopping "
        f"criterion of {certificate:.3g} > tol={tol:.3g}; increase max_iter or tol",
        ConvergenceWarning,
        stacklevel=3,
    )
