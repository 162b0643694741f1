r"""Penalties on the primal coefficients ``w``: value, gradient, Hessian or prox, and the
derivative of the gradient with respect to the penalty's own weights.

Every penalty is *weighted*: a plain penalty is the weighted one with all weights equal.
Smooth penalties provide ``value``, ``gradient`` and ``hessian`` (a dense ``(d, d)``
matrix -- the problems this package differentiates through have at most a few thousand
coefficients); non-smooth ones provide ``prox``. The bilevel layer needs
``weight_jacobian(w)``, the matrix :math:`\partial \nabla_w P(w; \beta) / \partial \beta`
that enters the implicit-function hypergradient (González Vallejo 2024, "Selección de
variables a través de máquinas de soporte vectorial dispersas: un enfoque de
optimización binivel").

Each capability a solver uses is declared as a small runtime-checkable interface
(:class:`Penalty`, :class:`SmoothPenalty`, :class:`OnePassPenalty`,
:class:`InPlaceHessianPenalty`, :class:`CurvaturePenalty`,
:class:`StructuredHessianPenalty`, :class:`StopAtZeroPenalty`, :class:`ProxPenalty`),
which each penalty subclasses; a problem reads them once when it is built (the
datafit/penalty split of skglm: Bertrand et al. 2022, "Beyond L1: faster and better
sparse models with skglm").

Groups are given as an integer array ``groups`` of length ``d``: ``groups[j] = k`` puts
coefficient ``j`` in group ``k`` (``0 <= k < n_groups``), and ``-1`` leaves it out of the
penalty (an unpenalised intercept, for instance).

The names are defined in :mod:`bisvm.penalties.interfaces` (the capabilities),
:mod:`bisvm.penalties.smooth` (the smoothed elastic net and its structured Hessian) and
:mod:`bisvm.penalties.prox` (the penalties used through their proximal operators).
"""

from .interfaces import (
    CurvaturePenalty,
    InPlaceHessianPenalty,
    OnePassPenalty,
    Penalty,
    ProxPenalty,
    SmoothPenalty,
    StopAtZeroPenalty,
    StructuredHessianPenalty,
)
from .prox import SelectiveRidge, WeightedL1
from .smooth import (
    L2,
    STOP_REACH,
    BlockDiagonalHessian,
    GroupPseudoHuber,
    SumPenalty,
    check_groups,
)

__all__ = [
    "Penalty",
    "SmoothPenalty",
    "OnePassPenalty",
    "InPlaceHessianPenalty",
    "CurvaturePenalty",
    "StructuredHessianPenalty",
    "StopAtZeroPenalty",
    "ProxPenalty",
    "BlockDiagonalHessian",
    "L2",
    "GroupPseudoHuber",
    "WeightedL1",
    "SumPenalty",
    "SelectiveRidge",
    "STOP_REACH",
    "check_groups",
]
