r""":class:`BilevelSVC`: the smoothed elastic-net SVM of
:class:`~bisvm.estimators.sparse.ElasticNetSVC` whose L1 weights are learned by bilevel
optimisation (seed-000), re-exported by :mod:`bisvm.estimators.sparse`.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..names import CRITERIA
from ..progress import OuterIterations
from ..selection.bilevel import (
    THESIS_GRID,
    BilevelObjective,
    grid_search,
    make_hyper_model,
    mean_second_moment,
    resolve_solver,
)
from ..selection.bilevel_fit import feature_groups, fit_binary, stack_binary_fits
from ..selection.lower_level import add_bias_column
from ..selection.one_se import SCALAR_RULES, validation_splits
from ..selection.staged import THRESHOLDS, StagedSettings, weighted_folds
from ..selection.threads import gram_threads, limit_blas
from ._constraints import AUTO_OR_BOOL, BLAS_THREADS, TOL, positive
from ._sample_weight import checked_sample_weight
from .smoothed_base import SmoothedSVMBase

__all__ = ["BilevelSVC"]


class BilevelSVC(SmoothedSVMBase):
    r"""Sparse SVM whose L1 weights are learned by bilevel optimisation (seed-000).

    The lower level is the smoothed elastic-net SVM of
    :class:`~bisvm.estimators.sparse.ElasticNetSVC`; the upper
    level chooses its L1 weights β to minimise a validation criterion, by BiSVM L-BFGS
    (seed-000 Algorithm 8) on log-scale coordinates with the KKT hypergradient
    :math:`\nabla_\beta J = (\nabla_{w\beta}E)^\top\hat\lambda`,
    :math:`\hat\lambda = -[\nabla^2_{ww}E]^{-1}\nabla_w J` (§2.5-2.7). The final model is
    refitted on all rows at the learned β, on the selected features (``refit``).

    Parameters
    ----------
    model : {"auto", "scalar", "vector", "group"}, default="auto"
        One β for all coefficients, one per coefficient (bias included), or one per group.
        ``"auto"``: the group model when ``groups`` is given; else the vector model when
        the features are at most the training rows of a fold
        (:math:`d \le n - \lceil n/k\rceil`), and the scalar model otherwise (see the
        Notes); the choice is in ``model_``.
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
    refit : {"support", True, False}, default="support"
        ``"support"``: refit on all rows at the learned β with the unselected
        coefficients fixed at exactly zero, so that the model predicts from
        ``support_`` alone (:mod:`bisvm.selection.support`); a feature is selected when
        :math:`|\hat w_j| > \varepsilon` (``support_threshold``) at the learned β, and
        every choice between candidate β reads the fold models restricted the same way.
        ``True``: the thesis's refit on every feature (the unselected coefficients stay
        small and nonzero). ``False``: keep the first fold's solution.
    early_stopping : bool or "auto", default="auto"
        For the vector and group models with a k-fold criterion (k >= 3): hold out a
        stratified 1/k of the rows, refine β from the scalar model by k-fold
        cross-validation on the others, and watch the criterion of the model trained on
        those others on the held-out rows: stop when it has not improved for 5 outer
        iterations and keep the iterate ``refinement_rule`` picks (beyond seed-000).
        ``"auto"`` is on whenever it applies (every class with at least 2k rows);
        ``False`` refines on all rows to the tolerance. The scalar stage always learns
        on all rows' folds.
    scalar_rule : {"auto", "min", "1se", "1se_error"}, default="auto"
        The scalar β (the model for ``model="scalar"``, the start of the refinement
        otherwise): the criterion's minimum; the largest β within one standard error
        of it along the path (``"1se"``, :func:`~bisvm.selection.one_se.one_se_scalar`,
        glmnet's ``lambda.1se``); the largest β whose pooled validation
        misclassification error is within one standard error of the path's smallest
        (``"1se_error"``, :func:`~bisvm.selection.one_se.one_se_error_scalar`); or
        ``"auto"``: ``"1se"`` when the features outnumber the training rows of a fold,
        else ``"min"`` (see the Notes).
    refinement_rule : {"min", "1se"}, default="1se"
        Which iterate of the vector or group refinement is kept when early stopping is
        on (:class:`~bisvm.selection.early_stopping.HeldOutMonitor`): the smallest
        held-out criterion (``"min"``), or the best among those whose held-out gain over
        the start (the scalar model) exceeds one standard error of the paired per-row
        differences, else (with ``refit="support"``) the one with the fewest selected
        features among those not worse than the start by more than one standard error,
        else the start (``"1se"``). A rejected refinement gives exactly the scalar model
        (``refined_`` is False).
    balanced_criterion : bool or "auto", default=False
        Weigh the validation rows by the inverse of their class count, so that the
        criterion is the mean over the two classes of their mean terms
        (:func:`~bisvm.selection.criteria.balanced_weights`); ``"auto"`` when the
        minority share is below :data:`~bisvm.selection.staged.UNBALANCED_SHARE`.
    null_test : bool, default=True
        Keep the learned model only when its out-of-fold outputs (the k fold models at
        the chosen β, each on the rows it did not train on), calibrated by Platt's
        :math:`\sigma(af + c)`, have a log-loss below the class prior's by more than one
        standard error of the paired per-row differences
        (:func:`~bisvm.selection.decision.beats_null`); else return the intercept-only
        model (no feature; the intercept is the majority label ±1, the constant that
        minimises the mean hinge loss) with a ``UserWarning``. ``null_model_`` says
        which. ``False``: always the learned model. ``"balanced"``: also keep a model
        whose out-of-fold balanced accuracy, at the chosen threshold, beats the
        majority's by more than one paired standard error while its error is not above
        the majority's by more than one
        (:func:`~bisvm.selection.decision.beats_null_balanced`).
    threshold : {"calibrated", "zero", "1se_balanced", "1se_gated"}, default="calibrated"
        The decision threshold: ``"zero"``, the SVM's sign; ``"calibrated"``, the
        intercept shifted by :math:`c/a` of Platt's calibration
        :math:`P(y = 1\mid f) = \sigma(a f + c)` fitted on the same out-of-fold
        outputs (:func:`~bisvm.selection.decision.platt_shift`), so that the decision
        is the calibrated posterior's :math:`P > 1/2` (the accuracy-optimal threshold).
        ``"1se_balanced"`` and ``"1se_gated"``: the one-standard-error rule applied to
        the threshold (:func:`~bisvm.selection.decision.one_se_balanced_shift`): of the
        thresholds between Platt's :math:`P > 1/2` and :math:`P > \text{prior}` whose
        out-of-fold error is within one paired standard error of the smallest, the one
        of highest balanced accuracy, or (``"1se_gated"``) the most accurate whose
        balanced gain over :math:`P > 1/2` exceeds one paired standard error. They buy
        balanced accuracy with accuracy (see the Notes).
        Only ``intercept_`` changes (by ``intercept_shift_``); ``coef_``, the support and
        the importances are those of ``"zero"``.
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
        Selected features (:math:`|\hat w_j| > \varepsilon` at the learned β, by group
        for the group model); with ``refit="support"`` exactly the features with a
        nonzero ``coef_`` (in any class), the only ones the model reads.
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
    model_ : str
        The model fitted (``model``, or what ``"auto"`` chose).
    null_model_ : bool or ndarray of bool
        Whether the null-model test returned the intercept-only model (per class when
        multiclass).
    intercept_shift_ : float or ndarray
        The calibrated intercept shift added to the refit's intercept (0 with
        ``threshold="zero"`` or for an intercept-only model).
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
    The bullets before ``refit`` were measured with the thesis's refit on every feature
    (``refit=True``, the default of their time).

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
    * ``scalar_rule="auto"`` (``"1se"`` only when the features outnumber the rows of
      a training fold): everywhere, ``"1se"`` keeps 8.0 features (scalar model) but
      loses −1.57 / −8.6 (Mroz, 7 features, all needed); ``"1se_error"`` 6.2 features,
      −0.86 / −2.3 (Mroz). With more features than rows, the criterion's minimum lets
      noise features in and the 1se model does not: on the 200 × 2,000 problem (20
      informative) the scalar model at the minimum kept 42 features and missed one
      informative feature on 3 of 5 seeds (its coefficient, 0.0096, under the support
      threshold 0.01 while noise coefficients reached 0.008), the 1se model kept exactly
      the 20 on 5 of 5; on the 200 × 400 problem 8.0 features instead of 20.2.
    * ``model="auto"`` (the scalar model when the features outnumber the rows of a
      training fold): the vector refinement is judged on a held-out 1/k of the rows, 40
      rows on the 200 × 2,000 problem, too few to tell a real gain of 2,001 free weights
      from noise; the accepted refinements kept 4, 3 and 10 of the 20 informative
      features on 3 of 5 seeds (−0.9 points), the scalar model all 20 (−0.2).
    * ``null_test=True``: the criterion has a minimum even on a target the features do
      not predict (pure noise: the learned model keeps features; the test returns the
      intercept-only model, ``tests/estimators/test_bilevel_defaults.py``). Its
      statistic is the held-out log-loss of the calibrated outputs, not the
      misclassification rate: the misclassification test (the panel's ``[accnull]``
      rows) emptied the model on Affairs (5 of 5 seeds), email (5 of 5) and NHEFS (4 of
      5), where the learned model flips almost no majority prediction but ranks the
      test rows with AUC 0.68, 0.84 and 0.56 (``benchmarks/bench_panel_auc.py``;
      LinearSVC L2-CV: 0.68, 0.85, 0.58). The log-loss test keeps those models:
      accuracy unchanged (mean gap −0.06, worst −1.1), features 10.1 -> 11.6 (L1-CV
      11.8), balanced accuracy on the unbalanced tables −1.1 -> −0.7 points under the
      best baseline's (worst Affairs −4.5 -> bfi −2.4).
    * ``threshold="calibrated"``: Platt's threshold on the out-of-fold outputs lifts
      the vector model's balanced accuracy on the unbalanced tables from 1.1 to 0.7
      points under the best baseline's (bfi −3.2 -> −2.4, creditcard −0.9 -> +0.6,
      email −0.6 -> 0.0) at about the same accuracy (−0.06 / −1.1 against −0.04 /
      −1.0). A threshold nearer the class prior buys balanced accuracy with accuracy:
      on bfi, none of Platt's thresholds between P > 1/2 and P > prior has both the
      accuracy within 1.5 points and the balanced accuracy of the best baseline. The
      one-standard-error thresholds (``bisvm-auto`` rows of the panel, 5 seeds)
      confirm it: ``"1se_balanced"`` −0.34 / −2.7 (bfi: 68.5 % accuracy, 63.5 %
      balanced; best baselines 71.1, L1-CV, and 61.0, L2-CV), balanced on
      the unbalanced tables +0.3 (worst −4.5); with ``null_test=False`` −0.52 / −2.7,
      +2.0 (worst −0.7), 11.6 features; ``"1se_gated"`` −0.17 / −2.3, −0.1; with
      ``null_test=False`` −0.20 / −2.3, +0.5 (worst −0.9), 11.6 features;
      ``null_test="balanced"`` with ``"1se_gated"`` the same as ``null_test=False``,
      with ``"calibrated"`` −0.08 / −1.1, −0.8 (worst −3.0). Each holds the balanced
      target only by losing more than 1.5 points of accuracy on bfi, so
      ``"calibrated"`` stays the default.
    * ``refit="support"``: the thesis's refit keeps every coefficient nonzero (the
      smoothed L1), so its model predicts from features that ``support_`` calls
      unselected; with the restricted refit it predicts from ``support_`` alone
      (:mod:`bisvm.selection.support`). The sub-ε coefficients had carried weight: on
      the 200 × 2,000 problem they spread the test outputs by a standard deviation of
      0.17-0.19 beside 0.51-0.66 from the 20 selected features, and without them the
      test accuracy rises from 86.0 % to 88.1 % (200 × 400: 96.6 % to 97.5 %; bench_wide's
      leukemia shape, 3 seeds: 89.8 % to 92.5 %); on biopsy two seeds' models used all
      nine features through coefficients of 0.002 while ``support_`` was empty. Every
      choice between candidates reads the fold models restricted the same way.
    * ``refinement_rule="1se"`` with ``refit="support"``: when no refinement iterate
      beats the scalar model on the held-out rows by more than one standard error, the
      sparsest one not worse by more than one standard error is kept (glmnet's
      ``lambda.1se`` in the number of features): 12.2 -> 11.4 features, mean gap
      +0.10 -> +0.07, worst −0.9 -> −1.3 (bfi).
    * Together (the defaults): +0.07 / −1.3 (bfi), 11.4 features (L1-CV 11.8), every
      informative feature kept on 13 of 15 synthetic seeds (5/5 on the 200 × 2,000 and
      200 × 400 problems, 3/5 on the 600 × 40 one, whose seeds 3 and 4 have informative
      features with no linear signal: population logistic coefficients −0.01, −0.03
      and −0.16 against 0.5-1.6 for the others; L1-CV keeps them on 3 of 5 too).
      Balanced accuracy averaged over the 7 unbalanced tables: 65.4 %, against 65.3
      (L2-CV), 65.2 (L1-CV) and 65.0 (RFECV); per table 0.3 points under the best
      baseline's on average (worst bfi −2.2: at L2-CV's operating point these outputs
      give 70.1 % accuracy and 61.2 % balanced against its 70.3 and 61.0, but Platt's
      threshold, fitted on the out-of-fold outputs, gives 84.9 % of the test rows to the
      majority class, 69.9 % and 59.1 %; ``benchmarks/bench_panel_auc.py``). The
      thesis's refit on every feature (``refit=True``, the panel's ``[refitall]``
      rows): −0.06 / −1.1, 11.6 features counted by ε (its model read them all),
      balanced 64.9 % on average. The previous defaults (``model="vector"``,
      ``scalar_rule="min"``, ``null_test=False``, ``threshold="zero"``; the panel's
      ``[prev]`` rows): −0.04 / −1.0, 13.3 features, 10 of 15 seeds, balanced −1.1
      (worst −3.2).
    * ``balanced_criterion=False``: ``"auto"`` lifts the vector model's balanced
      accuracy on the unbalanced tables from 1.1 points below the best baseline's to
      1.3 above, but costs accuracy: −1.57 / −10.2 (Affairs).
    * ``cv_repeats=1``: 3 repeats cut the vector model's features to 11.8 (L1-CV
      11.8) at −0.11 / −1.2 (Affairs), but kept every informative feature on 8 of 15
      synthetic seeds, for about twice the time.
    """

    # the public path stays where it has always been (pickles and saved models name it,
    # and bisvm.estimators.sparse re-exports the class)
    __module__ = "bisvm.estimators.sparse"

    _parameter_constraints: dict = {
        **SmoothedSVMBase._lower_constraints,
        "model": [StrOptions({"auto", "scalar", "vector", "group"})],
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
        "refit": [StrOptions({"support"}), "boolean"],
        "early_stopping": AUTO_OR_BOOL,
        "scalar_rule": [StrOptions(set(SCALAR_RULES))],
        "refinement_rule": [StrOptions({"min", "1se"})],
        "balanced_criterion": AUTO_OR_BOOL,
        "null_test": ["boolean", StrOptions({"balanced"})],
        "threshold": [StrOptions(set(THRESHOLDS))],
        "blas_threads": BLAS_THREADS,
        "random_state": ["random_state"],
    }

    def __init__(self, model="auto", groups=None, l2_penalty="auto", hinge_smoothing=0.25,
                 l1_smoothing=0.01, criterion="scaled_margin", validation_fraction=0.2, cv=5,
                 init_penalty="auto", warm_init=True, penalize_intercept=True,
                 solver="auto", max_iter=100, tol=1e-4, support_threshold=0.01,
                 learn_l2_penalty=False, refit="support", early_stopping="auto",
                 scalar_rule="auto", refinement_rule="1se", balanced_criterion=False,
                 blas_threads="auto", cv_repeats=1, null_test=True, threshold="calibrated",
                 verbose=0, random_state=None):
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
        self.null_test = null_test
        self.threshold = threshold
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
        split, loss = CRITERIA[self.criterion].split, CRITERIA[self.criterion].loss
        self.model_ = self._resolve_model(X.shape[0], d, split)
        hyper = make_hyper_model(self.model_, d, groups=feature_groups(self.groups),
                                 penalize_intercept=self.penalize_intercept,
                                 feature_names=feature_names,
                                 learn_l2=bool(self.learn_l2_penalty))
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
        self._warn_null(per_class)
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
        self.null_model_ = per_class[0].null is not None if len(per_class) == 1 else \
            np.array([f.null is not None for f in per_class])
        shifts = np.array([f.shift for f in per_class])
        self.intercept_shift_ = float(shifts[0]) if len(per_class) == 1 else shifts
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _warn_null(self, per_class):
        """No silent empty model: say which problems the null-model test emptied."""
        for f, (_, k) in zip(per_class, self._binary_targets(self.classes_)):
            if f.null is None:
                continue
            what = "" if len(per_class) == 1 else f" (class {self.classes_[k]!r} vs rest)"
            warnings.warn(
                f"BilevelSVC{what}: the learned model does not beat the intercept-only "
                f"model (the majority class) on the held-out folds ({f.null[0]} "
                f"{f.null[1]:.3f} against "
                f"{f.null[2]:.3f}, within one standard error); the intercept-only model "
                f"is returned (null_test={self.null_test!r}). The features carry no "
                "signal this test can find: check the target, or pass null_test=False to "
                "keep the learned model.", UserWarning, stacklevel=3)

    def _resolve_model(self, n, d, split):
        """``model="auto"``: the group model when groups are given, else the vector
        model when the features are at most the training rows of a fold, else the
        scalar model (see the Notes)."""
        if self.model != "auto":
            return self.model
        if self.groups is not None:
            return "group"
        if split == "kfold":
            cv = self.cv if isinstance(self.cv, Integral) and self.cv >= 2 else 5
            n_train = n - -(-n // cv)
        else:
            f = self.validation_fraction
            n_train = n - int(np.ceil(f * n)) if isinstance(f, Real) and 0 < f < 1 else n
        return "vector" if d <= n_train else "scalar"

    def _staged_settings(self, split, loss):
        early = True if self.early_stopping == "auto" else bool(self.early_stopping)
        return StagedSettings(
            model=self.model_, split=split, loss=loss, cv=self.cv,
            validation_fraction=self.validation_fraction, random_state=self.random_state,
            init_penalty=self.init_penalty, warm_init=bool(self.warm_init),
            max_iter=int(self.max_iter), tol=float(self.tol),
            support_threshold=self.support_threshold, early_stopping=early,
            scalar_rule=self.scalar_rule, refinement_rule=self.refinement_rule,
            balanced=self.balanced_criterion,
            refit="support" if self.refit == "support" else bool(self.refit),
            cv_repeats=self.cv_repeats, null_test=self.null_test,
            threshold=self.threshold)

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
