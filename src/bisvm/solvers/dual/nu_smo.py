r"""The ν formulations of LIBSVM as thin builders of :class:`~bisvm.solvers.dual.smo.DualProblem`
for the one SMO engine, and the post-processing of their solutions.

ν-SVC (Schölkopf et al. 2000; Chang & Lin 2001, "Training ν-support vector
classifiers: theory and algorithms", problem (2.2) in LIBSVM's scaling):

.. math::
    \min_\alpha \tfrac12\alpha^\top Q\alpha \quad\text{s.t.}\quad y^\top\alpha = 0,\quad
    e^\top\alpha = \nu\textstyle\sum_i C_i,\quad 0 \le \alpha_i \le C_i,

with :math:`Q_{ij} = y_iy_jk(x_i, x_j)` and :math:`C_i = w_i` (sample weights; 1 in
LIBSVM's original). The solver returns ρ and the multiplier :math:`r` of the second
constraint; the decision function is :math:`f(x) = \sum_i (\alpha_i y_i/r)k(x_i, x) -
\rho/r`, i.e. the C-SVC solution with :math:`C = 1/r` (Chang & Lin, Theorem 2).

One-class SVM (Schölkopf et al. 2001, "Estimating the support of a high-dimensional
distribution"):

.. math::
    \min_\alpha \tfrac12\alpha^\top K\alpha \quad\text{s.t.}\quad e^\top\alpha =
    \nu\textstyle\sum_i C_i,\quad 0 \le \alpha_i \le C_i,

all signs :math:`+1` (so the ordinary selection already keeps the single constraint),
decision function :math:`f(x) = \sum_i\alpha_ik(x_i, x) - \rho`.

ν-SVR (Schölkopf et al. 2000), on :math:`2n` variables :math:`(\alpha, \alpha^*)`:

.. math::
    \min \tfrac12(\alpha - \alpha^*)^\top K(\alpha - \alpha^*) - z^\top(\alpha - \alpha^*)
    \quad\text{s.t.}\quad e^\top(\alpha - \alpha^*) = 0,\quad e^\top(\alpha + \alpha^*) =
    C\nu\textstyle\sum_i w_i,\quad 0 \le \alpha_i, \alpha_i^* \le Cw_i,

regressor :math:`f(x) = \sum_i(\alpha_i - \alpha_i^*)k(x_i, x) - \rho`; the tube
half-width found is :math:`\varepsilon = -r`.

Each builder supplies LIBSVM's feasible start: the budget :math:`\nu\sum_i C_i` (split
evenly between the two signs for ν-SVC and ν-SVR) is poured greedily, in sample order,
into variables filled to their bounds.
"""

from __future__ import annotations

import warnings

import numpy as np

from .smo import DualProblem

__all__ = ["nu_svc_dual", "one_class_dual", "nu_svr_dual", "nu_svc_scaling", "greedy_fill"]


def greedy_fill(upper, budget):
    """Fill ``upper[0], upper[1], ...`` in order until ``budget`` is spent (LIBSVM's
    feasible start); returns α with :math:`0 \\le \\alpha \\le` ``upper`` and
    :math:`\\sum\\alpha = \\min(\\text{budget}, \\sum \\text{upper})`."""
    upper = np.asarray(upper, dtype=float)
    before = np.concatenate([[0.0], np.cumsum(upper)[:-1]])
    return np.clip(budget - before, 0.0, upper)


def _weights(n, weights):
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n,) or np.any(~np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be a positive finite array of shape (n,)")
    return w


def nu_svc_dual(X, y, kernel, nu=0.5, *, weights=None):
    r"""Build the ν-SVC dual (see the module docstring); ``y`` in {-1, +1}.

    Raises ``ValueError`` ("specified nu is infeasible", LIBSVM's wording) when
    :math:`\nu\sum_i C_i/2` exceeds the total bound of either class: no feasible α
    exists. Solve it with :func:`~bisvm.solvers.dual.smo.solve_smo` and rescale with
    :func:`nu_svc_scaling`.
    """
    y = np.where(np.asarray(y) > 0, 1.0, -1.0)
    n = y.shape[0]
    c = _weights(n, weights)
    if not 0 < nu <= 1:
        raise ValueError(f"nu must be in (0, 1], got {nu!r}")
    half = 0.5 * nu * float(c.sum())
    pos = y > 0
    if half > min(c[pos].sum(), c[~pos].sum()) * (1 + 1e-12):
        raise ValueError(
            f"specified nu is infeasible: nu = {nu} asks for nu * sum(C) / 2 = {half:.6g} "
            f"per class, but the classes' total bounds are {c[pos].sum():.6g} and "
            f"{c[~pos].sum():.6g}"
        )
    alpha = np.zeros(n)
    alpha[pos] = greedy_fill(c[pos], half)
    alpha[~pos] = greedy_fill(c[~pos], half)
    return DualProblem(X, kernel, np.arange(n), y, np.zeros(n), c, np.zeros(n), nu=True,
                       alpha_start=alpha)


def nu_svc_scaling(result, floor):
    r"""``(scale, rho)`` that turn a ν-SVC solution into the decision function
    :math:`f(x) = \sum_i` ``scale`` :math:`\alpha_iy_ik(x_i, x) -` ``rho``: LIBSVM divides α
    and ρ by :math:`r` (and the objective by :math:`r^2`).

    :math:`r \ge 0` at the optimum, but it is known only to the solver's accuracy: on
    nearly degenerate data (a nearly constant kernel, or classes that overlap exactly)
    the computed :math:`r` can be 0 or slightly negative, where LIBSVM silently flips or
    blows up the decision values. Then ``r = floor`` (pass the solver's ``tol``) is used
    with a ``UserWarning``: the labels, the sign of :math:`\sum_i\alpha_iy_ik - \rho`,
    do not depend on it, only the scale of the decision values does.
    """
    r = result.stats["nu_multiplier"]
    if not (np.isfinite(r) and r > 0):
        warnings.warn(
            f"nu-SVC: the multiplier r = {r!r} of e'alpha is not positive at this "
            f"accuracy (the samples are degenerate for this nu: e.g. a nearly constant "
            f"kernel); decision values are scaled with r = {floor!r} instead",
            UserWarning,
            stacklevel=3,
        )
        r = float(floor)
    return 1.0 / r, -result.intercept / r


def one_class_dual(X, kernel, nu=0.5, *, weights=None):
    """Build the one-class SVM dual (see the module docstring)."""
    n = X.shape[0]
    c = _weights(n, weights)
    if not 0 < nu <= 1:
        raise ValueError(f"nu must be in (0, 1], got {nu!r}")
    alpha = greedy_fill(c, nu * float(c.sum()))
    return DualProblem(X, kernel, np.arange(n), np.ones(n), np.zeros(n), c, np.zeros(n),
                       alpha_start=alpha)


def nu_svr_dual(X, z, kernel, C=1.0, nu=0.5, *, weights=None):
    r"""Build the ν-SVR dual on :math:`2n` variables (see the module docstring):
    :math:`y = (e, -e)`, :math:`p = (-z, z)`, coefficients :math:`\alpha_s -
    \alpha_{s+n}`, and both halves start from the same greedy fill of
    :math:`C\nu\sum_i w_i/2`."""
    z = np.asarray(z, dtype=float)
    n = z.shape[0]
    c = float(C) * _weights(n, weights)
    if not 0 < nu <= 1:
        raise ValueError(f"nu must be in (0, 1], got {nu!r}")
    a = greedy_fill(c, 0.5 * nu * float(c.sum()))
    idx = np.arange(n)
    return DualProblem(
        X,
        kernel,
        np.concatenate([idx, idx]),
        np.concatenate([np.ones(n), -np.ones(n)]),
        np.concatenate([-z, z]),
        np.concatenate([c, c]),
        np.zeros(2 * n),
        nu=True,
        alpha_start=np.concatenate([a, a]),
    )
