r"""Coordinate descent with one-dimensional Newton steps for the L1-regularised squared-hinge
SVM (LIBLINEAR's ``-s 5``; Yuan, Chang, Hsieh & Lin 2010, "A comparison of optimization
methods and software for large-scale L1-regularized linear classification", §4.1 "CDN";
Fan et al. 2008, LIBLINEAR).

Problem, with LIBLINEAR's intercept (a constant feature of value ``bias`` whose weight is
penalised like the others):

.. math::
    \min_w\ \|w\|_1 + \sum_i c_i \max(0,\ 1 - y_i \tilde x_i^\top w)^2,
    \qquad \tilde x_i = (x_i, \text{bias}).

Each coordinate step minimises the second-order model of the loss plus
:math:`|w_j + d|` (soft thresholding, with the generalised second derivative
:math:`H_j = 2\sum_{i: b_i > 0} c_i x_{ij}^2` of the squared hinge), then backtracks
(Armijo, :math:`\sigma = 0.01`) along the coordinate; a bound on the loss's curvature
accepts most steps without evaluating the loss. Coordinates are visited in a fresh random
order every pass; a coordinate at zero whose subgradient interval contains zero by a
margin set by the previous pass's largest violation is *shrunk* (skipped) until the
shrunken problem has converged, after which one full pass decides (Yuan et al. 2010,
§6.1, as LIBLINEAR). The run stops when the 1-norm of the minimum-norm subgradient over
the coordinates visited is at most ``tol`` times its value at :math:`w = 0`, on a pass
over all coordinates.

Memory: the column access needs one column-major copy of ``X`` with the labels folded in
(:math:`y_i x_{ij}`: the nonzeros' values and int32 row indices, plus ``d + 1`` column
pointers; the one copy this solver makes, made directly from the CSR arrays); the
intercept's column is implicit. Per sample it keeps the residuals :math:`b_i`.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import scipy.sparse as sp

from ...losses import SquaredHinge
from ...progress import Progress, mode_for_verbose
from .._record import IterationLog, check_tol_max_iter
from ..base import warn_cap
from ..problems import LinearProblem, split_intercept
from . import _l1_cd_kernels as K
from .linear_design import LinearDesign

__all__ = ["solve_l1_cd", "column_copy_bytes"]


def column_copy_bytes(X):
    """Bytes of the column-major copy :func:`solve_l1_cd` makes of ``X`` (n x d with
    ``nnz`` nonzeros): ``12 nnz + 8 (d + 1)`` (int32 row indices while n < 2**31)."""
    n, d = X.shape
    nnz = X.nnz if sp.issparse(X) else int(np.count_nonzero(X))
    return nnz * (8 + (4 if n < 2**31 else 8)) + 8 * (d + 1)


def _columns(X, y):
    """The scaled CSC copy of ``X`` (see :mod:`~bisvm.solvers.primal._l1_cd_kernels`)."""
    n, d = X.shape
    if sp.issparse(X):
        design = LinearDesign(X)  # CSR float64 as given, else converted once
        data, indices, indptr = design.csr
    else:
        Xc = sp.csr_matrix(np.asarray(X, dtype=np.float64))
        data, indices, indptr = Xc.data, Xc.indices, Xc.indptr
    sample = np.empty(0, dtype=np.int32 if n < 2**31 else np.int64)
    return K.scaled_csc(data, indices, indptr, y, d, sample)


def _check(problem, tol, max_iter):
    if not isinstance(problem, LinearProblem) or not isinstance(problem.loss, SquaredHinge):
        raise ValueError("expected a LinearProblem with the SquaredHinge loss, got "
                         f"{type(problem).__name__} with {getattr(problem, 'loss', None)!r}")
    check_tol_max_iter(tol, max_iter)
    n = problem.X.shape[0]
    y = np.ascontiguousarray(problem.y, dtype=np.float64)
    if y.shape != (n,) or not np.all(np.abs(y) == 1.0):
        raise ValueError(f"y must hold {n} labels in {{-1, +1}}")
    c = np.asarray(problem.cost, dtype=np.float64)
    c = np.ascontiguousarray(np.broadcast_to(c, (n,)) if c.ndim == 0 else c)
    if c.shape != (n,) or not (np.all(np.isfinite(c)) and np.all(c >= 0)):
        raise ValueError(f"cost must be a finite non-negative scalar or have shape ({n},)")
    bias = float(problem.bias)
    if not (np.isfinite(bias) and bias >= 0):
        raise ValueError(f"bias must be a non-negative float, got {problem.bias!r}")
    return y, c, bias


def solve_l1_cd(problem, *, w0=None, tol=0.01, max_iter=1000, shrinking=True,
                random_state=0, warn=True, verbose=0):
    r"""Minimise :math:`\|w\|_1 + \sum_i c_i \max(0, 1 - y_i \tilde x_i^\top w)^2` by
    coordinate descent with Newton steps (module docstring).

    Parameters
    ----------
    problem : LinearProblem
        :class:`~bisvm.losses.SquaredHinge` loss, labels in {-1, +1}, costs
        :math:`c_i \ge 0`, ``bias`` the intercept feature's value (0: none); its
        ``quadratic`` is ignored.
    w0 : ndarray of shape (d,) or (d + 1,), optional
        Warm start (the intercept feature's weight last when ``bias > 0``).
    tol : float
        Stop when the 1-norm of the minimum-norm subgradient on a full pass is at most
        ``tol`` times its value at :math:`w = 0` (LIBLINEAR's ``-e``, default 0.01 as
        there; LIBLINEAR measures the first pass, which starts at zero unless warm
        started).
    max_iter : int
        Cap on the passes.
    shrinking : bool
    random_state : int
        Seed of the coordinate order.
    warn : bool
        :class:`~sklearn.exceptions.ConvergenceWarning` on the cap.
    verbose : int
        Progress (pass, objective, relative violation, active coordinates) on stderr.

    Returns
    -------
    SolverResult
        ``coef``, ``intercept`` (``bias · w[d]``), ``objective``; certificate
        ``"kkt_violation"``: the largest magnitude of the minimum-norm subgradient over the
        coordinates on the last pass (over all coordinates when ``converged``; the
        record's first entry is NaN, as no pass has measured it at the start);
        ``stats["relative_violation"]`` the stopping ratio, ``stats["column_copy_bytes"]``
        the bytes of the column-major copy; ``active_set`` the features of nonzero
        weight.
    """
    t0 = time.perf_counter()
    y, c, bias = _check(problem, tol, max_iter)
    if not isinstance(random_state, (int, np.integer)):
        raise TypeError(f"random_state must be an int, got {random_state!r}")
    n, d = problem.X.shape
    d1 = d + (1 if bias > 0 else 0)
    cdata, cindices, cindptr = _columns(problem.X, y)
    w = np.zeros(d1) if w0 is None else np.array(w0, dtype=np.float64, copy=True)
    if w.shape != (d1,):
        raise ValueError(f"w0 must have shape ({d1},), got {w.shape}")
    b = np.empty(n)
    K.recompute_b(cdata, cindices, cindptr, y, bias, w, b)
    xsq = np.empty(d1)
    K.column_sq_norms(cdata, cindices, cindptr, c, y, bias, xsq)
    index = np.arange(d1, dtype=np.int64)
    cu = float(c[0]) if n and c[0] > 0 and np.all(c == c[0]) else 0.0
    state = K.rng_state(random_state)
    # no violation is known before the first pass: the record starts with NaN
    log = IterationLog(K.objective(w, b, c), np.nan, certificate="kkt_violation")
    active, gmax_old, converged, k, rel = d1, np.inf, False, 0, np.inf
    # the scale of the stopping rule is the violation at zero (LIBLINEAR's first pass)
    init = None if w0 is None else K.zero_violation(cdata, cindices, cindptr, y, c, cu, bias)
    progress = Progress("L1 coordinate descent", mode=mode_for_verbose(verbose), unit="pass",
                        lazy=True, line_interval=1.0)
    with progress:
        while k < max_iter:
            gmax, gnorm1, active, failed = K.cd_pass(
                cdata, cindices, cindptr, y, c, cu, bias, w, b, xsq, index, active, gmax_old,
                float(n), state)
            k += 1
            if failed:
                K.recompute_b(cdata, cindices, cindptr, y, bias, w, b)
            init = gnorm1 if init is None else init
            rel = gnorm1 / init if init > 0 else 0.0
            log.add(K.objective(w, b, c), gmax)
            if verbose:
                progress(1, objective=f"{log.objs[-1]:.10g}", violation=f"{rel:.3g}",
                         active=active)
            if rel <= tol:
                if active == d1:
                    converged = True
                    break
                active, gmax_old = d1, np.inf  # the shrunken problem converged: all again
            else:
                gmax_old = gmax if shrinking else np.inf
    if not converged and warn:
        warn_cap("L1 coordinate descent", max_iter, rel, tol)
    coef, intercept = split_intercept(w, d, bias)
    res = log.result(w, k, k, converged, intercept=intercept, active_set=np.flatnonzero(coef),
                     stats={"relative_violation": rel,
                            "column_copy_bytes": int(cdata.nbytes + cindices.nbytes
                                                     + cindptr.nbytes)})
    return dataclasses.replace(res, coef=coef, seconds=time.perf_counter() - t0)
