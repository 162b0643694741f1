r"""The selected features of a fitted ``BilevelSVC`` and the model restricted to them
(``refit="support"``, beyond seed-000, issue #12).

The thesis selects the features with :math:`|\hat w_j| > \varepsilon` (seed-000 §2.9),
but its Pseudo-Huber L1 smoothing leaves every other coefficient small and nonzero, and
the refit it returns predicts with all of them: ``support_`` then names features that
the model does not depend on alone. The panel (``benchmarks/bench_panel.py``) shows how
much they carry:

* **Leakage.** Below ε a coefficient still moves the outputs: on the 200 × 2,000
  problem (20 informative features, seeds 0-2) the 1,980 sub-ε coefficients of the
  thesis's refit spread the test outputs with a standard deviation of 0.17-0.19, beside
  0.51-0.66 from the 20 selected ones. Solved with them fixed at zero, the same
  procedure gives 88.1 % test accuracy instead of 86.0 %, and 97.4 % instead of 96.6 %
  on seed-004's 200 × 400 problem (5 seeds each).
* **Whole-model shrinkage.** The scale-free criterion ``"scaled_margin"`` judges the
  direction of :math:`\hat w`, not its length. Far above the zero-model weight the
  smoothed penalty acts as a ridge of weight :math:`\beta/\gamma` on every
  coefficient, and the criterion can prefer that ridge-limit direction: on the biopsy
  table (seeds 0 and 2) BiSVM went to β = 3.4, every :math:`|\hat w_j| \approx
  0.002`; the thesis's ε reported no feature while the model used all nine.

So the final model is solved with the unselected coefficients fixed at zero
(:func:`restrict_hyper`, :func:`restrict_folds`): the lower level at the learned β on
the selected columns only, as SVM-RFE refits after each elimination and glmnet's relaxed
fit refits on the lasso's support. The decision checks (null model, threshold) use the
fold models restricted the same way, so they judge the model that is returned. And the
scalar stage compares its candidates (the scan points, BiSVM's end point against its
start) by :func:`thresholded_value`, the criterion of the fold models with the
unselected coefficients zeroed, and the refinement's held-out monitor judges its
iterates the same way (:class:`~bisvm.selection.early_stopping.HeldOutMonitor`'s
``threshold``): a candidate carried by sub-ε coefficients (the ridge limit) loses to
one whose selected features carry it. The one-standard-error path of the wide tables
(:func:`~bisvm.selection.one_se.one_se_scalar`) must stay within one standard error
under both readings, as fitted and as returned: judged as fitted only, it walked to the
ridge limit on bench_wide's leukemia-shaped problem (72 × 7,129, seeds 0 and 2: β ≈ 9,
no feature above ε, the restricted model empty); judged as returned only, it dropped
informative features on the 200 × 2,000 one (16-18 of 20 kept instead of 20).
(Re-solving each candidate on its support instead of zeroing chose the same scalar β on
every panel table but seed-004's, at 25 % more CPU time.)
"""

from __future__ import annotations

import numpy as np

from .bilevel import Fold, HyperModel
from .importance import support_mask
from .one_se import pooled_terms

__all__ = ["support_mask", "thresholded_value", "restrict_hyper", "restrict_folds", "expand"]


def thresholded_value(objective, coefs, threshold):
    """The criterion of ``objective`` (mean over its folds) at the fold solutions
    ``coefs`` with every unselected coefficient (:func:`support_mask`) set to zero: the
    judge of the scalar stage's candidates when the returned model is restricted to
    its support."""
    t, om = pooled_terms(objective, coefs, threshold)
    return float(om @ t)


def restrict_hyper(hyper, keep):
    r"""The :class:`~bisvm.selection.bilevel.HyperModel` of the coordinates ``keep``,
    taking the same β: its penalty groups are the kept members of the groups that keep
    one (renumbered), each weighted by the same entry of β."""
    pg = np.asarray(hyper.penalty_groups)[keep]
    present = np.unique(pg[pg >= 0])
    renum = np.full(np.asarray(hyper.penalty_groups).max() + 2, -1, dtype=np.int64)
    renum[present] = np.arange(present.size)
    new_pg = np.where(pg >= 0, renum[pg], -1).astype(np.int64)
    names = tuple(hyper.group_names[k] for k in present) if hyper.group_names else ()
    return HyperModel(hyper.kind, new_pg, np.asarray(hyper.hyper_of_group)[present],
                      hyper.names, names, hyper.learn_l2)


def restrict_folds(folds, keep):
    """The folds on the columns ``keep`` (rows and weights unchanged)."""
    return tuple(Fold(f.X_train[:, keep], f.y_train, f.X_val[:, keep], f.y_val,
                      f.w_train, f.w_val) for f in folds)


def expand(coef, keep):
    """Coefficients on the kept coordinates, as the full augmented vector (zeros
    elsewhere)."""
    out = np.zeros(keep.shape[0])
    out[keep] = coef
    return out
