"""Shared machinery of the SMO-trained kernel estimators (:class:`~bisvm.SVC`,
:class:`~bisvm.SVR`, :class:`~bisvm.NuSVC`, :class:`~bisvm.NuSVR`,
:class:`~bisvm.OneClassSVM`): the constraints of their common parameters, input
validation (dense, CSR, or anything a callable kernel accepts), sample weights with
LIBSVM's rule, kernel set-up, the kernel block against the support vectors, and the
scikit-learn attribute conventions for sparse fits (``support_vectors_`` and
``dual_coef_`` sparse, ``coef_`` sparse and otherwise read-only)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_consistent_length, column_or_1d
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from bisvm.estimators._constraints import (
    KERNEL_PARAMETERS,
    N_JOBS,
    SMO_MAX_ITER,
    TOL,
    positive,
)
from bisvm.kernels import (
    check_finite_gram,
    check_precomputed,
    linear_kernel,
    make_kernel,
    warn_if_indefinite,
)
from bisvm.progress import Progress, mode_for_verbose
from bisvm.solvers.dual.smo import solve_smo

__all__ = ["BaseSMO", "warm_alpha", "positive_weight_rows", "LINEAR_GRAM_MAX_BYTES"]

#: Dense data whose linear Gram matrix takes at most this many bytes is trained on
#: ``X @ X.T`` computed once by BLAS (then read like a precomputed kernel), so that
#: ``kernel="linear"`` and ``kernel="precomputed"`` with the user's ``X @ X.T`` (or a
#: callable returning it) see bit-identical kernel values and SMO takes the same steps.
#: Computed column by column, the linear kernel sums each inner product in a different
#: order than BLAS; on data with tied samples (iris has duplicate rows) those
#: last-bit differences decide which of two equal violators SMO picks, and at tol=1e-3
#: the two runs stop at dual solutions a few per cent apart.
#: LIBSVM hides the same differences by storing its kernel columns in float32.
LINEAR_GRAM_MAX_BYTES = 2**26


def warm_alpha(previous, upper):
    """Scale a previous dual solution into the new box (keeps ``y @ alpha = 0``)."""
    if previous is None or previous.shape != upper.shape:
        return None
    a = previous
    pos = a > 0
    if not np.any(pos):
        return None
    ratio = np.min(upper[pos] / a[pos])
    return a * min(1.0, float(ratio))


def positive_weight_rows(sw):
    """Indices of the samples LIBSVM keeps: those of positive weight (zero and negative
    weights drop the sample). Raises ``ValueError`` when none is left."""
    idx = np.flatnonzero(sw > 0)
    if idx.size == 0:
        raise ValueError("Invalid input - all samples have zero or negative weights.")
    return idx


def _is_numeric(X):
    if sp.issparse(X):
        return True
    try:
        return np.asarray(X).dtype.kind in "biufc"
    except (TypeError, ValueError):
        return False


#: ``__init__`` parameter names per estimator class (see ``BaseSMO._get_param_names``)
_PARAM_NAMES: dict = {}


def _plain_arrays(X, y):
    """Whether ``validate_data(X, y, dtype=float64, order="C")`` would return ``X`` and
    ``y`` as they are: a C-ordered float64 ndarray with at least one row and one column,
    all finite, and a 1-d numeric ndarray ``y`` of as many finite entries."""
    return (type(X) is np.ndarray and type(y) is np.ndarray and X.ndim == 2 and y.ndim == 1
            and X.dtype == np.float64 and X.flags.c_contiguous and X.shape[0] >= 1
            and X.shape[1] >= 1 and y.shape[0] == X.shape[0] and y.dtype.kind in "biuf"
            and bool(np.isfinite(X).all())
            and (y.dtype.kind != "f" or bool(np.isfinite(y).all())))


class BaseSMO(BaseEstimator):
    """Shared parameter constraints, kernel handling and prediction from support vectors."""

    #: The parameters every SMO estimator has (each class adds its own): checked by
    #: ``self._validate_params()`` at the top of ``fit``.
    _parameter_constraints: dict = {
        **KERNEL_PARAMETERS,
        "tol": TOL,
        "cache_size": [positive()],
        "max_iter": SMO_MAX_ITER,
        "selection": [StrOptions({"second_order", "max_violating_pair"})],
        "shrinking": "no_validation",  # read as bool(shrinking)
        "verbose": "no_validation",  # read as a truth value
        "n_jobs": N_JOBS,
    }

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's parameter names (``__init__``'s signature), read once per class:
        ``get_params`` (called by ``_validate_params`` in every ``fit``) otherwise
        inspects the signature each time, a twentieth of a small fit."""
        names = _PARAM_NAMES.get(cls)
        if names is None:
            names = _PARAM_NAMES[cls] = tuple(super()._get_param_names())
        return list(names)

    def _free_form(self, X):
        """Whether ``X`` goes to a callable kernel as it is (not a numeric matrix)."""
        return callable(self.kernel) and not _is_numeric(X)

    def _validate_X_train(self, X, y="no_validation", **kw):
        """Validated training data: a float64 C-ordered array or a CSR matrix; for a
        callable kernel on non-numeric data (strings, graphs, ...) an object array of the
        samples, passed to the callable unchanged."""
        if self.kernel == "precomputed" and sp.issparse(X):
            raise TypeError("Sparse precomputed kernels are not supported.")
        if self._free_form(X):
            X = np.asarray(X, dtype=object)
            if not (isinstance(y, str) and y == "no_validation"):
                if y is None:
                    raise ValueError(f"{type(self).__name__} requires y to be passed, "
                                     "but the target y is None")
                y = column_or_1d(y, warn=True)
                check_consistent_length(X, y)
        elif isinstance(y, str) and y == "no_validation":
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C")
        elif set(kw) <= {"y_numeric"} and _plain_arrays(X, y):
            # what validate_data concludes on these inputs, at a tenth of its cost (about
            # 0.1 ms, a tenth of a small fit): X and y pass unchanged, no feature names
            vars(self).pop("feature_names_in_", None)
            self.n_features_in_ = X.shape[1]
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                                 order="C", **kw)
        self.shape_fit_ = X.shape
        return X, y

    def _sample_weight(self, sample_weight, X):
        """Finite weights, negative ones allowed (their samples are dropped, as LIBSVM
        drops every sample of weight <= 0); NaN or inf raise."""
        return _check_sample_weight(sample_weight, X, dtype=np.float64)

    def _setup_kernel(self, X):
        if self.kernel == "precomputed":
            check_precomputed(X)
            # LIBSVM and scikit-learn accept an indefinite kernel and so do we (SMO still
            # terminates), but the user is told that the dual is then not concave
            warn_if_indefinite(
                X, type(self).__name__,
                "SMO still terminates (as LIBSVM's does), but the dual problem is not "
                "concave and the solution is a stationary point, not the SVM optimum",
            )
        self._kernel = make_kernel(
            self.kernel, gamma=self.gamma, coef0=self.coef0, degree=self.degree, X=X
        )
        self._gamma = self._kernel.gamma
        if not (np.isfinite(self._gamma) and self._gamma > 0):
            # scikit-learn's wording first (its LIBSVM fit ends with NaN duals here, as
            # 0 * inf distances make the kernel NaN), then the cause
            raise ValueError(
                "The dual coefficients or intercepts are not finite on this X: "
                f"gamma={self.gamma!r} underflows to {self._gamma!r} (the variance of X "
                "overflows: features too large), so the kernel would be NaN. "
                "Standardise X (e.g. bisvm.Scaler) or pass a numeric gamma"
            )
        if self.kernel in ("linear", "poly", "rbf", "sigmoid"):
            # these kernels go through inner products x.z; when a squared norm overflows
            # they are inf or NaN (rbf: inf - inf in the expanded distance)
            flat = X.data if sp.issparse(X) else X
            with np.errstate(over="ignore"):
                sq = np.asarray(X.multiply(X).sum(axis=1) if sp.issparse(X)
                                else np.einsum("ij,ij->i", X, X))
            check_finite_gram(sq, self.kernel, flat)
        # non-numeric samples are kept whole: prediction calls the callable against all
        # training samples, K(X, X_fit), as scikit-learn does, so that a callable written
        # for that convention (e.g. one filling only a symmetric block) gives its values
        if self._free_form(X):
            self._X_fit = X
        else:  # numeric data: no such state (a previous fit's is dropped)
            vars(self).pop("_X_fit", None)
        # what the solver sees (see LINEAR_GRAM_MAX_BYTES); dropped at the end of fit
        self._gram = None
        self._solve_kernel = self._kernel
        small = 8 * X.shape[0] ** 2 <= LINEAR_GRAM_MAX_BYTES
        if callable(self.kernel) or (self.kernel == "linear" and small and (
                not sp.issparse(X) or 8 * X.shape[0] * X.shape[1] <= LINEAR_GRAM_MAX_BYTES)):
            # a callable is evaluated once on all of X, as scikit-learn does (each
            # sub-problem reads its block, instead of calling it again on the rows); a
            # small sparse X gets the Gram matrix of its dense copy, so that sparse and
            # dense linear fits see the same kernel values and stop at the same iterate
            if self.kernel == "linear":
                self._gram = linear_kernel(X.toarray() if sp.issparse(X) else X)
            else:
                self._gram = self._kernel(X)
            self._solve_kernel = make_kernel("precomputed")

    def _release_solver_view(self):
        self._gram = None
        del self._gram, self._solve_kernel

    def _sub_problem_data(self, X, idx):
        """The solver's data for the training rows ``idx`` (sorted, unique)."""
        if getattr(self, "_gram", None) is not None:
            X = self._gram
        if idx.size == X.shape[0]:  # every sample, no copy
            return X
        if self._solve_kernel.name == "precomputed":
            return X[np.ix_(idx, idx)]
        return X[idx]

    def _solve(self, problem, alpha0, label=""):
        verbose = getattr(self, "verbose", False)
        # the working-set solver's outer iterations (large problems) on stderr; drawn at
        # the first one, so that the small problems SMO solves show no bar
        with Progress(f"{type(self).__name__}{label}", None, mode=mode_for_verbose(verbose),
                      unit="it", line_interval=1.0, lazy=True) as progress:
            res = solve_smo(
                problem,
                alpha0=alpha0,
                tol=float(self.tol),
                selection=self.selection,
                shrinking=bool(self.shrinking),
                cache_size=float(self.cache_size),
                max_iter=int(self.max_iter),
                n_jobs=getattr(self, "n_jobs", None),
                progress=progress if verbose else None,
            )
        if verbose:
            n_sv = int(np.sum(res.dual_coef > 0))
            n_bsv = int(np.sum(res.dual_coef >= problem.upper))
            print(
                f"[{type(self).__name__}{label}] optimization finished, #iter = "
                f"{res.n_iter}, obj = {res.objective:.6g}, rho = {-res.intercept:.6g}, "
                f"nSV = {n_sv}, nBSV = {n_bsv}, gap = {res.certificate_value:.3g}"
                + ("" if res.converged else " (stopped at max_iter)"),
                flush=True,
            )
        return res

    def _support_vectors(self, X, support):
        """Rows of the support vectors (sparse when ``X`` is); empty for precomputed."""
        if self.kernel == "precomputed":
            return np.empty((0, 0))
        return X[support].copy()

    def _store_dual(self, dual):
        """``dual_coef_``: CSR when the fit was sparse (as scikit-learn)."""
        self.dual_coef_ = sp.csr_matrix(dual) if sp.issparse(self.support_vectors_) else dual

    def _dual_dense(self):
        d = self.dual_coef_
        return d.toarray() if sp.issparse(d) else np.asarray(d)

    def _kernel_to_sv(self, X):
        """Block ``K(X, support_vectors_)``, validating ``X`` (dense or sparse, whatever
        the training data were)."""
        check_is_fitted(self)
        if self._free_form(X):
            X = np.asarray(X, dtype=object)
            if getattr(self, "_X_fit", None) is not None:
                return self._kernel(X, self._X_fit)[:, self.support_]
            return self._kernel(X, self.support_vectors_)
        if self.kernel == "precomputed" and sp.issparse(X):
            raise TypeError("Sparse precomputed kernels are not supported.")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, order="C",
                          reset=False)
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.shape_fit_[0], symmetric=False)
            return X[:, self.support_]
        return self._kernel(X, self.support_vectors_)

    def _coef_from_dual(self, dual):
        """``dual @ support_vectors_`` (linear kernel only): sparse after a sparse fit,
        otherwise a read-only array (it is derived, not a parameter to edit)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        sv = self.support_vectors_
        if sp.issparse(sv):
            return sp.csr_matrix(sp.csr_matrix(dual) @ sv)
        coef = np.asarray(dual @ sv)
        coef.flags.writeable = False
        return coef

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags
