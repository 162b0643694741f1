r"""One binary problem of :class:`~bisvm.estimators.sparse.BilevelSVC`, end to end, and
the per-class outcomes stacked into its fitted quantities.

A binary (or one-vs-rest) problem is fitted by the staged BiSVM of
(:func:`~bisvm.selection.staged.fit_staged` (scan, scalar stage, refinement, refit;
the BiSVM L-BFGS algorithm of González Vallejo (2024)), then scored by the thesis's
importance (the learned β masked by the support) and by the coefficient shares
(:mod:`bisvm.selection.importance`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .importance import coefficient_shares, importance_scores
from .staged import fit_staged

__all__ = ["BinaryFit", "fit_binary", "scored_fit", "StackedFit", "stack_binary_fits",
           "feature_groups"]


@dataclass(frozen=True)
class BinaryFit:
    r"""Outcome of :func:`fit_binary`: the :class:`~bisvm.selection.staged.StagedFit`
    fields the estimator keeps, plus the two importance scores.

    Attributes
    ----------
    coef : ndarray
        Final coefficients, bias last.
    beta : ndarray
        Learned hyperparameters (the L1 weights, then α when it is learned).
    value : float
        The criterion at ``beta``.
    importance : ndarray
        The thesis's scores per penalty group (summing to 1).
    feature_importance : ndarray
        Share of each selected feature in :math:`\sum_j|\hat w_j|`.
    n_iter : int
    history : tuple of HistoryEntry
    balanced : bool
    refined : bool or None
    solves, iterations : int
        Lower-level solves and iterations of the whole fit.
    null : tuple or None
        ``(error, null_error)`` when the null-model test returned the intercept-only
        model.
    shift : float
        The calibrated intercept shift (0 with ``threshold="zero"``).
    slope : float
        Slope of the probability :math:`\sigma(a f)` of the decision value.
    fold_support : ndarray of bool, shape (k, d)
        The features each fold model at the learned β selects.
    """

    coef: np.ndarray
    beta: np.ndarray
    value: float
    importance: np.ndarray
    feature_importance: np.ndarray
    n_iter: int
    history: tuple
    balanced: bool
    refined: object
    solves: int
    iterations: int
    null: object = None
    shift: float = 0.0
    slope: float = 1.0
    fold_support: object = None


def fit_binary(Xa, yb, lower, hyper, settings, sample_weight=None, *, progress=None,
               split_labels=None, groups=None):
    """Fit one binary problem (labels ±1, ``Xa`` with the bias column) by the staged
    BiSVM and score its features.

    Parameters
    ----------
    Xa, yb, lower, hyper, settings, sample_weight, progress, split_labels, groups
        As in :func:`~bisvm.selection.staged.fit_staged`; ``settings.support_threshold``
        is the thesis's ε of the importance scores.

    Returns
    -------
    BinaryFit
    """
    fit = fit_staged(Xa, yb, lower, hyper, settings, sample_weight, progress=progress,
                     split_labels=split_labels, groups=groups)
    return scored_fit(fit, hyper, settings)


def scored_fit(fit, hyper, settings):
    """The :class:`BinaryFit` of a :class:`~bisvm.selection.staged.StagedFit`: its fields
    and the importance scores of its coefficients (the estimator runs
    :func:`~bisvm.selection.staged.fit_staged` itself, then this)."""
    # the restricted refit is zero exactly off its support: every nonzero is selected
    coef, eps = fit.coef, 0.0 if fit.restricted else settings.support_threshold
    return BinaryFit(
        coef=coef, beta=fit.beta, value=fit.value,
        importance=importance_scores(coef, fit.beta, hyper, threshold=eps),
        feature_importance=coefficient_shares(coef, hyper, threshold=eps),
        n_iter=fit.n_iter, history=fit.history, balanced=fit.balanced,
        refined=fit.refined, solves=fit.lower_solves, iterations=fit.lower_iterations,
        null=fit.null, shift=fit.shift, slope=fit.slope, fold_support=fit.fold_support)


@dataclass(frozen=True)
class StackedFit:
    """The per-class :class:`BinaryFit` stacked as the estimator reports them: the value
    itself for a binary target, an array (``refined``, ``history``: a list) over the
    one-vs-rest problems otherwise. ``feature_importances`` is the mean over classes,
    the two counts are totals. ``selection_frequency`` is, per feature, the share of the
    folds in which some class's fold model selects it (the problems share their folds);
    ``selection_frequency_per_class`` the share per class."""

    penalty_weights: np.ndarray
    l2_penalty: object
    validation_score: object
    balanced: object
    refined: object
    importance: np.ndarray
    n_iter: object
    history: object
    feature_importances: np.ndarray
    lower_level_solves: int
    lower_level_iterations: int
    selection_frequency: np.ndarray
    selection_frequency_per_class: np.ndarray
    slopes: np.ndarray


def stack_binary_fits(fits, hyper, l2_penalty):
    """Stack the :class:`BinaryFit` of each one-vs-rest problem (one if binary).

    ``l2_penalty`` is the fixed α, reported unless ``hyper`` learns it (then the last
    entry of each ``beta``)."""
    binary = len(fits) == 1

    def pick(name):
        return getattr(fits[0], name) if binary else np.array([getattr(f, name) for f in fits])

    def listed(name):
        return getattr(fits[0], name) if binary else [getattr(f, name) for f in fits]

    n_l1 = hyper.n_hyper - int(hyper.learn_l2)
    beta = pick("beta")
    return StackedFit(
        penalty_weights=beta[..., :n_l1],
        l2_penalty=beta[..., -1] if hyper.learn_l2 else l2_penalty,
        validation_score=pick("value"), balanced=pick("balanced"), refined=listed("refined"),
        importance=pick("importance"), n_iter=pick("n_iter"), history=listed("history"),
        feature_importances=np.array([f.feature_importance for f in fits]).mean(axis=0),
        lower_level_solves=int(sum(f.solves for f in fits)),
        lower_level_iterations=int(sum(f.iterations for f in fits)),
        selection_frequency=np.any([f.fold_support for f in fits], axis=0).mean(axis=0),
        selection_frequency_per_class=np.array([f.fold_support.mean(axis=0) for f in fits]),
        slopes=np.array([f.slope for f in fits]))


def feature_groups(groups):
    """The ``groups`` parameter as :func:`~bisvm.selection.bilevel.make_hyper_model`
    takes it: a dict with string keys and list values, a list of lists, or None."""
    if groups is None:
        return None
    if isinstance(groups, dict):
        return {str(k): list(v) for k, v in groups.items()}
    return [list(g) for g in groups]
