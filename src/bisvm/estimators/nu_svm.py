r"""ν-parametrised kernel SVMs trained by SMO: :class:`NuSVC`, :class:`NuSVR` and the
one-class SVM :class:`OneClassSVM` (LIBSVM's formulations; the problems and their
sources are in :mod:`bisvm.solvers.dual.nu_smo`).

ν replaces C as the parameter users set because it means something: for ν-SVC it is an
upper bound on the fraction of margin errors and a lower bound on the fraction of
support vectors (Schölkopf et al. 2000, Proposition 5); for the one-class SVM the same
bounds hold for the fraction of training points outside the estimated support; for ν-SVR
it bounds the fraction of points outside the ε-tube, whose width is then learned.

They share the SMO engine with :class:`~bisvm.SVC`/:class:`~bisvm.SVR`; only the problem
builder changes (and the working-set selection, inside the solver, for the two problems
with two equality constraints). The fitted attributes follow scikit-learn's
``NuSVC``/``NuSVR``/``OneClassSVM``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import OutlierMixin
from sklearn.utils.validation import check_is_fitted

from bisvm.estimators._constraints import NU, positive
from bisvm.estimators._docs import fill_parameters, method_doc
from bisvm.estimators._smo_base import BaseSMO, positive_weight_rows
from bisvm.estimators.svm import SVC, SVR
from bisvm.solvers.dual.nu_smo import nu_svc_dual, nu_svc_scaling, nu_svr_dual, one_class_dual

__all__ = ["NuSVC", "NuSVR", "OneClassSVM"]


class NuSVC(SVC):
    __doc__ = fill_parameters(r"""Nu-support vector classifier trained by SMO.

    Per pair of classes, :math:`\min_\alpha \tfrac12\alpha^\top Q\alpha` subject to
    :math:`y^\top\alpha = 0`, :math:`e^\top\alpha = \nu\sum_i C_i` and
    :math:`0 \le \alpha_i \le C_i`, with :math:`Q_{ij} = y_iy_jk(x_i, x_j)` and
    :math:`C_i` the class weight times the sample weight (1 by default). ν replaces C
    because it means something: it is an upper bound on the fraction of margin errors
    and a lower bound on the fraction of support vectors (Schölkopf et al. 2000). The
    machine is the C-SVC one with :math:`C = 1/r`, :math:`r` the multiplier of the
    second equality (Chang & Lin 2001), and the fitted attributes follow
    :class:`sklearn.svm.NuSVC`.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of margin errors, lower bound on the fraction of
        support vectors. Infeasible when :math:`\nu\sum_i C_i / 2` exceeds a class's total
        :math:`\sum C_i` (``ValueError``).
    {{kernel}}
    {{degree}}
    {{gamma}}
    {{coef0}}
    {{shrinking}}
    probability : bool, default=False
        Fit Platt sigmoids on 5-fold cross-validated decision values, for
        :meth:`predict_proba`; :meth:`predict` then returns their arg-max.
    {{tol}}
    {{cache_size}}
    class_weight : dict, "balanced" or None, default=None
        Multiplies each sample's bound :math:`C_i`, like ``sample_weight``. LIBSVM's
        ν-SVC ignores class weights, so scikit-learn's ``NuSVC`` accepts the parameter
        without effect; here it acts.
    {{max_iter}}
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        Shape of :meth:`decision_function` for more than two classes: the pairwise values
        (``"ovo"``) or scikit-learn's vote-plus-confidence aggregate (``"ovr"``).
    break_ties : bool, default=False
        With ``decision_function_shape="ovr"`` and more than two classes, break voting
        ties by the aggregate decision value instead of the lowest class index.
    random_state : int, RandomState or None, default=None
        Seeds the folds of the probability calibration.
    {{selection}}
    {{verbose}}
    {{n_jobs}}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors.
    n_support_ : ndarray of shape (n_classes,)
        Support vectors per class.
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
        The dual coefficients in LIBSVM's layout, scaled to the C-SVC machine.
    intercept_ : ndarray of shape (n_pairs,)
        The intercept of each pairwise machine.
    coef_ : ndarray of shape (n_pairs, n_features)
        Primal weights, for the linear kernel only.
    n_iter_ : ndarray of shape (n_pairs,)
        SMO iterations per machine.
    probA_, probB_ : ndarray of shape (n_pairs,)
        Platt's sigmoid parameters (empty when ``probability=False``).
    fit_status_ : int
        0 when every machine converged, 1 otherwise.
    shape_fit_ : tuple of int
        Shape of the training ``X``.

    References
    ----------
    B. Schölkopf, A. J. Smola, R. C. Williamson and P. L. Bartlett, "New support vector
    algorithms", Neural Computation 12, 2000.

    C.-C. Chang and C.-J. Lin, "Training ν-support vector classifiers: theory and
    algorithms", Neural Computation 13, 2001.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from bisvm import NuSVC
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = NuSVC(nu=0.3).fit(X, y)
    >>> clf.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> bool(clf.support_.size >= 0.3 * len(y))
    True
    """)

    _parameter_constraints: dict = {
        **{k: v for k, v in SVC._parameter_constraints.items()
           if k not in ("C", "loss", "multiclass", "warm_start")},
        "nu": NU,
    }

    def __init__(
        self,
        nu=0.5,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        shrinking=True,
        probability=False,
        tol=1e-3,
        cache_size=200,
        class_weight=None,
        max_iter=-1,
        decision_function_shape="ovr",
        break_ties=False,
        random_state=None,
        selection="second_order",
        verbose=False,
        n_jobs=None,
    ):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.selection = selection
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _check_combinations(self):
        """ν-SVC has no refused combination (no ``C``, ``loss`` or ``multiclass``)."""

    def _binary_problem(self, X, idx, yb, w):
        return nu_svc_dual(self._sub_problem_data(X, idx), yb, self._solve_kernel, float(self.nu),
                           weights=w)

    def _scale(self, res):
        return nu_svc_scaling(res, float(self.tol))


class NuSVR(SVR):
    __doc__ = fill_parameters(r"""Nu-support vector regression trained by SMO.

    Minimises :math:`\tfrac12\lVert w\rVert^2 + C\sum_i s_i\big(\nu\varepsilon +
    \max(0, |y_i - f(x_i)| - \varepsilon)\big)` over :math:`w, b` and the tube
    half-width :math:`\varepsilon \ge 0` (Schölkopf et al. 2000, in LIBSVM's scaling;
    :math:`s_i` the sample weights), through its dual
    (:func:`~bisvm.solvers.dual.nu_smo.nu_svr_dual`). ν sets the share of points outside
    the tube instead of its width: it is an upper bound on that fraction and a lower
    bound on the fraction of support vectors.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of points outside the tube, lower bound on the
        fraction of support vectors.
    C : float > 0, default=1.0
        Cost of a residual outside the tube.
    {{kernel}}
    {{degree}}
    {{gamma}}
    {{coef0}}
    {{shrinking}}
    {{tol}}
    {{cache_size}}
    {{max_iter}}
    {{selection}}
    {{verbose}}
    {{n_jobs}}

    Attributes
    ----------
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors.
    dual_coef_ : ndarray of shape (1, n_SV)
        :math:`\alpha_i - \alpha_i^*` of the support vectors.
    intercept_ : ndarray of shape (1,)
        The intercept.
    n_support_ : ndarray of shape (1,)
        Number of support vectors.
    {{one_machine_attributes}}
    epsilon_ : float
        The tube half-width found, :math:`-r` of the solver.

    References
    ----------
    B. Schölkopf, A. J. Smola, R. C. Williamson and P. L. Bartlett, "New support vector
    algorithms", Neural Computation 12, 2000.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import NuSVR
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(40, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5])
    >>> reg = NuSVR(nu=0.5, C=10.0, kernel="linear").fit(X, y)
    >>> np.round(reg.coef_, 1)
    array([[ 1. , -2. ,  0.5]])
    """)

    _parameter_constraints: dict = {
        **BaseSMO._parameter_constraints,
        "nu": NU,
        "C": [positive()],
    }

    def __init__(
        self,
        nu=0.5,
        C=1.0,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        shrinking=True,
        tol=1e-3,
        cache_size=200,
        max_iter=-1,
        selection="second_order",
        verbose=False,
        n_jobs=None,
    ):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.selection = selection
        self.verbose = verbose
        self.n_jobs = n_jobs

    def _problem(self, X, y, w):
        return nu_svr_dual(X, y, self._solve_kernel, float(self.C), float(self.nu), weights=w)

    def _store(self, X, idx, beta, res):
        super()._store(X, idx, beta, res)
        self.epsilon_ = float(-res.stats["nu_multiplier"])


class OneClassSVM(OutlierMixin, BaseSMO):
    __doc__ = fill_parameters(r"""One-class SVM for novelty detection, trained by SMO.

    Separates the training data from the origin in feature space with maximal margin
    (Schölkopf et al. 2001): :math:`\min_\alpha \tfrac12\alpha^\top K\alpha` subject to
    :math:`e^\top\alpha = \nu\sum_i C_i` and :math:`0 \le \alpha_i \le C_i`
    (:math:`C_i` the sample weight, 1 by default). The function
    :math:`f(x) = \sum_i\alpha_ik(x_i, x) - \rho` is positive inside the estimated
    support; :meth:`predict` returns +1 there (inliers) and -1 outside. ν bounds the
    fraction of training points left outside from above, and the fraction of support
    vectors from below. The fitted attributes follow :class:`sklearn.svm.OneClassSVM`.

    Parameters
    ----------
    {{kernel}}
    {{degree}}
    {{gamma}}
    {{coef0}}
    {{tol}}
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of training outliers, lower bound on the fraction of
        support vectors.
    {{shrinking}}
    {{cache_size}}
    {{max_iter}}
    {{selection}}
    {{verbose}}
    {{n_jobs}}

    Attributes
    ----------
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors.
    dual_coef_ : ndarray of shape (1, n_SV)
        The :math:`\alpha_i` of the support vectors.
    intercept_ : ndarray of shape (1,)
        :math:`-\rho`.
    n_support_ : ndarray of shape (1,)
        Number of support vectors.
    {{one_machine_attributes}}
    offset_ : ndarray of shape (1,)
        ``-intercept_``, so that ``score_samples(X) = decision_function(X) + offset_``.

    References
    ----------
    B. Schölkopf, J. C. Platt, J. Shawe-Taylor, A. J. Smola and R. C. Williamson,
    "Estimating the support of a high-dimensional distribution", Neural Computation 13,
    2001.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import OneClassSVM
    >>> X = np.random.RandomState(0).normal(size=(100, 2))
    >>> detector = OneClassSVM(nu=0.1, gamma=0.5).fit(X)
    >>> detector.predict([[0.0, 0.0], [4.0, 4.0]])
    array([ 1, -1])
    >>> bool((detector.predict(X) == -1).mean() <= 0.15)
    True
    """)

    # private fitted state that model files must carry (bisvm.persistence)
    _persist_attrs = ("_kernel", "_gamma")

    _parameter_constraints: dict = {**BaseSMO._parameter_constraints, "nu": NU}

    def __init__(
        self,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        tol=1e-3,
        nu=0.5,
        shrinking=True,
        cache_size=200,
        max_iter=-1,
        selection="second_order",
        verbose=False,
        n_jobs=None,
    ):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.selection = selection
        self.verbose = verbose
        self.n_jobs = n_jobs

    @method_doc(
        "Estimate the support of the distribution of ``X``.",
        r"""X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples, or their Gram matrix when ``kernel="precomputed"``.""",
        r"""y : None
            Ignored; present for the scikit-learn API.""",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Multiplies each sample's bound; samples of weight zero or below are dropped.""",
        returns=r"""OneClassSVM
            The fitted estimator.""")
    def fit(self, X, y=None, sample_weight=None):
        self._validate_params()
        X, _ = self._validate_X_train(X)
        sw = self._sample_weight(sample_weight, X)
        idx = positive_weight_rows(sw)
        self._setup_kernel(X)
        res = self._solve(one_class_dual(self._sub_problem_data(X, idx), self._solve_kernel,
                                         float(self.nu), weights=sw[idx]), None)
        self._release_solver_view()
        sv = res.dual_coef > 0
        self.support_ = idx[sv].astype(np.int32)
        self.intercept_ = np.array([res.intercept])
        self.offset_ = -self.intercept_
        self.n_support_ = np.array([self.support_.size], dtype=np.int32)
        self.n_iter_ = int(res.n_iter)
        self.fit_status_ = int(not res.converged)
        self.support_vectors_ = self._support_vectors(X, self.support_)
        self._store_dual(res.dual_coef[sv][None, :])
        return self

    @method_doc(
        "Evaluate the signed distance to the estimated support.",
        "X_kernel_sparse",
        returns=r"""ndarray of shape (n_samples,)
            :math:`f(x) = \sum_i \alpha_i k(x_i, x) - \rho`: positive for inliers,
            negative for outliers.""")
    def decision_function(self, X):
        K = self._kernel_to_sv(X)
        return K @ self._dual_dense()[0] + self.intercept_[0]

    @method_doc(
        "Evaluate the unshifted score of each sample.",
        "X_kernel_sparse",
        returns=r"""ndarray of shape (n_samples,)
            :math:`\sum_i \alpha_i k(x_i, x)`, the decision function plus ``offset_``.""")
    def score_samples(self, X):
        return self.decision_function(X) + self.offset_

    @method_doc(
        "Tell inliers from outliers.",
        "X_kernel_sparse",
        returns=r"""ndarray of shape (n_samples,)
            +1 where :math:`f(x) > 0` (LIBSVM's sign rule), -1 elsewhere.""")
    def predict(self, X):
        return np.where(self.decision_function(X) > 0, 1, -1)

    @property
    def coef_(self):
        """Primal weights (linear kernel only)."""
        check_is_fitted(self)
        return self._coef_from_dual(self._dual_dense())
