r"""Finite Newton method for the primal L2-loss linear support vector regression
(LIBLINEAR's ``-s 11`` problem, which LIBLINEAR solves by a trust-region Newton method;
here the finite Newton method with exact line search of
:mod:`bisvm.solvers.primal.finite_newton`,
Keerthi & DeCoste 2005, carried over to the two-sided loss).

Problem:

.. math::
    \min_w f(w) = \tfrac12\|w\|^2 + \sum_i c_i \max(0,\ |y_i - x_i^\top w| - \epsilon)^2 .

Each sample contributes two one-sided squared hinges, :math:`\max(0, (y_i - \epsilon) -
x_i^\top w)^2` and :math:`\max(0, x_i^\top w - (y_i + \epsilon))^2`, at most one of which
is positive, so :math:`f` is piecewise quadratic, convex and differentiable. With
:math:`I^\pm` the samples above / below the tube at :math:`w^k` and :math:`t_i = y_i \mp
\epsilon` the tube edge they face, :math:`\bar w` solves

.. math::
    (I + 2 X_I^\top C_I X_I)\,\bar w = 2 X_I^\top C_I\, t_I ,

and :math:`w^{k+1} = w^k + \delta(\bar w - w^k)` with the exact minimiser ``δ`` of the
one-dimensional piecewise quadratic (:func:`~bisvm.solvers.primal.finite_newton.exact_line_search`
on the ``2n`` one-sided pieces). Once the pieces stop changing the full step is exact.
For large ``d`` the system is solved by preconditioned CG to a relative residual of at
most 0.1 (a truncated Newton step, as LIBLINEAR's Newton method does); the exact line
search keeps every step a descent step. The intercept, when wanted, is LIBLINEAR's bias
feature, implicit (never appended to ``X``); the per-sample work memory is the margins of
the iterate and of the direction.
"""

from __future__ import annotations

from ...losses import SquaredEpsilonInsensitive
from ._linear_kernels import SQUARED_EPSILON_INSENSITIVE
from .finite_newton import check_linear_problem, piecewise_newton, with_intercept

__all__ = ["solve_svr_finite_newton"]


def solve_svr_finite_newton(problem, *, w0=None, tol=1e-4, max_iter=1000,
                            linear_solver="auto", warn=True, verbose=0, n_jobs=None):
    r"""Minimise :math:`\tfrac12\|w\|^2 + \sum_i c_i \max(0, |y_i - x_i^\top w| -
    \epsilon)^2` by the finite Newton method with exact line search.

    Parameters
    ----------
    problem : LinearProblem
        With the :class:`~bisvm.losses.SquaredEpsilonInsensitive` loss (its ``epsilon``
        is the half-width of the tube), real targets ``y``, costs :math:`c_i \ge 0`
        (``C`` times sample weights) and no ``quadratic`` (:math:`R = I`). With
        ``bias > 0`` the intercept feature is implicit (penalised, as LIBLINEAR). CSR
        float64 with int32/int64 indices and C-ordered float64 ``X`` are used without a
        copy.
    w0 : ndarray, optional
        Warm start over the columns (the intercept feature's weight last; zeros by
        default).
    tol : float
        Stop when :math:`\|\nabla f(w)\| \le` ``tol`` :math:`\cdot \|\nabla f(w_0)\|`
        (LIBLINEAR's primal rule), or when a full exact step leaves the active pieces
        unchanged.
    max_iter : int
    linear_solver : {"auto", "cholesky", "cg"}
        As :func:`~bisvm.solvers.primal.finite_newton.solve_finite_newton`: exact steps by
        Cholesky, or truncated Newton-CG; "cg" stops on the gradient test only.
    warn : bool
    verbose : int
        Prints one line per Newton iteration when positive.
    n_jobs : int or None
        Threads for the products with ``X``; the iterates are identical for every value.

    Returns
    -------
    SolverResult
        ``coef``, ``intercept`` (``bias`` times the intercept feature's weight),
        ``active_set`` the samples outside the tube; certificate
        ``"relative_gradient_norm"``, :math:`\|\nabla f(w)\|/\|\nabla f(w_0)\|`.
    """
    design, y, c, linear_solver = check_linear_problem(
        problem, SquaredEpsilonInsensitive, linear_solver=linear_solver, tol=tol,
        max_iter=max_iter, n_jobs=n_jobs)
    if problem.quadratic is not None:
        raise ValueError("the SVR finite Newton method solves R = I only (quadratic=None)")
    epsilon = float(problem.loss.epsilon)

    def report(k, f, gn, delta):
        print(f"SVR finite Newton: iter {k}, objective {f:.10g}, |grad| {gn:.3e}, "
              f"step {delta:.3g}")

    res, z = piecewise_newton(design, y, c, SQUARED_EPSILON_INSENSITIVE, epsilon, None, w0,
                              tol=tol, max_iter=max_iter, linear_solver=linear_solver,
                              scale=lambda gn: gn, start_tol=0.0, name="SVR finite Newton",
                              warn=warn, report=report if verbose else None)
    return with_intercept(res, design.bias,
                          active_set=design.active_rows(y, z, SQUARED_EPSILON_INSENSITIVE,
                                                        epsilon))
