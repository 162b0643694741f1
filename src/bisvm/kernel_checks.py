r"""Kernel parameters and checks of kernel matrices.

:func:`resolve_gamma` turns ``gamma`` into a number; the estimators call the other
functions on the Gram matrices they build or receive, so that a matrix that is not
symmetric, not finite or not positive semi-definite is refused or reported with its
eigenvalues instead of silently producing a model. :mod:`bisvm.kernels` re-exports every
public name.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
import scipy.sparse as sp

__all__ = [
    "PSD_CHECK_MAX_N",
    "SPARSE_VAR_DENSE_BYTES",
    "resolve_gamma",
    "check_finite_gram",
    "check_precomputed",
    "indefinite_spectrum",
    "kernel_label",
    "principal_minor_bound",
    "warn_if_indefinite",
]


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
    r"""Return the numeric kernel width for ``gamma`` in ``{float > 0, "scale", "auto"}``.

    ``"scale"`` is ``1 / (n_features · X.var())`` and ``"auto"`` is ``1 / n_features``
    (scikit-learn's conventions; for sparse ``X`` the variance counts the implicit zeros).
    A constant ``X`` under ``"scale"`` gives ``1.0``.

    With features so large that the variance overflows the width underflows to 0 (a
    constant kernel); the SMO estimators refuse that (scikit-learn then fails later, on
    non-finite dual coefficients), the kernel-matrix estimators report the overflowing
    kernel matrix.

    Parameters
    ----------
    gamma : float, "scale" or "auto"
        The estimator's ``gamma`` parameter.
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        The training data.

    Returns
    -------
    float
        The width :math:`\gamma > 0` (0 only after the overflow described above).

    Raises
    ------
    ValueError
        For an unknown string or a value that is not positive and finite.
    TypeError
        For a value that is neither a string nor a real number.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm.kernels import resolve_gamma
    >>> X = np.array([[0.0, 2.0], [2.0, 0.0]])
    >>> resolve_gamma("scale", X), resolve_gamma("auto", X), resolve_gamma(0.3, X)
    (0.5, 0.5, 0.3)
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

    Parameters
    ----------
    K : array-like of shape (n_samples, n_train)
        The kernel values between the rows and the training rows.
    n_train : int, optional
        Number of training rows, the number of columns ``K`` must have.
    symmetric : bool, default=True
        Whether ``K`` must be a square symmetric matrix (the training Gram matrix).
    rtol : float, default=1e-8
        Relative tolerance of the symmetry check.
    atol : float, default=1e-10
        Absolute tolerance of the symmetry check.

    Returns
    -------
    ndarray of shape (n_samples, n_train)
        ``K`` as a float64 array.

    Raises
    ------
    ValueError
        When ``K`` is not 2-D, not finite, not square and symmetric (fit time) or has
        the wrong number of columns.

    Examples
    --------
    >>> from bisvm.kernels import check_precomputed
    >>> check_precomputed([[2.0, 1.0], [1.0, 2.0]])
    array([[2., 1.],
           [1., 2.]])
    >>> check_precomputed([[1.0, 0.5, 0.0]], n_train=3, symmetric=False).shape
    (1, 3)
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
#: :func:`warn_if_indefinite`: the O(n³) factorisation stays a small share of a fit up to
#: this size. Larger matrices get the O(n²) principal-minor test of
#: :func:`principal_minor_bound`.
PSD_CHECK_MAX_N = 1000


def indefinite_spectrum(K, *, rtol=1e-6, max_n=PSD_CHECK_MAX_N):
    r"""Return the extreme eigenvalues of a symmetric ``K`` when it is clearly indefinite.

    "Clearly" means :math:`\lambda_{\min} < -\text{rtol}\,\lVert K\rVert_2`; rounding
    leaves a positive semi-definite Gram matrix at about :math:`-n\,\epsilon\lVert
    K\rVert_2`. The common case costs one Cholesky factorisation of
    :math:`K + \delta I` with :math:`\delta = \text{rtol}\lVert K\rVert_F/\sqrt n \le
    \text{rtol}\lVert K\rVert_2`: when it succeeds, :math:`\lambda_{\min} > -\delta`
    and ``K`` is not flagged; only when it fails are the eigenvalues computed
    (``scipy.linalg.eigvalsh``). Matrices with more than ``max_n`` rows are not checked
    (``None``).

    Parameters
    ----------
    K : array-like of shape (n, n)
        A symmetric matrix.
    rtol : float, default=1e-6
        Relative size of a negative eigenvalue that counts as indefinite.
    max_n : int, default=PSD_CHECK_MAX_N
        Largest ``n`` checked.

    Returns
    -------
    tuple of (float, float) or None
        ``(λ_min, λ_max)`` when ``K`` is clearly indefinite, else ``None``.

    Examples
    --------
    >>> from bisvm.kernels import indefinite_spectrum
    >>> indefinite_spectrum([[1.0, 2.0], [2.0, 1.0]])
    (-1.0, 3.0)
    >>> indefinite_spectrum([[2.0, 1.0], [1.0, 2.0]]) is None
    True
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
    r"""Bound the smallest eigenvalue of ``K`` from above by its small principal minors.

    The bound comes from the 1 × 1 and 2 × 2 principal submatrices and is returned when
    one of them is clearly negative, else ``None``: an :math:`O(n^2)` necessary test of
    positive semi-definiteness.

    By Cauchy's interlacing theorem :math:`\lambda_{\min}(K)` is at most the smallest
    eigenvalue of any principal submatrix: :math:`K_{ii}`, and for
    :math:`\begin{pmatrix}K_{ii}&K_{ij}\\K_{ij}&K_{jj}\end{pmatrix}`,
    :math:`\tfrac12(K_{ii}+K_{jj}) - \sqrt{\tfrac14(K_{ii}-K_{jj})^2 + K_{ij}^2}`.
    Returns the smallest such value when it is below ``-rtol · max|K|``; computed by
    row blocks (memory ``block · n``).

    Parameters
    ----------
    K : array-like of shape (n, n)
        A symmetric matrix.
    rtol : float, default=1e-6
        Relative size of a negative value that counts as indefinite.
    block : int, default=256
        Rows per block.

    Returns
    -------
    float or None
        The upper bound on :math:`\lambda_{\min}(K)`, or ``None`` when no small minor
        is clearly negative.

    References
    ----------
    R. A. Horn and C. R. Johnson, *Matrix Analysis*, 2nd ed., Cambridge University
    Press, 2013, Theorem 4.3.28 (Cauchy interlacing for principal submatrices).

    Examples
    --------
    >>> from bisvm.kernels import principal_minor_bound
    >>> principal_minor_bound([[1.0, 2.0], [2.0, 1.0]])
    -1.0
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
    """Warn when the Gram matrix ``K`` is clearly indefinite.

    The ``UserWarning`` names its extreme eigenvalues (:func:`indefinite_spectrum`, for
    n <= ``max_n``) or, for larger matrices, an upper bound on the smallest one
    (:func:`principal_minor_bound`, which misses indefinite matrices whose small
    principal minors are all non-negative).

    Parameters
    ----------
    K : array-like of shape (n, n)
        The training Gram matrix.
    who : str
        The estimator, named in the message.
    consequence : str
        What the indefiniteness means for that estimator, appended to the message.
    max_n : int, default=PSD_CHECK_MAX_N
        Largest ``n`` whose spectrum is computed.

    Returns
    -------
    tuple or None
        ``(λ_min or its bound, λ_max or None)`` when a warning was issued, else ``None``.

    Examples
    --------
    >>> import warnings
    >>> from bisvm.kernels import warn_if_indefinite
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     spec = warn_if_indefinite([[1.0, 2.0], [2.0, 1.0]], "demo", "fits may differ")
    >>> spec, len(caught)
    ((-1.0, 3.0), 1)
    """
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
    """Quote an estimator's ``kernel`` parameter as error messages do.

    Parameters
    ----------
    kernel : str or callable
        The ``kernel`` parameter.

    Returns
    -------
    str
        ``repr`` of a name, or ``"a callable"``.

    Examples
    --------
    >>> from bisvm.kernels import kernel_label
    >>> kernel_label("rbf"), kernel_label(len)
    ("'rbf'", 'a callable')
    """
    return "a callable" if callable(kernel) else repr(kernel)


def check_finite_gram(K, kernel, X):
    """Refuse a kernel block that overflowed, telling the user to standardise ``X``.

    Features of magnitude about 1e154 and beyond square past the float range, so the
    block computed from finite features can still hold infinities.

    Parameters
    ----------
    K : ndarray
        The kernel block computed from ``X``.
    kernel : str or callable
        The estimator's ``kernel`` parameter, quoted in the message.
    X : array-like
        The finite features ``K`` was computed from.

    Returns
    -------
    ndarray
        ``K`` itself, when it is finite.

    Raises
    ------
    ValueError
        When ``K`` holds a non-finite value.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm.kernels import check_finite_gram
    >>> X = np.array([[1e200]])
    >>> K = np.array([[np.inf]])  # the linear kernel of X overflows
    >>> try:
    ...     check_finite_gram(K, "linear", X)
    ... except ValueError as err:
    ...     print(str(err)[:40])
    the kernel matrix of X (kernel='linear')
    """
    if not np.all(np.isfinite(K)):
        big = float(np.max(np.abs(X))) if np.size(X) else 0.0
        raise ValueError(
            f"the kernel matrix of X (kernel={kernel_label(kernel)}) overflows: features of "
            f"magnitude up to {big:.3g} are too large for a finite kernel; standardise X "
            "first (e.g. bisvm.Scaler, which handles such features)"
        )
    return K
