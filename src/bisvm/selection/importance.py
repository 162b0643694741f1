r"""Importance scores of the bilevel sparse SVM (González Vallejo 2024).

For the vector model: mask the learned weights by the nonzero pattern of the
solution, :math:`\bar w_j = \mathbb{1}[|\hat w_j| > \varepsilon]`,
:math:`\tilde\beta = \bar w \odot \hat\beta`, and normalise,
:math:`\text{Score}_j = \tilde\beta_j / \sum_l \tilde\beta_l`. At a lower-level optimum
with :math:`|\hat w_j| \gg \gamma`, stationarity gives
:math:`\hat\beta_j \approx |\partial_j L(\hat w)| - \alpha|\hat w_j|`: the score is the share
of the loss's marginal pull that each surviving feature resists, which assumes features
on one scale (standardise first).

Groups: the thesis's formulas mask the learned group weights :math:`\bar\beta_k`, but its
group experiment normalised masked *group norms*. The formulas are implemented, so that
the group score reduces to the vector score for singleton groups, with the group norm
thresholded as :math:`\|\hat w_k\|_2 > \varepsilon` (not its square: a singleton group
must match the vector rule). The experiment's variant is available as ``method="norm"``
for reproducing the thesis's group table.
"""

from __future__ import annotations

import numpy as np

__all__ = ["importance_scores", "coefficient_shares", "support_mask", "zero_unselected"]


def importance_scores(coef, beta, hyper, *, threshold=0.01, method="penalty"):
    """Importance score of every penalty group (features or groups, and the intercept).

    Parameters
    ----------
    coef : ndarray, shape (d + 1,)
        Lower-level solution ``ŵ`` (bias last).
    beta : ndarray, shape (n_hyper,)
        Learned weights.
    hyper : HyperModel
    threshold : float
        The thesis's ε (0.01 for the vector model, 0.005 in its group experiment).
    method : {"penalty", "norm"}
        Normalise masked weights (the thesis's formulas) or masked group norms (its
        Table 6.8 computation).

    Returns
    -------
    scores : ndarray, shape (n_penalty_groups,)
        One per entry of ``hyper.group_names``; non-negative, summing to 1 (all zeros
        when nothing survives the mask).
    """
    if method not in ("penalty", "norm"):
        raise ValueError(f"method must be 'penalty' or 'norm', got {method!r}")
    pg = hyper.penalty_groups
    pen = pg >= 0
    n_pg = len(hyper.hyper_of_group)
    norms = np.sqrt(np.bincount(pg[pen], weights=coef[pen] ** 2, minlength=n_pg))
    mask = norms > threshold
    # the scalar model ties every weight, so its score is uniform over the survivors
    raw = mask * (np.asarray(beta, float)[hyper.hyper_of_group] if method == "penalty" else norms)
    total = raw.sum()
    return raw / total if total > 0 else np.zeros(n_pg)


def coefficient_shares(coef, hyper, *, threshold=0.01):
    r"""Share of each selected feature in :math:`\sum_j|\hat w_j|` (bias excluded):
    ``BilevelSVC.feature_importances_``. A feature is selected when
    :math:`|\hat w_j| > \varepsilon`, or, in a penalty group of several coordinates,
    when the group norm :math:`\|\hat w_k\|_2 > \varepsilon`; all zeros when none is.

    Parameters
    ----------
    coef : ndarray, shape (d + 1,)
    hyper : HyperModel
    threshold : float

    Returns
    -------
    ndarray, shape (d,)
    """
    d = coef.shape[0] - 1
    pg = hyper.penalty_groups
    norms = np.sqrt(np.bincount(pg[pg >= 0], weights=coef[pg >= 0] ** 2,
                                minlength=len(hyper.hyper_of_group)))
    kept = np.where(pg[:d] >= 0, norms[np.maximum(pg[:d], 0)] > threshold,
                    np.abs(coef[:d]) > threshold)
    a = np.abs(coef[:d]) * kept
    return a / a.sum() if a.sum() > 0 else np.zeros(d)


def support_mask(coef, hyper, threshold):
    r"""Coordinates of the augmented :math:`w` (bias last) that the restricted model
    keeps: the features (or groups) with :math:`\|\hat w_k\|_2 > \varepsilon`, and
    every unpenalised coordinate (the bias always).

    Parameters
    ----------
    coef : ndarray, shape (d + 1,)
    hyper : HyperModel
    threshold : float
        The thesis's ε.

    Returns
    -------
    ndarray of bool, shape (d + 1,)
    """
    coef = np.asarray(coef, dtype=float)
    feat = coefficient_shares(coef, hyper, threshold=threshold) > 0
    keep = np.r_[feat, True]
    keep[np.asarray(hyper.penalty_groups) < 0] = True
    return keep


def zero_unselected(coef, hyper, threshold):
    """``coef`` with the coordinates :func:`support_mask` drops set to zero (None:
    ``coef`` unchanged): the fold model as the model restricted to its support reads
    it."""
    if threshold is None:
        return coef
    coef = np.asarray(coef, dtype=float)
    return np.where(support_mask(coef, hyper, threshold), coef, 0.0)
