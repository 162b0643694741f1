"""Plot of the 1-norm SVM regularisation path (:func:`bisvm.l1_svm_path`)."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_l1_path"]


def plot_l1_path(path, ax=None, *, x="l1_norm", feature_names=None, breakpoints=True):
    r"""Coefficient paths of an :class:`~bisvm.solvers.path.L1SVMPath`.

    Parameters
    ----------
    path : L1SVMPath
    ax : matplotlib Axes, optional
        Created if not given.
    x : {"l1_norm", "lambda"}
        Horizontal axis: :math:`s = \|\beta\|_1` (the coefficients are piecewise linear
        in ``s``; drawn through the vertices) or λ on a log scale (piecewise constant,
        drawn as steps).
    feature_names : list of str, optional
        Legend labels (shown when there are at most 12 features).
    breakpoints : bool
        Mark the breakpoints with faint vertical lines.

    Returns
    -------
    matplotlib Axes
    """
    import matplotlib.pyplot as plt

    if x not in ("l1_norm", "lambda"):
        raise ValueError(f"x must be 'l1_norm' or 'lambda', got {x!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
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
