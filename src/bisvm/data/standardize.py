r"""Weighted column standardisation for penalised selection, as glmnet does it.

A penalty compares coefficients across features, so its selection depends on the units of
the columns unless the features are put on one scale first. glmnet (Friedman, Hastie &
Tibshirani 2010, *J. Stat. Softw.* 33(1), §2.4) standardises each column by its weighted
standard deviation, leaves the intercept unpenalised and reports the coefficients in the
original units; :class:`ColumnStandardizer` does the same for the penalised SVMs.

With an unpenalised intercept, centring a column changes nothing in the optimum (the
intercept absorbs it), so centring is a matter of conditioning only: dense columns are
centred (the Newton systems are better conditioned and every quantity computed from the
data, such as the zero-model penalty, is then invariant to a shift of a column), sparse
columns are only scaled, so that they are never densified.

A column whose weighted standard deviation is below :data:`CONSTANT_TOL` times its
root-mean-square is *constant*: its scale factor is 0, so it enters the problem as a
column of zeros and its coefficient is exactly zero (it is never selected).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["CONSTANT_TOL", "ColumnStandardizer", "weighted_column_stats"]

#: Relative standard deviation below which a column counts as constant: the rounding
#: error of a variance computed as :math:`E[x^2] - E[x]^2` is about 1e-16 of
#: :math:`E[x^2]`, i.e. a standard deviation of 1e-8 of the root-mean-square.
CONSTANT_TOL = 1e-7


def weighted_column_stats(X, sample_weight=None):
    r"""Weighted column means and standard deviations,
    :math:`m_j = \sum_i s_i x_{ij} / \sum_i s_i` and
    :math:`\sigma_j = (\sum_i s_i (x_{ij} - m_j)^2 / \sum_i s_i)^{1/2}` (the population
    form, ``ddof=0``, as scikit-learn's ``StandardScaler``), and the constant mask.

    Parameters
    ----------
    X : ndarray or sparse matrix, shape (n, d)
    sample_weight : ndarray of shape (n,), optional
        Non-negative row weights (a zero-weight row does not count).

    Returns
    -------
    mean, std : ndarray of shape (d,)
    constant : ndarray of bool, shape (d,)
    """
    n = X.shape[0]
    w = np.full(n, 1.0 / n) if sample_weight is None else \
        np.asarray(sample_weight, dtype=float) / float(np.sum(sample_weight))
    if sp.issparse(X):
        Xc = sp.csr_matrix(X)
        mean = np.asarray(Xc.T @ w).ravel()
        sq = np.asarray(Xc.multiply(Xc).T @ w).ravel()
        var = np.maximum(sq - mean**2, 0.0)
    else:
        mean = w @ X
        sq = w @ (X * X)
        var = w @ ((X - mean) ** 2)
    std = np.sqrt(var)
    rms = np.sqrt(np.maximum(sq, 0.0))
    constant = ~(std > CONSTANT_TOL * rms)
    return mean, std, constant


@dataclass(frozen=True)
class ColumnStandardizer:
    r"""The affine map :math:`\tilde x_j = (x_j - c_j)\,/\,\sigma_j` of one set of rows
    (:math:`c_j = m_j` for dense data, 0 for sparse), with :math:`1/\sigma_j` replaced by 0
    for a constant column.

    Attributes
    ----------
    center : ndarray of shape (d,)
        :math:`c_j` (zeros for sparse data).
    scale : ndarray of shape (d,)
        :math:`\sigma_j` (1 for a constant column).
    inverse_scale : ndarray of shape (d,)
        :math:`1/\sigma_j`, 0 for a constant column.
    constant : ndarray of bool, shape (d,)
    """

    center: np.ndarray
    scale: np.ndarray
    inverse_scale: np.ndarray
    constant: np.ndarray

    @classmethod
    def fit(cls, X, sample_weight=None):
        """The standardiser of the rows of ``X`` weighted by ``sample_weight``."""
        mean, std, constant = weighted_column_stats(X, sample_weight)
        scale = np.where(constant, 1.0, std)
        inv = np.where(constant, 0.0, 1.0 / scale)
        center = np.zeros_like(mean) if sp.issparse(X) else np.where(constant, 0.0, mean)
        return cls(center=center, scale=scale, inverse_scale=inv, constant=constant)

    def transform(self, X, *, bias_last=False):
        """Standardised copy of ``X`` (dense stays dense, sparse stays sparse CSR);
        with ``bias_last``, X's last column is the bias column, kept as it is."""
        if sp.issparse(X):
            # column scaling keeps the pattern; a constant column's entries become zeros
            scale = np.r_[self.inverse_scale, 1.0] if bias_last else self.inverse_scale
            out = sp.csr_matrix(sp.csr_matrix(X) @ sp.diags(scale))
            out.eliminate_zeros()
            return out
        out = np.array(X, dtype=float)
        cols = out[:, :-1] if bias_last else out
        cols -= self.center
        cols *= self.inverse_scale
        return out

    def to_original(self, coef, intercept):
        r"""Coefficients of the standardised problem in the original units:
        :math:`w_j = \tilde w_j/\sigma_j` and :math:`b = \tilde b - \sum_j w_j c_j`.

        ``coef`` has shape (d,) or (k, d); ``intercept`` shape () or (k,)."""
        coef = np.asarray(coef, dtype=float) * self.inverse_scale
        intercept = np.asarray(intercept, dtype=float) - coef @ self.center
        return coef, intercept
