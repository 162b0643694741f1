r"""``LinearSVC``: the linear SVM with scikit-learn's parameters, trained by this package's
solvers.

Objective of each binary problem (labels :math:`y_i = \pm 1`, per-sample cost
:math:`C_i = C \cdot` class weight :math:`\cdot` sample weight), with the intercept, when
fitted, as LIBLINEAR's constant feature of value ``intercept_scaling`` (so it is
penalised like the other coefficients, exactly as in scikit-learn's ``LinearSVC``):

.. math::
    \min_w\ \Omega(w) + \sum_i C_i\,\xi_i(w),\qquad
    \Omega = \tfrac12\|w\|_2^2\ (\text{penalty="l2"})\ \text{or}\ \|w\|_1\ (\text{"l1"}),

with :math:`\xi_i = \max(0, 1 - y_i w^\top x_i)` (``loss="hinge"``) or its square
(``"squared_hinge"``). Solvers:

=======  =============  =====  ==========================================================
penalty  loss           dual   solver
=======  =============  =====  ==========================================================
l2       hinge          True   dual coordinate descent (:mod:`bisvm.solvers.dual.dual_cd`)
l2       squared_hinge  True   dual coordinate descent
l2       squared_hinge  False  finite Newton, exact line search (``solvers.finite_newton``)
l1       squared_hinge  False  coordinate descent, Newton steps (``solvers.primal.l1_cd``)
l1       hinge          any    linear program, scipy ``linprog`` (HiGHS); sklearn refuses it
=======  =============  =====  ==========================================================

The dual coordinate descent stops on the relative duality gap by default (the hinge has
no smooth primal whose gradient could certify the solution; the gap bounds the relative
excess of the objective over its optimum), or on LIBLINEAR's projected-gradient rule
(``stopping="projected_gradient"``, for parity with LIBLINEAR and scikit-learn), and with
the squared hinge finishes in the primal finite Newton method when it stalls, as
LIBLINEAR's ``-s 1`` does. :class:`~bisvm.estimators.linear_cv.LinearSVCCV`
chooses ``C`` by cross-validation along a warm-started path (``warm_start``).

``multi_class="crammer_singer"`` trains one joint multiclass problem instead (Crammer &
Singer's loss :math:`\max_m (w_m^\top x_i - w_{y_i}^\top x_i + 1 - \delta_{m y_i})`,
L2 penalty on all :math:`w_m`, :mod:`bisvm.solvers.dual.crammer_singer`); ``penalty``, ``loss``
and ``dual`` are then ignored, as in scikit-learn. With two classes its two weight vectors
are reported as their difference, as scikit-learn does. ``max_iter`` caps its epochs too,
whereas scikit-learn's LIBLINEAR ignores ``max_iter`` there and always allows 100000.

Multiclass is otherwise one-vs-rest. As in LIBLINEAR (and so in scikit-learn), the class weight of
class ``k`` multiplies ``C`` for the samples of ``k`` in the ``k``-vs-rest problem only; the
"rest" samples keep ``C`` times their sample weight. In the binary case both classes get
their own class weight.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin, SparseCoefMixin
from sklearn.utils import check_random_state, compute_class_weight
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from ..losses import Hinge, MulticlassHinge, SquaredHinge
from ..solvers.dual.crammer_singer import crammer_singer_objective, solve_crammer_singer
from ..solvers.dual.dual_cd import STOPPING_RULES, solve_dual_cd, svm_primal_objective
from ..solvers.primal.finite_newton import solve_finite_newton
from ..solvers.primal.l1_cd import solve_l1_cd
from ..solvers.primal.l1_linear import solve_l1_hinge_lp
from ..solvers.problems import LinearProblem, augment_intercept
from ._constraints import DUAL, MAX_ITER, TOL, check_intercept_scaling, positive
from ._docs import method_doc

__all__ = ["LinearSVC", "primal_objective"]


_LOSSES = {"hinge": Hinge(), "squared_hinge": SquaredHinge()}


def _dual_cd(est, X, yk, cost, bias, rng, start):
    problem = LinearProblem(X, yk, _LOSSES[est.loss], cost, bias=bias)
    return solve_dual_cd(problem, alpha0=start, tol=est.tol, max_iter=est.max_iter,
                         shrinking=est.shrinking, stopping=est.stopping,
                         random_state=int(rng.randint(np.iinfo(np.int32).max)), warn=False,
                         verbose=est.verbose)


def _finite_newton(est, X, yk, cost, bias, rng, start):
    problem = LinearProblem(X, yk, SquaredHinge(), cost, bias=bias, quadratic=1.0)
    return solve_finite_newton(problem, w0=start, tol=est.tol, max_iter=est.max_iter,
                               warn=False, n_jobs=est.n_jobs,
                               verbose=_progress_level(est.verbose))


def _l1_squared_hinge(est, X, yk, cost, bias, rng, start):
    problem = LinearProblem(X, yk, SquaredHinge(), cost, bias=bias)
    return solve_l1_cd(problem, w0=start, tol=est.tol, max_iter=est.max_iter,
                       shrinking=bool(est.shrinking),
                       random_state=int(rng.randint(np.iinfo(np.int32).max)), warn=False,
                       verbose=_progress_level(est.verbose))


def _progress_level(verbose):
    """The primal solvers' ``verbose``: their per-iteration progress (stderr, through
    :mod:`bisvm.progress`) from the estimator's level 2 on; level 1 is the estimator's
    one summary line per solve on stdout, as scikit-learn's ``verbose`` prints."""
    return int(verbose) >= 2


def _l1_hinge_lp(est, X, yk, cost, bias, rng, start):
    return solve_l1_hinge_lp(LinearProblem(X, yk, Hinge(), cost, bias=bias))


#: The binary solver of each method of :meth:`LinearSVC._solver_method`: ``(estimator, X,
#: labels ±1, costs, bias, rng, start) -> SolverResult`` with ``coef`` over the features
#: and the ``intercept``; ``start`` is a warm start (the dual variables for ``dual_cd``,
#: ``w`` with the intercept feature's weight last for ``finite_newton``) or None.
_BINARY_SOLVERS = {
    "dual_cd": _dual_cd,
    "finite_newton": _finite_newton,
    "l1_sq": _l1_squared_hinge,
    "lp": _l1_hinge_lp,
}


class LinearSVC(LinearClassifierMixin, SparseCoefMixin, BaseEstimator):
    r"""Linear support vector classifier with LIBLINEAR's formulations.

    Minimises :math:`\Omega(w) + \sum_i C_i\,\xi_i(w)` per one-vs-rest problem, with
    :math:`\Omega = \tfrac12\lVert w\rVert_2^2` or :math:`\lVert w\rVert_1`,
    :math:`\xi_i = \max(0, 1 - y_i w^\top x_i)` or its square, and :math:`C_i` the
    cost ``C`` times the class and sample weights (Fan et al. 2008). The intercept is
    LIBLINEAR's constant feature of value ``intercept_scaling``, penalised like the
    other coefficients, exactly as in :class:`sklearn.svm.LinearSVC`, so the two give the
    same model. The dual problems are solved by dual coordinate descent (Hsieh et al.
    2008), the L2 primal with the squared hinge by the finite Newton method (Keerthi &
    DeCoste 2005), the L1 primal by coordinate descent, and the 1-norm SVM (L1 penalty,
    hinge loss, which scikit-learn refuses) as a linear program.

    Parameters
    ----------
    penalty : {"l2", "l1"}, default="l2"
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        ``penalty="l1"`` with ``loss="hinge"`` (the 1-norm SVM) is solved as a linear
        program; scikit-learn refuses this combination.
    dual : "auto" or bool, default="auto"
        Solve the dual (coordinate descent) or the primal. "auto" picks the primal when
        ``n_samples >= n_features`` and the primal is available, as scikit-learn does.
    tol : float, default=1e-4
        Stopping tolerance: the relative duality gap :math:`(P(w) - D(\alpha))/P(w)`
        (dual coordinate descent, the default ``stopping``; so ``tol`` bounds the relative
        excess of the returned objective over the optimum), or the projected-gradient
        spread (``stopping="projected_gradient"``); gradient norm relative to its value
        at 0 (finite Newton); 1-norm of the minimum-norm subgradient relative to its
        value at 0 (L1 coordinate descent, LIBLINEAR's ``-s 5`` rule, to which
        scikit-learn passes ``tol`` too); unused by the linear program.
    C : float, default=1.0
        Cost of the losses, :math:`C > 0`.
    multi_class : {"ovr", "crammer_singer"}, default="ovr"
        One-vs-rest binary problems, or Crammer and Singer's joint multiclass SVM.
    fit_intercept : bool, default=True
        Fit an intercept, as the weight of a constant feature of value
        ``intercept_scaling``.
    intercept_scaling : float, default=1.0
        Value of the constant intercept feature (LIBLINEAR's ``-B``).
    class_weight : dict, "balanced" or None, default=None
        Multiplies ``C`` for the samples of each class (in the ``k``-vs-rest problem,
        only for the samples of ``k``, as LIBLINEAR does); ``"balanced"`` is
        :math:`n / (K n_c)`.
    verbose : int, default=0
        1 prints a summary of each solve on stdout, 2 also one line per epoch (dual
        coordinate descent and Crammer-Singer, stdout) or the progress of each
        iteration or pass of the primal solvers (stderr, :mod:`bisvm.progress`: a bar on
        a terminal, lines otherwise).
    random_state : int, RandomState or None, default=None
        Seed of the coordinate orders: the dual solver's per-epoch permutations and the
        L1 coordinate descent's per-pass orders, one seed per binary problem drawn from
        it, as scikit-learn passes LIBLINEAR its seed. With None the dual solver draws
        from numpy's global generator (scikit-learn's behaviour), whereas the L1
        coordinate descent uses the fixed seed 0: scikit-learn documents the primal
        (``dual=False``) fits as not depending on ``random_state``, so their default
        fits are reproducible here.
    max_iter : int, default=1000
        Cap on epochs (dual) or iterations (primal).
    shrinking : bool, default=True
        Shrinking of the dual coordinate descent and of the L1 coordinate descent.
    stopping : {"duality_gap", "projected_gradient"}, default="duality_gap"
        Stopping rule of the dual coordinate descent: the relative duality gap
        :math:`(P(w) - D(\alpha))/P(w) \le` ``tol``, which bounds how far the primal
        objective is from its optimum (weak duality: :math:`D(\alpha) \le P(w^*) \le
        P(w)`), or LIBLINEAR's projected-gradient spread (the rule of scikit-learn's
        ``LinearSVC``, for parity with it; its ``tol`` is not a relative accuracy). A
        relative gap :math:`g` puts :math:`w` within :math:`\sqrt{2 g P(w)}` of the
        optimum (the primal is 1-strongly convex), so tight weights ask for a small
        ``tol``. The gap is measured less its rounding uncertainty (a margin known to
        its last bit, times :math:`C`), so a large ``C`` with a small ``tol`` stops at
        float64's resolution instead of running to ``max_iter``. With the squared hinge a dual
        solve that stalls (its gap stops falling, as on nearly collinear columns) or
        reaches ``max_iter`` is finished by the primal finite Newton method, as
        LIBLINEAR's ``-s 1`` does; ``verbose`` says so.
    warm_start : bool, default=False
        Start from the previous fit's solution when refitting on data of the same shape
        and classes: the dual variables of each one-vs-rest problem, multiplied by the
        ratio of the new ``C`` to the old and clipped to the new box (dual coordinate
        descent), or the previous ``w`` (finite Newton, L1 coordinate descent). Fitting
        along an ascending grid of ``C`` this way costs less than independent fits
        (:class:`LinearSVCCV` does it per fold). Other solvers and
        ``multi_class="crammer_singer"`` start cold.
    n_jobs : int or None, default=None
        Threads for the primal solvers' products with ``X`` (finite Newton's gradients,
        Hessian-vector products and line searches, over a row partition fixed by the
        data). The iterates, and so the model, are identical for every value; None
        means 1, -1 all cores.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights :math:`w` of each binary problem.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts (0 when ``fit_intercept=False``).
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_iter_ : int
        Largest number of iterations over the one-vs-rest problems.
    objective_ : ndarray
        Primal objective of each binary problem at the solution.
    certificate_ : ndarray of shape (n_problems,)
        The final value of each binary problem's stopping certificate (one problem with
        two classes or with Crammer-Singer, one per class in one-vs-rest), named by
        ``certificate_name_``: ``"duality_gap"`` (relative duality gap),
        ``"projected_gradient_spread"``, ``"relative_gradient_norm"`` (finite Newton,
        also after a dual solve finished in the primal), ``"max_violation"``
        (Crammer-Singer), ``"lp_optimal"`` (0, the linear program) or ``"kkt_violation"``
        (L1 coordinate descent: the largest minimum-norm subgradient entry on its last
        pass); the keys of :data:`bisvm.solvers.base.CERTIFICATES`.
    certificate_name_ : ndarray of str, shape (n_problems,)
        The name of each binary problem's certificate.
    dual_coef_ : ndarray of shape (n_problems, n_samples)
        The dual variables α of each binary problem (``w = Σ α_i y_i x_i``), kept only
        when ``warm_start`` and the dual was solved.
    n_features_in_ : int
        Number of features seen in :meth:`fit`.

    See Also
    --------
    bisvm.LinearSVCCV : The same classifier with ``C`` chosen by cross-validation.

    References
    ----------
    R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin, "LIBLINEAR: a library
    for large linear classification", JMLR 9, 2008.

    C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan, "A dual
    coordinate descent method for large-scale linear SVM", ICML 2008.

    S. S. Keerthi and D. DeCoste, "A modified finite Newton method for fast solution of
    large scale linear SVMs", JMLR 6, 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from bisvm import LinearSVC
    >>> X, y = make_classification(200, 5, n_informative=2, n_redundant=0,
    ...                            class_sep=2.0, random_state=0)
    >>> clf = LinearSVC(C=1.0).fit(X, y)
    >>> clf.coef_.shape
    (1, 5)
    >>> bool(clf.score(X, y) > 0.9)
    True

    The L1 penalty zeroes the weights of the uninformative features:

    >>> sparse = LinearSVC(penalty="l1", dual=False, C=0.05).fit(X, y)
    >>> np.flatnonzero(sparse.coef_[0])
    array([...])
    """

    _parameter_constraints: dict = {
        "penalty": [StrOptions({"l1", "l2"})],
        # the (penalty, loss, dual) combinations are checked in _solver_method
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "dual": DUAL,
        "tol": TOL,
        "C": [positive()],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "fit_intercept": "no_validation",  # read as a truth value
        # checked (by check_intercept_scaling) only when fit_intercept
        "intercept_scaling": "no_validation",
        "class_weight": "no_validation",  # checked by compute_class_weight in fit
        "verbose": "no_validation",  # read by the solvers as a level
        "random_state": "no_validation",  # checked by check_random_state in fit
        "max_iter": MAX_ITER,
        "shrinking": "no_validation",  # read as a truth value
        "stopping": [StrOptions(set(STOPPING_RULES))],
        "warm_start": ["boolean"],
        "n_jobs": [None, Integral],  # -1 or positive, checked by the primal solvers
    }

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, verbose=0, random_state=None, max_iter=1000,
                 shrinking=True, stopping="duality_gap", warm_start=False,
                 n_jobs=None):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.multi_class = multi_class
        self.verbose = verbose
        self.tol = tol
        self.C = C
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.stopping = stopping
        self.warm_start = warm_start
        self.n_jobs = n_jobs

    def _solver_method(self, X):
        """The solver of the (penalty, loss, dual) combination on ``X``; refuses the
        combinations LIBLINEAR has no solver for (and ``intercept_scaling`` <= 0 with an
        intercept), which the constraints, one parameter each, cannot express."""
        check_intercept_scaling(self.fit_intercept, self.intercept_scaling)
        if self.multi_class == "crammer_singer":
            return "crammer_singer"
        combo = (self.penalty, self.loss)
        if combo == ("l1", "hinge"):
            return "lp"
        primal_ok = combo != ("l2", "hinge")
        dual_ok = combo != ("l1", "squared_hinge")
        dual = self.dual
        if dual == "auto":
            dual = not primal_ok or (dual_ok and X.shape[0] < X.shape[1])
        # the wording starts as scikit-learn's, so that code matching it keeps working
        unsupported = (f"Unsupported set of arguments: penalty='{self.penalty}', "
                       f"loss='{self.loss}', dual={dual}: ")
        if dual and not dual_ok:
            raise ValueError(unsupported + "the L1 penalty has no dual solver; use "
                             "dual=False")
        if not dual and not primal_ok:
            raise ValueError(unsupported + "the hinge loss with the L2 penalty is solved in "
                             "the dual only (its primal is not differentiable); use "
                             "dual=True")
        return "dual_cd" if dual else ("finite_newton" if self.penalty == "l2" else "l1_sq")

    @method_doc(
        "Fit one binary problem (two classes) or one per class (one-vs-rest).",
        "X_train_sparse",
        "y_labels",
        "sample_weight_C",
        returns=r"""LinearSVC
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        previous = self._warm_state(X)
        # CSR float64 with int32 or int64 indices reaches the solvers as it is
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C",
                             accept_large_sparse=True)
        check_classification_targets(y)
        method = self._solver_method(X)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError("LinearSVC needs samples of at least 2 classes; the data "
                             f"contains only one class: {self.classes_[0]!r}")
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        cw = compute_class_weight(self.class_weight, classes=self.classes_, y=y,
                                  sample_weight=sample_weight)
        y_ind = np.searchsorted(self.classes_, y)
        for k in range(self.classes_.size):
            # a class without weight would be fitted as absent and never predicted
            if not np.any(cw[k] * sw[y_ind == k] > 0):
                raise ValueError(f"sample_weight: class {self.classes_[k]!r} has no sample of "
                                 "positive weight")
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        rng = check_random_state(0 if self.random_state is None and method == "l1_sq"
                                 else self.random_state)
        if method == "crammer_singer":
            coef, intercept, n_iter, results = self._fit_crammer_singer(
                X, y_ind, cw, sw, bias, rng)
        else:
            coef, intercept, n_iter, results = self._fit_ovr(
                X, y_ind, cw, sw, bias, rng, method, previous)
        if not all(r.converged for r in results):
            gaps = [r.stats["relative_gap"] for r in results if "relative_gap" in r.stats]
            reached = f", relative duality gap reached {max(gaps):.3g}" if gaps else ""
            warnings.warn(f"LinearSVC ({method}) stopped on max_iter={self.max_iter} before "
                          f"tol={self.tol}{reached}; increase max_iter", ConvergenceWarning,
                          stacklevel=2)
        self.coef_ = np.ascontiguousarray(coef)
        self.intercept_ = intercept if self.fit_intercept else np.zeros(coef.shape[0])
        self.n_iter_ = int(n_iter)
        self.objective_ = np.array([r.objective for r in results])
        self.certificate_ = np.array([r.certificate_value for r in results], dtype=float)
        self.certificate_name_ = np.array([r.certificate for r in results])
        if self.warm_start and method == "dual_cd":
            self.dual_coef_ = np.vstack([r.dual_coef for r in results])
        elif hasattr(self, "dual_coef_"):
            del self.dual_coef_
        self._warm = (float(self.C), X.shape, method, self.classes_.copy())
        return self

    def _warm_state(self, X):
        """The previous fit's ``(C, shape, method, classes)`` when ``warm_start`` may
        use it (None otherwise); the rest is checked against the new data in
        :meth:`_starts`."""
        if not self.warm_start or not hasattr(self, "_warm") or not hasattr(X, "shape"):
            return None
        return self._warm

    def _starts(self, previous, method, X, n_tasks, bias):
        """One warm start per binary problem, or ``None`` each: the previous dual
        variables scaled by ``C / C_old`` (the solver clips them to the new box), or the
        previous ``w``, when the data has the shape, classes and solver of the previous
        fit."""
        if (previous is None or previous[1] != X.shape or previous[2] != method
                or not np.array_equal(previous[3], self.classes_)):
            return [None] * n_tasks
        if method == "dual_cd" and hasattr(self, "dual_coef_"):
            if self.dual_coef_.shape[0] == n_tasks:
                return list(self.dual_coef_ * (float(self.C) / previous[0]))
        if method in ("finite_newton", "l1_sq") and self.coef_.shape[0] == n_tasks:
            if bias > 0:
                return list(np.c_[self.coef_, self.intercept_ / bias])
            return list(self.coef_)
        return [None] * n_tasks

    def _fit_ovr(self, X, y_ind, cw, sw, bias, rng, method, previous):
        """One binary problem (two classes) or one per class, each by the solver of
        ``_BINARY_SOLVERS[method]``; returns ``(coef, intercept, n_iter, results)``."""
        if self.classes_.size == 2:
            tasks = [(np.where(y_ind == 1, 1.0, -1.0), cw[y_ind])]
        else:
            tasks = [(np.where(y_ind == k, 1.0, -1.0), np.where(y_ind == k, cw[k], 1.0))
                     for k in range(self.classes_.size)]
        solver = _BINARY_SOLVERS[method]
        starts = self._starts(previous, method, X, len(tasks), bias)
        results = []
        for (yk, cwk), start in zip(tasks, starts, strict=True):
            r = solver(self, X, yk, self.C * cwk * sw, bias, rng, start)
            if self.verbose and method != "dual_cd":
                print(f"LinearSVC ({method}): {r.n_iter} iterations, objective "
                      f"{r.objective:.10g}")
            results.append(r)
        return (np.vstack([r.coef for r in results]),
                np.array([r.intercept for r in results], dtype=float),
                max(r.n_iter for r in results), results)

    def _fit_crammer_singer(self, X, y_ind, cw, sw, bias, rng):
        """The joint multiclass problem; with two classes the two weight vectors are
        reported as their difference (scikit-learn's convention)."""
        cost = self.C * cw[y_ind] * sw
        problem = LinearProblem(X, y_ind, MulticlassHinge(), cost, bias=bias)
        r = solve_crammer_singer(problem, n_classes=self.classes_.size, tol=self.tol,
                                 max_iter=self.max_iter,
                                 random_state=int(rng.randint(np.iinfo(np.int32).max)),
                                 warn=False, verbose=self.verbose)
        coef, intercept = r.coef, np.asarray(r.intercept, dtype=float)
        if self.classes_.size == 2:
            coef, intercept = (coef[1] - coef[0])[None, :], intercept[1:] - intercept[:1]
        return coef, intercept, r.n_iter, [r]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def primal_objective(est, X, y, sample_weight=None):
    """Primal objective of each binary problem of a fitted :class:`LinearSVC`-like model
    (also scikit-learn's), in the formulation of the module docstring."""
    classes = est.classes_
    y_ind = np.searchsorted(classes, y)
    cw = compute_class_weight(getattr(est, "class_weight", None), classes=classes, y=y)
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    bias = float(est.intercept_scaling) if est.fit_intercept else 0.0
    if getattr(est, "multi_class", "ovr") == "crammer_singer":
        if classes.size == 2:
            raise ValueError("the two-class Crammer-Singer model keeps only the difference "
                             "of its weight vectors: its objective cannot be recovered")
        W = est.coef_ if bias == 0 else np.c_[est.coef_, est.intercept_ / bias]
        return np.array([crammer_singer_objective(X, y_ind, W, est.C * cw[y_ind] * sw, bias)])
    out = []
    for k in range(est.coef_.shape[0]):
        if classes.size == 2:
            yk, cwk = np.where(y_ind == 1, 1.0, -1.0), cw[y_ind]
        else:
            yk, cwk = np.where(y_ind == k, 1.0, -1.0), np.where(y_ind == k, cw[k], 1.0)
        w = est.coef_[k]
        if bias > 0:
            w = np.r_[w, est.intercept_[k] / bias]
        cost = est.C * cwk * sw
        if est.penalty == "l2":
            out.append(svm_primal_objective(X, yk, w, cost, est.loss, bias))
        else:
            z = np.asarray(augment_intercept(X, bias) @ w).ravel()
            out.append(float(np.abs(w).sum() + cost @ _LOSSES[est.loss].value(yk, z)))
    return np.array(out)
