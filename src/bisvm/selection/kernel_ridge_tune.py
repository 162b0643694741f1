r"""Kernel ridge regression that tunes itself: the ridge and the RBF widths (one shared,
or one per feature) learned by gradient descent of the exact leave-one-out error.

Model (:func:`~bisvm.selection.kernel_ridge_loo.kernel_ridge_fit`, sample weights
:math:`s_i > 0`, :math:`q = \sqrt{s}`, :math:`\tilde K = \operatorname{diag}(q)K
\operatorname{diag}(q)`, :math:`A = \tilde K + \lambda I`,
:math:`k(x, x') = \exp(-\sum_j\gamma_j(x_j - x'_j)^2)`):

.. math::
    \min_{\theta, b}\ \sum_i s_i\bigl(y_i - (K\theta)_i - b\bigr)^2 + \lambda\,\theta^\top K\theta .

With :math:`P = A^{-1} - uu^\top/(q^\top u)`, :math:`u = A^{-1}q` (just :math:`A^{-1}`
without intercept), :math:`P` is the leading block of the inverse of the bordered matrix
:math:`M = [A, q; q^\top, 0]`, the fit is :math:`\tilde\theta = P\tilde y`
(:math:`\tilde y = q\circ y`) and the leave-one-out residuals are exact:
:math:`r_i = \tilde\theta_i/(P_{ii}q_i)`. The criterion is their weighted mean square

.. math::
    J = \frac{\sum_i s_ir_i^2}{\sum_i s_i} = \frac1{\sum_i s_i}\sum_i
    \frac{\tilde\theta_i^2}{P_{ii}^2}.

**Gradient in closed form.** :math:`dP = -P\,dA\,P` (the derivative of :math:`M^{-1}`),
so :math:`d\tilde\theta = -P\,dA\,\tilde\theta` and, with
:math:`a_i = 2\tilde\theta_i/(SP_{ii}^2)`, :math:`c_i = 2\tilde\theta_i^2/(SP_{ii}^3)`,
:math:`S = \sum_i s_i`,

.. math::
    dJ = \langle G, dA\rangle,\qquad
    G = P\operatorname{diag}(c)P - \operatorname{sym}\bigl((Pa)\tilde\theta^\top\bigr).

:math:`\partial A/\partial\log\lambda = \lambda I` gives :math:`\lambda\operatorname{tr}G`;
:math:`\partial K_{kl}/\partial\log\gamma_j = -\gamma_jK_{kl}(x_{kj} - x_{lj})^2` gives,
with :math:`W = G\circ\tilde K` (symmetric),
:math:`-\gamma_j\sum_{kl}W_{kl}(x_{kj} - x_{lj})^2 = -2\gamma_j\bigl[(W1)^\top
X^{\circ2} - 1^\top(X\circ WX)\bigr]_j`: all d widths by one :math:`n\times n` by
:math:`n\times d` product. The cost of one value and gradient is one Cholesky
factorisation (:math:`n^3/3`), :math:`P` from its factor (:math:`n^3`), the product
:math:`P\operatorname{diag}(c)P` (:math:`n^3`) and the width terms (:math:`O(n^2d)`):
:math:`O(n^3 + n^2d)` for any number of widths, against one solve per fold *and* per
hyperparameter for finite differences. These are the closed-form leave-one-out
gradients of least-squares kernel machines of Cawley & Talbot (2007), "Preventing
over-fitting during model selection via Bayesian regularisation of the
hyper-parameters" (JMLR 8), there for the LS-SVM, here for kernel ridge with its
unpenalised bias; per-feature widths as in Chapelle, Vapnik, Bousquet & Mukherjee
(2002), "Choosing multiple parameters for support vector machines".

The outer loop (:func:`tune_kernel_ridge`) mirrors :mod:`~bisvm.selection.kernel_fit`:
the best of a short scan of ridges at the median-heuristic width and at a tenth and ten
times it, BiSVM L-BFGS on
:math:`(\log\lambda, \log\gamma)`, then on :math:`(\log\lambda, \log\gamma_1, …,
\log\gamma_d)` from the shared optimum, then the one-standard-error width support
(:func:`~bisvm.selection.kernel_bilevel.width_support`) on the leave-one-out terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..kernels import squared_distances
from ..solvers.dual.kernel_lower_level import rbf_gram
from ..solvers.nystroem import nystroem_ridge_loo, nystroem_ridge_loo_grad
from .bilevel import Evaluation
from .kernel_bilevel import median_gamma, width_support
from .kernel_tune_common import KernelTuneResult, prune_widths, run_outer

__all__ = ["SCAN_RIDGE", "GAMMA_FACTORS", "RIDGE_BETA_MAX", "RIDGE_FLOOR", "RidgeHyperModel",
           "LOOState", "kernel_ridge_loo", "kernel_ridge_loo_grad", "KernelRidgeLOOObjective",
           "tune_kernel_ridge"]

#: Ridges of the starting scan, for a standardised target and an RBF kernel (unit
#: diagonal): from nearly interpolating to a fit that shrinks towards the mean.
SCAN_RIDGE = (1e-3, 1e-2, 1e-1, 1.0)

#: Multiples of the median-heuristic width tried by the starting scan.
GAMMA_FACTORS = (0.1, 1.0, 10.0)

#: Largest factor by which the outer loop may move the ridge or a width from its start
#: (``beta_max`` of :class:`~bisvm.selection.outer.BiSVMLBFGS`): a width 10^4 times the
#: median heuristic makes the kernel the identity, a ridge 10^4 times the largest of
#: the scan fits the mean.
RIDGE_BETA_MAX = 1e4


#: Smallest ridge: :math:`\lambda = \lambda_{\min} + \lambda_0\beta_0`. Below about
#: this, relative to the unit diagonal of an RBF Gram matrix, the factorisation of
#: :math:`A` loses the digits the leave-one-out residuals :math:`\tilde\theta_i/P_{ii}`
#: are made of (both tend to 0 for an interpolating fit), and their computed mean square
#: can fall while the true one rises: the descent would chase rounding errors.
RIDGE_FLOOR = 1e-6


@dataclass(frozen=True)
class RidgeHyperModel:
    r"""Map of the outer variables :math:`\beta > 0` onto :math:`(\lambda, \gamma)`:
    :math:`\lambda = \lambda_{\min} + \lambda_0\beta_0` (:data:`RIDGE_FLOOR`),
    :math:`\gamma_j = \gamma_0\beta_{1+j}` (one shared width or one per feature)."""

    widths: str
    n_features: int
    ridge_ref: float
    gamma_ref: float
    floor: float = RIDGE_FLOOR

    @property
    def n_hyper(self):
        return 1 + (self.n_features if self.widths == "per_feature" else 1)

    def params(self, beta):
        """``(ridge, gamma)`` at ``beta``."""
        beta = np.asarray(beta, dtype=float)
        return self.floor + self.ridge_ref * float(beta[0]), self.gamma_ref * beta[1:]

    def grad_beta(self, beta, grad_log):
        r""":math:`\nabla_\beta J` from the gradient in :math:`(\log\lambda,
        \log\gamma)`."""
        beta = np.asarray(beta, dtype=float)
        ridge, _ = self.params(beta)
        out = grad_log / beta
        out[0] = grad_log[0] * self.ridge_ref / ridge
        return out


@dataclass(frozen=True)
class LOOState:
    r"""One kernel ridge fit with what its gradient needs: the Gram matrix ``K``, the
    projected inverse ``P``, the weighted coefficients :math:`\tilde\theta`, the
    leave-one-out residuals and the criterion ``value``."""

    K: np.ndarray
    P: np.ndarray
    theta: np.ndarray
    residuals: np.ndarray
    value: float


def kernel_ridge_loo(X, y, ridge, gamma, sw=None, fit_intercept=True, sqdist=None):
    r"""Kernel ridge fit at ``(ridge, gamma)`` and its exact leave-one-out residuals
    (module docstring).

    Parameters
    ----------
    X : ndarray, shape (n, d)
    y : ndarray, shape (n,)
    ridge : float
        :math:`\lambda > 0`.
    gamma : float or ndarray of shape (d,)
        One width, or one per feature.
    sw : ndarray of shape (n,), optional
        Positive sample weights (rows of weight 0 must be removed by the caller: they
        do not move the fit and have no leave-one-out residual of their own).
    fit_intercept : bool
    sqdist : ndarray of shape (n, n), optional
        Cached squared distances (shared width).

    Returns
    -------
    LOOState

    Raises
    ------
    numpy.linalg.LinAlgError
        When :math:`A` is not numerically positive definite.
    """
    n = X.shape[0]
    q = np.ones(n) if sw is None else np.sqrt(sw)
    K = rbf_gram(X, X, gamma, sqdist)
    A = K * np.outer(q, q)
    A[np.diag_indices(n)] += float(ridge)
    factor = scipy.linalg.cho_factor(A, lower=True, check_finite=False, overwrite_a=True)
    P = scipy.linalg.cho_solve(factor, np.eye(n), check_finite=False, overwrite_b=True)
    if fit_intercept:
        u = P @ q
        P -= np.outer(u, u / float(q @ u))
    theta = P @ (q * y)
    Pd = np.diag(P)
    r = theta / (Pd * q)
    value = float(np.sum(theta**2 / Pd**2) / np.sum(q**2))
    return LOOState(K, P, theta, r, value)


def kernel_ridge_loo_grad(X, state, ridge, gamma, sw=None, sqdist=None):
    r"""Gradient of the leave-one-out mean squared error with respect to
    :math:`(\log\lambda, \log\gamma)` or :math:`(\log\lambda, \log\gamma_1, …,
    \log\gamma_d)` at the fit ``state`` of :func:`kernel_ridge_loo` (module
    docstring: :math:`dJ = \langle G, dA\rangle`).

    Returns
    -------
    ndarray of shape (2,) or (1 + d,)
    """
    n = X.shape[0]
    q = np.ones(n) if sw is None else np.sqrt(sw)
    P, th = state.P, state.theta
    Pd = np.diag(P)
    S = float(np.sum(q**2))
    a = 2.0 * th / (S * Pd**2)
    c = 2.0 * th**2 / (S * Pd**3)
    Pa = P @ a
    G = (P * c) @ P
    G -= 0.5 * (np.outer(Pa, th) + np.outer(th, Pa))
    g = np.atleast_1d(np.asarray(gamma, dtype=float))
    grad = np.empty(1 + g.size)
    grad[0] = float(ridge) * float(np.trace(G))
    W = G
    W *= state.K
    W *= np.outer(q, q)
    if g.size == 1:
        D = squared_distances(X, X) if sqdist is None else sqdist
        grad[1] = -g[0] * float(np.vdot(W, D))
    else:
        # sum_kl W_kl (x_kj - x_lj)^2 = 2[(W1)^T X^2 - 1^T (X o WX)] for symmetric W
        t = (X * X).T @ W.sum(axis=1) - np.einsum("ij,ij->j", X, W @ X)
        grad[1:] = -2.0 * g * t
    return grad


@dataclass(frozen=True)
class KernelRidgeLOOObjective:
    r"""The upper level :math:`\beta\mapsto J` (the weighted leave-one-out mean squared
    error of kernel ridge) with its closed-form gradient: the object
    :class:`~bisvm.selection.outer.BiSVMLBFGS` minimises, and the ``terms`` interface
    of :func:`~bisvm.selection.kernel_bilevel.width_support`.

    ``hyper`` is a :class:`RidgeHyperModel`. A point where
    :math:`A` is not numerically positive definite (a vanishing ridge) has the value
    ``inf``, which the line search rejects. With ``landmarks`` (rows Z), the model is
    kernel ridge on the Nyström features of Z (:mod:`bisvm.solvers.nystroem`), its
    exact leave-one-out error and gradient at :math:`O(nm^2)`; ``sqdist`` is then the
    pair ``(D_XZ, D_ZZ)``.
    """

    X: np.ndarray
    y: np.ndarray
    hyper: RidgeHyperModel
    sw: np.ndarray | None = None
    fit_intercept: bool = True
    sqdist: object = field(default=None, repr=False)
    landmarks: np.ndarray | None = field(default=None, repr=False)

    folds = ()

    def state(self, ridge, gamma):
        """:func:`kernel_ridge_loo` at ``(ridge, gamma)`` (None where A is singular)."""
        try:
            if self.landmarks is not None:
                return nystroem_ridge_loo(self.X, self.landmarks, self.y, ridge, gamma,
                                          self.sw, self.fit_intercept, self._dist(gamma))
            return kernel_ridge_loo(self.X, self.y, ridge, gamma, self.sw,
                                    self.fit_intercept, self._dist(gamma))
        except np.linalg.LinAlgError:
            return None

    def _dist(self, gamma):
        return self.sqdist if np.size(gamma) == 1 else None

    def terms(self, ridge, gamma, warm=None, tol=None):
        """Per-row squared leave-one-out residuals and their weights (``value = weights
        @ terms``), and the solution (``(theta,)``); ``warm`` and ``tol`` are accepted
        for the interface: the solve is direct."""
        st = self.state(ridge, gamma)
        n = self.X.shape[0]
        w = np.full(n, 1.0 / n) if self.sw is None else self.sw / self.sw.sum()
        if st is None:
            return np.full(n, np.inf), w, (np.zeros(n),)
        return st.residuals**2, w, (st.theta,)

    @staticmethod
    def coefs(solutions):
        """The solution tuple as the warm-start format (unused by a direct solve)."""
        return solutions

    def evaluate(self, beta, warm=None, tol=None, adjoint_warm=None):
        r""":math:`J(\beta)` and :math:`\nabla_\beta J` (:meth:`RidgeHyperModel.grad_beta`)."""
        beta = np.asarray(beta, dtype=float)
        ridge, gamma = self.hyper.params(beta)
        st = self.state(ridge, gamma)
        n = self.X.shape[0]
        if st is None:
            return Evaluation(beta=beta, value=float("inf"), grad=np.zeros_like(beta),
                              coefs=(np.zeros(n),), lower_iterations=0, lower_solves=1)
        if self.landmarks is not None:
            g = nystroem_ridge_loo_grad(self.X, self.landmarks, st, ridge, gamma, self.sw,
                                        self._dist(gamma))
        else:
            g = kernel_ridge_loo_grad(self.X, st, ridge, gamma, self.sw, self._dist(gamma))
        return Evaluation(beta=beta, value=st.value, grad=self.hyper.grad_beta(beta, g),
                          coefs=(st.theta,),
                          lower_iterations=0, lower_solves=1)


def tune_kernel_ridge(X, y, *, sw=None, widths="shared", fit_intercept=True,
                      ridges=SCAN_RIDGE, max_iter=50, tol=1e-4, support_rule="1se",
                      landmarks=None):
    r"""Learn the ridge and the RBF widths of kernel ridge regression by gradient
    descent of its exact leave-one-out mean squared error (module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix, shape (n, d)
        Training features (already standardised if so wanted); sparse rows are
        densified for the exact model, whose n×n matrices dominate its memory.
    y : ndarray, shape (n,)
    sw : ndarray of shape (n,), optional
        Positive sample weights.
    widths : {"shared", "per_feature"}
    fit_intercept : bool
    ridges : sequence of float
        The starting scan, at each multiple :data:`GAMMA_FACTORS` of the
        median-heuristic width.
    max_iter : int
        Outer iterations per stage.
    tol : float
        Outer gradient-norm tolerance in log-parameters.
    support_rule : {"1se", "none"}
        Per-feature widths: the one-standard-error support on the leave-one-out terms,
        or keep every feature.
    landmarks : ndarray of shape (m, d), optional
        Landmark rows: tune kernel ridge on their Nyström features
        (:mod:`bisvm.solvers.nystroem`) instead of the exact kernel.

    Returns
    -------
    KernelTuneResult
        With ``ridge`` and ``ridge0``; ``C`` and ``C0`` are None, ``n_solves`` counts
        factorisations.
    """
    if widths not in ("shared", "per_feature"):
        raise ValueError(f"widths must be 'shared' or 'per_feature', got {widths!r}")
    if support_rule not in ("1se", "none"):
        raise ValueError(f"support_rule must be '1se' or 'none', got {support_rule!r}")
    Z = None if landmarks is None else np.asarray(landmarks, dtype=float)
    if sp.issparse(X) and Z is None:
        X = X.toarray()
    X = X.astype(float) if sp.issparse(X) else np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    D = squared_distances(X, X) if Z is None else \
        (squared_distances(X, Z), squared_distances(Z, Z))
    g0 = median_gamma(X)

    def objective(hyper, dist):
        return KernelRidgeLOOObjective(X, y, hyper, sw, fit_intercept, dist, Z)

    obj = objective(RidgeHyperModel("shared", d, 1.0, g0), D)
    # the criterion is often bimodal in the width (a nearly linear valley at small
    # widths, a local one near the data's scale): the scan tries three widths
    scan = np.empty((len(GAMMA_FACTORS), len(ridges)))
    for a, fac in enumerate(GAMMA_FACTORS):
        for b, lam in enumerate(ridges):
            t, w, _ = obj.terms(lam, np.array([g0 * fac]))
            scan[a, b] = float(w @ t)
    a, b = np.unravel_index(int(np.argmin(scan)), scan.shape)
    lam0, g0 = float(ridges[b]), g0 * GAMMA_FACTORS[a]
    fits = scan.size
    hyper = RidgeHyperModel("shared", d, lam0, g0)
    obj = objective(hyper, D)
    res = run_outer(obj, max_iter=max_iter, tol=tol, beta_max=RIDGE_BETA_MAX)
    ridge, gamma = hyper.params(res.beta)
    value, history, fits = res.value, (res.history,), fits + res.lower_solves
    support, threshold, tests = None, 0.0, ()
    if widths == "per_feature":
        hyper = RidgeHyperModel("per_feature", d, ridge - RIDGE_FLOOR, float(gamma[0]))
        obj = objective(hyper, None)
        res = run_outer(obj, max_iter=max_iter, tol=tol, beta_max=RIDGE_BETA_MAX)
        ridge, gamma = hyper.params(res.beta)
        value, history = res.value, history + (res.history,)
        fits += res.lower_solves
        support = np.arange(d)
        if support_rule == "1se" and d > 1:
            dec = width_support(obj, ridge, gamma, gamma / gamma.sum())
            support, threshold, tests = dec.support, dec.threshold, dec.tested
            fits += dec.n_solves
    return KernelTuneResult(
        C=None, ridge=float(ridge), gamma=np.array(gamma, dtype=float),
        gamma_support=prune_widths(gamma, support), support=support,
        threshold=float(threshold), value=float(value), gamma0=float(g0), C0=None,
        ridge0=lam0, scan_values=np.array(scan), history=history, n_solves=int(fits),
        support_tests=tests)
