"""Figures of the bilevel sparse SVM (those of González Vallejo 2024), drawn with matplotlib.

Every function takes result records (not estimators' internals) and an optional ``ax``;
it returns the ``Axes``. Use :func:`save` to write a PNG with the non-interactive backend.
The figures of the self-tuning kernel models are in :mod:`bisvm.plots.kernel` (and
reached from here).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "plot_validation_curve",
    "plot_regularization_path",
    "plot_importance",
    "plot_selection_frequency",
    "plot_sparsity_heatmap",
    "plot_predicted_vs_true",
    "save",
    "plot_cv_surface",
    "plot_learned_widths",
    "plot_width_paths",
]


def _axes(ax, figsize=(6.4, 4.2)):
    if ax is not None:
        return ax
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_validation_curve(grid, trajectory=None, *, final=None, criterion="J", ax=None):
    """Validation criterion over scalar β (the grid) with the BiSVM iterates on it
    (as in González Vallejo 2024).

    Parameters
    ----------
    grid : GridResult
    trajectory : sequence of HistoryEntry, optional
        Scalar-model iterates, drawn as numbered points on the curve.
    final : float, optional
        Criterion reached by a vector / group model, drawn as a horizontal line.
    criterion : str
        Axis label.
    """
    ax = _axes(ax)
    ax.plot(grid.grid, grid.values, "-", color="0.4", lw=1.5, label="grid search (149 β)")
    k = int(np.argmin(grid.values))
    ax.plot(grid.grid[k], grid.values[k], "s", color="0.2", ms=7,
            label=f"grid best β={grid.grid[k]:.2f}")
    if trajectory:
        b = [float(np.ravel(h.beta)[0]) for h in trajectory]
        v = [h.value for h in trajectory]
        ax.plot(b, v, "o--", color="tab:red", ms=5, lw=1, label="BiSVM L-BFGS iterates")
        for i, (bi, vi) in enumerate(zip(b, v)):
            ax.annotate(str(i), (bi, vi), textcoords="offset points", xytext=(4, 4),
                        fontsize=7, color="tab:red")
    if final is not None:
        ax.axhline(final, color="tab:blue", ls=":", label=f"learned weights: {final:.4f}")
    ax.set_xscale("log")
    ax.set_xlabel("β (scalar L1 weight)")
    ax.set_ylabel(criterion)
    ax.set_title("Validation criterion over β")
    ax.legend(fontsize=8)
    return ax


def plot_regularization_path(grid, feature_names, *, beta=None, fold=0, top=12,
                             max_lines=200, ax=None):
    """Coefficients of the first fold's solution over the β grid (as in González Vallejo 2024).

    Parameters
    ----------
    grid : GridResult
        ``grid.coefs`` has shape (n_grid, n_folds, d + 1); the bias is not drawn.
    feature_names : sequence of str
    beta : float, optional
        The learned scalar β, marked by a vertical line.
    top : int
        Label the ``top`` features with the largest coefficient anywhere on the path.
    max_lines : int
        Draw at most this many paths, the largest (a line per feature of a 50,000-column
        text problem makes a figure of tens of megabytes and shows nothing more); the
        title says how many were drawn.
    """
    ax = _axes(ax)
    W = grid.coefs[:, fold, :-1]
    peak = np.max(np.abs(W), axis=0)
    order = np.argsort(-peak)
    shown = order[:max_lines]
    if shown.size < order.size:
        ax.set_title(f"Regularisation path ({shown.size:,} largest of {order.size:,} "
                     "features)")
    for r, j in enumerate(shown):
        ax.plot(grid.grid, W[:, j], lw=1.2 if r < top else 0.6,
                label=str(feature_names[j]) if r < top else None,
                alpha=1.0 if r < top else 0.5)
    if beta is not None:
        ax.axvline(beta, color="k", ls="--", lw=1, label=f"BiSVM β={beta:.3f}")
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("β (scalar L1 weight)")
    ax.set_ylabel("coefficient")
    if not ax.get_title():
        ax.set_title("Regularisation path")
    ax.legend(fontsize=6, ncol=2)
    return ax


def plot_importance(names, scores, reference=None, *, reference_label="tree-based (Gini)",
                    max_bars=60, ax=None):
    """Importance bars, optionally beside a reference importance (as in González Vallejo 2024).

    Parameters
    ----------
    names : sequence of str
    scores : ndarray
        BiSVM scores (each set sums to 1).
    reference : ndarray, optional
        E.g. ``ExtraTreesClassifier.feature_importances_``.
    max_bars : int
        Show at most this many features, those with the largest score (or reference),
        in their original order; the title says how many of how many.
    """
    names = [str(n) for n in names]
    scores = np.asarray(scores, dtype=float)
    title = "Feature importance"
    if len(names) > max_bars:
        key = scores if reference is None else np.maximum(scores, np.asarray(reference))
        keep = np.sort(np.argsort(-key, kind="stable")[:max_bars])
        title += f" ({max_bars} largest of {len(names):,})"
        names = [names[j] for j in keep]
        scores = scores[keep]
        reference = None if reference is None else np.asarray(reference)[keep]
    ax = _axes(ax, figsize=(6.4, max(3.0, 0.22 * len(names) + 1)))
    y = np.arange(len(names))
    h = 0.4 if reference is not None else 0.8
    ax.barh(y - (h / 2 if reference is not None else 0), scores, height=h,
            color="tab:red", label="BiSVM score")
    if reference is not None:
        ax.barh(y + h / 2, reference, height=h, color="0.6", label=reference_label)
    ax.set_yticks(y, names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("importance (sums to 1)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def plot_selection_frequency(names, frequency, *, threshold=None, max_bars=40,
                             title=None, xlabel="selection frequency", ax=None):
    r"""Horizontal bars of how often each feature was selected, most frequent first.

    A selection frequency is the share of the fits that select a feature: the fold
    models of one fit, or the :math:`2B` half-sample fits of stability selection, where
    the features of frequency at least :math:`\tau` form the stable set (Meinshausen &
    Bühlmann 2010, "Stability selection"; Shah & Samworth 2013). A frequency near 1 or 0
    is a choice the sample does not move; one near 1/2 is a coin toss.

    Parameters
    ----------
    names : sequence of str
    frequency : ndarray of shape (len(names),)
        Shares in [0, 1].
    threshold : float, optional
        :math:`\tau`, drawn as a vertical line; the bars at or above it are dark.
    max_bars : int
        Draw at most this many features, the most frequent (ties in their order); the
        title says how many of how many. Never-selected features are left out.
    title, xlabel : str, optional
    """
    names = [str(n) for n in names]
    freq = np.asarray(frequency, dtype=float)
    if freq.ndim != 1 or freq.shape[0] != len(names):
        raise ValueError(f"frequency must have one value per name ({len(names)}), got shape "
                         f"{freq.shape}")
    if not np.all(np.isfinite(freq) & (freq >= 0) & (freq <= 1)):
        raise ValueError("frequency must hold shares in [0, 1]")
    if threshold is not None and not 0 <= float(threshold) <= 1:
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
    picked = [j for j in np.argsort(-freq, kind="stable") if freq[j] > 0]
    shown = picked[:max_bars]
    title = title or "Selection frequency"
    if len(shown) < len(names):
        title += f" ({len(shown)} of {len(names):,} features"
        title += ", the most frequent)" if len(picked) > len(shown) else " ever selected)"
    ax = _axes(ax, figsize=(6.4, max(2.5, 0.22 * len(shown) + 1.2)))
    y = np.arange(len(shown))
    vals = freq[shown]
    stable = vals >= threshold if threshold is not None else np.ones(len(shown), bool)
    ax.barh(y, vals, height=0.7, color=np.where(stable, "tab:blue", "0.7"))
    if threshold is not None:
        ax.axvline(float(threshold), color="tab:red", ls="--", lw=1.2,
                   label=f"threshold τ = {float(threshold):.2f}")
        ax.legend(fontsize=8, loc="lower right")
    ax.set_yticks(y, [names[j] for j in shown], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    return ax


def plot_sparsity_heatmap(hinge_values, l1_values, counts, *, ax=None):
    """Number of nonzero coefficients over (μ, γ) (as in González Vallejo 2024).

    Parameters
    ----------
    hinge_values, l1_values : ndarray
        The μ (rows) and γ (columns) grids.
    counts : ndarray, shape (len(hinge_values), len(l1_values))
    """
    ax = _axes(ax)
    im = ax.imshow(counts, origin="lower", cmap="coolwarm", aspect="auto")
    ax.set_xticks(range(len(l1_values)), [f"{v:.2g}" for v in l1_values], rotation=90,
                  fontsize=7)
    ax.set_yticks(range(len(hinge_values)), [f"{v:.2g}" for v in hinge_values], fontsize=7)
    ax.set_xlabel("γ (l1_smoothing)")
    ax.set_ylabel("μ (hinge_smoothing)")
    ax.set_title("Nonzero coefficients (|w| > 0.001)")
    ax.figure.colorbar(im, ax=ax)
    return ax


def plot_predicted_vs_true(y_true, y_pred, *, title=None, ax=None):
    r"""Predicted against true values of a regression, with the identity line.

    Points on the diagonal are predicted exactly; the vertical spread about it is the
    error, in the target's units. The title gives :math:`R^2 = 1 - \sum (y-\hat y)^2 /
    \sum (y - \bar y)^2` and the root mean squared error of these rows.

    Parameters
    ----------
    y_true, y_pred : ndarray of shape (n,)
    title : str, optional
        First line of the title.
    """
    y_true = np.asarray(y_true, dtype=float).ravel()
    y_pred = np.asarray(y_pred, dtype=float).ravel()
    if y_true.shape != y_pred.shape or y_true.size == 0:
        raise ValueError("y_true and y_pred must be non-empty and of the same length, got "
                         f"{y_true.size} and {y_pred.size}")
    ax = _axes(ax, figsize=(5.0, 4.6))
    ax.scatter(y_true, y_pred, s=14, alpha=0.7, color="tab:blue", edgecolors="none")
    lo = float(min(y_true.min(), y_pred.min()))
    hi = float(max(y_true.max(), y_pred.max()))
    ax.plot([lo, hi], [lo, hi], color="0.4", lw=1, ls="--", label="prediction = truth")
    rmse = float(np.sqrt(np.mean((y_pred - y_true) ** 2)))
    ss = float(np.sum((y_true - y_true.mean()) ** 2))
    r2 = 1.0 - float(np.sum((y_pred - y_true) ** 2)) / ss if ss > 0 else float("nan")
    ax.set_xlabel("true")
    ax.set_ylabel("predicted")
    ax.set_title(f"{title or 'Predicted against true'}\nR² = {r2:.3f}, RMSE = {rmse:.4g} "
                 f"({y_true.size} rows)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return ax


def save(ax, path, dpi=110):
    """Write the figure of ``ax`` to ``path`` (PNG) and close it."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------------------
# Model selection and solver figures: leave-one-out criterion curves, decision
# boundaries of 2-D data, solver convergence.

__all__ += ["plot_loo_curves", "plot_decision_boundary", "plot_convergence"]


def plot_loo_curves(grid, curves, *, chosen=None, xlabel="μ (selectivity)",
                    ylabel="criterion", log_x=True, ax=None):
    r"""Leave-one-out (and k-fold) criterion curves over a hyperparameter grid
    (DiffLOO of Angulo Yauri 2020, approximate and exact LOO along the μ path).

    Parameters
    ----------
    grid : ndarray, shape (n_grid,)
        Hyperparameter values (increasing).
    curves : dict of str to ndarray of shape (n_grid,)
        One criterion per name, e.g. ``{"DiffLOO": ..., "exact LOO": ...}``; NaN entries
        (a criterion undefined at a grid point) leave gaps. The minimum of each curve is
        marked.
    chosen : float, optional
        The selected value, drawn as a vertical line.
    log_x : bool
        Logarithmic x axis (the grids are geometric).
    """
    ax = _axes(ax)
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError("grid must be a non-empty 1-D array")
    if not curves:
        raise ValueError("curves must hold at least one criterion")
    for name, vals in curves.items():
        v = np.asarray(vals, dtype=float)
        if v.shape != grid.shape:
            raise ValueError(f"curve {name!r} has shape {v.shape}, the grid {grid.shape}")
        (line,) = ax.plot(grid, v, "-", marker=".", lw=1.4, label=str(name))
        if np.any(np.isfinite(v)):
            k = int(np.nanargmin(v))
            ax.plot(grid[k], v[k], "o", ms=8, mfc="none", color=line.get_color())
    if chosen is not None:
        ax.axvline(float(chosen), color="k", ls="--", lw=1, label=f"chosen {chosen:.3g}")
    if log_x and np.all(grid > 0):
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title("Leave-one-out criteria (circles: minima)")
    ax.legend(fontsize=8)
    return ax


def plot_decision_boundary(estimator, X, y=None, *, feature_names=None, resolution=200,
                           margin=0.1, ax=None, class_names=None):
    r"""Decision regions of a fitted classifier on 2-D data, with the points.

    For a binary ``decision_function`` the zero level set :math:`f(x) = 0` is drawn solid
    and the margins :math:`f(x) = \pm 1` dashed (the support vectors of a C-SVC lie on
    or inside them; Cortes & Vapnik 1995, "Support-vector networks"); support vectors
    (``support_``) are circled. Without a ``decision_function`` the predicted classes are
    shaded.

    Parameters
    ----------
    estimator : fitted classifier with ``predict`` (and optionally ``decision_function``)
        Fitted on exactly two features.
    X : ndarray, shape (n, 2)
    y : ndarray, shape (n,), optional
        Labels of the points (colours).
    feature_names : pair of str, optional
    resolution : int
        Grid points per axis.
    margin : float
        Share of each axis range added around the data.
    class_names : dict, optional
        Label of ``y`` -> the name shown in the legend (e.g. ``{-1: 0, 1: 1}`` for a
        model fitted on ±1 codes of the user's classes 0/1).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"plot_decision_boundary needs 2-D data (n, 2), got shape {X.shape}")
    ax = _axes(ax, figsize=(5.6, 4.8))
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = margin * np.where(hi > lo, hi - lo, 1.0)
    gx = np.linspace(lo[0] - pad[0], hi[0] + pad[0], int(resolution))
    gy = np.linspace(lo[1] - pad[1], hi[1] + pad[1], int(resolution))
    xx, yy = np.meshgrid(gx, gy)
    grid = np.c_[xx.ravel(), yy.ravel()]
    classes = getattr(estimator, "classes_", None)
    dec = None
    if hasattr(estimator, "decision_function"):
        d = np.asarray(estimator.decision_function(grid))
        if d.ndim == 1:
            dec = d.reshape(xx.shape)
    if dec is not None:
        lim = float(np.max(np.abs(dec))) or 1.0
        cs = ax.contourf(xx, yy, dec, levels=21, cmap="RdBu_r", vmin=-lim, vmax=lim,
                         alpha=0.55)
        ax.contour(xx, yy, dec, levels=[-1.0, 0.0, 1.0], colors="k",
                   linestyles=["--", "-", "--"], linewidths=[0.8, 1.4, 0.8])
        ax.figure.colorbar(cs, ax=ax, label="decision value f(x)")
    else:
        pred = np.asarray(estimator.predict(grid))
        labels = np.unique(pred) if classes is None else np.asarray(classes)
        idx = np.searchsorted(labels, pred).reshape(xx.shape)
        ax.contourf(xx, yy, idx, levels=np.arange(idx.max() + 2) - 0.5, cmap="tab10",
                    alpha=0.35)
    if y is not None:
        y = np.asarray(y)
        labels = np.unique(y)
        # binary: the negative class blue, the positive red, matching the RdBu_r shading
        colours = ["tab:blue", "tab:red"] if dec is not None and labels.size == 2 else [
            f"C{k}" for k in range(labels.size)]
        for lab, colour in zip(labels, colours):
            m = y == lab
            ax.scatter(X[m, 0], X[m, 1], s=16, edgecolors="k", linewidths=0.4,
                       color=colour, label=str(_class_name(class_names, lab)))
        ax.legend(fontsize=8, title="class", title_fontsize=8)
    else:
        ax.scatter(X[:, 0], X[:, 1], s=12, color="k")
    sv = getattr(estimator, "support_", None)
    if sv is not None and np.asarray(sv).dtype.kind in "iu" and len(sv) <= len(X):
        S = X[np.asarray(sv)]
        ax.scatter(S[:, 0], S[:, 1], s=70, facecolors="none", edgecolors="k", linewidths=0.9)
    names = list(feature_names) if feature_names is not None else ["x1", "x2"]
    ax.set_xlabel(str(names[0]))
    ax.set_ylabel(str(names[1]))
    ax.set_xlim(gx[0], gx[-1])
    ax.set_ylim(gy[0], gy[-1])
    ax.set_title(f"Decision boundary of {type(estimator).__name__}")
    return ax


def _convergence_series(record):
    """(objective, gradient norm, objective label, gradient label) of a record."""
    if hasattr(record, "objective") and hasattr(record, "grad_norm") and np.ndim(
            record.objective) == 1:
        return (np.asarray(record.objective, dtype=float),
                np.asarray(record.grad_norm, dtype=float), "objective F(w)", "‖∇F(w)‖")
    seq = list(record)
    if seq and all(hasattr(h, "value") and hasattr(h, "grad_norm") for h in seq):
        # BiSVM outer iterations (HistoryEntry): criterion and hypergradient norm
        return (np.array([h.value for h in seq], dtype=float),
                np.array([h.grad_norm for h in seq], dtype=float),
                "upper-level criterion J(β)", "‖∇ log-β J‖")
    raise TypeError("record must be a ConvergenceRecord (objective, grad_norm arrays) or a "
                    "sequence of HistoryEntry")


def plot_convergence(record, *, title=None, ax=None):
    r"""Convergence of a solver: objective gap and gradient norm per iteration.

    The left axis shows :math:`F(w_k) - \min_j F(w_j)` (plus a floor so that the last
    point is visible on the log scale), the right axis the stopping certificate
    :math:`\lVert\nabla F(w_k)\rVert`, both logarithmic — a straight line is linear
    convergence, a bending one superlinear (Newton, L-BFGS; Nocedal & Wright 2006,
    *Numerical Optimization*).

    Parameters
    ----------
    record : ConvergenceRecord or sequence of HistoryEntry
        :attr:`bisvm.solvers.base.SolverResult.record`, or a BilevelSVC ``history_``
        (then the criterion J and the log-scale hypergradient norm per outer iteration).
    """
    obj, grad, obj_label, grad_label = _convergence_series(record)
    if obj.size == 0:
        raise ValueError("the convergence record is empty")
    ax = _axes(ax)
    it = np.arange(obj.size)
    gap = obj - np.nanmin(obj)
    pos = gap[gap > 0]
    floor = (pos.min() * 0.1) if pos.size else 1e-16
    ax.semilogy(it, gap + floor, "o-", ms=3, color="tab:blue",
                label=f"{obj_label} − min")
    ax.set_xlabel("iteration")
    ax.set_ylabel(f"{obj_label} − min", color="tab:blue")
    ax2 = ax.twinx()
    g = np.where(grad > 0, grad, np.nan)
    ax2.semilogy(it, g, "s--", ms=3, color="tab:red", label=grad_label)
    ax2.set_ylabel(grad_label, color="tab:red")
    ax.set_title(title or f"Convergence ({obj.size - 1} iterations, final "
                 f"{obj_label.split(' ')[0]} {obj[-1]:.6g})")
    lines = ax.get_lines()[:1] + ax2.get_lines()[:1]
    ax.legend(lines, [ln.get_label() for ln in lines], fontsize=8, loc="upper right")
    return ax


# --------------------------------------------------------------------------------------
# Regularisation paths of the L1 solvers (Rosset & Zhu 2007, "Piecewise linear
# regularized solution paths"): the Rosset–Zhu path of the
# L1-regularised L2-SVM (piecewise linear in λ) and the 1-norm SVM path.

__all__ += ["plot_l1_path"]


def plot_l1_path(path, *, x="lambda", log=True, top=None, feature_names=None,
                 breakpoints=False, ax=None):
    r"""Coefficient paths :math:`\beta_j(\lambda)` of an L1 path solver.

    For an :class:`~bisvm.solvers.paths.rz_path.L1SqHingePath` (:func:`bisvm.l1_sqhinge_path`)
    the coefficients are piecewise linear in λ: they are drawn exactly through the
    breakpoints. An :class:`~bisvm.solvers.paths.l1_hinge.L1SVMPath` (:func:`bisvm.l1_svm_path`,
    piecewise constant in λ) is drawn as steps in λ, or exactly through its vertices
    against :math:`\|\beta\|_1` (where it is piecewise linear).

    Parameters
    ----------
    path : L1SqHingePath or L1SVMPath
    x : {"lambda", "l1_norm"}
        Horizontal axis: λ (decreasing to the right) or :math:`\|\beta(\lambda)\|_1`.
    log : bool
        Logarithmic λ axis (ignored for ``"l1_norm"``; the point λ = 0, if the path
        ends there, is left out of a log axis).
    top : int, optional
        Draw only the ``top`` coefficients with the largest :math:`\max_\lambda|\beta_j|`
        (useful in the kernel case, one coefficient per training sample).
    feature_names : list of str, optional
        Legend labels (legend shown for at most 12 lines).
    breakpoints : bool
        Mark every breakpoint with a faint vertical line.
    ax : matplotlib Axes, optional
    """
    if x not in ("lambda", "l1_norm"):
        raise ValueError(f"x must be 'lambda' or 'l1_norm', got {x!r}")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int | np.integer)
                            or top < 1):
        raise ValueError(f"top must be a positive integer, got {top!r}")
    if hasattr(path, "n_pivots"):  # the 1-norm SVM path (piecewise constant in λ)
        return _plot_l1svm_path(path, _axes(ax), x, feature_names, breakpoints)
    ax = _axes(ax)
    coefs = np.asarray(path.coefs)
    lam = np.asarray(path.breakpoints, dtype=float)
    p = coefs.shape[1]
    order = np.argsort(-np.abs(coefs).max(axis=0), kind="stable")
    shown = order[:top] if top is not None else np.flatnonzero(np.abs(coefs).max(axis=0) > 0)
    if x == "lambda":
        keep = lam > 0 if log else np.ones(lam.size, dtype=bool)
        h = np.r_[1.5 * lam[0], lam[keep]]
        c = np.vstack([coefs[:1], coefs[keep]])
        xlabel = r"$\lambda$"
    else:
        h = np.abs(coefs).sum(axis=1)
        c = coefs
        xlabel = r"$\|\beta\|_1$"
    names = feature_names if feature_names is not None else [f"β{j}" for j in range(p)]
    for j in shown:
        ax.plot(h, c[:, j], lw=1.0, label=str(names[j]))
    if breakpoints:
        for v in (h[1:] if x == "lambda" else h):
            ax.axvline(v, color="0.88", lw=0.4, zorder=0)
    if x == "lambda":
        if log:
            ax.set_xscale("log")
        ax.invert_xaxis()
    ax.axhline(0.0, color="0.5", lw=0.6)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("coefficient")
    kind = "linear" if path.kernel is None else f"{path.kernel.name} kernel"
    ax.set_title(f"L1 {path.loss.replace('_', ' ')} path, {kind} "
                 f"({lam.size} breakpoints, max {int(np.max(path.n_active))} active)",
                 fontsize=9)
    if len(shown) <= 12:
        ax.legend(fontsize=7, ncol=2)
    return ax


def _plot_l1svm_path(path, ax, x, feature_names, breakpoints):
    """The 1-norm SVM path (:class:`~bisvm.solvers.paths.l1_hinge.L1SVMPath`) on ``ax``."""
    coefs = path.coefs
    d = coefs.shape[1]
    names = feature_names if feature_names is not None else [f"x{j}" for j in range(d)]
    if x == "l1_norm":
        s = path.l1_norms
        for j in range(d):
            ax.plot(s, coefs[:, j], lw=1.2, label=names[j])
        if breakpoints:
            for v in s[1:]:
                ax.axvline(v, color="0.85", lw=0.5, zorder=0)
        ax.set_xlabel(r"$\|\beta\|_1$")
    else:
        lam_hi = path.breakpoints[0] * 2 if path.breakpoints.size else 1.0
        lam_lo = path.lambda_min if path.lambda_min > 0 else path.breakpoints[-1] / 2
        lams = np.r_[lam_hi, path.breakpoints, lam_lo]
        for j in range(d):
            ax.step(lams, np.r_[coefs[:, j], coefs[-1, j]], where="post", lw=1.2,
                    label=names[j])
        if breakpoints:
            for v in path.breakpoints:
                ax.axvline(v, color="0.85", lw=0.5, zorder=0)
        ax.set_xscale("log")
        ax.invert_xaxis()
        ax.set_xlabel(r"$\lambda$")
    ax.axhline(0.0, color="0.5", lw=0.6)
    ax.set_ylabel("coefficient")
    ax.set_title(f"1-norm SVM path ({path.breakpoints.size} breakpoints)")
    if d <= 12:
        ax.legend(fontsize=7, ncol=2)
    return ax


def _class_name(class_names, label):
    """The user's name of ``label`` (itself when ``class_names`` has none)."""
    if not class_names:
        return label
    for key, name in class_names.items():
        if key == label:
            return name
    return label


from .kernel import plot_cv_surface, plot_learned_widths, plot_width_paths  # noqa: E402
