r"""What a self-tuning kernel model learned, for the reports: the outer path of
:class:`bisvm.AutoSVC` / :class:`bisvm.AutoSVR` drawn on the cross-validated
(C, γ) surface, and the learned width of each feature.

The outer loop (BiSVM L-BFGS; Keerthi, Sindhwani & Chapelle 2007) records each
iterate as multipliers :math:`\beta` of the stage's starting point: the first entry
scales C (the ridge for kernel ridge), the last ones the widths (one shared, or one per
feature). Each stage starts where the previous one ended, and the last ended at the
fitted ``C_`` (``ridge_``) and ``learned_gamma_``, so the path in absolute values is
rebuilt backwards from the fitted attributes by ratios of multipliers (for kernel ridge
up to its small ridge floor). The surface is the k-fold error of the refitted model's
own class (``estimator_``: the L2-SVM, ε-SVR or kernel ridge) with one shared width on
the standardised features -- the space of the first stage -- on a log grid around the
path; it costs ``n_points**2 * cv`` fits, so the report computes it only when asked.
"""

from __future__ import annotations

import numpy as np

__all__ = ["outer_path", "cv_surface", "kernel_figures"]


def _first_name(est):
    # the first parameter of the outer path: kernel ridge's ridge (also when AutoSVR's
    # L1 stage then refitted an epsilon-SVR, whose C was never on the path), else C
    return "ridge" if getattr(est, "ridge_", None) is not None else "C"


def outer_path(est):
    """The outer iterates of a fitted AutoSVC/AutoSVR in absolute values.

    Returns
    -------
    list of (first, gamma)
        One pair per stage, in order: ``first`` of shape (k,) -- C, or the ridge of
        kernel ridge -- and ``gamma`` of shape (k, 1) for the shared-width stage or
        (k, d) for the per-feature stage.
    """
    stages = [s for s in est.tuning_.history if len(s)]
    if not stages:
        return []
    first_end = float(getattr(est, _first_name(est) + "_"))
    gamma_end = np.atleast_1d(np.asarray(est.learned_gamma_, dtype=float))
    out = []
    for stage in reversed(stages):
        B = np.array([np.asarray(h.beta, dtype=float) for h in stage])
        n_g = gamma_end.size
        first = first_end * B[:, 0] / B[-1, 0]
        gamma = gamma_end * B[:, -n_g:] / B[-1, -n_g:]
        out.append((first, gamma))
        # this stage started (multipliers 1) where the previous one ended
        first_end = float(first_end / B[-1, 0])
        start = gamma_end / B[-1, -n_g:]
        gamma_end = np.array([float(np.exp(np.mean(np.log(start))))])
    return out[::-1]


def _column_scale(est, X):
    """The standard deviations the estimator's widths are measured against (1 without
    ``standardize`` and for constant columns)."""
    import scipy.sparse as sp

    d = X.shape[1]
    if not est.get_params(deep=False).get("standardize", True):
        return np.ones(d)
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        sd = np.sqrt(np.maximum(np.asarray(X.multiply(X).mean(axis=0)).ravel() - mean**2, 0))
    else:
        sd = np.asarray(X, dtype=float).std(axis=0)
    return np.where(sd > 0, sd, 1.0)


def cv_surface(est, X, y, *, n_points=7, cv=5, span=1.0, progress=None):
    """The k-fold error of ``est.estimator_``'s class on a log grid of (C or ridge,
    shared γ) around the outer path.

    Parameters
    ----------
    est : fitted AutoSVC or AutoSVR
    X, y : the training rows the estimator was fitted on
    n_points : int
        Grid points per axis.
    cv : int
        Folds (stratified for a classifier).
    span : float
        Decades added on each side of the path's range.
    progress : callable, optional
        Called with 1 after each grid point.

    Returns
    -------
    dict
        ``first`` (grid of C or ridge), ``gamma`` (grid of γ), ``errors`` of shape
        (len(gamma), len(first)), ``first_name``, ``error_name``.
    """
    from sklearn.base import clone, is_classifier
    from sklearn.model_selection import cross_val_score

    if not isinstance(n_points, int) or n_points < 2:
        raise ValueError(f"n_points must be an integer >= 2, got {n_points!r}")
    base = getattr(est, "estimator_", None)
    if getattr(est, "final_model_", None) == "epsilon_svr":
        # the L1 stage replaced the tuned kernel ridge: the path lies on kernel ridge's
        # surface
        from ..estimators.kernel_ridge import KernelRidge

        base = KernelRidge(kernel="rbf", gamma=1.0, fit_intercept=True)
    if base is None or "gamma" not in base.get_params(deep=False):
        raise ValueError(f"{type(est).__name__} was refitted without an estimator whose RBF "
                         "width can be varied (its own dual solution, or an approximated "
                         "kernel): no surface")
    name = _first_name(est)
    stage = outer_path(est)[0]
    f = np.r_[stage[0], float(getattr(est, name + "_"))]
    g = np.r_[stage[1][:, 0], np.atleast_1d(np.asarray(est.learned_gamma_, float))]
    g = g[g > 0]

    def axis(v):
        lo, hi = np.log10(v.min()) - span, np.log10(v.max()) + span
        return 10.0 ** np.linspace(lo, hi, n_points)

    firsts, gammas = axis(f), axis(g)
    Xs = X / _column_scale(est, X) if not hasattr(X, "tocsr") else \
        X.multiply(1.0 / _column_scale(est, X)).tocsr()
    clf = is_classifier(est)
    yt = y if clf else (np.asarray(y, float) - est.y_mean_) / est.y_scale_
    scoring = "accuracy" if clf else "neg_mean_squared_error"
    errors = np.empty((gammas.size, firsts.size))
    for i, gm in enumerate(gammas):
        for j, fv in enumerate(firsts):
            model = clone(base).set_params(**{name: float(fv), "gamma": float(gm)})
            s = cross_val_score(model, Xs, yt, cv=cv, scoring=scoring).mean()
            errors[i, j] = 1.0 - s if clf else -s
            if progress is not None:
                progress(1)
    return {"first": firsts, "gamma": gammas, "errors": errors, "first_name": name,
            "error_name": f"{cv}-fold misclassification rate" if clf
            else f"{cv}-fold MSE (standardised target)"}


def kernel_figures(est, feature_names, *, X=None, y=None, n_points=7, cv=5,
                   progress=None):
    """``[(Axes, caption)]`` for a fitted AutoSVC/AutoSVR: the outer path on the
    cross-validated surface (given the training rows ``X``, ``y``), the learned
    relevance per feature (per-feature widths) and the widths along the outer path."""
    from .. import plots

    figs = []
    path = outer_path(est)
    name = _first_name(est)
    per_feature = np.ndim(est.learned_gamma_) == 1 and np.size(est.learned_gamma_) > 1 \
        or getattr(est, "widths", "shared") == "per_feature"
    if X is not None and y is not None and path:
        try:
            surf = cv_surface(est, X, y, n_points=n_points, cv=cv, progress=progress)
        except ValueError:
            surf = None
        if surf is not None:
            shared = [np.column_stack([path[0][0], path[0][1][:, 0]])]
            end = (shared[0][-1, 0], shared[0][-1, 1]) if per_feature else \
                (float(getattr(est, name + "_")), float(np.ravel(est.learned_gamma_)[0]))
            ax = plots.plot_cv_surface(surf["first"], surf["gamma"], surf["errors"],
                                       path=shared, final=end, first_label=name,
                                       error_label=surf["error_name"],
                                       final_label="end of the shared stage" if per_feature
                                       else "learned")
            what = ("the shared-width stage, whose end (star) starts the per-feature "
                    "stage" if per_feature else "its iterates from the start (square) to "
                    "the learned point (star)")
            figs.append((ax, f"Outer path on the {surf['error_name']} surface of the "
                             f"refitted model's class over ({name}, shared γ): {what}. "
                             f"Each of the {surf['errors'].size} grid points costs {cv} "
                             "fits; the path cost one solve per fold per iterate."))
    if per_feature:
        support = getattr(est, "support_", None)
        figs.append((plots.plot_learned_widths(feature_names, est.feature_importances_,
                                               support),
                     "Learned relevance per feature, γ_j var(x_j) normalised to sum to 1; "
                     "dark bars are the features kept by the one-standard-error rule."))
        stage = path[-1][1] if path else None
        if stage is not None and stage.shape[1] == len(feature_names) and len(stage) > 1:
            figs.append((plots.plot_width_paths(stage, feature_names),
                         "Per-feature widths along the outer iterations."))
    return figs
