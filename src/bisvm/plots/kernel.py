"""Figures of the self-tuning kernel models (:class:`bisvm.AutoSVC`,
:class:`bisvm.AutoSVR`): the outer path on the cross-validated (C, γ) surface, the
learned relevance of each feature, and the per-feature widths along the outer
iterations.

Every function takes arrays (the report computes them from the fitted estimator:
:mod:`bisvm.report.kernel`) and an optional ``ax``, and returns the ``Axes``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["plot_cv_surface", "plot_learned_widths", "plot_width_paths"]


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_cv_surface(first_values, gamma_values, errors, *, path=None, final=None,
                    first_label="C", error_label="cross-validated error",
                    final_label="learned", title=None, ax=None):
    """The cross-validated error on a log grid of (C or ridge, γ), filled contours, with
    the outer path drawn on it.

    Parameters
    ----------
    first_values : array of shape (p,)
        The grid of C (or of the ridge), increasing.
    gamma_values : array of shape (q,)
        The grid of the shared width γ, increasing.
    errors : array of shape (q, p)
        The error at ``(gamma_values[i], first_values[j])``.
    path : sequence of arrays of shape (k, 2), optional
        The outer iterates ``(C, γ)`` of each stage, in order (the start first).
    final : (float, float), optional
        The point the tuning ended at, marked with a star (labelled ``final_label``).
    first_label, error_label, final_label, title : str
    """
    ax = _new_axes(ax, (6.4, 4.8))
    x, g, e = (np.asarray(a, dtype=float) for a in (first_values, gamma_values, errors))
    if e.shape != (g.size, x.size):
        raise ValueError(f"errors must have shape (len(gamma_values), len(first_values)) = "
                         f"{(g.size, x.size)}, got {e.shape}")
    finite = e[np.isfinite(e)]
    levels = np.linspace(finite.min(), finite.max(), 12) if finite.size and \
        finite.max() > finite.min() else 12
    cs = ax.contourf(x, g, e, levels=levels, cmap="viridis_r")
    ax.figure.colorbar(cs, ax=ax, label=error_label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    colors = ("white", "tab:orange", "tab:red")
    for s, stage in enumerate(path or ()):
        stage = np.asarray(stage, dtype=float)
        if stage.size == 0:
            continue
        ax.plot(stage[:, 0], stage[:, 1], "-o", color=colors[s % len(colors)], ms=3.5,
                lw=1.4, label="outer path" if s == 0 else f"stage {s + 1}")
        ax.plot(stage[0, 0], stage[0, 1], "s", color=colors[s % len(colors)], ms=6,
                mec="black", label="start" if s == 0 else None)
    if final is not None:
        ax.plot(final[0], final[1], "*", color="gold", ms=15, mec="black", label=final_label)
    ax.set_xlabel(first_label)
    ax.set_ylabel("γ (shared RBF width, standardised features)")
    ax.set_title(title or "Outer path on the cross-validated surface")
    if path is not None or final is not None:
        ax.legend(loc="best", fontsize=8, framealpha=0.8)
    return ax


def plot_learned_widths(names, importances, support=None, *, max_bars=40, title=None,
                        ax=None):
    r"""Horizontal bars of the learned relevances :math:`\gamma_j\operatorname{var}(x_j)`
    (normalised), largest first; kept features (``support``) dark, dropped ones light.

    Parameters
    ----------
    names : sequence of str
    importances : array of shape (d,)
    support : array of bool of shape (d,), optional
    max_bars : int
        The largest this many are drawn.
    """
    imp = np.asarray(importances, dtype=float)
    if len(names) != imp.size:
        raise ValueError(f"names has {len(names)} entries, importances {imp.size}")
    keep = np.ones(imp.size, bool) if support is None else np.asarray(support, bool)
    order = np.argsort(-imp, kind="stable")[:max_bars]
    ax = _new_axes(ax, (6.4, max(2.5, 0.28 * order.size + 1.2)))
    colors = ["tab:blue" if keep[j] else "lightgray" for j in order]
    ax.barh(np.arange(order.size), imp[order], color=colors)
    ax.set_yticks(np.arange(order.size))
    ax.set_yticklabels([str(names[j]) for j in order], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("relevance γ_j var(x_j), normalised")
    shown = "" if order.size == imp.size else f" (largest {order.size} of {imp.size})"
    ax.set_title(title or f"Learned width per feature{shown}: kept dark, dropped light")
    return ax


def plot_width_paths(widths, names, *, top=8, ax=None):
    """The per-feature widths along the outer iterations of the per-feature stage (log
    scale): the ``top`` largest at the end are labelled, the others drawn thin.

    Parameters
    ----------
    widths : array of shape (k, d)
        Widths at each outer iterate.
    names : sequence of str
    """
    w = np.asarray(widths, dtype=float)
    if w.ndim != 2 or w.shape[1] != len(names):
        raise ValueError(f"widths must have shape (iterations, {len(names)}), got {w.shape}")
    ax = _new_axes(ax, (6.4, 4.2))
    it = np.arange(w.shape[0])
    order = np.argsort(-w[-1], kind="stable")
    for rank, j in enumerate(order):
        lead = rank < top
        ax.plot(it, w[:, j], lw=1.6 if lead else 0.6, color=None if lead else "0.7",
                label=str(names[j]) if lead else None)
    ax.set_yscale("log")
    ax.set_xlabel("outer iteration (per-feature stage)")
    ax.set_ylabel("γ_j (standardised features)")
    ax.set_title("Per-feature widths along the outer path")
    ax.legend(loc="best", fontsize=7)
    return ax
