r"""Linear algebra of one Newton candidate of Algorithm A (Angulo Yauri 2020): the
face matrix :math:`A = X_F X_F^\top + \mathrm{diag}(c)` and the constrained candidate."""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq, solve_triangular
from scipy.linalg.lapack import dtrtri

from .._linalg import shifted_cho_factor

__all__ = ["SelectiveNewtonFactor", "face_candidate", "distinct_constraints",
           "min_norm_psd_solve"]


def _chol(M):
    # the Newton matrix is singular only to rounding (a face with more columns than
    # objects): a relative shift from 1e-13 max|M_ii|, 12 tries
    return shifted_cho_factor(M, lower=True, rel_shift=1e-13, tries=12)


class SelectiveNewtonFactor:
    r"""Applies :math:`A^{-1}`, :math:`A = X_F X_F^\top + \mathrm{diag}(c)` (the thesis's
    :math:`V_F + \gamma\tilde G^{-1}`), directly (``n_F >= N``) or by Woodbury.

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


def distinct_constraints(V):
    r"""Group identical columns of ``V`` (exact equality).

    Two kink features with the same signed column :math:`\sigma_i x_i` impose the same
    constraint :math:`\sigma_i x_i^\top\lambda = \mu`; kept twice they make the
    constraint Gram matrix exactly singular. Returns ``first`` (the index of one
    representative per group) and ``group`` (the group of every column); without
    duplicates, the identity.
    """
    k = V.shape[1]
    if k <= 1:
        return np.arange(k), np.zeros(k, dtype=np.intp)
    _, first, group = np.unique(np.ascontiguousarray(V.T), axis=0, return_index=True,
                                return_inverse=True)
    if first.size == k:
        # no duplicates: keep the given order (the face system is then the same,
        # to the bit, as without the grouping)
        return np.arange(k), np.arange(k)
    return first, np.asarray(group, dtype=np.intp).reshape(-1)


def min_norm_psd_solve(S, rhs, rcond=1e-11):
    r"""Minimum-norm least-squares solution of :math:`S\theta = r` for a symmetric
    positive semi-definite ``S`` that may be singular.

    Cholesky when ``S`` is positive definite; otherwise LAPACK ``gelsy`` (a complete
    orthogonal factorisation from QR with column pivoting; Golub & Van Loan, *Matrix
    Computations*, 4th ed., §5.5), which gives the minimum-norm solution of the
    numerically rank-``k`` system, directions with :math:`|R_{jj}| \le` ``rcond``
    :math:`|R_{11}|` being dropped. ``gelsy`` is a finite direct method: unlike the
    SVD-based ``gelsd`` it has no iteration that can fail to converge, which the
    divide-and-conquer SVD does on rare matrices with tightly clustered (here: many
    exactly zero) singular values.
    """
    if not (np.all(np.isfinite(S)) and np.all(np.isfinite(rhs))):
        raise FloatingPointError(
            "non-finite Newton face system in the selective dual solver (NaN or inf in "
            "the data or the iterate)")
    try:
        return cho_solve(cho_factor(S, check_finite=False, lower=True), rhs,
                         check_finite=False)
    except LinAlgError:
        return lstsq(S, rhs, cond=rcond, lapack_driver="gelsy", check_finite=False)[0]


def face_candidate(X, F, Kidx, sigma, mu, c, ytil, fit_intercept):
    r"""Minimiser of :math:`\tfrac12\lambda^\top A\lambda - \tilde y^\top\lambda` subject to
    :math:`x_i^\top\lambda = \mu\sigma_i` (i in K) and :math:`\mathbf 1^\top\lambda = 0`;
    returns it and the multipliers (the K coefficients, then the intercept), or
    ``(None, None, A)`` when the constraints cannot all hold.

    With :math:`C` the constraint columns and :math:`t` their targets, the multipliers
    solve :math:`(C^\top A^{-1}C)\theta = C^\top A^{-1}\tilde y - t` and
    :math:`\lambda = A^{-1}(\tilde y - C\theta)`. Identical signed kink columns
    (duplicated features, common in binary fingerprints) are one constraint
    (:func:`distinct_constraints`) on the column :math:`\sqrt{m_g}\,\sigma_i x_i` of a
    group of :math:`m_g`; its multiplier :math:`\psi_g` is shared equally,
    :math:`a_i = \sigma_i\psi_g/\sqrt{m_g}`, the minimum-norm split of a coefficient
    that the objective only determines through its sum. Any remaining dependence
    (:math:`|K| + 1 >` rank, e.g. more kinks than objects or the intercept in the span of
    the kink columns) gets the minimum-norm multipliers (:func:`min_norm_psd_solve`), so
    that θ is the minimum-norm solution of the original, duplicated system (the
    pseudo-inverse's); whether the constraints hold is then checked on λ.
    """
    A = SelectiveNewtonFactor(X[:, F], c, free_index=F)
    nK = Kidx.size
    if nK:
        V = X[:, Kidx] * sigma
        first, group = distinct_constraints(V)
        # a group of m equal constraints as one, scaled by sqrt(m): the minimum-norm
        # multiplier psi of the scaled column gives every member sigma_i psi/sqrt(m),
        # the minimum of sum_i theta_i^2 over the original multipliers
        root = np.sqrt(np.bincount(group, minlength=first.size).astype(float))
        cols, target = [V[:, first] * root], [mu * root]
    else:
        group = np.zeros(0, dtype=np.intp)
        cols, target = [], []
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
    phi = min_norm_psd_solve(S, C.T @ Ay - tgt)
    lam = Ay - AC @ phi
    resid = np.max(np.abs(C.T @ lam - tgt))
    if not resid <= 1e-8 * max(1.0, float(np.max(np.abs(tgt)))):
        return None, None, A
    theta = np.empty(nK + int(bool(fit_intercept)))
    if nK:
        theta[:nK] = sigma * phi[group] / root[group]
    if fit_intercept:
        theta[nK] = phi[-1]
    return lam, theta, A
