r"""Parallel searches through joblib: local processes or a Dask cluster, same results.

Every embarrassingly parallel piece of model selection in bisvm — the candidates × folds
of a grid or random search, k-fold scores, the :math:`n` refits of exact leave-one-out,
the (μ, γ) sweep of the sparsity heatmap (González Vallejo 2024) — is written as a list of
independent, deterministic tasks handed to :class:`joblib.Parallel`. Which machines run
them is chosen once, around the call, by :func:`compute_backend`:

* ``n_jobs=None`` or ``1``: in this process, one task after the other;
* ``n_jobs=N``: ``N`` local worker processes (joblib's ``loky`` backend; ``-1``: all cores);
* ``dask_scheduler="tcp://host:8786"``: the workers of a running Dask cluster
  (joblib's ``"dask"`` backend through a :class:`distributed.Client`);
* ``dask_local=True``: a :class:`distributed.LocalCluster` started on 127.0.0.1 for the
  duration of the block (no dashboard, no port open beyond loopback).

Results do not depend on the backend: each task is a pure function of its inputs (fixed
folds, fixed seeds; no shared state), and joblib returns results in task order, so the
serial, multi-process and Dask runs choose the same hyperparameters with the same scores
(tested in ``tests/test_parallel.py``). Dask is optional (``pip install "bisvm[dask]"``);
the workers of a real cluster need bisvm installed in the same version.
"""

from __future__ import annotations

import contextlib
import logging
import numbers
from dataclasses import dataclass, field

import numpy as np

from .selection.threads import map_ordered

__all__ = [
    "Backend",
    "compute_backend",
    "map_tasks",
    "map_ordered",
    "search",
    "cross_val_scores",
    "loo_predictions",
    "SparsitySweep",
    "sparsity_sweep",
    "log_grid",
]


@dataclass(frozen=True)
class Backend:
    """Where the tasks of a :func:`compute_backend` block run.

    Attributes
    ----------
    kind : {"serial", "processes", "dask"}
    n_jobs : int or None
        What to pass as ``n_jobs`` to the functions of this module (and to scikit-learn)
        inside the block: ``None`` (serial), the number of local processes, or ``-1``
        (every Dask worker thread).
    address : str or None
        Scheduler address of the Dask client.
    n_workers : int
        Worker processes (local) or Dask workers.
    description : str
        One line for the CLI.
    """

    kind: str
    n_jobs: int | None
    address: str | None = None
    n_workers: int = 1
    description: str = "serial"
    client: object = field(default=None, repr=False, compare=False)


def _check_n_jobs(n_jobs):
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0 \
            or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
    return int(n_jobs)


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise ValueError(
            "running on Dask needs dask.distributed: pip install 'bisvm[dask]' "
            "(or pip install 'dask[distributed]')"
        ) from None
    return distributed


@contextlib.contextmanager
def compute_backend(n_jobs=None, *, dask_scheduler=None, dask_local=False, dask_workers=2,
                    dask_threads_per_worker=1, dask_processes=True, dask_timeout=10.0):
    """Context in which joblib work of bisvm (and scikit-learn) runs where asked.

    Parameters
    ----------
    n_jobs : int, optional
        Local worker processes (``-1``: all cores); ignored when Dask is asked for.
    dask_scheduler : str, optional
        Address of a running Dask scheduler, e.g. ``"tcp://10.0.0.5:8786"``.
    dask_local : bool
        Start a :class:`distributed.LocalCluster` on 127.0.0.1 for the block.
    dask_workers, dask_threads_per_worker : int
        Size of the local cluster.
    dask_processes : bool
        Local cluster workers as processes (``False``: threads of this process, faster to
        start, enough for tests).
    dask_timeout : float
        Seconds to wait for the scheduler.

    Yields
    ------
    Backend
        Pass ``backend.n_jobs`` to the work functions inside the block.

    Raises
    ------
    ValueError
        Bad ``n_jobs``, both Dask options given, dask.distributed not installed, or the
        scheduler could not be reached (one line, naming the address).
    """
    import joblib

    if dask_scheduler is not None and dask_local:
        raise ValueError("give either a Dask scheduler address or dask_local=True, not both")
    if dask_scheduler is None and not dask_local:
        n = _check_n_jobs(n_jobs)
        if n is None or n == 1:
            with joblib.parallel_config(backend="sequential"):
                yield Backend("serial", None)
            return
        with joblib.parallel_config(backend="loky", n_jobs=n):
            yield Backend("processes", n, n_workers=n,
                          description=f"{n if n > 0 else 'all'} local processes (joblib/loky)")
        return

    distributed = _import_distributed()
    # the scheduler's and workers' INFO lines would end up on the terminal; keep errors
    for name in ("distributed", "distributed.scheduler", "distributed.worker",
                 "distributed.nanny", "distributed.core", "distributed.http.proxy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    cluster = None
    try:
        if dask_local:
            for name, v in (("dask_workers", dask_workers),
                            ("dask_threads_per_worker", dask_threads_per_worker)):
                if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                    raise ValueError(f"{name} must be a positive integer, got {v!r}")
            cluster = distributed.LocalCluster(
                n_workers=int(dask_workers), threads_per_worker=int(dask_threads_per_worker),
                # tcp even for thread workers: the cluster is a real loopback cluster
                processes=bool(dask_processes), protocol="tcp://", host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            client = distributed.Client(cluster, set_as_default=False)
        else:
            try:
                client = distributed.Client(str(dask_scheduler), timeout=float(dask_timeout),
                                            set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise ValueError(
                    f"could not reach the Dask scheduler at {dask_scheduler}: "
                    f"{' '.join(str(exc).split()) or type(exc).__name__}"
                ) from None
        try:
            n_workers = len(client.scheduler_info(n_workers=-1).get("workers", {}))
        except TypeError:  # older distributed without the n_workers argument
            n_workers = len(client.scheduler_info().get("workers", {}))
        where = "local Dask cluster on 127.0.0.1" if dask_local else f"Dask at {dask_scheduler}"
        info = Backend("dask", -1, address=client.scheduler.address, n_workers=n_workers,
                       description=f"{where} ({n_workers} workers)", client=client)
        try:
            # joblib's dask backend picks the client up through this scope
            with client.as_current(), joblib.parallel_config(backend="dask"):
                yield info
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def map_tasks(func, tasks, *, n_jobs=None, progress=None, weights=None):
    """``[func(*t) for t in tasks]`` through :class:`joblib.Parallel`, in task order.

    Parameters
    ----------
    func : callable
        A module-level function (so that worker processes and Dask can import it).
    tasks : sequence of tuple
        Positional arguments of each call.
    n_jobs : int, optional
        ``None``/``1`` runs in this process (unless a :func:`compute_backend` block says
        otherwise).
    progress : callable, optional
        Called after each finished task (e.g. ``tqdm.update``) with its weight.
    weights : sequence of int, optional
        Work units of each task reported to ``progress`` (default 1 each).
    """
    import joblib

    tasks = list(tasks)
    if not tasks:
        return []
    par = joblib.Parallel(n_jobs=n_jobs, return_as="generator")
    out = []
    for k, r in enumerate(par(joblib.delayed(func)(*t) for t in tasks)):
        out.append(r)
        if progress is not None:
            progress(1 if weights is None else weights[k])
    return out


def log_grid(low, high, num):
    """``num`` points evenly spaced on a log scale from ``low`` to ``high`` (both > 0)."""
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low <= high):
        raise ValueError(f"a log grid needs 0 < low <= high, got {low!r}, {high!r}")
    if isinstance(num, bool) or not isinstance(num, numbers.Integral) or num < 1:
        raise ValueError(f"the number of grid points must be a positive integer, got {num!r}")
    return np.geomspace(low, high, int(num)) if num > 1 else np.array([low])


def _default_cv(estimator, y, cv, random_state):
    from sklearn.base import is_classifier
    from sklearn.model_selection import KFold, StratifiedKFold

    if not isinstance(cv, numbers.Integral) or isinstance(cv, bool):
        return cv
    if cv < 2:
        raise ValueError(f"cv must be an integer >= 2, got {cv!r}")
    if len(y) < cv:
        raise ValueError(f"n_samples={len(y)} is fewer than cv={cv} folds")
    if is_classifier(estimator):
        return StratifiedKFold(int(cv), shuffle=True, random_state=random_state)
    return KFold(int(cv), shuffle=True, random_state=random_state)


def _chunks(items, size):
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _search_classes():
    from sklearn.model_selection import (
        GridSearchCV,
        ParameterGrid,
        ParameterSampler,
        RandomizedSearchCV,
    )

    class _Progress:
        # Candidates are evaluated in chunks so that a bar can advance; every candidate is
        # still scored on the same folds, and cv_results_ lists them in the same order.
        progress = None
        chunk = 8

        def _run_search(self, evaluate_candidates):
            cands = list(self._candidates())
            for part in _chunks(cands, self.chunk):
                evaluate_candidates(part)
                if self.progress is not None:
                    self.progress(len(part))

    class Grid(_Progress, GridSearchCV):
        def _candidates(self):
            return ParameterGrid(self.param_grid)

    class Random(_Progress, RandomizedSearchCV):
        def _candidates(self):
            return ParameterSampler(self.param_distributions, self.n_iter,
                                    random_state=self.random_state)

    return Grid, Random


def search(estimator, params, X, y, *, method="grid", n_iter=20, cv=5, scoring=None,
           random_state=0, n_jobs=None, refit=True, progress=None):
    """Grid or random search with k-fold cross-validation (scikit-learn's
    :class:`~sklearn.model_selection.GridSearchCV` / ``RandomizedSearchCV``).

    Candidates × folds are joblib tasks: they run where :func:`compute_backend` says.

    Parameters
    ----------
    estimator : estimator
    params : dict of str to sequence or distribution
        The grid (``method="grid"``) or the distributions / lists to sample from
        (``method="random"``, sampled with ``random_state``).
    method : {"grid", "random"}
    n_iter : int
        Candidates of the random search.
    cv : int or splitter
        An integer means stratified (classifiers) or plain k-fold with shuffling seeded by
        ``random_state``, so that every backend sees the same folds.
    scoring : str or callable, optional
        Default: the estimator's ``score`` (accuracy / R²).
    progress : callable, optional
        Called with the number of candidates finished.

    Returns
    -------
    GridSearchCV or RandomizedSearchCV
        Fitted; ``best_params_``, ``best_score_``, ``cv_results_``.
    """
    if method not in ("grid", "random"):
        raise ValueError(f"method must be 'grid' or 'random', got {method!r}")
    if not isinstance(params, dict) or not params:
        raise ValueError("params must be a non-empty dict of parameter name to values")
    Grid, Random = _search_classes()
    folds = _default_cv(estimator, np.asarray(y), cv, random_state)
    if method == "grid":
        s = Grid(estimator, params, scoring=scoring, cv=folds, n_jobs=n_jobs, refit=refit,
                 error_score="raise")
    else:
        s = Random(estimator, params, n_iter=n_iter, scoring=scoring, cv=folds, n_jobs=n_jobs,
                   refit=refit, random_state=random_state, error_score="raise")
    s.progress = progress
    s.fit(X, y)
    return s


def _fold_score(estimator, X, y, train, test, scoring):
    from sklearn.base import clone
    from sklearn.metrics import check_scoring

    est = clone(estimator).fit(X[train], y[train])
    return float(check_scoring(est, scoring=scoring)(est, X[test], y[test]))


def cross_val_scores(estimator, X, y, *, cv=5, scoring=None, random_state=0, n_jobs=None,
                     progress=None):
    """Score of ``estimator`` on each of ``cv`` folds (one joblib task per fold).

    Returns
    -------
    ndarray of shape (n_folds,)
    """
    X, y = np.asarray(X), np.asarray(y)
    folds = _default_cv(estimator, y, cv, random_state)
    tasks = [(estimator, X, y, tr, te, scoring) for tr, te in folds.split(X, y)]
    return np.array(map_tasks(_fold_score, tasks, n_jobs=n_jobs, progress=progress))


def _loo_chunk(estimator, X, y, rows, method):
    from sklearn.base import clone

    out = []
    keep = np.ones(len(y), dtype=bool)
    for i in rows:
        keep[i] = False
        est = clone(estimator).fit(X[keep], y[keep])
        keep[i] = True
        out.append(np.ravel(getattr(est, method)(X[i:i + 1]))[0])
    return np.array(out)


def loo_predictions(estimator, X, y, *, method="predict", chunk_size=8, n_jobs=None,
                    progress=None):
    r"""Exact leave-one-out outputs :math:`f^{(-i)}(x_i)`, one refit per row.

    The reference that approximate criteria (DiffLOO, ALO) are checked against.
    Rows are grouped ``chunk_size`` to a task so that a task outweighs its dispatch.

    Parameters
    ----------
    method : {"predict", "decision_function", "predict_proba"}
        Output of the refitted estimator on the left-out row (first column / entry).
    progress : callable, optional
        Called with the number of rows finished.

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    X, y = np.asarray(X), np.asarray(y)
    if not hasattr(estimator, method):
        raise ValueError(f"{type(estimator).__name__} has no {method}")
    n = len(y)
    if n < 3:
        raise ValueError(f"leave-one-out needs at least 3 rows, got {n}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or \
            chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    parts = list(_chunks(np.arange(n), int(chunk_size)))
    tasks = [(estimator, X, y, rows, method) for rows in parts]
    res = map_tasks(_loo_chunk, tasks, n_jobs=n_jobs, progress=progress,
                    weights=[len(p) for p in parts])
    return np.concatenate(res)


@dataclass(frozen=True)
class SparsitySweep:
    """Outcome of :func:`sparsity_sweep`.

    Attributes
    ----------
    hinge_values, l1_values : ndarray
        The μ (rows) and γ (columns) grids.
    counts : ndarray of int, shape (len(hinge_values), len(l1_values))
        Nonzero coefficients (:math:`|w_j| >` ``threshold``, intercept excluded).
    objectives : ndarray of float, same shape
        Lower-level objective at the solution.
    coefs : ndarray, shape (len(hinge_values), len(l1_values), n_features)
    """

    hinge_values: np.ndarray
    l1_values: np.ndarray
    counts: np.ndarray
    objectives: np.ndarray
    coefs: np.ndarray


def _sweep_cell(X, y, mu, gamma, penalty_weight, l2_penalty, penalize_intercept):
    from .selection.bilevel import LowerLevel, make_hyper_model

    lower = LowerLevel(l2_penalty=l2_penalty, hinge_smoothing=float(mu),
                       l1_smoothing=float(gamma), penalize_intercept=penalize_intercept)
    hyper = make_hyper_model("scalar", X.shape[1], penalize_intercept=penalize_intercept)
    Xa = np.c_[X, np.ones(X.shape[0])]
    beta = np.full(hyper.n_hyper, float(penalty_weight))
    r = lower.solve(lower.problem(Xa, y, hyper.penalty_groups, hyper.weights(beta)))
    return r.coef[:-1], float(r.objective)


def sparsity_sweep(X, y, hinge_values, l1_values, *, penalty_weight=0.1, l2_penalty=0.01,
                   threshold=1e-3, penalize_intercept=True, n_jobs=None, progress=None):
    r"""Smoothed elastic-net SVM solutions over a (μ, γ) grid (González Vallejo 2024).

    One joblib task per (μ, γ): the lower level
    :math:`\frac1n\sum_i\ell_\mu(y_i x_i^\top w) + \frac\alpha2\|w\|^2 +
    \beta\sum_j(\sqrt{\gamma^2+w_j^2}-\gamma)` at a fixed scalar β, solved from scratch
    (no warm start, so that the cells are independent and the result does not depend on
    the order the workers run them in).

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Scaled features.
    y : ndarray of ±1
    hinge_values, l1_values : sequence of float > 0
    penalty_weight : float
        The thesis's β (scalar).
    l2_penalty : float
        The thesis's α.
    threshold : float
        The thesis's 0.001 for counting a coefficient as nonzero.

    Returns
    -------
    SparsitySweep
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be 2-D and y of length n_samples, got {X.shape}, {y.shape}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must hold the labels -1 and +1")
    mus = np.asarray(hinge_values, dtype=float).ravel()
    gammas = np.asarray(l1_values, dtype=float).ravel()
    for name, v in (("hinge_values", mus), ("l1_values", gammas)):
        if v.size == 0 or not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise ValueError(f"{name} must be a non-empty sequence of positive numbers")
    tasks = [(X, y, m, g, float(penalty_weight), float(l2_penalty), bool(penalize_intercept))
             for m in mus for g in gammas]
    res = map_tasks(_sweep_cell, tasks, n_jobs=n_jobs, progress=progress)
    coefs = np.array([c for c, _ in res]).reshape(len(mus), len(gammas), X.shape[1])
    objs = np.array([o for _, o in res]).reshape(len(mus), len(gammas))
    counts = np.sum(np.abs(coefs) > threshold, axis=2)
    return SparsitySweep(mus, gammas, counts, objs, coefs)
