r"""A kernel SVM that tunes itself: :class:`AutoSVC` learns C and its RBF widths -- one
shared width, or one per feature -- by hypergradient descent of a k-fold validation
criterion, then refits a plain :class:`~bisvm.SVC` at the learned values.

The lower level is the L2-SVM (squared hinge)

.. math::
    \min_{w,b}\ \tfrac12\lVert w\rVert^2 + \tfrac C2\sum_i\max(0, 1 - y_if(x_i))^2,
    \qquad k(x, x') = \exp\Bigl(-\sum_j\gamma_j(x_j - x'_j)^2\Bigr),

solved by bisvm's SMO, whose solution is differentiable in :math:`(C, \gamma)` wherever
its free support vectors do not change; the hypergradient is the adjoint of their KKT
system (Keerthi, Sindhwani & Chapelle 2007, "An efficient method for gradient-based
adaptation of hyperparameters in SVM models"; per-feature widths as in Chapelle, Vapnik,
Bousquet & Mukherjee 2002, "Choosing multiple parameters for support vector machines").
The stages are those of :mod:`bisvm.selection.kernel_fit`.

Beyond :data:`EXACT_MAX_ROWS` rows (``approximation="auto"``), the lower level is the
same L2-SVM on a Nyström approximation of the kernel (Williams & Seeger 2001, "Using the
Nyström method to speed up kernel machines"): a linear squared-hinge SVM on the
features :math:`\Phi = K(X, Z)K(Z, Z)^{-1/2}` of m landmark rows Z, whose hypergradient
reaches the widths through Φ's dependence on them
(:mod:`bisvm.selection.kernel_nystroem`).
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..data.standardize import weighted_column_stats
from ..progress import OuterIterations
from ..selection.kernel_bilevel import KERNEL_CRITERIA
from ..selection.kernel_fit import SCAN_C, tune_kernel_svc
from ..selection.kernel_nystroem import nystroem_pairs
from ..solvers.dual.kernel_lower_level import KernelL2SVM, rbf_gram
from ..solvers.dual.smo import resolve_n_jobs
from ..solvers.nystroem import (
    DEFAULT_COMPONENTS,
    landmark_coef,
    nystroem_blocks,
    select_landmarks,
    solve_piecewise_l2,
)
from ._constraints import positive
from ._docs import method_doc
from ._multiclass import class_pairs, ovr_aggregate, votes
from .svm import SVC

__all__ = ["AutoSVC", "EXACT_MAX_ROWS"]

#: ``approximation="auto"`` keeps the exact kernel up to this many rows (after rows of
#: weight 0 are left out) and tunes on the Nyström approximation beyond, with a
#: warning. The exact lower level forms each fold's training Gram matrix at every
#: solve: with the default 3 folds, 20,000 rows make blocks of 13,334² entries (1.4 GB),
#: the most a kernel machine on one workstation sensibly holds; the approximation's cost
#: is :math:`O(nm^2)` per evaluation and its memory :math:`O(nm)`.
EXACT_MAX_ROWS = 20000


class AutoSVC(SelectorMixin, ClassifierMixin, BaseEstimator):
    r"""RBF support vector classifier whose C and kernel widths are learned.

    The lower level is the L2-SVM (squared hinge) with the RBF kernel
    :math:`k(x, x') = \exp(-\sum_j\gamma_j(x_j - x'_j)^2)`; its solution is
    differentiable in :math:`(C, \gamma)` wherever its free support vectors do not
    change, so C and the widths are learned by descending the k-fold validation
    criterion along its hypergradient, the adjoint of the free support vectors' KKT
    system (Keerthi, Sindhwani & Chapelle 2007; per-feature widths as in Chapelle et
    al. 2002). A plain :class:`~bisvm.SVC` is then refitted on all rows at the learned
    values. Per-feature widths select features: a width learned near 0 removes its
    feature from the kernel. Beyond :data:`~bisvm.estimators.auto_svc.EXACT_MAX_ROWS`
    rows the same machine is tuned and refitted on a Nyström approximation of the
    kernel (Williams & Seeger 2001).

    Parameters
    ----------
    widths : {"shared", "per_feature"}, default="shared"
        One RBF width γ for all features, or one width :math:`\gamma_j` per feature
        (automatic relevance determination: a width learned near 0 removes its feature
        from the kernel, which is nonlinear feature selection).
    standardize : bool, default=True
        Divide each feature by its standard deviation before the kernel (the RBF kernel
        is translation invariant, so centring is not needed and sparse input stays
        sparse); the widths are then in units of standard deviations.
    cv : int, cross-validation generator or iterable, default=3
        Folds of the validation criterion (scikit-learn's ``cv``; an int means
        stratified k-fold, reduced to the smallest class count when that is smaller).
        The default is 3 because every row is a validation row once whatever k is, so
        the criterion's standard error hardly depends on k, while each evaluation costs
        k solves on :math:`(1 - 1/k)n` rows; the price is a slight pessimistic bias
        towards smoother models (Kohavi 1995). See the estimator notes of the
        documentation for the comparison with a 5-fold grid.
    criterion : str, default="scaled_squared_hinge"
        ``"scaled_squared_hinge"``, ``"squared_hinge"`` or ``"logistic"``: the
        validation loss of the fold outputs :math:`f_V`
        (:mod:`bisvm.selection.criteria`): the mean squared hinge
        :math:`\tfrac12\max(0, 1 - s y f)^2` at the best output scale s (the loss the
        L2-SVM minimises, judged on unseen rows after the rescaling a Platt calibration
        would make). Why scale-free: the raw squared hinge (``"squared_hinge"``) and the
        logistic loss (``"logistic"``) also reward larger outputs, which only a larger C
        gives, so they drive C towards the hard margin (and SMO into its slowest range)
        even where the classes overlap.
    multiclass : {"ovo", "ovr"}, default="ovo"
        Binary machines as in :class:`~bisvm.SVC`; one set of hyperparameters for all,
        learned on the mean of the machines' criteria.
    max_iter : int, default=50
        BiSVM L-BFGS iterations per stage.
    tol : float, default=1e-4
        Outer stopping tolerance on the gradient norm in log-parameters.
    select : {"1se", "none"}, default="1se"
        With per-feature widths: which features ``support_`` keeps (see Notes) -- the
        one-standard-error rule, or all of them.
    probability : bool, default=False
        Fit Platt sigmoids on cross-validated decision values of the refit, for
        :meth:`predict_proba` (exact kernel only).
    shrinking : bool, default=True
        SMO's shrinking heuristic in every solve; the solution does not depend on it.
    cache_size : float, default=200
        Size of SMO's kernel column cache, in MB.
    class_weight : dict, "balanced" or None, default=None
        Multipliers of C per class, as in :class:`~bisvm.SVC`; with ``sample_weight``
        they multiply C per row in every tuning solve and in the refit, and weigh the
        validation rows of the criterion, so that the hyperparameters are chosen for the
        weighted risk the refit minimises.
    approximation : {"auto", "nystroem"} or None, default="auto"
        Tune and refit the L2-SVM on the rank-``n_components`` Nyström approximation of
        the kernel (:mod:`bisvm.selection.kernel_nystroem`): a linear squared-hinge SVM
        on the features :math:`\Phi = K(X, Z)K(Z, Z)^{-1/2}` of landmark rows Z, at
        :math:`O(nm^2)` per evaluation of the criterion and :math:`O(nm)` memory instead
        of the exact machine's n×n Gram blocks. ``"auto"`` uses it beyond
        :data:`EXACT_MAX_ROWS` rows and says so by a ``UserWarning``; None keeps the
        exact kernel. ``probability=True`` needs the exact kernel.
    n_components : int, default=500
        Rank m of the Nyström approximation (landmark rows).
    landmarks : {"kmeans++", "uniform"}, default="kmeans++"
        How the landmark rows are drawn
        (:func:`~bisvm.solvers.nystroem.select_landmarks`).
    random_state : int, RandomState or None
        Seed of the fresh folds of the support rule, of the landmarks and of the
        probability calibration.
    verbose : int, default=0
        Show the outer iterations of each stage on stderr (:mod:`bisvm.progress`): a bar
        with the criterion on a terminal, else one line per iteration.
    n_jobs : int or None, default=None
        Threads of the SMO kernel engine and of the BLAS products (Gram blocks,
        free-set Cholesky factors) in every solve; the folds run one after the other,
        so fold work and threads never compete for the same cores, and the result does
        not depend on ``n_jobs``.

    Attributes
    ----------
    lower_ : str
        ``"l2svm"``: the lower level that ran (the L2-SVM; with
        :attr:`approximation_`, on the Nyström features).
    approximation_ : str or None
        ``"nystroem"`` when the kernel was approximated, else None.
    C_ : float
        Learned C (of the squared-hinge loss, as :class:`~bisvm.SVC` with
        ``loss="squared_hinge"`` uses it).
    gamma_ : float or ndarray of shape (n_features,)
        Widths of the final model on the standardised features (per feature: 0 for the
        features outside ``support_``).
    learned_gamma_ : float or ndarray
        The widths the outer loop ended at, before the support rule.
    scale_ : ndarray of shape (n_features,)
        Column multipliers :math:`\sqrt{\gamma_j}/\sigma_j` applied before
        ``estimator_`` (an RBF kernel of width 1 on the rescaled columns).
    estimator_ : SVC or None
        The refitted :class:`~bisvm.SVC` (``loss="squared_hinge"``, ``gamma=1``) on all
        rows; ``estimator_.support_`` holds the support vectors. None with the Nyström
        approximation, whose model is the kernel expansion :attr:`dual_coef_`,
        :attr:`intercept_` on the landmarks :attr:`X_fit_`.
    landmark_indices_ : ndarray of int
        Nyström only: the training rows chosen as landmarks.
    X_fit_ : ndarray of shape (m, n_features)
        Nyström only: the landmark rows, rescaled by :attr:`scale_`.
    dual_coef_ : ndarray of shape (m, n_machines)
        Nyström only: per binary machine (as :class:`~bisvm.SVC` orders them; one for
        two classes, positive for ``classes_[1]``),
        :math:`f(x) = \sum_k a_k\exp(-\lVert x - z_k\rVert^2) + b` over the rescaled
        landmarks, the L2-SVM on all rows' Nyström features at the learned values.
    intercept_ : ndarray of shape (n_machines,)
        Nyström only: the machines' intercepts b.
    feature_importances_ : ndarray of shape (n_features,)
        Relevances :math:`\gamma_j\,\mathrm{var}(x_j)` (inverse squared length scales in
        the features' own units), normalised to sum to 1; equal for a shared width.
    support_ : ndarray of bool, shape (n_features,)
        Selected features (all for a shared width).
    threshold_ : float
        Relevance at and above which a feature is kept.
    cv_value_ : float
        The k-fold criterion at the learned hyperparameters.
    n_solves_ : int
        L2-SVM solves made by the tuning (one per binary problem and fold each).
    class_weight_ : ndarray of shape (n_classes,)
        The multipliers of C per class used.
    n_iter_ : int
        Accepted BiSVM L-BFGS iterates over the stages (each stage's start included).
    tuning_ : KernelTuneResult
        Start, scan, outer histories and support tests.

    Notes
    -----
    **Cost.** The start costs 3 to 4 evaluations of the criterion (a scan of C at the
    median-heuristic width, each solve warm-started from the previous C's), and every
    outer iteration one or a few more; each evaluation is one L2-SVM solve per fold and
    binary machine, warm-started from the last (an active-set correction of the last
    free set usually certifies the new optimum without an SMO pass). The shared-width
    stage keeps C and γ in a box (:data:`~bisvm.selection.kernel_fit.C_BOUNDS`,
    :data:`~bisvm.selection.kernel_fit.GAMMA_RANGE`) and stops once an iteration gains
    less than a tenth of the criterion's standard error
    (:data:`~bisvm.selection.kernel_fit.SE_FRACTION`): along the valley
    :math:`C\gamma` = constant the criterion is flat to within its noise, and walking it
    only leads to large C, where solves are slowest.

    **Multiclass.** One set of hyperparameters for all binary machines (one-vs-one or
    one-vs-rest, as :class:`~bisvm.SVC` builds them), learned on the mean of their
    criteria: the machines share the kernel of the refit, as an :class:`~bisvm.SVC` of
    one C and one γ does, and one set is learned from all the validation rows rather
    than a set per machine from a fraction of them.

    **Why the refit is the L2-SVM.** The learned C is the optimum of the squared-hinge
    machine's validation criterion; C has a different scale for the hinge loss, and
    transferring it would refit a model that was never validated.

    **Support rule** (``select="1se"``): features are ranked by relevance, and
    ``support_`` is the smallest top-k set whose model (the other widths set to 0) has a
    k-fold criterion within one standard error of the full model's, found by bisection
    on k (:func:`~bisvm.selection.kernel_bilevel.width_support`), on a fresh shuffled
    split into the same number of folds: judged on the folds that tuned them, weak
    widths fitted to those rows would look significant. It costs
    :math:`\lceil\log_2 d\rceil + 1` L2-SVM solves per binary problem and fold. γ is
    learned on a log scale: "dropped" means outside this set, not a width of exactly
    zero; the final model sets those widths to 0.

    References
    ----------
    S. S. Keerthi, V. Sindhwani and O. Chapelle, "An efficient method for gradient-based
    adaptation of hyperparameters in SVM models", NIPS 2007.

    O. Chapelle, V. Vapnik, O. Bousquet and S. Mukherjee, "Choosing multiple parameters
    for support vector machines", Machine Learning 46, 2002.

    C. K. I. Williams and M. Seeger, "Using the Nyström method to speed up kernel
    machines", NIPS 2001.

    R. Kohavi, "A study of cross-validation and bootstrap for accuracy estimation and
    model selection", IJCAI 1995.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import AutoSVC
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-2, 2, size=(80, 4))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 2).astype(int)
    >>> clf = AutoSVC(widths="per_feature", random_state=0).fit(X, y)
    >>> clf.get_support(indices=True)
    array([0, 1])
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "widths": [StrOptions({"shared", "per_feature"})],
        "standardize": ["boolean"],
        "cv": ["cv_object"],
        "criterion": [StrOptions(set(KERNEL_CRITERIA))],
        "multiclass": [StrOptions({"ovo", "ovr"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [positive()],
        "select": [StrOptions({"1se", "none"})],
        "probability": ["boolean"],
        "shrinking": ["boolean"],
        "cache_size": [positive()],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "approximation": [StrOptions({"auto", "nystroem"}), None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "landmarks": [StrOptions({"kmeans++", "uniform"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": [None, Integral],
    }

    def __init__(self, widths="shared", standardize=True, cv=3, criterion="scaled_squared_hinge",
                 multiclass="ovo", max_iter=50, tol=1e-4, select="1se", probability=False,
                 shrinking=True, cache_size=200, class_weight=None, approximation="auto",
                 n_components=DEFAULT_COMPONENTS, landmarks="kmeans++", random_state=None,
                 verbose=0, n_jobs=None):
        self.widths = widths
        self.standardize = standardize
        self.cv = cv
        self.criterion = criterion
        self.multiclass = multiclass
        self.max_iter = max_iter
        self.tol = tol
        self.select = select
        self.probability = probability
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.approximation = approximation
        self.n_components = n_components
        self.landmarks = landmarks
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _splits(self, X, y_enc, kept):
        """The folds over the rows ``kept`` (positive weight): an int ``cv`` is
        stratified k-fold on them, with k reduced to the smallest class count (at least 2
        rows per class are needed); other splitters see every row, and the rows of
        weight 0 are left out of their folds."""
        cv = self.cv
        if isinstance(cv, Integral):
            m = int(np.bincount(y_enc[kept], minlength=y_enc.max() + 1).min())
            if m < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least 2 samples of every class for its "
                    f"cross-validated criterion; the smallest class has {m}")
            cv = min(int(cv), m)
            folds = check_cv(cv, y_enc[kept], classifier=True).split(X[kept], y_enc[kept])
            return [(kept[tr], kept[va]) for tr, va in folds]
        return list(check_cv(cv, y_enc, classifier=True).split(X, y_enc))

    def _row_weights(self, X, y, y_enc, sample_weight):
        """Sample weights (finite; rows of weight <= 0 dropped, as :class:`~bisvm.SVC`
        drops them) and the class weights; returns ``(sample weights, class weights,
        row weights or None when all are 1)``."""
        n = X.shape[0]
        if sample_weight is None:
            sw = np.ones(n)
        else:
            sw = np.asarray(sample_weight, dtype=np.float64)
            if sw.ndim == 0:
                sw = np.full(n, float(sw))
            if sw.shape != (n,):
                raise ValueError(f"sample_weight must have shape ({n},), got {sw.shape}")
            if not np.all(np.isfinite(sw)):
                raise ValueError("sample_weight must be finite (no NaN or inf)")
            sw = np.where(sw > 0, sw, 0.0)
            if not sw.sum() > 0:
                raise ValueError("sample_weight: every weight is zero or negative; the "
                                 "samples of each class need some positive weight")
        if self.class_weight is None:
            cw = np.ones(self.classes_.size)
        else:
            cw = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
            if np.any(cw <= 0) or not np.all(np.isfinite(cw)):
                raise ValueError("class_weight must give positive finite weights")
        rw = cw[y_enc] * sw
        lost = [self.classes_[c] for c in range(cw.size) if not np.any(rw[y_enc == c] > 0)]
        if lost:
            raise ValueError(f"sample_weight: class(es) {lost!r} have no sample of positive "
                             "weight")
        uniform = sample_weight is None and self.class_weight is None
        return sw, cw, None if uniform else rw

    @method_doc(
        "Learn C and the widths on k folds, then refit on all rows.",
        "X_train_sparse",
        "y_labels",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Multiplies C per row (with ``class_weight``) in the tuning and in the refit,
            weighs the rows in the validation criterion and in the standardisation;
            rows of weight <= 0 are dropped, as :class:`~bisvm.SVC` drops them.""",
        returns=r"""AutoSVC
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        classes, y_enc = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"got 1 class ({classes[0]!r})")
        self.classes_ = classes
        sw, self.class_weight_, row_w = self._row_weights(X, y, y_enc, sample_weight)
        d = X.shape[1]
        _, std, const = weighted_column_stats(X, None if sample_weight is None else sw)
        sigma = np.where(const | ~(std > 0), 1.0, std) if self.standardize else np.ones(d)
        Xs = X @ sp.diags(1.0 / sigma) if sp.issparse(X) else X / sigma
        if sp.issparse(Xs):
            Xs = sp.csr_matrix(Xs)
        lower = KernelL2SVM(shrinking=bool(self.shrinking), cache_size=float(self.cache_size),
                            n_jobs=self.n_jobs)
        kept = np.flatnonzero(sw > 0)
        self.lower_, self.approximation_ = "l2svm", self._resolve(kept.size)
        Z = None
        if self.approximation_ == "nystroem":
            seed = check_random_state(self.random_state).randint(2**31 - 1)
            self.landmark_indices_ = kept[select_landmarks(
                Xs[kept], int(self.n_components), self.landmarks, seed)]
            Z = Xs[self.landmark_indices_]
            Z = Z.toarray() if sp.issparse(Z) else Z
        splits = self._splits(Xs, y_enc, kept)
        fresh = None
        if self.widths == "per_feature" and self.select == "1se":
            seed = check_random_state(self.random_state).randint(2**31 - 1)
            fresh = [(kept[tr], kept[va]) for tr, va in
                     StratifiedKFold(len(splits), shuffle=True, random_state=seed)
                     .split(Xs[kept], y_enc[kept])]
        progress = (lambda stage: OuterIterations(f"AutoSVC {stage}", mode="auto")) \
            if self.verbose else None
        # the Gram products and Cholesky factors of the tuning use as many BLAS threads
        # as n_jobs gives the kernel engine (one by default), as SVC's solves do
        with threadpool_limits(limits=resolve_n_jobs(self.n_jobs), user_api="blas"):
            res = tune_kernel_svc(Xs, y_enc, classes.size, splits, widths=self.widths,
                                  loss=self.criterion, multiclass=self.multiclass, Cs=SCAN_C,
                                  max_iter=self.max_iter, tol=self.tol, lower=lower,
                                  support_rule="1se" if self.select == "1se" else "none",
                                  support_splits=fresh, row_weight=row_w, progress=progress,
                                  landmarks=Z)
        self.tuning_ = res
        self.C_ = res.C
        set_learned_widths(self, res, std, sigma)
        self.cv_value_ = res.value
        self.n_solves_ = res.n_solves
        self.n_iter_ = int(sum(len(h) for h in res.history))
        if self.approximation_ == "nystroem":
            with threadpool_limits(limits=resolve_n_jobs(self.n_jobs), user_api="blas"):
                self._refit_nystroem(self._rescale(X), y_enc, row_w, kept)
            return self
        self.estimator_ = SVC(C=self.C_, kernel="rbf", gamma=1.0, loss="squared_hinge",
                              multiclass=self.multiclass, probability=self.probability,
                              shrinking=self.shrinking, cache_size=self.cache_size,
                              class_weight=self.class_weight,
                              random_state=self.random_state, n_jobs=self.n_jobs)
        self.estimator_.fit(self._rescale(X), y,
                            sample_weight=None if sample_weight is None else sw)
        return self

    def _resolve(self, n):
        """The approximation that runs on ``n`` rows (module constant
        :data:`EXACT_MAX_ROWS`), with the warning of ``"auto"``."""
        approx = self.approximation
        if approx == "auto":
            approx = "nystroem" if n > EXACT_MAX_ROWS else None
            if approx is not None:
                warnings.warn(
                    f"{type(self).__name__}: {n} rows > {EXACT_MAX_ROWS}, so the L2-SVM is "
                    f"tuned and fitted on a Nyström approximation of rank "
                    f"{min(self.n_components, n)} (approximation='auto'); pass "
                    f"approximation=None for the exact kernel", UserWarning, stacklevel=3)
        if approx == "nystroem" and self.probability:
            raise ValueError("probability=True needs the exact kernel: pass "
                             "approximation=None (the Nyström model has no calibration)")
        return approx

    def _refit_nystroem(self, Xr, y_enc, row_w, kept):
        """The L2-SVM on all rows' Nyström features at the learned C (the widths are in
        :attr:`scale_`, so the kernel has width 1), one machine per binary problem: the
        model whose criterion was minimised, as a kernel expansion on the landmarks."""
        Z = Xr[self.landmark_indices_]
        self.X_fit_ = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
        _, _, L, Phi = nystroem_blocks(Xr, self.X_fit_, 1.0)
        machines = nystroem_pairs(y_enc, self.classes_.size, [(kept, kept)],
                                  self.multiclass, row_w)[0]
        coef, icpt = [], []
        for mc in machines:
            sol = solve_piecewise_l2(Phi[mc.train], *mc.pieces(), self.C_)
            coef.append(landmark_coef(L, sol.theta))
            icpt.append(float(sol.theta[0]))
        self.dual_coef_, self.intercept_ = np.column_stack(coef), np.array(icpt)
        self.estimator_ = None

    def _raw(self, Xr):
        """Per-machine decision values of the Nyström model (positive: first class)."""
        return rbf_gram(Xr, self.X_fit_, 1.0) @ self.dual_coef_ + self.intercept_

    def _rescale(self, X):
        """Columns multiplied by :attr:`scale_` (sparse stays sparse)."""
        if sp.issparse(X):
            return sp.csr_matrix(X @ sp.diags(self.scale_))
        return X * self.scale_

    def _checked(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self._rescale(X)

    @method_doc(
        "Evaluate the decision function of the tuned machine.",
        "X_original",
        returns=r"""ndarray of shape (n_samples,) or (n_samples, n_classes)
            As :meth:`bisvm.SVC.decision_function` of :attr:`estimator_` (or of the
            Nyström machine).""")
    def decision_function(self, X):
        Xr = self._checked(X)
        if self.estimator_ is None:
            raw, k = self._raw(Xr), self.classes_.size
            if k == 2:
                return raw[:, 0]
            return raw if self.multiclass == "ovr" else ovr_aggregate(raw, class_pairs(k, True), k)
        return self.estimator_.decision_function(Xr)

    @method_doc(
        "Predict the class of each sample with the tuned machine.",
        "X_original",
        returns="labels")
    def predict(self, X):
        Xr = self._checked(X)
        if self.estimator_ is None:
            raw, k = self._raw(Xr), self.classes_.size
            if k == 2:
                return self.classes_[(raw[:, 0] > 0).astype(int)]
            if self.multiclass == "ovr":
                return self.classes_[np.argmax(raw, axis=1)]
            return self.classes_[np.argmax(votes(raw, class_pairs(k, True), k)[0], axis=1)]
        return self.estimator_.predict(Xr)

    def _has_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_has_proba)
    @method_doc(
        "Estimate the Platt-calibrated class probabilities (``probability=True``).",
        "X_original",
        returns=r"""ndarray of shape (n_samples, n_classes)
            :meth:`bisvm.SVC.predict_proba` of :attr:`estimator_`.""")
    def predict_proba(self, X):
        Xr = self._checked(X)
        return self.estimator_.predict_proba(Xr)

    @available_if(_has_proba)
    @method_doc(
        "Estimate the logarithm of the class probabilities (``probability=True``).",
        "X_original",
        returns="log_proba")
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_


def set_learned_widths(est, res, std, sigma):
    """Set the width attributes of a self-tuning kernel estimator from its tuning result
    ``res``: ``gamma_`` (pruned to the support), ``learned_gamma_``, ``scale_`` (the
    column factors of the refit), ``feature_importances_`` (relevance
    :math:`\\gamma_j\\operatorname{var}(x_j)` in the features' own units, normalised),
    ``support_`` and ``threshold_``. ``std`` are the columns' standard deviations and
    ``sigma`` the scales the widths were learned on."""
    d = std.size
    per = est.widths == "per_feature"
    est.gamma_ = res.gamma_support.copy() if per else float(res.gamma[0])
    est.learned_gamma_ = res.gamma.copy() if per else float(res.gamma[0])
    g = np.broadcast_to(np.asarray(est.gamma_, dtype=float), (d,))
    est.scale_ = np.sqrt(g) / sigma
    # a width g on x / sigma is g / sigma^2 in the feature's units
    rel = np.broadcast_to(np.asarray(est.learned_gamma_, float), (d,)) * (std / sigma) ** 2
    tot = float(rel.sum())
    est.feature_importances_ = rel / tot if tot > 0 else np.full(d, 1.0 / d)
    mask = np.ones(d, dtype=bool)
    if per and res.support is not None:
        mask[:] = False
        mask[res.support] = True
    est.support_ = mask
    est.threshold_ = float(est.feature_importances_[mask].min()) if per else 0.0
