"""The primal solvers: methods on the weights ``w`` of a smooth or piecewise-quadratic
problem, each following the solver contract of ``solvers/base.py``.

* line-search minimisers (Nocedal & Wright 2006, chapters 3, 5 and 6): :mod:`.gradient`,
  :mod:`.quasi_newton` (BFGS), :mod:`.lbfgs`, :mod:`.cg` (nonlinear CG), over
  :mod:`._driver`'s descent loop; :mod:`.coordinate` (block coordinate descent);
* Newton's method, one damped loop (:func:`.newton.damped_newton`): dense Cholesky
  (:mod:`.newton`), the sample-space Woodbury system for d > n (:mod:`.wide`), truncated
  Newton-CG for large sparse X (:mod:`.truncated`), and the kernel expansion
  (:mod:`.kernel`);
* the finite Newton method with exact line search (Keerthi & DeCoste 2005): :mod:`.finite_newton`
  (L2-SVM, greedy kernel basis) and :mod:`.svr_finite_newton`;
* the exact weighted-L1 working-set solver (:mod:`.exact_l1`).

:func:`choose_newton_method` picks the Newton system by shape and sparsity.
"""

import scipy.sparse as _sp

from .truncated import solve_truncated_newton
from .wide import solve_woodbury_newton

__all__ = ["choose_newton_method", "solve_truncated_newton", "solve_woodbury_newton",
           "NEWTON_METHODS"]

#: The Newton-system methods of the smoothed lower level, by name.
NEWTON_METHODS = ("dense", "woodbury", "cg")

# Above this many rows (or columns, for the dense d x d system) a direct factorisation
# costs more than a few hundred Hessian-vector products (bench_wide.py measures it).
_DIRECT_LIMIT = 2500
# Forming X^T D X costs n d^2 flops per Newton step: above ~2e9 (a second or more per
# step) Hessian-vector products at 2 nnz flops each win (100,000 x 1,000: 1e11 flops
# against ~4e6 per product).
_DENSE_HESSIAN_FLOPS = 2e9
# n^3/3 flops of a sample-space factor against ~100 CG products of 2 nnz flops each
_SPARSE_CG_FLOPS = 600.0


def choose_newton_method(X, *, sparse_cg=False):
    r"""The Newton-system method for a design ``X`` (n × d), by shape and sparsity.

    With ``sparse_cg``, a sparse X with d > n is solved by CG whenever
    :math:`n^3 > 600\,\mathrm{nnz}`: factoring the n × n system costs :math:`n^3/3`
    flops a step, a few hundred Hessian-vector products :math:`2\,\mathrm{nnz}` each
    (``BilevelSVR`` uses it; ``BilevelSVC`` keeps the shape rule below).

    * ``"dense"`` -- Cholesky of the d × d Hessian, when :math:`d \le n` and d is small
      enough to factor and form (:math:`O(nd^2 + d^3)` per step, BLAS-3; at most
      :math:`nd^2 \le 2\cdot 10^9`);
    * ``"woodbury"`` -- the n × n sample-space system when :math:`d > n` and n is small
      enough to factor (:math:`O(n^2 d)`);
    * ``"cg"`` -- truncated Newton with Hessian-vector products (:math:`O(\mathrm{nnz})`
      each) otherwise: large sparse or very large dense problems.

    Never a d × d matrix when d > n.
    """
    n, d = X.shape
    if sparse_cg and _sp.issparse(X) and d > n and float(n) ** 3 > _SPARSE_CG_FLOPS * X.nnz:
        return "cg"
    if d <= n:
        if (d <= _DIRECT_LIMIT and n * d * d <= _DENSE_HESSIAN_FLOPS
                and (not _sp.issparse(X) or d <= 500)):
            return "dense"
        return "cg"
    return "woodbury" if n <= _DIRECT_LIMIT else "cg"
