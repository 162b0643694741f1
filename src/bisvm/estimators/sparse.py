r"""Sparse linear SVMs with the smoothed elastic-net penalty of seed-000 §1.5.

* :class:`ElasticNetSVC` -- the lower level alone, with given L1 weights;
* :class:`BilevelSVC` -- the same model whose L1 weights (one scalar, one per feature or
  one per group) are *learned* by BiSVM L-BFGS on a validation criterion (seed-000
  Algorithm 8), with importance scores (§2.9-2.10).

Both minimise, for labels :math:`y_i \in \{-1, +1\}` and :math:`w = (w_{1..d}, b)`,

.. math::
    E(w) = \frac1n\sum_i \mu\log\big(1 + e^{(1 - y_i(x_i^\top w_{1..d} + b))/\mu}\big)
         + \frac{\alpha}{2}\|w\|^2 + \sum_k \beta_k\big(\sqrt{\gamma^2 + \|w_k\|^2}-\gamma\big)

(the bias is penalised like the thesis unless ``penalize_intercept=False``). Multiclass
targets are handled one-vs-rest (beyond the thesis). Features should be on one scale
(standardise them first, e.g. in a :class:`~sklearn.pipeline.Pipeline`): the penalty and
the importance scores compare coefficients across features.
"""

from __future__ import annotations

import time
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..names import CRITERIA
from ..progress import OuterIterations
from ..selection.bilevel import (
    LOWER_SOLVERS,
    THESIS_GRID,
    BilevelObjective,
    LowerLevel,
    grid_search,
    make_hyper_model,
    mean_second_moment,
    resolve_solver,
)
from ..selection.bilevel_fit import feature_groups, fit_binary, stack_binary_fits
from ..selection.lower_level import add_bias_column
from ..selection.one_se import SCALAR_RULES, validation_splits
from ..selection.staged import StagedSettings, weighted_folds
from ..selection.threads import gram_threads, limit_blas
from ._constraints import AUTO_OR_BOOL, BLAS_THREADS, TOL, non_negative, positive
from ._sample_weight import checked_sample_weight
from ._verbose import print_solve

__all__ = ["ElasticNetSVC", "BilevelSVC"]


class _SmoothedSVMBase(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
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


class ElasticNetSVC(_SmoothedSVMBase):
    r"""Smoothed elastic-net (L2L1) SVM with fixed L1 weights (seed-000 (4.21)/(4.28)/(4.37)).

    Parameters
    ----------
    penalty_weight : float or array-like
        The thesis's β: a scalar for every coefficient, one weight per coefficient
        (``groups=None``; length ``n_features`` + 1 with the intercept last when it is
        penalised) or one per group (``groups`` given; plus one for the intercept).
    groups : dict of str -> list of int, or list of lists, optional
        Feature groups of the group penalty :math:`\sum_k\beta_k\bar H_\gamma(w_k)`.
    l2_penalty : float, default=0.01
        The thesis's α.
    hinge_smoothing : float, default=0.25
        The thesis's μ (softplus hinge :math:`\mu\log(1+e^{u/\mu})`).
    l1_smoothing : float, default=0.01
        The thesis's γ (Pseudo-Huber :math:`\sqrt{\gamma^2+w^2}-\gamma`). ``0`` is the
        exact weighted (group) L1 penalty :math:`\sum_k\beta_k\|w_k\|_2` (beyond the
        thesis), solved by a working-set proximal Newton method with exact zeros
        (:func:`~bisvm.solvers.primal.exact_l1.solve_exact_l1`; ``solver_`` is then
        ``"exact_l1"`` and ``tol`` bounds the KKT violation).
    penalize_intercept : bool, default=True
    solver : {"auto", "newton", "woodbury", "cg", "lbfgs"}, default="auto"
        Lower-level solver: Newton on the dense d × d Hessian (``"newton"``), Newton
        with the step solved in the n × n sample space (``"woodbury"``, d > n),
        truncated Newton with preconditioned CG on Hessian-vector products (``"cg"``,
        large sparse data), the thesis's L-BFGS, or ``"auto"``: chosen by the shape and
        sparsity of X (:func:`bisvm.selection.bilevel.resolve_solver`); the choice is in
        ``solver_``.
    tol : float, default=1e-8
        Gradient-norm tolerance.
    max_iter : int, default=500
    verbose : int, default=0
        Print each solver iteration and a summary per binary problem to stdout.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    classes_ : ndarray
    n_iter_ : ndarray of int
    convergence_ : list of ConvergenceRecord
        Objective, gradient norm and seconds per solver iteration, one record per binary
        problem.
    solver_ : str
        The lower-level solver used (``solver``, or what ``"auto"`` chose).

    X may be dense or scipy.sparse (CSR/CSC); sparse input is never densified.
    """

    _parameter_constraints: dict = {
        **_SmoothedSVMBase._lower_constraints,
        # a scalar or one weight per penalty group: checked against the data in fit
        "penalty_weight": "no_validation",
        "l2_penalty": [positive()],
        # the lower-level solver's own check: a finite number > 0, True counted as 1
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, penalty_weight=0.1, *, groups=None, l2_penalty=0.01,
                 hinge_smoothing=0.25, l1_smoothing=0.01, penalize_intercept=True,
                 solver="auto", tol=1e-8, max_iter=500, verbose=0):
        self.penalty_weight = penalty_weight
        self.groups = groups
        self.l2_penalty = l2_penalty
        self.hinge_smoothing = hinge_smoothing
        self.l1_smoothing = l1_smoothing
        self.penalize_intercept = penalize_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        r"""Fit the model; returns self.

        ``sample_weight`` (non-negative, one per row) weighs the loss terms,
        :math:`\frac{1}{\sum_i s_i}\sum_i s_i\ell_i`: an integer weight k fits the same
        model as k copies of the row, and a zero weight the model without it."""
        self._validate_params()
        lower = replace(self._lower_level(), max_iter=int(self.max_iter))
        X, y = self._validate_xy(X, y)
        sw = checked_sample_weight(sample_weight, y, self.classes_)
        d = X.shape[1]
        groups = feature_groups(self.groups)
        hyper = make_hyper_model("group" if groups is not None else "vector", d,
                                 groups=groups, penalize_intercept=self.penalize_intercept)
        beta = np.asarray(self.penalty_weight, dtype=float)
        if beta.ndim == 0:
            beta = np.full(hyper.n_hyper, float(beta))
        if beta.shape != (hyper.n_hyper,):
            raise ValueError(
                f"penalty_weight must be a scalar or have {hyper.n_hyper} entries "
                f"({', '.join(hyper.names)}), got shape {beta.shape}"
            )
        if not np.all(np.isfinite(beta)) or np.any(beta < 0):
            raise ValueError("penalty_weight must be finite and non-negative")
        Xa = add_bias_column(X)
        self.solver_ = "exact_l1" if lower.exact else resolve_solver(self.solver, Xa)
        lower = replace(lower, solver=lower.solver if lower.exact else self.solver_)
        coefs, iters, records = [], [], []
        for yb, k in self._binary_targets(y):
            P = lower.problem(Xa, yb, hyper.penalty_groups, hyper.weights(beta),
                              sample_weight=sw)
            r = lower.solve(P, tol=self.tol)
            if self.verbose:  # binary: class 1 against class 0, else one against the rest
                rest = self.classes_[0] if self.classes_.size == 2 else "rest"
                print_solve(f"ElasticNetSVC ({self.solver_}) {self.classes_[k]} vs {rest}", r)
            coefs.append(r.coef)
            iters.append(r.n_iter)
            records.append(r.record)
        self._store(coefs)
        self.n_iter_ = np.array(iters)
        self.convergence_ = records
        return self


class BilevelSVC(_SmoothedSVMBase):
    r"""Sparse SVM whose L1 weights are learned by bilevel optimisation (seed-000).

    The lower level is the smoothed elastic-net SVM of :class:`ElasticNetSVC`; the upper
    level chooses its L1 weights β to minimise a validation criterion, by BiSVM L-BFGS
    (seed-000 Algorithm 8) on log-scale coordinates with the KKT hypergradient
    :math:`\nabla_\beta J = (\nabla_{w\beta}E)^\top\hat\lambda`,
    :math:`\hat\lambda = -[\nabla^2_{ww}E]^{-1}\nabla_w J` (§2.5-2.7). The final model is
    refitted on all rows at the learned β (``refit=True``).

    Parameters
    ----------
    model : {"scalar", "vector", "group"}, default="vector"
        One β for all coefficients, one per coefficient (bias included), or one per group.
    groups : dict of str -> list of int, or list of lists, optional
        Feature groups for ``model="group"``; features in no group form singleton groups.
    l2_penalty : float or "auto", default="auto"
        The thesis's α (fixed ridge weight). ``"auto"`` is
        :math:`0.01\,\overline{x^2}`, the thesis's 0.01 times the mean column second
        moment :math:`\frac{1}{nd}\sum_{ij}x_{ij}^2` of the training X: exactly 0.01 on
        standardised features, and the same relative strength against the loss curvature
        on data that is not (sparse columns scaled by their maximum, for instance, whose
        second moments are ~ the density: a fixed 0.01 would dominate the loss and
        shrink every coefficient).
    hinge_smoothing : float, default=0.25
        The thesis's μ of the softplus hinge.
    l1_smoothing : float, default=0.01
        The thesis's γ of the Pseudo-Huber L1 smoothing. ``0`` is the exact L1 mode
        (beyond the thesis): the lower level is the exact weighted (group) L1 SVM solved
        on its support by a working-set method, the selected features are exactly zero
        elsewhere, and the hypergradient is the implicit one on the support (as
        sparse-ho and sparho do for the Lasso); ``solver_`` is ``"exact_l1"``.
    criterion : {"scaled_margin", "margin", "holdout", "kfold", "logistic", \
"holdout_logistic", "holdout_margin", "holdout_scaled_margin"}, default="scaled_margin"
        Upper-level criterion. ``"holdout"`` is the thesis's
        :math:`J = \frac{1}{2m}\|V\hat w - \eta\|^2` on one stratified validation split of
        ``validation_fraction`` of the rows; ``"kfold"`` is the same averaged over ``cv``
        stratified folds; ``"margin"`` is the halved mean squared hinge of the validation
        margins :math:`\frac{1}{2m}\sum\max(0, 1-\eta_i v_i^\top\hat w)^2` over ``cv``
        folds; ``"scaled_margin"`` the same after the best rescaling of the outputs,
        :math:`\min_{s\ge0}\frac{1}{2m}\sum\max(0, 1-s\,\eta_i v_i^\top\hat w)^2`
        (:class:`~bisvm.selection.criteria.ScaledSquaredHingeValidation`), over ``cv``
        folds; ``"logistic"`` the mean logistic loss of the margins over ``cv`` folds;
        ``holdout_*`` the same on one split.

        ``"scaled_margin"`` is the default for the reasons in the Notes.
    validation_fraction : float, default=0.2
        Share of rows held out by ``criterion="holdout"`` (the thesis's 80/20).
    cv : int, default=5
        Number of folds of the k-fold criteria.
    cv_repeats : int, default=1
        The scalar stage's k-fold criterion averaged over this many independent
        stratified partitions (the refinement keeps one); the 1se rules then count each
        repeat's rows apart, which understates their standard error.
    init_penalty : float or "auto", default="auto"
        Starting β of the scalar BiSVM run. ``"auto"``: the best of 7 log-spaced β over
        the four decades below the zero-model end of the outer range, each fold's
        solve warm-started along them (:func:`~bisvm.selection.search.scalar_scan`; the
        criterion is not convex in :math:`\log\beta`, and a fixed start ends in the
        local minimum nearest to it). A float starts there without the scan (the
        thesis's 0.01, for reproducing it).
    warm_init : bool, default=True
        For the vector and group models, start from the learned scalar model (on all
        rows' folds, :mod:`bisvm.selection.staged`) instead of ``init_penalty`` (with
        ``"auto"``: :math:`\min(0.01, 0.1\beta_{\rm zero})`, a tenth of glmnet's
        :math:`\lambda_{\max}`). ``False`` reproduces the thesis.
    penalize_intercept : bool, default=True
        Penalise the bias as the thesis does (needed to reproduce it).
    solver : {"auto", "newton", "woodbury", "cg", "lbfgs"}, default="auto"
        Lower-level solver, as in :class:`ElasticNetSVC`: ``"auto"`` picks dense Newton
        for d <= n, the sample-space (Woodbury) Newton for d > n and truncated
        Newton-CG for large sparse data (``benchmarks/bench_wide.py``); the choice is
        in ``solver_``. Every hypergradient uses the same Newton system for its one
        adjoint solve per fold.
    max_iter : int, default=100
        Cap on outer (BiSVM) iterations.
    tol : float, default=1e-4
        Outer stopping tolerance on the norm of the log-scale hypergradient.
    support_threshold : float, default=0.01
        The thesis's ε: coefficients with :math:`|w_j| \le \varepsilon` are not selected
        (for the group model: groups with :math:`\|w_k\|_2 \le \varepsilon`).
    learn_l2_penalty : bool, default=False
        Learn the ridge weight α as one more hyperparameter, by the same hypergradient
        (:math:`\partial\nabla_w E/\partial\alpha = w`), starting from ``l2_penalty``
        (beyond the thesis, which fixes α = 0.01).
    refit : bool, default=True
        Refit on all rows at the learned β (else keep the first fold's solution).
    early_stopping : bool or "auto", default="auto"
        For the vector and group models with a k-fold criterion (k >= 3): hold out a
        stratified 1/k of the rows, refine β from the scalar model by k-fold
        cross-validation on the others, and watch the criterion of the model trained on
        those others on the held-out rows: stop when it has not improved for 5 outer
        iterations and keep the iterate ``refinement_rule`` picks (beyond seed-000).
        ``"auto"`` is on whenever it applies (every class with at least 2k rows);
        ``False`` refines on all rows to the tolerance. The scalar stage always learns
        on all rows' folds.
    scalar_rule : {"min", "1se", "1se_error"}, default="min"
        The scalar β (the model for ``model="scalar"``, the start of the refinement
        otherwise): the criterion's minimum; the largest β within one standard error
        of it along the path (``"1se"``, :func:`~bisvm.selection.one_se.one_se_scalar`,
        glmnet's ``lambda.1se``); or the largest β whose pooled validation
        misclassification error is within one standard error of the path's smallest
        (``"1se_error"``, :func:`~bisvm.selection.one_se.one_se_error_scalar`).
    refinement_rule : {"min", "1se"}, default="1se"
        Which iterate of the vector or group refinement is kept when early stopping is
        on (:class:`~bisvm.selection.early_stopping.HeldOutMonitor`): the smallest
        held-out criterion (``"min"``), or the best among those whose held-out gain over
        the start (the scalar model) exceeds one standard error of the paired per-row
        differences, else the start (``"1se"``). A rejected refinement gives exactly the
        scalar model (``refined_`` is False).
    balanced_criterion : bool or "auto", default=False
        Weigh the validation rows by the inverse of their class count, so that the
        criterion is the mean over the two classes of their mean terms
        (:func:`~bisvm.selection.criteria.balanced_weights`); ``"auto"`` when the
        minority share is below :data:`~bisvm.selection.staged.UNBALANCED_SHARE`.
    blas_threads : "auto", int or None, default="auto"
        BLAS threads during the fit (:func:`~bisvm.selection.threads.gram_threads`):
        ``"auto"`` is one thread when the Gram product :math:`n\,d\min(n, d)` is at
        most 1e9 flops (the many small factorisations of the folds do not amortise a
        thread team), else the library default; an int limits to that many; None
        leaves the pools alone.
    verbose : int, default=0
        Show the outer iterations on stderr: a progress bar with the criterion J and the
        nonzero count when stderr is a terminal, else one line per iteration (criterion,
        held-out criterion, nonzero count, lower-level solves, seconds)
        (:mod:`bisvm.progress`).
    random_state : int, RandomState or None
        Seeds the validation split / folds.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    penalty_weights_ : ndarray of shape (n_weights,) or (n_classes, n_weights)
        Learned β.
    penalty_weight_names_ : tuple of str
    validation_score_ : float or ndarray
        Upper-level criterion at the learned β.
    balanced_criterion_ : bool or ndarray of bool
        Whether the criterion was class-balanced.
    l2_penalty_ : float or ndarray
        α used by the final model (learned when ``learn_l2_penalty=True``).
    importance_ : ndarray
        The thesis's scores (seed-000 §2.9-2.10) per penalty group (bias included),
        summing to 1: the learned weights β masked by the support, normalised.
    importance_names_ : tuple of str
    feature_importances_ : ndarray of shape (n_features,)
        Share of each selected feature in :math:`\sum_j|\hat w_j|` (intercept excluded;
        averaged over classes when multiclass). Why not the thesis's score: at the lower
        optimum :math:`\hat\beta_j \approx |\partial_j L(\hat w)| - \alpha|\hat w_j|` is
        the price a feature pays, not its weight in the decision; a feature the criterion
        wants unshrunk gets a small β and a small thesis score however large its
        coefficient (in the thesis's own Iris example petal width, with
        :math:`\hat w = 0.02`, outranks petal length, :math:`\hat w = 0.85`). On
        standardised features the coefficient share is the usual linear-model importance;
        both are reported.
    support_ : ndarray of bool, shape (n_features,)
        Selected features (:math:`|\hat w_j| > \varepsilon`, by group for the group model).
    history_ : tuple of HistoryEntry, or list of them per class
        β, J, nonzero count, cumulated lower-level solves / iterations, seconds per outer
        iteration.
    n_iter_ : int or ndarray
        Outer (BiSVM) iterations, the scalar warm-start stage included; a start point
        that already meets the tolerance counts as one.
    lower_level_solves_, lower_level_iterations_ : int
        Totals over the whole fit (line-search trials and the scalar warm start included).
    solver_ : str
        The lower-level solver used (``solver``, or what ``"auto"`` chose).
    refined_ : bool, None, or list of them per class
        Whether the vector or group refinement replaced the scalar model (None: no
        held-out judgement, e.g. ``model="scalar"``).
    blas_threads_ : int or None
        The BLAS thread limit applied (None: none).

    X may be dense or scipy.sparse (CSR/CSC); sparse input is never densified (the
    folds are row slices of the CSR matrix).

    Notes
    -----
    The defaults were chosen on the held-out panel of ``benchmarks/bench_panel.py`` (12
    real tables, 3 synthetic problems, 5 split seeds; test rows never used in tuning;
    ``benchmarks/results/bench_panel.md``): "gap" is the test accuracy minus the best of
    CV-tuned L2 and L1 ``LinearSVC`` and SVM-RFE on each table, in points (mean, worst).

    * ``criterion="scaled_margin"``: the thesis's J penalises confidently *correct*
      outputs and over-selects sparsity; with ``"margin"`` a misclassified row still
      costs :math:`(1+|v^\top w|)^2/2`, so shrunken outputs look better, and the L1
      weights shrink outputs only by dropping features: scalar model −1.86 / −11.5
      (Mroz, majority-rate predictions). The scale-free criterion judges the direction
      of :math:`\hat w`, not its length: −0.04 / −1.0.
    * The staged fit (scan, scalar stage on all rows, ``refinement_rule="1se"``):
      vector model −0.04 / −1.0 (bfi), 13.3 features kept on average (L1-CV 11.8);
      with ``"min"``: −0.08 / −1.5, every informative feature kept on 8 of 15
      synthetic seeds instead of 10. On bench_wide's 200 × 2,000 problem (3 seeds) the
      scan took the test accuracy from 85.5 % to 86.5 % (L1 logistic CV: 86.7 %).
    * ``scalar_rule="min"``: ``"1se"`` keeps 8.0 features (scalar model) but loses
      −1.57 / −8.6 (Mroz); ``"1se_error"`` 6.2 features, −0.86 / −2.3 (Mroz).
    * ``balanced_criterion=False``: ``"auto"`` lifts the vector model's balanced
      accuracy on the unbalanced tables from 1.1 points below the best baseline's to
      1.3 above, but costs accuracy: −1.57 / −10.2 (Affairs).
    * ``cv_repeats=1``: 3 repeats cut the vector model's features to 11.8 (L1-CV
      11.8) at −0.11 / −1.2 (Affairs), but kept every informative feature on 8 of 15
      synthetic seeds, for about twice the time.
    """

    _parameter_constraints: dict = {
        **_SmoothedSVMBase._lower_constraints,
        "model": [StrOptions({"scalar", "vector", "group"})],
        "l2_penalty": [StrOptions({"auto"}), positive()],
        "criterion": [StrOptions(set(CRITERIA))],
        # validation_fraction (holdout criteria), cv and cv_repeats (k-fold criteria) are
        # checked by validation_splits, only when the criterion uses them
        "validation_fraction": "no_validation",
        "cv": "no_validation",
        "cv_repeats": "no_validation",
        "init_penalty": [StrOptions({"auto"}), positive()],
        "warm_init": "no_validation",  # read as bool(warm_init)
        "tol": TOL,
        "support_threshold": [positive()],
        "learn_l2_penalty": "no_validation",  # read as bool(learn_l2_penalty)
        "refit": "no_validation",  # read as bool(refit)
        "early_stopping": AUTO_OR_BOOL,
        "scalar_rule": [StrOptions(set(SCALAR_RULES))],
        "refinement_rule": [StrOptions({"min", "1se"})],
        "balanced_criterion": AUTO_OR_BOOL,
        "blas_threads": BLAS_THREADS,
        "random_state": ["random_state"],
    }

    def __init__(self, model="vector", groups=None, l2_penalty="auto", hinge_smoothing=0.25,
                 l1_smoothing=0.01, criterion="scaled_margin", validation_fraction=0.2, cv=5,
                 init_penalty="auto", warm_init=True, penalize_intercept=True,
                 solver="auto", max_iter=100, tol=1e-4, support_threshold=0.01,
                 learn_l2_penalty=False, refit=True, early_stopping="auto",
                 scalar_rule="min", refinement_rule="1se", balanced_criterion=False,
                 blas_threads="auto", cv_repeats=1, verbose=0, random_state=None):
        self.model = model
        self.groups = groups
        self.l2_penalty = l2_penalty
        self.hinge_smoothing = hinge_smoothing
        self.l1_smoothing = l1_smoothing
        self.criterion = criterion
        self.validation_fraction = validation_fraction
        self.cv = cv
        self.init_penalty = init_penalty
        self.warm_init = warm_init
        self.penalize_intercept = penalize_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.support_threshold = support_threshold
        self.learn_l2_penalty = learn_l2_penalty
        self.refit = refit
        self.early_stopping = early_stopping
        self.scalar_rule = scalar_rule
        self.refinement_rule = refinement_rule
        self.balanced_criterion = balanced_criterion
        self.blas_threads = blas_threads
        self.cv_repeats = cv_repeats
        self.verbose = verbose
        self.random_state = random_state

    def _splits(self, X, y, split):
        return validation_splits(y, split, validation_fraction=self.validation_fraction,
                                 cv=self.cv, random_state=self.random_state)

    def fit(self, X, y, sample_weight=None):
        """Learn the L1 weights and the SVM; returns self.

        ``sample_weight`` (non-negative, one per row) weighs each row's term in the
        lower-level loss of every fold and of the refit (normalised as in
        :class:`ElasticNetSVC`) and in the validation criterion's mean (weighted class
        totals in the balanced one). The folds are drawn from the rows as they are: a
        weight k is k times the say in every loss, not k copies that a split could send
        to different folds. Zero-weight rows matter only by their place in the splits."""
        t0 = time.perf_counter()
        self._validate_params()
        lower = self._lower_level()
        X, y = self._validate_xy(X, y)
        self.blas_threads_ = gram_threads(*X.shape, threads=self.blas_threads)
        sw = checked_sample_weight(sample_weight, y, self.classes_)
        if self.l2_penalty == "auto":
            lower = replace(lower, l2_penalty=0.01 * mean_second_moment(X, sw))
        d = X.shape[1]
        names_in = getattr(self, "feature_names_in_", None)
        feature_names = None if names_in is None else [str(c) for c in names_in]
        hyper = make_hyper_model(self.model, d, groups=feature_groups(self.groups),
                                 penalize_intercept=self.penalize_intercept,
                                 feature_names=feature_names,
                                 learn_l2=bool(self.learn_l2_penalty))
        split, loss = CRITERIA[self.criterion].split, CRITERIA[self.criterion].loss
        Xa = add_bias_column(X)
        self.solver_ = "exact_l1" if lower.exact else resolve_solver(self.solver, Xa)
        lower = replace(lower, solver=lower.solver if lower.exact else self.solver_)
        settings = self._staged_settings(split, loss)
        # progress on stderr when verbose: a bar (J, nonzero count) on a terminal, one
        # line per outer iteration otherwise
        progress = (lambda stage: OuterIterations(f"BiSVM {stage}", mode="auto")) \
            if self.verbose else None
        with limit_blas(self.blas_threads_):
            per_class = [fit_binary(Xa, yb, lower, hyper, settings, sw, progress=progress)
                         for yb, _ in self._binary_targets(y)]
        self._store([f.coef for f in per_class])
        s = stack_binary_fits(per_class, hyper, lower.l2_penalty)
        self.penalty_weights_ = s.penalty_weights
        self.penalty_weight_names_ = hyper.names[: hyper.n_hyper - int(hyper.learn_l2)]
        self.l2_penalty_ = s.l2_penalty
        self.validation_score_ = s.validation_score
        self.balanced_criterion_ = s.balanced
        self.refined_ = s.refined
        self.importance_ = s.importance
        self.importance_names_ = hyper.group_names
        self.n_iter_ = s.n_iter
        self.history_ = s.history
        self.feature_importances_ = s.feature_importances
        self.support_ = s.feature_importances > 0
        self.lower_level_solves_ = s.lower_level_solves
        self.lower_level_iterations_ = s.lower_level_iterations
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _staged_settings(self, split, loss):
        early = True if self.early_stopping == "auto" else bool(self.early_stopping)
        return StagedSettings(
            model=self.model, split=split, loss=loss, cv=self.cv,
            validation_fraction=self.validation_fraction, random_state=self.random_state,
            init_penalty=self.init_penalty, warm_init=bool(self.warm_init),
            max_iter=int(self.max_iter), tol=float(self.tol),
            support_threshold=self.support_threshold, early_stopping=early,
            scalar_rule=self.scalar_rule, refinement_rule=self.refinement_rule,
            balanced=self.balanced_criterion, refit=bool(self.refit),
            cv_repeats=self.cv_repeats)

    def scalar_grid(self, X, y, grid=THESIS_GRID, progress=None, sample_weight=None):
        """The thesis's baseline: grid search over a scalar β on the *same* validation
        split or folds that :meth:`fit` uses (same ``random_state``), warm-started along
        the grid (seed-000 §4.3). Binary targets only.

        ``progress`` is called with 1 after each grid point; ``sample_weight`` weighs
        the rows as in :meth:`fit`.

        Returns
        -------
        GridResult
            Values, regularisation path, best β, lower-level solves and seconds.
        """
        self._validate_params()
        lower = self._lower_level()
        X, y = validate_data(self, X, y, dtype=np.float64, reset=False,
                             accept_sparse=("csr", "csc"))
        if self.classes_.size != 2:
            raise ValueError("scalar_grid needs a binary target")
        sw = checked_sample_weight(sample_weight, y, self.classes_)
        if self.l2_penalty == "auto":
            lower = replace(lower, l2_penalty=0.01 * mean_second_moment(X, sw))
        yb = np.where(y == self.classes_[-1], 1.0, -1.0)
        split, loss = CRITERIA[self.criterion].split, CRITERIA[self.criterion].loss
        Xa = add_bias_column(X)
        folds = weighted_folds(Xa, yb, sw, self._splits(Xa, yb, split))
        scal = make_hyper_model("scalar", X.shape[1], penalize_intercept=self.penalize_intercept)
        return grid_search(BilevelObjective(folds, lower, scal, loss=loss), grid,
                           progress=progress)

    def get_support(self, indices=False):
        """Mask (or indices) of the selected features, as scikit-learn's selectors."""
        check_is_fitted(self, "support_")
        return np.flatnonzero(self.support_) if indices else self.support_.copy()
