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

(Cholesky, or linear CG of :mod:`bisvm.solvers.primal.cg` when ``d`` is large); then
:math:`w^{k+1} = w^k + \delta^k (\bar w - w^k)` with the *exact* minimiser
:math:`\delta^k` of the one-dimensional piecewise quadratic (:func:`exact_line_search`: the
derivative is piecewise linear and increasing, its breakpoints are sorted once and its
root found in :math:`O(n \log n)`). The method stops in finitely many iterations: once the
active set no longer changes, the full step lands on the optimum.

``R = I`` and ``c_i = C`` give LIBLINEAR's primal L2-loss SVM; ``R = K_{JJ}`` (with a zero
row and column for an unpenalised intercept) and the design ``K_{:,J}`` give the kernel
L2-SVM in the primal β form of seed 002 §2.2.4 restricted to the basis ``J``.

:func:`finite_newton_loop` is the iteration shared with the support vector regression of
:mod:`~bisvm.solvers.primal.svr_finite_newton`; both stop on
:math:`\|\nabla f(w)\| \le \mathrm{tol}\cdot s` for a scale :math:`s` fixed at the start
and certify the relative gradient norm :math:`\|\nabla f(w)\|/s`
(``certificate="relative_gradient_norm"``).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ...losses import SquaredHinge
from ...penalties import L2
from .._linalg import cholesky_solve
from .._record import IterationLog, check_tol_max_iter
from ..base import ConvergenceRecord, SolverResult, warn_cap
from ..problems import LinearProblem, augment_intercept, split_intercept
from .cg import conjugate_gradient

__all__ = [
    "exact_line_search",
    "finite_newton_loop",
    "solve_finite_newton",
    "solve_finite_newton_problem",
    "greedy_kernel_finite_newton",
    "check_linear_problem",
    "with_intercept",
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


def check_linear_problem(problem, loss_type, *, linear_solver, tol, max_iter):
    """The checks of the finite Newton solvers: the loss, the linear solver, ``tol``,
    ``max_iter`` and the costs. Returns ``(X, y, cost, linear_solver)`` with the
    intercept column appended (``problem.bias``) and ``"auto"`` resolved: Cholesky up to
    ``d = 2000`` dense (5000 sparse), CG beyond."""
    if not isinstance(problem, LinearProblem) or not isinstance(problem.loss, loss_type):
        raise ValueError(f"expected a LinearProblem with the {loss_type.__name__} loss, got "
                         f"{type(problem).__name__}")
    if linear_solver not in ("auto", "cholesky", "cg"):
        raise ValueError(f"linear_solver must be 'auto', 'cholesky' or 'cg', got "
                         f"{linear_solver!r}")
    check_tol_max_iter(tol, max_iter)
    X = augment_intercept(problem.X, problem.bias)
    n, d = X.shape
    y = np.asarray(problem.y, dtype=float)
    c = np.broadcast_to(np.asarray(problem.cost, dtype=float), (n,)).copy()
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ValueError("cost must be finite and non-negative")
    if linear_solver == "auto":
        linear_solver = "cholesky" if d <= (5000 if sp.issparse(X) else 2000) else "cg"
    return X, y, c, linear_solver


def finite_newton_loop(value_grad, step, w, z, *, scale, tol, max_iter, start_tol=None,
                       name="finite Newton", warn=True, report=None):
    r"""The finite Newton iteration (seed 002 §7.1) over a piecewise quadratic objective.

    Each iteration takes ``step(w, z, g) -> (w_new, z_new, delta, exact)``, the Newton
    step on the pieces active at ``w`` followed by the exact line search (``delta`` its
    length, ``exact`` true when a full step left the active pieces unchanged: it landed
    on the optimum, finite termination), and records the objective and the relative
    gradient norm.

    Parameters
    ----------
    value_grad : callable
        ``value_grad(w, z) -> (f, g)`` with the margins ``z = Xw``.
    step : callable
    w, z : ndarray
        The start and its margins.
    scale : callable
        ``scale(‖∇f(w0)‖) -> s``: the run stops when :math:`\|\nabla f\| \le` ``tol``·s.
    start_tol : float, optional
        The test at the start (default ``tol``).
    report : callable, optional
        ``report(k, f, gradient_norm, delta)`` after every iteration (verbose output).

    Returns
    -------
    result : SolverResult
        Certificate ``"relative_gradient_norm"`` (:math:`\|\nabla f\|/s`, 0 when
        :math:`s = 0`); ``stats["gradient_scale"]`` is ``s``.
    z : ndarray
        The margins at the solution.
    """
    f, g = value_grad(w, z)
    gn = float(np.linalg.norm(g))
    s = scale(gn)
    rel = 1.0 / s if s > 0 else 0.0
    log = IterationLog(f, gn * rel, certificate="relative_gradient_norm")
    converged = gn <= (tol if start_tol is None else start_tol) * s
    k = 0
    while not converged and k < max_iter:
        w, z, delta, exact = step(w, z, g)
        k += 1
        f, g = value_grad(w, z)
        gn = float(np.linalg.norm(g))
        log.add(f, gn * rel)
        if report is not None:
            report(k, f, gn, delta)
        converged = gn <= tol * s or exact
    if not converged and warn:
        warn_cap(name, max_iter, log.value, tol)
    return log.result(w, k, k + 1, converged, stats={"gradient_scale": s}), z


def solve_finite_newton(problem, *, w0=None, tol=1e-10, max_iter=100, linear_solver="auto",
                        warn=True):
    r"""Minimise :math:`\tfrac12 w^\top R w + \sum_i c_i \max(0, 1 - y_i x_i^\top w)^2` by
    the finite Newton method with exact line search.

    Parameters
    ----------
    problem : LinearProblem
        With the :class:`~bisvm.losses.SquaredHinge` loss, labels in {-1, +1}, costs
        :math:`c_i \ge 0` and ``quadratic`` :math:`R` (a scalar :math:`rI`, a diagonal,
        a matrix; the identity by default). With ``bias > 0`` the intercept feature is
        appended (LIBLINEAR's ``-B``, penalised by :math:`R`, whose size is then d + 1).
    w0 : ndarray, optional
        Warm start over the columns (the intercept feature's weight last; zeros by
        default).
    tol : float
        Stop when :math:`\|\nabla f(w)\|_2 \le` ``tol`` :math:`\cdot \max(1, \|\nabla
        f(w_0)\|_2)`, or at once when the active set is unchanged after a full step
        (finite termination).
    max_iter : int
    linear_solver : {"auto", "cholesky", "cg"}
        "auto" uses Cholesky up to ``d = 2000`` dense (5000 sparse), CG beyond.
    warn : bool
        :class:`~sklearn.exceptions.ConvergenceWarning` on the cap.

    Returns
    -------
    SolverResult
        ``coef`` the weights of the features, ``intercept`` ``bias`` times the weight of
        the intercept feature, ``active_set`` the samples with :math:`y_i x_i^\top w < 1`
        at the solution; certificate ``"relative_gradient_norm"``.
    """
    X, y, c, linear_solver = check_linear_problem(
        problem, SquaredHinge, linear_solver=linear_solver, tol=tol, max_iter=max_iter)
    d = X.shape[1]
    Rv, Rdense = _as_operator(problem.quadratic, d)
    loss = problem.loss
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=float, copy=True)
    z = np.asarray(X @ w).ravel()

    def value_grad(w, z):
        r = np.maximum(0.0, 1.0 - y * z)
        return (0.5 * float(w @ Rv(w)) + float(c @ loss.value(y, z)),
                Rv(w) - 2.0 * np.asarray(X.T @ (c * y * r)).ravel())

    def step(w, z, g):
        I = np.flatnonzero((y * z < 1.0) & (c > 0))
        dvec = _active_minimiser(X[I], c[I], y[I], Rv, Rdense, w, linear_solver, tol) - w
        q = np.asarray(X @ dvec).ravel()
        Rd = Rv(dvec)
        delta = exact_line_search(float(w @ Rd), float(dvec @ Rd), 1.0 - y * z, y * q, c)
        same_set = np.array_equal(np.flatnonzero((y * (z + q) < 1.0) & (c > 0)), I)
        return w + delta * dvec, z + delta * q, delta, delta == 1.0 and same_set

    res, z = finite_newton_loop(value_grad, step, w, z, scale=lambda gn: max(1.0, gn),
                                tol=tol, max_iter=max_iter, warn=warn)
    return with_intercept(res, problem.bias, active_set=np.flatnonzero(y * z < 1.0))


def _active_minimiser(XI, cI, yI, Rv, Rdense, w, linear_solver, tol):
    r"""The minimiser of the quadratic with the pieces ``I`` active:
    :math:`(R + 2 X_I^\top C_I X_I)\,\bar w = 2 X_I^\top C_I y_I` (Cholesky, or CG to
    :math:`10^{-3}` ``tol`` from ``w``)."""
    rhs = 2.0 * np.asarray(XI.T @ (cI * yI)).ravel()
    if linear_solver == "cholesky":
        if sp.issparse(XI):
            XtCX = np.asarray((XI.T @ sp.diags(cI) @ XI).todense())
        else:
            XtCX = (XI.T * cI) @ XI
        return cholesky_solve(Rdense() + 2.0 * XtCX, rhs)

    def matvec(v):
        return Rv(v) + 2.0 * np.asarray(XI.T @ (cI * (XI @ v))).ravel()
    return conjugate_gradient(matvec, rhs, w, tol=1e-3 * tol, max_iter=10 * w.shape[0])[0]


def with_intercept(res, bias, **fields):
    """``res`` with the intercept feature's weight (last) moved to ``intercept``."""
    if bias > 0:
        coef, intercept = split_intercept(res.coef, res.coef.shape[0] - 1, bias)
        fields.update(coef=coef, intercept=intercept)
    return dataclasses.replace(res, **fields)


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
    cost = problem.sample_scale() * np.ones(problem.X.shape[0])
    lp = LinearProblem(problem.X, problem.y, problem.loss, cost, quadratic=R)
    return solve_finite_newton(lp, w0=w0, tol=tol, max_iter=max_iter, **kwargs)


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
    SolverResult
        ``coef`` β over the basis, ``intercept`` b, ``active_set`` the basis ``J`` in
        selection order; ``record.objective`` the objective after each basis function
        was added (``record.grad_norm`` the certificate of that solve), ``n_iter`` the
        basis size, ``n_evals`` the evaluations of all finite Newton solves; the certificate is
        that of the last solve (``"relative_gradient_norm"``).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n = X.shape[0]
    _check_greedy(C, n_basis, n_candidates, n)
    rng = check_random_state(random_state)
    cost = np.full(n, float(C))
    J, KJ, beta, b = [], np.zeros((n, 0)), np.zeros(0), 0.0  # basis, K[:, J], β, b
    z = np.zeros(n)  # K[:, J] β + b
    chosen = np.zeros(n, dtype=bool)
    results = []
    t0 = time.perf_counter()
    if fit_intercept:  # the best constant first: finite Newton on the bias alone
        res = solve_finite_newton(LinearProblem(np.ones((n, 1)), y, SquaredHinge(), cost,
                                                quadratic=0.0), tol=tol, max_iter=max_iter)
        b = float(res.coef[0])
        z = np.full(n, b)
    while len(J) < n_basis:
        pool = np.flatnonzero(~chosen)
        cand = rng.choice(pool, size=min(int(n_candidates), pool.size), replace=False)
        Kc = np.asarray(kernel(X, X[cand]), dtype=float)  # (n, m)
        m, t = _best_candidate(Kc, cand, KJ, J, beta, y, z, cost)
        j = int(cand[m])
        J.append(j)
        chosen[j] = True
        KJ = np.c_[KJ, Kc[:, m]]
        design, R, w0 = _basis_problem(KJ, J, beta, t, b, fit_intercept)
        res = solve_finite_newton(LinearProblem(design, y, SquaredHinge(), cost, quadratic=R),
                                  w0=w0, tol=tol, max_iter=max_iter)
        beta = res.coef[: len(J)]
        b = float(res.coef[-1]) if fit_intercept else 0.0
        z = design @ res.coef
        results.append((res, time.perf_counter() - t0))
    return _greedy_result(beta, b, J, results, time.perf_counter() - t0)


def _check_greedy(C, n_basis, n_candidates, n):
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive float, got {C!r}")
    if int(n_basis) != n_basis or not 1 <= n_basis <= n:
        raise ValueError(f"n_basis must be an integer in [1, {n}], got {n_basis!r}")
    if int(n_candidates) != n_candidates or n_candidates < 1:
        raise ValueError(f"n_candidates must be a positive integer, got {n_candidates!r}")


def _basis_problem(KJ, J, beta, t, b, fit_intercept):
    """The kernel L2-SVM restricted to the basis ``J``: design :math:`K_{:,J}` (with a
    column of ones for the intercept), :math:`R = K_{JJ}` (zero row and column for the
    unpenalised intercept), and the warm start ``(β, t, b)``."""
    KJJ = KJ[J]
    KJJ = 0.5 * (KJJ + KJJ.T)
    if not fit_intercept:
        return KJ, KJJ, np.r_[beta, t]
    R = np.zeros((len(J) + 1, len(J) + 1))
    R[:-1, :-1] = KJJ
    return np.c_[KJ, np.ones(KJ.shape[0])], R, np.r_[beta, t, b]


def _greedy_result(beta, b, J, results, seconds):
    """The greedy run's result: the last solve's certificate, one record row per basis
    size."""
    res = results[-1][0]
    rec = ConvergenceRecord(np.array([r.objective for r, _ in results]),
                            np.array([r.certificate_value for r, _ in results]),
                            np.array([sec for _, sec in results]))
    return SolverResult(
        coef=beta, intercept=b, active_set=np.array(J, dtype=np.int64), n_iter=len(J),
        n_evals=sum(r.n_evals for r, _ in results), objective=res.objective,
        certificate_value=res.certificate_value, converged=res.converged,
        certificate=res.certificate, seconds=seconds, record=rec,
        stats={"gradient_scale": res.stats["gradient_scale"]})


def _best_candidate(Kc, cand, KJ, J, beta, y, z, cost):
    r"""The candidate ``m`` (a column of ``Kc``) whose coefficient ``t`` alone, the others
    fixed, gives the smallest objective :math:`\bar f_m = \min_t \varphi_m(t)`,
    :math:`\varphi_m(t) = t\,k_{Jm}^\top\beta + \tfrac12 t^2 k_{mm} + \sum_i c_i
    \max(0, a_i - t b_i)^2` (:func:`exact_line_search` in both directions)."""
    Kdiag = Kc[cand, np.arange(cand.size)]
    cross = KJ[cand].T if len(J) else np.zeros((cand.size, 0))
    a = 1.0 - y * z
    best = (np.inf, None, 0.0)
    for m in range(cand.size):
        bvec = y * Kc[:, m]
        lin = float(cross[:, m] @ beta) if len(J) else 0.0
        kjj = float(Kdiag[m])
        t_pos = exact_line_search(lin, kjj, a, bvec, cost)
        t_neg = exact_line_search(-lin, kjj, a, -bvec, cost)
        for t in (t_pos, -t_neg):
            r = np.maximum(0.0, a - t * bvec)
            val = t * lin + 0.5 * t * t * kjj + float(cost @ (r * r))
            if val < best[0]:
                best = (val, m, t)
    return best[1], best[2]
