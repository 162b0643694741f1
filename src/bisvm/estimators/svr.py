r"""Epsilon-support vector regression trained by SMO: :class:`SVR`.

ε-SVR (Smola & Schölkopf 2004, "A tutorial on support vector regression") minimises
:math:`\tfrac12\lVert w\rVert^2 + \sum_i C_i\max(0, |y_i - f(x_i)| - \varepsilon)`
through its dual on :math:`2n` variables, solved by
:func:`bisvm.solvers.dual.smo.solve_smo` with the attribute layout and signs of
scikit-learn's LIBSVM wrapper. The class is re-exported by :mod:`bisvm.estimators.svm`,
the path model files name.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from bisvm.estimators._constraints import non_negative, positive
from bisvm.estimators._docs import fill_parameters, method_doc
from bisvm.estimators._smo_base import BaseSMO, positive_weight_rows, warm_alpha
from bisvm.solvers.dual.smo import epsilon_svr_dual

__all__ = ["SVR"]


class SVR(RegressorMixin, BaseSMO):
    __doc__ = fill_parameters(r"""Epsilon-support vector regression trained by SMO.

    Minimises :math:`\tfrac12\lVert w\rVert^2 + \sum_i C s_i \max(0, |y_i - f(x_i)| -
    \varepsilon)` (Vapnik's ε-insensitive loss, :math:`s_i` the sample weights) through
    its dual on :math:`2n` variables :math:`\alpha, \alpha^*` (Smola & Schölkopf 2004),
    solved by SMO as LIBSVM does. ``dual_coef_`` holds :math:`\alpha_i - \alpha_i^*`
    (LIBSVM's sign: positive when the target lies above the tube) and ``intercept_`` is
    :math:`-\rho`, as in :class:`sklearn.svm.SVR`.

    Parameters
    ----------
    {{kernel}}
    {{degree}}
    {{gamma}}
    {{coef0}}
    {{tol}}
    C : float > 0 or inf, default=1.0
        Cost of a residual outside the tube; ``np.inf`` leaves the dual coefficients
        unbounded (every residual within the tube).
    epsilon : float >= 0, default=0.1
        Half-width :math:`\varepsilon` of the insensitive tube.
    {{shrinking}}
    {{cache_size}}
    {{max_iter}}
    {{selection}}
    warm_start : bool, default=False
        Start SMO from the previous fit's dual solution (scaled into the new box) when
        the training rows are the same, e.g. along a path of ``C`` values.
    {{verbose}}
    {{n_jobs}}

    Attributes
    ----------
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors (sparse after a sparse fit).
    dual_coef_ : ndarray of shape (1, n_SV)
        :math:`\alpha_i - \alpha_i^*` of the support vectors.
    intercept_ : ndarray of shape (1,)
        The intercept :math:`b = -\rho`.
    n_support_ : ndarray of shape (1,)
        Number of support vectors.
    {{one_machine_attributes}}

    See Also
    --------
    bisvm.NuSVR : The same regression with the tube width learned from ν.
    bisvm.AutoSVR : A kernel regressor that learns ``C`` and the kernel widths.

    References
    ----------
    A. J. Smola and B. Schölkopf, "A tutorial on support vector regression", Statistics
    and Computing 14, 2004.

    C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
    TIST 2(3), 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import SVR
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5])
    >>> reg = SVR(kernel="linear", C=10.0, epsilon=0.1).fit(X, y)
    >>> np.round(reg.coef_, 1)
    array([[ 1. , -1.9,  0.5]])
    >>> reg.support_.size
    5
    """)

    # the public path stays bisvm.estimators.svm (pickles and model files name it)
    __module__ = "bisvm.estimators.svm"

    _persist_attrs = ("_kernel", "_gamma", "_alpha", "_train_idx")

    _parameter_constraints: dict = {
        **BaseSMO._parameter_constraints,
        "C": [positive(allow_inf=True)],
        "epsilon": [non_negative()],
        "warm_start": "no_validation",  # read as a truth value
    }

    def __init__(
        self,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        tol=1e-3,
        C=1.0,
        epsilon=0.1,
        shrinking=True,
        cache_size=200,
        max_iter=-1,
        selection="second_order",
        warm_start=False,
        verbose=False,
        n_jobs=None,
    ):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.selection = selection
        self.warm_start = warm_start
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _problem(self, X, y, w):
        return epsilon_svr_dual(X, y, self._solve_kernel, float(self.C), float(self.epsilon),
                                weights=w)

    @method_doc(
        "Fit the regressor.",
        "X_train_gram_sparse",
        "y_values",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Finite weights multiplying ``C`` per sample. Samples of weight zero or below
            are dropped, as in LIBSVM.""",
        returns=r"""SVR
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y = self._validate_X_train(X, y, y_numeric=True)
        sw = self._sample_weight(sample_weight, X)
        idx = positive_weight_rows(sw)
        self._setup_kernel(X)
        problem = self._problem(self._sub_problem_data(X, idx), y[idx], sw[idx])
        warm = getattr(self, "_alpha", None) if getattr(self, "warm_start", False) else None
        alpha0 = None
        if warm is not None and getattr(self, "_train_idx", None) is not None:
            if np.array_equal(self._train_idx, idx):
                alpha0 = warm_alpha(warm, problem.upper)
        res = self._solve(problem, alpha0)
        self._alpha, self._train_idx = res.dual_coef, idx
        n = idx.size
        self._store(X, idx, res.dual_coef[:n] - res.dual_coef[n:], res)
        self._release_solver_view()
        return self

    def _store(self, X, idx, beta, res):
        """Fitted attributes of a one-machine model with coefficients ``beta``."""
        sv = beta != 0
        self.support_ = idx[sv].astype(np.int32)
        self.intercept_ = np.array([res.intercept])
        self.n_support_ = np.array([self.support_.size], dtype=np.int32)
        self.n_iter_ = int(res.n_iter)
        self.fit_status_ = int(not res.converged)
        self.support_vectors_ = self._support_vectors(X, self.support_)
        self._store_dual(beta[sv][None, :])

    @method_doc(
        "Predict the target of each sample.",
        "X_kernel_sparse",
        returns="values",
        extended=r""":math:`f(x) = \sum_i \beta_i k(x_i, x) + b` with :math:`\beta` = ``dual_coef_``
        and :math:`b` = ``intercept_``.""")
    def predict(self, X):
        K = self._kernel_to_sv(X)
        return K @ self._dual_dense()[0] + self.intercept_[0]

    @property
    def coef_(self):
        """Primal weights (linear kernel only)."""
        check_is_fitted(self)
        return self._coef_from_dual(self._dual_dense())
