r"""The Nyström approximation of an RBF kernel; kernel ridge regression on it with its
exact leave-one-out error and that error's gradient in the ridge and the widths; and
the L2-SVM and L2-loss ε-SVR on its features with their adjoint derivatives
(:func:`solve_piecewise_l2`, :func:`piecewise_l2_hypergradient`), the lower levels of
the self-tuning classifier and ε-SVR beyond the exact sizes.

**Approximation** (Williams & Seeger 2001, "Using the Nyström method to speed up
kernel machines"). With m landmark rows :math:`Z` (:func:`select_landmarks`),
:math:`B = K(X, Z)` (n×m) and :math:`C = K(Z, Z)`, the Gram matrix is approximated by
:math:`K \approx BC^{-1}B^\top = \Phi\Phi^\top` with the features
:math:`\Phi = BL^{-\top}`, :math:`C + \delta I = LL^\top` (:func:`nystroem_features`).
The Cholesky factor stands in for the :math:`C^{-1/2}` of the textbook features: any
:math:`\Phi` with :math:`\Phi\Phi^\top = BC^{-1}B^\top` gives the same kernel machine,
and the factor is differentiable where an eigendecomposition with a cut-off is not. The
jitter :math:`\delta` (:data:`JITTER`) keeps the factor defined when landmarks nearly
coincide, as in Gaussian-process practice (Rasmussen & Williams 2006, §3.4.3).

**Kernel ridge on the features** is ridge regression on :math:`\Phi` with an
unpenalised intercept and sample weights :math:`s_i` (:math:`q = \sqrt s`):

.. math::
    \min_{w, b}\ \sum_is_i(y_i - \phi_i^\top w - b)^2 + \lambda\lVert w\rVert^2,

equivalently :math:`f(x) = k(x, Z)^\top a + b` with the penalty
:math:`\lambda a^\top(C + \delta I)a`, :math:`a = L^{-\top}w` (the "subset of
regressors"). With :math:`\tilde\Phi = \operatorname{diag}(q)[1, \Phi]`,
:math:`Q = \tilde\Phi^\top\tilde\Phi + \lambda\operatorname{diag}(0, I)` (positive
definite: its smallest eigenvalue is at least :math:`\min(\lambda, \cdot)` away from 0),
the fit is :math:`\theta = Q^{-1}\tilde\Phi^\top(q\circ y)`, the leverages are
:math:`h_i = (\tilde\Phi Q^{-1}\tilde\Phi^\top)_{ii}` and the leave-one-out residuals
of this linear smoother are exact for fixed landmarks:
:math:`r_i = e_i/(1 - h_i)`, :math:`e = y - f`. The criterion is
:math:`J = \sum_is_ir_i^2/\sum_is_i`, as for exact kernel ridge
(:mod:`~bisvm.selection.kernel_ridge_tune`), at :math:`O(nm^2)` instead of
:math:`O(n^3)`.

**Gradient.** With :math:`\tilde e = q\circ e`, :math:`S = \sum_i s_i`,
:math:`\alpha_i = 2\tilde e_i/(S(1-h_i)^2)`, :math:`c_i = 2\tilde e_i^2/(S(1-h_i)^3)`,
:math:`U = \tilde\Phi Q^{-1}`, :math:`v = Q^{-1}\tilde\Phi^\top\alpha`,
:math:`R = U^\top\operatorname{diag}(c)U`, the differential of J in the design and the
penalty matrix is :math:`dJ = \langle G, d\tilde\Phi\rangle + \langle H, dP\rangle` with

.. math::
    G = -\alpha\theta^\top - \tilde ev^\top + (\tilde\Phi v)\theta^\top
        + 2\operatorname{diag}(c)U - 2\tilde\Phi R,\qquad
    H = \operatorname{sym}(v\theta^\top) - R .

Going back through :math:`\Phi = BL^{-\top}` (the whitening is a change of variables
of the same model, so the differential in the subset-of-regressors variables is
:math:`G` and :math:`H` mapped by :math:`L^{-1}`): :math:`\partial J/\partial B =
\operatorname{diag}(q)G_{:,1:}L^{-1}`, :math:`\partial J/\partial C =
\lambda L^{-\top}H_{1:,1:}L^{-1}` and :math:`\partial J/\partial\log\lambda =
\lambda\operatorname{tr}H_{1:,1:}`. The widths enter B and C through
:math:`\partial k(x, z)/\partial\log\gamma_j = -\gamma_j(x_j - z_j)^2k(x, z)`: all d of
them by two products of cost :math:`O(nmd)` (:func:`width_terms`). This is the
hypergradient through the dependence of :math:`\Phi` on the widths; the landmarks
themselves stay fixed rows of the data.

**Linear machines on the features.** The L2-SVM and the L2-loss ε-SVR on Φ are linear
machines with a squared piecewise loss, solved exactly by the finite Newton method
(:func:`solve_piecewise_l2`); their criterion's gradient in Φ comes from one adjoint
solve as a few rank-one terms, and :func:`nystroem_width_grad` carries it to the
widths: with the penalty :math:`\lVert w\rVert^2` such a machine depends on Φ only
through :math:`\Phi\Phi^\top`, so the derivative of the Cholesky factor drops out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..kernels import squared_distances
from .dual.kernel_lower_level import rbf_gram
from .primal.finite_newton import exact_line_search

__all__ = ["JITTER", "LANDMARK_METHODS", "DEFAULT_COMPONENTS", "select_landmarks",
           "nystroem_features", "nystroem_blocks", "width_terms", "nystroem_width_grad",
           "PiecewiseL2Solution", "solve_piecewise_l2", "piecewise_l2_hypergradient",
           "NystroemRidgeState", "nystroem_ridge_loo", "nystroem_ridge_loo_grad",
           "nystroem_ridge_coef", "landmark_coef"]

#: Diagonal jitter :math:`\delta` added to :math:`C = K(Z, Z)` (whose diagonal is 1 for
#: an RBF kernel) before its Cholesky factorisation.
JITTER = 1e-8

#: Default rank m of the approximation (landmark rows) of the self-tuning estimators:
#: their per-evaluation cost is :math:`O(nm^2)` and memory :math:`O(nm)`.
DEFAULT_COMPONENTS = 500

#: Landmark rules of :func:`select_landmarks`.
LANDMARK_METHODS = ("kmeans++", "uniform")


def _dense_rows(X, idx):
    rows = X[idx]
    return np.asarray(rows.toarray() if sp.issparse(rows) else rows, dtype=float)


def select_landmarks(X, n_components, method="kmeans++", random_state=0):
    r"""Indices of ``n_components`` distinct landmark rows of ``X``.

    ``"uniform"`` draws rows without replacement. ``"kmeans++"`` is the seeding of
    Arthur & Vassilvitskii (2007), "k-means++: the advantages of careful seeding": each
    next landmark is drawn with probability proportional to its squared distance to the
    nearest landmark so far, which spreads the landmarks over the data and, for the
    Nyström approximation, lowers its error against uniform sampling (Zhang, Tsang &
    Kwok 2008, "Improved Nyström low-rank approximation and error analysis"). Cost
    :math:`O(nmd)`.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    n_components : int
        Number of landmarks m (at most n).
    method : {"kmeans++", "uniform"}
    random_state : int, numpy Generator or None

    Returns
    -------
    ndarray of int, shape (min(m, n),)
    """
    if method not in LANDMARK_METHODS:
        raise ValueError(f"method must be one of {LANDMARK_METHODS}, got {method!r}")
    n = X.shape[0]
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) \
            or n_components < 1:
        raise ValueError(f"n_components must be a positive int, got {n_components!r}")
    m = min(int(n_components), n)
    rng = np.random.default_rng(random_state)
    if method == "uniform" or m == n:
        return np.sort(rng.choice(n, m, replace=False))
    chosen = np.empty(m, dtype=np.intp)
    chosen[0] = rng.integers(n)
    dist = squared_distances(X, _dense_rows(X, chosen[:1])).ravel()
    for k in range(1, m):
        tot = float(dist.sum())
        if not tot > 0:  # every row coincides with a landmark: fill uniformly
            rest = np.setdiff1d(np.arange(n), chosen[:k])
            chosen[k:] = rng.choice(rest, m - k, replace=False)
            break
        chosen[k] = rng.choice(n, p=dist / tot)
        np.minimum(dist, squared_distances(X, _dense_rows(X, chosen[k:k + 1])).ravel(),
                   out=dist)
        dist[chosen[k]] = 0.0
    return np.sort(chosen)


def _factor(C):
    Cj = C.copy()
    Cj[np.diag_indices_from(Cj)] += JITTER
    return scipy.linalg.cholesky(Cj, lower=True, check_finite=False)


def nystroem_features(X, Z, gamma):
    r"""The Nyström features :math:`\Phi = K(X, Z)L^{-\top}`, :math:`LL^\top =
    K(Z, Z) + \delta I` (module docstring): :math:`\Phi\Phi^\top` approximates the RBF
    Gram matrix of width ``gamma`` (a scalar or one per feature).

    Returns
    -------
    ndarray of shape (n, m)
    """
    return nystroem_blocks(X, Z, gamma)[3]


def width_terms(XA, XB, W):
    r""":math:`\sum_{ab}W_{ab}(x_{aj} - x_{bj})^2` for every feature j, by
    :math:`(W1)^\top X_A^{\circ2} + (W^\top1)^\top X_B^{\circ2} - 2\,1^\top(X_A\circ
    WX_B)`; ``XA`` dense or sparse, ``XB`` dense."""
    if sp.issparse(XA):
        XA = sp.csr_matrix(XA)
        t = np.asarray(XA.multiply(XA).T @ W.sum(axis=1)).ravel()
        cross = np.asarray(XA.multiply(W @ XB).sum(axis=0)).ravel()
    else:
        t = (XA * XA).T @ W.sum(axis=1)
        cross = np.einsum("ij,ij->j", XA, W @ XB)
    return t + (XB * XB).T @ W.sum(axis=0) - 2.0 * cross


def nystroem_blocks(X, Z, gamma, sqdist=None):
    r"""The blocks of the Nyström features at ``gamma``: ``(B, C, L, Phi)`` with
    :math:`B = K(X, Z)`, :math:`C = K(Z, Z)`, :math:`LL^\top = C + \delta I` and
    :math:`\Phi = BL^{-\top}`; ``sqdist`` the cached ``(D_XZ, D_ZZ)`` of a shared
    width. Cost :math:`O(nm^2)`, the price of one evaluation of a criterion on the
    features."""
    g = np.atleast_1d(np.asarray(gamma, dtype=float))
    Dxz, Dzz = (None, None) if sqdist is None else sqdist
    gg = g if g.size > 1 else float(g[0])
    B = rbf_gram(X, Z, gg, Dxz)
    C = rbf_gram(Z, Z, gg, Dzz)
    L = _factor(C)
    Phi = scipy.linalg.solve_triangular(L, B.T, lower=True, check_finite=False).T
    return B, C, L, Phi


def nystroem_width_grad(X, Z, gamma, grad_features, sqdist=None, blocks=None):
    r"""Gradient in :math:`\log\gamma` (shared) or every :math:`\log\gamma_j` of a
    criterion :math:`J(\Phi)` of the Nyström features :math:`\Phi = BL^{-\top}`, given
    :math:`G = \partial J/\partial\Phi` at ``gamma``.

    For a criterion that depends on :math:`\Phi` only through :math:`\Phi\Phi^\top`
    (any kernel machine on the features with the penalty :math:`\lVert w\rVert^2`:
    the model is the same for :math:`\Phi O`, O orthogonal), :math:`\Phi^\top G` is
    symmetric, and with :math:`dC = dL\,L^\top + L\,dL^\top` the differential of the
    Cholesky factor drops out:

    .. math::
        dJ = \langle GL^{-1}, dB\rangle - \tfrac12\langle L^{-\top}\Phi^\top GL^{-1},
        dC\rangle,

    then :math:`\partial k/\partial\log\gamma_j = -\gamma_j(x_j - z_j)^2k` as in
    :func:`nystroem_ridge_loo_grad`. This is what a self-tuning classifier on Nyström
    features needs from its lower level: :math:`\partial J/\partial\Phi`, n×m.

    ``grad_features`` is the n×m matrix G, or a pair ``(U, V)`` of n×T and m×T
    matrices with :math:`G = UV^\top`: the form in which a linear machine's gradient
    comes (a few rank-one terms per fold), which keeps every product at :math:`O(nmT)`
    instead of :math:`O(nm^2)`. ``blocks`` are the :func:`nystroem_blocks` at
    ``gamma`` when the caller already has them.

    Returns
    -------
    ndarray of shape (1,) or (d,)
    """
    g = np.atleast_1d(np.asarray(gamma, dtype=float))
    Dxz, Dzz = (None, None) if sqdist is None else sqdist
    B, C, L, Phi = nystroem_blocks(X, Z, g, sqdist) if blocks is None else blocks
    if isinstance(grad_features, tuple):
        U, V = (np.asarray(a, dtype=float) for a in grad_features)
        Vt = scipy.linalg.solve_triangular(L, V, lower=True, trans="T", check_finite=False)
        GB = U @ Vt.T
        S = (Phi.T @ U) @ V.T
    else:
        G = np.asarray(grad_features, dtype=float)
        GB = scipy.linalg.solve_triangular(L, G.T, lower=True, trans="T",
                                           check_finite=False).T
        S = Phi.T @ G
    S = 0.5 * (S + S.T)
    T = scipy.linalg.solve_triangular(L, S, lower=True, trans="T", check_finite=False)
    GC = -0.5 * scipy.linalg.solve_triangular(L, T.T, lower=True, trans="T",
                                              check_finite=False).T
    WB, WC = GB * B, GC * C
    if g.size == 1:
        if Dxz is None:
            Dxz, Dzz = squared_distances(X, Z), squared_distances(Z, Z)
        return np.array([-g[0] * (float(np.vdot(WB, Dxz)) + float(np.vdot(WC, Dzz)))])
    return -g * (width_terms(X, Z, WB) + width_terms(Z, Z, WC))


@dataclass(frozen=True)
class NystroemRidgeState:
    r"""One kernel ridge fit on Nyström features with what its gradient needs: the
    blocks ``B`` = K(X, Z) and ``C`` = K(Z, Z), the factor ``L`` of C + δI, the
    weighted design :math:`\tilde\Phi`, the factor of Q and :math:`U = \tilde\Phi
    Q^{-1}`, the coefficients θ (intercept first, in the whitened basis), the
    leverages ``h``, the weighted residuals :math:`\tilde e`, the leave-one-out
    ``residuals`` and the criterion ``value``."""

    B: np.ndarray
    C: np.ndarray
    L: np.ndarray
    Phi: np.ndarray
    Qfactor: tuple
    U: np.ndarray
    theta: np.ndarray
    h: np.ndarray
    e: np.ndarray
    residuals: np.ndarray
    value: float


def nystroem_ridge_loo(X, Z, y, ridge, gamma, sw=None, fit_intercept=True, sqdist=None):
    r"""Kernel ridge on the Nyström features of the landmarks ``Z`` at ``(ridge,
    gamma)`` and its exact leave-one-out residuals (module docstring).

    Parameters
    ----------
    X : ndarray or sparse matrix, shape (n, d)
    Z : ndarray, shape (m, d)
        Landmark rows.
    y : ndarray, shape (n,)
    ridge : float
        :math:`\lambda > 0`.
    gamma : float or ndarray of shape (d,)
    sw : ndarray of shape (n,), optional
        Positive sample weights.
    fit_intercept : bool
    sqdist : tuple of ndarray, optional
        Cached squared distances ``(D_XZ, D_ZZ)`` (shared width).

    Returns
    -------
    NystroemRidgeState

    Raises
    ------
    numpy.linalg.LinAlgError
        When Q is not numerically positive definite.
    """
    n = X.shape[0]
    q = np.ones(n) if sw is None else np.sqrt(np.asarray(sw, dtype=float))
    B, C, L, Phi = nystroem_blocks(X, Z, gamma, sqdist)
    Pt = np.empty((n, Z.shape[0] + 1))
    Pt[:, 0] = q if fit_intercept else 0.0
    Pt[:, 1:] = Phi * q[:, None]
    Q = Pt.T @ Pt
    Q[np.diag_indices_from(Q)] += float(ridge)
    # the intercept is unpenalised (with no intercept its column is 0 and this 1
    # only keeps Q invertible)
    Q[0, 0] += -float(ridge) if fit_intercept else 1.0
    fac = scipy.linalg.cho_factor(Q, lower=True, check_finite=False)
    yq = q * np.asarray(y, dtype=float)
    theta = scipy.linalg.cho_solve(fac, Pt.T @ yq, check_finite=False)
    U = scipy.linalg.cho_solve(fac, Pt.T, check_finite=False).T
    h = np.einsum("ij,ij->i", Pt, U)
    e = yq - Pt @ theta
    r = e / (q * (1.0 - h))
    value = float(np.sum(e**2 / (1.0 - h) ** 2) / np.sum(q**2))
    return NystroemRidgeState(B, C, L, Pt, fac, U, theta, h, e, r, value)


def nystroem_ridge_loo_grad(X, Z, state, ridge, gamma, sw=None, sqdist=None):
    r"""Gradient of the leave-one-out mean squared error of
    :func:`nystroem_ridge_loo` with respect to :math:`(\log\lambda, \log\gamma)` or
    :math:`(\log\lambda, \log\gamma_1, …, \log\gamma_d)` (module docstring).

    Returns
    -------
    ndarray of shape (2,) or (1 + d,)
    """
    n = X.shape[0]
    q = np.ones(n) if sw is None else np.sqrt(np.asarray(sw, dtype=float))
    st = state
    Pt, th, h, e = st.Phi, st.theta, st.h, st.e
    S = float(np.sum(q**2))
    alpha = 2.0 * e / (S * (1.0 - h) ** 2)
    c = 2.0 * e**2 / (S * (1.0 - h) ** 3)
    U = st.U
    v = U.T @ alpha
    R = U.T @ (U * c[:, None])
    G = 2.0 * (U * c[:, None]) - 2.0 * (Pt @ R)
    G += np.outer(Pt @ v - alpha, th)
    G -= np.outer(e, v)
    H = 0.5 * (np.outer(v, th) + np.outer(th, v)) - R
    Hm = H[1:, 1:]
    # back to the unwhitened blocks: dJ/dB = diag(q) G_{:,1:} L^{-1}, dJ/dC = λ L^-T H L^-1
    GB = scipy.linalg.solve_triangular(st.L, (G[:, 1:] * q[:, None]).T, lower=True,
                                       trans="T", check_finite=False).T
    T = scipy.linalg.solve_triangular(st.L, Hm, lower=True, trans="T", check_finite=False)
    GC = float(ridge) * scipy.linalg.solve_triangular(st.L, T.T, lower=True, trans="T",
                                                      check_finite=False).T
    g = np.atleast_1d(np.asarray(gamma, dtype=float))
    grad = np.empty(1 + g.size)
    grad[0] = float(ridge) * float(np.trace(Hm))
    WB, WC = GB * st.B, GC * st.C
    if g.size == 1:
        Dxz, Dzz = (squared_distances(X, Z), squared_distances(Z, Z)) if sqdist is None \
            else sqdist
        grad[1] = -g[0] * (float(np.vdot(WB, Dxz)) + float(np.vdot(WC, Dzz)))
    else:
        grad[1:] = -g * (width_terms(X, Z, WB) + width_terms(Z, Z, WC))
    return grad


def nystroem_ridge_coef(X, Z, y, ridge, gamma, sw=None, fit_intercept=True):
    r"""The fitted model :math:`f(x) = k(x, Z)^\top a + b` of kernel ridge on the
    Nyström features (module docstring): returns ``(a, b)``, :math:`a = L^{-\top}w`."""
    st = nystroem_ridge_loo(X, Z, y, ridge, gamma, sw, fit_intercept)
    return landmark_coef(st.L, st.theta), float(st.theta[0]) if fit_intercept else 0.0


def landmark_coef(L, theta):
    r"""The coefficients :math:`a = L^{-\top}w` on the landmarks of a linear model
    :math:`\theta = (b, w)` (intercept first) on the Nyström features
    :math:`\Phi = K(X, Z)L^{-\top}`, so that :math:`f(x) = k(x, Z)^\top a + b`."""
    return scipy.linalg.solve_triangular(L, np.asarray(theta)[1:], lower=True, trans="T",
                                         check_finite=False)


@dataclass(frozen=True)
class PiecewiseL2Solution:
    r"""The solution of :func:`solve_piecewise_l2`: ``theta`` = (b, w) (intercept first),
    the training outputs ``f``, the ``active`` pieces, the Cholesky ``factor`` of the
    Newton matrix H on them, ``C`` and the Newton iterations ``n_iter``."""

    theta: np.ndarray
    f: np.ndarray
    active: np.ndarray
    factor: tuple
    C: float
    n_iter: int


def _moments(Phi, rows, target, cost):
    r""":math:`\tilde\Phi_A^\top D\tilde\Phi_A` and :math:`\tilde\Phi_A^\top Dt_A`
    (:math:`\tilde\Phi = [1, \Phi]`) over the pieces given: rows, targets, costs."""
    m = Phi.shape[1]
    PA = Phi[rows]
    M = np.empty((m + 1, m + 1))
    M[0, 0] = cost.sum()
    M[0, 1:] = M[1:, 0] = cost @ PA
    M[1:, 1:] = PA.T @ (PA * cost[:, None])
    return M, np.r_[float(cost @ target), PA.T @ (cost * target)]


def _objective(theta, a, cost, C):
    r""":math:`\tfrac12\lVert w\rVert^2 + \tfrac C2\sum_kc_k\max(0, a_k)^2` with the
    pieces' margins :math:`a_k = o_k - s_kf_{r_k}`."""
    return 0.5 * float(theta[1:] @ theta[1:]) + 0.5 * C * float(cost @ np.maximum(a, 0.0) ** 2)


def _newton_factor(M, C):
    r"""Cholesky factor of :math:`H = \operatorname{diag}(0, I) + CM`."""
    H = C * M
    H[np.diag_indices_from(H)] += np.r_[0.0, np.ones(M.shape[0] - 1)]
    if not H[0, 0] > 0:  # no active piece: the intercept is undetermined, any b is optimal
        H[0, 0] = 1.0
    return scipy.linalg.cho_factor(H, lower=True, check_finite=False)


def solve_piecewise_l2(Phi, rows, sign, offset, cost, C, theta0=None, max_iter=200):
    r"""A linear machine with an unpenalised intercept and a squared piecewise loss on
    the features ``Phi``:

    .. math::
        \min_{w, b}\ \tfrac12\lVert w\rVert^2 + \tfrac C2\sum_kc_k\max(0,
        o_k - s_kf_{r_k})^2,\qquad f = \Phi w + b,

    over pieces k of row :math:`r_k`, sign :math:`s_k = \pm1` and offset :math:`o_k`.
    One piece per row with :math:`s = y`, :math:`o = 1` is the L2-SVM (squared hinge);
    two per row, :math:`(s, o) = (1, y - \varepsilon)` and :math:`(-1, -y -
    \varepsilon)`, the L2-loss ε-SVR. On the Nyström features this is the kernel
    machine on the approximate kernel :math:`\Phi\Phi^\top`.

    Solved by the finite Newton method (Keerthi & DeCoste 2005, "A modified finite
    Newton method for fast solution of large scale linear SVMs"): on the active pieces
    :math:`A = \{k: o_k - s_kf_{r_k} > 0\}` the objective is the quadratic with targets
    :math:`t_k = s_ko_k`, minimised by :math:`H\theta = C\tilde\Phi_A^\top Dt_A`,
    :math:`H = \operatorname{diag}(0, I) + C\tilde\Phi_A^\top D\tilde\Phi_A`,
    :math:`\tilde\Phi = [1, \Phi]`; the step to that minimiser takes the exact line
    search on the piecewise quadratic
    (:func:`~bisvm.solvers.primal.finite_newton.exact_line_search`), and the method ends
    when a full step leaves the active pieces unchanged: the solution is then exact, the
    minimiser of the quadratic of its own active set, which is what makes it
    differentiable in the hyperparameters (:func:`piecewise_l2_hypergradient`). A warm
    start ``theta0`` near the solution ends in one or two Newton steps.

    Parameters
    ----------
    Phi : ndarray of shape (n, m)
    rows, sign, offset, cost : ndarray of shape (p,)
        The pieces: row index, :math:`s_k`, :math:`o_k` and :math:`c_k > 0`.
    C : float
    theta0 : ndarray of shape (m + 1,), optional
        Warm start (b, w).
    max_iter : int

    Returns
    -------
    PiecewiseL2Solution
    """
    m = Phi.shape[1]
    theta = np.zeros(m + 1) if theta0 is None else np.array(theta0, dtype=float)
    t = sign * offset
    f = Phi @ theta[1:] + theta[0]
    A = offset - sign * f[rows] > 0
    M, v = _moments(Phi, rows[A], t[A], cost[A])
    for it in range(1, max_iter + 1):
        fac = _newton_factor(M, C)
        d = scipy.linalg.cho_solve(fac, C * v, check_finite=False) - theta
        if np.abs(d).max() <= 1e-13 * (1.0 + np.abs(theta).max()):
            # already the minimiser of its active set's quadratic: the optimum
            return PiecewiseL2Solution(theta, f, np.flatnonzero(A), fac, float(C), it)
        q = Phi @ d[1:] + d[0]
        a = offset - sign * f[rows]
        # the full step when it lowers the objective (Mangasarian 2002, "A finite Newton
        # method for classification": every full step lands on the minimiser of one
        # active set's quadratic, and with strict descent none is visited twice, so the
        # iteration ends), else the exact minimiser along d, which far from the solution
        # stops at the first breakpoint and would take many short steps
        step = 1.0
        if _objective(theta + d, a - sign * q[rows], cost, C) >= \
                _objective(theta, a, cost, C):
            step = exact_line_search(float(theta[1:] @ d[1:]), float(d[1:] @ d[1:]), a,
                                     sign * q[rows], 0.5 * C * cost)
        theta = theta + step * d
        f = f + step * q
        A_new = offset - sign * f[rows] > 0
        if abs(step - 1.0) <= 1e-9 and np.array_equal(A_new, A):
            return PiecewiseL2Solution(theta, f, np.flatnonzero(A), fac, float(C), it)
        # near the solution only a few pieces switch: update the moments by them
        # (O(changed·m²)) rather than recompute them over all active pieces
        add, drop = np.flatnonzero(A_new & ~A), np.flatnonzero(A & ~A_new)
        if 4 * (add.size + drop.size) < A_new.sum():
            Ma, va = _moments(Phi, rows[add], t[add], cost[add])
            Md, vd = _moments(Phi, rows[drop], t[drop], cost[drop])
            M += Ma - Md
            v += va - vd
        else:
            M, v = _moments(Phi, rows[A_new], t[A_new], cost[A_new])
        A = A_new
    M, _ = _moments(Phi, rows[A], t[A], cost[A])
    return PiecewiseL2Solution(theta, f, np.flatnonzero(A), _newton_factor(M, C), float(C),
                               max_iter)


def piecewise_l2_hypergradient(Phi, rows, sign, offset, cost, sol, Phi_val, e):
    r"""Derivatives of a validation function :math:`E(f_V)`, :math:`f_V =
    \tilde\Phi_V\theta`, :math:`e = \partial E/\partial f_V`, through the solution of
    :func:`solve_piecewise_l2` (active set fixed), by one adjoint solve
    :math:`H\lambda = \tilde\Phi_V^\top e`.

    The solution satisfies :math:`\operatorname{diag}(0, I)\theta = C\tilde\Phi_A^\top
    Dr_A`, :math:`r = t - f`, so by the implicit function theorem

    * :math:`\partial E/\partial\log C = \lambda_w^\top w`;
    * :math:`\partial E/\partial t_k = Cc_k(\tilde\Phi\lambda)_{r_k}` for each active
      piece (the targets carry ε for the ε-SVR: :math:`t_k = y - \varepsilon s_k`);
    * :math:`\partial E/\partial\Phi_i = \sum_{k\in A, r_k = i}Cc_k\bigl(r_k\lambda_w -
      (\tilde\Phi\lambda)_iw\bigr)` on training rows and :math:`e_jw` on validation
      rows: a rank-two matrix and a rank-one matrix, returned as factors.

    Returns
    -------
    dlog_C : float
    dt : ndarray of shape (|A|,)
        :math:`\partial E/\partial t_k` of the active pieces (order of ``sol.active``).
    train_terms : (ndarray of shape (n, 2), ndarray of shape (m, 2))
        :math:`(U, V)` with :math:`\partial E/\partial\Phi = UV^\top` (training rows).
    val_term : ndarray of shape (m,)
        w: :math:`\partial E/\partial\Phi_V = ew^\top`.
    """
    theta = sol.theta
    w = theta[1:]
    lam = scipy.linalg.cho_solve(sol.factor, np.r_[float(e.sum()), Phi_val.T @ e],
                                 check_finite=False)
    A = sol.active
    ra = rows[A]
    Plam = (Phi[ra] @ lam[1:]) + lam[0] if A.size else np.zeros(0)
    r = sign[A] * offset[A] - sol.f[ra]
    cw = sol.C * cost[A]
    dt = cw * Plam
    n = Phi.shape[0]
    U = np.zeros((n, 2))
    np.add.at(U[:, 0], ra, cw * r)
    np.add.at(U[:, 1], ra, -dt)
    return float(lam[1:] @ w), dt, (U, np.column_stack([lam[1:], w])), w
