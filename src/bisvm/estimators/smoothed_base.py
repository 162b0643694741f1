"""Label handling, one-vs-rest and fitted attributes shared by
:class:`~bisvm.estimators.sparse.ElasticNetSVC` and
:class:`~bisvm.estimators.bilevel_svc.BilevelSVC` (the smoothed elastic-net SVM of
seed-000 §1.5 and its bilevel-tuned form)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..selection.bilevel import LOWER_SOLVERS, LowerLevel
from ._constraints import non_negative, positive

__all__ = ["SmoothedSVMBase"]


class SmoothedSVMBase(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Label handling, one-vs-rest and fitted attributes shared by the two estimators."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    #: the parameters of the lower level, shared by the two estimators
    _lower_constraints: dict = {
        "hinge_smoothing": [positive()],
        "l1_smoothing": [non_negative()],  # 0: the exact L1 mode
        "penalize_intercept": "no_validation",  # read as bool(penalize_intercept)
        "solver": [StrOptions(set(LOWER_SOLVERS))],
        # scikit-learn's Interval: an integer >= 1, True counted as 1 (as before)
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        # checked against the columns where the hyperparameter model is built
        "groups": "no_validation",
        "verbose": "no_validation",  # read as a truth value
    }

    def _lower_level(self):
        """The :class:`~bisvm.selection.bilevel.LowerLevel` of the parameters (validated
        by ``_validate_params``); ``l2_penalty="auto"`` (BilevelSVC) is 0.01 here and
        resolved on the data by the caller."""
        auto_l2 = isinstance(self.l2_penalty, str)
        return LowerLevel(
            l2_penalty=0.01 if auto_l2 else float(self.l2_penalty),
            hinge_smoothing=float(self.hinge_smoothing), l1_smoothing=float(self.l1_smoothing),
            penalize_intercept=bool(self.penalize_intercept), solver=self.solver)

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

    def _store(self, coefs):
        W = np.array(coefs)
        self.coef_ = W[:, :-1].copy()
        self.intercept_ = W[:, -1].copy()
