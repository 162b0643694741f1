r"""Algorithm B of Angulo Yauri (2020): Algorithm A along a decreasing μ grid with warm starts
and continuation."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..base import SelectivityPath
from .algorithm_a import solve_dual_newton
from .problem import SelectiveProblem, selectivity_grid, selectivity_max

__all__ = ["solve_selectivity_path"]


def solve_selectivity_path(X, y, loss, ridge, *, selectivities=None, n_mu=50, min_ratio=1e-8,
                           sample_weight=None, fit_intercept=False, tol=1e-10, max_iter=500,
                           line_search="exact", callback=None, max_step_ratio=1.5):
    r"""Algorithm B of Angulo Yauri (2020): Algorithm A on a decreasing μ grid with warm starts.

    Parameters
    ----------
    X, y, loss, ridge, sample_weight, fit_intercept
        As in :class:`SelectiveProblem`.
    selectivities : array-like, optional
        The μ values (sorted decreasingly here); by default :func:`selectivity_grid`
        from :func:`selectivity_max` with ``n_mu`` and ``min_ratio``.
    callback : callable, optional
        ``callback(l, mu, problem, result)`` after each fit (criteria hook in here, so
        that the factorisations of the fit are reused while they are at hand).
    max_step_ratio : float
        Continuation: where two consecutive μ (or μ_max and the first μ) are further
        apart than this factor, Algorithm A is first run at geometric intermediate values
        (not returned) so that every warm start is a short step away. The default grid of
        50 points has a ratio of 1.46 and needs none.

    Returns
    -------
    SelectivityPath
        ``selectivities`` (the μ grid, decreasing), ``results`` (one
        :class:`~bisvm.solvers.base.SolverResult` of :func:`solve_dual_newton` per μ, with
        ``factor=None``: the final Newton factor is :math:`N\times N`, handed to
        ``callback`` only) and ``selectivity_max`` (:math:`\mu_{max}`). It unpacks as
        ``mus, results, mu_max``.
    """
    if not (np.isfinite(max_step_ratio) and max_step_ratio > 1):
        raise ValueError(f"max_step_ratio must be a finite number > 1, got {max_step_ratio!r}")
    mu_max, lam, _ = selectivity_max(X, y, loss, ridge, sample_weight, fit_intercept)
    if selectivities is None:
        mus = selectivity_grid(mu_max, n_mu, min_ratio)
    else:
        mus = np.sort(np.asarray(selectivities, float).ravel())[::-1]
        if mus.size == 0 or np.any(~np.isfinite(mus)) or np.any(mus < 0):
            raise ValueError("selectivities must be finite and >= 0")
    results = []
    part = None
    base = SelectiveProblem(X, y, loss, ridge, float(mus[0]), sample_weight, fit_intercept)
    prev = mu_max
    for l, mu in enumerate(mus):
        # continuation: a warm start is only reliable a small step away (from the empty
        # model, or across a coarse grid, the first guessed face can ask for more kink
        # constraints than objects); intermediate μ, not reported, keep the steps short
        if mu > 0 and prev > mu * max_step_ratio:
            for mid in np.geomspace(prev, mu, int(np.ceil(np.log(prev / mu)
                                                         / np.log(max_step_ratio))) + 1)[1:-1]:
                r_mid = solve_dual_newton(base.with_selectivity(mid), alpha0=lam,
                                          partition0=part, tol=tol, max_iter=max_iter,
                                          line_search=line_search)
                lam, part = r_mid.dual_coef, r_mid.partition
        prev = mu
        prob = base.with_selectivity(mu)
        prev_fit = results[-1] if results else None
        res = solve_dual_newton(prob, alpha0=lam, partition0=part, tol=tol, max_iter=max_iter,
                                line_search=line_search, fallback=20 * max_iter,
                                w0=None if prev_fit is None else prev_fit.coef,
                                intercept0=None if prev_fit is None else prev_fit.intercept)
        lam, part = res.dual_coef, res.partition
        if callback is not None:
            callback(l, mu, prob, res)
        # the final Newton factor is N x N: kept for the callback only, not along the path
        results.append(dataclasses.replace(res, factor=None) if res.factor is not None
                       else res)
    return SelectivityPath(mus, results, mu_max)
