r"""What every solver shares: the problem record, the result record, and the warning on an
iteration cap.

A *smooth problem* is

.. math::
    \min_w F(w) = \frac{1}{n}\sum_{i=1}^n s_i\,\ell(y_i, x_i^\top w) + P(w),

with a loss ``ℓ`` from :mod:`bisvm.losses` and a smooth penalty ``P`` from
:mod:`bisvm.penalties` (seed-000 §1.5 for the smoothed elastic-net SVM; seed 002 §3 for
the primal methods). Solvers take the problem and an explicit warm start and return a
frozen :class:`SolverResult`; they keep no state between calls.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ._linalg import structured_hessian_matvec

__all__ = [
    "SmoothProblem",
    "SolverResult",
    "ConvergenceRecord",
    "NewtonFactor",
    "warn_cap",
    "ConvergenceWarning",
]


@dataclass(frozen=True)
class SmoothProblem:
    r"""A frozen smooth, convex primal problem :math:`F(w) = \frac1n\sum s_i \ell_i + P(w)`.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        Design matrix (include a column of ones to fit a bias inside ``w``); a sparse
        matrix is used as it is (products only), never densified by the scalable solvers.
    y : ndarray, shape (n,)
        Targets (±1 for classification losses).
    loss : object with ``value``, ``derivative``, ``second_derivative``
    penalty : object with ``value``, ``gradient``, ``hessian``
    sample_weight : ndarray, shape (n,), optional
        ``s_i`` (ones by default).
    cg_data : CGData, optional
        What the truncated Newton-CG solver precomputes once from a dense ``X`` and
        reuses in every Newton system on it (a float32 copy for mixed-precision
        Hessian-vector products, a sketched feature correlation for the
        preconditioner; :func:`~bisvm.solvers.primal.truncated.prepare_cg_data`).
        Values, gradients and curvatures always use ``X`` itself.
    """

    X: np.ndarray
    y: np.ndarray
    loss: object
    penalty: object
    sample_weight: np.ndarray | None = None
    cg_data: object = None

    @property
    def n_features(self):
        return self.X.shape[1]

    def _s(self):
        n = self.X.shape[0]
        return (1.0 / n) if self.sample_weight is None else self.sample_weight / n

    def value(self, w):
        z = self.X @ w
        return float(np.sum(self._s() * self.loss.value(self.y, z))) + self.penalty.value(w)

    def value_and_gradient(self, w):
        z = self.X @ w
        s = self._s()
        f = float(np.sum(s * self.loss.value(self.y, z))) + self.penalty.value(w)
        g = self.X.T @ (s * self.loss.derivative(self.y, z)) + self.penalty.gradient(w)
        return f, g

    def gradient(self, w):
        return self.value_and_gradient(w)[1]

    def hessian(self, w):
        r""":math:`\frac1n X^\top \mathrm{diag}(s\,\ell'') X + \nabla^2 P(w)` (dense)."""
        z = self.X @ w
        return self.hessian_from_curvature(w, self.loss.second_derivative(self.y, z))

    def hessian_from_curvature(self, w, d2):
        """The dense Hessian at ``w`` given the per-sample second derivatives ``d2`` there
        (a sparse ``X`` gives a dense ``(d, d)`` result: for small problems only)."""
        c = self._s() * d2
        if sp.issparse(self.X):
            H = np.asarray((self.X.T @ self.X.multiply(c[:, None])).todense())
        else:
            # in row blocks: no n x d temporary for tall data
            X = self.X
            H = np.zeros((X.shape[1], X.shape[1]))
            for s in range(0, X.shape[0], 8192):
                Xb = X[s:s + 8192]
                H += Xb.T @ (Xb * c[s:s + 8192, None])
        if hasattr(self.penalty, "add_hessian"):
            self.penalty.add_hessian(H, w)
        else:
            H += self.penalty.hessian(w)
        return H

    def value_gradient_curvature(self, w):
        """``(F(w), ∇F(w), ℓ''(y, Xw))`` in one pass over the samples (for Newton)."""
        z = self.X @ w
        s = self._s()
        if hasattr(self.loss, "value_derivatives"):
            v, d1, d2 = self.loss.value_derivatives(self.y, z)
        else:
            v = self.loss.value(self.y, z)
            d1 = self.loss.derivative(self.y, z)
            d2 = self.loss.second_derivative(self.y, z)
        fp, gp = self._penalty_value_and_gradient(w)
        return float(np.sum(s * v)) + fp, self.X.T @ (s * d1) + gp, d2

    def sample_curvature(self, d2):
        r"""Per-sample weights :math:`c_i = s_i\ell''_i/n` of the loss Hessian
        :math:`X^\top\mathrm{diag}(c)X`."""
        return self._s() * d2

    def hessian_operator(self, w, d2):
        r"""The Hessian at ``w`` as a product :math:`v \mapsto X^\top(c\odot Xv) + Dv`
        (``c`` from ``d2``, :math:`D` the penalty's structured Hessian): O(nnz) per
        product, nothing d × d."""
        c = self.sample_curvature(d2)
        D = self.penalty_hessian(w)
        return partial(structured_hessian_matvec, self.X, c, D)

    def penalty_hessian(self, w):
        """The penalty's Hessian at ``w`` as a structured
        :class:`~bisvm.penalties.BlockDiagonalHessian` (nothing d × d)."""
        return self.penalty.structured_hessian(w)

    def _penalty_value_and_gradient(self, w):
        if hasattr(self.penalty, "value_and_gradient"):
            return self.penalty.value_and_gradient(w)
        return self.penalty.value(w), self.penalty.gradient(w)


class NewtonFactor:
    r"""The interface of a Newton system :math:`H = \nabla^2 E(\hat w)` handed out by a
    solver in :attr:`SolverResult.factor`.

    ``solve(rhs, x0=None)`` returns :math:`H^{-1} r` for a vector (or, where the
    implementation says so, a matrix) ``rhs``; ``x0`` is a warm start that iterative
    implementations use (the previous adjoint, for instance) and direct ones ignore.
    ``matvec(v)`` returns :math:`H v`. For a problem solved on a support (exact
    weighted L1), :math:`H` is the Hessian restricted to the support and the solution is
    zero off it. ``n_matvec`` counts Hessian-vector products spent so far (0 for a
    direct factorisation).
    """

    n_matvec = 0

    def solve(self, rhs, x0=None):  # pragma: no cover - interface
        raise NotImplementedError

    def matvec(self, v):  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class ConvergenceRecord:
    """Per-iteration objective, gradient norm and elapsed seconds of one solve."""

    objective: np.ndarray
    grad_norm: np.ndarray
    seconds: np.ndarray


@dataclass(frozen=True)
class SolverResult:
    """Frozen outcome of a solve.

    Attributes
    ----------
    coef : ndarray
        The solution ``w``.
    objective : float
    grad_norm : float
        Final stopping certificate (gradient norm for smooth solvers).
    n_iter : int
        Iterations (Newton / quasi-Newton steps).
    n_evals : int
        Objective-and-gradient evaluations (line-search trials included).
    converged : bool
    seconds : float
    record : ConvergenceRecord
    extra : dict
        Solver-specific outputs (dual coefficients, active set, ...).
    certificate : str
        Name of the stopping certificate held in ``grad_norm`` (``"grad_norm"``: the
        Euclidean norm of the gradient; ``"kkt_violation"``: the largest violation of the
        optimality conditions of a non-smooth problem).
    factor : object or None
        A public handle on the Newton system at ``coef`` (see :class:`NewtonFactor`), for
        callers that solve with the Hessian afterwards (hypergradients, predictors).
    method : str
        Which algorithm produced the result (``"dense"``, ``"woodbury"``, ``"cg"``, ...).
    """

    coef: np.ndarray
    objective: float
    grad_norm: float
    n_iter: int
    n_evals: int
    converged: bool
    seconds: float
    record: ConvergenceRecord
    extra: dict = field(default_factory=dict)
    certificate: str = "grad_norm"
    factor: object = None
    method: str = ""


def warn_cap(solver, max_iter, certificate, tol):
    """Warn with :class:`ConvergenceWarning` that ``solver`` stopped on its iteration cap."""
    warnings.warn(
        f"{solver} stopped after max_iter={max_iter} iterations with a stopping "
        f"criterion of {certificate:.3g} > tol={tol:.3g}; increase max_iter or tol",
        ConvergenceWarning,
        stacklevel=3,
    )
