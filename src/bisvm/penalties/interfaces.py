r"""The capabilities a solver may use of a penalty, each a small runtime-checkable
interface that the penalties of :mod:`bisvm.penalties` declare by subclassing it.

A problem reads them once when it is built (:func:`bisvm.losses.provides`), so that
no solver probes a penalty while it runs. The split follows the datafit and penalty
interfaces of skglm (Bertrand et al. 2022, "Beyond L1: faster and better sparse models
with skglm").
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Protocol, runtime_checkable

__all__ = [
    "Penalty",
    "SmoothPenalty",
    "OnePassPenalty",
    "InPlaceHessianPenalty",
    "CurvaturePenalty",
    "StructuredHessianPenalty",
    "StopAtZeroPenalty",
    "ProxPenalty",
]


@runtime_checkable
class Penalty(Protocol):
    """The interface every penalty :math:`P(w)` provides: its value."""

    @abstractmethod
    def value(self, w):
        """:math:`P(w)`."""


@runtime_checkable
class SmoothPenalty(Penalty, Protocol):
    """A twice differentiable penalty: the interface the smooth primal solvers need."""

    @abstractmethod
    def gradient(self, w):
        r""":math:`\nabla P(w)`, shape ``(d,)``."""

    @abstractmethod
    def hessian(self, w):
        r""":math:`\nabla^2 P(w)` as a dense ``(d, d)`` matrix."""


@runtime_checkable
class OnePassPenalty(Protocol):
    """A penalty that returns its value and gradient together, sharing the group norms
    both need (Newton and L-BFGS evaluate both at every trial point)."""

    @abstractmethod
    def value_and_gradient(self, w):
        r"""``(P(w), ∇P(w))``."""


@runtime_checkable
class InPlaceHessianPenalty(Protocol):
    """A penalty that adds its Hessian to a dense matrix in place, without a second
    ``(d, d)`` array."""

    @abstractmethod
    def add_hessian(self, H, w):
        r"""Add :math:`\nabla^2 P(w)` to the square matrix ``H`` in place; return ``H``."""


@runtime_checkable
class CurvaturePenalty(Protocol):
    """A penalty whose Hessian is a diagonal minus one rank-one term per group, the form
    :class:`~bisvm.penalties.BlockDiagonalHessian` stores."""

    @abstractmethod
    def curvature(self, w):
        r"""``(c, u)``: block k of the Hessian is :math:`\mathrm{diag}(c_k) - u_k u_k^\top`
        (``u`` is None when every block is diagonal)."""


@runtime_checkable
class StructuredHessianPenalty(Protocol):
    """A penalty whose Hessian is available as a
    :class:`~bisvm.penalties.BlockDiagonalHessian`, so that the Newton-CG and Woodbury
    solvers never form a ``(d, d)`` matrix."""

    @abstractmethod
    def structured_hessian(self, w):
        """The Hessian at ``w`` as a :class:`~bisvm.penalties.BlockDiagonalHessian`."""


@runtime_checkable
class StopAtZeroPenalty(Protocol):
    """A penalty whose line search stops groups at zero: the trial point of a step is
    not the plain ray (:meth:`~bisvm.penalties.GroupPseudoHuber.stop_at_zero`)."""

    @abstractmethod
    def stop_at_zero(self, w, v):
        """The trial point ``v`` of a step from ``w``, with groups stopped at zero."""


@runtime_checkable
class ProxPenalty(Penalty, Protocol):
    """A non-smooth penalty used through its proximal operator (proximal gradient and
    coordinate methods; Parikh & Boyd 2014, "Proximal algorithms")."""

    @abstractmethod
    def prox(self, v, step):
        r""":math:`\operatorname{prox}_{tP}(v) = \arg\min_u tP(u) + \tfrac12\|u - v\|^2`
        with :math:`t` = ``step``."""

    @abstractmethod
    def subdiff_distance(self, w, grad):
        r"""Per coordinate, the distance of ``-grad`` to :math:`\partial P(w)` (0 at an
        optimum of the loss plus the penalty)."""
