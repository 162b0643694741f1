r"""Dual Newton active-set solver for selective-ridge linear and logistic regression
(Algorithm A of Angulo Yauri 2020, "A method of differential cross-validation for
choosing the complexity level of generalized linear dependence models").

The primal problem :math:`J(a, b)`, its exact dual :math:`W(\lambda)` and the primal–dual
map are stated in :mod:`bisvm.solvers.selective.problem`.

**What this module adds to Algorithm A, and why.** :math:`W` is not differentiable where
:math:`|s_i| = \mu` and its minimiser generically sits on such *kinks*: they are exactly
the features whose primal coefficient lies in :math:`0 < |a_i| \le \mu` (the linear part
of :math:`\mathrm{pen}_\mu`; e.g. :math:`n = N = 1` gives
:math:`a = (xy - \gamma\mu)/x^2`). The strict active set :math:`\{|s_i| > \mu\}` of the
thesis cannot represent them, so the iteration as printed there alternates between
sets without converging. We keep a third set ``K`` of kink features,
pinned by the equality constraints :math:`x_i^\top\lambda = \mu\sigma_i` whose Lagrange
multipliers *are* their primal coefficients; the intercept is one more such constraint
(:math:`\mathbf 1^\top\lambda = 0`, multiplier ``b``). The sets are guessed by a
primal–dual active-set (semismooth Newton) rule: after every full Newton step the sets
the candidate asks for are adopted at once (a kink feature whose multiplier left
:math:`\sigma_i[0, \mu]` is released, a ridge feature whose :math:`|s_i|` fell below μ
or a zero feature whose :math:`|s_i|` rose above it is pinned), so that near the solution
each set change costs one Newton step; after a bounded number of such switches the faces
are solved exactly before switching. The exact :math:`W` at successive face solutions is
*not* monotone (a degenerate feature sitting at :math:`|s_i| = \mu` with multiplier 0 or
μ can raise it slightly), so only a revisited face counts as cycling; then a safe mode
takes exact line searches on :math:`W` and pins a feature when the search stops on its
kink. Everything else is Algorithm A:

1. ``F = {i ∉ K : |s_i| > μ}``; Newton model of :math:`W` on the face, curvature
   :math:`V_F + \gamma \tilde G^{-1}` (with :math:`\tilde g_t =
   r_t q''_t/2 + \varepsilon`, working response
   :math:`\tilde y_t = z_t - r_t q'_t / (2\tilde g_t)`, which reduces to the thesis's
   :math:`z - q'/q''` at :math:`\varepsilon = 0` but, unlike it, keeps the fixed point
   exact when the curvature floor ε is active).
   The :math:`N\times N` system, or its Woodbury form through an
   :math:`n_F\times n_F` Cholesky factor when :math:`n_F < N`.
2. Step length: ``line_search="exact"`` minimises the exact :math:`W` along the segment
   (piecewise smooth and convex; breakpoints where a feature crosses its kink),
   ``"golden"`` is the thesis's rule (full step if :math:`W` does not
   increase, else golden section on :math:`(0, 1)`, with the corrected combination
   :math:`(1-\tau)\lambda^k + \tau\tilde\lambda`) and no kink set -- kept to reproduce
   the thesis, it may cycle (reported by a ``ConvergenceWarning``).
3. Stop: sets unchanged and a full step, plus
   :math:`\|\lambda^{k+1}-\lambda^k\|_\infty \le` ``tol`` for the logistic loss; the
   duality gap :math:`J/(2\gamma) + W` is reported as an independent certificate.

The curvature is that of :math:`\varphi` at :math:`\lambda^k` (the quadratic Taylor model
of :math:`W` itself): :math:`z_t` in :math:`\tilde g, \tilde y` is the
conjugate point :math:`z_t(\lambda_t) = -\varphi'_t(\lambda_t)`, which coincides with the
thesis's :math:`V_I\lambda^k` at the solution and makes every candidate a descent direction.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..base import ActivePartition, ConvergenceRecord, ConvergenceWarning, SolverResult
from .fallback import primal_fallback
from .linalg import face_candidate
from .linesearch import (
    exact_line_search,
    face_line_search,
    feasible_start,
    golden_section,
    max_step,
)
from .problem import empty_dual, equal_split_duplicates

__all__ = ["solve_dual_newton"]


def _gap_tol(W):
    """The solver's acceptance rule for the duality gap, :math:`10^{-9}\\max(1, |W|)`."""
    return 1e-9 * max(1.0, abs(W))


class _FaceState:
    r"""The iterate of Algorithm A and its guessed face, shared by the step functions.

    ``lam`` (λ), ``s`` (:math:`X^\top\lambda`), ``W`` (:math:`W(\lambda)`); the guessed
    sets of the next candidate: ``free`` (F, ridge), ``kink`` (K) with signs ``sigma``;
    ``theta`` the multipliers of the last candidate (kink coefficients, then the
    intercept); ``safe`` (exact line searches, sets from the current point, no guesses);
    ``seen`` the faces solved so far (a revisit is a cycle), ``best`` = (W, λ, s) at the
    lowest solved face (where the safe mode restarts), ``newton`` the factor of the final
    face; ``objs``/``steps``/``secs`` the record (:math:`W` and the relative step
    per iteration), ``trace`` one tuple per candidate.
    """

    def __init__(self, problem, lam, safe, t0):
        self.problem, self.t0 = problem, t0
        self.lam = lam
        self.s = problem.X.T @ lam
        self.W = problem.dual_value(lam)
        # the start point has no step: nan in the record's step column
        self.objs, self.steps, self.secs = [self.W], [np.nan], [0.0]
        n = problem.X.shape[1]
        self.free = np.abs(self.s) > problem.selectivity
        self.kink = np.zeros(n, bool)
        self.sigma = np.zeros(n)
        self.theta = np.zeros(0)
        self.safe = safe
        self.converged = self.cycled = False
        self.seen, self.trace = {}, []
        self.best = None
        self.n_inexact, self.max_inexact = 0, 30
        self.newton = None
        self.k = 0

    def pinned_kinks(self):
        """Kink features whose :math:`|s_i|` still sits at μ."""
        mu = self.problem.selectivity
        return self.kink & (np.abs(np.abs(self.s) - mu) <= 1e-9 * max(mu, 1e-300))

    def restart_safe(self):
        """Back to the lowest solved face (if lower), kinks pinned there, safe mode."""
        if self.best is not None and self.best[0] < self.W:
            self.W, self.lam, self.s = self.best
        self.kink[:] = self.pinned_kinks()
        self.free = (np.abs(self.s) > self.problem.selectivity) & ~self.kink
        self.safe = True

    def keep_best(self):
        if self.best is None or self.W <= self.best[0]:
            self.best = (self.W, self.lam, self.s)


def _start(problem, alpha0, partition0, line_search, t0):
    """The state at :math:`\\lambda^0` (the empty-model dual by default) and its sets."""
    N, n = problem.X.shape
    if alpha0 is None:
        lam = empty_dual(problem.X, problem.y, problem.loss, problem.ridge, problem.r,
                         problem.fit_intercept)[0]
    else:
        alpha0 = np.asarray(alpha0, float)
        if alpha0.shape != (N,):
            raise ValueError(f"alpha0 must have shape ({N},), got {alpha0.shape}")
        lam = feasible_start(problem, alpha0)
    # the thesis's iteration never guesses sets
    st = _FaceState(problem, lam, line_search == "golden", t0)
    if partition0 is not None and line_search == "exact":
        if not isinstance(partition0, ActivePartition):
            raise TypeError("partition0 must be an ActivePartition (a result's partition), "
                            f"got {type(partition0).__name__}")
        free = np.array(partition0.free, bool, copy=True)
        kink = np.array(partition0.kink, bool, copy=True)
        sigma = np.array(partition0.kink_sign, float, copy=True)
        if free.shape != (n,) or kink.shape != (n,) or sigma.shape != (n,):
            raise ValueError(f"partition0 must hold three arrays of shape ({n},)")
        free &= ~kink
        st.free, st.kink, st.sigma = free, kink, sigma
    return st


@dataclass
class _Move:
    """One Newton candidate and the step taken towards it."""

    d: np.ndarray          # candidate - lam
    ds: np.ndarray         # X^T d
    s_c: np.ndarray        # s at the candidate
    k_to_z: np.ndarray     # set changes the candidate asks for
    k_to_f: np.ndarray
    f_to_k: np.ndarray
    z_to_k: np.ndarray
    consistent: bool
    tau: float
    newk: np.ndarray       # kinks where the exact line search stopped
    step: float            # ||lam_new - lam||_inf
    scale: float           # max(1, ||lam_new||_inf)
    factor: object         # SelectiveNewtonFactor of the face
    free_index: np.ndarray


def _step_length(problem, st, lam_c, d, ds, line_search):
    """τ along ``d``: damped Newton on the guessed face, or the safe rules on exact W."""
    mu = problem.selectivity
    Kidx = np.flatnonzero(st.kink)
    if not st.safe:
        # damped Newton on the guessed face: W restricted to the sets (smooth); a
        # point off the face (new kink constraints) goes straight onto it
        off = Kidx.size and np.max(np.abs(st.s[Kidx] - mu * st.sigma[Kidx])) > 1e-9 * mu
        lam = st.lam
        if off or (problem.fit_intercept and abs(lam.sum()) > 1e-9 * np.abs(lam).sum()):
            return max_step(problem, lam, d), np.zeros(0, int)
        return face_line_search(problem, lam, d, st.s, ds, st.free, mu), np.zeros(0, int)
    if problem.dual_value(lam_c) <= st.W:
        return 1.0, np.zeros(0, int)
    if line_search == "golden":
        tmax = max_step(problem, st.lam, d)
        return golden_section(lambda t_, l0=st.lam, d0=d: problem.dual_value(l0 + t_ * d0),
                              0.0, tmax), np.zeros(0, int)
    return exact_line_search(problem, st.lam, d, st.s, ds, ~st.pinned_kinks())


def _newton_face_step(problem, st, line_search, eps):
    r"""One candidate of Algorithm A on the guessed face and the step.

    Returns the :class:`_Move`, or ``None`` when the sets were corrected instead (the
    kink constraints cannot all hold, or safe mode releases kinks) and the loop re-solves.
    """
    X, mu = problem.X, problem.selectivity
    z, curv = problem.conj_point(st.lam)
    if problem.loss == "logistic":
        g = problem.ridge / curv + eps  # r q''/2 + eps (curv = 2 gamma / (r q''))
        c = problem.ridge / g
    else:
        c = curv
    ytil = z + c * st.lam
    kink, free, sigma = st.kink, st.free, st.sigma
    Kidx = np.flatnonzero(kink)
    Fidx = np.flatnonzero(free)
    lam_c, theta_c, A_k = face_candidate(X, Fidx, Kidx, sigma[Kidx], mu, c, ytil,
                                         problem.fit_intercept)
    if lam_c is None:
        # the guessed kink constraints cannot all hold: restart from the last solved
        # face with the kinks pinned there
        if st.best is not None:
            st.W, st.lam, st.s = st.best
        pk = st.pinned_kinks()
        kink[:] = pk if not (st.safe and np.array_equal(pk, kink)) else False
        st.free = (np.abs(st.s) > mu) & ~kink
        st.safe = True
        return None
    d = lam_c - st.lam
    ds = X.T @ d
    s_c = st.s + ds
    # sets the candidate asks for (primal-dual active-set rule)
    # (a relative margin of 1e-12 keeps a coefficient sitting at |a| = mu from
    # bouncing between F and K on rounding)
    aK = theta_c[: Kidx.size] * sigma[Kidx]
    k_to_z, k_to_f = Kidx[aK < -1e-12 * mu], Kidx[aK > mu * (1 + 1e-12)]
    zero = ~free & ~kink
    f_to_k = np.flatnonzero(free & (np.abs(s_c) < mu * (1 - 1e-12)))
    z_to_k = np.flatnonzero(zero & (np.abs(s_c) > mu * (1 + 1e-12)))
    if line_search == "golden":
        f_to_k = z_to_k = np.zeros(0, int)
    consistent = not (k_to_z.size or k_to_f.size or f_to_k.size or z_to_k.size)
    if st.safe and (k_to_z.size or k_to_f.size):
        # release kink features whose multiplier left sigma*[0, mu]; re-solve
        kink[k_to_z] = kink[k_to_f] = False
        free[k_to_f] = True
        return None
    tau, newk = _step_length(problem, st, lam_c, d, ds, line_search)
    if tau == 1.0:
        lam_new, s_new = lam_c, s_c
    else:
        lam_new = st.lam + tau * d
        s_new = X.T @ lam_new
    N = X.shape[0]
    step = float(np.max(np.abs(lam_new - st.lam))) if N else 0.0
    scale = max(1.0, float(np.max(np.abs(lam_new)))) if N else 1.0
    st.lam, st.s, st.theta = lam_new, s_new, theta_c
    st.W = problem.dual_value(st.lam)
    st.objs.append(st.W)
    st.steps.append(step / scale)
    st.secs.append(time.perf_counter() - st.t0)
    st.trace.append((tau, int(st.free.sum()), int(kink.sum()), bool(consistent), newk.size,
                     step, st.W, st.safe))
    return _Move(d, ds, s_c, k_to_z, k_to_f, f_to_k, z_to_k, consistent, tau, newk, step,
                 scale, A_k, Fidx)


def _golden_rule(problem, st, mv, tol):
    """The thesis's stopping rule, :math:`I(\\lambda^{k+1}) = I^k` (plus a
    small step), and its cycle test. Returns True to stop."""
    free_new = np.abs(st.s) > problem.selectivity
    same = np.array_equal(free_new, st.free)
    if same and (mv.step <= tol * mv.scale or (problem.loss == "squared" and mv.tau == 1.0)):
        st.converged = True
        return True
    key = free_new.tobytes()
    if key in st.seen and not same and st.objs[-2] - st.W <= 1e-14 * max(1.0, abs(st.W)):
        st.cycled = True
        return True
    st.seen[key] = st.k
    st.free = free_new
    return False


def _switch_sets(st, mv, face_solved):
    """Semismooth-Newton switching (not in safe mode). Returns True when the sets the
    candidate asks for are to be adopted, False for another step on this face."""
    # after a full Newton step the candidate's sets are adopted at once (one step per set
    # change near the solution, instead of a face solved to tol before each change);
    # limited, so that a pathological sequence still ends in the exactly solved faces
    # guarded below
    inexact = mv.tau == 1.0 and not mv.consistent and st.n_inexact < st.max_inexact
    if not face_solved and not inexact:
        return False  # more Newton steps on this face
    if inexact and not face_solved:
        st.n_inexact += 1
        return True
    # W at successive face solutions is not monotone (a face's solution can sit above
    # the previous one when a degenerate feature changes set), so only a revisited face
    # counts as failure
    key = (st.free.tobytes(), st.kink.tobytes())
    if key in st.seen:  # the set guesses cycle: finish in safe mode
        st.restart_safe()
        return False
    st.seen[key] = st.k
    st.keep_best()
    return True


def _safe_step(problem, st, mv):
    """After a damped safe step: the sets of the current point (pinned kinks, plus those
    where the exact line search stopped). Returns True when there is no descent left."""
    mu = problem.selectivity
    st.kink[:] = st.pinned_kinks()
    newk = mv.newk
    if newk.size:
        st.kink[newk] = True
        st.sigma[newk] = np.sign(st.s[newk])
        st.s[newk] = mu * st.sigma[newk]
    st.free = (np.abs(st.s) > mu) & ~st.kink
    return mv.tau == 0.0 and not newk.size  # no descent at working precision


def _adopt_sets(st, mv):
    """A face is solved (or a full safe step was taken): adopt the sets it asks for."""
    kink, free, sigma = st.kink, st.free, st.sigma
    kink[mv.k_to_z] = kink[mv.k_to_f] = False
    free[mv.k_to_f] = True
    free[mv.f_to_k] = False
    kink[mv.f_to_k] = True
    sigma[mv.f_to_k] = np.sign(st.s[mv.f_to_k] - mv.ds[mv.f_to_k])
    kink[mv.z_to_k] = True
    sigma[mv.z_to_k] = np.sign(mv.s_c[mv.z_to_k])
    st.safe = False
    st.keep_best()


def _iterate(problem, st, *, tol, max_iter, line_search, eps):
    """The loop of Algorithm A until convergence, a cycle, no descent or ``max_iter``."""
    while st.k < max_iter:
        st.k += 1
        mv = _newton_face_step(problem, st, line_search, eps)
        if mv is None:
            continue
        if line_search == "golden":
            if _golden_rule(problem, st, mv, tol):
                break
            continue
        dnorm = float(np.max(np.abs(mv.d))) if mv.d.size else 0.0
        if problem.loss == "squared":
            face_solved = mv.tau == 1.0 or dnorm <= tol * mv.scale
        else:
            face_solved = dnorm <= tol * mv.scale or (mv.tau == 1.0 and
                                                      mv.step <= tol * mv.scale)
        if mv.consistent and face_solved:
            st.converged = True
            st.newton = mv.factor  # factor of the final face (criteria reuse it)
            break
        if not st.safe:
            if not _switch_sets(st, mv, face_solved):
                continue
        elif mv.tau != 1.0:
            if _safe_step(problem, st, mv):
                break  # the gap below decides
            continue
        _adopt_sets(st, mv)


def _primal_from_dual(problem, st, line_search):
    """The primal solution from the dual (the primal–dual map) plus the kink and
    intercept multipliers."""
    if line_search == "golden":
        st.kink[:] = False
    Kidx = np.flatnonzero(st.kink)
    coef = np.zeros(problem.X.shape[1])
    st.free = st.free & ~st.kink
    coef[st.free] = st.s[st.free]
    nK, theta = Kidx.size, st.theta
    if nK and theta.size >= nK:
        coef[Kidx] = theta[:nK]
    intercept = float(theta[nK]) if problem.fit_intercept and theta.size > nK else 0.0
    return coef, intercept


def _fallback_starts(problem, st, coef, intercept, w0, intercept0):
    """Primal starts of the fallback: the final iterate, ``(w0, intercept0)``, and the
    primal point of the lowest solved face (:math:`a = s` on :math:`|s| > \\mu`; the outputs
    :math:`z = y - \\gamma\\lambda/r` of the conjugate point fix the intercept)."""
    starts = [(coef, intercept)]
    if w0 is not None:
        starts.append((np.asarray(w0, float), float(intercept0 or 0.0)))
    if st.best is not None:
        s_b, mu = st.best[2], problem.selectivity
        a_b = np.where(np.abs(s_b) > mu, s_b, 0.0)
        b_b = 0.0
        if problem.fit_intercept:
            z_b = problem.y - problem.ridge * st.best[1] / problem.r
            b_b = float(np.sum(problem.r * (z_b - problem.X @ a_b)) / np.sum(problem.r))
        starts.append((a_b, b_b))
    return starts


def _run_fallback(problem, st, sol, primal0, fallback, opts):
    """The primal coordinate-descent fallback (squared loss) of :func:`solve_dual_newton`.

    ``sol = (coef, intercept, gap)`` of the Newton iteration. Returns either a finished
    :class:`SolverResult` (Newton restarted from the CD point converged) or the updated
    ``(coef, intercept, gap, n_sweeps)``; the state's λ, W, sets and counters follow.
    """
    coef, intercept, gap = sol
    mu = problem.selectivity
    a_f, b_f, lam_f, gap_f, W_f, n_sweeps, ok = primal_fallback(
        problem, _fallback_starts(problem, st, coef, intercept, *primal0),
        opts["max_iter"] if fallback is True else int(fallback), _gap_tol)
    if not ok:
        # CD identifies the sets long before it reaches the gap: Newton restarted
        # from its point and sets converges locally in a few steps
        af = np.abs(a_f)
        kf = (af > 0) & (af <= mu)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            again = solve_dual_newton(
                problem, alpha0=lam_f,
                partition0=ActivePartition(af > mu, kf, np.where(kf, np.sign(a_f), 0.0)),
                fallback=False, **opts)
        if again.converged:
            n_all = st.k + n_sweeps + again.n_iter
            return dataclasses.replace(
                again, n_iter=n_all, n_evals=n_all, seconds=time.perf_counter() - st.t0,
                factor=None, stats={**again.stats, "fallback_sweeps": n_sweeps})
    if ok or gap_f < gap:
        coef, intercept, st.lam, gap, st.W = a_f, b_f, lam_f, gap_f, W_f
        aa = np.abs(coef)
        st.free = aa > mu
        st.kink = (aa > 0) & ~st.free
        st.sigma = np.sign(coef)
        st.newton = None  # no Newton factor of this face: criteria form their own
    st.converged = bool(ok)
    st.k += n_sweeps
    return coef, intercept, gap, n_sweeps


def _split_duplicates(problem, st, coef, intercept, gap):
    """The minimum-norm representative among the solutions that differ only in how
    identical columns share their coefficient (:func:`~.problem.equal_split_duplicates`).

    Only the reported coefficients change: λ, the face (``partition``, the warm start of
    the next solve) and its Newton factor stay those the solver ended on, since a face
    rebuilt from the split coefficients is a worse warm start (it pins every duplicate
    of a kink as a kink)."""
    new = equal_split_duplicates(problem.X, coef)
    if new is coef:
        return coef, gap
    return new, problem.duality_gap(st.lam, new, intercept)


def _result(problem, st, coef, intercept, gap, n_sweeps):
    """The :class:`SolverResult` of :func:`solve_dual_newton`."""
    rec = ConvergenceRecord(np.array(st.objs), np.array(st.steps), np.array(st.secs))
    kink, free = st.kink, st.free
    return SolverResult(
        coef=coef, intercept=intercept, dual_coef=st.lam, active_set=np.flatnonzero(coef),
        partition=ActivePartition(free.copy(), kink.copy(), np.where(kink, st.sigma, 0.0)),
        objective=problem.primal_value(coef, intercept), dual_objective=float(st.W),
        certificate="duality_gap", certificate_value=abs(float(gap)),
        n_iter=st.k, n_evals=st.k, converged=bool(st.converged),
        seconds=time.perf_counter() - st.t0, record=rec, factor=st.newton,
        method="dual_newton",
        stats=dict(cycled=st.cycled, trace=st.trace, fallback_sweeps=n_sweeps),
    )


def solve_dual_newton(problem, *, alpha0=None, partition0=None, w0=None, intercept0=None,
                      tol=1e-10, max_iter=500, line_search="exact", curvature_floor=1e-12,
                      fallback=True):
    r"""Algorithm A of Angulo Yauri (2020): Newton's method on the exact dual with active sets.

    Parameters
    ----------
    problem : SelectiveProblem
    alpha0 : ndarray, shape (N,), optional
        Warm start :math:`\lambda^0` (the empty-model dual :math:`\lambda^*` by default),
        e.g. a previous result's ``dual_coef``; moved into the feasible set (the intercept
        constraint, the logistic domain) if needed.
    partition0 : ActivePartition, optional
        Warm start of the sets (``partition`` of a previous result): along a path the
        kink features of the previous μ mostly stay kinks, while the strict rule
        :math:`|s_i| > \mu` would call them all ridge features. Ignored by ``"golden"``.
    w0, intercept0 : ndarray, shape (n,), and float, optional
        A primal warm start for the fallback only (the path passes the previous μ's fit).
    tol : float
        The ε of the stopping rule: stop when the sets are unchanged after a full step and
        :math:`\|\lambda^{k+1}-\lambda^k\|_\infty \le` ``tol`` :math:`\max(1, \|\lambda\|_\infty)`
        (the logistic rule; for the squared loss a full step on unchanged sets is exact).
    max_iter : int
    line_search : {"exact", "golden"}
        See the module docstring; ``"golden"`` is the thesis as printed (no kink set).
    curvature_floor : float
        The curvature floor ε added to :math:`\tilde g_t` (logistic), relative to
        :math:`\max_t r_t`.
    fallback : bool or int
        ``True``, or the sweep cap of the fallback (``max_iter`` for ``True``; one sweep
        costs about :math:`Nn` flops against up to :math:`N^3` for a Newton candidate,
        :func:`solve_selectivity_path` passes ``20 * max_iter``).
        Squared loss, ``line_search="exact"``: when the Newton iteration stops without
        convergence (its cap, or no descent at working precision -- the set guesses of
        a lasso-like problem can oscillate), finish with :func:`primal_fallback`
        (cyclic coordinate descent on the primal J, warm started from the lowest-J of
        ``(w0, intercept0)``, the final and the best dual iterate's primal coefficients)
        until the duality gap meets the solver's acceptance rule
        :math:`J/(2\gamma) + W \le 10^{-9}\max(1, |W|)`. The result then has the same
        form as a converged Newton solve (λ from the residuals, the sets from
        :math:`|a_i|`), ``factor = None`` and ``stats["fallback_sweeps"]`` the number
        of sweeps. If CD does not reach the gap within its cap, Newton is restarted once
        from the CD point and its sets (CD identifies the sets long before the gap);
        a ``ConvergenceWarning`` is issued only if that fails too.
        The logistic loss has no fallback yet.

    Returns
    -------
    SolverResult
        ``coef`` (:math:`\hat a`; exactly identical columns share their coefficient
        equally, the minimum-norm choice among the equally optimal splits),
        ``intercept`` (``b``, the multiplier of :math:`\mathbf 1^\top\lambda = 0`),
        ``dual_coef`` (λ), ``active_set`` (the indices of :math:`\hat a \ne 0`),
        ``partition`` (``free`` = F, ``kink`` = K and the kink signs σ of the face the
        solver ended on: the warm start of the next solve), ``objective`` (the primal
        :math:`J(\hat a, b)`), ``dual_objective`` (:math:`W(\lambda)`),
        ``certificate="duality_gap"`` with value :math:`|J/(2\gamma) + W|` (zero at the
        optimum, :math:`\ge 0` in exact arithmetic: a negative rounding residue is
        reported by its magnitude), ``factor`` (the :class:`~.linalg.SelectiveNewtonFactor` of the
        final face, its ``free_index`` = F; ``None`` after the fallback), ``n_iter``
        (Newton candidates plus fallback sweeps), ``converged``; ``record``: per
        iteration, :math:`W(\lambda^k)` (``objective``) and the relative step
        :math:`\|\lambda^k-\lambda^{k-1}\|_\infty/\max(1, \|\lambda^k\|_\infty)` of the
        stopping rule (``grad_norm`` column, ``nan`` at the start point); ``stats``: ``cycled`` (the
        golden variant revisited its sets), ``trace`` (per candidate: τ, ``|F|``,
        ``|K|``, consistent, kinks met by the line search, step, W, safe mode),
        ``fallback_sweeps`` (``None`` without the fallback).
    """
    if line_search not in ("exact", "golden"):
        raise ValueError(f"line_search must be 'exact' or 'golden', got {line_search!r}")
    st = _start(problem, alpha0, partition0, line_search, time.perf_counter())
    _iterate(problem, st, tol=tol, max_iter=max_iter, line_search=line_search,
             eps=curvature_floor * float(np.max(problem.r)))
    coef, intercept = _primal_from_dual(problem, st, line_search)
    gap = problem.duality_gap(st.lam, coef, intercept)
    if not st.converged and line_search == "exact" and st.k < max_iter:
        st.converged = bool(gap <= _gap_tol(st.W))
    n_sweeps = None
    if not isinstance(fallback, (bool, int, np.integer)) or fallback < 0:
        raise ValueError(f"fallback must be a bool or an int >= 0, got {fallback!r}")
    if (not st.converged and fallback and line_search == "exact"
            and problem.loss == "squared"):
        out = _run_fallback(problem, st, (coef, intercept, gap), (w0, intercept0), fallback,
                            dict(tol=tol, max_iter=max_iter, curvature_floor=curvature_floor))
        if isinstance(out, SolverResult):
            return out
        coef, intercept, gap, n_sweeps = out
    if not st.converged:
        msg = ("Algorithm A (dual Newton) cycled between active sets" if st.cycled else
               f"Algorithm A (dual Newton) stopped after max_iter={max_iter} iterations")
        if n_sweeps is not None:
            msg += f" and its coordinate-descent fallback after {n_sweeps} sweeps"
        warnings.warn(f"{msg} at selectivity={problem.selectivity:.4g}; duality gap "
                      f"{gap:.3g}", ConvergenceWarning, stacklevel=2)
    coef, gap = _split_duplicates(problem, st, coef, intercept, gap)
    return _result(problem, st, coef, intercept, gap, n_sweeps)
