r"""Linear algebra of one Newton candidate of Algorithm A (seed 004 (42)/(48)): the
face matrix :math:`A = X_F X_F^\top + \mathrm{diag}(c)` and the constrained candidate."""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve_triangular
from scipy.linalg.lapack import dtrtri

from .._linalg import shifted_cho_factor

__all__ = ["SelectiveNewtonFactor", "face_candidate"]


def _chol(M):
    # the Newton matrix is singular only to rounding (a face with more columns than
    # objects): a relative shift from 1e-13 max|M_ii|, 12 tries
    return shifted_cho_factor(M, lower=True, rel_shift=1e-13, tries=12)


class SelectiveNewtonFactor:
    r"""Applies :math:`A^{-1}`, :math:`A = X_F X_F^\top + \mathrm{diag}(c)` (the thesis's
    :math:`V_F + \gamma\tilde G^{-1}`), directly (``n_F >= N``) or by Woodbury (48).

    Parameters
    ----------
    XF : ndarray, shape (N, n_F)
        The columns of the free (ridge) features ``F``.
    c : ndarray, shape (N,)
        The diagonal :math:`\gamma/\tilde g_t` (:math:`2\gamma/Q_t` at a solution).
    free_index : ndarray of int, shape (n_F,), optional
        The indices of ``F`` among all features, so that a reader (the leave-one-out
        criteria) can check that the factor belongs to the face it needs.

    Attributes
    ----------
    c, free_index, woodbury : as above; ``woodbury`` is ``n_F < N``.
    """

    def __init__(self, XF, c, free_index=None):
        self.c = c
        self.free_index = (np.arange(XF.shape[1]) if free_index is None
                           else np.asarray(free_index, dtype=np.intp))
        N, nF = XF.shape
        self.woodbury = nF < N
        if self.woodbury:
            self.XF = XF
            Xd = XF / c[:, None]
            self.fac = _chol(np.eye(nF) + XF.T @ Xd) if nF else None
        else:
            M = XF @ XF.T
            M[np.diag_indices_from(M)] += c
            self.fac = _chol(M)

    def inv_diag(self):
        r"""Diagonal of :math:`A^{-1}` (``O(N^3/3)`` direct, ``O(N n_F^2)`` Woodbury)."""
        if not self.woodbury:
            # LAPACK trtri: the triangular inverse in N^3/3 flops (a solve with the
            # identity would take N^3)
            Linv, info = dtrtri(np.tril(self.fac[0]), lower=1)
            if info != 0:
                raise LinAlgError("singular Cholesky factor")
            return np.einsum("ij,ij->j", Linv, Linv)
        if self.fac is None:
            return 1.0 / self.c
        T = solve_triangular(np.tril(self.fac[0]), (self.XF / self.c[:, None]).T,
                             lower=True, check_finite=False)
        return 1.0 / self.c - np.einsum("ij,ij->j", T, T)

    def solve(self, v):
        if not self.woodbury:
            return cho_solve(self.fac, v, check_finite=False)
        dv = v / (self.c if v.ndim == 1 else self.c[:, None])
        if self.fac is None:
            return dv
        corr = self.XF @ cho_solve(self.fac, self.XF.T @ dv, check_finite=False)
        return dv - (corr / (self.c if v.ndim == 1 else self.c[:, None]))


def face_candidate(X, F, Kidx, sigma, mu, c, ytil, fit_intercept):
    r"""Minimiser of :math:`\tfrac12\lambda^\top A\lambda - \tilde y^\top\lambda` subject to
    :math:`x_i^\top\lambda = \mu\sigma_i` (i in K) and :math:`\mathbf 1^\top\lambda = 0`;
    returns it and the multipliers (the K coefficients, then the intercept)."""
    A = SelectiveNewtonFactor(X[:, F], c, free_index=F)
    cols = [X[:, Kidx]] if Kidx.size else []
    target = [mu * sigma] if Kidx.size else []
    if fit_intercept:
        cols.append(np.ones((X.shape[0], 1)))
        target.append(np.zeros(1))
    if not cols:
        return A.solve(ytil), np.zeros(0), A
    C = np.hstack(cols)
    tgt = np.concatenate(target)
    sol = A.solve(np.column_stack([ytil, C]))
    Ay, AC = sol[:, 0], sol[:, 1:]
    S = C.T @ AC
    rhs = C.T @ Ay - tgt
    try:
        theta = cho_solve(cho_factor(S, check_finite=False, lower=True), rhs,
                          check_finite=False)
    except LinAlgError:  # more constraints than the data can meet (|K| + 1 > rank)
        theta = np.linalg.lstsq(S, rhs, rcond=None)[0]
    lam = Ay - AC @ theta
    resid = np.max(np.abs(C.T @ lam - tgt))
    if not resid <= 1e-8 * max(1.0, float(np.max(np.abs(tgt)))):
        return None, None, A
    return lam, theta, A
