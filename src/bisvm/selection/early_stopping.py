r"""Early stopping of BiSVM L-BFGS on held-out rows (an extension of González Vallejo (2024)).

With one L1 weight per feature, the optimised k-fold criterion can be driven down by
fitting the noise of its validation rows (sparse-ho's users report the same for the
weighted Lasso). :class:`HeldOutMonitor` watches the same criterion on rows that no fold
trains or validates on, at every accepted outer iterate, stops the run when it has not
improved for ``patience`` iterations, and chooses the iterate to return:

* ``rule="min"``: the iterate with the smallest held-out value;
* ``rule="1se"``: a one-standard-error rule against the *start* (for ``BilevelSVC``'s
  vector and group models, the learned scalar model): an iterate counts only when its
  held-out gain over the start, :math:`\bar\delta = \sum_i\omega_i(t^{(0)}_i - t_i)`,
  exceeds the standard error of that paired mean,
  :math:`\big(\sum_i\omega_i^2(\delta_i-\bar\delta)^2\big)^{1/2}` (per-row terms
  :math:`t_i` of the criterion, normalised weights :math:`\omega_i`); among those the
  smallest held-out value wins, and without any the start is kept. The many-weight
  model has to show, on rows it never saw, a gain larger than the noise of those rows'
  estimate before it replaces the one-weight model (the spirit of glmnet's
  ``lambda.1se``: prefer the simpler model unless the data clearly say otherwise).
  With a support ``threshold`` (``BilevelSVC(refit="support")``), when no iterate gains
  beyond one standard error, the iterate with the fewest selected features among those
  not *worse* than the start by more than one standard error is kept (the start if none
  is sparser): glmnet's rule again, in the number of features (Friedman, Hastie &
  Tibshirani 2010, "Regularization paths for generalized linear models via coordinate
  descent").
"""

from __future__ import annotations

import numpy as np

from .importance import zero_unselected
from .one_se import pooled_terms, weighted_mean_se

__all__ = ["HeldOutMonitor", "MONITOR_RULES"]

MONITOR_RULES = ("min", "1se")


class HeldOutMonitor:
    """Held-out criterion of the iterates of one :func:`~bisvm.selection.bilevel.
    bisvm_lbfgs` run.

    Parameters
    ----------
    monitor : BilevelObjective
        The held-out folds (the optimised criterion's rows are their training rows).
    warm : tuple of ndarray or None
        Warm starts of the monitor's first lower-level solves.
    patience : int
        Iterations without a held-out improvement before stopping.
    rule : {"min", "1se"}
        Which iterate :attr:`best` holds (module docstring).
    threshold : float, optional
        Judge the held-out rows with the coefficients that
        :func:`~bisvm.selection.importance.support_mask` drops set to zero, as the
        model restricted to its support (``BilevelSVC(refit="support")``) will read
        them; None: the solutions as they are.

    Attributes
    ----------
    best : (Evaluation, float) or None
        The chosen iterate and its optimised criterion value.
    """

    def __init__(self, monitor, warm, patience, rule="min", threshold=None):
        if rule not in MONITOR_RULES:
            raise ValueError(f"monitor_rule must be one of {MONITOR_RULES}, got {rule!r}")
        self.monitor, self.patience, self.rule = monitor, patience, rule
        self.threshold = threshold
        self.warm = None if warm is None else tuple(warm)
        self.best, self._best_value, self.since = None, np.inf, 0
        self._raw_best = np.inf
        self._start_terms = None
        self._gained, self._best_nnz = False, None

    def update(self, ev, value, tol):
        """Solve the monitor's folds at ``ev.beta``; returns (held-out value, stop,
        lower-level iterations)."""
        coefs, it = self.monitor.solve(ev.beta, self.warm, tol)
        self.warm = coefs
        if self.threshold is not None:
            coefs = tuple(zero_unselected(c, self.monitor.hyper, self.threshold)
                          for c in coefs)
        t, om = pooled_terms(self.monitor, coefs)
        m = float(om @ t)
        # patience counts iterations without a raw held-out improvement
        # (the first value is the best so far: inf - inf would compare as NaN)
        if not np.isfinite(self._raw_best) or \
                m < self._raw_best - 1e-6 * max(abs(self._raw_best), 1e-12):
            self._raw_best, self.since = m, 0
        else:
            self.since += 1
        nnz = self._n_selected(coefs)
        if self._start_terms is None:
            self._start_terms = t
            self.best, self._best_value, self._best_nnz = (ev, value), m, nnz
            return m, self.since >= self.patience, it
        gain, se = self._paired_gain(t, om)
        if m < self._best_value - 1e-6 * max(abs(self._best_value), 1e-12) and \
                (self.rule == "min" or gain > se):
            self.best, self._best_value, self._best_nnz = (ev, value), m, nnz
            self._gained = True
        elif self.rule == "1se" and not self._gained and nnz is not None and \
                nnz < self._best_nnz and gain > -se:
            # no iterate is better beyond the noise: the sparsest one that is not worse
            # beyond it (glmnet's lambda.1se, in the number of features)
            self.best, self._best_value, self._best_nnz = (ev, value), m, nnz
        return m, self.since >= self.patience, it

    def _n_selected(self, coefs):
        """Selected features of the monitor's solutions (None without a threshold)."""
        if self.threshold is None:
            return None
        return sum(int(np.count_nonzero(c[:-1])) for c in coefs)

    def _paired_gain(self, t, om):
        r"""Held-out gain over the start, :math:`\bar\delta`, and its standard error."""
        return weighted_mean_se(self._start_terms - t, om)
