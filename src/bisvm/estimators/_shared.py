"""The fitted attributes of ``BilevelSVC(multiclass="shared")`` from a
:class:`~bisvm.selection.multiclass.SharedFit`, named as the one-vs-rest fit names them."""

from __future__ import annotations

import numpy as np

__all__ = ["shared_attributes"]


def shared_attributes(fit, l2_penalty, learn_l2):
    """``{attribute name: value}`` of a shared-support multiclass fit.

    Parameters
    ----------
    fit : SharedFit
    l2_penalty : float
        The fixed α (reported unless it was learned: then the last entry of ``fit.beta``).
    learn_l2 : bool
    """
    K = fit.coef.shape[0]
    n_l1 = fit.beta.size - int(learn_l2)
    freq = np.asarray(fit.fold_supports, dtype=float).mean(axis=0)
    return {
        "coef_": np.asarray(fit.coef, dtype=float),
        "intercept_": np.asarray(fit.intercept, dtype=float),
        "penalty_weights_": fit.beta[:n_l1],
        "penalty_weight_names_": tuple(fit.hyper.names[:n_l1]),
        "l2_penalty_": float(fit.beta[-1]) if learn_l2 else l2_penalty,
        "validation_score_": fit.value,
        "balanced_criterion_": fit.balanced,
        "refined_": fit.refined,
        "importance_": fit.importance,
        "importance_names_": tuple(fit.hyper.group_names),
        "n_iter_": fit.n_iter,
        "history_": fit.history,
        "feature_importances_": fit.feature_importance,
        "support_": np.asarray(fit.support, dtype=bool),
        # one support for every class: each class's frequency is the feature's
        "selection_frequency_": freq,
        "selection_frequency_per_class_": np.tile(freq, (K, 1)),
        "probability_slope_": np.asarray(fit.slopes, dtype=float),
        "lower_level_solves_": fit.lower_solves,
        "lower_level_iterations_": fit.lower_iterations,
        "null_model_": np.zeros(K, dtype=bool),
        "intercept_shift_": np.zeros(K),
        "solver_": fit.solver,
    }
