r"""The selected features of a fitted ``BilevelSVC`` and the model restricted to them
(``refit="support"``, an extension of González Vallejo (2024)).

The thesis selects the features with :math:`|\hat w_j| > \varepsilon`, but its
Pseudo-Huber L1 smoothing leaves every other coefficient small and nonzero, and the refit
it returns predicts with all of them: ``support_`` then names features that the model
does not depend on alone. Two effects follow:

* **Leakage.** Below ε a coefficient still moves the outputs; many sub-ε coefficients
  together spread the test outputs and cost accuracy.
* **Whole-model shrinkage.** The scale-free criterion ``"scaled_margin"`` judges the
  direction of :math:`\hat w`, not its length. Far above the zero-model weight the
  smoothed penalty acts as a ridge of weight :math:`\beta/\gamma` on every
  coefficient, and the criterion can prefer that ridge-limit direction, where no
  coefficient exceeds ε although the model uses every feature.

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
under both readings, as fitted and as returned: judged as fitted only, it can walk to
the ridge limit (no feature above ε, the restricted model empty); judged as returned
only, it can drop informative features. Zeroing the unselected coefficients, rather than
re-solving each candidate on its support, gives nearly the same choices at less cost.
The measurements behind these rules are on the selection notes page of the
documentation, with the commands that produced them.
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
