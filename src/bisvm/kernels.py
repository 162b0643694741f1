r"""Kernel functions and Gram blocks.

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
``laplacian_kernel`` does. The sigmoid kernel is not positive semi-definite for every
``(γ, c0)``; it is accepted as LIBSVM accepts it.

Blocks are computed with one BLAS matrix product plus element-wise operations, never with
Python loops over rows. Either argument may be a scipy sparse matrix (any format; it is
used in CSR form and never densified); the block returned is always dense.

References
----------
B. Schölkopf and A. J. Smola, *Learning with Kernels*, MIT Press, 2002, ch. 2 and 4.

C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", *ACM
Transactions on Intelligent Systems and Technology* 2(3), 2011.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from .kernel_checks import (
    PSD_CHECK_MAX_N,
    check_finite_gram,
    check_precomputed,
    indefinite_spectrum,
    kernel_label,
    principal_minor_bound,
    resolve_gamma,
    warn_if_indefinite,
)

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
#: form ``Σ (x - y)²`` is exact for equal rows.
_NEAR_REL = 1e-6
_NEAR_CHUNK = 1 << 16


def squared_distances(X, Y):
    r"""Compute the squared Euclidean distances between the rows of two matrices.

    :math:`\lVert x_i - y_j\rVert^2 = \lVert x_i\rVert^2 + \lVert y_j\rVert^2 -
    2x_i^\top y_j` through one GEMM, clipped at 0 against cancellation. The pairs where
    cancellation matters -- distance below ``1e-6 (‖x_i‖² + ‖y_j‖²)``, i.e. nearly
    coincident rows -- are recomputed directly as :math:`\sum_k (x_{ik} -
    y_{jk})^2`, so that equal rows are at distance exactly 0 whether or not ``Y`` is
    ``X`` (LIBSVM computes its RBF values this way too). For ordinary data this costs one
    comparison pass over the block.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_x, n_features)
        First set of rows, already validated (float64, 2-D).
    Y : ndarray or scipy.sparse.csr_matrix of shape (n_y, n_features)
        Second set of rows; pass ``X`` itself for the distances within ``X`` (the
        diagonal is then exactly 0).

    Returns
    -------
    ndarray of shape (n_x, n_y)
        The squared distances, all non-negative.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm.kernels import squared_distances
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> squared_distances(X, X)
    array([[ 0., 25.],
           [25.,  0.]])
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
    r"""Compute the linear kernel :math:`K_{ij} = \langle x_i, y_j\rangle`.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_x, n_features)
        First set of rows.
    Y : array-like or scipy.sparse matrix of shape (n_y, n_features), optional
        Second set of rows; ``X`` itself by default.

    Returns
    -------
    ndarray of shape (n_x, n_y)
        The dense kernel block.

    Examples
    --------
    >>> from bisvm.kernels import linear_kernel
    >>> linear_kernel([[1.0, 2.0]], [[3.0, 4.0], [0.0, 1.0]])
    array([[11.,  2.]])
    """
    X, Y = _pair(X, Y)
    return _dot_t(X, Y)


def polynomial_kernel(X, Y=None, gamma=1.0, coef0=0.0, degree=3):
    r"""Compute the polynomial kernel :math:`K_{ij} = (\gamma\langle x_i, y_j\rangle + c_0)^d`.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_x, n_features)
        First set of rows.
    Y : array-like or scipy.sparse matrix of shape (n_y, n_features), optional
        Second set of rows; ``X`` itself by default.
    gamma : float, default=1.0
        Scale :math:`\gamma` of the inner product.
    coef0 : float, default=0.0
        Offset :math:`c_0`.
    degree : int, default=3
        Degree :math:`d`.

    Returns
    -------
    ndarray of shape (n_x, n_y)
        The dense kernel block.

    Examples
    --------
    >>> from bisvm.kernels import polynomial_kernel
    >>> polynomial_kernel([[1.0, 2.0]], [[3.0, 4.0]], gamma=0.1, coef0=1.0, degree=2)
    array([[4.41]])
    """
    X, Y = _pair(X, Y)
    K = _dot_t(X, Y)
    K *= gamma
    K += coef0
    return K**degree


def rbf_kernel(X, Y=None, gamma=1.0):
    r"""Compute the Gaussian kernel :math:`K_{ij} = \exp(-\gamma\lVert x_i - y_j\rVert^2)`.

    The form :math:`\exp(-\lVert x - y\rVert^2/(2\sigma^2))` is ``gamma = 1/(2σ²)``.
    Distances come from :func:`squared_distances`, so equal rows give exactly 1.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_x, n_features)
        First set of rows.
    Y : array-like or scipy.sparse matrix of shape (n_y, n_features), optional
        Second set of rows; ``X`` itself by default.
    gamma : float, default=1.0
        Width :math:`\gamma > 0`.

    Returns
    -------
    ndarray of shape (n_x, n_y)
        The dense kernel block.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm.kernels import rbf_kernel
    >>> K = rbf_kernel([[0.0], [1.0]], gamma=np.log(2.0))
    >>> K.round(6)
    array([[1. , 0.5],
           [0.5, 1. ]])
    """
    X, Y = _pair(X, Y)
    K = squared_distances(X, Y)
    K *= -gamma
    np.exp(K, out=K)
    return K


def laplacian_kernel(X, Y=None, gamma=1.0):
    r"""Compute the Laplacian kernel :math:`K_{ij} = \exp(-\gamma\lVert x_i - y_j\rVert_1)`.

    The distance is the L1 (city-block) distance, as in scikit-learn's
    ``laplacian_kernel``.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_x, n_features)
        First set of rows.
    Y : array-like or scipy.sparse matrix of shape (n_y, n_features), optional
        Second set of rows; ``X`` itself by default.
    gamma : float, default=1.0
        Width :math:`\gamma > 0`.

    Returns
    -------
    ndarray of shape (n_x, n_y)
        The dense kernel block.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm.kernels import laplacian_kernel
    >>> laplacian_kernel([[0.0, 0.0]], [[1.0, 1.0]], gamma=np.log(2.0)).round(6)
    array([[0.25]])
    """
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
    r"""Compute the sigmoid kernel :math:`K_{ij} = \tanh(\gamma\langle x_i, y_j\rangle + c_0)`.

    It is not positive semi-definite for every :math:`(\gamma, c_0)`.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_x, n_features)
        First set of rows.
    Y : array-like or scipy.sparse matrix of shape (n_y, n_features), optional
        Second set of rows; ``X`` itself by default.
    gamma : float, default=1.0
        Scale :math:`\gamma` of the inner product.
    coef0 : float, default=0.0
        Offset :math:`c_0`.

    Returns
    -------
    ndarray of shape (n_x, n_y)
        The dense kernel block.

    Examples
    --------
    >>> from bisvm.kernels import sigmoid_kernel
    >>> sigmoid_kernel([[1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]], gamma=1.0)
    array([[0.        , 0.76159416]])
    """
    X, Y = _pair(X, Y)
    K = _dot_t(X, Y)
    K *= gamma
    K += coef0
    np.tanh(K, out=K)
    return K


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


@dataclass(frozen=True)
class Kernel:
    r"""A resolved kernel: name plus numeric parameters, or a callable.

    ``kernel(X, Y)`` gives the block ``K(X, Y)``; :meth:`diag` gives ``k(x_i, x_i)``.
    For ``"precomputed"`` the block is the input itself. Build one with
    :func:`make_kernel`, which validates the parameters and resolves ``gamma``.

    Parameters
    ----------
    name : str
        One of :data:`KERNELS`, or ``"callable"``.
    gamma : float, default=1.0
        The resolved width or scale :math:`\gamma`.
    coef0 : float, default=0.0
        Offset :math:`c_0` of the polynomial and sigmoid kernels.
    degree : int, default=3
        Degree of the polynomial kernel.
    function : callable, optional
        A user kernel ``function(X, Y)`` returning the ``(n_x, n_y)`` block.

    Examples
    --------
    >>> from bisvm.kernels import Kernel
    >>> k = Kernel("poly", gamma=1.0, coef0=1.0, degree=2)
    >>> k([[1.0, 1.0]], [[1.0, 0.0]])
    array([[4.]])
    >>> k.diag([[1.0, 1.0]])
    array([9.])
    """

    name: str
    gamma: float = 1.0
    coef0: float = 0.0
    degree: int = 3
    function: object = None

    @property
    def code(self):
        """Integer code of the kernel in the compiled column routines.

        Callables are precomputed, so they share the code of ``"precomputed"``.
        """
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
        """Compute the diagonal ``k(x_i, x_i)`` without forming the block.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n, n_features)
            The rows (for ``"precomputed"``, the square Gram matrix).

        Returns
        -------
        ndarray of shape (n,)
            The kernel value of each row with itself.
        """
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
        The kernel, by name or as ``kernel(X, Y)`` returning the block.
    gamma : float > 0, "scale" or "auto"
        Resolved against the training data ``X`` (needed for "scale"/"auto").
    coef0 : float
        ``c_0`` of the polynomial and sigmoid kernels.
    degree : int >= 0
        Degree of the polynomial kernel.
    X : array, optional
        Training data, used only to resolve ``gamma``.

    Returns
    -------
    Kernel
        The kernel with its numeric parameters.

    Raises
    ------
    ValueError
        For an unknown kernel, a non-finite ``coef0``, a negative or fractional
        ``degree``, or ``gamma`` that is not positive or needs ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm.kernels import make_kernel
    >>> X = np.array([[0.0, 2.0], [2.0, 0.0]])
    >>> k = make_kernel("rbf", gamma="scale", X=X)
    >>> k.gamma
    0.5
    >>> k(X).round(4)
    array([[1.    , 0.0183],
           [0.0183, 1.    ]])
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
    """Compute the kernel block ``K(X, Y)`` of a :class:`Kernel`.

    Parameters
    ----------
    kernel : Kernel
        The kernel, from :func:`make_kernel`.
    X : array-like or scipy.sparse matrix of shape (n_x, n_features)
        First set of rows.
    Y : array-like or scipy.sparse matrix of shape (n_y, n_features), optional
        Second set of rows; ``X`` itself by default.

    Returns
    -------
    ndarray of shape (n_x, n_y)
        The dense kernel block.

    Examples
    --------
    >>> from bisvm.kernels import gram_matrix, make_kernel
    >>> gram_matrix(make_kernel("linear"), [[1.0, 2.0], [0.0, 1.0]])
    array([[5., 2.],
           [2., 1.]])
    """
    return kernel(X, Y)
