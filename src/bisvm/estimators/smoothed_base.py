"""What :class:`~bisvm.estimators.sparse.ElasticNetSVC` and
:class:`~bisvm.estimators.bilevel_svc.BilevelSVC` (the smoothed elastic-net SVM and its
bilevel-tuned form) share: label handling, one-vs-rest, row and class weights, the
standardisation of the penalised features, feature groups, and the selector interface.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from numbers import Integral

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils import compute_class_weight
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..data.standardize import ColumnStandardizer
from ..selection.bilevel import LOWER_SOLVERS, LowerLevel
from ..solvers.primal.lower_level import add_bias_column, mean_second_moment
from ._constraints import non_negative, positive
from ._docs import method_doc

__all__ = ["SmoothedSVMBase", "CalibratedOvRMixin", "SmoothedPenaltyMixin"]


class SmoothedPenaltyMixin(SelectorMixin):
    """What every smoothed elastic-net estimator shares, classifier or regressor: the
    standardisation of the penalised features, the intercept rule, ``l2_penalty="auto"``,
    feature groups, and the selector interface.

    As a scikit-learn selector (``SelectorMixin``), ``transform`` keeps the columns of
    ``support_``; ``get_feature_names_out`` names them and ``set_output`` chooses the
    container of ``transform``'s output.
    """

    #: Read by scikit-learn's ``SelectFromModel``: an L1-penalised model, whose default
    #: threshold is then 1e-5 on ``|coef_|`` (the L1 models' default) instead of the mean.
    penalty = "l1"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    #: the parameters of the lower level, shared by the two estimators
    _lower_constraints: dict = {
        "hinge_smoothing": [positive()],
        "l1_smoothing": [non_negative()],  # 0: the exact L1 mode
        "penalize_intercept": [StrOptions({"auto"}), "boolean"],
        "standardize": ["boolean"],
        "solver": [StrOptions(set(LOWER_SOLVERS))],
        # scikit-learn's Interval: an integer >= 1, True counted as 1 (as before)
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        # checked against the columns where the hyperparameter model is built
        "feature_groups": "no_validation",
        "groups": "no_validation",
        "verbose": "no_validation",  # read as a truth value
    }

    #: parameters a model file written before they existed is read with
    #: (:mod:`bisvm.persistence`): such a model was fitted on unstandardised features
    _legacy_params = {"standardize": False}

    def _penalize_intercept(self):
        """``penalize_intercept`` resolved: ``"auto"`` penalises the bias only when the
        features are not standardised (glmnet never penalises it)."""
        if self.penalize_intercept == "auto":
            return not self.standardize
        if self.penalize_intercept and self.standardize:
            raise ValueError(
                "penalize_intercept=True needs standardize=False: the standardised problem "
                "leaves the intercept unpenalised, so that centring the features changes "
                "nothing (pass standardize=False to penalise it, as the thesis does)")
        return bool(self.penalize_intercept)

    def _lower_level(self):
        """The :class:`~bisvm.selection.bilevel.LowerLevel` of the parameters (validated
        by ``_validate_params``); ``l2_penalty="auto"`` (BilevelSVC) is 0.01 here and
        resolved on the data by the caller."""
        auto_l2 = isinstance(self.l2_penalty, str)
        return LowerLevel(
            l2_penalty=0.01 if auto_l2 else float(self.l2_penalty),
            hinge_smoothing=float(self.hinge_smoothing), l1_smoothing=float(self.l1_smoothing),
            penalize_intercept=self._penalize_intercept(), solver=self.solver)

    def _l2(self, lower, X, w):
        """``l2_penalty="auto"`` resolved on the rows being fitted: 0.01 in standardised
        units, else 0.01 times the mean column second moment (BilevelSVC's docstring)."""
        if self.l2_penalty != "auto" or self.standardize:
            return lower
        return replace(lower, l2_penalty=0.01 * mean_second_moment(X, w))

    def _design(self, X, sample_weight):
        """The penalised problem's design (bias column last) and its
        :class:`~bisvm.data.standardize.ColumnStandardizer` (None without
        ``standardize``)."""
        if not self.standardize:
            return add_bias_column(X), None
        cs = ColumnStandardizer.fit(X, sample_weight)
        return add_bias_column(cs.transform(X)), cs

    def _feature_groups(self):
        """``feature_groups`` (or the deprecated ``groups``) as
        :func:`~bisvm.selection.bilevel.make_hyper_model` takes them: column names of a
        DataFrame resolved to indices."""
        groups = self.feature_groups
        if self.groups is not None:
            if groups is not None:
                raise ValueError("pass feature groups as feature_groups only (groups is its "
                                 "deprecated name)")
            warnings.warn(
                f"{type(self).__name__}(groups=...) is deprecated and will be removed in the "
                "next release: pass feature_groups=... (groups is the name of the fit "
                "argument that carries sample groups to a splitter)",
                FutureWarning, stacklevel=3)
            groups = self.groups
        if groups is None:
            return None
        names = getattr(self, "feature_names_in_", None)
        lookup = {} if names is None else {str(c): j for j, c in enumerate(names)}
        items = groups.items() if isinstance(groups, dict) else \
            ((f"group{k}", g) for k, g in enumerate(groups))
        out = {}
        for name, members in items:
            if isinstance(members, (str, bytes)) or not hasattr(members, "__iter__"):
                raise ValueError(f"feature group {name!r} must list features, got {members!r}")
            idx = []
            for m in members:
                if isinstance(m, str):
                    if m not in lookup:
                        where = ("X has no column names (fit on a DataFrame to name them)"
                                 if names is None else "no column of X has that name")
                        raise ValueError(f"feature group {name!r}: column {m!r} is unknown: "
                                         f"{where}")
                    idx.append(lookup[m])
                else:
                    idx.append(m)
            out[str(name)] = idx
        return out if isinstance(groups, dict) else list(out.values())

    def _store(self, coefs, scalers=None):
        """``coef_`` and ``intercept_`` from the fitted augmented coefficients (bias last),
        in the original units of X when the problems were standardised."""
        W = np.array(coefs, dtype=float)
        coef, intercept = W[:, :-1].copy(), W[:, -1].copy()
        if scalers is not None:
            for k, cs in enumerate(scalers):
                if cs is not None:
                    coef[k], intercept[k] = cs.to_original(coef[k], intercept[k])
        self.coef_ = coef
        self.intercept_ = intercept

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_


class SmoothedSVMBase(SmoothedPenaltyMixin, LinearClassifierMixin, ClassifierMixin,
                      BaseEstimator):
    """Label handling, one-vs-rest and row and class weights of the smoothed SVM
    classifiers, over :class:`SmoothedPenaltyMixin`."""

    def _validate_xy(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False,
                             accept_sparse=("csr", "csc"))
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(
                f"the target has 1 class ({self.classes_[0]!r}); a classifier needs at "
                "least 2 classes"
            )
        return X, y

    def _binary_targets(self, y):
        """(+1/-1 targets, class index) per one-vs-rest problem; one problem if binary."""
        if self.classes_.size == 2:
            return [(np.where(y == self.classes_[1], 1.0, -1.0), 1)]
        return [(np.where(y == c, 1.0, -1.0), k) for k, c in enumerate(self.classes_)]

    def _row_weights(self, y, sample_weight, k):
        """Row weights of the binary problem of class ``k``: ``sample_weight`` times the
        class weights. Binary: every row gets its class's weight, so ``class_weight`` is the
        matching ``sample_weight``. One-vs-rest: LIBLINEAR's rule (Fan et al. 2008), the
        rows of class ``k`` get its weight and the rest keep theirs. None when neither is
        given."""
        cw = getattr(self, "class_weight", None)
        if cw is None:
            return sample_weight
        weights = compute_class_weight(cw, classes=self.classes_, y=y,
                                       sample_weight=sample_weight)
        idx = np.searchsorted(self.classes_, y)
        row = weights[idx] if self.classes_.size == 2 else np.where(idx == k, weights[k], 1.0)
        return row if sample_weight is None else row * sample_weight

    def _class_row_weights(self, y, sw):
        """The shared multiclass model's row weights: ``sample_weight``, or with
        ``class_weight`` one row of weights per class (LIBLINEAR's one-vs-rest rule)."""
        if self.class_weight is None:
            return sw
        return np.array([self._row_weights(y, sw, k) for k in range(self.classes_.size)])



class CalibratedOvRMixin:
    r"""Probabilities from the one-parameter Platt slopes ``probability_slope_``.

    Each binary problem's probability is :math:`\sigma(a_k f_k)`, with :math:`f_k` its
    decision value (threshold included) and :math:`a_k > 0` fitted on out-of-fold outputs
    (:func:`~bisvm.selection.decision.platt_slope`). A binary target gives
    :math:`(1 - \sigma(a f), \sigma(a f))`; one-vs-rest normalises the K probabilities to
    sum to one, as scikit-learn's one-vs-rest classifiers do. ``predict`` is their
    arg-max, and a multiclass ``decision_function`` returns :math:`a_k f_k`, the
    one-vs-rest outputs on the calibrated scale, whose arg-max is the same.
    """

    def _slopes(self):
        slopes = getattr(self, "probability_slope_", None)
        return np.ones(self.coef_.shape[0]) if slopes is None else np.atleast_1d(slopes)

    @method_doc(
        "Evaluate the decision function, on the calibrated scale for several classes.",
        "X_original",
        returns=r"""ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: :math:`x^\top w + b` (positive means ``classes_[1]``). Multiclass:
            the one-vs-rest values :math:`a_k(x^\top w_k + b_k)` on the calibrated
            scale, whose arg-max is the prediction.""")
    def decision_function(self, X):
        f = super().decision_function(X)
        return f if f.ndim == 1 else f * self._slopes()

    @method_doc(
        "Estimate the logarithm of the class probabilities, without underflow.",
        "X_original",
        returns="log_proba")
    def predict_log_proba(self, X):
        check_is_fitted(self, "probability_slope_")
        f = super().decision_function(X)
        a = self._slopes()
        if f.ndim == 1:
            z = a[0] * f
            return np.column_stack([-np.logaddexp(0.0, z), -np.logaddexp(0.0, -z)])
        logp = -np.logaddexp(0.0, -(f * a))
        return logp - logsumexp(logp, axis=1, keepdims=True)

    @method_doc(
        "Estimate the class probabilities from the Platt slopes.",
        "X_original",
        returns=r"""ndarray of shape (n_samples, n_classes)
            :math:`(1 - \sigma(af), \sigma(af))` for two classes, else the one-vs-rest
            sigmoids normalised to sum to one; columns in the order of ``classes_``.""")
    def predict_proba(self, X):
        return np.exp(self.predict_log_proba(X))

    @method_doc(
        "Predict the class of highest probability.",
        "X_original",
        returns=r"""ndarray of shape (n_samples,)
            The arg-max of :meth:`predict_proba` (the sign of the decision function
            for two classes).""")
    def predict(self, X):
        if getattr(self, "probability_slope_", None) is None:
            return super().predict(X)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
