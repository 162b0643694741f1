"""Primal solvers that scale with the data: sample-space (Woodbury) Newton for d > n,
truncated Newton with preconditioned CG for large sparse X, and the exact weighted-L1
working-set solver. Each follows the solver contract of ``solvers/base.py``."""

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


def choose_newton_method(X):
    r"""The Newton-system method for a design ``X`` (n × d), by shape and sparsity.

    * ``"dense"`` -- Cholesky of the d × d Hessian, when :math:`d \le n` and d is small
      enough to factor (:math:`O(nd^2 + d^3)` per step, BLAS-3);
    * ``"woodbury"`` -- the n × n sample-space system when :math:`d > n` and n is small
      enough to factor (:math:`O(n^2 d)`);
    * ``"cg"`` -- truncated Newton with Hessian-vector products (:math:`O(\mathrm{nnz})`
      each) otherwise: large sparse or very large dense problems.

    Never a d × d matrix when d > n.
    """
    n, d = X.shape
    if d <= n:
        if d <= _DIRECT_LIMIT and (not _sp.issparse(X) or d <= 500):
            return "dense"
        return "cg"
    return "woodbury" if n <= _DIRECT_LIMIT else "cg"
