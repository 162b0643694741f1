r"""Kernel functions and Gram blocks (seed 001 Example 8.2, seed 003 §5 eqs. (52)–(55)).

=================  ==============================================================
``"linear"``       :math:`k(x, x') = \langle x, x'\rangle`
``"poly"``         :math:`k(x, x') = (\gamma\langle x, x'\rangle + c_0)^{d}`
``"rbf"``          :math:`k(x, x') = \exp(-\gamma\lVert x - x'\rVert_2^2)`
``"laplacian"``    :math:`k(x, x') = \exp(-\gamma\lVert x - x'\rVert_1)`
``"sigmoid"``      :math:`k(x, x') = \tanh(\gamma\langle x, x'\rangle + c_0)`
callable           ``kernel(X, Y)`` returns the ``(n_x, n_y)`` block
``"precomputed"``  the user passes the Gram matrix itself
=================  ==============================================================

``gamma`` follows scikit-learn: a positive float, ``"scale"`` (``1 / (d · Var(X))``) or
``"auto"`` (``1 / d``). The Laplacian uses the L1 distance, as scikit-learn's
``laplacian_kernel`` does (seed 001 writes ``exp(-t‖x − y‖)`` without naming the norm).
The sigmoid kernel is not positive semi-definite for every ``(γ, c0)``; it is accepted as
LIBSVM accepts it.

Blocks are computed with one BLAS matrix product plus element-wise operations, never with
Python loops over rows. Either argument may be a scipy sparse matrix (any format; it is
used in CSR form and never densified); the block returned is always dense.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

__all__ = [
    "KERNELS",
    "Kernel",
    "linear_kernel",
    "squared_distances",
    "polynomial_kernel",
    "rbf_kernel",
    "laplacian_kernel",
    "sigmoid_kernel",
    "resolve_gamma",
    "check_precomputed",
    "indefinite_spectrum",
    "principal_minor_bound",
    "warn_if_indefinite",
    "check_finite_gram",
    "kernel_label",
    "PSD_CHECK_MAX_N",
    "make_kernel",
    "gram_matrix",
]

KERNELS = ("linear", "poly", "rbf", "laplacian", "sigmoid", "precomputed")

#: Integer codes understood by the compiled SMO column routines.
KERNEL_CODES = {"linear": 0, "poly": 1, "rbf": 2, "sigmoid": 3, "laplacian": 4, "precomputed": 5}


def _as_2d(X, name):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array, got shape {X.shape}")
        return X
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {X.shape}")
    return X


def _pair(X, Y):
    X = _as_2d(X, "X")
    Y = X if Y is None else _as_2d(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X and Y must have the same number of features, got {X.shape[1]} and {Y.shape[1]}"
        )
    return X, Y


def _dot_t(X, Y):
    """Dense ``X @ Y.T`` for dense or sparse operands."""
    K = X @ Y.T
    return K.toarray() if sp.issparse(K) else np.asarray(K)


def _row_sq(X):
    """Squared Euclidean norms of the rows of a dense or sparse matrix."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _row_diff_sq(X, Y, r, c):
    """``||X[r_k] - Y[c_k]||²`` for index arrays ``r``, ``c`` (dense or sparse rows)."""
    if sp.issparse(X) and sp.issparse(Y):
        diff = X[r] - Y[c]
        return np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
    Xr = X[r].toarray() if sp.issparse(X) else X[r]
    Yc = Y[c].toarray() if sp.issparse(Y) else Y[c]
    diff = Xr - Yc
    return np.einsum("ij,ij->i", diff, diff)


#: Pairs whose GEMM distance is below this fraction of ``‖x‖² + ‖y‖²`` are recomputed
#: directly: the GEMM form has an absolute rounding error of about d·eps·(‖x‖² + ‖y‖²), so
#: above the threshold its relative error is at most ~d·eps / 1e-6, below it the direct
#: form ``Σ (x - y)²`` is exact for equal rows (reliability bug 12).
_NEAR_REL = 1e-6
_NEAR_CHUNK = 1 << 16


def squared_distances(X, Y):
    r""":math:`\lVert x_i - y_j\rVert^2 = \lVert x_i\rVert^2 + \lVert y_j\rVert^2 - 2x_i^\top y_j`
    through one GEMM, clipped at 0 against cancellation.

    The pairs where cancellation matters -- distance below ``1e-6 (‖x_i‖² + ‖y_j‖²)``,
    i.e. nearly coincident rows -- are recomputed directly as :math:`\sum_k (x_{ik} -
    y_{jk})^2`, so that equal rows are at distance exactly 0 whether or not ``Y`` is
    ``X`` (LIBSVM computes its RBF values this way too). For ordinary data this costs one
    comparison pass over the block.
    """
    xx = _row_sq(X)
    yy = xx if Y is X else _row_sq(Y)
    D = _dot_t(X, Y)
    D *= -2.0
    D += xx[:, None]
    D += yy[None, :]
    np.maximum(D, 0.0, out=D)
    if D.size:
        # screen with one scalar bound, then keep the pairs under their own threshold
        bound = _NEAR_REL * (float(xx.max()) + float(yy.max()))
        rows, cols = np.nonzero(D <= bound)
        if rows.size:
            keep = D[rows, cols] <= _NEAR_REL * (xx[rows] + yy[cols])
            rows, cols = rows[keep], cols[keep]
            chunk = _NEAR_CHUNK if not (sp.issparse(X) or sp.issparse(Y)) else 1024
            for start in range(0, rows.size, chunk):
                r = rows[start:start + chunk]
                c = cols[start:start + chunk]
                D[r, c] = _row_diff_sq(X, Y, r, c)
    if Y is X:
        np.fill_diagonal(D, 0.0)
    return D


def linear_kernel(X, Y=None):
    r"""Linear kernel :math:`K_{ij} = \langle x_i, y_j\rangle` (seed 003 eq. (52))."""
    X, Y = _pair(X, Y)
    return _dot_t(X, Y)


def polynomial_kernel(X, Y=None, gamma=1.0, coef0=0.0, degree=3):
    r"""Polynomial kernel :math:`K_{ij} = (\gamma\langle x_i, y_j\rangle + c_0)^d`
    (seed 003 eq. (53); seed 001's ``(x^T y + c)^r`` is ``gamma=1``)."""
    X, Y = _pair(X, Y)
    K = _dot_t(X, Y)
    K *= gamma
    K += coef0
    return K**degree


def rbf_kernel(X, Y=None, gamma=1.0):
    r"""Gaussian kernel :math:`K_{ij} = \exp(-\gamma\lVert x_i - y_j\rVert^2)` (seed 003
    eq. (54); seed 001's ``exp(-‖x − y‖²/(2σ²))`` is ``gamma = 1/(2σ²)``)."""
    X, Y = _pair(X, Y)
    K = squared_distances(X, Y)
    K *= -gamma
    np.exp(K, out=K)
    return K


def laplacian_kernel(X, Y=None, gamma=1.0):
    r"""Laplacian kernel :math:`K_{ij} = \exp(-\gamma\lVert x_i - y_j\rVert_1)` (seed 001
    Example 8.2, L1 distance as in scikit-learn)."""
    from scipy.spatial.distance import cdist

    X, Y = _pair(X, Y)
    if sp.issparse(X) or sp.issparse(Y):
        from sklearn.metrics.pairwise import manhattan_distances

        K = manhattan_distances(X, Y)
    else:
        K = cdist(X, Y, metric="cityblock")
    K *= -gamma
    np.exp(K, out=K)
    return K


def sigmoid_kernel(X, Y=None, gamma=1.0, coef0=0.0):
    r"""Sigmoid kernel :math:`K_{ij} = \tanh(\gamma\langle x_i, y_j\rangle + c_0)` (seed 003
    eq. (55))."""
    X, Y = _pair(X, Y)
    K = _dot_t(X, Y)
    K *= gamma
    K += coef0
    np.tanh(K, out=K)
    return K


#: sparse matrices with at most this many entries get their variance from a dense copy
SPARSE_VAR_DENSE_BYTES = 2**26


def _sparse_variance(X):
    r"""Variance of all entries of a sparse matrix, the implicit zeros included.

    Small matrices (:data:`SPARSE_VAR_DENSE_BYTES`) are densified and given numpy's
    variance, so that ``gamma="scale"`` is the same number, to the last bit, on the sparse
    and the dense form of the same data (a fit on either then takes the same steps).
    Larger ones use the two-pass formula over the stored entries without densifying,
    :math:`\mathrm{Var} = \tfrac1N\big(\sum_{\text{stored}}(x - \mu)^2 + (N -
    \mathrm{nnz})\mu^2\big)` with :math:`\mu = \tfrac1N\sum x`, each sum exactly
    rounded (``math.fsum``), instead of :math:`E[x^2] - \mu^2` whose cancellation loses
    every digit when the mean dominates.
    """
    n_el = X.shape[0] * X.shape[1]
    if n_el == 0:
        return 0.0
    if 8 * n_el <= SPARSE_VAR_DENSE_BYTES:
        with np.errstate(over="ignore", invalid="ignore"):
            return float(X.toarray().var())
    X = sp.csr_matrix(X)
    X.sum_duplicates()
    data = np.asarray(X.data, dtype=np.float64)
    try:
        mean = math.fsum(data) / n_el
        with np.errstate(over="ignore", invalid="ignore"):
            dev = data - mean
            sq = math.fsum(dev * dev) + (n_el - data.size) * mean * mean
    except OverflowError:  # features so large that the variance overflows
        return math.inf
    return sq / n_el


def resolve_gamma(gamma, X):
    """Return the numeric kernel width for ``gamma`` in ``{float > 0, "scale", "auto"}``.

    ``"scale"`` is ``1 / (n_features · X.var())`` and ``"auto"`` is ``1 / n_features``
    (scikit-learn's conventions; for sparse ``X`` the variance counts the implicit zeros).
    A constant ``X`` under ``"scale"`` gives ``1.0``.

    With features so large that the variance overflows the width underflows to 0 (a
    constant kernel); the SMO estimators refuse that (scikit-learn then fails later, on
    non-finite dual coefficients), the kernel-matrix estimators report the overflowing
    kernel matrix.
    """
    if not sp.issparse(X):
        X = np.asarray(X)
    if isinstance(gamma, str):
        if gamma == "scale":
            if sp.issparse(X):
                var = _sparse_variance(X)
            else:
                with np.errstate(over="ignore", invalid="ignore"):
                    var = float(X.var()) if X.size else 0.0
            return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        if gamma == "auto":
            return 1.0 / X.shape[1]
        raise ValueError(f"gamma must be a positive float, 'scale' or 'auto'; got {gamma!r}")
    if isinstance(gamma, bool) or not isinstance(gamma, Real):
        raise TypeError(f"gamma must be a positive float, 'scale' or 'auto'; got {gamma!r}")
    gamma = float(gamma)
    if not np.isfinite(gamma) or gamma <= 0:
        raise ValueError(f"gamma must be > 0, got {gamma!r}")
    return gamma


def check_precomputed(K, *, n_train=None, symmetric=True, rtol=1e-8, atol=1e-10):
    """Validate a precomputed Gram matrix.

    At fit time (``symmetric=True``) ``K`` must be square, finite and symmetric within
    ``|K - Kᵀ| <= atol + rtol·max|K|``. At prediction time pass ``n_train`` and
    ``symmetric=False``: ``K`` must then have ``n_train`` columns.
    """
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2:
        raise ValueError(f"precomputed kernel must be a 2-D array, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("precomputed kernel contains NaN or infinity")
    if symmetric:
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"precomputed kernel must be a square matrix, got shape {K.shape}")
        scale = float(np.max(np.abs(K))) if K.size else 0.0
        if K.size and float(np.max(np.abs(K - K.T))) > atol + rtol * scale:
            raise ValueError("precomputed kernel must be symmetric (K != K.T within tolerance)")
    if n_train is not None and K.shape[1] != n_train:
        raise ValueError(
            f"precomputed kernel must have {n_train} columns (the number of training "
            f"samples), got shape {K.shape}"
        )
    return K


#: Largest Gram matrix whose spectrum is checked by a Cholesky factorisation in
#: :func:`warn_if_indefinite` (measured single-threaded: 0.04 s at n = 1000, about 40 % of
#: an SMO fit on a precomputed RBF kernel; 0.2 s at n = 2000, about as long as the fit).
#: Larger matrices get the O(n²) principal-minor test of :func:`principal_minor_bound`.
PSD_CHECK_MAX_N = 1000


def indefinite_spectrum(K, *, rtol=1e-6, max_n=PSD_CHECK_MAX_N):
    r"""``(λ_min, λ_max)`` of a symmetric ``K`` when it is clearly indefinite, else ``None``.

    "Clearly" means :math:`\lambda_{\min} < -\text{rtol}\,\lVert K\rVert_2`; rounding
    leaves a positive semi-definite Gram matrix at about :math:`-n\,\epsilon\lVert
    K\rVert_2` (1e-12 at n = 8192). The common case costs one Cholesky factorisation of
    :math:`K + \delta I` with :math:`\delta = \text{rtol}\lVert K\rVert_F/\sqrt n \le
    \text{rtol}\lVert K\rVert_2`: when it succeeds, :math:`\lambda_{\min} > -\delta`
    and ``K`` is not flagged; only when it fails are the eigenvalues computed
    (``scipy.linalg.eigvalsh``). Matrices with more than ``max_n`` rows are not checked
    (``None``).
    """
    import scipy.linalg

    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if n == 0 or n > max_n:
        return None
    delta = rtol * float(np.linalg.norm(K)) / np.sqrt(n)
    A = np.array(K, order="F")
    A[np.diag_indices(n)] += delta
    _, info = scipy.linalg.lapack.dpotrf(A, lower=True, overwrite_a=True, clean=False)
    if info == 0:
        return None
    ev = scipy.linalg.eigvalsh(K, check_finite=False)
    lo, hi = float(ev[0]), float(ev[-1])
    if lo < -rtol * max(abs(lo), abs(hi)):
        return lo, hi
    return None


def principal_minor_bound(K, *, rtol=1e-6, block=256):
    r"""An upper bound on :math:`\lambda_{\min}(K)` from its 1 × 1 and 2 × 2 principal
    minors when one of them is clearly negative, else ``None`` -- an :math:`O(n^2)`
    necessary test of positive semi-definiteness.

    By Cauchy's interlacing theorem :math:`\lambda_{\min}(K)` is at most the smallest
    eigenvalue of any principal submatrix: :math:`K_{ii}`, and for
    :math:`\begin{pmatrix}K_{ii}&K_{ij}\\K_{ij}&K_{jj}\end{pmatrix}`,
    :math:`\tfrac12(K_{ii}+K_{jj}) - \sqrt{\tfrac14(K_{ii}-K_{jj})^2 + K_{ij}^2}`.
    Returns the smallest such value when it is below ``-rtol · max|K|``; computed by
    row blocks (memory ``block · n``).
    """
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if n == 0:
        return None
    d = np.diag(K).copy()
    scale = float(np.max(np.abs(K)))
    best = float(d.min())
    if best < 0:
        return best if best < -rtol * scale else None
    for start in range(0, n, block):
        rows = slice(start, min(n, start + block))
        # with a non-negative diagonal a 2 × 2 minor has a negative eigenvalue exactly
        # when its determinant K_ii K_jj - K_ij² is negative: screen on that, then
        # compute the eigenvalue of the flagged pairs only
        Kr = K[rows]
        det = np.multiply.outer(d[rows], d)
        det -= Kr * Kr
        i, j = np.nonzero(det < -(rtol * scale) ** 2)
        if i.size:
            a, c, b = d[rows][i], d[j], Kr[i, j]
            lam = 0.5 * (a + c) - np.sqrt(0.25 * (a - c) ** 2 + b * b)
            best = min(best, float(lam.min()))
    return best if best < -rtol * scale else None


def warn_if_indefinite(K, who, consequence, *, max_n=PSD_CHECK_MAX_N):
    """Warn (``UserWarning``) when the Gram matrix ``K`` is clearly indefinite, naming
    its extreme eigenvalues (:func:`indefinite_spectrum`, n <= ``max_n``) or, for larger
    matrices, an upper bound on the smallest one (:func:`principal_minor_bound`, which
    misses indefinite matrices whose small principal minors are all non-negative);
    ``who`` and ``consequence`` say which estimator and what the indefiniteness means
    for it. Returns ``(λ_min or its bound, λ_max or None)`` or ``None``."""
    import warnings

    K = np.asarray(K, dtype=np.float64)
    if K.shape[0] <= max_n:
        spec = indefinite_spectrum(K, max_n=max_n)
        evidence = None if spec is None else (
            f"smallest eigenvalue {spec[0]:.3g}, largest {spec[1]:.3g}")
    else:
        bound = principal_minor_bound(K)
        spec = None if bound is None else (bound, None)
        evidence = None if bound is None else (
            f"smallest eigenvalue at most {bound:.3g}, from a principal minor")
    if spec is not None:
        warnings.warn(
            f"{who}: the kernel matrix is not positive semi-definite ({evidence}); "
            f"{consequence}",
            UserWarning,
            stacklevel=3,
        )
    return spec


def kernel_label(kernel):
    """How error messages quote an estimator's ``kernel`` parameter."""
    return "a callable" if callable(kernel) else repr(kernel)


def check_finite_gram(K, kernel, X):
    """Raise ``ValueError`` when the kernel block computed from finite features ``X`` is
    not finite (it overflowed: features of magnitude ~1e154 and beyond square past the
    float range), telling the user to standardise ``X``; ``kernel`` is the estimator's
    ``kernel`` parameter (a name or a callable), quoted in the message. Returns ``K``."""
    if not np.all(np.isfinite(K)):
        big = float(np.max(np.abs(X))) if np.size(X) else 0.0
        raise ValueError(
            f"the kernel matrix of X (kernel={kernel_label(kernel)}) overflows: features of "
            f"magnitude up to {big:.3g} are too large for a finite kernel; standardise X "
            "first (e.g. bisvm.Scaler, which handles such features)"
        )
    return K


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


@dataclass(frozen=True)
class Kernel:
    """A resolved kernel: name plus numeric parameters, or a callable.

    ``kernel(X, Y)`` gives the block ``K(X, Y)``; :meth:`diag` gives ``k(x_i, x_i)``.
    For ``"precomputed"`` the block is the input itself.
    """

    name: str
    gamma: float = 1.0
    coef0: float = 0.0
    degree: int = 3
    function: object = None

    @property
    def code(self):
        """Integer code of the compiled column routines (callables are precomputed)."""
        return KERNEL_CODES["precomputed" if self.function is not None else self.name]

    def __call__(self, X, Y=None):
        name = self.name
        if self.function is not None:
            from sklearn.utils.validation import _num_samples

            Xa = X if sp.issparse(X) or isinstance(X, list) else np.asarray(X)
            Ya = Xa if Y is None else (
                Y if sp.issparse(Y) or isinstance(Y, list) else np.asarray(Y))
            K = self.function(Xa, Ya)
            K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=float)
            n_y = _num_samples(Ya)
            if K.shape != (_num_samples(Xa), n_y):
                raise ValueError(
                    f"kernel callable must return an array of shape "
                    f"{(_num_samples(Xa), n_y)}, got {K.shape}"
                )
            return K
        if name == "linear":
            return linear_kernel(X, Y)
        if name == "poly":
            return polynomial_kernel(X, Y, self.gamma, self.coef0, self.degree)
        if name == "rbf":
            return rbf_kernel(X, Y, self.gamma)
        if name == "laplacian":
            return laplacian_kernel(X, Y, self.gamma)
        if name == "sigmoid":
            return sigmoid_kernel(X, Y, self.gamma, self.coef0)
        if name == "precomputed":
            return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        raise ValueError(f"unknown kernel {name!r}")

    def diag(self, X):
        """The diagonal ``k(x_i, x_i)`` without forming the block."""
        name = self.name
        if self.function is not None:
            return np.array([float(np.asarray(self(X[i : i + 1]))[0, 0])
                             for i in range(_n_rows(X))])
        X = _as_2d(X, "X")
        if name in ("rbf", "laplacian"):
            return np.ones(X.shape[0])
        if name == "precomputed":
            return np.asarray(X.diagonal()).copy() if sp.issparse(X) else np.diag(X).copy()
        sq = _row_sq(X)
        if name == "linear":
            return sq
        if name == "poly":
            return (self.gamma * sq + self.coef0) ** self.degree
        return np.tanh(self.gamma * sq + self.coef0)


def make_kernel(kernel="rbf", *, gamma="scale", coef0=0.0, degree=3, X=None):
    """Validate kernel parameters and return a :class:`Kernel`.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "laplacian", "sigmoid", "precomputed"} or callable
    gamma : float > 0, "scale" or "auto"
        Resolved against the training data ``X`` (needed for "scale"/"auto").
    coef0 : float
        ``c_0`` of the polynomial and sigmoid kernels.
    degree : int >= 0
        Degree of the polynomial kernel.
    X : array, optional
        Training data, used only to resolve ``gamma``.
    """
    if callable(kernel):
        return Kernel("callable", function=kernel)
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS} or a callable; got {kernel!r}")
    if isinstance(coef0, bool) or not isinstance(coef0, Real) or not np.isfinite(coef0):
        raise ValueError(f"coef0 must be a finite real number, got {coef0!r}")
    if isinstance(degree, bool) or not isinstance(degree, Integral | Real):
        raise ValueError(f"degree must be a non-negative integer, got {degree!r}")
    if kernel == "poly" and (degree < 0 or float(degree) != int(degree)):
        raise ValueError(f"degree must be a non-negative integer, got {degree!r}")
    if kernel in ("poly", "rbf", "laplacian", "sigmoid"):
        if X is None and isinstance(gamma, str):
            raise ValueError("gamma='scale'/'auto' needs the training data X")
        g = resolve_gamma(gamma, X)
    else:
        g = 1.0
        if not isinstance(gamma, str):
            resolve_gamma(gamma, np.zeros((1, 1)))  # still reject gamma <= 0
    return Kernel(kernel, gamma=g, coef0=float(coef0), degree=int(degree))


def gram_matrix(kernel, X, Y=None):
    """``K(X, Y)`` for a :class:`Kernel` (convenience wrapper)."""
    return kernel(X, Y)
