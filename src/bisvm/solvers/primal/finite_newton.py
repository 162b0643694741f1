r"""Finite Newton method for the L2-SVM, with the exact line search on the piecewise
quadratic objective (Mangasarian 2002, "A finite Newton method for classification";
Keerthi & DeCoste 2005, "A modified finite Newton method for fast solution of large
scale linear SVMs"), and its kernel version with greedy basis selection (Keerthi,
Chapelle & DeCoste 2006, "Building support vector machines with reduced classifier
complexity").

Problem (:math:`R` positive (semi-)definite, :math:`\ell_i` convex, piecewise
quadratic and differentiable):

.. math::
    \min_w f(w) = \tfrac12 w^\top R\, w + \sum_i c_i \max(0,\ 1 - y_i x_i^\top w)^2 .

Iteration: with :math:`I = \{i : y_i x_i^\top w^k < 1\}` the quadratic pieces active at
:math:`w^k`, :math:`\bar w` minimises the quadratic :math:`\tfrac12 w^\top R w + \sum_{i\in
I} c_i (1 - y_i x_i^\top w)^2`, i.e. solves

.. math::
    (R + 2 X_I^\top C_I X_I)\,\bar w = 2 X_I^\top C_I\, y_I ,

(Cholesky; or, when ``d`` is large, truncated: preconditioned CG stopped by the
quadratic-model rule of :func:`~bisvm.solvers.primal.cg.truncated_newton_cg`); then
:math:`w^{k+1} = w^k + \delta^k (\bar w - w^k)` with the *exact* minimiser
:math:`\delta^k` of the one-dimensional piecewise quadratic (:func:`exact_line_search`: the
derivative is piecewise linear and increasing, its breakpoints are sorted once and its
root found in :math:`O(n \log n)`; the linear solvers use the one-pass search of
:meth:`~bisvm.solvers.primal.linear_design.LinearDesign.line_search`, which needs no
per-sample storage). With exact steps the method stops in finitely many iterations: once
the active set no longer changes, the full step lands on the optimum.

The data are read in place (:class:`~bisvm.solvers.primal.linear_design.LinearDesign`:
no copy of CSR float64 or C-ordered float64 ``X``, the intercept an implicit feature,
products over fixed row blocks, identical for every ``n_jobs``); the per-sample work
memory is two vectors of length ``n``.

``R = I`` and ``c_i = C`` give LIBLINEAR's primal L2-loss SVM; ``R = K_{JJ}`` (with a zero
row and column for an unpenalised intercept) and the design ``K_{:,J}`` give the kernel
L2-SVM in the primal β form (Chapelle 2007, "Training a support vector machine in the
primal") restricted to the basis ``J``.

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
from sklearn.utils import check_random_state

from ...losses import SquaredHinge
from ...penalties import L2
from ...progress import Progress, mode_for_verbose
from .._linalg import cholesky_solve
from .._record import IterationLog, check_tol_max_iter
from ..base import ConvergenceRecord, SolverResult, warn_cap
from ..problems import LinearProblem, split_intercept
from ._linear_kernels import SQUARED_HINGE
from .cg import truncated_newton_cg
from .linear_design import LinearDesign

FORCING = 0.5

__all__ = [
    "exact_line_search",
    "finite_newton_loop",
    "solve_finite_newton",
    "solve_finite_newton_problem",
    "greedy_kernel_finite_newton",
    "check_linear_problem",
    "piecewise_newton",
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


def check_linear_problem(problem, loss_type, *, linear_solver, tol, max_iter, n_jobs=None):
    """The checks of the finite Newton solvers: the loss, the linear solver, ``tol``,
    ``max_iter``, the labels and the costs. Returns ``(design, y, c, linear_solver)``:
    the :class:`~bisvm.solvers.primal.linear_design.LinearDesign` over the caller's ``X``
    (the intercept feature implicit), ``y`` and ``c`` as float64 vectors (no copy when
    they already are), and ``"auto"`` resolved: Cholesky up to ``d = 2000`` dense (5000
    sparse) when its Gram matrix is small beside the data, truncated Newton-CG otherwise."""
    if not isinstance(problem, LinearProblem) or not isinstance(problem.loss, loss_type):
        raise ValueError(f"expected a LinearProblem with the {loss_type.__name__} loss, got "
                         f"{type(problem).__name__}")
    if linear_solver not in ("auto", "cholesky", "cg"):
        raise ValueError(f"linear_solver must be 'auto', 'cholesky' or 'cg', got "
                         f"{linear_solver!r}")
    check_tol_max_iter(tol, max_iter)
    design = LinearDesign(problem.X, problem.bias, n_jobs=n_jobs)
    n = design.n
    y = np.ascontiguousarray(problem.y, dtype=np.float64)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")
    c = np.asarray(problem.cost, dtype=np.float64)
    c = np.ascontiguousarray(np.broadcast_to(c, (n,)) if c.ndim == 0 else c)
    if c.shape != (n,):
        raise ValueError(f"cost must be a scalar or have shape ({n},), got {c.shape}")
    if not (np.all(np.isfinite(c)) and np.all(c >= 0)):
        raise ValueError("cost must be finite and non-negative")
    if linear_solver == "auto":
        limit = 5000 if design.csr is not None else 2000
        linear_solver = "cholesky" if design.direct_ok(limit) else "cg"
    return design, y, c, linear_solver


def finite_newton_loop(value_grad, step, w, z, *, scale, tol, max_iter, start_tol=None,
                       name="finite Newton", warn=True, report=None):
    r"""The finite Newton iteration (Keerthi & DeCoste 2005) over a piecewise quadratic objective.

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
                        warn=True, n_jobs=None, verbose=0):
    r"""Minimise :math:`\tfrac12 w^\top R w + \sum_i c_i \max(0, 1 - y_i x_i^\top w)^2` by
    the finite Newton method with exact line search.

    Parameters
    ----------
    problem : LinearProblem
        With the :class:`~bisvm.losses.SquaredHinge` loss, labels in {-1, +1}, costs
        :math:`c_i \ge 0` and ``quadratic`` :math:`R` (a scalar :math:`rI`, a diagonal,
        a matrix; the identity by default). With ``bias > 0`` the intercept feature is
        implicit (LIBLINEAR's ``-B``, penalised by :math:`R`, whose size is then d + 1).
        CSR float64 with int32/int64 indices and C-ordered float64 ``X`` are used without
        a copy.
    w0 : ndarray, optional
        Warm start over the columns (the intercept feature's weight last; zeros by
        default).
    tol : float
        Stop when :math:`\|\nabla f(w)\|_2 \le` ``tol`` :math:`\cdot \max(1, \|\nabla
        f(w_0)\|_2)`, or at once when the active set is unchanged after a full exact step
        (finite termination).
    max_iter : int
    linear_solver : {"auto", "cholesky", "cg"}
        "cholesky" solves each Newton system exactly (the Gram matrix of the active rows,
        formed from row chunks); "cg" is truncated Newton: preconditioned CG to the
        relative residual :math:`\min(0.1, \sqrt{\|\nabla f\|/\|\nabla f(w_0)\|})`, the
        exact line search keeping every step a descent step. "auto" uses Cholesky up to
        ``d = 2000`` dense (5000 sparse) when its Gram matrix is small beside the data, CG
        otherwise.
    warn : bool
        :class:`~sklearn.exceptions.ConvergenceWarning` on the cap.
    n_jobs : int or None
        Threads for the products with ``X`` (row blocks); the iterates are identical for
        every value.
    verbose : int
        Progress (objective, gradient norm, step) on stderr per Newton iteration.

    Returns
    -------
    SolverResult
        ``coef`` the weights of the features, ``intercept`` ``bias`` times the weight of
        the intercept feature, ``active_set`` the samples with :math:`y_i x_i^\top w < 1`
        at the solution; certificate ``"relative_gradient_norm"``.
    """
    design, y, c, linear_solver = check_linear_problem(
        problem, SquaredHinge, linear_solver=linear_solver, tol=tol, max_iter=max_iter,
        n_jobs=n_jobs)
    res, z = piecewise_newton(design, y, c, SQUARED_HINGE, 0.0, problem.quadratic, w0,
                              tol=tol, max_iter=max_iter, linear_solver=linear_solver,
                              scale=lambda gn: max(1.0, gn), name="finite Newton",
                              warn=warn, verbose=verbose)
    return with_intercept(res, design.bias,
                          active_set=design.active_rows(y, z, SQUARED_HINGE))


def piecewise_newton(design, y, c, loss, eps, quadratic, w0, *, tol, max_iter, linear_solver,
                     scale, start_tol=None, name="finite Newton", warn=True, verbose=0,
                     report=None):
    r"""The finite Newton iteration of :func:`finite_newton_loop` on
    :math:`\tfrac12 w^\top R w + \sum_i c_i \ell_i(\tilde x_i^\top w)` for a
    piecewise-quadratic loss (``loss`` a code of
    :mod:`~bisvm.solvers.primal._linear_kernels`, ``eps`` its tube half-width) over a
    :class:`~bisvm.solvers.primal.linear_design.LinearDesign`.

    The Newton system :math:`(R + \sum_{i \in I}\ell_i''\tilde x_i\tilde x_i^\top)s =
    -\nabla f` is solved by Cholesky, or by conjugate gradients preconditioned with
    :math:`0.01\,\mathrm{diag}(H) + 0.99\,I` (Hsia, Chiang & Lin 2018, "Preconditioned
    conjugate gradient methods in truncated Newton frameworks for large-scale linear
    classification") to the forcing tolerance :math:`\eta = \min(0.1, \sqrt{\|\nabla
    f\|/\|\nabla f(w_0)\|})` (Eisenstat & Walker 1996: superlinear once
    :math:`\eta \to 0`). The margins :math:`z` and the direction's margins :math:`q` are
    the only per-sample vectors. ``report(k, f, gradient_norm, delta)``, when given,
    replaces the progress display of ``verbose``. Returns ``(result, z)``.
    """
    d1 = design.d1
    Rv, Rdense = _as_operator(quadratic, d1)
    Rdiag = _diagonal(quadratic, d1)
    w = np.zeros(d1) if w0 is None else np.array(w0, dtype=float, copy=True)
    if w.shape != (d1,):
        raise ValueError(f"w0 must have shape ({d1},), got {w.shape}")
    exact_steps = linear_solver == "cholesky"
    st = {"diag": None, "g0": None}
    with design.threads():
        z = design.margins(w)
        q = np.empty(design.n)

        def value_grad(w, z):
            fl, g, diag = design.loss_grad(y, c, z, loss, eps, want_diag=not exact_steps)
            Rw = Rv(w)
            st["diag"] = diag
            return 0.5 * float(w @ Rw) + fl, Rw + g

        def step(w, z, g):
            gn = float(np.linalg.norm(g))
            if st["g0"] is None:
                st["g0"] = gn
            if exact_steps:
                s = cholesky_solve(Rdense() + design.gram(y, c, z, loss, eps), -g)
            else:
                M = 0.01 * (Rdiag + st["diag"]) + 0.99
                eta = min(FORCING, float(np.sqrt(gn / st["g0"]))) if st["g0"] > 0 else FORCING
                hessian = design.curvature_list(y, c, z, loss, eps)
                s = truncated_newton_cg(lambda v: Rv(v) + design.hess_vec_rows(hessian, v),
                                        lambda r: r / M, g, forcing=eta)[0]
                del hessian
            design.margins(s, out=q)
            Rs = Rv(s)
            delta = design.line_search(y, c, z, q, loss, eps, float(w @ Rs), float(s @ Rs))
            changed = design.step_margins(y, c, z, q, loss, eps, delta)
            return w + delta * s, z, delta, exact_steps and delta == 1.0 and changed == 0

        progress = Progress(name, mode=mode_for_verbose(verbose and report is None),
                            unit="it", lazy=True)
        with progress:
            def show(k, f, gn, delta):
                progress(1, objective=f"{f:.10g}", grad=f"{gn:.3e}", step=f"{delta:.3g}")
            if report is None and verbose:
                report = show
            return finite_newton_loop(value_grad, step, w, z, scale=scale, tol=tol,
                                      max_iter=max_iter, start_tol=start_tol, name=name,
                                      warn=warn, report=report)


def _diagonal(R, d):
    """The diagonal of ``R`` (a scalar, a diagonal or a matrix; the identity if None)."""
    if R is None:
        return np.ones(d)
    R = np.asarray(R, dtype=float)
    if R.ndim == 0:
        return np.full(d, float(R))
    return R.copy() if R.ndim == 1 else np.diag(R).copy()


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
    r"""Sparse kernel L2-SVM by greedy basis selection (Keerthi, Chapelle & DeCoste 2006).

    Minimises, over a growing basis :math:`J \subset \{1..n\}`,

    .. math::
        L(\beta, b) = \tfrac12 \beta^\top K_{JJ}\beta
        + C\sum_i \max(0,\ 1 - y_i (K_{iJ}\beta + b))^2 ,

    the primal β form of Chapelle (2007) with :math:`\beta` restricted to ``J`` (the
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
