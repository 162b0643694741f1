r""":class:`BilevelSVR`: sparse support vector regression whose L1 weights are learned by
bilevel optimisation, on the engine of :class:`~bisvm.estimators.sparse.BilevelSVC`.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..selection.bilevel_fit import scored_fit
from ..selection.one_se import SCALAR_RULES
from ..selection.staged import fit_staged
from ..selection.threads import limit_blas
from ..solvers.primal.lower_level import LowerLevel, resolve_solver
from ._bilevel_common import BilevelFitMixin
from ._constraints import AUTO_OR_BOOL, BLAS_THREADS, TOL, non_negative, positive
from ._docs import method_doc
from .smoothed_base import SmoothedPenaltyMixin

__all__ = ["BilevelSVR", "REGRESSION_CRITERIA", "REGRESSION_LOSSES"]

#: ``BilevelSVR``'s criteria: name -> validation loss of
#: :func:`~bisvm.selection.criteria.make_criterion` (k-fold, mean over folds).
REGRESSION_CRITERIA = {"mse": "squared", "mae": "absolute"}

#: ``BilevelSVR``'s data losses (:data:`~bisvm.solvers.primal.lower_level.DATA_LOSSES`).
REGRESSION_LOSSES = ("squared", "epsilon_insensitive", "huber")

#: Quantile bins of the target that stratify the folds (fewer with few rows).
_TARGET_BINS = 5

#: ``l1_smoothing="auto"``: γ for tables with at least as many columns as rows, and for
#: the others (the thesis's value)
_WIDE_L1_SMOOTHING, _TALL_L1_SMOOTHING = 0.001, 0.01


class BilevelSVR(BilevelFitMixin, SmoothedPenaltyMixin, RegressorMixin, BaseEstimator):
    r"""Sparse regression whose L1 weights are learned by bilevel optimisation.

    The lower level is the smoothed elastic-net regression

    .. math::
        E(w; \beta) = \frac{1}{\sum_i s_i}\sum_i s_i\,\ell(x_i^\top w + b - y_i)
            + \frac{\alpha}{2}\|w\|^2
            + \sum_k\beta_k\big(\sqrt{\gamma^2 + \|w_k\|^2} - \gamma\big),

    with :math:`\ell` the squared error (by default), the ε-insensitive loss of support
    vector regression with softplus edges (Lee, Hsieh & Huang 2005) or the Pseudo-Huber
    loss; the upper level chooses the L1 weights β (one, one per feature, or one per
    group) to minimise a k-fold validation criterion by BiSVM L-BFGS with the implicit
    (KKT) hypergradient: the bilevel sparse SVM of González Vallejo (2024) carried to
    regression, where bilevel model selection of ε-SVR goes back to Bennett et al.
    (2006). The stages, the decision rules and the solvers are those of
    :class:`~bisvm.BilevelSVC`: a scan and BiSVM run on the scalar weight, the
    per-feature refinement judged on held-out rows, the refit restricted to the
    selected features, and the null test. X may be dense or scipy.sparse.

    Parameters
    ----------
    model : {"auto", "scalar", "vector", "group"}, default="auto"
        One β for all coefficients, one per feature, or one per group. ``"auto"``: the
        group model when ``feature_groups`` is given, else the vector model, for any
        shape (see the Notes); the choice is in ``model_``.
    feature_groups : dict of str -> list, or list of lists, optional
        Feature groups for ``model="group"`` (column indices, or names for a DataFrame).
    loss : {"squared", "epsilon_insensitive", "huber"}, default="squared"
        The data loss of the residual :math:`r`: the squared error :math:`r^2/2` (the
        smoothed elastic net; see the Notes for why it is the default); the smoothed
        ε-insensitive loss
        :math:`\mu\log(1 + e^{(r-\varepsilon)/\mu}) + \mu\log(1 + e^{(-r-\varepsilon)/\mu})`
        of support vector regression; the Pseudo-Huber loss
        :math:`\varepsilon^2(\sqrt{1 + (r/\varepsilon)^2} - 1)`. The last two grow
        linearly in large residuals, so rows with outlying targets weigh less.
    epsilon : float, default=0.1
        Unused by the squared loss. ε of the ε-insensitive tube, or the Huber transition
        width (as scikit-learn's ``SGDRegressor`` uses one ``epsilon`` for both), **in
        units of the standard deviation of y**: y is standardised inside (weighted mean
        and standard deviation of the training rows), so the default tube is a tenth of
        y's spread whatever its units.
    loss_smoothing : float, default=0.1
        The width μ of the soft edges of the ε-insensitive loss, in the same units as
        ``epsilon``; unused by the other losses.
    l2_penalty : float or "auto", default="auto"
        The ridge weight α; ``"auto"``: 0.01 in standardised units (with
        ``standardize=False``, 0.01 times the mean column second moment).
    l1_smoothing : float or "auto", default="auto"
        The γ of the Pseudo-Huber smoothing of the L1 penalty, in the units of the
        (standardised) coefficients; ``"auto"``: 0.001 when the table has at least as
        many columns as rows, 0.01 (the thesis's value) otherwise. Below γ the penalty
        acts as a ridge of weight β/γ. With d ≥ n the loss leaves the coefficients
        undetermined and the penalty alone chooses among correlated columns: a γ closer
        to the exact L1 penalty keeps weak columns that matter jointly, at the cost of
        more Newton steps per lower-level solve (the solver stops coefficients at zero
        to limit them, :meth:`~bisvm.penalties.GroupPseudoHuber.stop_at_zero`). With
        n > d the data determine every coefficient and the smaller γ only costs time.
    criterion : {"mse", "mae"}, default="mse"
        The validation criterion, a mean over ``cv`` folds: the halved mean squared
        error of the validation predictions, or their smoothed mean absolute error
        :math:`\sqrt{r^2 + \delta^2} - \delta` with δ = 0.01 standard deviations of y
        (:class:`~bisvm.selection.criteria.SmoothedAbsoluteValidation`; the absolute
        value has no gradient where a residual vanishes, and the hypergradient needs
        one). Both are scale-free as computed, being in units of y's variance and
        standard deviation; the classifier's rescaled-margin criterion has no
        regression counterpart to carry over, because the refit on the selected
        features already removes the L1 shrinkage that rescaling would correct.
    cv : int, cross-validation splitter or iterable of (train, test) pairs, default=5
        The folds, as scikit-learn's CV estimators take them; an int is that many
        shuffled folds stratified on quantile bins of y (seeded by ``random_state``); a
        splitter receives the ``groups`` of :meth:`fit`. Early stopping holds out its
        last split's test rows (an int: 1/k of the rows).
    validation_fraction : float, default=0.2
        Unused by the k-fold criteria; kept for the shared ``model="auto"`` rule.
    init_penalty : float or "auto", default="auto"
        Starting β of the scalar BiSVM run. ``"auto"``: the best of a short log-spaced
        scan below the zero-model end of the outer range (the criterion is not convex in
        :math:`\log\beta`); a float starts there without the scan.
    warm_init : bool, default=True
        For the vector and group models, start from the learned scalar model instead of
        ``init_penalty``.
    penalize_intercept : bool or "auto", default="auto"
        Penalise the bias; ``"auto"``: only when ``standardize=False``.
    solver : {"auto", "newton", "woodbury", "cg", "lbfgs"}, default="auto"
        Lower-level solver: dense Newton, the sample-space (Woodbury) Newton for
        d > n, truncated Newton-CG for large sparse data, or L-BFGS; ``"auto"`` chooses
        by the shape and sparsity of X, and the choice is in ``solver_``.
    max_iter : int, default=100
        Cap on outer (BiSVM) iterations.
    tol : float, default=1e-4
        Outer stopping tolerance on the norm of the log-scale hypergradient.
    support_threshold : float, default=0.01
        Coefficients with :math:`|w_j| \le` ``support_threshold`` (in standardised
        units) are not selected.
    refit : {"support", True, False}, default="support"
        ``"support"``: refit on all rows at the learned β with the unselected
        coefficients fixed at zero, so that the model predicts from ``support_`` alone;
        ``True``: refit on every feature; ``False``: keep the first fold's solution.
    early_stopping : bool or "auto", default="auto"
        For the vector and group models: refine β on all but a held-out 1/k of the
        rows, stop when the held-out criterion has not improved for 5 iterations and
        keep the iterate ``refinement_rule`` picks; ``"auto"`` is on whenever it
        applies.
    scalar_rule : {"auto", "min", "1se"}, default="auto"
        The scalar β: the criterion's minimum, or the largest β within one standard
        error of it (glmnet's ``lambda.1se``). ``"auto"`` is ``"min"`` whenever the
        vector or group refinement follows: the scalar weight then only starts the
        refinement, whose held-out ``refinement_rule`` chooses the sparsity.
    refinement_rule : {"min", "1se"}, default="min"
        Which iterate of the vector or group refinement is kept, judged on held-out
        rows: the held-out minimum, or the one-standard-error choice. The default
        differs from the classifier's (see the Notes).
    null_test : bool, default=True
        Keep the learned model only when its out-of-fold squared error is below the
        intercept-only model's (each fold's training mean) by more than one paired
        standard error (:func:`~bisvm.selection.decision.beats_null_regression`); else
        return the intercept-only model with a ``UserWarning``.
    standardize : bool, default=True
        Penalise standardised features (intercept unpenalised) and report ``coef_`` in
        the original units.
    n_jobs : int or None, default=None
        Folds solved in parallel through joblib threads; the result is identical for
        every value.
    blas_threads : "auto", int or None, default="auto"
        BLAS threads during the fit: ``"auto"`` is one thread for small Gram products,
        an int limits to that many, None leaves the pools alone.
    verbose : int, default=0
        Show the outer iterations on stderr (:mod:`bisvm.progress`).
    random_state : int, RandomState or None, default=None
        Seeds the folds.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        In the units of X and y.
    intercept_ : float
        In the units of y.
    support_ : ndarray of bool, shape (n_features,)
        The selected features; with ``refit="support"`` exactly the nonzero
        coefficients.
    penalty_weights_ : ndarray
        Learned β (standardised units).
    penalty_weight_names_ : tuple of str
        The name of each entry of ``penalty_weights_``.
    l2_penalty_ : float
        The ridge weight α used.
    validation_score_ : float
        The criterion at the learned β.
    refined_ : bool or None
        Whether the vector or group refinement replaced the scalar model.
    importance_ : ndarray
        The thesis's scores per penalty group, summing to 1.
    importance_names_ : tuple of str
        The name of each entry of ``importance_``.
    n_iter_ : int
        Outer (BiSVM) iterations, the scalar stage included.
    history_ : tuple of HistoryEntry
        β, J, nonzero count, solves and seconds per outer iteration.
    feature_importances_ : ndarray of shape (n_features,)
        Share of each selected feature in :math:`\sum_j|\hat w_j|` (standardised units).
    selection_frequency_ : ndarray of shape (n_features,)
        Share of the fold models at the learned β that select each feature.
    lower_level_solves_ : int
        Lower-level solves over the whole fit.
    lower_level_iterations_ : int
        Lower-level solver iterations over the whole fit.
    null_model_ : bool
        Whether the null test returned the intercept-only model.
    model_ : str
        The model fitted (``model``, or what ``"auto"`` chose).
    solver_ : str
        The lower-level solver used.
    blas_threads_ : int or None
        The BLAS thread limit applied (None: none).
    fit_seconds_ : float
        Wall time of the fit.
    l1_smoothing_ : float
        The γ used (``l1_smoothing``, or ``"auto"``'s choice).
    y_mean_, y_scale_ : float
        The weighted mean and standard deviation y was standardised by.

    See Also
    --------
    bisvm.BilevelSVC : The classifier on the same engine.
    bisvm.SelectiveRegressionCV : Selective ridge with leave-one-out model selection.

    Notes
    -----
    One target only: a two-dimensional y (multi-output regression) is refused, since
    each output would need its own weights and support.

    The decision rules are the classifier's, with two differences, each chosen on a
    panel of regression tables (the estimator notes of the documentation give the
    measurements and the command that produces them):

    * the refinement keeps its held-out minimum (``refinement_rule="min"``): the
      classifier's one-standard-error rule guards against noisy held-out margins,
      whereas a regression target is far less noisy per row, and the minimum already
      keeps fewer features than ``LassoCV``;
    * ``model="auto"`` is the per-feature model also when the features outnumber the
      rows: a regression target carries far more information per row than a sign, the
      refinement starts from the learned scalar model and replaces it only when rows it
      never saw confirm the gain, and on wide problems the per-feature weights separate
      the informative features from the noise that one common weight must keep or drop
      together.

    The squared loss is the default because it estimates the conditional mean, which a
    squared-error score such as R² rewards, and its lower level is the cheaper; choosing
    the loss by the cross-validated criterion picks wrongly, because that criterion,
    minimised over the L1 weights on the same folds, is optimistic. Set
    ``loss="epsilon_insensitive"`` (support vector regression proper) or
    ``loss="huber"`` when a few targets are known to be outlying.

    References
    ----------
    C. L. González Vallejo, "Selección de variables a través de máquinas de soporte
    vectorial dispersas: un enfoque de optimización binivel", master's thesis, Escuela
    Politécnica Nacional, Quito, 2024.

    K. P. Bennett, J. Hu, X. Ji, G. Kunapuli and J.-S. Pang, "Model selection via bilevel
    optimization", IJCNN 2006.

    Y.-J. Lee, W.-F. Hsieh and C.-M. Huang, "ε-SSVR: a smooth support vector machine for
    ε-insensitive regression", IEEE TKDE 17, 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import BilevelSVR
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(80, 8))
    >>> y = 2.0 * X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=80)
    >>> reg = BilevelSVR(random_state=0).fit(X, y)
    >>> reg.get_support(indices=True)
    array([0, 1])
    >>> np.round(reg.coef_[:2], 1)
    array([ 2., -1.])
    """

    penalty = "l1"

    _parameter_constraints: dict = {
        **SmoothedPenaltyMixin._lower_constraints,
        "model": [StrOptions({"auto", "scalar", "vector", "group"})],
        "loss": [StrOptions(set(REGRESSION_LOSSES))],
        "epsilon": [non_negative()],
        "loss_smoothing": [positive()],
        "l2_penalty": [StrOptions({"auto"}), positive()],
        "l1_smoothing": [StrOptions({"auto"}), non_negative()],
        "criterion": [StrOptions(set(REGRESSION_CRITERIA))],
        "cv": "no_validation",
        "validation_fraction": "no_validation",
        "init_penalty": [StrOptions({"auto"}), positive()],
        "warm_init": "no_validation",
        "tol": TOL,
        "support_threshold": [positive()],
        "refit": [StrOptions({"support"}), "boolean"],
        "early_stopping": AUTO_OR_BOOL,
        "scalar_rule": [StrOptions(set(SCALAR_RULES) - {"1se_error"})],
        "refinement_rule": [StrOptions({"min", "1se"})],
        "null_test": ["boolean"],
        "n_jobs": [Integral, None],
        "blas_threads": BLAS_THREADS,
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, model="auto", feature_groups=None, loss="squared",
                 epsilon=0.1, loss_smoothing=0.1, l2_penalty="auto", l1_smoothing="auto",
                 criterion="mse", cv=5, validation_fraction=0.2, init_penalty="auto",
                 warm_init=True, penalize_intercept="auto", solver="auto", max_iter=100,
                 tol=1e-4, support_threshold=0.01, refit="support", early_stopping="auto",
                 scalar_rule="auto", refinement_rule="min", null_test=True,
                 standardize=True, n_jobs=None, blas_threads="auto", verbose=0,
                 random_state=None):
        self.model = model
        self.feature_groups = feature_groups
        self.loss = loss
        self.epsilon = epsilon
        self.loss_smoothing = loss_smoothing
        self.l2_penalty = l2_penalty
        self.l1_smoothing = l1_smoothing
        self.criterion = criterion
        self.cv = cv
        self.validation_fraction = validation_fraction
        self.init_penalty = init_penalty
        self.warm_init = warm_init
        self.penalize_intercept = penalize_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.support_threshold = support_threshold
        self.refit = refit
        self.early_stopping = early_stopping
        self.scalar_rule = scalar_rule
        self.refinement_rule = refinement_rule
        self.null_test = null_test
        self.standardize = standardize
        self.n_jobs = n_jobs
        self.blas_threads = blas_threads
        self.verbose = verbose
        self.random_state = random_state

    # the shared mixins read these; the regressor has no such options
    groups = None
    cv_repeats = 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _resolve_model(self, y, d, split, fgroups, groups, cv):
        """``model="auto"``: the group model with feature groups, else the vector model
        (see the Notes)."""
        if self.model != "auto":
            return self.model
        return "group" if fgroups is not None else "vector"

    def _l1_smoothing(self, shape):
        """γ: the given value, or ``"auto"``'s choice by the shape of X."""
        if self.l1_smoothing != "auto":
            return float(self.l1_smoothing)
        n, d = shape
        return _WIDE_L1_SMOOTHING if d >= n else _TALL_L1_SMOOTHING

    def _lower_level(self):
        """The regression :class:`~bisvm.solvers.primal.lower_level.LowerLevel`."""
        return LowerLevel(
            l2_penalty=0.01 if isinstance(self.l2_penalty, str) else float(self.l2_penalty),
            hinge_smoothing=float(self.loss_smoothing), l1_smoothing=self.l1_smoothing_,
            penalize_intercept=self._penalize_intercept(), solver=self.solver,
            loss=self.loss, epsilon=float(self.epsilon))

    @method_doc(
        "Learn the L1 weights and the regression.",
        "X_train_sparse",
        r"""y : array-like of shape (n_samples,)
            One numeric target.""",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights of the loss, the criterion and the standardisation.""",
        r"""groups : array-like of shape (n_samples,), default=None
            Sample groups for a group splitter ``cv``.""",
        returns=r"""BilevelSVR
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None, groups=None):
        t0 = time.perf_counter()
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                             accept_sparse=("csr", "csc"), multi_output=False)
        # y_numeric converts object arrays only: numeric strings too, as scikit-learn's
        # regressors do (a non-numeric string raises "could not convert")
        y = y.astype(np.float64, copy=False)
        self.l1_smoothing_ = self._l1_smoothing(X.shape)
        if self.l1_smoothing_ == 0:
            raise ValueError("l1_smoothing=0 (the exact L1 mode) is available for "
                             "BilevelSVC only; use a positive l1_smoothing")
        n = X.shape[0]
        if n < 4:
            raise ValueError(f"BilevelSVR needs at least 4 samples, got n_samples={n}")
        sw = _checked_weights(sample_weight, n)
        groups = self._checked_groups(groups, n)
        ws = np.ones(n) if sw is None else sw
        self.y_mean_ = float(ws @ y / ws.sum())
        scale = float(np.sqrt(ws @ (y - self.y_mean_) ** 2 / ws.sum()))
        self.y_scale_ = scale if scale > 0 else 1.0
        ys = (y - self.y_mean_) / self.y_scale_
        bins = _target_bins(ys, self.cv)
        loss = REGRESSION_CRITERIA[self.criterion]
        cv, _, hyper, progress = self._prepare(X, bins, "kfold", groups, False)
        settings = self._staged_settings("kfold", loss, cv, task="regression")
        if self.scalar_rule == "auto" and self.model_ != "scalar":
            # the scalar stage only starts the refinement, whose held-out rule chooses
            # the sparsity: its criterion minimum is the start
            settings = replace(settings, scalar_rule="min")
        lower = self._lower_level()
        Xa, cs = self._design(X, sw)
        # sparse wide data: CG when it is cheaper than the sample-space factor
        self.solver_ = resolve_solver(self.solver, Xa, sparse_cg=True)
        lower = self._l2(replace(lower, solver=self.solver_), X, sw)
        if scale == 0:
            # a constant target: the intercept-only model, nothing to select
            fits = None
        else:
            with limit_blas(self.blas_threads_):
                fit = fit_staged(Xa, ys, lower, hyper, settings, sw, progress=progress,
                                 split_labels=bins, groups=groups)
            fits = [scored_fit(fit, hyper, settings)]
        self._finish(fits, hyper, lower, cs, X.shape[1])
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _finish(self, fits, hyper, lower, cs, d):
        """``coef_``, ``intercept_`` (original units of X and y) and the shared
        attributes."""
        if fits is None:
            self.coef_, self.intercept_ = np.zeros(d), self.y_mean_
            self.support_ = np.zeros(d, dtype=bool)
            self.feature_importances_ = np.zeros(d)
            self.penalty_weights_ = np.array([])
            self.null_model_, self.refined_, self.n_iter_ = True, None, 0
            return
        coef = np.asarray(fits[0].coef, dtype=float) * self.y_scale_
        w, b = coef[:-1].copy(), float(coef[-1])
        if cs is not None:
            w, b = cs.to_original(w, b)
        self.coef_, self.intercept_ = w, float(b) + self.y_mean_
        self._set_stacked(fits, hyper, [lower.l2_penalty])
        if fits[0].null is not None:
            _, err, err0 = fits[0].null
            warnings.warn(
                "BilevelSVR: the learned model does not beat the intercept-only model on "
                f"the held-out folds (mean squared error {err:.3g} against {err0:.3g} in "
                "standardised units, within one standard error); the intercept-only "
                "model is returned (null_test=True). No feature carries signal this test "
                "can find: check the target, or pass null_test=False.",
                UserWarning, stacklevel=3)

    @method_doc(
        r"""Predict :math:`x^\top w + b` in the units of y.""",
        "X_original",
        returns="values")
    def predict(self, X):
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, accept_sparse=("csr", "csc"),
                          reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_


def _checked_weights(sample_weight, n):
    """Validated row weights: finite, non-negative, one per row, some positive."""
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=float)
    if sw.ndim != 1 or sw.shape[0] != n:
        raise ValueError(f"sample_weight must have shape ({n},), got {sw.shape}")
    if not np.all(np.isfinite(sw)) or np.any(sw < 0):
        raise ValueError("sample_weight must be finite and non-negative")
    if not sw.sum() > 0:
        raise ValueError("sample_weight is zero on every row")
    return sw


def _target_bins(y, cv):
    """Quantile bins of a continuous target, the labels its folds are stratified on
    (each bin keeps at least two rows per fold of an integer ``cv``)."""
    k = cv if isinstance(cv, Integral) and not isinstance(cv, bool) else 5
    n_bins = int(max(1, min(_TARGET_BINS, y.shape[0] // (2 * max(k, 2)))))
    if n_bins == 1:
        return np.zeros(y.shape[0], dtype=np.int64)
    edges = np.quantile(y, np.linspace(0, 1, n_bins + 1)[1:-1])
    return np.searchsorted(edges, y, side="right").astype(np.int64)
