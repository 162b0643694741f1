r"""The design :math:`[X, \text{bias}]` of a linear SVM as the primal solvers see it: the
caller's arrays, row blocks and compiled products, and nothing held per sample but what
the solver asks for.

* **No copy of the data.** CSR float64 with int32 or int64 indices and dense row-major
  float64 are used as given (``shares_memory`` with the caller's arrays holds); any other
  format or dtype is converted once, and :attr:`LinearDesign.copied` says so. The
  intercept is an implicit last feature of constant value ``bias`` (LIBLINEAR's ``-B``,
  Fan et al. 2008, Appendix), never an appended column.
* **Deterministic threads.** :math:`X^\top u` products are reduced over a fixed row
  partition (:func:`~bisvm.solvers.primal._linear_kernels.row_blocks`), so results are
  bit-identical for every ``n_jobs``.
* **Bounded work memory.** The partials take at most 1/32 of the data's bytes; the Gram
  matrix of the direct Newton solve is built from row chunks and allowed only when it is
  small beside the data (:meth:`LinearDesign.direct_ok`).
"""

from __future__ import annotations

import contextlib
import numbers
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

from . import _linear_kernels as K

__all__ = ["LinearDesign", "resolve_n_jobs"]

# Bytes of row data per chunk when the Gram matrix is formed.
_CHUNK_BYTES = 4 << 20
# A direct solve may use a Gram matrix (and its factor) of this many bytes whatever the
# data's size: small problems need no bound.
_SMALL_GRAM_BYTES = 16 << 20


_CONTROLLER = []


def _blas_controller():
    """One threadpoolctl controller for the process (finding the BLAS libraries costs
    milliseconds; limiting through a found controller, microseconds)."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def resolve_n_jobs(n_jobs):
    """Threads for ``n_jobs`` (None: 1; -1: all of numba's threads); a ``ValueError``
    names the parameter otherwise."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0 \
            or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
    limit = numba.config.NUMBA_NUM_THREADS
    return limit if n_jobs == -1 else max(1, min(int(n_jobs), limit))


class LinearDesign:
    """The design ``[X, bias]`` (``bias <= 0``: no intercept feature) with its row blocks.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, d)
    bias : float
    n_jobs : int or None
        Threads for the products (results do not depend on it).
    """

    def __init__(self, X, bias=0.0, *, n_jobs=None):
        bias = float(bias)
        if not np.isfinite(bias):
            raise ValueError(f"bias must be finite, got {bias!r}")
        self.bias = max(bias, 0.0)
        self.n_threads = resolve_n_jobs(n_jobs)
        self.copied = False
        if sp.issparse(X):
            if X.format != "csr" or X.dtype != np.float64 or \
                    X.indices.dtype not in (np.int32, np.int64) or \
                    X.indptr.dtype != X.indices.dtype:
                X = sp.csr_matrix(X, dtype=np.float64)
                self.copied = True
            self.csr = (X.data, X.indices, X.indptr)
            self.nbytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
            indptr = X.indptr
        else:
            Xa = np.asarray(X)
            if Xa.ndim != 2:
                raise ValueError(f"X must be 2-D, got shape {Xa.shape}")
            if Xa.dtype != np.float64 or not Xa.flags.c_contiguous:
                Xa = np.ascontiguousarray(Xa, dtype=np.float64)
                self.copied = True
            X = Xa
            self.csr = None
            self.nbytes = X.nbytes
            indptr = None
        self.X = X
        self.n, self.d = X.shape
        self.d1 = self.d + (1 if self.bias > 0 else 0)
        self.bounds = K.row_blocks(self.n, self.d1, indptr, self.nbytes)
        B = self.bounds.shape[0] - 1
        self._parts = np.empty((B, self.d1))
        self._dparts = None
        self._pool = None

    @property
    def n_blocks(self):
        """The number of row blocks (fixed by the data)."""
        return self.bounds.shape[0] - 1

    @contextlib.contextmanager
    def threads(self):
        """Run the enclosed products on ``n_jobs`` threads (one block per task; the
        compiled kernels release the GIL), with BLAS held to one thread: the solvers' BLAS
        calls are vector operations of length ``d``, too short to repay a pool."""
        pool = ThreadPoolExecutor(self.n_threads) if self.n_threads > 1 else None
        self._pool = pool
        try:
            with _blas_controller().limit(limits=1, user_api="blas"):
                yield self
        finally:
            self._pool = None
            if pool is not None:
                pool.shutdown()

    def _blocks(self, task):
        """``[task(b, lo, hi) for each block b of rows lo..hi]``, concurrently when a pool
        runs; the results in block order."""
        bounds = self.bounds
        spans = [(b, int(bounds[b]), int(bounds[b + 1])) for b in range(self.n_blocks)]
        if self._pool is None or len(spans) == 1:
            return [task(*span) for span in spans]
        return list(self._pool.map(lambda span: task(*span), spans))

    def margins(self, w, out=None):
        r""":math:`\tilde X w` (``w`` of length ``d1``) into ``out`` (new if None)."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        out = np.empty(self.n) if out is None else out
        if self.csr is not None:
            data, indices, indptr = self.csr
            self._blocks(lambda b, lo, hi: K.csr_margins(data, indices, indptr, self.bias, w,
                                                         lo, hi, out))
        else:
            self._blocks(lambda b, lo, hi: K.dense_margins(self.X, self.bias, w, lo, hi, out))
        return out

    def loss_grad(self, y, c, z, loss, eps=0.0, want_diag=False):
        r"""``(Σ_i c_i ℓ_i, Σ_i ℓ_i' x̃_i, Σ_i ℓ_i'' x̃_i²)`` at margins ``z`` (the last
        None unless ``want_diag``)."""
        if want_diag and self._dparts is None:
            self._dparts = np.empty_like(self._parts)
        parts, dparts = self._parts, self._dparts

        def task(b, lo, hi):
            dp = dparts[b] if want_diag else parts[b, :0]
            if self.csr is not None:
                return K.csr_loss_grad(*self.csr, self.bias, lo, hi, y, c, z, loss, eps,
                                       parts[b], dp, want_diag)
            return K.dense_loss_grad(self.X, self.bias, lo, hi, y, c, z, loss, eps,
                                     parts[b], dp, want_diag)

        f = _ordered_sum(self._blocks(task))
        g = np.empty(self.d1)
        K.sum_parts(parts, g)
        diag = None
        if want_diag:
            diag = np.empty(self.d1)
            K.sum_parts(dparts, diag)
        return f, g, diag

    def hess_vec(self, y, c, z, loss, eps, v):
        r""":math:`\sum_i \ell_i''(z_i)\,(\tilde x_i^\top v)\,\tilde x_i`."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        parts = self._parts

        def task(b, lo, hi):
            if self.csr is not None:
                K.csr_hess_vec(*self.csr, self.bias, lo, hi, y, c, z, loss, eps, v, parts[b])
            else:
                K.dense_hess_vec(self.X, self.bias, lo, hi, y, c, z, loss, eps, v, parts[b])

        self._blocks(task)
        out = np.empty(self.d1)
        K.sum_parts(parts, out)
        return out

    def curvature_list(self, y, c, z, loss, eps=0.0):
        """``(rows, h, starts)``: the active rows at ``z`` (int32 while ``n`` fits), their
        curvatures, and where each row block starts in the list: the Hessian of one Newton
        step, listed once for all its products (:meth:`hess_vec_rows`)."""
        rows = np.empty(self.n, dtype=np.int32 if self.n < 2**31 else np.int64)
        h = np.empty(self.n)
        m = K.active_curvatures(y, c, z, loss, eps, rows, h)
        rows, h = rows[:m], h[:m]
        return rows, h, np.searchsorted(rows, self.bounds).astype(np.int64)

    def hess_vec_rows(self, hessian, v):
        r""":math:`\sum_r h_r (\tilde x_{i_r}^\top v)\,\tilde x_{i_r}` for ``hessian`` from
        :meth:`curvature_list`, block by block as :meth:`hess_vec`."""
        rows, h, starts = hessian
        v = np.ascontiguousarray(v, dtype=np.float64)
        parts = self._parts

        def task(b, lo, hi):
            r0, r1 = int(starts[b]), int(starts[b + 1])
            if self.csr is not None:
                K.csr_hess_vec_rows(*self.csr, self.bias, rows, h, r0, r1, v, parts[b])
            else:
                K.dense_hess_vec_rows(self.X, self.bias, rows, h, r0, r1, v, parts[b])

        self._blocks(task)
        out = np.empty(self.d1)
        K.sum_parts(parts, out)
        return out

    def line_search(self, y, c, z, q, loss, eps, wRs, sRs):
        r"""The exact minimiser :math:`\delta > 0` of :math:`\varphi(\delta) = \delta\,
        w^\top R s + \tfrac12\delta^2 s^\top R s + \sum_i c_i\ell_i(z_i + \delta q_i)`.

        :math:`\varphi'` is piecewise linear and non-decreasing; Newton's method on it,
        safeguarded by bisection of the bracket :math:`\varphi'(lo) < 0 < \varphi'(hi)`,
        lands on its root as soon as it reaches the root's linear piece. Each evaluation is
        one pass over the margins, with no per-sample storage (the sort of the breakpoints
        in :func:`~bisvm.solvers.primal.finite_newton.exact_line_search` needs several
        arrays of length ``n``). Starts at the Newton step ``δ = 1``.
        """
        lo, hi, delta = 0.0, np.inf, 1.0
        for _ in range(200):
            sums = self._blocks(lambda b, r0, r1, t=delta: K.line_sums(r0, r1, y, c, z, q,
                                                                       loss, eps, t))
            s1, s2, s3 = (_ordered_sum(col) for col in zip(*sums))
            slope = wRs + delta * sRs + s1
            curv = sRs + s2
            if abs(slope) <= 1e-13 * (abs(wRs) + delta * abs(sRs) + s3):
                return delta
            if slope < 0:
                lo = delta
            else:
                hi = delta
            new = delta - slope / curv if curv > 0 else np.nan
            if not lo < new < hi:
                new = 0.5 * (lo + hi) if np.isfinite(hi) else 2.0 * max(delta, 1.0)
            if not np.isfinite(new) or (np.isfinite(hi) and hi - lo <= 4e-16 * hi):
                break
            delta = new
        if not np.isfinite(hi):
            raise ValueError("the line-search objective is unbounded below (R not positive "
                             "definite on the search direction)")
        return delta

    def step_margins(self, y, c, z, q, loss, eps, delta):
        """``z += delta · q`` in place; the number of rows that changed piece."""
        delta = float(delta)
        return sum(self._blocks(lambda b, lo, hi: K.update_margins(lo, hi, y, c, z, q, loss,
                                                                   eps, delta)))

    def active_rows(self, y, z, loss, eps=0.0):
        """The rows on an active piece, ascending (int64)."""
        return K.active_rows(y, z, loss, eps)

    def direct_ok(self, limit):
        """Whether a direct (Cholesky) Newton solve fits: ``d1 <= limit`` and its Gram
        matrix with its factor (two ``d1 x d1`` floats, plus a chunk product) within a
        quarter of the data's bytes, or small in absolute terms."""
        gram = 24.0 * self.d1 * self.d1
        return self.d1 <= limit and (gram <= 0.25 * self.nbytes or gram <= _SMALL_GRAM_BYTES)

    def gram(self, y, c, z, loss, eps=0.0):
        r""":math:`\sum_i \ell_i''(z_i)\,\tilde x_i \tilde x_i^\top` (dense ``d1 x d1``),
        formed from row chunks of the active rows so that no copy of ``X`` exists."""
        d, d1, bias = self.d, self.d1, self.bias
        G = np.zeros((d1, d1))
        row_bytes = max(1.0, self.nbytes / max(self.n, 1))
        step = max(64, int(_CHUNK_BYTES // row_bytes))
        h = np.empty(min(step, self.n))
        for lo in range(0, self.n, step):
            hi = min(self.n, lo + step)
            K.row_curvatures(y, c, z, loss, eps, lo, hi, h)
            hc = h[: hi - lo]
            act = np.flatnonzero(hc > 0)
            if act.size == 0:
                continue
            Xa = self._rows(lo, hi)[act]
            ha = hc[act]
            if sp.issparse(Xa):
                G[:d, :d] += (Xa.T @ sp.diags(ha) @ Xa).toarray()
                col = np.asarray(Xa.T @ ha).ravel()
            else:
                G[:d, :d] += Xa.T @ (Xa * ha[:, None])
                col = Xa.T @ ha
            if bias > 0:
                G[:d, d] += bias * col
                G[d, :d] += bias * col
                G[d, d] += bias * bias * float(ha.sum())
        return G

    def _rows(self, lo, hi):
        """Rows ``lo..hi`` as a view (CSR: sharing the caller's arrays)."""
        if self.csr is None:
            return self.X[lo:hi]
        data, indices, indptr = self.csr
        s, e = int(indptr[lo]), int(indptr[hi])
        return sp.csr_matrix((data[s:e], indices[s:e], indptr[lo:hi + 1] - s),
                             shape=(hi - lo, self.d))



def _ordered_sum(values):
    """Sum in the blocks' order (the same order for any thread count)."""
    total = 0.0
    for v in values:
        total += float(v)
    return total
