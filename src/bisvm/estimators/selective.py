r"""Selective-ridge linear and logistic regression and their leave-one-out model
selection along the μ path (Angulo Yauri 2020).

Training criterion (sums over objects, optional unpenalised intercept):

.. math::
    \min_{a, b}\ \gamma\sum_i \mathrm{pen}_\mu(a_i) + \sum_t q(y_t, x_t^\top a + b),
    \qquad \mathrm{pen}_\mu(a) = \begin{cases}2\mu|a| & |a|\le\mu\\ \mu^2 + a^2 & |a|>\mu\end{cases}

with :math:`q = (y - z)^2` or :math:`\ln(1 + e^{-yz})`. ``selectivity`` is the thesis's
μ (in the units of the coefficients: every non-zero coefficient is either a *kink*
coefficient in :math:`(0, \mu]` or a ridge coefficient beyond μ), ``ridge`` its γ. Solved
by the dual Newton method of :mod:`bisvm.solvers.selective`.

Reference: B. F. Angulo Yauri, "A method of differential cross-validation for choosing
the complexity level of generalized linear dependence models" (in Russian), master's
thesis, MIPT, Moscow, 2020.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..progress import Progress, mode_for_verbose
from ..selection.loo import CRITERIA, SELECTION_RULES, criterion_path, select_index
from ..selection.threads import blas_threads, limit_blas
from ..solvers.selective import SelectiveProblem, solve_dual_newton, solve_selectivity_path
from ._constraints import (
    BLAS_THREADS,
    MAX_ITER,
    TOL,
    NumberInterval,
    int_at_least,
    non_negative,
    positive,
)
from ._docs import method_doc
from ._selective_docs import CV_DOC, FIXED_DOC, fill_docstring
from ._verbose import print_solve

__all__ = [
    "EmptyModelWarning",
    "SelectiveRegression",
    "SelectiveLogisticRegression",
    "SelectiveRegressionCV",
    "SelectiveLogisticRegressionCV",
]


class EmptyModelWarning(UserWarning):
    """A selection criterion chose the model without any feature."""


class _SelectiveMixin:
    """Shared fitting, prediction and validation of the four estimators."""

    _loss = "squared"

    def _prepare(self, X, y):
        if self._loss == "squared":
            X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
            return X, np.asarray(y, float)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        enc = LabelEncoder().fit(y)
        self.classes_ = enc.classes_
        if self.classes_.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs 2 classes in y; got only one class "
                f"{self.classes_.tolist()}")
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise ValueError(
                "Only binary classification is supported. The type of the target is "
                f"{y_type}: {type(self).__name__} needs exactly 2 classes, got "
                f"{self.classes_.size}.")
        return X, np.where(enc.transform(y) == 1, 1.0, -1.0)

    def _store(self, problem, res):
        self.coef_ = res.coef.copy()
        self.intercept_ = float(res.intercept)
        self.support_ = self.coef_ != 0
        self.dual_coef_ = res.dual_coef.copy()
        self.n_iter_ = int(res.n_iter)
        self.duality_gap_ = float(res.certificate_value)

    def _decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_


class _ClassifierMethods:
    @method_doc(
        r"""Evaluate the linear score :math:`z = x^\top a + b`.""",
        "X",
        returns=r"""ndarray of shape (n_samples,)
            The scores, positive for ``classes_[1]``.""")
    def decision_function(self, X):
        return self._decision(X)

    @method_doc(
        r"""Predict the class of the sign of :math:`x^\top a + b`.""",
        "X",
        returns=r"""ndarray of shape (n_samples,)
            ``classes_[1]`` where the score is positive, else ``classes_[0]``.""",
        extended="The threshold is 0, where the logistic model's probability is one half.")
    def predict(self, X):
        d = self._decision(X)
        return self.classes_[(d > 0).astype(int)]

    @method_doc(
        r"""Estimate the class probabilities :math:`(1 - \sigma(z), \sigma(z))`.""",
        "X",
        returns=r"""ndarray of shape (n_samples, 2)
            Probabilities, columns in the order of ``classes_``.""")
    def predict_proba(self, X):
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    @method_doc(
        "Estimate the logarithm of the class probabilities.",
        "X",
        returns=r"""ndarray of shape (n_samples, 2)
            The logarithm of :meth:`predict_proba`, floored at :math:`\log 10^{-300}`.""")
    def predict_log_proba(self, X):
        return np.log(np.clip(self.predict_proba(X), 1e-300, None))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class _RegressorMethods:
    @method_doc(
        r"""Predict :math:`x^\top a + b`.""",
        "X",
        returns="values")
    def predict(self, X):
        return self._decision(X)


class _SelectiveFixed(_SelectiveMixin, BaseEstimator):
    _parameter_constraints: dict = {
        "selectivity": [non_negative()],
        "ridge": [positive()],
        "fit_intercept": "no_validation",  # read as bool(fit_intercept)
        "tol": TOL,
        "max_iter": MAX_ITER,
        "verbose": "no_validation",  # read as a truth value
    }

    def __init__(self, selectivity=0.1, ridge=1.0, *, fit_intercept=True, tol=1e-10,
                 max_iter=500, verbose=0):
        self.selectivity = selectivity
        self.ridge = ridge
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    @method_doc(
        "Fit by the dual Newton method, warm-started along a short μ path.",
        "X_train",
        "y_selective",
        returns=r"""SelectiveRegression or SelectiveLogisticRegression
            The fitted estimator.""",
        extended=r"""The path starts from the empty model at :math:`\mu_{max}`: a cold start far
        below :math:`\mu_{max}` can ask for more kink constraints than objects.""")
    def fit(self, X, y):
        self._validate_params()
        mu, ridge = float(self.selectivity), float(self.ridge)
        X, y = self._prepare(X, y)
        prob = SelectiveProblem(X, y, self._loss, ridge, mu, None, bool(self.fit_intercept))
        if mu > 0:
            res = solve_selectivity_path(X, y, self._loss, ridge, selectivities=[mu],
                                         fit_intercept=bool(self.fit_intercept),
                                         tol=self.tol, max_iter=self.max_iter).results[0]
        else:  # ridge: no kinks, the cold start is the Newton method on a smooth dual
            res = solve_dual_newton(prob, tol=self.tol, max_iter=self.max_iter)
        if self.verbose:
            print_solve(f"{type(self).__name__} (dual Newton) selectivity {mu:.6g}", res,
                        iter_objective="dual objective", iter_certificate=False,
                        certificate="duality gap")
        self._store(prob, res)
        return self


class SelectiveRegression(_RegressorMethods, RegressorMixin, _SelectiveFixed):
    __doc__ = fill_docstring(FIXED_DOC,
        summary="Selective-ridge linear regression: exact zeros and ridge shrinkage.",
        loss=r"the squared error :math:`(y - z)^2`",
        classes="", cv_name="bisvm.SelectiveRegressionCV", name="SelectiveRegression",
        example="""\
    >>> y = 3.0 * X[:, 0] - 2.0 * X[:, 1] + 0.1 * rng.normal(size=60)
    >>> reg = SelectiveRegression(selectivity=2.0, ridge=1.0).fit(X, y)
    >>> np.flatnonzero(reg.support_)
    array([0, 1])
    >>> np.round(reg.coef_[:2], 1)
    array([ 2.9, -2. ])
""")

    _loss = "squared"


class SelectiveLogisticRegression(_ClassifierMethods, ClassifierMixin, _SelectiveFixed):
    __doc__ = fill_docstring(FIXED_DOC,
        summary="Selective-ridge logistic regression of a two-class target.",
        loss=r"the logistic loss :math:`\ln(1 + e^{-yz})` (the second class coded +1)",
        classes="""\
    classes_ : ndarray of shape (2,)
        The class labels; the second is coded +1.
""", cv_name="bisvm.SelectiveLogisticRegressionCV", name="SelectiveLogisticRegression",
        example="""\
    >>> y = np.where(X[:, 0] - X[:, 1] > 0, "yes", "no")
    >>> clf = SelectiveLogisticRegression(selectivity=1.0).fit(X, y)
    >>> clf.predict(X[:3])
    array(['yes', 'no', 'yes'], dtype='<U3')
    >>> bool(clf.support_[0] and clf.support_[1])
    True
""")

    _loss = "logistic"


class _SelectiveCV(_SelectiveMixin, BaseEstimator):
    _parameter_constraints: dict = {
        "criterion": [StrOptions(set(CRITERIA))],
        "selection_rule": [StrOptions(set(SELECTION_RULES))],
        "scoring": [StrOptions({"loss", "error"})],
        "n_mu": [int_at_least(1)],
        "ridge": [positive()],
        "min_ratio": [NumberInterval(Real, 0, 1, closed="right")],
        "fit_intercept": "no_validation",  # read as bool(fit_intercept)
        "n_splits": [int_at_least(2)],
        # used by criterion="kfold" only, whose splitter checks it
        "random_state": "no_validation",
        "tol": TOL,
        "max_iter": MAX_ITER,
        "blas_threads": BLAS_THREADS,
        "verbose": "no_validation",  # read as a truth value
    }

    def __init__(self, criterion="alo", *, selection_rule="min", scoring="loss", n_mu=50,
                 ridge=1.0, min_ratio=1e-8, fit_intercept=True, n_splits=5, random_state=0,
                 tol=1e-10, max_iter=500, blas_threads="auto", verbose=0):
        self.criterion = criterion
        self.selection_rule = selection_rule
        self.scoring = scoring
        self.n_mu = n_mu
        self.ridge = ridge
        self.min_ratio = min_ratio
        self.fit_intercept = fit_intercept
        self.n_splits = n_splits
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.blas_threads = blas_threads
        self.verbose = verbose

    @method_doc(
        "Fit the μ path, score every μ by ``criterion``, keep the one ``selection_rule`` picks.",
        "X_train",
        "y_selective",
        returns=r"""SelectiveRegressionCV or SelectiveLogisticRegressionCV
            The fitted estimator.""")
    def fit(self, X, y):
        self._validate_params()
        if self.scoring == "error" and (self._loss != "logistic" or self.criterion not in (
                "alo", "loo", "kfold")):
            raise ValueError("scoring='error' needs a classifier and held-out outputs "
                             "(criterion 'alo', 'loo' or 'kfold')")
        n_mu, ratio, n_splits = int(self.n_mu), float(self.min_ratio), int(self.n_splits)
        ridge = float(self.ridge)
        X, y = self._prepare(X, y)
        if self.criterion == "kfold" and n_splits > X.shape[0]:
            raise ValueError(f"n_splits={n_splits} exceeds the number of samples {X.shape[0]}")
        steps = n_mu + (n_splits if self.criterion == "kfold" else 0)
        self.blas_threads_ = blas_threads(*X.shape, threads=self.blas_threads)
        with limit_blas(self.blas_threads_), Progress(
                f"{type(self).__name__} μ path ({self.criterion})", steps,
                mode=mode_for_verbose(self.verbose), unit="step") as bar:
            cp = criterion_path(X, y, self._loss, ridge, criteria=(self.criterion,),
                                n_mu=n_mu, min_ratio=ratio,
                                fit_intercept=bool(self.fit_intercept), n_splits=n_splits,
                                random_state=self.random_state, tol=self.tol,
                                max_iter=self.max_iter, scoring=self.scoring,
                                progress=bar)
            crit = cp.values[self.criterion]
            se = cp.standard_errors[self.criterion]
            best = select_index(crit, se, self.selection_rule)
            self.selectivity_path_ = cp.selectivities
            self.criterion_path_ = crit
            self.criterion_se_path_ = se
            self.n_active_path_ = cp.n_active
            self.selectivity_max_ = cp.mu_max
            self.selectivity_ = float(cp.selectivities[best])
            self.selection_index_ = best
            self._warn_if_empty(best)
            prob = SelectiveProblem(X, y, self._loss, ridge, self.selectivity_, None,
                                    bool(self.fit_intercept))
            # the path's warm-started fit at selectivity_ is the solution; re-solving from
            # it confirms it in one Newton step
            r = cp.results[best]
            res = solve_dual_newton(prob, alpha0=r.dual_coef, partition0=r.partition,
                                    tol=self.tol, max_iter=self.max_iter)
        self._store(prob, res)
        return self

    def _warn_if_empty(self, best):
        """An empty chosen model is usually the criterion's artefact (DiffLOO's trivial
        zero), not the data's verdict: say so."""
        if self.n_active_path_[best] != 0:
            return
        if self.criterion in ("diffloo", "diffloo_exact"):
            why = (f"criterion={self.criterion!r} is exactly 0 at the empty model, so its "
                   "minimum is always there; use criterion='alo' "
                   "(approximate leave-one-out, the same cost)")
        else:
            why = (f"by criterion={self.criterion!r} (selection_rule="
                   f"{self.selection_rule!r}) no feature predicts better than the "
                   "intercept alone; criterion='alo' with selection_rule='min' keeps more")
        warnings.warn(
            f"{type(self).__name__} selected the empty model (no feature, selectivity "
            f"{self.selectivity_:.4g} of max {self.selectivity_max_:.4g}): {why}. "
            "criterion_path_ holds the criterion along the path.",
            EmptyModelWarning, stacklevel=3)


class SelectiveRegressionCV(_RegressorMethods, RegressorMixin, _SelectiveCV):
    __doc__ = fill_docstring(
        CV_DOC,
        summary="Selective-ridge linear regression with μ chosen by leave-one-out.",
        fixed="SelectiveRegression", classes="", name="SelectiveRegressionCV",
        example="""\
    >>> y = 3.0 * X[:, 0] - 2.0 * X[:, 1] + 0.1 * rng.normal(size=60)
    >>> reg = SelectiveRegressionCV(n_mu=20).fit(X, y)
    >>> bool(reg.support_[0] and reg.support_[1])
    True
    >>> reg.criterion_path_.shape
    (20,)
""")

    _loss = "squared"


class SelectiveLogisticRegressionCV(_ClassifierMethods, ClassifierMixin, _SelectiveCV):
    __doc__ = fill_docstring(
        CV_DOC,
        summary="Selective-ridge logistic regression with μ chosen by leave-one-out.",
        fixed="SelectiveLogisticRegression", name="SelectiveLogisticRegressionCV",
        classes="""\
    classes_ : ndarray of shape (2,)
        The class labels; the second is coded +1.
""",
        example="""\
    >>> y = np.where(X[:, 0] - X[:, 1] > 0, "yes", "no")
    >>> clf = SelectiveLogisticRegressionCV(n_mu=20, selection_rule="1se",
    ...                                     scoring="error").fit(X, y)
    >>> bool(clf.support_[0] and clf.support_[1])
    True
    >>> bool(clf.score(X, y) > 0.9)
    True
""")

    _loss = "logistic"
