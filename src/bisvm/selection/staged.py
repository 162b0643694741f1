r"""The stages of one binary ``BilevelSVC`` fit.

1. **Scalar stage**, on the k folds of *all* training rows: the criterion on a short
   log-spaced path of the scalar β (:func:`~bisvm.selection.search.scalar_scan`), then
   BiSVM L-BFGS from the best scan point, then the ``scalar_rule`` along the path
   (:mod:`~bisvm.selection.one_se`). For ``model="scalar"`` this is the model.
2. **Refinement** (vector and group models), from the scalar β broadcast to every
   weight. When early stopping applies, a stratified 1/k of the rows is held out: β is
   refined by BiSVM L-BFGS on the k folds of the other rows, and the held-out rows, which
   no fold trains or validates on, only *judge* it
   (:class:`~bisvm.selection.early_stopping.HeldOutMonitor` with ``refinement_rule``).
   A rejected refinement (the monitor keeps the start) gives exactly the scalar model.
3. **Refit** on all rows at the chosen β.
4. **Decision checks** (``null_test``, ``threshold``), on the out-of-fold
   outputs of the k folds of all rows at the chosen β
   (:mod:`~bisvm.selection.decision`): the intercept-only model replaces one that does
   not beat the majority class by one paired standard error, and the threshold's rule
   (Platt's calibration for ``"calibrated"``) shifts the refit's intercept.

Why the scalar stage sees every row: withheld rows are fewer rows for the one weight that
matters most; the one-weight model cannot overfit its criterion the way d weights can,
so it learns on all of them, and only the many-weight refinement has to prove itself on
rows it never saw.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, replace

import numpy as np

from ..data.standardize import ColumnStandardizer
from ..names import CRITERIA as _NAMES
from .bilevel import BilevelObjective, Fold, make_hyper_model
from .decision import (
    beats_null,
    beats_null_balanced,
    beats_null_regression,
    one_se_balanced_shift,
    out_of_fold,
    out_of_fold_counts,
    out_of_fold_regression,
    platt_shift,
    platt_slope,
)
from .model import beta_upper_bound
from .one_se import one_se_error_scalar, one_se_scalar
from .outer import BiSVMLBFGS
from .search import last_argmin, scalar_scan
from .splits import holdout_splits, validation_splits
from .support import (
    expand,
    restrict_folds,
    restrict_hyper,
    support_mask,
    thresholded_value,
)

__all__ = ["StagedSettings", "StagedFit", "fit_staged", "weighted_folds",
           "UNBALANCED_SHARE", "CRITERIA", "THRESHOLDS"]

#: The decision thresholds of ``BilevelSVC(threshold=...)``.
THRESHOLDS = ("zero", "calibrated", "1se_balanced", "1se_gated")

#: ``BilevelSVC``'s criteria: name -> (validation split, loss of
#: :func:`~bisvm.selection.criteria.make_criterion`), from :data:`bisvm.names.CRITERIA`.
CRITERIA = {name: (c.split, c.loss) for name, c in _NAMES.items()}

#: Minority share of a binary target below which ``balanced_criterion="auto"`` balances.
UNBALANCED_SHARE = 0.35


def weighted_folds(X, y, sw, splits, standardize=False):
    """The :class:`~bisvm.selection.bilevel.Fold` of each (training rows, validation
    rows) pair, with the rows' weights; a side whose weights are all zero is refused (it
    has no loss or no criterion).

    With ``standardize``, each fold's features (``X`` with the bias column last) are
    standardised by the weighted statistics of that fold's training rows
    (:class:`~bisvm.data.standardize.ColumnStandardizer`), so that no validation row
    takes part in the scaling its fold is judged by."""
    if sw is not None:
        for tr, va in splits:
            if not (sw[tr].sum() > 0 and sw[va].sum() > 0):
                raise ValueError("sample_weight is zero on every training or every "
                                 "validation row of a fold: give some weight to more rows, "
                                 "or use fewer folds (cv) or a larger validation_fraction")
    return tuple(make_fold(X[tr], y[tr], X[va], y[va],
                           None if sw is None else sw[tr], None if sw is None else sw[va],
                           standardize=standardize)
                 for tr, va in splits)


def make_fold(X_train, y_train, X_val, y_val, w_train=None, w_val=None, *,
              standardize=False):
    """One :class:`~bisvm.selection.bilevel.Fold` (features with the bias column last),
    standardised on its training rows when asked (see :func:`weighted_folds`)."""
    if standardize:
        d = X_train.shape[1] - 1
        cs = ColumnStandardizer.fit(X_train[:, :d], w_train)
        X_train, X_val = (cs.transform(A, bias_last=True) for A in (X_train, X_val))
    return Fold(X_train, y_train, X_val, y_val, w_train, w_val)


@dataclass(frozen=True)
class StagedSettings:
    """What ``BilevelSVC`` passes down: its validated parameters (see its docstring)."""

    model: str = "vector"
    split: str = "kfold"
    loss: str = "scaled_squared_hinge"
    cv: int = 5
    validation_fraction: float = 0.2
    random_state: object = None
    init_penalty: object = "auto"
    warm_init: bool = True
    max_iter: int = 100
    tol: float = 1e-4
    support_threshold: float = 0.01
    early_stopping: object = "auto"
    scalar_rule: str = "min"
    refinement_rule: str = "1se"
    balanced: object = False
    refit: object = "support"  # "support", True or False
    max_line_search: int = 10
    cv_repeats: int = 1
    null_test: object = False  # False, True or "balanced"
    threshold: str = "zero"
    standardize: bool = False
    n_jobs: object = None
    task: str = "classification"
    scan_patience: object = None  # None or int: see search.scalar_scan
    refine_patience: int = 5  # held-out iterations without improvement (BiSVMLBFGS)
    scan_tol: float = 1e-5  # gradient-norm tolerance of the scan's lower-level solves

    @property
    def judge(self):
        """The support threshold through which candidates are read (the returned model is
        restricted to its support), or None (``refit`` is not ``"support"``)."""
        return self.support_threshold if self.refit == "support" else None


@dataclass(frozen=True)
class StagedFit:
    r"""Outcome of :func:`fit_staged` for one binary problem.

    Attributes
    ----------
    coef : ndarray
        Final coefficients (bias last): the refit, or the first fold's solution.
    beta : ndarray
        The chosen hyperparameters (of the requested hyper model).
    value : float
        The criterion there (of the stage that chose it).
    n_iter : int
        Outer iterations of every stage.
    history : tuple of HistoryEntry
        Of the last BiSVM run (the refinement for the vector and group models).
    balanced : bool
    refined : bool or None
        Whether the refinement replaced the scalar model (None: no refinement).
    scan : ScanResult or None
    lower_solves, lower_iterations : int
    null : tuple or None
        ``(statistic, value, null_value)`` when the null-model test replaced the model
        by the intercept-only one (``statistic``: ``"log-loss of the calibrated
        outputs"``, :func:`~bisvm.selection.decision.beats_null`, or
        ``"misclassification"``, :func:`~bisvm.selection.decision.beats_null_balanced`),
        else None.
    shift : float
        The intercept shift of the threshold (0 for ``threshold="zero"``).
    restricted : bool
        Whether ``coef`` is the refit restricted to its support.
    slope : float
        Slope :math:`a` of the probability :math:`\sigma(a f)` of the final decision
        value :math:`f` (shift included), fitted on the out-of-fold outputs
        (:func:`~bisvm.selection.decision.platt_slope`).
    fold_support : ndarray of bool, shape (k, d)
        The features each of the k fold models at the chosen β selects (before any
        restriction): what the selection frequencies count.
    """

    coef: np.ndarray
    beta: np.ndarray
    value: float
    n_iter: int
    history: tuple
    balanced: bool
    refined: object
    scan: object
    lower_solves: int
    lower_iterations: int
    null: object = None
    shift: float = 0.0
    restricted: bool = False
    slope: float = 1.0
    fold_support: object = None


def _objective(folds, lower, hyper, s, bal):
    """The :class:`BilevelObjective` of the stages, running its folds on ``s.n_jobs``."""
    return BilevelObjective(folds, lower, hyper, loss=s.loss, balanced=bal, n_jobs=s.n_jobs)


class _Cost:
    def __init__(self):
        self.solves = self.iters = self.outer = 0

    def add(self, res, outer=True):
        self.solves += res.lower_solves
        self.iters += res.lower_iterations
        if outer:
            self.outer += res.n_iter


def _progress(progress, stage):
    return None if progress is None else progress(stage)


def _close(report):
    if report is not None:
        report.close()


def fit_staged(Xa, yb, lower, hyper, settings, sample_weight=None, progress=None, *,
               split_labels=None, groups=None):
    """Learn β for one binary problem by the stages of the module docstring.

    Parameters
    ----------
    Xa : ndarray or sparse matrix, shape (n, d + 1)
        Features with the bias column last.
    yb : ndarray, shape (n,)
        ±1 labels.
    lower : LowerLevel
    hyper : HyperModel
        The requested model (scalar, vector or group; possibly learning α).
    settings : StagedSettings
    sample_weight : ndarray, optional
        Validated row weights.
    progress : callable, optional
        ``progress(stage_name)`` returns a per-iteration callback with ``close()``.
    split_labels : ndarray, optional
        Labels the splits stratify on (default ``yb``; the original classes of a
        multiclass target, so that its one-vs-rest problems share their folds).
    groups : ndarray, optional
        Sample groups for a group splitter ``settings.cv``.

    Returns
    -------
    StagedFit
    """
    s, sw = settings, sample_weight
    ys = yb if split_labels is None else split_labels
    splits = validation_splits(ys, s.split, validation_fraction=s.validation_fraction,
                               cv=s.cv, random_state=s.random_state, repeats=s.cv_repeats,
                               groups=groups)
    if s.task == "regression":
        bal = False
    else:
        counts = np.unique(yb, return_counts=True)[1]
        bal = bool(counts.min() / counts.sum() < UNBALANCED_SHARE) \
            if s.balanced == "auto" else bool(s.balanced)
    folds = weighted_folds(Xa, yb, sw, splits, s.standardize)
    cost = _Cost()
    scalar = hyper.kind == "scalar"
    res, scan = None, None
    if scalar or s.warm_init:
        scal = hyper if scalar else make_hyper_model(
            "scalar", Xa.shape[1] - 1, learn_l2=hyper.learn_l2,
            penalize_intercept=bool(hyper.penalty_groups[-1] >= 0))
        res, scan = _scalar_stage(folds, lower, scal, s, bal, cost,
                                  _progress(progress, "scalar" if scalar
                                            else "scalar (warm start)"))
    refined = None
    if not scalar:
        res, refined = _refine(Xa, yb, sw, folds, lower, hyper, s, bal, res, cost,
                               progress, ys, groups)
    if s.refit:
        P = lower.problem(Xa, yb, hyper.penalty_groups, hyper.weights(res.beta),
                          hyper.l2(res.beta), sample_weight=sw)
        r = lower.solve(P, w0=np.mean(res.coefs, axis=0))
        coef = r.coef
        cost.solves += 1
        cost.iters += r.n_iter
    else:
        coef = res.coefs[0]
    restricted = s.judge is not None
    obj, coefs = _fold_models(folds, lower, hyper, s, bal, res, refined, cost)
    fold_support = np.array([support_mask(c, hyper, s.support_threshold)[:-1]
                             for c in coefs])
    if restricted:
        coef, obj, coefs = _restrict(Xa, yb, sw, coef, obj, coefs, lower, hyper, s,
                                     bal, res.beta, cost)
    if s.task == "regression":
        coef, null, shift, slope = _regression_decision(obj, coefs, yb, sw, s, coef)
    else:
        coef, null, shift, slope = _decision(obj, coefs, yb, sw, s, coef)
    return StagedFit(coef=coef, beta=res.beta, value=float(res.value),
                     n_iter=max(1, cost.outer), history=res.history, balanced=bal,
                     refined=refined, scan=scan, lower_solves=cost.solves,
                     lower_iterations=cost.iters, null=null, shift=shift,
                     restricted=restricted, slope=slope, fold_support=fold_support)


def _fold_models(folds, lower, hyper, s, bal, res, refined, cost):
    """The objective of the k folds of all rows and its fold solutions at the chosen β
    (re-solved when the refinement's solutions are of other folds)."""
    obj = _objective(folds, lower, hyper, s, bal)
    if refined or len(res.coefs) != len(folds):
        mean = np.mean(res.coefs, axis=0)
        coefs, it = obj.solve(res.beta, tuple(mean for _ in folds), 1e-9)
        cost.solves += len(folds)
        cost.iters += it
        return obj, coefs
    return obj, res.coefs


def _restrict(Xa, yb, sw, coef, obj, coefs, lower, hyper, s, bal, beta, cost):
    """``refit="support"``: the refit and the fold models re-solved with the unselected
    coefficients fixed at zero (:mod:`~bisvm.selection.support`); returns the full-length
    refit and the restricted (objective, fold solutions)."""
    keep = support_mask(coef, hyper, s.support_threshold)
    if keep.all():
        return coef, obj, coefs
    hk = restrict_hyper(hyper, keep)
    P = lower.problem(Xa[:, keep], yb, hk.penalty_groups, hk.weights(beta), hk.l2(beta),
                      sample_weight=sw)
    r = lower.solve(P, w0=np.asarray(coef)[keep])
    objk = _objective(restrict_folds(obj.folds, keep), lower, hk, s, bal)
    coefsk, it = objk.solve(beta, tuple(np.asarray(c)[keep] for c in coefs), 1e-9)
    cost.solves += 1 + len(coefs)
    cost.iters += r.n_iter + it
    return expand(r.coef, keep), objk, coefsk


def _decision(obj, coefs, yb, sw, s, coef):
    """The null-model test, the calibrated intercept and the probability slope on the
    out-of-fold outputs of the fold solutions ``coefs`` of ``obj``
    (:mod:`~bisvm.selection.decision`); returns (coef, null, shift, slope)."""
    f, y, w, majority = out_of_fold(obj, coefs)
    counts = out_of_fold_counts(obj)
    coef = np.array(coef, dtype=float)
    shift = _THRESHOLD_SHIFTS[s.threshold](f, y, w, counts)
    if s.null_test:
        # "balanced" judges the decision as it will be used (after the shift)
        if s.null_test == "balanced":
            keep, err, err0 = beats_null_balanced(f + shift, y, w, majority)
            what = "misclassification"
        else:
            keep, err, err0 = beats_null(f, y, w, majority, counts=counts)
            what = "log-loss of the calibrated outputs"

        if not keep:
            # the intercept-only model: the (weighted) majority label of all rows, the
            # constant that minimises the mean hinge loss
            sw1 = np.ones(yb.shape[0]) if sw is None else sw
            null = np.zeros_like(coef)
            null[-1] = 1.0 if float(sw1 @ (yb > 0)) >= float(sw1 @ (yb < 0)) else -1.0
            # the constant output's slope gives every row the class prior
            return null, (what, err, err0), 0.0, platt_slope(np.full(y.size, null[-1]), y, w,
                                                             counts=counts)
    coef[-1] += shift
    return coef, None, shift, platt_slope(f + shift, y, w, counts=counts)


def _regression_decision(obj, coefs, y, sw, s, coef):
    """The null-model test of a regression fit: the intercept-only model (the weighted
    mean of each fold's training targets) replaces one whose out-of-fold squared error
    is not smaller by one paired standard error
    (:func:`~bisvm.selection.decision.beats_null_regression`); returns
    (coef, null, 0, 1)."""
    coef = np.array(coef, dtype=float)
    if not s.null_test:
        return coef, None, 0.0, 1.0
    f, yv, w, null_pred = out_of_fold_regression(obj, coefs)
    keep, err, err0 = beats_null_regression(f, yv, w, null_pred)
    if keep:
        return coef, None, 0.0, 1.0
    sw1 = np.ones(y.shape[0]) if sw is None else sw
    null = np.zeros_like(coef)
    null[-1] = float(sw1 @ y) / float(sw1.sum())
    return null, ("mean squared error", err, err0), 0.0, 1.0


#: ``threshold`` -> the intercept shift from the out-of-fold outputs, labels and weights.
_THRESHOLD_SHIFTS = {
    "zero": lambda f, y, w, counts: 0.0,
    "calibrated": lambda f, y, w, counts: platt_shift(f, y, w, counts=counts),
    "1se_balanced": lambda f, y, w, counts: one_se_balanced_shift(f, y, w, counts=counts),
    "1se_gated": lambda f, y, w, counts: one_se_balanced_shift(f, y, w, gated=True,
                                                               counts=counts)}


def _l1_start(Xa, yb, lower, s, sw):
    r"""The starting L1 weight when there is no scan: ``init_penalty``, or for "auto"
    :math:`\min(0.01, 0.1\beta_{\rm zero})`."""
    if s.init_penalty != "auto":
        return float(s.init_penalty)
    bz = lower.zero_penalty(Xa[:, :-1], yb, sw)
    # no usable gradient scale (all-zero or subnormal features): the thesis value
    return min(0.01, 0.1 * bz) if 0.1 * bz > 1e-12 else 0.01


def _scalar_stage(folds, lower, scal, s, bal, cost, report):
    """Scan (with ``init_penalty="auto"``), BiSVM L-BFGS from its best point, then the
    scalar rule; returns (BilevelResult, ScanResult or None)."""
    obj = _objective(folds, lower, scal, s, bal)
    learn_l2 = scal.learn_l2
    l2_0 = lower.l2_penalty
    scan, warm = None, None
    judge = s.judge
    if s.init_penalty == "auto":
        # the scan is over the L1 weight at the fixed α (the same lower-level problems)
        l1_obj = obj if not learn_l2 else _objective(
            folds, lower, replace(scal, names=scal.names[:1], learn_l2=False), s, bal)
        # solved as accurately as BiSVM's first iterate (its HOAG schedule starts at
        # 1e-5): the scan only chooses a start, and tighter solves of a nearly
        # non-smooth lower level (tiny smoothing, L-BFGS) can stall at their cap
        scan = scalar_scan(l1_obj, inner_tol=float(s.scan_tol), patience=s.scan_patience)
        cost.solves += scan.lower_solves
        cost.iters += scan.lower_iterations
        if judge is not None:
            scan = replace(scan, best_index=_thresholded_best(scan, l1_obj, judge))
        l1_0, warm = scan.best_beta, scan.best_coefs
    else:
        l1_0 = float(s.init_penalty)
    beta0 = np.r_[l1_0, l2_0] if learn_l2 else np.array([l1_0])
    res = BiSVMLBFGS(max_iter=int(s.max_iter), tol=float(s.tol),
                     nonzero_threshold=s.support_threshold,
                     max_line_search=s.max_line_search).minimize(obj, beta0, callback=report,
                                                                 warm0=warm)
    _close(report)
    cost.add(res)
    if scan is not None and not learn_l2 and (
            res.value > scan.best_value if judge is None else
            thresholded_value(obj, res.coefs, judge)
            > thresholded_value(obj, scan.best_coefs, judge)):
        # the outer run ended above its start (an inexact first solve, or, judged
        # restricted to the support, a model carried by sub-threshold coefficients):
        # keep the start
        res = replace(res, beta=np.array([scan.best_beta]), coefs=scan.best_coefs,
                      value=scan.best_value)
    rule = s.scalar_rule
    if rule == "auto":
        # more features than rows in a training fold: the criterion's minimum selects
        # noise features, the sparsest model within one standard error does not
        f0 = folds[0]
        rule = "1se" if f0.X_train.shape[1] - 1 > f0.X_train.shape[0] else "min"
    if rule != "min" and not learn_l2:
        b0 = float(res.beta[0])
        if rule == "1se":
            b, coefs, steps = one_se_scalar(obj, b0, warm=res.coefs, threshold=judge)
        else:
            b, coefs, steps, _ = one_se_error_scalar(obj, b0, warm=res.coefs,
                                                     threshold=judge)
        value = float(obj.value(np.array([b]), coefs))
        res = replace(res, beta=np.array([b]), coefs=coefs, value=value)
        # the path's steps, the re-solve at b0 and the final value, per fold
        cost.solves += (steps + 2) * len(folds)
    return res, scan


def _thresholded_best(scan, obj, threshold):
    """Index of the scan point whose fold models, restricted to their supports, have the
    smallest criterion (the last of a tie: the sparser model)."""
    return last_argmin([np.inf if c is None else thresholded_value(obj, c, threshold)
                        for c in scan.coefs])


def _early_stopping_rows(yb, sw, s, split_labels, groups):
    """The held-out rows of the refinement and the folds of the others, derived from
    ``s.cv`` (:func:`~bisvm.selection.splits.holdout_splits`), or None when early
    stopping does not apply: it needs a k-fold criterion, k >= 3 (an integer ``cv``:
    every class with at least 2k rows), both classes among the held-out rows and on the
    training side of at least two remaining folds."""
    if not (s.early_stopping and s.split == "kfold"):
        return None
    regression = s.task == "regression"
    if isinstance(s.cv, numbers.Integral):
        # a regression target is split by its quantile bins (split_labels)
        counts = np.unique(split_labels if regression else yb, return_counts=True)[1]
        if s.cv < 3 or (not regression and counts.min() < 2 * s.cv) or \
                (regression and yb.shape[0] < 4 * s.cv):
            return None
    rest, held, folds = holdout_splits(split_labels, s.cv, random_state=s.random_state,
                                       groups=groups)
    yr = yb[rest]

    def both(rows, y, w):
        if regression:
            return rows.size > 1 and (w is None or np.count_nonzero(w[rows] > 0) > 1)
        return all(np.any((y[rows] == c) & (True if w is None else w[rows] > 0))
                   for c in (-1.0, 1.0))

    swr = None if sw is None else sw[rest]
    folds = [(tr, va) for tr, va in folds if both(tr, yr, swr)
             and (swr is None or swr[va].sum() > 0)]
    if len(folds) < 2 or not both(held, yb, sw):
        return None
    return rest, held, folds


def _refine(Xa, yb, sw, folds, lower, hyper, s, bal, sres, cost, progress, split_labels,
            groups):
    """The vector or group refinement; returns (BilevelResult, refined)."""
    learn_l2 = hyper.learn_l2
    n_l1 = hyper.n_hyper - int(learn_l2)
    early = _early_stopping_rows(yb, sw, s, split_labels, groups)
    vfolds, monitor = folds, None
    if early is not None:
        # rows the refinement never sees, not even as training rows of a fold
        rest, held, rest_folds = early
        Xr, yr = Xa[rest], yb[rest]
        swr = None if sw is None else sw[rest]
        vfolds = weighted_folds(Xr, yr, swr, rest_folds, s.standardize)
        monitor = _objective(
            (make_fold(Xr, yr, Xa[held], yb[held], swr, None if sw is None else sw[held],
                       standardize=s.standardize),), lower, hyper, s, bal)
    obj = _objective(vfolds, lower, hyper, s, bal)
    if sres is None:
        l1_0, l2_0, warm0, mwarm0 = _l1_start(Xa, yb, lower, s, sw), lower.l2_penalty, \
            None, None
    else:
        l1_0 = float(sres.beta[0])
        l2_0 = float(sres.beta[-1]) if learn_l2 else lower.l2_penalty
        # the scalar stage's solutions start the refinement's first solves (its folds
        # differ when rows are held out: their mean then starts every fold)
        mean = np.mean(sres.coefs, axis=0)
        warm0 = sres.coefs if vfolds is folds else tuple(mean for _ in vfolds)
        mwarm0 = None if monitor is None else (mean,)
    # the refinement's folds have their own outer bound (fewer rows)
    l1_0 = min(l1_0, 0.5 * beta_upper_bound(vfolds))
    beta0 = np.full(n_l1, l1_0)
    if learn_l2:
        beta0 = np.r_[beta0, l2_0]
    report = _progress(progress, hyper.kind)
    res = BiSVMLBFGS(max_iter=int(s.max_iter), tol=float(s.tol),
                     nonzero_threshold=s.support_threshold, monitor_rule=s.refinement_rule,
                     patience=int(s.refine_patience),
                     max_line_search=s.max_line_search, monitor_threshold=s.judge).minimize(
        obj, beta0, monitor=monitor, callback=report, warm0=warm0, monitor_warm0=mwarm0)
    _close(report)
    cost.add(res)
    if monitor is None:
        return res, None
    # the monitor keeps the start iterate itself (same array) when it rejects every move
    kept_start = np.array_equal(res.beta, res.history[0].beta)
    if sres is None:
        return res, not kept_start
    if kept_start:
        # the held-out rows kept the start: exactly the scalar model
        b = np.full(n_l1, float(sres.beta[0]))
        if learn_l2:
            b = np.r_[b, sres.beta[-1]]
        return replace(sres, beta=b, history=res.history), False
    return res, True
