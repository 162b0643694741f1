r"""The outer loop of the dual coordinate descent solvers of
:mod:`bisvm.solvers.dual.dual_cd`: epochs, the two stopping rules, exact duality-gap
checks and the detection of a stalled solve.

Stopping rules
    ``"projected_gradient"`` is LIBLINEAR's (Hsieh et al. 2008, §3.2): the spread of the
    projected gradient over the active samples (for regression, the summed violation
    relative to the first epoch; Ho & Lin 2012) at most ``tol``, confirmed by one more
    epoch over all samples after shrinking. ``"duality_gap"`` stops when the relative
    duality gap :math:`(P(w) + f(\alpha)) / P(w) \le` ``tol``, with :math:`P` the primal
    and :math:`f` the dual objective to be minimised. The gap is an upper bound on the
    relative distance of :math:`P(w)` from the optimum, whatever the conditioning, so this
    rule certifies the objective the user gets; the projected gradient does not.

Checks of the gap
    The gap is a sum of per-sample Fenchel-Young terms, each :math:`\ge 0` and zero for a
    sample at a bound on the right side of its margin (so shrunk samples add nothing
    while they stay shrunk). The epochs add up those terms as they visit the samples, an
    estimate that costs a few flops per sample; the exact gap, one sequential pass over
    ``X`` (:func:`~bisvm.solvers.dual._dual_cd_kernels.loss_sum`), is computed when the
    estimate says the rule holds, and at least every ``CHECK_WORK`` epochs' worth of
    visited samples. An exact check that finds the rule not met undoes the shrinking (a
    shrunk sample may have crossed its margin, which only the exact gap sees), and after
    an epoch over all samples recalibrates the trigger to the estimate's bias. The dual
    objective is tracked by its exact per-step change :math:`G\delta + \tfrac12\bar
    Q_{ii}\delta^2` and recomputed at every exact check.

Stall
    Dual coordinate descent converges linearly at a rate set by the conditioning of
    :math:`\bar Q`; on nearly collinear columns that rate is close to 1 and the solve
    crawls to the epoch cap far from the optimum (LIBLINEAR switches from ``-s 1`` to its
    primal Newton solver after a fixed number of epochs for this reason; Hsieh et al.
    2008 §5 discuss the dependence on conditioning). Here a solve whose exact relative gap
    has not halved over the last ``STALL_WORK`` epochs' worth of visited samples is
    declared stalled (once the shrinking has been undone and the window measured afresh,
    since a shrunk sample that crossed its margin also holds the gap up); the solver then
    finishes in the primal when the loss is smooth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._record import IterationLog
from ..base import ConvergenceRecord

__all__ = ["DualRun", "run_epochs", "relative_gap", "CHECK_WORK", "STALL_WORK",
           "STALL_FACTOR"]

#: Epochs' worth of visited samples between two exact gap checks (a check is one
#: sequential pass over X, cheaper than one random-order epoch).
CHECK_WORK = 10.0
#: The window over which the gap must fall by ``STALL_FACTOR`` for the solve to be
#: making progress.
STALL_WORK = 20.0
STALL_FACTOR = 0.5
# a gap at this relative level is rounding, not a stall
_GAP_FLOOR = 1e-11


def relative_gap(primal, dual, floor=0.0):
    r"""The relative duality gap :math:`\max(0, P + f - \delta) / P` (0 when :math:`P =
    0`: then :math:`w = 0` carries no loss and is optimal), less ``floor``
    :math:`\delta`, the rounding uncertainty of :math:`P` (see
    :func:`~bisvm.solvers.dual._dual_cd_kernels.loss_sum`): the part of the gap that
    float64 resolves."""
    gap = max(primal + dual - floor, 0.0)
    return gap / primal if primal > 0 else 0.0


@dataclass(frozen=True)
class DualRun:
    """What :func:`run_epochs` hands back to the solver.

    ``status`` is ``"converged"``, ``"stalled"`` or ``"cap"``; ``certificate`` and
    ``value`` the stopping certificate of the rule in force; ``gap`` the exact relative
    duality gap, ``primal`` and ``dual`` the objectives at the final iterate."""

    n_iter: int
    status: str
    certificate: str
    value: float
    gap: float
    primal: float
    dual: float
    active_size: int
    record: ConvergenceRecord


def _stalled(checks):
    """Whether the last exact gap is above ``STALL_FACTOR`` times the one measured at
    least ``STALL_WORK`` epochs of work earlier."""
    w_now, g_now = checks[-1]
    if g_now <= _GAP_FLOOR:
        return False
    for w_then, g_then in reversed(checks[:-1]):
        if w_now - w_then >= STALL_WORK:
            return g_now > STALL_FACTOR * g_then
    return False


def run_epochs(epoch, measure, dual0, *, n_act, max_iter, tol, stopping, pg_certificate,
               watch_stall, verbose, name, warm=False):
    """Epochs until the stopping rule holds, the solve stalls (only when ``watch_stall``)
    or ``max_iter`` epochs have run.

    Parameters
    ----------
    epoch : callable
        ``epoch(active_size, old) -> (active_size, pg, old_next, dual_change, gap_terms)``:
        one epoch over the active samples; ``old`` carries the shrinking thresholds
        (``None``: no shrinking yet), ``pg`` is LIBLINEAR's certificate of the epoch.
    measure : callable
        ``measure() -> (primal, dual, floor)``, exact, at the current iterate, with
        ``floor`` the rounding uncertainty of ``primal``.
    dual0 : float
        The dual objective at the start.
    n_act : int
        Number of samples that can move.
    stopping : {"projected_gradient", "duality_gap"}
    pg_certificate : str
        The name of ``pg`` in :data:`~bisvm.solvers.base.CERTIFICATES`.
    warm : bool
        The start is a warm start: under the gap rule it is checked before any epoch (a
        start that already meets the rule costs one pass over ``X``).

    Returns
    -------
    DualRun
        Its record holds the dual objective per epoch and the certificate of the rule
        (for the gap rule, the epochs' estimate of the relative gap; the exact value at
        the last entry).
    """
    gap_rule = stopping == "duality_gap"
    cert_name = "duality_gap" if gap_rule else pg_certificate
    log = IterationLog(dual0, np.nan, certificate=cert_name)
    dual = float(dual0)
    active, old = n_act, None
    work = since = 0.0
    checks = []
    trigger = tol  # the estimate's level that calls an exact check
    status, k, pg, fresh = "cap", 0, np.inf, None
    retried = False
    if gap_rule and warm:
        primal, dual, floor = measure()
        fresh = (primal, dual, relative_gap(primal, dual, floor))
        checks.append((0.0, fresh[2]))
        if fresh[2] <= tol:
            status, max_iter = "converged", 0
    while k < max_iter:
        before = active
        active, pg, old_next, ddual, est = epoch(active, old)
        k += 1
        dual += ddual
        since += before / n_act
        work += before / n_act
        est_rel = est / -dual if dual < 0 else np.inf
        log.add(dual, est_rel if gap_rule else pg)
        fresh = None
        if verbose > 1:
            print(f"{name}: epoch {k}, {cert_name} {log.value:.3e}, dual objective "
                  f"{dual:.10g}, active {active}")
        if not gap_rule and pg <= tol:
            if active == n_act:
                status = "converged"
                break
            active, old = n_act, None  # confirm on the whole set before stopping
            continue
        old = old_next
        due = (gap_rule and est_rel <= trigger) or (
            (watch_stall or gap_rule) and since >= CHECK_WORK)
        if not due:
            continue
        primal, dual, floor = measure()
        fresh = (primal, dual, relative_gap(primal, dual, floor))
        checks.append((work, fresh[2]))
        since = 0.0
        if verbose > 1:
            print(f"{name}: exact relative duality gap {fresh[2]:.3e} at epoch {k}")
        if gap_rule and fresh[2] <= tol:
            status = "converged"
            break
        if gap_rule:
            # the estimate counts shrunk samples as 0: a shrunk sample that crossed its
            # margin since is seen by the exact gap only, so undo the shrinking (the next
            # epoch visits everyone and shrinks afresh); the rest of the discrepancy is
            # the drift of w within an epoch, which the trigger absorbs
            if active < n_act:
                active, old = n_act, None
            elif fresh[2] > 0:
                trigger = tol * min(1.0, max(est_rel / fresh[2], 0.01))
        if watch_stall and _stalled(checks):
            if active == n_act or retried:
                status = "stalled"
                break
            # a shrunk sample that crossed its margin holds the gap up until LIBLINEAR's
            # test brings it back: bring it back now, and judge the progress afresh
            retried = True
            active, old = n_act, None
            checks = checks[-1:]
    if fresh is None:
        primal, dual, floor = measure()
        fresh = (primal, dual, relative_gap(primal, dual, floor))
    primal, dual, gap = fresh
    value = gap if gap_rule else pg
    log.gns[-1] = value
    log.objs[-1] = dual
    if verbose:
        why = {"converged": "", "stalled": " (stalled)", "cap": " (reached max_iter)"}
        print(f"{name}: optimization finished{why[status]}, #iter = {k}, {cert_name} "
              f"{value:.3e}, relative duality gap {gap:.3e}, dual objective {dual:.10g}")
    return DualRun(k, status, cert_name, float(value), float(gap), float(primal),
                   float(dual), int(active), log.record())
