r"""BLAS threads for the many small dense solves of model selection.

A μ path of the selective models (the dual Newton algorithm of Angulo Yauri (2020) with
the leave-one-out criteria) and the BiSVM lower level on narrow data run hundreds of
Cholesky factorisations and triangular solves of matrices of a few hundred rows. A
multi-threaded BLAS pays a thread wake-up and a barrier on each of those calls, and on a
machine whose other cores are busy its threads spin waiting for one another, so one
thread is many times faster on such sizes (the measurement is on the selection notes
page). scikit-learn limits threads the same way around its small solves
(``threadpoolctl.threadpool_limits``).

:func:`blas_threads` decides by size; :func:`limit_blas` applies the decision for the
duration of a ``with`` block and restores the previous limits afterwards.

:func:`gram_threads` decides for ``BilevelSVC``, whose lower level factorises a Gram-sized
matrix per fold and per trial point: the d × d Hessian :math:`X^\top DX` when d <= n,
the n × n sample-space system :math:`XDX^\top` when d > n (Woodbury), each costing about
:math:`n\,d\min(n, d)` flops to form; below :data:`SMALL_GRAM` one thread is faster,
most of all on a machine whose other cores are busy (the measurement is on the selection
notes page).
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["SMALL_DENSE", "SMALL_GRAM", "blas_threads", "gram_threads", "limit_blas",
           "map_ordered"]

#: Largest dimension of a dense factorisation kept on one BLAS thread. A Cholesky
#: factorisation of order n costs n³/3 flops: 1,000 is ~0.3 GFLOP, a few ms on one core,
#: where thread start-up and synchronisation are of the same order.
SMALL_DENSE = 1000


#: Largest Gram product :math:`n\,d\min(n, d)` (flops) kept on one BLAS thread by
#: :func:`gram_threads`: 1e9 flops is a fraction of a second on one core; below it the many
#: factorisations of a BiSVM fit are too small to amortise a thread team's wake-ups.
SMALL_GRAM = 1e9


def _checked(threads):
    if isinstance(threads, str):
        if threads != "auto":
            raise ValueError(f"blas_threads must be 'auto', a positive int or None, got "
                             f"{threads!r}")
        return threads
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise ValueError(f"blas_threads must be 'auto', a positive int or None, got "
                         f"{threads!r}")
    return threads


def gram_threads(n_rows, n_cols, threads="auto"):
    r"""BLAS thread count for a BiSVM fit on an ``n_rows`` × ``n_cols`` training matrix.

    Parameters
    ----------
    n_rows, n_cols : int
    threads : "auto", int or None
        ``"auto"``: 1 when the Gram product :math:`n\,d\min(n, d)` is at most
        :data:`SMALL_GRAM` flops, else None (the library default); an int is returned as
        is; None means no limit.

    Returns
    -------
    int or None
    """
    threads = _checked(threads)
    if threads != "auto":
        return threads
    n, d = int(n_rows), int(n_cols)
    return 1 if float(n) * d * min(n, d) <= SMALL_GRAM else None


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


def map_ordered(func, tasks, n_jobs=None, *, threads=True):
    """``[func(*t) for t in tasks]`` in task order, on ``n_jobs`` threads of this process
    unless a surrounding :func:`joblib.parallel_config` (or :func:`compute_backend`)
    names a backend other than threads, such as Dask, which then runs the tasks.

    For short tasks that release the GIL (BLAS, LAPACK, ``nogil`` numba kernels) called
    many times in a row, such as the folds of one upper-level evaluation. Threads run
    on a :class:`concurrent.futures.ThreadPoolExecutor` whose results are collected as
    they complete: :class:`joblib.Parallel` collects ordered results by polling every
    10 ms, a delay of the order of a whole task here.

    Parameters
    ----------
    func : callable
    tasks : iterable of tuple
        Positional arguments of each call.
    n_jobs : int, optional
        ``None`` or ``1``: one after the other, here. Otherwise joblib's convention
        (``-1``: all cores; ``-2``: all but one).
    threads : bool
        Whether the tasks are large enough to gain from threads of this process; False
        runs them one after the other unless another joblib backend is configured.
        Tasks whose GIL-holding Python bookkeeping outweighs their GIL-free numerical
        work run slower on two threads than on one (the threads queue for the GIL).

    Returns
    -------
    list
    """
    tasks = list(tasks)
    if n_jobs in (None, 1) or len(tasks) < 2:
        return [func(*t) for t in tasks]
    import joblib
    from joblib.parallel import ThreadingBackend, get_active_backend

    if not isinstance(get_active_backend(prefer="threads")[0], ThreadingBackend):
        return joblib.Parallel(n_jobs=n_jobs, prefer="threads")(
            joblib.delayed(func)(*t) for t in tasks)
    if not threads:
        return [func(*t) for t in tasks]
    from concurrent.futures import ThreadPoolExecutor

    n = n_jobs if n_jobs > 0 else max(1, joblib.cpu_count() + 1 + n_jobs)
    with ThreadPoolExecutor(min(n, len(tasks))) as pool:
        return list(pool.map(lambda t: func(*t), tasks))
