"""``verbose`` output of the estimators whose solvers return a convergence record.

scikit-learn's and LIBSVM's convention: with ``verbose`` on, a fit prints its progress to
standard output (LIBSVM: ``optimization finished, #iter = ...``), and nothing otherwise.
The Newton and dual Newton solvers behind :class:`~bisvm.KernelLogisticRegression` and
:class:`~bisvm.SelectiveRegression` keep a per-iteration record (objective, stopping
certificate) in their frozen result, so the estimator prints it once the solve returns:
one line per iteration, then one summary line per solve.
"""

from __future__ import annotations

import numpy as np

__all__ = ["print_solve"]


def print_solve(prefix, result, *, iter_objective="objective", iter_certificate=True,
                certificate=None):
    """Print a solve's iterations and outcome to stdout.

    Parameters
    ----------
    prefix : str
        What was solved, e.g. ``"KernelLogisticRegression (newton) 1 vs rest"``.
    result : bisvm.solvers.base.SolverResult
    iter_objective : str
        Name of the per-iteration objective of ``result.record`` (the dual Newton method
        records its dual objective, while ``result.objective`` is the primal one).
    iter_certificate : bool
        Print the record's per-iteration stopping certificate too (false when the solver
        records only its final value).
    certificate : str, optional
        Name of ``result.certificate_value`` in the summary (default ``result.certificate``).
    """
    cert = certificate or result.certificate
    obj = np.asarray(result.record.objective) if result.record is not None else ()
    gn = np.asarray(result.record.grad_norm) if result.record is not None else ()
    for k in range(len(obj)):
        tail = f", {cert} {gn[k]:.3e}" if iter_certificate else ""
        print(f"[{prefix}] iter {k:3d}: {iter_objective} {obj[k]:.10g}{tail}", flush=True)
    status = "converged" if result.converged else "stopped at max_iter"
    value = result.certificate_value
    print(f"[{prefix}] optimization finished, #iter = {result.n_iter}, objective = "
          f"{result.objective:.10g}, {cert} = {value:.3e} ({status})", flush=True)
