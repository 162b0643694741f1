r"""SMO / decomposition solver for the generic SVM dual (Platt 1998; Chang & Lin 2011).

The problem solved is

.. math::
    \min_{\alpha\in\mathbb R^l}\ \tfrac12\,\alpha^\top Q\,\alpha + p^\top\alpha
    \quad\text{s.t.}\quad y^\top\alpha = \Delta,\qquad 0 \le \alpha_t \le C_t,

with :math:`Q_{tu} = y_t y_u\,k(x_{s_t}, x_{s_u}) + \delta_{tu}\,\mathrm{shift}_t`,
:math:`y_t = \pm1` and :math:`C_t \in (0, \infty]`. The formulations are thin builders of
``(sample_index, y, p, C, shift)``:

* C-SVC (hinge loss): :math:`p = -e`, :math:`C_t = C\,w_t` (class and sample weights);
* L2-SVM (squared hinge :math:`\tfrac12\xi^2`; Keerthi & DeCoste 2005): :math:`p = -e`,
  :math:`C_t = \infty`, :math:`\mathrm{shift}_t = 1/(C w_t)`;
* hard margin: :math:`C_t = \infty`;
* ε-SVR: :math:`2n` variables on :math:`n` samples, :math:`y = (e, -e)`,
  :math:`p = (\varepsilon e - z, \varepsilon e + z)`, coefficients
  :math:`\beta_s = \alpha_s - \alpha_{s+n}`;
* ν-SVC, ν-SVR and the one-class SVM (:mod:`bisvm.solvers.dual.nu_smo`), which add the
  constraint :math:`e^\top\alpha =` const and a feasible start.

``X`` may be a dense array or a scipy sparse matrix (kept in CSR form, never densified:
kernel values are computed on the sparse rows, :mod:`bisvm.solvers.dual._smo_columns`).

Algorithm (run entirely in :mod:`bisvm.solvers.dual._smo_kernels`): start from a feasible α
(zero by default) with :math:`G = Q\alpha + p`; at each iteration choose
:math:`i \in \arg\max_{I_{up}} -y_tG_t` and :math:`j` either by the maximal violating
pair (Keerthi et al. 2001) or by the second-order rule (Fan, Chen & Lin 2005); take the
analytic step along :math:`(y_i, -y_j)` clipped to the box (Platt 1998); update :math:`G`
with two kernel columns over the active set; stop when :math:`m(\alpha) - M(\alpha) \le` ``tol``.
Shrinking drops bounded variables that cannot enter a violating pair; their gradients
are rebuilt by blocked (BLAS) kernel products over the support vectors before stopping.
(``method="auto"`` hands large dense RBF problems to the working-set solver of
:mod:`bisvm.solvers.dual.working_set` instead: many variables per step, no shrinking;
and, when every column fits in the cache, takes the solve back from it once it has
run many outer iterations.)
Kernel columns are computed on demand over the active samples only and kept, compacted as
the active set shrinks, in an LRU cache of ``cache_size`` MB (float64 when all full
columns fit, float32 otherwise). They are computed in blocks
(:mod:`bisvm.solvers.dual._smo_blocks`: a vectorised product over the transposed active rows
and a vectorised kernel transform, on a miss with dense data together with up to three
columns of the likeliest next working-set members, into free cache slots only), with the
same values for dense and sparse ``X``; ``n_jobs`` threads split the columns, the gradient
update, the selection scan and the reconstruction (:mod:`bisvm.solvers.dual._smo_threads`)
without changing a single iterate. ``stats["profile"]`` of the result says where the time went.

With ``problem.nu`` the pair is chosen within one sign class (LIBSVM's ``Solver_NU``, see
:mod:`bisvm.solvers.dual._smo_kernels`) and the bias comes from the two per-class averages.

The bias is :math:`\rho = ` mean of :math:`y_tG_t` over free variables, or the midpoint of
the feasible interval when none is free (LIBSVM), and the decision function of C-SVC is
:math:`f(x) = \sum_t \alpha_t y_t k(x, x_{s_t}) - \rho`.
"""

from __future__ import annotations

import time
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp

from ...kernels import KERNEL_CODES
from ...losses import Hinge, SquaredHinge
from ..base import warn_cap
from ..problems import DualProblem
from ._dual_result import dual_result
from ._smo_blocks import kernel_diag, sq_norms_csr, sq_norms_dense
from ._smo_kernels import smo_solve
from ._smo_threads import readonly, resolve_n_jobs, threaded_smo_solve
from .working_set import (
    solve_working_set,
    start_alpha,
    working_set_size,
    working_set_suits,
)

__all__ = [
    "DualProblem",
    "solve_smo",
    "csvc_dual",
    "epsilon_svr_dual",
    "dense_hessian",
    "kernel_data",
    "resolve_n_jobs",
]


_SVC_LOSSES = {"hinge": Hinge(), "squared_hinge": SquaredHinge()}


def csvc_dual(X, y, kernel, C=1.0, *, weights=None, loss="hinge"):
    r"""Build the C-SVC dual (hinge) or the L2-SVM dual (squared hinge).

    Parameters
    ----------
    X : ndarray, shape (n, d) or (n, n) for a precomputed kernel
    y : ndarray, shape (n,)
        Labels in {-1, +1}.
    kernel : Kernel
    C : float > 0 or inf
        ``inf`` gives the hard-margin SVM (hinge loss only).
    weights : ndarray, shape (n,), optional
        Per-sample multipliers of ``C`` (class weight × sample weight).
    loss : Hinge, SquaredHinge, "hinge" or "squared_hinge"
        A loss of :mod:`bisvm.losses` (or its name); the box and the diagonal shift come
        from its ``dual_box``. Hinge: :math:`0 \le \alpha_i \le C w_i`. Squared hinge with
        the loss :math:`\tfrac12\max(0, 1 - y f)^2` (the L2-SVM's, i.e. the squared
        hinge of cost :math:`C w_i / 2`): :math:`\alpha_i \ge 0` and
        :math:`Q + \mathrm{diag}(1/(C w_i))`.
    """
    n = y.shape[0]
    c = np.full(n, float(C)) if weights is None else float(C) * np.asarray(weights, float)
    y = np.where(np.asarray(y) > 0, 1.0, -1.0)
    loss = _SVC_LOSSES.get(loss, loss) if isinstance(loss, str) else loss
    if isinstance(loss, Hinge):
        shift, upper = loss.dual_box(c)
    elif isinstance(loss, SquaredHinge):
        if not np.all(np.isfinite(c)):
            raise ValueError("C must be finite for loss='squared_hinge'")
        shift, upper = loss.dual_box(0.5 * c)  # the loss carries the ½: cost C w / 2
    else:
        raise ValueError(f"loss must be 'hinge' or 'squared_hinge', got {loss!r}")
    return DualProblem(X, kernel, np.arange(n), y, -np.ones(n), upper, shift)


def epsilon_svr_dual(X, z, kernel, C=1.0, epsilon=0.1, *, weights=None):
    r"""Build the ε-SVR dual on :math:`2n` variables (LIBSVM's signs).

    :math:`\alpha_{1..n}` carry :math:`y = +1`, :math:`p = \varepsilon - z`;
    :math:`\alpha_{n+1..2n}` carry :math:`y = -1`, :math:`p = \varepsilon + z`; the
    regressor is :math:`f(x) = \sum_s (\alpha_s - \alpha_{s+n})k(x, x_s) - \rho`.
    In the notation of Smola & Schölkopf 2004, "A tutorial on support vector
    regression", :math:`\alpha_{1..n}` are their :math:`\alpha_i` and
    :math:`\alpha_{n+1..2n}` their :math:`\alpha_i^*`.
    """
    z = np.asarray(z, dtype=float)
    n = z.shape[0]
    c = np.full(n, float(C)) if weights is None else float(C) * np.asarray(weights, float)
    idx = np.arange(n)
    return DualProblem(
        X,
        kernel,
        np.concatenate([idx, idx]),
        np.concatenate([np.ones(n), -np.ones(n)]),
        np.concatenate([epsilon - z, epsilon + z]),
        np.concatenate([c, c]),
        np.zeros(2 * n),
    )


def dense_hessian(problem):
    """The full ``(l, l)`` matrix ``Q`` of a problem (small problems and tests only)."""
    s = problem.sample_index
    K = problem.kernel(problem.X)[np.ix_(s, s)]
    Q = problem.y[:, None] * problem.y[None, :] * K
    Q[np.diag_indices_from(Q)] += problem.shift
    return Q


#: phases of the result's ``stats["profile"]``, in the order of the solver's cycle counters
PROFILE_PHASES = ("columns", "selection", "update", "shrinking", "reconstruction")

_BLAS_CONTROLLER = None

#: outer iterations of the working-set solver after which ``method="auto"`` hands the solve
#: on to SMO when every kernel column fits in SMO's cache (on the tuning grids of
#: benchmarks/bench_kernel_grid.py the solves that lose to SMO run several times more outer
#: iterations than those that win)
HANDOFF_OUTER = 48


def _profile(prof, seconds):
    """Seconds per phase from the cycle counters ``prof`` (one per phase, then the whole
    solve), scaled so that the whole solve takes its measured wall time ``seconds``.
    Selection and update are timed on a sample of the iterations and extrapolated
    (:func:`~bisvm.solvers.dual._smo_kernels.smo_solve`), so they are capped at what the
    other phases leave of the whole; time the thread spends descheduled on a busy machine
    then falls mostly into ``other``."""
    n_phases = len(PROFILE_PHASES)
    total = int(prof[n_phases])
    per_cycle = seconds / total if total > 0 else 0.0
    out = {name: max(0.0, float(prof[k]) * per_cycle) for k, name in enumerate(PROFILE_PHASES)}
    sampled = out["selection"] + out["update"]
    room = max(0.0, seconds - sum(out.values()) + sampled)
    if sampled > room:
        out["selection"] *= room / sampled
        out["update"] *= room / sampled
    out["other"] = max(0.0, seconds - sum(out.values()))
    out["total"] = float(seconds)
    return MappingProxyType(out)


def _single_thread_blas():
    """Limit BLAS to one thread for a solve: the blocked products of the gradient
    reconstruction are small, a multi-threaded BLAS burns CPU spinning its idle threads on
    a busy machine, and the rest of SMO (like LIBSVM) is sequential anyway."""
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        import scipy.linalg.cython_blas  # noqa: F401  (the BLAS that numba's np.dot calls)
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER = ThreadpoolController()
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")


def _diag(kernel, X, sqn):
    """The kernel diagonal: from the sequential norms ``sqn`` for the inner-product
    kernels (identical for dense and sparse data, and to the columns' own entries)."""
    if kernel.code in (KERNEL_CODES["precomputed"], KERNEL_CODES["laplacian"]):
        return np.ascontiguousarray(kernel.diag(X), dtype=np.float64)
    return kernel_diag(sqn, int(kernel.code), float(kernel.gamma), float(kernel.coef0),
                       float(kernel.degree))


def kernel_data(X, kernel, n_threads=1):
    """The kernel-data tuple of :mod:`bisvm.solvers.dual._smo_columns` and the kernel diagonal.

    Parameters
    ----------
    X : ndarray of shape (n, d), scipy sparse matrix, or (n, n) Gram matrix
        Sparse input (any scipy format) is converted to canonical CSR (sorted, no
        duplicate or explicit zero entries) without densifying; a precomputed or callable
        kernel is evaluated to its dense Gram matrix.
    kernel : Kernel
    n_threads : int
        Threads for the kernel columns and the per-iteration loops.

    Returns
    -------
    kd : tuple
        ``(X, sqn, data, indices, indptr, work, kcode, gamma, coef0, degree, sx, XT, sqa,
        act, n_threads)`` (see :mod:`bisvm.solvers.dual._smo_columns`); ``X`` is a
        read-only view (:func:`~bisvm.solvers.dual._smo_threads.readonly`), so that the
        compiled solver has one variant for writable and read-only inputs.
    kdiag : ndarray of shape (n,)
    """
    code = kernel.code
    empty_f = np.zeros(0)
    empty_i = np.zeros(0, dtype=np.int64)
    blocked = code not in (KERNEL_CODES["precomputed"], KERNEL_CODES["laplacian"])
    XT = np.empty((0, 0))
    if code == KERNEL_CODES["precomputed"]:
        G = kernel(X) if kernel.function is not None else X
        if sp.issparse(G):
            G = G.toarray()
        Xd = np.ascontiguousarray(G, dtype=np.float64)
        sqn = np.zeros(Xd.shape[0])
        # a copy: the diagonal view is read-only, and with one sample contiguous, so
        # ascontiguousarray would hand the solver a read-only type of its own
        kdiag = np.diag(Xd).copy()
        data, indices, indptr, work = empty_f, empty_i, empty_i, empty_f
    elif sp.issparse(X):
        Xs = sp.csr_matrix(X, dtype=np.float64, copy=True)
        Xs.sum_duplicates()
        Xs.eliminate_zeros()
        n, d = Xs.shape
        data = np.ascontiguousarray(Xs.data, dtype=np.float64)
        indices = Xs.indices.astype(np.int64)
        indptr = Xs.indptr.astype(np.int64)
        sqn = np.empty(n)
        sq_norms_csr(data, indptr, sqn)
        kdiag = _diag(kernel, Xs, sqn)
        Xd = np.empty((n, 0))
        work = np.zeros(d)
        Xt = Xs.tocsc()
        Xt.sort_indices()
        sx = (np.ascontiguousarray(Xt.data, dtype=np.float64), Xt.indices.astype(np.int64),
              Xt.indptr.astype(np.int64), empty_f, np.zeros(n), np.zeros(n, dtype=np.bool_),
              np.zeros(n, dtype=np.int64))
    else:
        Xd = readonly(np.ascontiguousarray(X, dtype=np.float64))
        sqn = np.empty(Xd.shape[0])
        sq_norms_dense(Xd, sqn)
        kdiag = _diag(kernel, Xd, sqn)
        data, indices, indptr, work = empty_f, empty_i, empty_i, empty_f
        if blocked:
            # a copy even when X.T is contiguous (one feature): the solver compacts it
            XT = np.array(Xd.T, order="C", copy=True)
    if not sp.issparse(X) or code == KERNEL_CODES["precomputed"]:
        sx = (empty_f, empty_i, empty_i, empty_f, empty_f, np.zeros(0, dtype=np.bool_),
              empty_i)
    n = sqn.shape[0]
    kd = (readonly(Xd), sqn, data, indices, indptr, work, int(code), float(kernel.gamma),
          float(kernel.coef0), float(kernel.degree), sx, XT, sqn.copy(), np.arange(n),
          int(n_threads))
    return kd, kdiag


def _column_pool(n, cache_size):
    """The flat column pool of ``cache_size`` MB (float64 when every full column fits,
    float32, LIBSVM's ``Qfloat``, otherwise)."""
    budget = float(cache_size) * 2**20
    dtype = np.float64 if n * n * 8 <= budget else np.float32
    # no more than the n columns of n entries the cache can ever hold
    size = int(max(2 * n, min(n * n, budget // np.dtype(dtype).itemsize)))
    # np.empty maps pages lazily: memory is only committed as columns are filled
    return np.empty(size, dtype=dtype)


def solve_smo(
    problem,
    *,
    alpha0=None,
    tol=1e-3,
    selection="second_order",
    shrinking=True,
    cache_size=200.0,
    max_iter=-1,
    n_jobs=None,
    method="auto",
    progress=None,
):
    r"""Solve a :class:`DualProblem` by SMO (or by working sets of many variables).

    Parameters
    ----------
    problem : DualProblem
    alpha0 : ndarray, shape (l,), optional
        Feasible warm start (``0 <= alpha0 <= upper``; its ``y @ alpha0`` fixes Δ, and
        for ν problems its sum fixes :math:`e^\top\alpha`). ``problem.alpha_start``, or
        zero (Δ = 0), by default.
    tol : float > 0
        Stop when :math:`m(\alpha) - M(\alpha) \le` ``tol``.
    selection : {"second_order", "max_violating_pair"}
    shrinking : bool
    cache_size : float
        Kernel cache size in MB.
    max_iter : int
        Iteration cap; ``-1`` is LIBSVM's safeguard, max(10⁷, 100·l) (svm.cpp,
        ``Solver::Solve``), which a well-posed problem never reaches but which ends
        runs whose stopping tolerance is out of reach in floating point (features near
        1e150 with a linear kernel). Stopping on it warns with ``ConvergenceWarning``.
    n_jobs : int or None
        Threads for the kernel columns, the gradient update, the selection scan and the
        gradient reconstruction (``None``: 1, ``-1``: every core; see
        :func:`bisvm.solvers.dual._smo_threads.resolve_n_jobs`). The iterates do not depend
        on it.
    method : {"auto", "smo", "working_set"}
        ``"smo"``: this module's SMO (LIBSVM's iterates); ``"working_set"``:
        :func:`~bisvm.solvers.dual.working_set.solve_working_set` (working sets of many
        variables, kernel rows by BLAS, no shrinking; ``selection`` and ``shrinking`` do
        not apply; its ``stats["profile"]`` has its own phases); ``"auto"``: the
        working-set solver where it is faster
        (:func:`~bisvm.solvers.dual.working_set.working_set_suits`: dense data, RBF
        kernel, many samples), SMO otherwise. When every kernel column fits in SMO's
        cache (:math:`8n^2` bytes within ``cache_size``) and the working-set solve has
        not converged after :data:`HANDOFF_OUTER` outer iterations, SMO goes on from
        its α: so many outer iterations mark a solve bound by its steps, not by kernel
        rows (a large C with a wide kernel), where the working sets take about twice
        LIBSVM's steps and SMO's steps on cached columns cost less. ``n_iter`` then
        counts the steps of both.
    progress : callable, optional
        For the working-set solver's outer iterations (SMO reports nothing).

    Returns
    -------
    SolverResult
        ``dual_coef`` = α; ``intercept`` = :math:`-\rho` (decision values are
        :math:`\sum_t \alpha_t y_t k(x, x_{s_t}) - \rho`); ``coef`` the same expansion
        over the training samples, :math:`\sum_{t: s_t = s} y_t\alpha_t` (before the
        ν-SVC scaling of :func:`~bisvm.solvers.dual.nu_smo.nu_svc_scaling`);
        ``objective`` the dual :math:`\tfrac12\alpha^\top Q\alpha + p^\top\alpha`;
        certificate ``"max_violating_pair"``: the final :math:`m(\alpha) - M(\alpha)`;
        ``active_set`` the indices with :math:`\alpha_t > 0`; ``record`` one entry (the
        final objective, certificate and seconds). ``stats``: ``dual_gradient``
        (:math:`Q\alpha + p`), ``n_kernel_columns`` (kernel columns computed, i.e. cache
        misses), ``mean_active_size`` (mean number of unshrunk variables per iteration),
        ``nu_multiplier`` (ν problems: the multiplier of :math:`e^\top\alpha =` const,
        LIBSVM's ``si->r``: ν-SVC divides α and ρ by it, ν-SVR's tube half-width is
        :math:`-r`; 0 otherwise) and ``profile`` (seconds per phase of the solve:
        ``columns``, ``selection``, ``update``, ``shrinking``, ``reconstruction``,
        ``other`` and ``total``, from the CPU's cycle counter scaled to the wall time).
    """
    _check_smo_args(selection, tol, cache_size)
    start, ws_iter = time.perf_counter(), 0
    if _use_working_set(problem, method):
        handoff = method == "auto" and _columns_fit(problem, cache_size)
        ws = solve_working_set(
            problem, alpha0=alpha0, tol=tol, max_iter=max_iter, n_jobs=n_jobs,
            ws_size=working_set_size(problem, cache_size), progress=progress,
            max_outer=HANDOFF_OUTER if handoff else None)
        if not handoff or ws.converged or ws.stats["n_outer"] < HANDOFF_OUTER:
            return ws
        # many outer iterations: SMO, whose cache holds every column, goes on from here
        alpha0, ws_iter = ws.dual_coef, ws.n_iter
        if max_iter >= 0:
            max_iter = max(0, max_iter - ws_iter)
    l = problem.n_variables
    upper = np.ascontiguousarray(problem.upper, dtype=np.float64)
    alpha = start_alpha(problem, alpha0, upper)
    n_threads = resolve_n_jobs(n_jobs)
    cap = int(max_iter) if max_iter >= 0 else max(10_000_000, 100 * l)
    kd, kdiag = kernel_data(problem.X, problem.kernel, n_threads)
    pool = _column_pool(kdiag.shape[0], cache_size)
    G = np.empty(l)
    stats = np.zeros(7)
    prof = np.zeros(len(PROFILE_PHASES) + 2, dtype=np.int64)
    with _single_thread_blas():
        threaded_smo_solve(smo_solve, (
            kd,
            kdiag,
            np.ascontiguousarray(problem.sample_index, dtype=np.int64),
            np.ascontiguousarray(problem.y, dtype=np.float64),
            np.ascontiguousarray(problem.p, dtype=np.float64),
            upper,
            np.ascontiguousarray(problem.shift, dtype=np.float64),
            alpha,
            G,
            pool,
            float(tol),
            selection == "second_order",
            bool(shrinking),
            bool(problem.nu),
            cap,
            stats,
            prof,
        ), n_threads)
    stats[0] += ws_iter
    return _result(problem, alpha, G, stats, prof, start, kdiag.shape[0], cap, tol)


def _check_smo_args(selection, tol, cache_size):
    """Raise ``ValueError`` naming the argument of :func:`solve_smo` that is invalid."""
    if selection not in ("second_order", "max_violating_pair"):
        raise ValueError(f"selection must be 'second_order' or 'max_violating_pair', got "
                         f"{selection!r}")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    if not cache_size > 0:
        raise ValueError(f"cache_size must be > 0, got {cache_size!r}")


def _columns_fit(problem, cache_size):
    """Whether SMO's cache of ``cache_size`` MB holds every kernel column in float64."""
    n = problem.X.shape[0]
    return n * n * 8 <= float(cache_size) * 2**20


def _use_working_set(problem, method):
    """Whether ``method`` (checked here) sends ``problem`` to the working-set solver."""
    if method not in ("auto", "smo", "working_set"):
        raise ValueError(f"method must be 'auto', 'smo' or 'working_set', got {method!r}")
    return method == "working_set" or (method == "auto" and working_set_suits(problem))


def _result(problem, alpha, G, stats, prof, start, n_samples, cap, tol):
    """The :class:`SolverResult` of :func:`solve_smo` from the compiled loop's outputs."""
    seconds = time.perf_counter() - start
    profile = _profile(prof, seconds)
    n_iter, converged, gap, rho, ncols, mean_active, r = stats
    if not converged:
        warn_cap("SMO", cap, float(gap), float(tol))
    return dual_result(
        problem, alpha, G, rho=rho, gap=gap, n_iter=n_iter, converged=converged,
        seconds=seconds, n_samples=n_samples,
        stats={"dual_gradient": G, "n_kernel_columns": int(ncols),
               "mean_active_size": float(mean_active), "nu_multiplier": float(r),
               "profile": profile})
