r"""BLAS threads for the many small dense solves of model selection.

A μ path of the selective models (seed 004 Algorithm B with the leave-one-out criteria)
and the BiSVM lower level on narrow data run hundreds of Cholesky factorisations and
triangular solves of matrices of a few hundred rows. A multi-threaded BLAS pays a thread
wake-up and a barrier on each of those calls, and on a machine whose other cores are busy
its threads spin waiting for one another: on an 80 × 60 regression with a 20-point path,
``criterion="alo"`` took 0.33-0.94 s with the default threads on a loaded 2-core machine
against 0.10 s with one (issue #12). scikit-learn limits threads the same way around its
small solves (``threadpoolctl.threadpool_limits``).

:func:`blas_threads` decides by size; :func:`limit_blas` applies the decision for the
duration of a ``with`` block and restores the previous limits afterwards.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["SMALL_DENSE", "blas_threads", "limit_blas"]

#: Largest dimension of a dense factorisation kept on one BLAS thread. A Cholesky
#: factorisation of order n costs n³/3 flops: 1,000 is ~0.3 GFLOP, a few ms on one core,
#: where thread start-up and synchronisation are of the same order.
SMALL_DENSE = 1000


def blas_threads(n_rows, n_cols, threads="auto"):
    """BLAS thread count for a selection run on an ``n_rows`` × ``n_cols`` problem.

    Parameters
    ----------
    n_rows, n_cols : int
    threads : "auto", int or None
        ``"auto"``: 1 when the smaller dimension (the order of the dense factorisations of
        the dual and primal Newton systems) is at most :data:`SMALL_DENSE`, else None (the
        library default); an int is returned as is; None means no limit.

    Returns
    -------
    int or None
    """
    if threads is None:
        return None
    if isinstance(threads, str):
        if threads != "auto":
            raise ValueError(f"blas_threads must be 'auto', a positive int or None, got "
                             f"{threads!r}")
        return 1 if min(int(n_rows), int(n_cols)) <= SMALL_DENSE else None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"blas_threads must be 'auto', a positive int or None, got "
                         f"{threads!r}")
    return int(threads)


@contextmanager
def limit_blas(n_threads):
    """Limit the BLAS pools (OpenBLAS, MKL, BLIS) to ``n_threads`` inside the block;
    ``None`` leaves them alone."""
    if n_threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=int(n_threads), user_api="blas"):
        yield
