r"""What every self-tuning kernel fit shares: its result record and its outer run.

The classification tuner (:mod:`~bisvm.selection.kernel_fit`), the ε-SVR tuner
(:mod:`~bisvm.selection.kernel_svr_tune`) and the kernel ridge tuner
(:mod:`~bisvm.selection.kernel_ridge_tune`) run the same stages -- a start from a short
scan, BiSVM L-BFGS on a shared width, then on one width per feature, then the
one-standard-error width support -- and report the same things; the hyperparameters
one model lacks (ε for a classifier, C for kernel ridge) are ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .outer import BiSVMLBFGS

__all__ = ["KernelTuneResult", "run_outer", "prune_widths"]


@dataclass(frozen=True)
class KernelTuneResult:
    """Outcome of a self-tuning kernel fit.

    Attributes
    ----------
    C : float or None
        Learned C (SVMs; None for kernel ridge).
    gamma : ndarray
        Learned widths (one entry for a shared width), before the support rule.
    gamma_support : ndarray
        The widths of the final model: ``gamma`` with dropped features set to 0.
    support : ndarray of int or None
        Features kept (per-feature widths only).
    threshold : float
        Relevance at and above which a feature is kept (importance of the weakest kept
        feature; 0 for a shared width).
    value : float
        The criterion (k-fold or leave-one-out) at the learned hyperparameters.
    gamma0 : float
        The starting width (the best of the scan's multiples of the median heuristic).
    C0 : float or None
        The starting C of the scan (SVMs).
    scan_values : ndarray
        Criterion at each point of the starting scan.
    history : tuple
        The :class:`~bisvm.selection.outer.HistoryEntry` tuple of each outer stage run.
    n_solves : int
        Lower-level solves in total (SVMs: one per binary problem or fold each; kernel
        ridge: one factorisation per evaluation of the criterion).
    support_tests : tuple
        ``(k, increase, standard error)`` of each support size tested.
    epsilon : float or None
        Learned tube half-width (ε-SVR), on the scale of the target given.
    ridge, ridge0 : float or None
        Learned and starting ridge (kernel ridge).
    """

    C: float | None
    gamma: np.ndarray
    gamma_support: np.ndarray
    support: np.ndarray | None
    threshold: float
    value: float
    gamma0: float
    C0: float | None
    scan_values: np.ndarray
    history: tuple
    n_solves: int
    support_tests: tuple = ()
    epsilon: float | None = None
    ridge: float | None = None
    ridge0: float | None = None


def run_outer(objective, warm=None, *, max_iter, tol, beta_max, inner_tol=None,
              callback=None):
    """BiSVM L-BFGS from β = 1 (the start the scan found) on ``objective``.

    ``inner_tol=None`` is for lower levels solved exactly (a direct factorisation, or a
    free-set system solved to rounding): no tolerance schedule. Otherwise the lower
    level's tolerance follows HOAG's schedule down to ``inner_tol`` (Pedregosa 2016,
    "Hyperparameter optimization with approximate gradient"). ``warm`` is the lower
    level's warm start at β = 1; ``callback`` is called at each accepted iterate (as
    by :meth:`~bisvm.selection.outer.BiSVMLBFGS.minimize`), e.g. to show progress.
    """
    exact = inner_tol is None
    opt = BiSVMLBFGS(max_iter=max_iter, tol=tol, ftol=1e-6, beta_max=beta_max,
                     predictor=False, adaptive_tol=not exact,
                     inner_tol=1e-9 if exact else inner_tol, warn=False,
                     max_line_search=10)
    return opt.minimize(objective, 1.0, warm0=warm, callback=callback)


def prune_widths(gamma, support):
    """``gamma`` with the widths of the features outside ``support`` set to 0 (all kept
    when ``support`` is None)."""
    gs = np.array(gamma, dtype=float)
    if support is not None:
        mask = np.zeros(gs.size, dtype=bool)
        mask[support] = True
        gs[~mask] = 0.0
    return gs
