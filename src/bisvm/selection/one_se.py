r"""The one-standard-error rule along the scalar path of BiSVM (issue #12), and the
validation splits of ``BilevelSVC``'s criterion (:func:`validation_splits`).

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
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

from .lower_level import beta_upper_bound

__all__ = ["pooled_terms", "one_se_scalar", "validation_splits"]


def pooled_terms(objective, coefs):
    """Pooled per-row terms and weights of every fold's criterion at ``coefs``: the
    objective's value is ``weights @ terms`` (each fold weighs 1/k)."""
    ts, ws = [], []
    k = len(coefs)
    for c, w in zip(objective.criteria, coefs):
        t, om = c.terms(w)
        ts.append(t)
        ws.append(om / k)
    return np.concatenate(ts), np.concatenate(ws)


def one_se_scalar(objective, beta, *, warm=None, factor=1.25, max_steps=40, inner_tol=1e-9):
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
    coefs, _ = objective.solve(beta * ones, warm, inner_tol)
    t, om = pooled_terms(objective, coefs)
    J0 = float(om @ t)
    se = float(np.sqrt(np.sum(om**2 * (t - J0) ** 2)))
    # the bisvm_lbfgs bound: beyond it every coefficient is smoothed away
    bmax = beta_upper_bound(objective.folds)
    best, best_coefs, b, steps = float(beta), coefs, float(beta), 0
    for _ in range(max_steps):
        b *= factor
        if b >= bmax:
            break
        coefs, _ = objective.solve(b * ones, coefs, inner_tol)
        steps += 1
        t, om = pooled_terms(objective, coefs)
        if float(om @ t) > J0 + se:
            break
        best, best_coefs = b, coefs
    return best, best_coefs, steps


def validation_splits(y, split, *, validation_fraction, cv, random_state):
    """Training/validation index pairs of BilevelSVC's criterion: one stratified split of
    ``validation_fraction`` of the rows (``split="holdout"``) or ``cv`` stratified
    shuffled folds (``"kfold"``); the parameters are validated here."""
    X = np.zeros((len(y), 1))
    classes, counts = np.unique(y, return_counts=True)
    if split == "holdout":
        f = validation_fraction
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not 0 < f < 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {f!r}")
        if counts.min() < 2:
            raise ValueError(
                f"a class has {counts.min()} sample; the stratified validation split "
                "needs at least 2 samples per class"
            )
        n_val = int(np.ceil(f * len(y)))
        if n_val < 2 or len(y) - n_val < 2:
            raise ValueError(
                f"n_samples={len(y)} is too few for validation_fraction={f}"
            )
        sss = StratifiedShuffleSplit(1, test_size=f, random_state=random_state)
        return list(sss.split(X, y))
    k = cv
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
        raise ValueError(f"cv must be an integer >= 2, got {k!r}")
    if len(y) < k:
        raise ValueError(f"n_samples={len(y)} is fewer than cv={k} folds")
    # a class rarer than k leaves some validation folds without it; scikit-learn's
    # StratifiedKFold warns about that, and every training fold still sees both classes
    # as long as the class has 2 members
    skf = StratifiedKFold(k, shuffle=True, random_state=random_state)
    return list(skf.split(X, y))
