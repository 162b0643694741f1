r"""Algorithm B of seed 004 (§3): Algorithm A along a decreasing μ grid with warm starts
and continuation."""

from __future__ import annotations

import numpy as np

from .algorithm_a import solve_dual_newton
from .problem import SelectiveProblem, selectivity_grid, selectivity_max

__all__ = ["solve_selectivity_path"]


def solve_selectivity_path(X, y, loss, ridge, *, selectivities=None, n_mu=50, min_ratio=1e-8,
                           sample_weight=None, fit_intercept=False, tol=1e-10, max_iter=500,
                           line_search="exact", callback=None, max_step_ratio=1.5):
    r"""Algorithm B of seed 004: Algorithm A on a decreasing μ grid with warm starts.

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
    mus : ndarray, shape (n_mu,)
    results : list of SolverResult
    mu_max : float
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
    sets = None
    base = SelectiveProblem(X, y, loss, ridge, float(mus[0]), sample_weight, fit_intercept)
    prev = mu_max
    for l, mu in enumerate(mus):
        # continuation: a warm start is only reliable a small step away (from the empty
        # model, or across a coarse grid, the first guessed face can ask for more kink
        # constraints than objects); intermediate μ, not reported, keep the steps short
        if mu > 0 and prev > mu * max_step_ratio:
            for mid in np.geomspace(prev, mu, int(np.ceil(np.log(prev / mu)
                                                         / np.log(max_step_ratio))) + 1)[1:-1]:
                r_mid = solve_dual_newton(base.with_selectivity(mid), lam0=lam, sets0=sets,
                                          tol=tol, max_iter=max_iter, line_search=line_search)
                lam, sets = r_mid.extra["dual_coef"], r_mid.extra["sets"]
        prev = mu
        prob = base.with_selectivity(mu)
        res = solve_dual_newton(prob, lam0=lam, sets0=sets, tol=tol, max_iter=max_iter,
                                line_search=line_search, fallback=20 * max_iter,
                                primal0=(results[-1].coef, results[-1].extra["intercept"])
                                if results else None)
        lam, sets = res.extra["dual_coef"], res.extra["sets"]
        results.append(res)
        if callback is not None:
            callback(l, mu, prob, res)
        # the final Newton factor is N x N: kept for the callback only, not along the path
        res.extra["newton"] = None
    return mus, results, mu_max
