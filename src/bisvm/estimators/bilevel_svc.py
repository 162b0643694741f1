r""":class:`BilevelSVC`: the smoothed elastic-net SVM of
:class:`~bisvm.estimators.sparse.ElasticNetSVC` whose L1 weights are learned by bilevel
optimisation (González Vallejo 2024), re-exported by :mod:`bisvm.estimators.sparse`.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import validate_data

from ..names import CRITERIA
from ..selection.bilevel import (
    THESIS_GRID,
    BilevelObjective,
    grid_search,
    make_hyper_model,
    resolve_solver,
)
from ..selection.bilevel_fit import scored_fit
from ..selection.multiclass import fit_shared
from ..selection.one_se import SCALAR_RULES
from ..selection.splits import validation_splits
from ..selection.staged import THRESHOLDS, fit_staged, weighted_folds
from ..selection.threads import limit_blas
from ..solvers.primal.lower_level import add_bias_column
from ._bilevel_common import BilevelFitMixin
from ._constraints import AUTO_OR_BOOL, BLAS_THREADS, TOL, positive
from ._docs import method_doc
from ._sample_weight import checked_sample_weight
from ._shared import shared_attributes
from .smoothed_base import CalibratedOvRMixin, SmoothedSVMBase

__all__ = ["BilevelSVC"]


class BilevelSVC(CalibratedOvRMixin, BilevelFitMixin, SmoothedSVMBase):
    r"""Sparse SVM whose L1 weights are learned by bilevel optimisation.

    The lower level is the smoothed elastic-net SVM of :class:`~bisvm.ElasticNetSVC`,
    whose solution :math:`\hat w(\beta)` minimises :math:`E(w, \beta)`; the upper level
    chooses its L1 weights β (one scalar, one per feature or one per group) to minimise
    a validation criterion :math:`J(\hat w(\beta))`, by BiSVM L-BFGS on log-scale
    coordinates with the hypergradient given by the implicit function theorem at the
    lower optimum, :math:`\nabla_\beta J = (\nabla_{w\beta}E)^\top\hat\lambda` with
    :math:`\hat\lambda = -[\nabla^2_{ww}E]^{-1}\nabla_w J` (González Vallejo 2024;
    Pedregosa 2016). Learning the weights replaces a grid search by a few lower-level
    solves per iteration, and per-feature weights select features. The final model is
    refitted on all rows at the learned β, on the selected features (``refit``).
    X may be dense or scipy.sparse (CSR/CSC); sparse input is never densified.

    Parameters
    ----------
    model : {"auto", "scalar", "vector", "group"}, default="auto"
        One β for all coefficients, one per coefficient (the bias included when it is
        penalised), or one per group. ``"auto"``: the group model when ``feature_groups``
        is given; else the vector model when the features are at most the training rows
        of the smallest training fold, and the scalar model otherwise (see the Notes);
        the choice is in ``model_``.
    feature_groups : dict of str -> list, or list of lists, optional
        Feature groups for ``model="group"``: column indices, or column names when X is
        a DataFrame; features in no group form singleton groups.
    l2_penalty : float or "auto", default="auto"
        The thesis's α (fixed ridge weight). ``"auto"``: 0.01 in standardised units; with
        ``standardize=False``, :math:`0.01\,\overline{x^2}`, the thesis's 0.01 times the
        mean column second moment :math:`\frac{1}{nd}\sum_{ij}x_{ij}^2` of the training X
        (the same relative strength against the loss curvature on unscaled data).
    hinge_smoothing : float, default=0.25
        The thesis's μ of the softplus hinge.
    l1_smoothing : float, default=0.01
        The thesis's γ of the Pseudo-Huber L1 smoothing. ``0`` is the exact L1 mode
        (beyond the thesis): the lower level is the exact weighted (group) L1 SVM solved
        on its support by a working-set method, the selected features are exactly zero
        elsewhere, and the hypergradient is the implicit one on the support (as
        sparse-ho and sparho do for the Lasso); ``solver_`` is ``"exact_l1"``.
    criterion : str, default="scaled_margin"
        Upper-level criterion, one of ``"scaled_margin"``, ``"margin"``, ``"holdout"``,
        ``"kfold"``, ``"logistic"``, ``"holdout_logistic"``, ``"holdout_margin"`` and
        ``"holdout_scaled_margin"``. ``"holdout"`` is the thesis's
        :math:`J = \frac{1}{2m}\|V\hat w - \eta\|^2` on one stratified validation split of
        ``validation_fraction`` of the rows; ``"kfold"`` is the same averaged over ``cv``
        stratified folds; ``"margin"`` is the halved mean squared hinge of the validation
        margins :math:`\frac{1}{2m}\sum\max(0, 1-\eta_i v_i^\top\hat w)^2` over ``cv``
        folds; ``"scaled_margin"`` the same after the best rescaling of the outputs,
        :math:`\min_{s\ge0}\frac{1}{2m}\sum\max(0, 1-s\,\eta_i v_i^\top\hat w)^2`
        (:class:`~bisvm.selection.criteria.ScaledSquaredHingeValidation`), over ``cv``
        folds; ``"logistic"`` the mean logistic loss of the margins over ``cv`` folds;
        ``holdout_*`` the same on one split.

        ``"scaled_margin"`` is the default because it judges the direction of the
        validation outputs, not their size, which the other criteria also reward and so
        push towards weak penalties (see the Notes).
    validation_fraction : float, default=0.2
        Share of rows held out by ``criterion="holdout"`` (the thesis's 80/20).
    cv : int, cross-validation splitter or iterable of (train, test) pairs, default=5
        The folds of the k-fold criteria, as scikit-learn's CV estimators take them: an
        int is that many stratified shuffled folds (seeded by ``random_state``); a
        splitter (``GroupKFold``, ``TimeSeriesSplit``, ...) receives the ``groups`` of
        :meth:`fit`. Every split made inside the fit comes from it: the held-out rows of
        early stopping are its last split's test rows (an int: a stratified 1/k), the
        out-of-fold outputs of the null test and the calibration are its folds', and
        ``model="auto"`` reads its training sizes. The holdout criteria use its first
        split (an int: ``validation_fraction``). A multiclass target's one-vs-rest
        problems share these folds.
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
    penalize_intercept : bool or "auto", default="auto"
        Penalise the bias as the thesis does (needed to reproduce it; requires
        ``standardize=False``). ``"auto"``: only when ``standardize=False``.
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
        (for the group model: groups with :math:`\|w_k\|_2 \le \varepsilon`); in
        standardised units with ``standardize=True``.
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
        iterations and keep the iterate ``refinement_rule`` picks (beyond the thesis).
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
    blas_threads : "auto", int or None, default="auto"
        BLAS threads during the fit (:func:`~bisvm.selection.threads.gram_threads`):
        ``"auto"`` is one thread when the Gram product :math:`n\,d\min(n, d)` is at
        most 1e9 flops (the many small factorisations of the folds do not amortise a
        thread team), else the library default; an int limits to that many; None
        leaves the pools alone.
    cv_repeats : int, default=1
        The scalar stage's k-fold criterion averaged over this many independent
        stratified partitions (the refinement keeps one); the 1se rules then count each
        repeat's rows apart, which understates their standard error. Needs an int ``cv``.
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
    verbose : int, default=0
        Show the outer iterations on stderr: a progress bar with the criterion J and the
        nonzero count when stderr is a terminal, else one line per iteration (criterion,
        held-out criterion, nonzero count, lower-level solves, seconds)
        (:mod:`bisvm.progress`).
    random_state : int, RandomState or None, default=None
        Seeds the validation split / folds.
    standardize : bool, default=True
        Penalise the coefficients of standardised features, with the intercept
        unpenalised, and report them in the original units (see the Notes). ``False``
        penalises the columns as they are (the thesis, which standardises beforehand).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplying ``sample_weight`` in the loss, the criterion's
        means and the standardisation. A binary target's class weights are exactly the
        matching ``sample_weight``. One-vs-rest follows LIBLINEAR: in the problem of class
        k, its rows get its weight and the other rows keep theirs. ``"balanced"``:
        :math:`n / (K n_c)` from the (weighted) class counts. With
        ``balanced_criterion=True`` the criterion then balances the ±1 classes of each
        problem on these weights, so the class weights act on the loss only.
    n_jobs : int or None, default=None
        Folds solved in parallel (lower-level solves and adjoint solves, through joblib
        threads, so a ``joblib.parallel_config(backend="dask")`` block runs them on a
        cluster). The result is identical for every value (with ``n_jobs`` set,
        ``blas_threads="auto"`` is one thread per worker). Folds whose Gram product is
        under :data:`~bisvm.selection.bilevel.PARALLEL_FOLD_WORK` flops run one after the
        other (threads would only queue for the interpreter lock).
    multiclass : {"ovr", "shared"}, default="ovr"
        How a target of more than two classes is learned. ``"ovr"``: one-vs-rest, each
        class with its own L1 weights and its own support (``support_`` is their union).
        ``"shared"``: the K one-vs-rest losses summed under one group penalty per
        feature, :math:`\sum_j\beta_j\bar H_\gamma(\|W_{j,:}\|_2)` over the row of
        its K class coefficients (the joint covariate selection of Obozinski, Taskar &
        Jordan 2010), with the weights learned by the same bilevel fit
        (:func:`~bisvm.selection.multiclass.fit_shared`): one feature set for the
        whole problem. Its null test and threshold rule are not applied (they judge one
        binary sign); its probabilities are calibrated per class as one-vs-rest's.
    groups : deprecated
        The former name of ``feature_groups``, accepted for one release with a
        ``FutureWarning``; sample groups for a splitter go to :meth:`fit`.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights, in the original units of the features.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts (the calibrated shift included).
    penalty_weights_ : ndarray of shape (n_weights,) or (n_classes, n_weights)
        Learned β.
    penalty_weight_names_ : tuple of str
        The name of each entry of ``penalty_weights_``.
    validation_score_ : float or ndarray
        Upper-level criterion at the learned β.
    balanced_criterion_ : bool or ndarray of bool
        Whether the criterion was class-balanced.
    l2_penalty_ : float or ndarray
        α used by the final model (learned when ``learn_l2_penalty=True``).
    importance_ : ndarray
        The thesis's scores per penalty group (bias included), summing to 1: the
        learned weights β masked by the support, normalised.
    importance_names_ : tuple of str
        The name of each entry of ``importance_``.
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
    probability_slope_ : float or ndarray of shape (n_classes,)
        Slope :math:`a` of :meth:`predict_proba`'s :math:`\sigma(a f)` per binary problem,
        fitted on the out-of-fold outputs (Platt 1999; one parameter, so that the
        arg-max of the probabilities is the decision for every ``threshold``).
    selection_frequency_ : ndarray of shape (n_features,)
        Share of the fold models at the learned β (the folds of every row, repeats
        included) that select each feature: a measure of how stable the selection is.
        One-vs-rest: the share of folds in which some class's model selects it.
    selection_frequency_per_class_ : ndarray of shape (n_classes, n_features)
        The same per binary problem (one row for a binary target).
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

    See Also
    --------
    bisvm.ElasticNetSVC : The lower-level model with fixed L1 weights.
    bisvm.BilevelSVR : The same bilevel learning for regression.
    bisvm.StabilitySelection : How stable the selection is over half-samples.

    Notes
    -----
    The defaults were chosen on a held-out panel of real tables and synthetic problems
    with a known support, whose test rows were never used in tuning; the
    documentation's page on BilevelSVC's defaults and the estimator notes give the
    measurements behind each of them, with the commands that produce them.

    With ``standardize=True`` the penalty reads coefficients of standardised features
    (weighted by ``sample_weight`` and ``class_weight``; inside each fold, by that fold's
    training rows), as glmnet does (Friedman, Hastie & Tibshirani 2010): the selection does
    not depend on the units of the columns, ``support_threshold``, ``l2_penalty="auto"``
    and ``feature_importances_`` are in standardised units, and ``coef_``/``intercept_``
    are in the original units, so ``decision_function`` takes raw X. A constant column is
    never selected.

    ``SelectFromModel(BilevelSVC())`` with its default threshold keeps ``support_``: the
    class declares an L1 penalty, so the threshold is 1e-5 on ``|coef_|`` in original
    units, and with ``refit="support"`` ``coef_`` is exactly zero off ``support_``. A
    selected feature whose original-unit coefficient is at most 1e-5 (a column whose
    standard deviation exceeds the coefficient over 1e-5) would be dropped; the exact
    form for any data is ``SelectFromModel(BilevelSVC(), importance_getter="support_")``.

    References
    ----------
    C. L. González Vallejo, "Selección de variables a través de máquinas de soporte
    vectorial dispersas: un enfoque de optimización binivel", master's thesis, Escuela
    Politécnica Nacional, Quito, 2024.

    F. Pedregosa, "Hyperparameter optimization with approximate gradient", ICML 2016.

    J. Friedman, T. Hastie and R. Tibshirani, "Regularization paths for generalized
    linear models via coordinate descent", Journal of Statistical Software 33, 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import BilevelSVC
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(150, 6))
    >>> y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=150) > 0, 1, -1)
    >>> clf = BilevelSVC(random_state=0).fit(X, y)
    >>> clf.model_
    'vector'
    >>> clf.get_support(indices=True)
    array([0, 1])
    >>> clf.transform(X).shape
    (150, 2)
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
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "multiclass": [StrOptions({"ovr", "shared"})],
        "n_jobs": [Integral, None],
        "blas_threads": BLAS_THREADS,
        "random_state": ["random_state"],
    }

    def __init__(self, model="auto", feature_groups=None, l2_penalty="auto",
                 hinge_smoothing=0.25, l1_smoothing=0.01, criterion="scaled_margin",
                 validation_fraction=0.2, cv=5, init_penalty="auto", warm_init=True,
                 penalize_intercept="auto", solver="auto", max_iter=100, tol=1e-4,
                 support_threshold=0.01, learn_l2_penalty=False, refit="support",
                 early_stopping="auto", scalar_rule="auto", refinement_rule="1se",
                 balanced_criterion=False, blas_threads="auto", cv_repeats=1, null_test=True,
                 threshold="calibrated", verbose=0, random_state=None, standardize=True,
                 class_weight=None, n_jobs=None, multiclass="ovr", groups=None):
        self.model = model
        self.feature_groups = feature_groups
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
        self.standardize = standardize
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.multiclass = multiclass
        self.groups = groups

    @method_doc(
        "Learn the L1 weights and the SVM.",
        "X_train_sparse",
        "y_labels",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights: each row's term in the lower-level loss of every
            fold and of the refit (normalised as in :class:`ElasticNetSVC`), in the
            validation criterion's mean and in the standardisation. The folds are drawn
            from the rows as they are: a weight k is k times the say in every loss, not k
            copies that a split could send to different folds.""",
        r"""groups : array-like of shape (n_samples,), default=None
            Sample groups, passed to a group splitter ``cv`` (``GroupKFold``, ...), as
            scikit-learn's ``RFECV`` does; every split of the fit keeps a group on one
            side.""",
        returns=r"""BilevelSVC
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None, groups=None):
        t0 = time.perf_counter()
        self._validate_params()
        X, y = self._validate_xy(X, y)
        lower = self._lower_level()
        sw = checked_sample_weight(sample_weight, y, self.classes_)
        groups = self._checked_groups(groups, X.shape[0])
        split, loss = CRITERIA[self.criterion].split, CRITERIA[self.criterion].loss
        cv, fgroups, hyper, progress = self._prepare(X, y, split, groups,
                                                     bool(self.learn_l2_penalty))
        settings = self._staged_settings(split, loss, cv)
        if self.multiclass == "shared" and self.classes_.size > 2:
            return self._fit_shared(X, y, sw, lower, settings, fgroups, groups, progress, t0)
        per_class, scalers, l2s = [], [], []
        with limit_blas(self.blas_threads_):
            for yb, k in self._binary_targets(y):
                w = self._row_weights(y, sw, k)
                Xa, cs = self._design(X, w)
                if not per_class:
                    self.solver_ = "exact_l1" if lower.exact else \
                        resolve_solver(self.solver, Xa)
                    lower = replace(lower, solver=lower.solver if lower.exact
                                    else self.solver_)
                low = self._l2(lower, X, w)
                fit = fit_staged(Xa, yb, low, hyper, settings, w, progress=progress,
                                 split_labels=y, groups=groups)
                per_class.append(scored_fit(fit, hyper, settings))
                scalers.append(cs)
                l2s.append(low.l2_penalty)
        self._store([f.coef for f in per_class], scalers)
        self._warn_null(per_class)
        s = self._set_stacked(per_class, hyper, l2s)
        self.balanced_criterion_ = s.balanced
        self.selection_frequency_per_class_ = s.selection_frequency_per_class
        self.probability_slope_ = float(s.slopes[0]) if len(per_class) == 1 else s.slopes
        shifts = np.array([f.shift for f in per_class])
        self.intercept_shift_ = float(shifts[0]) if len(per_class) == 1 else shifts
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _fit_shared(self, X, y, sw, lower, settings, fgroups, groups, progress, t0):
        """``multiclass="shared"``: one feature set for every class
        (:func:`~bisvm.selection.multiclass.fit_shared`)."""
        names_in = getattr(self, "feature_names_in_", None)
        shared_lower = self._l2(lower, X, sw)
        with limit_blas(self.blas_threads_):
            fit = fit_shared(
                add_bias_column(X), np.searchsorted(self.classes_, y),
                self.classes_.size, shared_lower, settings,
                self._class_row_weights(y, sw),
                feature_names=None if names_in is None else
                [str(c) for c in names_in], feature_groups=fgroups,
                learn_l2=bool(self.learn_l2_penalty), groups=groups, progress=progress)
        for name, value in shared_attributes(fit, shared_lower.l2_penalty,
                                             bool(self.learn_l2_penalty)).items():
            setattr(self, name, value)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _warn_null(self, per_class):
        """No silent empty model: say which problems the null-model test emptied, and
        what may have caused it."""
        for f, (_, k) in zip(per_class, self._binary_targets(self.classes_)):
            if f.null is None:
                continue
            what = "" if len(per_class) == 1 else f" (class {self.classes_[k]!r} vs rest)"
            cause = (
                "No feature carries signal this test can find: check the target, or pass "
                "null_test=False to keep the learned model." if self.standardize else
                "The features are penalised in their own units (standardize=False): "
                "columns on very different scales make the penalty empty the model; "
                "standardize=True (the default) puts them on one scale. Else no feature "
                "carries signal this test can find (null_test=False keeps the learned "
                "model).")
            warnings.warn(
                f"BilevelSVC{what}: the learned model does not beat the intercept-only "
                f"model (the majority class) on the held-out folds ({f.null[0]} "
                f"{f.null[1]:.3f} against {f.null[2]:.3f}, within one standard error); "
                f"the intercept-only model is returned (null_test={self.null_test!r}). "
                + cause, UserWarning, stacklevel=3)

    @method_doc(
        "Run the thesis's baseline, a grid search over a scalar β.",
        r"""X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples, with the features seen in :meth:`fit`.""",
        r"""y : array-like of shape (n_samples,)
            Binary class labels.""",
        r"""grid : array-like of float, default=THESIS_GRID
            The scalar weights β to evaluate (the thesis's 149-point grid by default).""",
        r"""progress : callable or None, default=None
            Called with 1 after each grid point.""",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Row weights, as in :meth:`fit`.""",
        returns=r"""GridResult
            Values, regularisation path, best β, lower-level solves and seconds.""",
        extended=r"""The grid is searched on the *same* validation split or folds that :meth:`fit`
        uses (same ``random_state``), warm-started along the grid. Binary targets only.""")
    def scalar_grid(self, X, y, grid=THESIS_GRID, progress=None, sample_weight=None):
        self._validate_params()
        lower = self._lower_level()
        X, y = validate_data(self, X, y, dtype=np.float64, reset=False,
                             accept_sparse=("csr", "csc"))
        if self.classes_.size != 2:
            raise ValueError("scalar_grid needs a binary target")
        sw = self._row_weights(y, checked_sample_weight(sample_weight, y, self.classes_), 1)
        lower = self._l2(lower, X, sw)
        yb = np.where(y == self.classes_[-1], 1.0, -1.0)
        split, loss = CRITERIA[self.criterion].split, CRITERIA[self.criterion].loss
        Xa, _ = self._design(X, sw)
        splits = validation_splits(y, split, validation_fraction=self.validation_fraction,
                                   cv=self.cv, random_state=self.random_state)
        folds = weighted_folds(Xa, yb, sw, splits, bool(self.standardize))
        scal = make_hyper_model("scalar", X.shape[1],
                                penalize_intercept=lower.penalize_intercept)
        return grid_search(BilevelObjective(folds, lower, scal, loss=loss,
                                            n_jobs=self.n_jobs), grid,
                           progress=progress)
