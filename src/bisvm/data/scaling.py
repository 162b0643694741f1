"""Feature scaling fitted on training rows only (dense or sparse)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .records import MAX_DENSE_ELEMENTS, is_sparse


class Scaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    r"""Affine feature scaling :math:`x \mapsto (x - o) / s`, fitted on training rows only.

    Parameters
    ----------
    method : {"standard", "minmax", "none"}
        ``"standard"``: :math:`o = \bar x_j`, :math:`s = \operatorname{sd}(x_j)` (ddof 0);
        ``"minmax"``: :math:`o = \min x_j`, :math:`s = \max x_j - \min x_j` (maps the
        training range to [0, 1]); ``"none"``: identity. A column that is constant on the
        training rows (``s`` at round-off level) gets ``s = 1``, so it maps to a constant
        instead of dividing by zero.

    Attributes
    ----------
    offset_ : ndarray of shape (n_features,)
        The offsets :math:`o_j` (zero when fitted on sparse ``X``).
    scale_ : ndarray of shape (n_features,)
        The divisors :math:`s_j`, all positive.
    effective_method_ : str
        ``method``, or ``"standard-uncentered"`` / ``"maxabs"`` when fitted on sparse X.
    n_features_in_ : int
        Number of columns seen by :meth:`fit`.
    feature_names_in_ : ndarray of str, shape (n_features,)
        The column names of a DataFrame ``X`` given to :meth:`fit` (only then).

    Notes
    -----
    Sparse input (any ``scipy.sparse`` matrix, fitted as CSR) is never densified: a
    nonzero offset would turn every implicit zero into :math:`-o_j/s_j`, i.e. make the
    matrix dense. So on sparse ``X`` the offset is 0 and only the divisor is fitted, from
    the stored values (:func:`sklearn.utils.sparsefuncs.mean_variance_axis` and
    ``min_max_axis``, which count the implicit zeros):

    * ``"standard"`` becomes *standard without centering*,
      :math:`s_j = \operatorname{sd}(x_j)` (ddof 0), ``effective_method_ =
      "standard-uncentered"``; the scaled columns have unit variance but keep their mean;
    * ``"minmax"`` becomes *max-abs* scaling, :math:`s_j = \max_i |x_{ij}|`
      (``"maxabs"``), which maps each column into [-1, 1] (into [0, 1], as min-max does,
      for a nonnegative column with an implicit zero);
    * ``"none"`` stays the identity.

    Columns that are all zero on the training rows, or constant at round-off level
    relative to their mean, get :math:`s_j = 1`. :meth:`transform` of sparse ``X`` by a
    scaler with a zero offset returns a CSR matrix with the same sparsity pattern; by a
    centering scaler (fitted on dense rows) it returns the dense result, refused above
    :data:`MAX_DENSE_ELEMENTS` values.

    As a scikit-learn transformer it maps each column to one column of the same name
    (:meth:`get_feature_names_out` returns ``feature_names_in_`` when fitted on a
    DataFrame, else ``x0 ... x{d-1}``), so :meth:`set_output` applies:
    ``Scaler().set_output(transform="pandas")`` returns DataFrames from
    :meth:`transform` and ``fit_transform``, alone or inside a ``Pipeline``, as
    scikit-learn's ``StandardScaler`` does.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import Scaler
    >>> X = np.array([[1.0, 10.0], [3.0, 10.0], [5.0, 10.0]])
    >>> sc = Scaler("minmax").fit(X)
    >>> sc.transform(X)
    array([[0. , 0. ],
           [0.5, 0. ],
           [1. , 0. ]])
    >>> sc.scale_
    array([4., 1.])
    """

    _EFFECTIVE = {"standard": ("standard", "standard-uncentered"), "minmax": ("minmax", "maxabs"),
                  "none": ("none",)}

    def __init__(self, method="standard"):
        self.method = method

    def fit(self, X, y=None):
        """Fit the offsets and divisors on the training rows.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Training rows; finite values only.
        y : None
            Ignored; present for the scikit-learn transformer interface.

        Returns
        -------
        Scaler
            The fitted scaler itself.
        """
        if self.method not in ("standard", "minmax", "none"):
            raise ValueError(f"method must be 'standard', 'minmax' or 'none', got {self.method!r}")
        given = X
        if is_sparse(X):
            X = _finite_sparse(X, "X")
            offset = np.zeros(X.shape[1])
            scale, magnitude = _sparse_divisor(X, self.method)
            effective = {"standard": "standard-uncentered", "minmax": "maxabs"}.get(
                self.method, "none")
        else:
            X = _finite_matrix(X, "X")
            offset, scale = _dense_offset_scale(X, self.method)
            magnitude, effective = np.abs(offset), self.method
        # round-off level spread counts as constant (cf. sklearn's _handle_zeros_in_scale)
        tiny = 10 * np.finfo(np.float64).eps * np.maximum(magnitude, 1.0)
        scale = np.where(~np.isfinite(scale) | (scale <= tiny), 1.0, scale)
        self.offset_ = np.asarray(offset, dtype=np.float64)
        self.scale_ = np.asarray(scale, dtype=np.float64)
        self.effective_method_ = effective
        # records (or forgets) feature_names_in_, as scikit-learn's transformers do
        validate_data(self, given, reset=True, skip_check_array=True)
        self.n_features_in_ = X.shape[1]
        return self

    def describe(self):
        """Say in one line which scaling is applied and, on sparse input, why.

        Returns
        -------
        str
            The description, for reports and the CLI.
        """
        check_is_fitted(self, "scale_")
        return {
            "standard": "standard (centred, divided by the training standard deviation)",
            "minmax": "minmax (training range mapped to [0, 1])",
            "none": "none",
            "standard-uncentered": "standard without centering (X is sparse and centering "
            "would make it dense): columns divided by their training standard deviation",
            "maxabs": "max-abs instead of minmax (X is sparse and a min offset would make it "
            "dense): columns divided by their largest training |value|",
        }[self.effective_method_]

    def _check_n_features(self, X):
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, the scaler was fitted on {self.n_features_in_}"
            )

    def _checked(self, X):
        """``X`` as a finite CSR or dense float64 matrix of the fitted width; a DataFrame
        whose columns differ from ``feature_names_in_`` warns (scikit-learn's rule)."""
        given = X
        X = _finite_sparse(X, "X") if is_sparse(X) else _finite_matrix(X, "X")
        self._check_n_features(X)
        validate_data(self, given, reset=False, skip_check_array=True)
        return X

    def transform(self, X):
        r"""Scale rows: :math:`x \mapsto (x - o) / s`.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Rows with the fitted number of columns.

        Returns
        -------
        ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_features)
            The scaled rows; sparse input stays sparse when the offset is zero.
        """
        check_is_fitted(self, "scale_")
        X = self._checked(X)
        if is_sparse(X):
            if np.any(self.offset_ != 0):
                return (_dense_of_sparse(X, "centering") - self.offset_) / self.scale_
            out = X.copy()
            out.data /= self.scale_[out.indices]
            return out
        return (X - self.offset_) / self.scale_

    def inverse_transform(self, X):
        r"""Undo :meth:`transform`: :math:`z \mapsto z s + o`.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Scaled rows.

        Returns
        -------
        ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_features)
            The rows in the original units.
        """
        check_is_fitted(self, "scale_")
        if is_sparse(X):
            X = self._checked(X)
            if np.any(self.offset_ != 0):
                return _dense_of_sparse(X, "un-centering") * self.scale_ + self.offset_
            out = X.copy()
            out.data *= self.scale_[out.indices]
            return out
        X = np.asarray(X, dtype=np.float64)
        return X * self.scale_ + self.offset_

    def to_dict(self):
        """Return a JSON-able record of the fitted scaling.

        Returns
        -------
        dict
            ``method``, ``effective_method``, ``offset`` and ``scale``; the floats
            round-trip exactly through :mod:`json`.
        """
        check_is_fitted(self, "scale_")
        return {
            "method": self.method,
            "effective_method": self.effective_method_,
            "offset": [float(v) for v in self.offset_],
            "scale": [float(v) for v in self.scale_],
        }

    @classmethod
    def from_dict(cls, d):
        """Rebuild a fitted scaler from the record :meth:`to_dict` wrote.

        The record is validated, since it may come from a file; a record without
        ``effective_method`` reads as its ``method``.

        Parameters
        ----------
        d : dict
            The record.

        Returns
        -------
        Scaler
            A fitted scaler.
        """
        if not isinstance(d, Mapping):
            raise ValueError("scaler record must be a dict")
        method = d.get("method")
        if method not in ("standard", "minmax", "none"):
            raise ValueError(f"scaler record: unknown method {method!r}")
        effective = d.get("effective_method", method)
        if effective not in cls._EFFECTIVE[method]:
            raise ValueError(
                f"scaler record: effective_method {effective!r} does not go with method "
                f"{method!r}"
            )
        try:
            offset = np.asarray(d["offset"], dtype=np.float64)
            scale = np.asarray(d["scale"], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"scaler record is malformed: {exc}") from None
        if offset.ndim != 1 or offset.shape != scale.shape:
            raise ValueError("scaler record: offset and scale must be lists of the same length")
        if not (np.isfinite(offset).all() and np.isfinite(scale).all() and (scale > 0).all()):
            raise ValueError("scaler record: offsets must be finite and scales finite and > 0")
        if effective != method and np.any(offset != 0):
            raise ValueError(f"scaler record: a {effective} scaling has zero offsets")
        obj = cls(method=method)
        obj.offset_ = offset
        obj.scale_ = scale
        obj.effective_method_ = effective
        obj.n_features_in_ = offset.shape[0]
        return obj


def _dense_offset_scale(X, method):
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is handled below
        if method == "standard":
            offset = X.mean(axis=0)
            scale = X.std(axis=0)
        elif method == "minmax":
            offset = X.min(axis=0)
            scale = X.max(axis=0) - offset
        else:
            offset = np.zeros(X.shape[1])
            scale = np.ones(X.shape[1])
    bad = ~(np.isfinite(offset) & np.isfinite(scale))
    if np.any(bad):
        # Finite features near the top of the float range (|x| ~ 1e300) overflow the
        # sum of squares (or max - min): recompute those columns on x / max|x| and
        # scale back, so that they are standardised rather than left unscaled.
        Xb = X[:, bad]
        m = np.max(np.abs(Xb), axis=0)
        m = np.where(m > 0, m, 1.0)
        Z = Xb / m
        if method == "standard":
            o, s = Z.mean(axis=0), Z.std(axis=0)
        else:
            o, s = Z.min(axis=0), Z.max(axis=0) - Z.min(axis=0)
        offset = np.array(offset, dtype=np.float64)
        scale = np.array(scale, dtype=np.float64)
        with np.errstate(over="ignore"):  # a range beyond the float range: cap it
            offset[bad] = o * m
            scale[bad] = np.minimum(s * m, np.finfo(np.float64).max)
    return offset, scale


def _sparse_divisor(X, method):
    """Divisor ``s`` and column magnitude (for the constant-column rule) of CSR ``X``
    without densifying it; see :class:`Scaler`."""
    from sklearn.utils.sparsefuncs import mean_variance_axis, min_max_axis

    d = X.shape[1]
    if method == "none":
        return np.ones(d), np.zeros(d)
    lo, hi = min_max_axis(X, axis=0)
    maxabs = np.maximum(np.abs(lo), np.abs(hi))
    if method == "minmax":
        return maxabs, maxabs
    with np.errstate(over="ignore", invalid="ignore"):
        mean, var = mean_variance_axis(X, axis=0)
        scale = np.sqrt(var)
    bad = ~(np.isfinite(mean) & np.isfinite(scale))
    if np.any(bad):
        # as in the dense case: |x| ~ 1e300 overflows the sum of squares; recompute the
        # columns on x / max|x| (a column-scaled copy of the stored values only)
        m = np.where(maxabs > 0, maxabs, 1.0)
        Z = X.copy()
        Z.data /= m[Z.indices]
        zmean, zvar = mean_variance_axis(Z, axis=0)
        with np.errstate(over="ignore"):
            mean = np.where(bad, zmean * m, mean)
            scale = np.where(bad, np.minimum(np.sqrt(zvar) * m, np.finfo(np.float64).max),
                             scale)
    return scale, np.abs(mean)


def _finite_matrix(X, name):
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    if not np.isfinite(X).all():
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"{name} has a non-finite value at row {i}, column {j}")
    return X


def _dense_of_sparse(X, what):
    n, d = X.shape
    if n * d > MAX_DENSE_ELEMENTS:
        raise ValueError(
            f"{what} a sparse X of {n} x {d} would make it dense (over {MAX_DENSE_ELEMENTS} "
            "values); fit the scaler on sparse rows (it then divides only) or use "
            "method='none'"
        )
    return X.toarray()


def _finite_sparse(X, name):
    """CSR float64 view (a copy only when the format or dtype changes) with finite stored
    values; errors name the first bad row and column."""
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}")
    try:
        X = X.tocsr().astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    finite = np.isfinite(X.data)
    if not finite.all():
        k = int(np.argmin(finite))
        i = int(np.searchsorted(X.indptr, k, side="right")) - 1
        raise ValueError(f"{name} has a non-finite value at row {i}, column {X.indices[k]}")
    return X
