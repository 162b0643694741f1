r"""Held-out checks of a fitted ``BilevelSVC`` decision rule, all on
the out-of-fold outputs of its k folds at the chosen β: every training row is validated
once (per repeat), by the fold model that did not train on it.

* :func:`beats_null` -- the **null-model test**: the model is kept only when the
  held-out log-loss of its outputs, calibrated by Platt's :math:`\sigma(af + c)` (below),
  is lower than that of the class prior :math:`\pi` (the intercept-only model) by more
  than one standard error of the paired per-row differences, :math:`\bar\delta =
  \sum_i\omega_i(\ell^{\rm null}_i - \ell_i) > (\sum_i\omega_i^2(\delta_i -
  \bar\delta)^2)^{1/2}` (normalised weights :math:`\omega_i`). Why: a table without
  signal still gives the criterion a minimum at some β, and that model keeps features
  that predict nothing; the one standard error is glmnet's ``lambda.1se`` spirit (prefer
  the simpler model unless the held-out rows clearly say otherwise), paired because both
  models are judged on the same rows. Why the log-loss and not the misclassification
  rate: on an unbalanced target a model can rank the classes well and still flip no
  majority prediction at the threshold, so a misclassification test calls it
  signal-free, while the log-loss, a proper scoring rule, sees the ranking. Pure noise
  still gives the intercept-only model.
* :func:`platt_shift` -- the **calibrated intercept**: Platt's logistic calibration
  :math:`P(\eta = 1\mid f) = \sigma(a f + c)` fitted on the out-of-fold outputs
  (Platt 1999, "Probabilistic outputs for support vector machines"), and the intercept
  shift :math:`c/a` that makes the decision :math:`f + c/a > 0` the calibrated
  posterior's :math:`P > 1/2`, the accuracy-optimal (Bayes) threshold. Why: the SVM's
  zero threshold is accuracy-optimal only if the outputs are symmetric around it; the
  L1 and ridge shrinkage pull the outputs of weak models towards the intercept, and on
  unbalanced targets towards the majority class.
* :func:`one_se_balanced_shift` -- the **one-standard-error balanced threshold**:
  between Platt's :math:`P > 1/2` and :math:`P > \text{prior}`, the thresholds whose
  error is within one paired standard error of the smallest, and of those the one of
  highest balanced accuracy (or, gated, the most accurate one whose balanced gain is
  itself beyond one standard error). Why: an accuracy-optimal threshold on an
  unbalanced target may give up minority rows that cost no accuracy the held-out rows
  can resolve.
* :func:`beats_null_balanced` -- a null-model test on the thresholded decision: kept
  when it beats the majority on accuracy, or on balanced accuracy without losing
  accuracy, by one standard error.
"""

from __future__ import annotations

import numpy as np

from .one_se import weighted_mean_se

__all__ = ["out_of_fold", "beats_null", "beats_null_balanced", "platt_shift",
           "one_se_balanced_shift", "balanced_weights_of", "platt_slope", "MIN_SLOPE",
           "platt_targets", "out_of_fold_counts", "out_of_fold_regression",
           "beats_null_regression"]


def out_of_fold(objective, coefs):
    """Pooled out-of-fold outputs, labels, weights (each fold's normalised criterion
    weights over k) and each row's fold majority label, at the fold solutions
    ``coefs`` of ``objective`` (a :class:`~bisvm.selection.bilevel.BilevelObjective`).
    """
    def majority(fold):
        sw = np.ones(fold.y_train.shape[0]) if fold.w_train is None else fold.w_train
        # the constant minimising the mean hinge loss is the (weighted) majority label
        return 1.0 if float(sw @ (fold.y_train > 0)) >= float(sw @ (fold.y_train < 0)) else -1.0

    return _pooled_outputs(objective, coefs, majority)


def _pooled_outputs(objective, coefs, constant):
    """Outputs, targets and weights of every fold's validation rows, pooled, with the
    intercept-only prediction ``constant(fold)`` of each row's fold."""
    fs, ys, ws, const = [], [], [], []
    k = len(coefs)
    for fold, crit, w in zip(objective.folds, objective.criteria, coefs):
        _, om = crit.terms(w)
        fs.append(np.asarray(crit.V @ w, dtype=float))
        ys.append(np.asarray(crit.eta, dtype=float))
        ws.append(om / k)
        const.append(np.full(fold.X_val.shape[0], constant(fold)))
    return np.concatenate(fs), np.concatenate(ys), np.concatenate(ws), np.concatenate(const)


def out_of_fold_counts(objective):
    """The (weighted) numbers of positive and negative validation rows over the folds
    of ``objective``: Platt's counts (:func:`platt_targets`), the row weights summed."""
    pos = neg = 0.0
    for fold in objective.folds:
        v = np.ones(fold.y_val.shape[0]) if fold.w_val is None else fold.w_val
        pos += float(v @ (fold.y_val > 0))
        neg += float(v @ (fold.y_val <= 0))
    return pos, neg


def beats_null(f, y, w, majority, *, counts=None):
    r"""Whether the outputs ``f`` carry signal about the labels ``y`` (±1): the held-out
    log-loss of Platt's calibration :math:`\sigma(af + c)` of ``f`` beats that of the
    weighted class prior :math:`\pi` by more than one paired standard error (module
    docstring). No ranking (:math:`a \le 0`, constant outputs) is no signal.

    Both calibrations are fitted on the same pooled out-of-fold rows (two parameters
    against one); the one-standard-error margin is far above that optimism, which is
    :math:`O(1/n)` per row.

    Returns
    -------
    keep : bool
    log_loss, null_log_loss : float
        The pooled weighted log-losses (nats per row) of the calibrated outputs and of
        the prior; ``majority`` (each row's fold majority label) is not used by the
        statistic, kept for the signature of :func:`beats_null_balanced`.
    """
    f = np.asarray(f, dtype=float)
    pos = np.asarray(y, dtype=float) > 0
    w = np.asarray(w, dtype=float) / np.sum(w)
    pi = float(w @ pos)
    if not 0.0 < pi < 1.0:
        return False, 0.0, 0.0
    loss0 = np.where(pos, -np.log(pi), -np.log1p(-pi))
    ac = _platt(f, np.where(pos, 1.0, -1.0), w, counts=counts)
    if ac is None:
        return False, float(w @ loss0), float(w @ loss0)
    z = ac[0] * f + ac[1]
    # -log sigma(z) for the positives, -log(1 - sigma(z)) for the negatives
    loss = np.where(pos, np.logaddexp(0.0, -z), np.logaddexp(0.0, z))
    gain, se = weighted_mean_se(loss0 - loss, w)
    return bool(gain > se), float(w @ loss), float(w @ loss0)


def platt_shift(f, y, w=None, *, max_iter=50, tol=1e-10, counts=None):
    r"""The intercept shift :math:`c/a` of Platt's calibration
    :math:`\sigma(a f + c)` of the outputs ``f`` against labels ``y`` (±1), fitted by
    Newton's method on the weighted logistic likelihood; 0 when the outputs do not rank
    the classes (:math:`a \le 0`) or are constant.

    Parameters
    ----------
    f, y : ndarray
    w : ndarray, optional
        Row weights (default equal).
    counts : (float, float), optional
        The (weighted) numbers of positive and negative rows in Platt's prior
        correction of the targets (default: the rows counted once each; with sample
        weights, their sums, so that a weight k counts as k rows).

    Returns
    -------
    float
    """
    ac = _platt(f, y, w, max_iter, tol, counts=counts)
    return 0.0 if ac is None else float(ac[1] / ac[0])


def platt_targets(y, counts=None):
    """Platt's targets: the labels moved off 0 and 1 by the counts' Bayes prior,
    :math:`(N_+ + 1)/(N_+ + 2)` and :math:`1/(N_- + 2)`, so that separable outputs
    still have a finite fit (Platt 1999)."""
    y = np.asarray(y, dtype=float)
    n_pos, n_neg = (float(np.sum(y > 0)), float(np.sum(y <= 0))) if counts is None \
        else (float(counts[0]), float(counts[1]))
    return np.where(y > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def _platt(f, y, w, max_iter=50, tol=1e-10, counts=None):
    """Platt's ``(a, c)`` (see :func:`platt_shift`), or None when the outputs are
    constant or do not rank the classes."""
    f = np.asarray(f, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.full(f.size, 1.0 / f.size) if w is None else np.asarray(w, float) / np.sum(w)
    scale = float(np.sqrt(w @ f**2))
    if not scale > 0:
        return None
    # Newton on theta = (a, c) with the outputs scaled to unit RMS (conditioning)
    Z = np.column_stack([f / scale, np.ones_like(f)])
    t = platt_targets(y, counts)
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
        return None
    return a, c


#: Smallest probability slope :func:`platt_slope` returns: outputs that do not rank the
#: classes still give probabilities whose arg-max is the sign of the output.
MIN_SLOPE = 1e-6


def platt_slope(g, y, w=None, *, max_iter=100, tol=1e-12, counts=None):
    r"""The slope :math:`a` of the one-parameter Platt calibration
    :math:`P(y = 1\mid g) = \sigma(a g)` of decision values ``g`` that already include
    the decision threshold, fitted by safeguarded Newton on the weighted logistic
    likelihood with Platt's targets (Platt 1999, *Probabilistic outputs for support
    vector machines*).

    Calibrating the shifted outputs without an offset keeps :math:`P > 1/2` exactly where
    :math:`g > 0`, so the arg-max of the probabilities is the prediction for every
    threshold rule; when the shift is Platt's own :math:`c/a`
    (:func:`platt_shift`), :math:`\sigma(a g) = \sigma(af + c)` is Platt's two-parameter
    fit itself (the same stationarity conditions). Outputs that do not rank the classes
    get :data:`MIN_SLOPE`.

    Parameters
    ----------
    g, y : ndarray
        Shifted decision values and labels (±1).
    w : ndarray, optional
        Row weights (default equal).
    counts : (float, float), optional
        As in :func:`platt_shift`.

    Returns
    -------
    float
    """
    g = np.asarray(g, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.full(g.size, 1.0 / g.size) if w is None else np.asarray(w, float) / np.sum(w)
    t = platt_targets(y, counts)

    def loss(a):
        z = a * g
        # -[t log sigma(z) + (1 - t) log(1 - sigma(z))], written stably
        return float(w @ (np.logaddexp(0.0, z) - t * z))

    a, f0 = 0.0, loss(0.0)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-a * g))
        d1 = float(w @ ((p - t) * g))
        d2 = float(w @ (p * (1.0 - p) * g * g))
        if not d2 > 0:
            break
        step = d1 / d2
        # halve until the likelihood does not get worse (Newton can overshoot a flat tail)
        for _ in range(60):
            f1 = loss(a - step)
            if f1 <= f0:
                break
            step *= 0.5
        a, f0 = a - step, f1
        if abs(step) <= tol * max(1.0, abs(a)):
            break
    return float(a) if np.isfinite(a) and a > MIN_SLOPE else MIN_SLOPE


def balanced_weights_of(y, w):
    r"""Row weights :math:`v_i = \omega_i / (2 W_{y_i})` (:math:`W_c` the weight of class
    :math:`c`), so that :math:`\sum_i v_i [\hat y_i = y_i]` is the balanced accuracy,
    the mean of the two classes' weighted recalls; a class with no weight gets none."""
    y = np.asarray(y, dtype=float)
    w = np.asarray(w, dtype=float)
    wp, wn = float(w[y > 0].sum()), float(w[y <= 0].sum())
    v = np.zeros_like(w)
    if wp > 0:
        v[y > 0] = w[y > 0] / (2.0 * wp)
    if wn > 0:
        v[y <= 0] = w[y <= 0] / (2.0 * wn)
    return v


def _paired_gain(delta, w):
    """Weighted mean of the paired per-row differences and its standard error."""
    w = np.asarray(w, dtype=float) / np.sum(w)
    return weighted_mean_se(delta, w)


def beats_null_balanced(f, y, w, majority):
    """The null-model test on the decision as it will be used: kept when its
    misclassification error beats the constant predictions ``majority`` by more than
    one paired standard error, or when its balanced accuracy beats theirs by more than
    one paired standard error (rows weighted by :func:`balanced_weights_of`) while its
    error is not above theirs by more than one paired standard error.

    Why: on an unbalanced target the majority class is hard to beat on accuracy, yet a
    model that finds the minority class with no clear loss of accuracy is what a user of
    an unbalanced table wants (Affairs, email and NHEFS: the accuracy-only test returned
    the intercept-only model, balanced accuracy 50 %). Both checks are glmnet's
    one-standard-error rule; the second is the same test with the balanced weights.

    Returns
    -------
    keep : bool
    error, null_error : float
    """
    f, y, majority = (np.asarray(a, dtype=float) for a in (f, y, majority))
    e = (np.sign(f) != y).astype(float)
    e0 = (majority != y).astype(float)
    gain, se = _paired_gain(e0 - e, w)
    w1 = np.asarray(w, float) / np.sum(w)
    if gain > se:
        return True, float(w1 @ e), float(w1 @ e0)
    bgain, bse = _paired_gain(e0 - e, balanced_weights_of(y, w))
    return bool(bgain > bse and -gain <= se), float(w1 @ e), float(w1 @ e0)


def one_se_balanced_shift(f, y, w=None, *, gated=False, counts=None):
    r"""The intercept shift of the **one-standard-error balanced threshold** on the
    out-of-fold outputs ``f`` with labels ``y`` (±1) and row weights ``w``.

    The candidate thresholds :math:`t` (decision :math:`f > t`) are those between the
    two thresholds of Platt's calibration :math:`\sigma(a f + c)`
    (:func:`platt_shift`): :math:`P > 1/2`, :math:`t_{1/2} = -c/a`, the accuracy-optimal
    (Bayes) one, and :math:`P > \pi`, :math:`t_\pi = (\operatorname{logit}\pi - c)/a`
    (:math:`\pi` the weighted share of positive rows), the balanced-accuracy-optimal
    one; one per distinct partition of the rows (the midpoint between consecutive
    distinct outputs, the end points themselves). Kept are those whose weighted
    misclassification error exceeds the smallest, :math:`e(t^*)`, by at most one
    standard error of the paired per-row differences,
    :math:`\bar\delta = \sum_i\omega_i(e_i(t) - e_i(t^*)) \le
    (\sum_i\omega_i^2(\delta_i - \bar\delta)^2)^{1/2}`. Of these:

    * ``gated=False`` (``threshold="1se_balanced"``): the one with the highest
      weighted balanced accuracy (ties: the nearest to :math:`t_{1/2}`);
    * ``gated=True`` (``threshold="1se_gated"``): the most accurate of those whose
      balanced accuracy beats :math:`t_{1/2}`'s by more than one paired standard error
      (rows weighted by :func:`balanced_weights_of`), else :math:`t_{1/2}` itself: the
      smallest move the held-out rows clearly support.

    Source: the one-standard-error rule (Breiman, Friedman, Olshen & Stone 1984,
    *Classification and Regression Trees* §3.4.3; glmnet's ``lambda.1se``) applied to
    the threshold: accuracy is kept up to what the held-out rows can resolve, and the
    freedom left is spent on the minority class. No constant is tuned: the range comes
    from the calibration, the tolerance from the rows.

    Parameters
    ----------
    f, y : ndarray
    w : ndarray, optional
        Row weights (default equal).
    gated : bool, default=False
    counts : (float, float), optional
        As in :func:`platt_shift`.

    Returns
    -------
    float
        :math:`-t`, so that the decision is :math:`f + \text{shift} > 0`; 0 when
        Platt's fit does not rank the classes or one class has no weight.
    """
    f = np.asarray(f, dtype=float)
    y = np.where(np.asarray(y, dtype=float) > 0, 1.0, -1.0)
    w = np.full(f.size, 1.0 / f.size) if w is None else np.asarray(w, float) / np.sum(w)
    wp, wn = float(w[y > 0].sum()), float(w[y < 0].sum())
    ac = _platt(f, y, w, counts=counts) if wp > 0 and wn > 0 else None
    if ac is None:
        return 0.0
    prior = wp / (wp + wn)
    a, c = ac
    t_half = -c / a
    t_prior = (np.log(prior / (1.0 - prior)) - c) / a
    cuts = _Cuts(f, y, w, t_half, t_prior)
    err, bal_err = cuts.errors(cuts.w), cuts.errors(cuts.v)
    ok = cuts.within_one_se(err, cuts.w)
    at_half = cuts.cand == cuts.k_half
    if gated:
        gain, se = cuts.paired(bal_err, cuts.v, int(np.flatnonzero(at_half)[0]))
        move = ok & (-gain > se) & ~at_half
        ok, primary = (move if move.any() else at_half), err
    else:
        primary = bal_err
    # the best primary among them; ties: the nearest to P > 1/2
    key = np.lexsort((np.abs(cuts.cand - cuts.k_half), np.where(ok, primary, np.inf)))
    return cuts.shift(int(cuts.cand[key[0]]))


class _Cuts:
    """The candidate thresholds of :func:`one_se_balanced_shift` as cuts of the sorted
    outputs (cut k: the k lowest rows predicted -1, the others +1), with prefix sums."""

    def __init__(self, f, y, w, t_half, t_prior):
        order = np.argsort(f, kind="stable")
        self.fs, self.ys, self.w = f[order], y[order], w[order]
        self.v = balanced_weights_of(self.ys, self.w)
        self.t_half, self.t_prior = t_half, t_prior
        n = f.size
        cuts = np.arange(n + 1)
        # a cut inside a run of equal outputs is no threshold
        valid = np.ones(n + 1, dtype=bool)
        valid[1:n] = self.fs[1:] > self.fs[:-1]
        lo, hi = sorted((t_half, t_prior))
        self.k_lo = int(np.searchsorted(self.fs, lo, side="right"))
        self.k_hi = int(np.searchsorted(self.fs, hi, side="right"))
        self.k_half = self.k_lo if t_half == lo else self.k_hi
        self.cand = cuts[valid & (cuts >= self.k_lo) & (cuts <= self.k_hi)]

    @staticmethod
    def _below(a):
        return np.concatenate([np.zeros(1), np.cumsum(a)])

    def errors(self, u):
        """The u-weighted misclassification of every candidate cut."""
        pos, neg = self._below(u * (self.ys > 0)), self._below(u * (self.ys < 0))
        return pos[self.cand] + (neg[-1] - neg[self.cand])

    def within_one_se(self, err, u):
        """Which candidates' u-weighted error is within one paired standard error of the
        smallest."""
        mean, se = self.paired(err, u, int(np.argmin(err)))
        return mean <= se + 1e-15

    def paired(self, err, u, j):
        """Each candidate's u-weighted error minus candidate j's, and the standard error
        of the paired per-row differences: only the rows between two cuts change
        prediction, and there the difference is -y_i (cut below j's) or +y_i (above)."""
        u = u / np.sum(u)
        k_ref = self.cand[j]
        lo_k, hi_k = np.minimum(self.cand, k_ref), np.maximum(self.cand, k_ref)
        sgn = np.where(self.cand < k_ref, -1.0, 1.0)
        u2, u2y = self._below(u**2), self._below(u**2 * self.ys)
        mean = err - float(err[j])
        s2 = u2[hi_k] - u2[lo_k]
        s1 = sgn * (u2y[hi_k] - u2y[lo_k])
        return mean, np.sqrt(np.maximum(s2 - 2.0 * mean * s1 + mean**2 * u2[-1], 0.0))

    def shift(self, k):
        """-t of cut k: Platt's thresholds at the ends, else the midpoint."""
        if k == self.k_half:
            return float(-self.t_half)
        if k in (self.k_lo, self.k_hi):
            return float(-self.t_prior)
        return float(-0.5 * (self.fs[k - 1] + self.fs[k]))


def out_of_fold_regression(objective, coefs):
    """Pooled out-of-fold predictions, targets, weights (each fold's normalised
    criterion weights over k) and the intercept-only prediction of each row (the
    weighted mean of its fold's training targets), at the fold solutions ``coefs``."""
    def mean(fold):
        sw = np.ones(fold.y_train.shape[0]) if fold.w_train is None else fold.w_train
        return float(sw @ fold.y_train) / float(sw.sum())

    return _pooled_outputs(objective, coefs, mean)


def beats_null_regression(f, y, w, null_pred):
    r"""Whether out-of-fold predictions ``f`` beat the intercept-only ones by more than
    one paired standard error of the squared error: with
    :math:`\delta_i = (y_i - m_i)^2 - (y_i - f_i)^2` and normalised weights ω, the mean
    gain :math:`\bar\delta = \sum\omega_i\delta_i` must exceed
    :math:`(\sum\omega_i^2(\delta_i - \bar\delta)^2)^{1/2}` (the one-standard-error
    spirit of glmnet's ``lambda.1se``: keep the simpler model unless the data clearly
    say otherwise). Returns (keep, model MSE, null MSE)."""
    om = np.asarray(w, dtype=float) / float(np.sum(w))
    e1, e0 = (y - f) ** 2, (y - null_pred) ** 2
    gain, se = _paired_gain(e0 - e1, om)
    return bool(gain > se), float(om @ e1), float(om @ e0)
