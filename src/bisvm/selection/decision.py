r"""Two held-out checks of a fitted ``BilevelSVC`` decision rule (issue #12), both on
the out-of-fold outputs of its k folds at the chosen β: every training row is validated
once (per repeat), by the fold model that did not train on it.

* :func:`beats_null` -- the **null-model test**: the model is kept only when its pooled
  validation misclassification error is lower than that of the intercept-only model
  (each fold's majority class) by more than one standard error of the paired per-row
  differences, :math:`\bar\delta = \sum_i\omega_i(e^{\rm null}_i - e_i) >
  (\sum_i\omega_i^2(\delta_i - \bar\delta)^2)^{1/2}` (normalised weights
  :math:`\omega_i`). Why: a table without signal (every method of the panel predicts
  the majority class on NHEFS's smoking-cessation target) still gives the criterion a
  minimum at some β, and that model keeps 10-25 features that predict nothing; the one
  standard error is glmnet's ``lambda.1se`` spirit (prefer the simpler model unless
  the held-out rows clearly say otherwise), paired because both rules are judged on
  the same rows.
* :func:`platt_shift` -- the **calibrated intercept**: Platt's logistic calibration
  :math:`P(\eta = 1\mid f) = \sigma(a f + c)` fitted on the out-of-fold outputs
  (Platt 1999, "Probabilistic outputs for support vector machines"), and the intercept
  shift :math:`c/a` that makes the decision :math:`f + c/a > 0` the calibrated
  posterior's :math:`P > 1/2`, the accuracy-optimal (Bayes) threshold. Why: the SVM's
  zero threshold is accuracy-optimal only if the outputs are symmetric around it; the
  L1 and ridge shrinkage pull the outputs of weak models towards the intercept, and on
  unbalanced targets towards the majority class (the panel's balanced accuracy on
  bfi, creditcard and affairs was 1-3 points below LinearSVC's).
"""

from __future__ import annotations

import numpy as np

__all__ = ["out_of_fold", "beats_null", "platt_shift"]


def out_of_fold(objective, coefs):
    """Pooled out-of-fold outputs, labels, weights (each fold's normalised criterion
    weights over k) and each row's fold majority label, at the fold solutions
    ``coefs`` of ``objective`` (a :class:`~bisvm.selection.bilevel.BilevelObjective`).
    """
    fs, ys, ws, maj = [], [], [], []
    k = len(coefs)
    for fold, crit, w in zip(objective.folds, objective.criteria, coefs):
        _, om = crit.terms(w)
        fs.append(np.asarray(crit.V @ w, dtype=float))
        ys.append(np.asarray(crit.eta, dtype=float))
        ws.append(om / k)
        sw = np.ones(fold.y_train.shape[0]) if fold.w_train is None else fold.w_train
        # the constant minimising the mean hinge loss is the (weighted) majority label
        m = 1.0 if float(sw @ (fold.y_train > 0)) >= float(sw @ (fold.y_train < 0)) else -1.0
        maj.append(np.full(fold.X_val.shape[0], m))
    return np.concatenate(fs), np.concatenate(ys), np.concatenate(ws), np.concatenate(maj)


def beats_null(f, y, w, majority):
    """Whether the outputs ``f`` beat the constant predictions ``majority`` on labels
    ``y`` by more than one paired standard error (module docstring).

    Returns
    -------
    keep : bool
    error, null_error : float
        The pooled weighted misclassification rates (a zero output is an error).
    """
    e = (np.sign(f) != y).astype(float)
    e0 = (majority != y).astype(float)
    delta = e0 - e
    gain = float(w @ delta)
    se = float(np.sqrt(np.sum(w**2 * (delta - gain) ** 2)))
    return gain > se, float(w @ e), float(w @ e0)


def platt_shift(f, y, w=None, *, max_iter=50, tol=1e-10):
    r"""The intercept shift :math:`c/a` of Platt's calibration
    :math:`\sigma(a f + c)` of the outputs ``f`` against labels ``y`` (±1), fitted by
    Newton's method on the weighted logistic likelihood; 0 when the outputs do not rank
    the classes (:math:`a \le 0`) or are constant.

    Parameters
    ----------
    f, y : ndarray
    w : ndarray, optional
        Row weights (default equal).

    Returns
    -------
    float
    """
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.full(f.size, 1.0 / f.size) if w is None else np.asarray(w, float) / np.sum(w)
    scale = float(np.sqrt(w @ f**2))
    if not scale > 0:
        return 0.0
    # Newton on theta = (a, c) with the outputs scaled to unit RMS (conditioning)
    Z = np.column_stack([f / scale, np.ones_like(f)])
    # Platt's targets: the labels moved off 0 and 1 by the counts' Bayes prior, so that
    # separable outputs still have a finite fit
    n_pos, n_neg = int(np.sum(y > 0)), int(np.sum(y <= 0))
    t = np.where(y > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    theta = np.zeros(2)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(Z @ theta)))
        g = Z.T @ (w * (p - t))
        H = (Z * (w * p * (1.0 - p))[:, None]).T @ Z + 1e-12 * np.eye(2)
        step = np.linalg.solve(H, g)
        theta -= step
        if np.max(np.abs(step)) < tol:
            break
    a, c = theta[0] / scale, theta[1]
    if not (np.isfinite(a) and np.isfinite(c)) or a <= 0:
        return 0.0
    return float(c / a)
