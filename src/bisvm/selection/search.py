r"""Searches over the scalar L1 weight β, warm-started along a path:

* :func:`grid_search` -- the baseline for BiSVM L-BFGS in González Vallejo (2024);
* :func:`scalar_scan` -- a short log-spaced path (:func:`scan_betas`: 7 points over the
  four decades below :math:`\beta_{\max}/10`, the zero-model end) whose best point starts
  BiSVM L-BFGS instead of the thesis's fixed β = 0.01 (not in the thesis).

Why a scan: the validation criterion of the scalar model is not convex in
:math:`\log\beta`. Started at 0.01, BiSVM L-BFGS settled in the local minimum nearest
to it; on the 200 × 2,000 problem of ``benchmarks/bench_wide.py`` (20 informative
features) that was a densely supported model a point of test accuracy below L1
``LogisticRegressionCV``. Seven warm-started points cost about seven lower-level solves
per fold (each from the previous point's solution, from the sparse end down, as glmnet
walks its λ path) and put the start in the basin of the best of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .model import beta_upper_bound

__all__ = ["THESIS_GRID", "GridResult", "grid_search", "ScanResult", "scan_betas", "last_argmin",
           "scalar_scan", "SCAN_POINTS", "SCAN_DECADES"]

#: Points of the scalar scan and the decades it spans below its top.
SCAN_POINTS = 7
SCAN_DECADES = 4.0

#: The 149-point grid β = 0.01, 0.02, ..., 1.49 of González Vallejo (2024).
THESIS_GRID = np.round(np.arange(1, 150) * 0.01, 2)


@dataclass(frozen=True)
class GridResult:
    """Outcome of :func:`grid_search`: values and solutions along the grid."""

    grid: np.ndarray
    values: np.ndarray
    coefs: np.ndarray
    best_beta: float
    best_value: float
    lower_solves: int
    lower_iterations: int
    seconds: float


def grid_search(objective, grid=THESIS_GRID, *, inner_tol=1e-9, progress=None):
    """Grid search over a scalar β broadcast to every hyperparameter (the thesis's baseline),
    warm-starting each solve from the previous grid point's solution.

    Parameters
    ----------
    objective : BilevelObjective
    grid : ndarray
        Increasing β values (the thesis's 149 points 0.01 … 1.49 by default).
    progress : callable, optional
        Called with 1 after each grid point (e.g. a progress bar's ``update``).

    Returns
    -------
    GridResult
        ``coefs`` has shape (len(grid), n_folds, d + 1): the regularisation path.
    """
    t0 = time.perf_counter()
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or np.any(grid <= 0):
        raise ValueError("grid must be a non-empty 1-D array of positive values")
    if objective.hyper.learn_l2:
        raise ValueError("grid_search scans the L1 weight only; build the objective with "
                         "learn_l2=False")
    warm, vals, coefs, iters = None, [], [], 0
    ones = np.ones(objective.hyper.n_hyper)
    for b in grid:
        ws, it = objective.solve(b * ones, warm, inner_tol)
        warm = ws
        iters += it
        vals.append(np.mean([c.value_and_grad(w)[0] for c, w in zip(objective.criteria, ws)]))
        coefs.append(np.array(ws))
        if progress is not None:
            progress(1)
    vals = np.array(vals)
    k = int(np.argmin(vals))
    return GridResult(
        grid=grid, values=vals, coefs=np.array(coefs), best_beta=float(grid[k]),
        best_value=float(vals[k]), lower_solves=len(grid) * len(objective.folds),
        lower_iterations=iters, seconds=time.perf_counter() - t0,
    )


@dataclass(frozen=True)
class ScanResult:
    """Outcome of :func:`scalar_scan`: the criterion along the scanned path.

    Attributes
    ----------
    betas : ndarray
        The scanned β, increasing.
    values : ndarray
        Criterion (mean over folds) at each β.
    coefs : tuple of tuple of ndarray
        Lower-level solutions (one per fold) at each β.
    best_index : int
        Index of the smallest value (the larger β on a tie: the sparser model).
    lower_solves, lower_iterations : int
    seconds : float
    """

    betas: np.ndarray
    values: np.ndarray
    coefs: tuple
    best_index: int
    lower_solves: int
    lower_iterations: int
    seconds: float

    @property
    def best_beta(self):
        return float(self.betas[self.best_index])

    @property
    def best_value(self):
        return float(self.values[self.best_index])

    @property
    def best_coefs(self):
        return self.coefs[self.best_index]


def scan_betas(folds, n_points=SCAN_POINTS, decades=SCAN_DECADES):
    r"""The scan path: ``n_points`` log-spaced β from :math:`\beta_{\max}/10\cdot
    10^{-\rm decades}` to :math:`\beta_{\max}/10 = \max_j\overline{|x_j|}`, with
    :math:`\beta_{\max}` of :func:`~bisvm.selection.model.beta_upper_bound`
    (the outer bound of BiSVM). The top is at or above the zero-model weight
    :math:`\sigma(1/\mu)\max_j|\overline{y x_j}|` (every coefficient nearly zero);
    on standardised features the path runs from about 1e-4 to about 1."""
    top = beta_upper_bound(folds) / 10.0
    if n_points < 2 or not decades > 0:
        raise ValueError("the scan needs at least 2 points over a positive range")
    return top * np.logspace(-float(decades), 0.0, int(n_points))


def last_argmin(values, *, rtol=1e-9, atol=1e-12):
    """Index of the last minimum of ``values`` (along an increasing β path: on a tie,
    the sparser model). Values within ``atol + rtol|min|`` of the minimum tie: a
    criterion that vanishes on separable folds is zero to rounding at many β, and which
    of them is smallest in the last bits must not decide."""
    values = np.asarray(values, dtype=float)
    m = float(np.min(values))
    return int(np.flatnonzero(values <= m + atol + rtol * abs(m))[-1])


def scalar_scan(objective, betas=None, *, inner_tol=1e-9, warm=None, patience=None):
    """The criterion on a path of scalar β, each fold's solve warm-started from the
    previous point's solution, walking from the largest β (sparsest, cheapest) down.

    Parameters
    ----------
    objective : BilevelObjective
        With the scalar hyper model without a learned α (one hyperparameter).
    betas : ndarray, optional
        Positive β values (any order); default :func:`scan_betas` of the objective's
        folds.
    inner_tol : float
        Gradient-norm tolerance of the lower-level solves.
    warm : tuple of ndarray, optional
        Warm start of the first (largest-β) solves.
    patience : int, optional
        Stop the walk once this many consecutive points lie above the smallest value
        seen so far: the smaller β left unvisited are the densest, costliest solves,
        and past a minimum the criterion of a lasso-type path rarely falls again
        (their values are reported as ``inf``, their solutions as None). None walks
        the whole path.

    Returns
    -------
    ScanResult
        Sorted by increasing β.
    """
    t0 = time.perf_counter()
    if objective.hyper.n_hyper != 1:
        raise ValueError("scalar_scan needs the scalar model without a learned l2_penalty")
    betas = scan_betas(objective.folds) if betas is None else np.asarray(betas, float)
    if betas.ndim != 1 or betas.size == 0 or not np.all(betas > 0):
        raise ValueError("betas must be a non-empty 1-D array of positive values")
    betas = np.sort(betas)
    vals, coefs, iters = np.full(betas.size, np.inf), [None] * betas.size, 0
    rises, visited = 0, 0
    for k in range(betas.size - 1, -1, -1):
        ws, it = objective.solve(betas[k:k + 1], warm, inner_tol)
        warm, coefs[k] = ws, ws
        iters += it
        visited += 1
        vals[k] = np.mean([c.value_and_grad(w)[0] for c, w in zip(objective.criteria, ws)])
        if patience is not None:
            rises = rises + 1 if vals[k] > np.min(vals[k + 1:], initial=np.inf) else 0
            if rises >= patience:
                break
    best = last_argmin(vals)
    return ScanResult(betas=betas, values=vals, coefs=tuple(coefs), best_index=best,
                      lower_solves=visited * len(objective.folds),
                      lower_iterations=iters, seconds=time.perf_counter() - t0)
