r"""Shared-support multiclass selection: one learned L1 weight per feature for all classes.

One-vs-rest gives each class its own support; this model selects *one* feature set for
the whole problem. With the class coefficients :math:`W \in \mathbb{R}^{K\times d}`
(row :math:`W_{k,:}` for class k, column :math:`W_{:,j}` for feature j) and intercepts
:math:`b \in \mathbb{R}^K`, the lower level is

.. math::
    E(W, b;\beta) = \frac{1}{K}\sum_{k=1}^K \Big[\frac1n\sum_{i=1}^n s_i\,
        \ell_\mu\big(1 - y_{ik}(x_i^\top W_{k,:} + b_k)\big)
        + \frac{\alpha}{2}\|W_{k,:}\|^2\Big]
        + \sum_{j=1}^d \beta_j\,H_\gamma\big(\|W_{:,j}\|_2\big),

with :math:`y_{ik} = +1` if row i is of class k and -1 otherwise (the K one-vs-rest
smoothed-hinge problems of González Vallejo (2024), each with its own ridge α) and the
Pseudo-Huber :math:`H_\gamma(t) = \sqrt{\gamma^2 + t^2} - \gamma` of the *column* norm:
a smoothed group lasso whose groups are the K coefficients of one feature, the
joint covariate selection of multi-task learning (Obozinski, Taskar & Jordan 2010,
"Joint covariate selection and joint subspace selection for multiple classification
problems"). A feature enters all classes or none; the weights β are learned by the
same bilevel machinery as the binary model.

**Why a stacked binary problem.** :math:`E` is exactly the binary lower level of
:class:`~bisvm.solvers.primal.lower_level.LowerLevel` on a stacked design of :math:`nK`
rows: row :math:`(k, i)` is :math:`x_i \otimes e_k` followed by the indicator
:math:`e_k` of the K intercept columns, with label :math:`y_{ik}` and row weight
:math:`s_i`, coefficients ordered class-major ``[W_1,:, ..., W_K,:, b_1, ..., b_K]``,
and the penalty groups ``group(k*d + j) = j`` (:func:`shared_hyper_model`). The mean
over :math:`nK` stacked rows is the mean over classes above; the ridge weight of the
stacked problem is :math:`\alpha/K` so that each class keeps the ridge α of its
one-vs-rest problem. Folds, criterion, hypergradient and outer optimiser are then the
binary ones, unchanged. The validation criterion is taken over the :math:`nK` stacked
validation rows: the mean of the K one-vs-rest criteria for a criterion that is a row
mean (the scale-free margin criterion fits one output scale for all classes). Its
per-row terms, and so the standard errors of the one-standard-error rules, treat the K
copies of a row as K independent rows, which understates those standard errors.

**Folds.** The K copies of a row must fall on the same side of every split (a row's
class-k copy in training and its class-j copy in validation would leak its label), so
the splits are drawn on the original rows, stratified on the original labels, and each
is expanded to the stacked rows (:func:`stack_splits`).

**Intercepts.** All K intercept columns are unpenalised unless
``lower.penalize_intercept`` (then the K intercepts form one penalty group with its own
weight, and the ridge covers them): :class:`StackedLowerLevel` extends the binary
lower level's ridge mask from the last column to the last K columns.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields, replace

import numpy as np
import scipy.sparse as sp

from ..data.standardize import ColumnStandardizer
from ..solvers.primal.lower_level import LowerLevel, StackedLowerLevel, resolve_solver
from .bilevel import BilevelObjective, HyperModel, make_hyper_model
from .decision import platt_slope
from .importance import importance_scores, support_mask
from .splits import validation_splits
from .staged import UNBALANCED_SHARE, fit_staged, weighted_folds
from .support import expand, restrict_folds, restrict_hyper

__all__ = ["stacked_design", "stacked_labels", "stack_splits", "row_splits",
           "shared_hyper_model", "tied_hyper_model", "StackedLowerLevel",
           "stacked_lower_level", "SharedFit", "fit_shared", "choose_layout", "LAYOUTS"]

#: Storage of the stacked design for a dense X.
LAYOUTS = ("auto", "dense", "sparse")

# a dense stacked design above this many bytes is stored sparse whatever the solver
_DENSE_MAX_BYTES = 64 * 2**20
# above this many flops per dense Hessian product the CSR product's K-fold saving wins
_DENSE_HESSIAN_FLOPS = 1e7


def choose_layout(X, n_classes, layout="auto", solver="auto"):
    r"""``"dense"`` or ``"sparse"``: how the stacked design of ``X`` is stored.

    A sparse X always gives a sparse design (never densified). For a dense X the
    stacked design has :math:`nK(dK + K)` entries of which a fraction :math:`1/K` is
    nonzero: stored dense it costs :math:`K^2` times X, as CSR about :math:`1.5K`
    times. ``"auto"`` keeps it dense only for small problems solved by Newton-Cholesky
    (``solver`` resolved on the stacked shape by
    :func:`~bisvm.solvers.primal.lower_level.resolve_solver`) whose dense Hessian product
    costs at most :math:`nK(dK + K)^2 \le 10^7` flops: there the BLAS-3 product beats
    the sparse one's overhead. Beyond it the dense product does K times the flops of the
    CSR one (which skips the :math:`(K-1)/K` zeros), and the Hessian-free and
    sample-space solvers multiply by the design at every step
    (``benchmarks/bench_multiclass.py`` times both)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if sp.issparse(X):
        return "sparse"
    if layout != "auto":
        return layout
    n, d = X.shape
    K = _check_classes(n_classes)
    shape = (n * K, (d + 1) * K)
    if 8.0 * shape[0] * shape[1] > _DENSE_MAX_BYTES or \
            shape[0] * shape[1] ** 2 > _DENSE_HESSIAN_FLOPS:
        return "sparse"
    # a read-only view of the right shape: the solver choice reads the shape alone
    return "dense" if resolve_solver(solver, np.broadcast_to(0.0, shape)) == "newton" \
        else "sparse"


def stacked_design(X, n_classes, layout="auto"):
    r"""The stacked design of shape :math:`(nK, dK + K)`: row ``k*n + i`` holds
    :math:`x_i` in columns ``k*d .. k*d + d - 1`` and a 1 in column ``d*K + k`` (the
    intercept of class k), i.e. :math:`[I_K \otimes X,\ I_K \otimes \mathbf 1_n]`.

    Parameters
    ----------
    X : ndarray or sparse matrix, shape (n, d)
        Features, without a bias column.
    n_classes : int
        K >= 2.
    layout : {"auto", "dense", "sparse"}
        Storage for a dense X (:func:`choose_layout`); a sparse X stays sparse (CSR).
    """
    K = _check_classes(n_classes)
    n, d = X.shape
    if choose_layout(X, K, layout) == "sparse":
        eye = sp.identity(K, format="csr")
        blocks = sp.kron(eye, sp.csr_matrix(X), format="csr")
        ones = sp.kron(eye, sp.csr_matrix(np.ones((n, 1))), format="csr")
        return sp.hstack([blocks, ones], format="csr")
    X = np.asarray(X, dtype=float)
    Xs = np.zeros((n * K, d * K + K))
    for k in range(K):
        Xs[k * n:(k + 1) * n, k * d:(k + 1) * d] = X
        Xs[k * n:(k + 1) * n, d * K + k] = 1.0
    return Xs


def stacked_labels(y_index, n_classes):
    """The ±1 labels of the stacked rows: row ``k*n + i`` is +1 when ``y_index[i] == k``."""
    K = _check_classes(n_classes)
    y = _check_index(y_index, K)
    return np.where(y[None, :] == np.arange(K)[:, None], 1.0, -1.0).ravel()


def stack_splits(splits, n_samples, n_classes):
    """Expand (train, test) index pairs over the original rows to the stacked rows: row
    i becomes rows ``k*n + i`` for every class k, on the same side of the split."""
    offsets = np.arange(int(n_classes)) * int(n_samples)

    def up(idx):
        idx = np.asarray(idx, dtype=np.int64)
        return (offsets[:, None] + idx[None, :]).ravel()
    return [(up(tr), up(te)) for tr, te in splits]


def row_splits(y_index, settings, groups=None):
    """The (train, test) pairs over the original rows that ``settings`` asks for
    (:func:`~bisvm.selection.splits.validation_splits`): ``cv`` folds stratified on the
    original labels (repeated ``cv_repeats`` times), one stratified hold-out split
    (``split="holdout"``), or the user's splitter (with ``groups``) or pairs."""
    return validation_splits(np.asarray(y_index), settings.split,
                             validation_fraction=settings.validation_fraction,
                             cv=settings.cv, random_state=settings.random_state,
                             repeats=settings.cv_repeats, groups=groups)


def shared_hyper_model(n_features, n_classes, kind="vector", *, feature_groups=None,
                       penalize_intercept=False, feature_names=None, learn_l2=False):
    r"""The :class:`~bisvm.selection.bilevel.HyperModel` of the stacked problem.

    The binary model of ``kind`` (:func:`~bisvm.selection.bilevel.make_hyper_model`)
    over the d features, with each feature's penalty group widened to its K class
    coefficients (``group(k*d + j) = group(j)``), and the K intercepts unpenalised
    (-1) or, with ``penalize_intercept``, one group of their own. ``"scalar"``: one β
    for all features; ``"vector"``: one :math:`\beta_j` per feature, shared by the
    classes; ``"group"``: one per feature group."""
    K = _check_classes(n_classes)
    d = int(n_features)
    base = make_hyper_model(kind, d, groups=feature_groups,
                            penalize_intercept=penalize_intercept,
                            feature_names=feature_names, learn_l2=learn_l2)
    pg = np.r_[np.tile(base.penalty_groups[:d], K),
               np.full(K, base.penalty_groups[d])].astype(np.int64)
    return replace(base, penalty_groups=pg)


def tied_hyper_model(hyper):
    """``hyper`` with every penalty group weighted by one β (and α last when learned):
    the scalar stage of the shared model, a group lasso with one weight, which is the
    vector or group model with all weights equal."""
    n_groups = len(hyper.hyper_of_group)
    names = ("beta", "l2_penalty") if hyper.learn_l2 else ("beta",)
    return HyperModel("scalar", hyper.penalty_groups, np.zeros(n_groups, dtype=np.int64),
                      names, hyper.group_names, hyper.learn_l2)


@dataclass(frozen=True)
class SharedFit:
    r"""Outcome of :func:`fit_shared`.

    Attributes
    ----------
    coef : ndarray, shape (K, d)
        Class coefficients in the units of ``Xa``'s columns.
    intercept : ndarray, shape (K,)
    beta : ndarray
        Learned weights (one per feature for ``model="vector"``, per group for
        ``"group"``, one for ``"scalar"``; α last when learned, in one-vs-rest units).
    hyper : HyperModel
        The stacked problem's hyper model (its ``names`` name the entries of ``beta``).
    support : ndarray of bool, shape (d,)
        Features whose column :math:`W_{:,j}` (or group) the final model keeps.
    feature_importance : ndarray, shape (d,)
        Share of each selected feature in :math:`\sum_j\|W_{:,j}\|_2`.
    importance : ndarray
        The importance score of each penalty group (González Vallejo 2024).
    value : float
        The criterion at ``beta``.
    n_iter : int
        Outer iterations of every stage.
    history : tuple of HistoryEntry
        Of the last BiSVM run.
    refined : bool or None
        Whether the per-feature refinement replaced the one-weight model.
    balanced : bool
    lower_solves, lower_iterations : int
    fold_supports : ndarray of bool, shape (n_folds, d)
        The support of each fold's model at ``beta`` (selection frequencies).
    oof_rows : ndarray of int, shape (m,)
        Original row of each out-of-fold output (each row once per repeat).
    oof_decision : ndarray, shape (m, K)
        Out-of-fold decision values :math:`x_i^\top W_{k,:} + b_k` of the fold model that
        did not train on row ``oof_rows[m]``, restricted to the final support as the
        returned model is (for Platt's calibration of each class).
    oof_labels : ndarray of int, shape (m,)
        Class index of each out-of-fold row.
    slopes : ndarray, shape (K,)
        Slope :math:`a_k` of the one-parameter Platt calibration
        :math:`\sigma(a_k f_k)` of each class's out-of-fold outputs against its
        one-vs-rest labels (:func:`~bisvm.selection.decision.platt_slope`).
    layout : str
        How the stacked design was stored.
    solver : str
        The lower-level solver used on the stacked design.
    """

    coef: np.ndarray
    intercept: np.ndarray
    beta: np.ndarray
    hyper: HyperModel
    support: np.ndarray
    feature_importance: np.ndarray
    importance: np.ndarray
    value: float
    n_iter: int
    history: tuple
    refined: object
    balanced: bool
    lower_solves: int
    lower_iterations: int
    fold_supports: np.ndarray
    oof_rows: np.ndarray
    oof_decision: np.ndarray
    oof_labels: np.ndarray
    slopes: np.ndarray
    layout: str
    solver: str


def fit_shared(Xa, y_index, n_classes, lower, settings, sample_weight=None, *,
               feature_names=None, feature_groups=None, learn_l2=False, groups=None,
               layout="auto", progress=None):
    r"""Learn the shared-support multiclass model (module docstring) by the staged BiSVM.

    The stages are those of :func:`~bisvm.selection.staged.fit_staged` on the stacked
    problem: the scalar stage with the *tied* group model (one β for every feature's
    column norm, :func:`tied_hyper_model`), then, for ``settings.model`` ``"vector"``
    or ``"group"``, the per-feature refinement started from it, judged on held-out rows
    as in the binary fit. The two are two calls of ``fit_staged`` (the refinement with
    ``warm_init=False`` and ``init_penalty`` = the scalar β) because its own scalar
    stage would use a per-coefficient lasso with the K - 1 intercept columns penalised,
    not this model.

    Both calls run with ``null_test=False`` and ``threshold="zero"``: those checks judge
    one binary decision by its sign and shift the intercept of the last column, while
    the stacked rows' decision is the argmax over K outputs and the last column is one
    class's intercept; the out-of-fold outputs per class are returned instead
    (``oof_decision``) for a per-class calibration.

    Parameters
    ----------
    Xa : ndarray or sparse matrix, shape (n, d + 1)
        Features with the bias column last (it is dropped: the stacked design has K).
    y_index : ndarray of int, shape (n,)
        Class index of each row, in ``0 .. n_classes - 1``.
    n_classes : int
        K >= 2.
    lower : LowerLevel
        The binary lower level (α as for one one-vs-rest problem; a solver of "auto"
        is resolved on the stacked design).
    settings : StagedSettings
        ``balanced="auto"`` balances when any class's share is below
        ``UNBALANCED_SHARE`` or above its complement (a one-vs-rest problem would be
        balanced). ``cv`` (int, splitter or pairs) is split on the original rows and
        passed down as the stacked pairs, so the refinement's early-stopping rows are
        the last split's validation rows (:func:`~bisvm.selection.splits.holdout_splits`
        for pairs). With ``standardize``, the features are standardised once on all
        rows before stacking, not again inside each fold (a fold's statistics over the
        stacked columns would mix in the zeros of the other classes' rows).
    sample_weight : ndarray, shape (n,) or (K, n), optional
        Validated row weights: each row's K copies carry it, or row k of a (K, n) array
        weighs the rows in the class-k-vs-rest problem (LIBLINEAR's one-vs-rest class
        weights). The standardisation uses their mean over the classes.
    feature_names : sequence of str, optional
    feature_groups : dict or list of lists, optional
        Feature groups for ``settings.model="group"``.
    learn_l2 : bool
        Learn α too (the last entry of ``beta``).
    groups : array-like, optional
        Sample groups for a group splitter in ``settings.cv``.
    layout : {"auto", "dense", "sparse"}
        Storage of the stacked design for a dense X (:func:`choose_layout`).
    progress : callable, optional
        As in :func:`~bisvm.selection.staged.fit_staged`.

    Returns
    -------
    SharedFit
    """
    K = _check_classes(n_classes)
    y = _check_index(y_index, K)
    if Xa.ndim != 2 or Xa.shape[0] != y.shape[0] or Xa.shape[1] < 2:
        raise ValueError(f"Xa must be (n, d + 1) with n = {y.shape[0]} rows and d >= 1, "
                         f"got shape {Xa.shape}")
    if not isinstance(lower, LowerLevel):
        raise TypeError(f"lower must be a LowerLevel, got {type(lower).__name__}")
    n, d = Xa.shape[0], Xa.shape[1] - 1
    sw, sws = _check_weights(sample_weight, n, K)
    X = Xa.tocsr()[:, :d] if sp.issparse(Xa) else np.asarray(Xa)[:, :d]
    # the folds' own standardisation would scale the stacked columns, whose statistics
    # mix the zeros of the other classes' rows, and centring would fill those zeros:
    # the features are standardised once, on the original rows, before stacking
    cs = ColumnStandardizer.fit(X, sw) if getattr(settings, "standardize", False) \
        else None
    if cs is not None:
        X = cs.transform(X)
    lay = choose_layout(X, K, layout, "auto" if lower.exact else lower.solver)
    Xs, yb = stacked_design(X, K, lay), stacked_labels(y, K)
    splits = stack_splits(row_splits(y, settings, groups), n, K)
    hyper = shared_hyper_model(d, K, settings.model, feature_groups=feature_groups,
                               penalize_intercept=lower.penalize_intercept,
                               feature_names=feature_names, learn_l2=learn_l2)
    slower = stacked_lower_level(lower, K, Xs)
    s = replace(settings, cv=tuple(splits), null_test=False, threshold="zero",
                cv_repeats=1, balanced=_balanced(y, sw, K, settings.balanced))
    if cs is not None:
        s = replace(s, standardize=False)
    fits, slower, final_hyper = _staged_fits(Xs, yb, sws, slower, hyper, s, progress)
    last = fits[-1]
    beta = np.array(last.beta, dtype=float)
    if learn_l2:
        beta[-1] *= K
    oof = _fold_outputs(Xs, yb, sws, splits, slower, final_hyper, s, last, n, K, d)
    eps = 0.0 if last.restricted else s.support_threshold
    coef = np.asarray(last.coef, dtype=float)
    support = support_mask(coef, final_hyper, eps)[:d]
    norms = np.linalg.norm(coef[:d * K].reshape(K, d), axis=0) * support
    W, b = coef[:d * K].reshape(K, d).copy(), coef[d * K:].copy()
    slopes = _class_slopes(oof[2], y[oof[1]], None if sws is None
                           else sws.reshape(K, n)[:, oof[1]])
    if cs is not None:
        W, b = cs.to_original(W, b)
    return SharedFit(
        coef=W, intercept=b, beta=beta, hyper=final_hyper, support=support,
        feature_importance=norms / norms.sum() if norms.sum() > 0 else norms,
        importance=importance_scores(coef, last.beta, final_hyper, threshold=eps),
        value=float(last.value), n_iter=int(sum(f.n_iter for f in fits)),
        history=last.history, refined=last.refined, balanced=bool(last.balanced),
        lower_solves=int(sum(f.lower_solves for f in fits)) + oof[-1][0],
        lower_iterations=int(sum(f.lower_iterations for f in fits)) + oof[-1][1],
        fold_supports=oof[0], oof_rows=oof[1], oof_decision=oof[2], oof_labels=y[oof[1]],
        slopes=slopes, layout=lay, solver=slower.solver)


def _staged_fits(Xs, yb, sws, slower, hyper, s, progress):
    """The staged fits of the stacked problem: the tied (scalar) model, then for the
    vector and group models the refinement from its β; returns (fits, lower level of
    the last fit, hyper model of the last fit)."""
    tied = tied_hyper_model(hyper)
    first = fit_staged(Xs, yb, slower, tied if (hyper.kind == "scalar" or s.warm_init)
                       else hyper, s, sws, progress=progress)
    if hyper.kind == "scalar":
        return [first], slower, tied
    if not s.warm_init:
        return [first], slower, hyper
    if hyper.learn_l2:
        slower = replace(slower, l2_penalty=float(first.beta[-1]))
    second = fit_staged(Xs, yb, slower, hyper,
                        replace(s, warm_init=False, init_penalty=float(first.beta[0])),
                        sws, progress=progress)
    return [first, second], slower, hyper


def stacked_lower_level(lower, n_classes, Xs):
    """The stacked lower level of the binary ``lower`` for ``n_classes`` = K classes on the
    stacked design ``Xs``: α/K (each class keeps the ridge α of its one-vs-rest
    problem under the mean over classes), K unpenalised intercepts, the solver resolved
    on the stacked design."""
    K = _check_classes(n_classes)
    kw = {f.name: getattr(lower, f.name) for f in fields(LowerLevel)}
    kw["l2_penalty"] = lower.l2_penalty / K
    if not lower.exact:
        kw["solver"] = resolve_solver(lower.solver, Xs)
    return StackedLowerLevel(**kw, n_intercepts=K)


def _balanced(y, sw, K, balanced):
    """``"auto"`` on the original labels: balance when a one-vs-rest problem would."""
    if balanced != "auto":
        return bool(balanced)
    w = np.ones(y.shape[0]) if sw is None else sw
    share = np.bincount(y, weights=w, minlength=K) / w.sum()
    return bool(np.any(np.minimum(share, 1.0 - share) < UNBALANCED_SHARE))


def _fold_outputs(Xs, yb, sws, splits, lower, hyper, s, fit, n, K, d):
    """Fold models at the chosen β: their supports (unrestricted) and the out-of-fold
    outputs of the fold models restricted to the final support as the returned model
    is; returns (fold_supports, rows, decision, (solves, iterations))."""
    folds = weighted_folds(Xs, yb, sws, splits)
    # the folds in parallel as the staged fit runs them (identical for every n_jobs)
    par = {} if getattr(s, "n_jobs", None) in (None, 1) else {"n_jobs": s.n_jobs}
    obj = BilevelObjective(folds, lower, hyper, loss=s.loss, balanced=bool(fit.balanced),
                           **par)
    coefs, iters = obj.solve(fit.beta, tuple(fit.coef for _ in folds), 1e-9)
    solves = len(folds)
    thr = s.support_threshold
    fold_supports = np.array([support_mask(c, hyper, thr)[:d] for c in coefs])
    if s.judge is not None:
        keep = support_mask(fit.coef, hyper, 0.0 if fit.restricted else thr)
        if not keep.all():
            hk = restrict_hyper(hyper, keep)
            objk = BilevelObjective(restrict_folds(folds, keep), lower, hk, loss=s.loss,
                                    balanced=bool(fit.balanced), **par)
            ck, it = objk.solve(fit.beta, tuple(np.asarray(c)[keep] for c in coefs), 1e-9)
            coefs = tuple(expand(c, keep) for c in ck)
            solves, iters = solves + len(folds), iters + it
    rows, dec = [], []
    for (_, te), f, c in zip(splits, folds, coefs):
        m = te.shape[0] // K
        rows.append(te[:m] % n)
        dec.append(np.asarray(f.X_val @ c, dtype=float).reshape(K, m).T)
    return fold_supports, np.concatenate(rows), np.vstack(dec), (solves, iters)


def _class_slopes(dec, labels, weights):
    """Platt's one-parameter slope of each class's out-of-fold outputs against its
    one-vs-rest labels, with Platt's prior counts weighted by the rows' weights (so that
    an integer weight is the same as repeated rows)."""
    out = []
    for k in range(dec.shape[1]):
        yk = np.where(labels == k, 1.0, -1.0)
        wk = None if weights is None else weights[k]
        v = np.ones(yk.size) if wk is None else wk
        out.append(platt_slope(dec[:, k], yk, wk,
                               counts=(float(v @ (yk > 0)), float(v @ (yk < 0)))))
    return np.array(out)


def _check_weights(sample_weight, n, K):
    """Row weights (n,) for the statistics and the stacked (nK,) weights, or None."""
    if sample_weight is None:
        return None, None
    w = np.asarray(sample_weight, dtype=float)
    if w.shape not in ((n,), (K, n)) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"sample_weight must be finite, non-negative, of shape ({n},) or "
                         f"({K}, {n}), got shape {w.shape}")
    if w.ndim == 1:
        return w, np.tile(w, K)
    return w.mean(axis=0), w.ravel()


def _check_classes(n_classes):
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) \
            or n_classes < 2:
        raise ValueError(f"n_classes must be an int >= 2, got {n_classes!r}")
    return int(n_classes)


def _check_index(y_index, K):
    y = np.asarray(y_index)
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer):
        raise ValueError("y_index must be a 1-D array of integer class indices")
    if y.size and (y.min() < 0 or y.max() >= K):
        raise ValueError(f"y_index must lie in 0..{K - 1} (n_classes={K})")
    return y.astype(np.int64)

