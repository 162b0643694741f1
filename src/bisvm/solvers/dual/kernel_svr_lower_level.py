r"""The regression kernel lower level of hyperparameter learning: the L2-loss ε-SVR
(squared ε-insensitive loss) with an RBF kernel of one width per feature, its exact
free-set solution, and the hypergradient of a validation function of its outputs by one
adjoint solve.

Problem (one fold, :math:`f(x) = \sum_i\beta_ik(x, x_i) + b`)

.. math::
    \min_{f, b}\ \tfrac12\lVert f\rVert_{\mathcal H}^2
    + \tfrac C2\sum_i\max(0, |y_i - f(x_i)| - \varepsilon)^2,

whose dual is :math:`\min_\beta\tfrac12\beta^\top(K + I/C)\beta - y^\top\beta
+ \varepsilon\lVert\beta\rVert_1`, :math:`1^\top\beta = 0`: the L1-loss ε-SVR with
:math:`C = \infty` on the kernel :math:`K + I/C` (the regression form of the
equivalence of the L2-SVM and the hard-margin SVM on :math:`K + I/C`; Cortes & Vapnik
1995). As for the L2-SVM (Keerthi, Sindhwani & Chapelle 2007), there is no upper bound,
so on the *free set* :math:`F = \{i: |y_i - f_i| > \varepsilon\}` with signs
:math:`\sigma_F = \operatorname{sign}(y_F - f_F)` the solution solves a linear system

.. math::
    M\begin{bmatrix}\beta_F\\ b\end{bmatrix} = \begin{bmatrix}y_F - \varepsilon\sigma_F
    \\ 0\end{bmatrix},\qquad M = \begin{bmatrix}A & 1\\ 1^\top & 0\end{bmatrix},\quad
    A = K_{FF} + I/C,

(:math:`\beta_i = C(y_i - f_i - \varepsilon\sigma_i)`), differentiable in
:math:`(C, \varepsilon, \gamma)` wherever F and σ do not change.
:func:`solve_l2svr` finds F by the finite Newton iteration of Chapelle (2007),
"Training a support vector machine in the primal": solve the system on the current F,
recompute the residuals, take the new F, until F and σ repeat (warm-started from the
previous free set along the outer path); should that cycle, bisvm's SMO
(:class:`~bisvm.estimators.svm.SVR` on :math:`K + I/C`, :math:`C=\infty`) gives F,
and the system is solved on it. :math:`M` is solved through the Cholesky factor of
:math:`A` and the scalar Schur complement of the bias border; no inverse is formed.

Hypergradient (:func:`l2svr_hypergradient`) of :math:`E(f_V)`,
:math:`e = \partial E/\partial f_V`: one adjoint solve
:math:`M\lambda = [K_{FV}e;\ 1^\top e]` serves every hyperparameter,

.. math::
    \frac{dE}{d\theta} = \lambda^\top\Bigl(\frac{\partial r}{\partial\theta}
    - \frac{\partial M}{\partial\theta}\begin{bmatrix}\beta_F\\ b\end{bmatrix}\Bigr)
    + e^\top\frac{\partial K_{VF}}{\partial\theta}\beta_F,

with :math:`r` the right-hand side: :math:`\partial/\partial\log C` is
:math:`\lambda_F^\top\beta_F/C`, :math:`\partial/\partial\log\varepsilon` is
:math:`-\varepsilon\lambda_F^\top\sigma_F`, and the widths enter through
:math:`\partial K_{ab}/\partial\log\gamma_j = -\gamma_j(x_{aj} - x_{bj})^2K_{ab}`: all
d of them by one :math:`|F|\times|F|` by :math:`|F|\times d` product, as for the L2-SVM
(Chapelle, Vapnik, Bousquet & Mukherjee 2002).

**Sample weights** :math:`s_i` scale each row's loss, i.e. its C to :math:`Cs_i`
(LIBSVM's per-instance weights do the same to the L1 loss): :math:`I/C` becomes
:math:`\operatorname{diag}(1/(Cs_i))` throughout, and the log C derivative is
:math:`\lambda_F^\top(\beta_F/(Cs_F))`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ...kernels import squared_distances
from .._linalg import cholesky_factor, cholesky_factor_solve
from .kernel_lower_level import rbf_gram

__all__ = ["SVRFold", "L2SVRSolution", "solve_l2svr", "l2svr_outputs",
           "l2svr_hypergradient", "width_terms", "NEWTON_ROUNDS", "SMO_MAX_ITER_PER_ROW"]

#: Finite Newton rounds before the solve falls back to SMO for its free set.
NEWTON_ROUNDS = 30

#: SMO iterations per training row allowed to the fallback.
SMO_MAX_ITER_PER_ROW = 1000


def width_terms(XA, XB, W):
    r""":math:`\sum_{ab}W_{ab}(x_{aj} - x_{bj})^2` for every feature j (dense rows), by
    :math:`(W1)^\top X_A^{\circ2} + (W^\top1)^\top X_B^{\circ2} - 2\,1^\top(X_A\circ WX_B)`."""
    t = (XA * XA).T @ W.sum(axis=1) + (XB * XB).T @ W.sum(axis=0)
    return t - 2.0 * np.einsum("ij,ij->j", XA, W @ XB)


@dataclass(frozen=True)
class SVRFold:
    """One fold: dense training and validation rows with their targets, and (optionally)
    the squared distances a shared width reuses at every outer iteration."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    sqdist_train: np.ndarray | None = None
    sqdist_val: np.ndarray | None = None
    sw_train: np.ndarray | None = None
    sw_val: np.ndarray | None = None

    @classmethod
    def build(cls, X_train, y_train, X_val, y_val, cache_distances=False, sw_train=None,
              sw_val=None):
        """The fold, with the train-train and validation-train distances if asked, and
        positive sample weights of its rows (training: a row's C is :math:`Cs_i`;
        validation: a row's weight in the fold's mean squared error)."""
        if sp.issparse(X_train) or sp.issparse(X_val):
            raise TypeError("SVRFold needs dense rows")
        Dt = Dv = None
        if cache_distances:
            Dt = squared_distances(X_train, X_train)
            Dv = squared_distances(X_val, X_train)
        wt = None if sw_train is None else np.asarray(sw_train, float)
        wv = None if sw_val is None else np.asarray(sw_val, float)
        return cls(np.asarray(X_train, float), np.asarray(y_train, float),
                   np.asarray(X_val, float), np.asarray(y_val, float), Dt, Dv, wt, wv)

    def inv_c(self, C, rows=None):
        """The diagonal :math:`1/(Cs_i)` of the training rows ``rows`` (all by default)
        that the L2 loss adds to the kernel."""
        n = self.y_train.size if rows is None else np.size(rows)
        if self.sw_train is None:
            return np.full(n, 1.0 / C)
        s = self.sw_train if rows is None else self.sw_train[rows]
        return 1.0 / (C * s)

    def gram(self, gamma):
        """Training Gram matrix at ``gamma``."""
        return rbf_gram(self.X_train, self.X_train, gamma, self.sqdist_train)

    def val_gram(self, gamma, cols=None):
        """Validation-by-training Gram block (training columns ``cols``)."""
        Xt = self.X_train if cols is None else self.X_train[cols]
        D = None
        if self.sqdist_val is not None:
            D = self.sqdist_val if cols is None else self.sqdist_val[:, cols]
        return rbf_gram(self.X_val, Xt, gamma, D)


@dataclass(frozen=True)
class L2SVRSolution:
    """The L2-loss ε-SVR at ``(C, epsilon, gamma)``: the expansion ``beta`` (zero off the
    free set), ``bias``, the free set and its signs, the Cholesky factor of
    :math:`A = K_{FF} + I/C` with :math:`A^{-1}1` and the Schur complement
    :math:`1^\\top A^{-1}1`, the training Gram matrix, and the solve's rounds."""

    beta: np.ndarray
    bias: float
    free: np.ndarray
    sign: np.ndarray
    factor: tuple | None
    Ainv1: np.ndarray | None
    schur: float
    C: float
    epsilon: float
    gamma: np.ndarray
    gram: np.ndarray
    n_iter: int

    def solve_bordered(self, r, r_bias):
        """:math:`M^{-1}[r; r_b]` through the factor (block elimination of the bias)."""
        z = cholesky_factor_solve(self.factor, r)
        b = (float(z.sum()) - r_bias) / self.schur
        return z - b * self.Ainv1, b


def _free_solve(K, y, F, sigma, dinv, eps):
    """The bordered free-set system on F (``dinv``: the diagonal 1/(C s_i) of all
    training rows): ``(beta_F, b, factor, A^{-1}1, schur)``."""
    A = K[np.ix_(F, F)].copy()
    A[np.diag_indices(F.size)] += dinv[F]
    fac = cholesky_factor(A, lower=True)
    rhs = y[F] - eps * sigma
    z = cholesky_factor_solve(fac, rhs)
    u = cholesky_factor_solve(fac, np.ones(F.size))
    schur = float(u.sum())
    b = float(z.sum()) / schur
    return z - b * u, b, fac, u, schur


def _smo_free_set(K, y, dinv, eps):
    """Free set and signs from bisvm's SMO: the L1-loss ε-SVR with C = ∞ on
    K + diag(1/(C s))."""
    from ...estimators.svm import SVR  # the estimator layer wraps the SMO driver

    A = K + np.diag(dinv)
    # at a large C, K + I/C is nearly singular and SMO can take millions of steps to
    # certify a free set whose system is then solved exactly anyway: its iterations are
    # capped, and the free set it has reached is taken
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = SVR(kernel="precomputed", C=np.inf, epsilon=eps, tol=1e-6,
                max_iter=SMO_MAX_ITER_PER_ROW * K.shape[0]).fit(A, y)
    F = np.sort(np.asarray(m.support_))
    coef = np.zeros(K.shape[0])
    coef[m.support_] = np.ravel(m.dual_coef_)
    return F, np.sign(coef[F])


def solve_l2svr(fold, C, epsilon, gamma, warm=None):
    r"""Exact solution of the L2-loss ε-SVR on ``fold`` (module docstring).

    Parameters
    ----------
    fold : SVRFold
    C : float
        > 0.
    epsilon : float
        >= 0.
    gamma : ndarray of shape (1,) or (d,)
    warm : ndarray of shape (n_train,), optional
        The expansion β of a nearby solution: its non-zeros and their signs are the
        free set and signs that start the Newton iteration (default: every row, signed
        by its residual from the mean).

    Returns
    -------
    L2SVRSolution
    """
    K = fold.gram(gamma)
    y = fold.y_train
    n = y.size
    dinv = fold.inv_c(C)
    if warm is not None and np.size(warm) == n and np.any(warm != 0):
        F = np.flatnonzero(warm)
        sigma = np.sign(np.asarray(warm)[F])
    else:
        F = np.arange(n)
        sigma = np.where(y >= y.mean(), 1.0, -1.0)
    seen = set()
    rounds, converged = 0, False
    while rounds < NEWTON_ROUNDS:
        rounds += 1
        beta_F, b, fac, u, schur = _free_solve(K, y, F, sigma, dinv, epsilon)
        r = y - K[:, F] @ beta_F - b
        newF = np.flatnonzero(np.abs(r) > epsilon)
        newS = np.sign(r[newF])
        key = (newF.tobytes(), newS.tobytes())
        if newF.size and np.array_equal(newF, F) and np.array_equal(newS, sigma):
            converged = True
            break
        if key in seen or newF.size == 0:
            break
        seen.add(key)
        F, sigma = newF, newS
    if not converged:
        # a cycle, an empty free set or too many rounds: SMO decides the free set
        F, sigma = _smo_free_set(K, y, dinv, epsilon)
        if F.size == 0:  # every residual inside the tube: f is the constant b,
            # pinned by the row of largest residual (beta stays 0 by 1'beta = 0)
            F = np.array([int(np.argmax(np.abs(y - y.mean())))])
            sigma = np.where(y[F] >= y.mean(), 1.0, -1.0)
        beta_F, b, fac, u, schur = _free_solve(K, y, F, sigma, dinv, epsilon)
    beta = np.zeros(n)
    beta[F] = beta_F
    return L2SVRSolution(beta, float(b), F, sigma, fac, u, schur, float(C), float(epsilon),
                         np.atleast_1d(np.asarray(gamma, float)), K, rounds)


def l2svr_outputs(fold, sol):
    """Validation outputs :math:`f_V` and the block :math:`K_{VF}`."""
    KVF = fold.val_gram(sol.gamma if sol.gamma.size > 1 else float(sol.gamma[0]), sol.free)
    return KVF @ sol.beta[sol.free] + sol.bias, KVF


def l2svr_hypergradient(fold, sol, e, KVF):
    r"""Gradient of :math:`E(f_V)` with respect to :math:`(\log C, \log\varepsilon,
    \log\gamma)` or :math:`(\log C, \log\varepsilon, \log\gamma_1, …, \log\gamma_d)`
    by one adjoint solve with the free-set factor (module docstring).

    Parameters
    ----------
    fold : SVRFold
        The training and validation rows and targets of the fold.
    sol : L2SVRSolution
        The lower-level solution: its free set ``F``, coefficients, signs and the
        bordered factor.
    e : ndarray, shape (n_val,)
        :math:`\partial E/\partial f_V` (the validation function's derivative with
        respect to the predictions).
    KVF : ndarray, shape (n_val, |F|)
        Kernel between the validation rows and the free training rows, as returned by
        :func:`l2svr_outputs`.

    Returns
    -------
    ndarray of shape (2 + n_widths,)
    """
    F = sol.free
    n_w = sol.gamma.size
    lamF, _ = sol.solve_bordered(KVF.T @ e, float(e.sum()))
    bF = sol.beta[F]
    grad = np.empty(2 + n_w)
    grad[0] = float(lamF @ (bF * fold.inv_c(sol.C, F)))
    grad[1] = -sol.epsilon * float(lamF @ sol.sign)
    W = sol.gram[np.ix_(F, F)] * np.outer(lamF, bF)
    Aval = KVF * np.outer(e, bF)
    if n_w == 1 and fold.sqdist_train is not None and fold.sqdist_val is not None:
        imp = float(np.vdot(W, fold.sqdist_train[np.ix_(F, F)]))
        exp_ = float(np.vdot(Aval, fold.sqdist_val[:, F]))
    else:
        XF = fold.X_train[F]
        imp = width_terms(XF, XF, W)
        exp_ = width_terms(fold.X_val, XF, Aval)
        if n_w == 1:
            imp, exp_ = imp.sum(), exp_.sum()
    grad[2:] = sol.gamma * (imp - exp_)
    return grad
