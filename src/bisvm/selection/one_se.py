r"""The one-standard-error rule along the scalar path of BiSVM.

After the scalar model's BiSVM run has found :math:`\beta^\star` (the minimum of the k-fold
criterion :math:`J`), :func:`one_se_scalar` walks up the path
:math:`\beta_l = \beta^\star\rho^l` (ρ = 1.25 by default), warm-started, and keeps the
largest :math:`\beta_l` with :math:`J(\beta_l) \le J(\beta^\star) + s^\star`, where
:math:`s^\star` is the standard error of :math:`J(\beta^\star)`: the criterion is a mean
of one term per validation row (each row is validated once over the k folds), so with
normalised weights :math:`\omega_i`, :math:`s^\star = \big(\sum_i\omega_i^2(t_i -
J)^2\big)^{1/2}`. This is glmnet's ``lambda.1se`` (Hastie, Tibshirani & Friedman,
*Elements of Statistical Learning* §7.10) on BiSVM's scalar path: models within one
standard error of the best are statistically indistinguishable from it on these rows,
and the sparsest of them is chosen. For ``BilevelSVC``'s vector and group models the
result is also the start of the refinement.

:func:`one_se_error_scalar` applies the same rule to the pooled validation
misclassification error :math:`E(\beta) = \sum_i\omega_i[\operatorname{sign}(v_i^\top
\hat w) \ne \eta_i]` (:func:`pooled_error`), glmnet's ``type.measure="class"``: it
evaluates the path :math:`\beta^\star\rho^l` up to the scan's top
(:func:`~bisvm.selection.search.scan_betas`), finds the smallest error
:math:`E_{\min}` on it with its standard error
:math:`s = \big(\sum_i\omega_i^2(e_i - E_{\min})^2\big)^{1/2}`, and keeps the largest
β whose error is at most :math:`E_{\min} + s`. The error is a step function of β, so the
whole path is evaluated (it may fall again after a rise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .importance import zero_unselected
from .model import beta_upper_bound

__all__ = ["weighted_mean_se", "pooled_terms", "pooled_error", "one_se_scalar",
           "one_se_error_scalar",
           "ErrorPath", "SCALAR_RULES"]

#: The rules of ``BilevelSVC(scalar_rule=...)``.
SCALAR_RULES = ("min", "1se", "1se_error", "auto")



def weighted_mean_se(values, w):
    r"""The weighted mean :math:`m = \sum_i w_i v_i` of per-row values and its standard
    error :math:`\sqrt{\sum_i w_i^2 (v_i - m)^2}` (``w`` summing to one): the quantities
    of the one-standard-error rule (Breiman et al. 1984; glmnet's ``lambda.1se``), paired
    when ``values`` are per-row differences of two models."""
    m = float(w @ values)
    return m, float(np.sqrt(np.sum(w**2 * (values - m) ** 2)))

def pooled_terms(objective, coefs, threshold=None):
    """Pooled per-row terms and weights of every fold's criterion at ``coefs``: the
    objective's value is ``weights @ terms`` (each fold weighs 1/k). With
    ``threshold``, of the fold models restricted to their supports
    (:func:`~bisvm.selection.importance.zero_unselected`)."""
    ts, ws = [], []
    k = len(coefs)
    hyper = None if threshold is None else objective.hyper
    for c, w in zip(objective.criteria, coefs):
        t, om = c.terms(zero_unselected(w, hyper, threshold))
        ts.append(t)
        ws.append(om / k)
    return np.concatenate(ts), np.concatenate(ws)


def pooled_error(objective, coefs, threshold=None):
    """Pooled per-row misclassification indicators (a zero output counts as an error)
    and their weights, over every fold's validation rows at ``coefs``: the pooled error
    rate is ``weights @ errors`` (each fold weighs 1/k; within a fold the criterion's
    normalised row weights, class-balanced when the objective is). ``threshold`` as in
    :func:`pooled_terms`."""
    es, ws = [], []
    k = len(coefs)
    hyper = None if threshold is None else objective.hyper
    for c, w in zip(objective.criteria, coefs):
        w = zero_unselected(w, hyper, threshold)
        _, om = c.terms(w)
        es.append((np.sign(c.V @ w) != c.eta).astype(float))
        ws.append(om / k)
    return np.concatenate(es), np.concatenate(ws)


@dataclass(frozen=True)
class ErrorPath:
    """The path of :func:`one_se_error_scalar`: β (increasing), pooled error and its
    standard error at each point, the index of the smallest error and of the choice."""

    betas: np.ndarray
    errors: np.ndarray
    std_errors: np.ndarray
    min_index: int
    chosen_index: int


def one_se_error_scalar(objective, beta, *, warm=None, factor=1.25, top=None, threshold=None,
                        max_steps=60, inner_tol=1e-9):
    r"""Largest scalar β on the path :math:`\beta\rho^l` (l = 0, 1, ...; below ``top``)
    whose pooled validation error is within one standard error of the path's smallest
    (module docstring).

    Parameters
    ----------
    objective : BilevelObjective
        With a scalar hyper model (the L1 weight only).
    beta : float
        The start of the path (the criterion's minimiser found by BiSVM).
    warm : tuple of ndarray, optional
        Lower-level solutions at ``beta`` (one per fold).
    factor : float
        ρ > 1.
    top : float, optional
        The path stops below it; default the scan's top
        (:func:`~bisvm.selection.search.scan_betas`), where the model is nearly empty.
    threshold : float, optional
        Judge the fold models restricted to their supports (:func:`pooled_error`).
    max_steps : int
    inner_tol : float

    Returns
    -------
    beta : float
    coefs : tuple of ndarray
        The lower-level solutions there.
    steps : int
        Path points evaluated beyond ``beta`` (each costs one solve per fold).
    path : ErrorPath
    """
    if objective.hyper.n_hyper != 1:
        raise ValueError("one_se_error_scalar needs the scalar model (one hyperparameter)")
    if not factor > 1:
        raise ValueError(f"factor must be > 1, got {factor!r}")
    if top is None:
        top = beta_upper_bound(objective.folds) / 10.0
    b, ones, steps = float(beta), np.ones(1), 0
    betas, errs, ses, sols = [], [], [], []
    coefs = warm
    while True:
        coefs, _ = objective.solve(b * ones, coefs, inner_tol)
        e, om = pooled_error(objective, coefs, threshold)
        E, se = weighted_mean_se(e, om)
        betas.append(b)
        errs.append(E)
        ses.append(se)
        sols.append(coefs)
        if b * factor >= top or steps >= max_steps:
            break
        b *= factor
        steps += 1
    errs, ses = np.array(errs), np.array(ses)
    k = int(np.argmin(errs))
    within = np.flatnonzero(errs <= errs[k] + ses[k])
    j = int(within[-1])
    path = ErrorPath(np.array(betas), errs, ses, k, j)
    return betas[j], sols[j], steps, path


def one_se_scalar(objective, beta, *, warm=None, factor=1.25, max_steps=40, inner_tol=1e-9,
                  threshold=None):
    r"""Largest scalar β on the path :math:`\beta\rho^l` whose criterion is within one
    standard error of the criterion at ``beta`` (module docstring).

    Parameters
    ----------
    objective : BilevelObjective
        With a scalar hyper model (the L1 weight only).
    beta : float
        The minimiser found by BiSVM.
    warm : tuple of ndarray, optional
        Lower-level solutions at ``beta`` (one per fold).
    factor : float
        ρ > 1, the step of the path.
    max_steps : int
    inner_tol : float
    threshold : float, optional
        Judge the fold models restricted to their supports (:func:`pooled_terms`): the
        criterion of ``BilevelSVC(refit="support")``'s model, whose sub-threshold
        coefficients are zero. Without it, far along the path the smoothed penalty's
        ridge limit (every coefficient below the threshold) can stay within the standard
        error while the restricted model is empty.

    Returns
    -------
    beta : float
        The chosen β (``beta`` itself when the next step is already worse).
    coefs : tuple of ndarray
        The lower-level solutions there.
    steps : int
        Path points evaluated (each costs one solve per fold).
    """
    if objective.hyper.n_hyper != 1:
        raise ValueError("one_se_scalar needs the scalar model (one hyperparameter)")
    if not factor > 1:
        raise ValueError(f"factor must be > 1, got {factor!r}")
    ones = np.ones(1)
    # the models as fitted, and (with a threshold) as returned, restricted to their
    # supports: a step must stay within one standard error under every reading
    readings = (None,) if threshold is None else (None, threshold)

    def band(coefs):
        return [weighted_mean_se(*pooled_terms(objective, coefs, r)) for r in readings]

    coefs, _ = objective.solve(beta * ones, warm, inner_tol)
    limits = [J0 + se for J0, se in band(coefs)]
    # the bisvm_lbfgs bound: beyond it every coefficient is smoothed away
    bmax = beta_upper_bound(objective.folds)
    best, best_coefs, b, steps = float(beta), coefs, float(beta), 0
    for _ in range(max_steps):
        b *= factor
        if b >= bmax:
            break
        coefs, _ = objective.solve(b * ones, coefs, inner_tol)
        steps += 1
        if any(J > lim for (J, _), lim in zip(band(coefs), limits)):
            break
        best, best_coefs = b, coefs
    return best, best_coefs, steps
