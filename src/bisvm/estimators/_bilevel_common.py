"""The part of a bilevel fit that :class:`~bisvm.estimators.sparse.BilevelSVC` and
:class:`~bisvm.estimators.bilevel_svr.BilevelSVR` share: the splits, the BLAS threads,
the hyperparameter model, the staged settings, and the fitted attributes of the stacked
per-problem fits. Written once, so that a CV splitter, ``groups``, ``n_jobs``, feature
groups and progress behave the same for both."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ..progress import OuterIterations
from ..selection.bilevel import make_hyper_model
from ..selection.bilevel_fit import feature_groups, stack_binary_fits
from ..selection.splits import check_cv_param, training_size
from ..selection.staged import StagedSettings
from ..selection.threads import gram_threads

__all__ = ["BilevelFitMixin"]


class BilevelFitMixin:
    """Shared steps of the bilevel estimators' ``fit`` (see the module docstring)."""

    def _checked_groups(self, groups, n):
        """Sample groups for a group splitter, as an array of shape (n,)."""
        if groups is None:
            return None
        groups = np.asarray(groups)
        if groups.shape != (n,):
            raise ValueError(f"groups must have shape ({n},), got {groups.shape}")
        return groups

    def _prepare(self, X, split_labels, split, groups, learn_l2):
        """The validated ``cv``, the BLAS threads, ``model_`` and the hyperparameter
        model of a fit on ``X``; returns (cv, feature groups, hyper model, progress)."""
        n, d = X.shape
        # an iterable of splits is read once, here; an int is checked where it is used
        cv = check_cv_param(self.cv, n, repeats=getattr(self, "cv_repeats", 1)) \
            if split == "kfold" or not isinstance(self.cv, Integral) else self.cv
        self.blas_threads_ = gram_threads(n, d, threads=self.blas_threads)
        if self.n_jobs is not None and self.blas_threads == "auto":
            # n_jobs cores in all: one BLAS thread per fold worker, for every n_jobs (a
            # threaded BLAS rounds its sums by its thread count)
            self.blas_threads_ = 1
        names_in = getattr(self, "feature_names_in_", None)
        fgroups = feature_groups(self._feature_groups())
        self.model_ = self._resolve_model(split_labels, d, split, fgroups, groups, cv)
        hyper = make_hyper_model(self.model_, d, groups=fgroups,
                                 penalize_intercept=self._penalize_intercept(),
                                 feature_names=None if names_in is None else
                                 [str(c) for c in names_in], learn_l2=learn_l2)
        # progress on stderr when verbose: a bar (J, nonzero count) on a terminal, one
        # line per outer iteration otherwise
        progress = (lambda stage: OuterIterations(f"BiSVM {stage}", mode="auto")) \
            if self.verbose else None
        return cv, fgroups, hyper, progress

    def _resolve_model(self, y, d, split, fgroups, groups, cv):
        """``model="auto"``: the group model when feature groups are given, else the
        vector model when the features are at most the training rows of the smallest
        training fold, else the scalar model."""
        if self.model != "auto":
            return self.model
        if fgroups is not None:
            return "group"
        n_train = training_size(y, split, validation_fraction=self.validation_fraction,
                                cv=cv, groups=groups)
        return "vector" if d <= n_train else "scalar"

    def _staged_settings(self, split, loss, cv, task="classification"):
        """The :class:`~bisvm.selection.staged.StagedSettings` of the parameters."""
        early = True if self.early_stopping == "auto" else bool(self.early_stopping)
        regression = task == "regression"
        return StagedSettings(
            model=self.model_, split=split, loss=loss, cv=cv,
            validation_fraction=self.validation_fraction, random_state=self.random_state,
            init_penalty=self.init_penalty, warm_init=bool(self.warm_init),
            max_iter=int(self.max_iter), tol=float(self.tol),
            support_threshold=self.support_threshold, early_stopping=early,
            scalar_rule=self.scalar_rule, refinement_rule=self.refinement_rule,
            balanced=False if regression else self.balanced_criterion,
            refit="support" if self.refit == "support" else bool(self.refit),
            cv_repeats=getattr(self, "cv_repeats", 1), null_test=self.null_test,
            threshold="zero" if regression else self.threshold,
            standardize=bool(self.standardize), n_jobs=self.n_jobs, task=task,
            # the regression scan stops two points past its minimum (the unvisited
            # small weights are the densest solves); the classifier walks the whole
            # path, as its held-out panel was measured
            scan_patience=2 if regression else None,
            # the regression refinement stops three held-out iterations past its best
            # (the regression panel's chosen iterates are the same with three as with
            # five on all but a few fits, at about a tenth fewer solves); the classifier
            # keeps the five its held-out panel was measured with
            refine_patience=3 if regression else 5,
            # the regression scan only locates the start of the scalar stage, which
            # re-solves there: its solves stop at 1e-3 (the same chosen start on the
            # panel's tables); the classifier's at the 1e-5 it was measured with
            scan_tol=1e-3 if regression else 1e-5)

    def _set_stacked(self, per_class, hyper, l2s):
        """The fitted attributes common to every bilevel estimator, from the scored fit
        of each problem (:func:`~bisvm.selection.bilevel_fit.stack_binary_fits`)."""
        s = stack_binary_fits(per_class, hyper, l2s[0] if len(l2s) == 1 else np.array(l2s))
        self.penalty_weights_ = s.penalty_weights
        self.penalty_weight_names_ = hyper.names[: hyper.n_hyper - int(hyper.learn_l2)]
        self.l2_penalty_ = s.l2_penalty
        self.validation_score_ = s.validation_score
        self.refined_ = s.refined
        self.importance_ = s.importance
        self.importance_names_ = hyper.group_names
        self.n_iter_ = s.n_iter
        self.history_ = s.history
        self.feature_importances_ = s.feature_importances
        self.support_ = s.feature_importances > 0
        self.selection_frequency_ = s.selection_frequency
        self.lower_level_solves_ = s.lower_level_solves
        self.lower_level_iterations_ = s.lower_level_iterations
        self.null_model_ = per_class[0].null is not None if len(per_class) == 1 else \
            np.array([f.null is not None for f in per_class])
        return s
