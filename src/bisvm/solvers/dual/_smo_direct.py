r"""Kernel values entry by entry for the SMO solver's column provider (numba).

:mod:`bisvm.solvers.dual._smo_columns` computes the inner-product kernels (linear,
polynomial, RBF, sigmoid) in blocks (:mod:`bisvm.solvers.dual._smo_blocks`); this module
holds what is evaluated one entry at a time: a precomputed Gram row, the Laplacian kernel
on dense and on CSR rows, and the transform of one inner product into a kernel value
(:func:`from_dot`, the inner-product kernels on CSR rows for the Laplacian's scatter
path). Why apart: these routines share neither the cache nor the blocked products, only
the kernel-data tuple ``kd`` (see :mod:`bisvm.solvers.dual._smo_columns`).

The Laplacian kernel scatters :math:`x_s` into the zero vector ``work`` and uses
:math:`\lVert x_s - x_j\rVert_1 = \lVert x_s\rVert_1 + \sum_{k\in\mathrm{nnz}(x_j)}
(|x_{sk} - x_{jk}| - |x_{sk}|)`, so that a sparse row costs its nonzeros only.
"""

from __future__ import annotations

import math

from ..._numba import njit

# kernel codes, as in bisvm.kernels.KERNEL_CODES
LINEAR, POLY, RBF, SIGMOID, LAPLACIAN, PRECOMPUTED = 0, 1, 2, 3, 4, 5


@njit(inline="always")
def _ipow(base, degree):
    """``base ** degree`` for a non-negative integer ``degree`` by repeated squaring
    (``pow`` with a float exponent costs several times more per kernel entry)."""
    result = 1.0
    e = int(degree)
    while e > 0:
        if e & 1:
            result *= base
        base *= base
        e >>= 1
    return result


@njit(inline="always")
def from_dot(kcode, dot, sq_a, sq_b, same, gamma, coef0, degree):
    """Kernel value from an inner product (all kernels but Laplacian / precomputed)."""
    if kcode == RBF:
        dist = sq_a + sq_b - 2.0 * dot
        if dist < 0.0 or same:
            dist = 0.0
        return math.exp(-gamma * dist)
    if kcode == LINEAR:
        return dot
    if kcode == POLY:
        return _ipow(gamma * dot + coef0, degree)
    return math.tanh(gamma * dot + coef0)


@njit(fastmath=True)
def fill_dense(out, s, targets, n_targets, X, sqn, kcode, gamma, coef0, degree):
    """A precomputed Gram row, or the dense Laplacian kernel entry by entry."""
    d = X.shape[1]
    xs = X[s]
    if kcode == PRECOMPUTED:
        for q in range(n_targets):
            out[q] = X[s, targets[q]]
        return
    for q in range(n_targets):
        xj = X[targets[q]]
        acc = 0.0
        for f in range(d):
            acc += abs(xs[f] - xj[f])
        out[q] = math.exp(-gamma * acc)


@njit(inline="always")
def scatter_row(s, data, ind, ptr, work):
    """``work[indices of x_s] = x_s``; returns :math:`\\lVert x_s\\rVert_1`."""
    l1 = 0.0
    for k in range(ptr[s], ptr[s + 1]):
        work[ind[k]] = data[k]
        l1 += abs(data[k])
    return l1


@njit(inline="always")
def clear_row(s, ind, ptr, work):
    """Zero the entries of ``work`` that :func:`scatter_row` set for ``x_s``."""
    for k in range(ptr[s], ptr[s + 1]):
        work[ind[k]] = 0.0


@njit(inline="always")
def sparse_value(j, s, data, ind, ptr, work, l1_s, sqn, kcode, gamma, coef0, degree):
    """:math:`k(x_s, x_j)` with :math:`x_s` scattered in ``work``."""
    if kcode == LAPLACIAN:
        acc = l1_s
        for k in range(ptr[j], ptr[j + 1]):
            v = work[ind[k]]
            acc += abs(v - data[k]) - abs(v)
        if acc < 0.0 or j == s:
            acc = 0.0
        return math.exp(-gamma * acc)
    dot = 0.0
    for k in range(ptr[j], ptr[j + 1]):
        dot += data[k] * work[ind[k]]
    return from_dot(kcode, dot, sqn[s], sqn[j], j == s, gamma, coef0, degree)


@njit(fastmath=True)
def fill_sparse(out, s, targets, n_targets, data, ind, ptr, work, sqn, kcode, gamma, coef0,
                 degree):
    """``out[q] = k(x_s, x_{targets[q]})`` on CSR rows, :math:`x_s` scattered once."""
    l1_s = scatter_row(s, data, ind, ptr, work)
    for q in range(n_targets):
        out[q] = sparse_value(targets[q], s, data, ind, ptr, work, l1_s, sqn, kcode, gamma,
                               coef0, degree)
    clear_row(s, ind, ptr, work)


@njit
def matvec_laplacian_sparse(rows, n_rows, cols, coef, kd, out):
    """``out[r] = sum_c coef[c] k(x_{rows[r]}, x_{cols[c]})`` for the Laplacian kernel on
    CSR rows, each row scattered once."""
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, act_s, nth = kd
    m = cols.shape[0]
    for r in range(n_rows):
        sr = rows[r]
        l1_r = scatter_row(sr, data, ind, ptr, work)
        acc = 0.0
        for c in range(m):
            acc += coef[c] * sparse_value(cols[c], sr, data, ind, ptr, work, l1_r, sqn, kcode,
                                          gamma, coef0, degree)
        out[r] = acc
        clear_row(sr, ind, ptr, work)


@njit
def matvec_dense_direct(rows, n_rows, cols, coef, kd, out):
    """Precomputed Gram rows, or the Laplacian kernel entry by entry."""
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, act_s, nth = kd
    m = cols.shape[0]
    if kcode == PRECOMPUTED:
        for r in range(n_rows):
            row = X[rows[r]]
            acc = 0.0
            for c in range(m):
                acc += coef[c] * row[cols[c]]
            out[r] = acc
        return
    d = X.shape[1]
    for r in range(n_rows):
        xr = X[rows[r]]
        acc = 0.0
        for c in range(m):
            xc = X[cols[c]]
            dist = 0.0
            for f in range(d):
                dist += abs(xr[f] - xc[f])
            acc += coef[c] * math.exp(-gamma * dist)
        out[r] = acc
