r"""Leave-one-out model selection at the cost of one fit, and the approximate
leave-one-out of a smooth SVM.

**Selective-ridge GLMs** (:mod:`bisvm.solvers.selective`). At a fitted μ the model is,
locally, a smooth weighted problem in the *unfrozen* coordinates
:math:`\theta = (a_F, a_K, b)`: ridge features ``F`` (curvature :math:`2\gamma`), kink
features ``K`` (:math:`0 < |a_i| \le \mu`, linear penalty, no curvature) and the intercept
(none). With :math:`Q = \mathrm{diag}(r_t q''_t)` and
:math:`H = \tilde X^\top Q \tilde X + 2\gamma\,\mathrm{diag}(1_F, 0_K, 0_b)`, write
:math:`L_j = \tilde x_j^\top H^{-1}\tilde x_j` and the leverage :math:`h_j = r_j q''_j L_j
\in [0, 1)`. Muffling object ``j`` (:math:`r_j \to r_j(1-p)`, Angulo Yauri 2020) moves
its own output at the rate :math:`\partial_p z_j = r_j q'_j L_j`, hence

.. math::
    \partial_p q_j\big|_{p=0} = h_j\,\frac{(q'_j)^2}{q''_j}
    \quad(= 2h_j(y_j - z_j)^2 \text{ regression},\ = h_j e^{-y_j z_j} \text{ logistic}),

the corrected form of the DiffLOO derivative of Angulo Yauri (2020), whose printed
logistic formula misses the factor :math:`h_j`. The criteria, all averaged over
the ``N`` objects:

========================  ==============================================================
``"diffloo"``             (a) as printed in the thesis: :math:`(y_j - z_j)^2 h^{th}_j`
                          resp. :math:`(\tilde y_j - z_j)^2 h^{th}_j`, :math:`h^{th}` from
                          :math:`D = (V_{\hat I} + \gamma\tilde G^{-1})^{-1}` on the
                          support (every active feature treated as ridge). Exactly 0 at
                          the empty model -- its global minimum.
``"diffloo_exact"``       (b) :math:`\partial_p q_j` above; also 0 at the empty model.
``"ij"``                  (c) :math:`q_j + \partial_p q_j`: first-order (infinitesimal
                          jackknife) estimate of the leave-one-out loss.
``"alo"``                 (d) rank-one update at :math:`p = 1` (Sherman–
                          Morrison): :math:`z_j^{(-j)} = z_j + r_j q'_j L_j/(1-h_j)`, then
                          :math:`q(y_j, z_j^{(-j)})` -- exact for the squared loss while
                          the active set does not change (PRESS).
``"loo"``                 (e) exact leave-one-out by ``N`` warm-started refits.
``"kfold"``               (f) k-fold cross-validation along the same μ grid.
========================  ==============================================================

**Smooth problems** (:class:`~bisvm.solvers.base.SmoothProblem`,
:math:`F(w) = \frac1n\sum_i s_i\ell_i + P(w)`, e.g. the smoothed L2L1-SVM of
``BilevelSVC``): deleting object ``i`` removes :math:`c_i\ell_i`, :math:`c_i = s_i/n`;
one Newton step from :math:`\hat w` with :math:`H - c_i\ell''_i x_i x_i^\top` gives
:func:`alo_smooth`, :math:`z_i^{(-i)} = z_i + c_i\ell'_i L_i/(1 - c_i\ell''_i L_i)`,
:math:`L_i = x_i^\top H^{-1} x_i` (Rad & Maleki's ALO; Angulo Yauri (2020) excluded
SVMs).

References
----------
B. F. Angulo Yauri, "A method of differential cross-validation for choosing the complexity
level of generalized linear dependence models" (in Russian), master's thesis, MIPT,
Moscow, 2020.

K. Rad and A. Maleki, "A scalable estimate of the out-of-sample prediction error via
approximate leave-one-out cross-validation", *Journal of the Royal Statistical Society:
Series B* 82(4), 2020.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular

from ..solvers._linalg import shifted_cho_factor
from ..solvers.selective import (
    SelectiveNewtonFactor,
    SelectiveProblem,
    selective_loss,
    selectivity_grid,
    selectivity_max,
    solve_dual_newton,
    solve_selectivity_path,
)

__all__ = [
    "CRITERIA",
    "CHEAP_CRITERIA",
    "LeverageFactors",
    "leverage_factors",
    "cheap_criteria",
    "criterion_terms",
    "held_out_terms",
    "select_index",
    "exact_loo",
    "kfold_path",
    "CriterionPath",
    "SELECTION_RULES",
    "criterion_path",
    "alo_smooth",
    "exact_loo_smooth",
    "alo_path_scores",
]

CHEAP_CRITERIA = ("diffloo", "diffloo_exact", "ij", "alo")
CRITERIA = CHEAP_CRITERIA + ("loo", "kfold")
_Q_FLOOR = 1e-12


def _chol(M):
    r"""Lower Cholesky factor with a tiny diagonal shift if ``M`` is numerically singular
    (from :math:`10^{-14}\max|M_{ii}|`, 12 tries); an empty ``M`` has an empty factor."""
    if M.size == 0:
        return np.zeros((0, 0)), True
    return shifted_cho_factor(M, lower=True, rel_shift=1e-14, tries=12)


def _quad_diag(fac, B):
    r"""Row-wise :math:`b_j^\top M^{-1} b_j` for the rows of ``B`` given ``cho_factor(M)``."""
    if B.shape[1] == 0:
        return np.zeros(B.shape[0])
    Lc = np.tril(fac[0])
    T = solve_triangular(Lc, B.T, lower=True, check_finite=False)
    return np.einsum("ij,ij->j", T, T)


@dataclass(frozen=True)
class LeverageFactors:
    r"""Per-object quantities of one fit from which every cheap criterion is read.

    Attributes
    ----------
    z, q, dq, d2q : ndarray, shape (N,)
        In-sample output and :math:`q, q', q''` there.
    L : ndarray
        :math:`\tilde x_j^\top H^{-1}\tilde x_j` (local model with kinks and intercept).
    h : ndarray
        :math:`r_j q''_j L_j`.
    h_thesis : ndarray
        The thesis's :math:`(V_{\hat I}D)_{jj}`, all support features as ridge, no intercept.
    """

    z: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    d2q: np.ndarray
    L: np.ndarray
    h: np.ndarray
    h_thesis: np.ndarray
    r: np.ndarray


def leverage_factors(problem, result):
    r"""Leverages of a converged :func:`~bisvm.solvers.selective.solve_dual_newton` fit.

    Everything comes from one factorisation of the solver's Newton matrix
    :math:`A = X_F X_F^\top + 2\gamma\,\mathrm{diag}(1/Q)` (Angulo Yauri 2020, the
    :math:`V_F + \gamma\tilde G^{-1}` of the final face), reused from
    ``result.factor`` (a :class:`~bisvm.solvers.selective.SelectiveNewtonFactor`) when
    the solver left the factor of this face there, else formed once:
    with :math:`A_\ell = A/(2\gamma)` and the unpenalised columns
    :math:`C = [X_K, \mathbf 1]`,

    .. math::
        L = Q^{-1} - Q^{-2}\,\mathrm{diag}\big(A_\ell^{-1} - A_\ell^{-1}C
        (C^\top A_\ell^{-1}C)^{-1}C^\top A_\ell^{-1}\big),

    and the printed leverage (every support feature ridge, no intercept)
    :math:`h^{th} = 1 - 2\gamma\,\mathrm{diag}\big((A + X_K X_K^\top)^{-1}\big)/Q` by
    Woodbury on the same factor, :math:`(A + X_K X_K^\top)^{-1} = A^{-1} - A^{-1}X_K
    (I + X_K^\top A^{-1}X_K)^{-1}X_K^\top A^{-1}`.

    Parameters
    ----------
    problem : SelectiveProblem
    result : SolverResult
        Its solution: ``coef``, ``intercept``, ``partition`` (the free and kink sets) and
        ``factor`` (used when its ``free_index`` is the final free set).

    Returns
    -------
    LeverageFactors
    """
    X, y, r, gam = problem.X, problem.y, problem.r, problem.ridge
    N = X.shape[0]
    part = result.partition
    z = X @ result.coef + result.intercept
    q, dq, d2q = selective_loss(problem.loss, y, z)
    free = part.free & (result.coef != 0)
    kink = part.kink & (result.coef != 0)
    Fidx = np.flatnonzero(free)
    nw = result.factor
    if isinstance(nw, SelectiveNewtonFactor) and np.array_equal(nw.free_index, Fidx):
        A = nw  # the Newton matrix of the final face, c = 2 gamma / Q
        Q = 2.0 * gam / A.c
    else:
        Q = np.maximum(r * d2q, _Q_FLOOR)
        A = SelectiveNewtonFactor(X[:, Fidx], 2.0 * gam / Q)
    XK = X[:, kink]
    C = np.hstack([XK, np.ones((N, 1))]) if problem.fit_intercept else XK
    dA = A.inv_diag()
    # the multiplier of the kink and intercept constraints: A^{-1} C once for both forms
    AC = A.solve(C) if C.shape[1] else np.zeros((N, 0))
    Bd = dA.copy()
    if C.shape[1]:
        Bd -= _quad_diag(_chol(C.T @ AC), AC)
    # h = Q L first: for a well-fitted logistic object Q is tiny and 1/Q - B/Q^2 would
    # cancel, while h is accurate in absolute terms and the criteria only use Q L, q' L
    h = np.clip(1.0 - 2.0 * gam * Bd / Q, 0.0, 1.0 - 1e-15)
    L = h / Q
    dth = dA.copy()
    if XK.shape[1]:
        AK = AC[:, : XK.shape[1]]
        Mk = XK.T @ AK
        Mk[np.diag_indices_from(Mk)] += 1.0
        dth -= _quad_diag(_chol(Mk), AK)
    h_th = np.clip(1.0 - 2.0 * gam * dth / Q, 0.0, 1.0) if (Fidx.size or XK.shape[1]) \
        else np.zeros(N)
    return LeverageFactors(z, q, dq, d2q, L, h, h_th, r)


def _growth(loss, y, z, r):
    r""":math:`r_j (q'_j)^2/q''_j` in closed form (no division by a vanishing q'')."""
    if loss == "squared":
        return 2.0 * r * (y - z) ** 2
    return r * np.exp(-y * z)


def held_out_terms(loss, y, z_held_out, scoring="loss"):
    r"""Per-object terms of a held-out criterion from held-out outputs: the loss
    :math:`q(y_j, z_j^{(-j)})`, or (``scoring="error"``, classification) the
    misclassification indicator :math:`[y_j z_j^{(-j)} \le 0]`."""
    if scoring == "loss":
        return selective_loss(loss, y, z_held_out)[0]
    if scoring == "error":
        if loss != "logistic":
            raise ValueError("scoring='error' needs a classification (logistic) loss")
        return (y * z_held_out <= 0).astype(float)
    raise ValueError(f"scoring must be 'loss' or 'error', got {scoring!r}")


def criterion_terms(problem, result, names=CHEAP_CRITERIA, factors=None, scoring="loss"):
    """Per-object terms of criteria (a)–(d) at one fit: each criterion of
    :func:`cheap_criteria` is the mean of its terms, and their spread gives its standard
    error (the one-standard-error rule of :func:`select_index`).

    Returns
    -------
    dict
        name -> ndarray of shape (N,).
    """
    f = leverage_factors(problem, result) if factors is None else factors
    y, loss = problem.y, problem.loss
    out = {}
    deriv = f.h * _growth(loss, y, f.z, np.ones_like(f.z))  # = h q'^2/q''
    for name in names:
        if name == "diffloo":
            if loss == "squared":
                res2 = (y - f.z) ** 2
            else:  # (123): (y~ - z)^2, y~ - z = y (1 + e^{-yz})
                res2 = (1.0 + np.exp(-y * f.z)) ** 2
            out[name] = res2 * f.h_thesis
        elif name == "diffloo_exact":
            out[name] = deriv
        elif name == "ij":
            out[name] = f.q + deriv
        elif name == "alo":
            z_loo = f.z + f.r * f.dq * f.L / (1.0 - f.h)
            out[name] = held_out_terms(loss, y, z_loo, scoring)
        else:
            raise ValueError(f"criterion must be one of {CHEAP_CRITERIA}, got {name!r}")
        if scoring != "loss" and name != "alo":
            raise ValueError(f"scoring={scoring!r} needs held-out outputs (criterion 'alo', "
                             f"'loo' or 'kfold'), not {name!r}")
    return out


def cheap_criteria(problem, result, names=CHEAP_CRITERIA, factors=None):
    """Criteria (a)–(d) of the module docstring at one fit, O(N) given the leverages.

    Returns
    -------
    dict
        name -> float.
    """
    terms = criterion_terms(problem, result, names, factors)
    return {name: float(np.mean(t)) for name, t in terms.items()}


def alo_outputs(problem, result, factors=None):
    r"""ALO outputs :math:`z_j^{(-j)} = z_j + r_j q'_j L_j/(1-h_j)` of every object."""
    f = leverage_factors(problem, result) if factors is None else factors
    return f.z + f.r * f.dq * f.L / (1.0 - f.h)


def exact_loo(problem, result, *, tol=1e-10, max_iter=500):
    r"""Exact leave-one-out by ``N`` refits without each object (criterion (e)).

    Each refit is warm-started from the full fit (dual coefficients without the object,
    the same sets). Returns the mean loss and the outputs :math:`z_j^{(-j)}`.
    """
    X, y, N = problem.X, problem.y, problem.X.shape[0]
    lam, part = result.dual_coef, result.partition
    z_loo = np.empty(N)
    keep = np.ones(N, bool)
    for j in range(N):
        keep[j] = False
        sub = SelectiveProblem(
            X[keep], y[keep], problem.loss, problem.ridge, problem.selectivity,
            None if problem.sample_weight is None else problem.r[keep], problem.fit_intercept)
        res = solve_dual_newton(sub, alpha0=lam[keep], partition0=part, tol=tol,
                                max_iter=max_iter)
        z_loo[j] = X[j] @ res.coef + res.intercept
        keep[j] = True
    return float(np.mean(selective_loss(problem.loss, y, z_loo)[0])), z_loo


def _folds(y, loss, n_splits, random_state):
    from sklearn.model_selection import KFold, StratifiedKFold

    if loss == "logistic":
        cv = StratifiedKFold(n_splits, shuffle=True, random_state=random_state)
    else:
        cv = KFold(n_splits, shuffle=True, random_state=random_state)
    return list(cv.split(np.zeros((y.size, 1)), y))


def kfold_path(X, y, loss, ridge, mus, *, n_splits=5, fit_intercept=False, random_state=0,
               tol=1e-10, max_iter=500, progress=None):
    """k-fold cross-validated mean loss along a μ grid (criterion (f)); each fold's path
    is warm-started along the grid. ``progress`` is called with 1 after each fold."""
    return np.mean(_kfold_terms(X, y, loss, ridge, mus, n_splits=n_splits,
                                fit_intercept=fit_intercept, random_state=random_state,
                                tol=tol, max_iter=max_iter, progress=progress), axis=1)


def _kfold_terms(X, y, loss, ridge, mus, *, n_splits, fit_intercept, random_state, tol,
                 max_iter, scoring="loss", progress=None):
    """Held-out loss of every object along the grid, shape (n_mu, N)."""
    terms = np.zeros((len(mus), y.size))
    for tr, te in _folds(y, loss, n_splits, random_state):
        res = solve_selectivity_path(X[tr], y[tr], loss, ridge, selectivities=mus,
                                     fit_intercept=fit_intercept, tol=tol,
                                     max_iter=max_iter).results
        for l, rr in enumerate(res):
            z = X[te] @ rr.coef + rr.intercept
            terms[l, te] = held_out_terms(loss, y[te], z, scoring)
        if progress is not None:
            progress(1)
    return terms


SELECTION_RULES = ("min", "1se")


def select_index(values, standard_errors, rule="min"):
    r"""Index of the chosen grid point along a path ordered from the sparsest model
    (largest μ) to the densest.

    ``"min"`` is the arg-min of the criterion. ``"1se"`` is glmnet's ``lambda.1se``
    (Hastie, Tibshirani & Friedman, *Elements of Statistical Learning* §7.10): the
    sparsest grid point whose criterion is within one standard error of the minimum,
    :math:`\min\{l : C_l \le C_{l^*} + s_{l^*}\}`, :math:`l^* = \arg\min_l C_l`,
    where :math:`s_l` is the standard error of :math:`C_l`. The minimum of a criterion
    estimated from N objects is biased low by the selection itself and its neighbours
    are statistically indistinguishable from it; among them the sparsest one is chosen.
    NaN values (points where a criterion could not be computed) are never chosen.

    Parameters
    ----------
    values, standard_errors : ndarray, shape (n_mu,)
    rule : {"min", "1se"}
    """
    values = np.asarray(values, float)
    if rule not in SELECTION_RULES:
        raise ValueError(f"selection_rule must be one of {SELECTION_RULES}, got {rule!r}")
    if not np.any(np.isfinite(values)):
        raise ValueError("the criterion is NaN or infinite at every point of the path")
    best = int(np.nanargmin(values))
    if rule == "min":
        return best
    se = float(np.asarray(standard_errors, float)[best])
    ok = np.flatnonzero(values <= values[best] + (se if np.isfinite(se) else 0.0))
    return int(ok[0])


@dataclass(frozen=True)
class CriterionPath:
    r"""A μ path with its criteria (frozen record).

    Attributes
    ----------
    selectivities : ndarray, shape (n_mu,)
        Decreasing μ grid.
    results : list of SolverResult
    values : dict
        criterion name -> ndarray (n_mu,).
    n_active : ndarray of int
    mu_max : float
    fit_seconds : float
        Time of the fits of the path.
    criterion_seconds : dict
        name -> seconds spent on that criterion beyond the fits.
    standard_errors : dict
        name -> ndarray (n_mu,): the standard error of each value, the standard deviation
        of its N per-object terms over :math:`\sqrt N` (leave-one-out and k-fold
        criteria are means of one held-out loss per object).
    """

    selectivities: np.ndarray
    results: list
    values: dict
    n_active: np.ndarray
    mu_max: float
    fit_seconds: float
    criterion_seconds: dict = field(default_factory=dict)
    standard_errors: dict = field(default_factory=dict)


def criterion_path(X, y, loss, ridge, *, criteria=CHEAP_CRITERIA, n_mu=50, min_ratio=1e-8,
                   selectivities=None, fit_intercept=False, n_splits=5, random_state=0,
                   tol=1e-10, max_iter=500, scoring="loss", progress=None):
    """Fit the μ path (Algorithm B) and evaluate the requested criteria at every μ.

    The cheap criteria share one leverage computation per μ, done while the fit is at
    hand (Algorithm C); ``"loo"`` refits ``N`` times per μ and ``"kfold"`` runs
    ``n_splits`` extra paths. ``scoring="error"`` (logistic loss only; criteria ``"alo"``,
    ``"loo"``, ``"kfold"``) scores the held-out outputs by misclassification instead of
    their loss (:func:`held_out_terms`). ``progress`` (e.g. a
    :class:`bisvm.progress.Progress`) is called with 1 after each μ and after each extra
    fold path.

    Returns
    -------
    CriterionPath
    """
    criteria = tuple(criteria)
    for c in criteria:
        if c not in CRITERIA:
            raise ValueError(f"criterion must be one of {CRITERIA}, got {c!r}")
    cheap = [c for c in criteria if c in CHEAP_CRITERIA]
    vals = {c: [] for c in criteria}
    secs = {c: 0.0 for c in criteria}

    def callback(l, mu, prob, res):
        if cheap:
            t = time.perf_counter()
            f = leverage_factors(prob, res)
            d = criterion_terms(prob, res, cheap, factors=f, scoring=scoring)
            dt = time.perf_counter() - t
            for c in cheap:
                vals[c].append(d[c])
                secs[c] += dt / len(cheap)
        if "loo" in criteria:
            t = time.perf_counter()
            z_loo = exact_loo(prob, res, tol=tol, max_iter=max_iter)[1]
            vals["loo"].append(held_out_terms(prob.loss, prob.y, z_loo, scoring))
            secs["loo"] += time.perf_counter() - t
        if progress is not None:
            progress(1)

    t0 = time.perf_counter()
    if selectivities is None:
        mu_max = selectivity_max(X, y, loss, ridge, None, fit_intercept)[0]
        selectivities = selectivity_grid(mu_max, n_mu, min_ratio)
    mus, results, mu_max = solve_selectivity_path(
        X, y, loss, ridge, selectivities=selectivities, fit_intercept=fit_intercept, tol=tol,
        max_iter=max_iter, callback=callback)
    total = time.perf_counter() - t0
    fit_seconds = total - sum(secs.values())
    if "kfold" in criteria:
        t = time.perf_counter()
        vals["kfold"] = _kfold_terms(X, y, loss, ridge, mus, n_splits=n_splits,
                                     fit_intercept=fit_intercept, random_state=random_state,
                                     tol=tol, max_iter=max_iter, scoring=scoring,
                                     progress=progress)
        secs["kfold"] = time.perf_counter() - t
    terms = {c: np.asarray(v, float).reshape(len(mus), -1) for c, v in vals.items()}
    values = {c: t.mean(axis=1) for c, t in terms.items()}
    ses = {c: t.std(axis=1, ddof=1) / np.sqrt(t.shape[1]) if t.shape[1] > 1
           else np.zeros(len(mus)) for c, t in terms.items()}
    n_active = np.array([int(np.sum(r.coef != 0)) for r in results])
    return CriterionPath(mus, results, values, n_active, mu_max, fit_seconds, secs, ses)


# --------------------------------------------------------------------------------------
# ALO for a generic smooth strongly convex problem (the smoothed L2L1-SVM of BilevelSVC)
# --------------------------------------------------------------------------------------
def _smooth_parts(problem, w):
    X, y = problem.X, problem.y
    n = X.shape[0]
    c = np.full(n, 1.0 / n) if problem.sample_weight is None else \
        np.asarray(problem.sample_weight, float) / n
    z = X @ w
    return X, y, c, z, problem.loss.derivative(y, z), problem.loss.second_derivative(y, z)


def alo_smooth(problem, w, *, hessian=None):
    r"""Approximate leave-one-out outputs of a smooth problem at its minimiser ``w``.

    For :math:`F(w) = \frac1n\sum_i s_i\ell(y_i, x_i^\top w) + P(w)` deleting object
    ``i`` removes :math:`c_i\ell_i`, :math:`c_i = s_i/n` (the remaining terms keep their
    :math:`1/n`; this is ``sample_weight[i] = 0``). One Newton step from ``w`` with the
    Hessian :math:`H - c_i\ell''_i x_i x_i^\top`, by Sherman–Morrison:

    .. math::
        z_i^{(-i)} = z_i + \frac{c_i\,\ell'_i\,L_i}{1 - c_i\,\ell''_i\,L_i},\qquad
        L_i = x_i^\top H^{-1} x_i,

    with :math:`\ell' = \partial\ell/\partial z`. Exact for quadratic problems; for smooth
    losses the error is of the order of the neglected third derivatives times
    :math:`\|w^{(-i)} - w\|^2` (Rad & Maleki 2020).

    Parameters
    ----------
    problem : bisvm.solvers.base.SmoothProblem
    w : ndarray, shape (d,)
        The minimiser (from ``solve_newton`` or ``solve_lbfgs``).
    hessian : ndarray, optional
        :math:`\nabla^2 F(w)` if already at hand.

    Returns
    -------
    z_loo : ndarray, shape (n,)
        Approximate leave-one-out outputs :math:`x_i^\top w^{(-i)}`.
    """
    X, y, c, z, d1, d2 = _smooth_parts(problem, np.asarray(w, float))
    H = problem.hessian(w) if hessian is None else hessian
    L = _quad_diag(_chol(np.asarray(H, float)), X)
    return z + c * d1 * L / (1.0 - c * d2 * L)


def exact_loo_smooth(problem, w, *, solver=None, **solver_kwargs):
    """Exact leave-one-out outputs of a smooth problem by ``n`` warm-started refits with
    ``sample_weight[i] = 0`` (the reference :func:`alo_smooth` approximates)."""
    from dataclasses import replace

    from ..solvers.primal.newton import solve_newton

    solver = solve_newton if solver is None else solver
    n = problem.X.shape[0]
    s = np.ones(n) if problem.sample_weight is None else \
        np.asarray(problem.sample_weight, float).copy()
    out = np.empty(n)
    for i in range(n):
        si = s.copy()
        si[i] = 0.0
        res = solver(replace(problem, sample_weight=si), w0=w, **solver_kwargs)
        out[i] = problem.X[i] @ res.coef
    return out


def alo_path_scores(problems, coefs, *, scoring="error"):
    r"""Score a path of fitted smooth problems (e.g. an SVM's β path) by ALO.

    Parameters
    ----------
    problems : sequence of SmoothProblem
    coefs : sequence of ndarray
        The minimiser of each problem.
    scoring : {"error", "loss", "hinge"}
        ALO misclassification rate :math:`\frac1n\sum 1[y_i z_i^{(-i)} \le 0]`, ALO mean
        training loss :math:`\frac1n\sum\ell(y_i, z_i^{(-i)})`, or ALO mean hinge loss.

    Returns
    -------
    ndarray, shape (len(problems),)
    """
    if scoring not in ("error", "loss", "hinge"):
        raise ValueError(f"scoring must be 'error', 'loss' or 'hinge', got {scoring!r}")
    out = []
    for prob, w in zip(problems, coefs, strict=True):
        zl = alo_smooth(prob, w)
        if scoring == "error":
            out.append(float(np.mean(prob.y * zl <= 0)))
        elif scoring == "hinge":
            out.append(float(np.mean(np.maximum(0.0, 1.0 - prob.y * zl))))
        else:
            out.append(float(np.mean(prob.loss.value(prob.y, zl))))
    return np.asarray(out)
