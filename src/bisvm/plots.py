"""Figures of the bilevel sparse SVM (seed-000 Figs. 6.2-6.11), drawn with matplotlib.

Every function takes result records (not estimators' internals) and an optional ``ax``;
it returns the ``Axes``. Use :func:`save` to write a PNG with the non-interactive backend.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "plot_validation_curve",
    "plot_regularization_path",
    "plot_importance",
    "plot_sparsity_heatmap",
    "save",
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
    (seed-000 Figs. 6.2-6.4).

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


def plot_regularization_path(grid, feature_names, *, beta=None, fold=0, top=12, ax=None):
    """Coefficients of the first fold's solution over the β grid (seed-000 Figs. 6.5-6.6).

    Parameters
    ----------
    grid : GridResult
        ``grid.coefs`` has shape (n_grid, n_folds, d + 1); the bias is not drawn.
    feature_names : sequence of str
    beta : float, optional
        The learned scalar β, marked by a vertical line.
    top : int
        Label the ``top`` features with the largest coefficient anywhere on the path.
    """
    ax = _axes(ax)
    W = grid.coefs[:, fold, :-1]
    order = np.argsort(-np.max(np.abs(W), axis=0))
    for r, j in enumerate(order):
        ax.plot(grid.grid, W[:, j], lw=1.2 if r < top else 0.6,
                label=str(feature_names[j]) if r < top else None,
                alpha=1.0 if r < top else 0.5)
    if beta is not None:
        ax.axvline(beta, color="k", ls="--", lw=1, label=f"BiSVM β={beta:.3f}")
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("β (scalar L1 weight)")
    ax.set_ylabel("coefficient")
    ax.set_title("Regularisation path")
    ax.legend(fontsize=6, ncol=2)
    return ax


def plot_importance(names, scores, reference=None, *, reference_label="tree-based (Gini)",
                    ax=None):
    """Importance bars, optionally beside a reference importance (seed-000 Figs. 6.7-6.10).

    Parameters
    ----------
    names : sequence of str
    scores : ndarray
        BiSVM scores (each set sums to 1).
    reference : ndarray, optional
        E.g. ``ExtraTreesClassifier.feature_importances_``.
    """
    names = [str(n) for n in names]
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
    ax.set_title("Feature importance")
    ax.legend(fontsize=8)
    return ax


def plot_sparsity_heatmap(hinge_values, l1_values, counts, *, ax=None):
    """Number of nonzero coefficients over (μ, γ) (seed-000 Fig. 6.11).

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


def save(ax, path, dpi=110):
    """Write the figure of ``ax`` to ``path`` (PNG) and close it."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
