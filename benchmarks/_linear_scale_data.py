"""rcv1/news20-shaped synthetic sparse data for bench_linear_scale.py.

Rows are documents: a Poisson number of distinct terms (mean ``nnz_per_row``), each term
drawn from a power-law (Zipf-like) column frequency, ``p_j ∝ (j + 10)^-exponent`` over
randomly permuted columns, with log-normal tf-idf-like values and unit Euclidean row norm
(as rcv1's). Labels come from a sparse hidden weight vector, with ``flip`` of them
flipped; regression targets are the hidden score plus Gaussian noise. Everything is drawn
from one seed, chunk by chunk, so the peak memory of the generator stays near the size of
the result. :func:`load` caches the matrix in /tmp as .npz (uncompressed, so that reading
it back costs no decompression buffers).
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

__all__ = ["make_text_like", "load", "cache_path"]


def make_text_like(n, d, nnz_per_row=50, *, exponent=1.1, flip=0.05, noise=0.1, seed=0,
                   index_dtype=np.int32, chunk=100_000):
    """``(X, y_class, y_reg)``: CSR float64 (n, d) with ``index_dtype`` indices, labels
    ±1 and real targets."""
    rng = np.random.default_rng(seed)
    cdf = np.cumsum((np.arange(d) + 10.0) ** -exponent)
    cdf /= cdf[-1]
    perm = rng.permutation(d)  # frequent columns scattered over the index range
    w_true = np.zeros(d)
    support = rng.choice(d, size=max(1, d // 10), replace=False)
    w_true[support] = rng.standard_normal(support.size)
    counts = np.maximum(1, rng.poisson(nnz_per_row, size=n))
    indptr = np.zeros(n + 1, dtype=np.int64)
    pieces_i, pieces_v = [], []
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        cnt = counts[lo:hi]
        rows = np.repeat(np.arange(hi - lo, dtype=np.int64), cnt)
        cols = perm[np.minimum(np.searchsorted(cdf, rng.random(rows.size)), d - 1)]
        key = np.unique(rows * d + cols)  # sorted by row then column, duplicates merged
        r, cidx = np.divmod(key, d)
        vals = rng.lognormal(0.0, 0.7, size=key.size)
        norms = np.sqrt(np.bincount(r, weights=vals * vals, minlength=hi - lo))
        vals /= norms[r]
        indptr[lo + 1:hi + 1] = np.bincount(r, minlength=hi - lo)
        pieces_i.append(cidx.astype(index_dtype))
        pieces_v.append(vals)
    np.cumsum(indptr, out=indptr)
    indices = np.concatenate(pieces_i)
    data = np.concatenate(pieces_v)
    del pieces_i, pieces_v
    X = sp.csr_matrix((data, indices, indptr.astype(index_dtype)), shape=(n, d))
    score = X @ w_true
    score -= np.median(score)
    scale = float(np.std(score)) or 1.0
    y = np.where(score > 0, 1.0, -1.0)
    flipped = rng.random(n) < flip
    y[flipped] = -y[flipped]
    y_reg = score / scale + noise * rng.standard_normal(n)
    return X, y, y_reg


def cache_path(n, d, nnz_per_row, seed):
    """The /tmp file of a problem."""
    return f"/tmp/bisvm_linear_scale_{n}x{d}_{nnz_per_row}_{seed}.npz"


def load(n, d, nnz_per_row=50, seed=0):
    """:func:`make_text_like` through the /tmp cache (written on first use)."""
    path = cache_path(n, d, nnz_per_row, seed)
    if not os.path.exists(path):
        X, y, y_reg = make_text_like(n, d, nnz_per_row, seed=seed)
        tmp = path + ".part.npz"
        np.savez(tmp, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y,
                 y_reg=y_reg)
        os.replace(tmp, path)
    with np.load(path) as f:
        X = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
        return X, f["y"], f["y_reg"]
