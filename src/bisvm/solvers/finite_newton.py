r"""Finite Newton method for the L2-SVM, with the exact line search on the piecewise
quadratic objective (seed 002 §7.1), and its kernel version with greedy basis selection
(seed 002 §7.1.2; Keerthi & DeCoste 2005, Keerthi, Chapelle & DeCoste 2006).

Problem (seed 002 §7: :math:`R` positive (semi-)definite, :math:`\ell_i` convex, piecewise
quadratic and differentiable):

.. math::
    \min_w f(w) = \tfrac12 w^\top R\, w + \sum_i c_i \max(0,\ 1 - y_i x_i^\top w)^2 .

Iteration: with :math:`I = \{i : y_i x_i^\top w^k < 1\}` the quadratic pieces active at
:math:`w^k`, :math:`\bar w` minimises the quadratic :math:`\tfrac12 w^\top R w + \sum_{i\in
I} c_i (1 - y_i x_i^\top w)^2`, i.e. solves

.. math::
    (R + 2 X_I^\top C_I X_I)\,\bar w = 2 X_I^\top C_I\, y_I ,

(Cholesky, or linear CG of :mod:`bisvm.solvers.cg` when ``d`` is large); then
:math:`w^{k+1} = w^k + \delta^k (\bar w - w^k)` with the *exact* minimiser
:math:`\delta^k` of the one-dimensional piecewise quadratic (:func:`exact_line_search`: the
derivative is piecewise linear and increasing, its breakpoints are sorted once and its
root found in :math:`O(n \log n)`). The method stops in finitely many iterations: once the
active set no longer changes, the full step lands on the optimum.

``R = I`` and ``c_i = C`` give LIBLINEAR's primal L2-loss SVM; ``R = K_{JJ}`` (with a zero
row and column for an unpenalised intercept) and the design ``K_{:,J}`` give the kernel
L2-SVM in the primal β form of seed 002 §2.2.4 restricted to the basis ``J``.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..losses import SquaredHinge
from ..penalties import L2
from .base import ConvergenceRecord, SolverResult, warn_cap
from .cg import conjugate_gradient
from .newton import cholesky_solve

__all__ = [
    "exact_line_search",
    "solve_finite_newton",
    "solve_finite_newton_problem",
    "greedy_kernel_finite_newton",
]


def _as_operator(R, d):
    """``R`` given as a scalar, a diagonal (1-D) or a matrix (2-D): returns (matvec, dense)."""
    if R is None:
        R = 1.0
    R = np.asarray(R, dtype=float)
    if R.ndim == 0:
        r = float(R)
        return (lambda v: r * v), (lambda: r * np.eye(d))
    if R.ndim == 1:
        if R.shape[0] != d:
            raise ValueError(f"R must have {d} diagonal entries, got {R.shape[0]}")
        return (lambda v: R * v), (lambda: np.diag(R))
    if R.shape != (d, d):
        raise ValueError(f"R must be of shape {(d, d)}, got {R.shape}")
    return (lambda v: R @ v), (lambda: R)


def exact_line_search(wRd, dRd, a, b, c):
    r"""Exact minimiser :math:`\delta \ge 0` of the piecewise quadratic

    .. math::
        \varphi(\delta) = \delta\, w^\top R d + \tfrac12 \delta^2 d^\top R d
        + \sum_i c_i \max(0,\ a_i - \delta b_i)^2 \quad(+\ \text{const}),

    with :math:`a_i = 1 - y_i x_i^\top w`, :math:`b_i = y_i x_i^\top d`. Its derivative
    :math:`\varphi'(\delta) = w^\top R d + \delta\, d^\top R d - 2\sum_{i \in I(\delta)}
    c_i b_i (a_i - \delta b_i)` is piecewise linear and non-decreasing; its breakpoints
    :math:`a_i / b_i` are sorted once and the first segment where it changes sign is
    found by cumulative sums.
    """
    act = a > 0
    s1 = float(np.sum(c[act] * b[act] * a[act]))
    s2 = float(np.sum(c[act] * b[act] ** 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(b != 0, a / b, np.inf)
    # pieces that switch at some δ > 0: active ones with b > 0 leave, inactive with b < 0 join
    leave = act & (b > 0) & (t > 0)
    join = ~act & (b < 0) & (t >= 0)
    idx = np.flatnonzero(leave | join)
    order = idx[np.argsort(t[idx], kind="stable")]
    sign = np.where(leave[order], -1.0, 1.0)
    cs1 = s1 + np.cumsum(sign * c[order] * b[order] * a[order])
    cs2 = s2 + np.cumsum(sign * c[order] * b[order] ** 2)
    S1 = np.r_[s1, cs1]
    S2 = np.r_[s2, cs2]
    knots = np.r_[t[order], np.inf]
    # root of the linear piece k: (wRd - 2 S1_k) + δ (dRd + 2 S2_k) = 0
    curv = dRd + 2.0 * S2
    slope0 = wRd - 2.0 * S1
    with np.errstate(divide="ignore", invalid="ignore"):
        # a flat piece (no curvature) holds the minimum at its left end iff φ' >= 0 there
        roots = np.where(curv > 0, -slope0 / curv, np.where(slope0 >= 0, -np.inf, np.inf))
    lo = np.r_[0.0, knots[:-1]]
    ok = roots <= knots
    if not np.any(ok):
        raise ValueError("the line-search objective is unbounded below (R not positive "
                         "definite on the search direction)")
    k = int(np.argmax(ok))
    return float(max(roots[k], lo[k], 0.0))


def _objective(Rv, w, z, y, c):
    r = np.maximum(0.0, 1.0 - y * z)
    return 0.5 * float(w @ Rv(w)) + float(c @ (r * r))


def solve_finite_newton(X, y, *, cost=1.0, R=None, w0=None, tol=1e-10, max_iter=100,
                        linear_solver="auto", warn=True):
    r"""Minimise :math:`\tfrac12 w^\top R w + \sum_i c_i \max(0, 1 - y_i x_i^\top w)^2` by
    the finite Newton method with exact line search.

    Parameters
    ----------
    X : ndarray of shape (n, d) or scipy.sparse matrix
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    cost : float or ndarray of shape (n,)
        :math:`c_i > 0` (``C`` times sample weights).
    R : float, ndarray of shape (d,) or (d, d), optional
        Regulariser; a scalar means :math:`rI`, a vector a diagonal (default :math:`I`).
    w0 : ndarray of shape (d,), optional
        Warm start (zeros by default).
    tol : float
        Stop when :math:`\|\nabla f(w)\|_2 \le` ``tol`` :math:`\cdot \max(1, \|\nabla f(w_0)\|_2)`,
        or at once when the active set is unchanged after a full step (finite termination).
    max_iter : int
    linear_solver : {"auto", "cholesky", "cg"}
        "auto" uses Cholesky up to ``d = 2000`` dense (5000 sparse), CG beyond.

    Returns
    -------
    SolverResult
        ``extra["active_set"]``: indices with :math:`y_i x_i^\top w < 1` at the solution.
    """
    if linear_solver not in ("auto", "cholesky", "cg"):
        raise ValueError(f"linear_solver must be 'auto', 'cholesky' or 'cg', got "
                         f"{linear_solver!r}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive float, got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    t0 = time.perf_counter()
    n, d = X.shape
    y = np.asarray(y, dtype=float)
    c = np.broadcast_to(np.asarray(cost, dtype=float), (n,)).copy()
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ValueError("cost must be finite and non-negative")
    Rv, Rdense = _as_operator(R, d)
    if linear_solver == "auto":
        linear_solver = "cholesky" if d <= (5000 if sp.issparse(X) else 2000) else "cg"
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=float, copy=True)
    z = np.asarray(X @ w).ravel()

    def gradient(w, z):
        r = np.maximum(0.0, 1.0 - y * z)
        return Rv(w) - 2.0 * np.asarray(X.T @ (c * y * r)).ravel()

    f = _objective(Rv, w, z, y, c)
    g = gradient(w, z)
    gn0 = max(1.0, float(np.linalg.norm(g)))
    objs, gns, secs = [f], [float(np.linalg.norm(g))], [0.0]
    k = 0
    converged = gns[-1] <= tol * gn0
    while not converged and k < max_iter:
        I = np.flatnonzero((y * z < 1.0) & (c > 0))
        XI, cI, yI = X[I], c[I], y[I]
        rhs = 2.0 * np.asarray(XI.T @ (cI * yI)).ravel()
        if linear_solver == "cholesky":
            if sp.issparse(XI):
                XtCX = np.asarray((XI.T @ sp.diags(cI) @ XI).todense())
            else:
                XtCX = (XI.T * cI) @ XI
            w_bar = cholesky_solve(Rdense() + 2.0 * XtCX, rhs)
        else:
            def matvec(v, XI=XI, cI=cI):
                return Rv(v) + 2.0 * np.asarray(XI.T @ (cI * (XI @ v))).ravel()
            w_bar = conjugate_gradient(matvec, rhs, w, tol=1e-3 * tol, max_iter=10 * d)[0]
        dvec = w_bar - w
        q = np.asarray(X @ dvec).ravel()
        Rd = Rv(dvec)
        delta = exact_line_search(float(w @ Rd), float(dvec @ Rd), 1.0 - y * z, y * q, c)
        same_set = np.array_equal(np.flatnonzero((y * (z + q) < 1.0) & (c > 0)), I)
        w = w + delta * dvec
        z = z + delta * q
        k += 1
        f = _objective(Rv, w, z, y, c)
        g = gradient(w, z)
        objs.append(f)
        gns.append(float(np.linalg.norm(g)))
        secs.append(time.perf_counter() - t0)
        # a full step into an unchanged active set lands on the exact optimum
        converged = gns[-1] <= tol * gn0 or (delta == 1.0 and same_set)
    if not converged and warn:
        warn_cap("finite Newton", max_iter, gns[-1], tol * gn0)
    rec = ConvergenceRecord(np.array(objs), np.array(gns), np.array(secs))
    return SolverResult(
        coef=w, objective=float(f), grad_norm=gns[-1], n_iter=k, n_evals=k + 1,
        converged=bool(converged), seconds=time.perf_counter() - t0, record=rec,
        extra={"active_set": np.flatnonzero(y * z < 1.0)},
    )


def solve_finite_newton_problem(problem, *, w0=None, tol=1e-10, max_iter=100, **kwargs):
    r"""Finite Newton on a :class:`~bisvm.solvers.base.SmoothProblem` with the
    :class:`~bisvm.losses.SquaredHinge` loss and an :class:`~bisvm.penalties.L2` penalty:
    :math:`\frac1n\sum s_i \max(0, 1-y_i x_i^\top w)^2 + \frac\alpha2\sum_j m_j w_j^2` is the
    form above with :math:`c_i = s_i/n`, :math:`R = \alpha\,\mathrm{diag}(m)`."""
    if not isinstance(problem.loss, SquaredHinge) or not isinstance(problem.penalty, L2):
        raise ValueError("the finite Newton method needs the SquaredHinge loss and an L2 "
                         f"penalty, got {type(problem.loss).__name__} and "
                         f"{type(problem.penalty).__name__}")
    d = problem.n_features
    R = problem.penalty.hessian_diag(np.zeros(d))
    cost = problem._s() * np.ones(problem.X.shape[0])
    return solve_finite_newton(problem.X, problem.y, cost=cost, R=R, w0=w0, tol=tol,
                               max_iter=max_iter, **kwargs)


def greedy_kernel_finite_newton(kernel, X, y, *, C=1.0, n_basis=50, n_candidates=59,
                                fit_intercept=True, tol=1e-8, max_iter=100,
                                random_state=None):
    r"""Sparse kernel L2-SVM by greedy basis selection (seed 002 §7.1.2).

    Minimises, over a growing basis :math:`J \subset \{1..n\}`,

    .. math::
        L(\beta, b) = \tfrac12 \beta^\top K_{JJ}\beta
        + C\sum_i \max(0,\ 1 - y_i (K_{iJ}\beta + b))^2 ,

    the primal β form of seed 002 §2.2.4 with :math:`\beta` restricted to ``J`` (the
    labels folded into β). Each greedy step draws ``n_candidates`` random unchosen points
    ("a small random subset of candidates"); for each candidate ``j`` it computes
    :math:`\bar f_j = \min_{\beta_j} L(\beta, \beta_j)` with the current coefficients
    fixed (a one-dimensional piecewise quadratic, minimised exactly by
    :func:`exact_line_search`), adds the candidate with the smallest :math:`\bar f_j`, and
    re-optimises all of :math:`(\beta, b)` by :func:`solve_finite_newton` from
    :math:`(\beta, 0)`. Selecting ``d`` basis functions costs :math:`O(d^2 n)` plus the
    kernel columns.

    Parameters
    ----------
    kernel : callable
        ``kernel(A, B)`` returns the block :math:`K(A, B)` (e.g. a
        :class:`bisvm.kernels.Kernel`).
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C : float
    n_basis : int
        Number of basis functions to select (at most ``n``).
    n_candidates : int
        Size of the random candidate subset per step (59 gives the best of a random 5%
        of the points with probability 0.95).
    fit_intercept : bool
        Unpenalised bias ``b``.
    random_state : int, RandomState or None

    Returns
    -------
    dict
        ``basis`` (indices ``J`` in selection order), ``coef`` (β), ``intercept`` (b),
        ``objective`` per basis size, ``result`` (the last :class:`SolverResult`).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n = X.shape[0]
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive float, got {C!r}")
    if int(n_basis) != n_basis or not 1 <= n_basis <= n:
        raise ValueError(f"n_basis must be an integer in [1, {n}], got {n_basis!r}")
    if int(n_candidates) != n_candidates or n_candidates < 1:
        raise ValueError(f"n_candidates must be a positive integer, got {n_candidates!r}")
    rng = check_random_state(random_state)
    cost = np.full(n, float(C))
    J = []
    KJ = np.zeros((n, 0))  # K[:, J]
    beta = np.zeros(0)
    b = 0.0
    z = np.zeros(n)  # K[:, J] β + b
    chosen = np.zeros(n, dtype=bool)
    objectives = []
    res = None
    if fit_intercept:  # the best constant first: finite Newton on the bias alone
        res = solve_finite_newton(np.ones((n, 1)), y, cost=cost, R=0.0, tol=tol,
                                  max_iter=max_iter)
        b = float(res.coef[0])
        z = np.full(n, b)
    while len(J) < n_basis:
        pool = np.flatnonzero(~chosen)
        cand = rng.choice(pool, size=min(int(n_candidates), pool.size), replace=False)
        Kc = np.asarray(kernel(X, X[cand]), dtype=float)  # (n, m)
        Kdiag = Kc[cand, np.arange(cand.size)]
        cross = KJ[cand].T if len(J) else np.zeros((cand.size, 0))
        a = 1.0 - y * z
        best = (np.inf, None, 0.0)
        for m in range(cand.size):
            bvec = y * Kc[:, m]
            # φ(t) = t k_Jjᵀβ + ½ t² k_jj + Σ c max(0, a - t b)²: search both directions
            lin = float(cross[:, m] @ beta) if len(J) else 0.0
            kjj = float(Kdiag[m])
            t_pos = exact_line_search(lin, kjj, a, bvec, cost)
            t_neg = exact_line_search(-lin, kjj, a, -bvec, cost)
            for t in (t_pos, -t_neg):
                r = np.maximum(0.0, a - t * bvec)
                val = t * lin + 0.5 * t * t * kjj + float(cost @ (r * r))
                if val < best[0]:
                    best = (val, m, t)
        _, m, t = best
        j = int(cand[m])
        J.append(j)
        chosen[j] = True
        KJ = np.c_[KJ, Kc[:, m]]
        KJJ = KJ[J]
        KJJ = 0.5 * (KJJ + KJJ.T)
        if fit_intercept:
            design = np.c_[KJ, np.ones(n)]
            R = np.zeros((len(J) + 1, len(J) + 1))
            R[:-1, :-1] = KJJ
            w0 = np.r_[beta, t, b]
        else:
            design, R, w0 = KJ, KJJ, np.r_[beta, t]
        res = solve_finite_newton(design, y, cost=cost, R=R, w0=w0, tol=tol,
                                  max_iter=max_iter)
        beta = res.coef[: len(J)]
        b = float(res.coef[-1]) if fit_intercept else 0.0
        z = design @ res.coef
        objectives.append(res.objective)
    return {"basis": np.array(J, dtype=np.int64), "coef": beta, "intercept": b,
            "objective": np.array(objectives), "result": res}
