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
from bisvm.estimators._smo_base import BaseSMO, positive_weight_rows
from bisvm.estimators.svm import SVC, SVR
from bisvm.solvers.dual.nu_smo import nu_svc_dual, nu_svc_scaling, nu_svr_dual, one_class_dual

__all__ = ["NuSVC", "NuSVR", "OneClassSVM"]


class NuSVC(SVC):
    r"""ν-support vector classifier (LIBSVM's ``nu_svc``), trained by SMO.

    Per pair of classes, :math:`\min \tfrac12\alpha^\top Q\alpha` s.t.
    :math:`y^\top\alpha = 0`, :math:`e^\top\alpha = \nu\sum_i C_i`,
    :math:`0 \le \alpha_i \le C_i` with :math:`C_i` = class weight × sample weight (1 by
    default); the machine is the C-SVC one with :math:`C = 1/r` (Chang & Lin 2001).

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of margin errors, lower bound on the fraction of
        support vectors. Infeasible when :math:`\nu\sum_i C_i / 2` exceeds a class's total
        :math:`\sum C_i` (``ValueError``).
    kernel, degree, gamma, coef0, shrinking, probability, tol, cache_size, max_iter,
    decision_function_shape, break_ties, random_state, selection, verbose, n_jobs
        As in :class:`~bisvm.SVC`.
    class_weight : dict, "balanced" or None
        Multiplies each sample's bound :math:`C_i`, like ``sample_weight``. (LIBSVM's
        ν-SVC ignores class weights, so scikit-learn's ``NuSVC`` accepts the parameter
        without effect; here it acts.)

    Attributes
    ----------
    classes_, support_, support_vectors_, n_support_, dual_coef_, intercept_, coef_,
    n_iter_, probA_, probB_, fit_status_, shape_fit_
        As in :class:`sklearn.svm.NuSVC`.
    """

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
    r"""ν-support vector regression (LIBSVM's ``nu_svr``), trained by SMO.

    Minimises :math:`\tfrac12\lVert w\rVert^2 + C\sum_i w_i\big(\nu\varepsilon +
    \max(0, |y_i - f(x_i)| - \varepsilon)\big)` over :math:`w, b` and the tube
    half-width :math:`\varepsilon \ge 0` (Schölkopf et al. 2000 in LIBSVM's scaling,
    :math:`w_i` the sample weights), through the dual of :mod:`bisvm.solvers.dual.nu_smo`.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of points outside the tube, lower bound on the
        fraction of support vectors.
    C : float > 0, default=1.0
    kernel, degree, gamma, coef0, shrinking, tol, cache_size, max_iter, selection, verbose, n_jobs
        As in :class:`~bisvm.SVR`.

    Attributes
    ----------
    support_, support_vectors_, dual_coef_, intercept_, n_support_, coef_, n_iter_,
    fit_status_, shape_fit_
        As in :class:`sklearn.svm.NuSVR`.
    epsilon_ : float
        The tube half-width found, :math:`-r` of the solver.
    """

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
    r"""One-class SVM for novelty detection (Schölkopf et al. 2001; LIBSVM's
    ``one_class``), trained by SMO.

    Separates the training data from the origin in feature space with maximal margin:
    :math:`\min \tfrac12\alpha^\top K\alpha` s.t. :math:`e^\top\alpha = \nu\sum_i C_i`,
    :math:`0 \le \alpha_i \le C_i` (:math:`C_i` = sample weight, 1 by default).
    :math:`f(x) = \sum_i\alpha_ik(x_i, x) - \rho` is positive inside the estimated
    support; :meth:`predict` returns +1 there (inliers) and -1 outside.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        Upper bound on the fraction of training outliers, lower bound on the fraction of
        support vectors.
    kernel, degree, gamma, coef0, tol, shrinking, cache_size, max_iter, selection, verbose, n_jobs
        As in :class:`~bisvm.SVC`.

    Attributes
    ----------
    support_, support_vectors_, dual_coef_, intercept_, n_support_, coef_, n_iter_,
    fit_status_, shape_fit_, offset_
        As in :class:`sklearn.svm.OneClassSVM` (``offset_ = -intercept_``;
        ``score_samples(X) = decision_function(X) + offset_``).
    """

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

    def fit(self, X, y=None, sample_weight=None):
        """Estimate the support of the distribution of ``X`` (``y`` is ignored).
        ``sample_weight`` multiplies each sample's bound; samples of weight <= 0 are
        dropped."""
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

    def decision_function(self, X):
        """:math:`f(x) = \\sum_i` ``dual_coef_`` :math:`_i k(x_i, x)` + ``intercept_``:
        positive for inliers, negative for outliers."""
        K = self._kernel_to_sv(X)
        return K @ self._dual_dense()[0] + self.intercept_[0]

    def score_samples(self, X):
        """Unshifted scores :math:`\\sum_i` ``dual_coef_`` :math:`_i k(x_i, x)`."""
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 for inliers (:math:`f(x) > 0`; LIBSVM's sign rule), -1 for outliers."""
        return np.where(self.decision_function(X) > 0, 1, -1)

    @property
    def coef_(self):
        """Primal weights (linear kernel only)."""
        check_is_fitted(self)
        return self._coef_from_dual(self._dual_dense())
