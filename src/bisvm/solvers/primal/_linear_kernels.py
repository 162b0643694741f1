r"""Compiled row-block products of a linear model's design ``[X, bias]`` for the primal
solvers of the piecewise-quadratic losses (squared hinge, squared ε-insensitive).

The design is never copied: dense row-major ``X`` or CSR ``(data, indices, indptr)`` with
int32 or int64 indices, and the intercept an implicit last feature of constant value
``bias`` (``w`` then has ``d + 1`` entries). Every sample's loss is evaluated from its
margin :math:`z_i = \tilde x_i^\top w` on the fly, so the active set never exists as an
array.

Every kernel works on one block of rows ``lo..hi``. Products :math:`X^\top u` are
reductions over rows, split over a *fixed* partition of the rows into blocks
(:func:`row_blocks`, a function of the data only): each block accumulates its own partial
vector, then :func:`sum_parts` adds the partials block by block in their fixed order.
Threads (the caller runs blocks concurrently; the kernels release the GIL) only decide
who computes which block, never the order of a floating-point sum, so the iterates are
bit-identical for any thread count. Every index into an array (row and nonzero counters,
column indices) is unsigned: a signed index makes numba test for negative wraparound on
each access, which in these loops of two loads and a multiply-add is most of the work
and keeps LLVM from optimising the loop (the kernels run at the speed of scipy's compiled
sparse products only so).

Loss codes: 0 the squared hinge :math:`c\max(0, 1 - yz)^2`; 1 the squared
ε-insensitive loss :math:`c\max(0, |y - z| - \epsilon)^2`.
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit

__all__ = ["SQUARED_HINGE", "SQUARED_EPSILON_INSENSITIVE", "row_blocks", "sum_parts",
           "csr_margins", "dense_margins", "csr_loss_grad", "dense_loss_grad",
           "csr_hess_vec", "dense_hess_vec", "active_curvatures", "csr_hess_vec_rows",
           "dense_hess_vec_rows", "line_sums", "update_margins",
           "row_curvatures", "active_rows"]

SQUARED_HINGE = 0
SQUARED_EPSILON_INSENSITIVE = 1

# Blocks are at most this many (more only adds partial vectors) and hold at least this
# many rows (fewer leaves too little work per block to repay the summation of partials).
_MAX_BLOCKS = 16
_MIN_ROWS = 1024
_ONE = np.uint64(1)


def row_blocks(n, d1, indptr=None, data_bytes=None):
    """Boundaries (``B + 1`` int64) of the fixed row partition: ``B`` blocks of about equal
    nonzeros (CSR, from ``indptr``) or rows (dense), with ``B`` set by the shape and size of
    the data alone, never by the thread count, and small enough that the ``B`` partial
    vectors of ``d1`` floats take at most 1/32 of the data's bytes."""
    cap = int(data_bytes // (32 * 8 * d1)) if data_bytes is not None else _MAX_BLOCKS
    B = max(1, min(_MAX_BLOCKS, n // _MIN_ROWS, cap))
    if indptr is None or indptr[-1] == 0:
        return (np.arange(B + 1, dtype=np.int64) * n) // B
    targets = (np.arange(1, B, dtype=np.int64) * int(indptr[-1])) // B
    inner = np.searchsorted(indptr, targets, side="left").astype(np.int64)
    return np.r_[np.int64(0), np.clip(inner, 0, n), np.int64(n)]


@njit(inline="always")
def _loss(loss, y, z, c, eps):
    """``(value, first, second)`` derivative of ``c · loss`` at the margin ``z``; all zero
    off the active pieces (the active test is strict)."""
    if loss == 0:
        r = 1.0 - y * z
        if r > 0.0:
            return c * r * r, -2.0 * c * y * r, 2.0 * c * y * y
        return 0.0, 0.0, 0.0
    up = (y - eps) - z
    if up > 0.0:
        return c * up * up, -2.0 * c * up, 2.0 * c
    dn = z - (y + eps)
    if dn > 0.0:
        return c * dn * dn, 2.0 * c * dn, 2.0 * c
    return 0.0, 0.0, 0.0


@njit
def sum_parts(parts, out):
    """``out[j] = sum_b parts[b, j]``, the blocks in their fixed order for every ``j``."""
    B, m = parts.shape
    for j in range(m):
        s = 0.0
        for b in range(B):
            s += parts[b, j]
        out[j] = s


@njit
def csr_margins(data, indices, indptr, bias, w, lo, hi, out):
    """``out[i] = x_i^T w[:d] + bias · w[d]`` for the CSR rows ``lo..hi``."""
    d = w.shape[0] - (1 if bias > 0.0 else 0)
    wb = bias * w[d] if bias > 0.0 else 0.0
    for i in range(np.uint64(lo), np.uint64(hi)):
        s = 0.0
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + _ONE])):
            s += data[k] * w[np.uint64(indices[k])]
        out[i] = s + wb


@njit
def dense_margins(X, bias, w, lo, hi, out):
    """:func:`csr_margins` for dense row-major ``X``."""
    d = X.shape[1]
    wb = bias * w[d] if bias > 0.0 else 0.0
    for i in range(np.uint64(lo), np.uint64(hi)):
        s = 0.0
        for j in range(np.uint64(d)):
            s += X[i, j] * w[j]
        out[i] = s + wb


@njit
def csr_loss_grad(data, indices, indptr, bias, lo, hi, y, c, z, loss, eps, gp, dp,
                  want_diag):
    r"""Over the rows ``lo..hi``: ``gp`` :math:`= \sum_i \ell_i'(z_i)\tilde x_i`, with
    ``want_diag`` ``dp`` :math:`= \sum_i \ell_i''(z_i)\tilde x_i^2` (the diagonal of
    the Gauss-Newton part of the Hessian); returns the summed loss."""
    d = gp.shape[0] - (1 if bias > 0.0 else 0)
    gp[:] = 0.0
    if want_diag:
        dp[:] = 0.0
    f = 0.0
    for i in range(np.uint64(lo), np.uint64(hi)):
        v, g1, g2 = _loss(loss, y[i], z[i], c[i], eps)
        f += v
        if g1 == 0.0 and g2 == 0.0:
            continue
        a, b = np.uint64(indptr[i]), np.uint64(indptr[i + _ONE])
        if want_diag:  # one pass over the row for both sums
            for k in range(a, b):
                j = np.uint64(indices[k])
                x = data[k]
                gp[j] += g1 * x
                dp[j] += g2 * x * x
        else:
            for k in range(a, b):
                gp[np.uint64(indices[k])] += g1 * data[k]
        if bias > 0.0:
            gp[d] += g1 * bias
            if want_diag:
                dp[d] += g2 * bias * bias
    return f


@njit
def dense_loss_grad(X, bias, lo, hi, y, c, z, loss, eps, gp, dp, want_diag):
    """:func:`csr_loss_grad` for dense row-major ``X``."""
    d = X.shape[1]
    gp[:] = 0.0
    if want_diag:
        dp[:] = 0.0
    f = 0.0
    for i in range(np.uint64(lo), np.uint64(hi)):
        v, g1, g2 = _loss(loss, y[i], z[i], c[i], eps)
        f += v
        if g1 == 0.0 and g2 == 0.0:
            continue
        for j in range(np.uint64(d)):
            gp[j] += g1 * X[i, j]
        if want_diag:
            for j in range(np.uint64(d)):
                dp[j] += g2 * X[i, j] * X[i, j]
        if bias > 0.0:
            gp[d] += g1 * bias
            if want_diag:
                dp[d] += g2 * bias * bias
    return f


@njit
def csr_hess_vec(data, indices, indptr, bias, lo, hi, y, c, z, loss, eps, v, p):
    r"""Over the rows ``lo..hi``: ``p`` :math:`= \sum_i \ell_i''(z_i)\,(\tilde x_i^\top
    v)\,\tilde x_i` (the Gauss-Newton product; only active rows are read)."""
    d = p.shape[0] - (1 if bias > 0.0 else 0)
    p[:] = 0.0
    for i in range(np.uint64(lo), np.uint64(hi)):
        h = _loss(loss, y[i], z[i], c[i], eps)[2]
        if h == 0.0:
            continue
        t = bias * v[d] if bias > 0.0 else 0.0
        a, b = np.uint64(indptr[i]), np.uint64(indptr[i + _ONE])
        for k in range(a, b):
            t += data[k] * v[np.uint64(indices[k])]
        t *= h
        for k in range(a, b):
            p[np.uint64(indices[k])] += t * data[k]
        if bias > 0.0:
            p[d] += t * bias


@njit
def dense_hess_vec(X, bias, lo, hi, y, c, z, loss, eps, v, p):
    """:func:`csr_hess_vec` for dense row-major ``X``."""
    d = X.shape[1]
    p[:] = 0.0
    for i in range(np.uint64(lo), np.uint64(hi)):
        h = _loss(loss, y[i], z[i], c[i], eps)[2]
        if h == 0.0:
            continue
        t = bias * v[d] if bias > 0.0 else 0.0
        for j in range(np.uint64(d)):
            t += X[i, j] * v[j]
        t *= h
        for j in range(np.uint64(d)):
            p[j] += t * X[i, j]
        if bias > 0.0:
            p[d] += t * bias


@njit
def active_curvatures(y, c, z, loss, eps, rows, h):
    r"""The active rows (ascending) and their curvatures :math:`\ell_i''(z_i)` into
    ``rows`` and ``h``; returns their number."""
    m = 0
    for i in range(np.uint64(z.shape[0])):
        hi = _loss(loss, y[i], z[i], c[i], eps)[2]
        if hi > 0.0:
            rows[m] = i
            h[m] = hi
            m += 1
    return m


@njit
def csr_hess_vec_rows(data, indices, indptr, bias, rows, h, lo, hi, v, p):
    r"""``p`` :math:`= \sum_r h_r\,(\tilde x_{i_r}^\top v)\,\tilde x_{i_r}` over the
    listed rows ``rows[lo:hi]`` (the active rows of a Newton step, listed once)."""
    d = p.shape[0] - (1 if bias > 0.0 else 0)
    p[:] = 0.0
    for r in range(np.uint64(lo), np.uint64(hi)):
        i = np.uint64(rows[r])
        t = bias * v[d] if bias > 0.0 else 0.0
        a, b = np.uint64(indptr[i]), np.uint64(indptr[i + _ONE])
        for k in range(a, b):
            t += data[k] * v[np.uint64(indices[k])]
        t *= h[r]
        for k in range(a, b):
            p[np.uint64(indices[k])] += t * data[k]
        if bias > 0.0:
            p[d] += t * bias


@njit
def dense_hess_vec_rows(X, bias, rows, h, lo, hi, v, p):
    """:func:`csr_hess_vec_rows` for dense row-major ``X``."""
    d = X.shape[1]
    p[:] = 0.0
    for r in range(np.uint64(lo), np.uint64(hi)):
        i = np.uint64(rows[r])
        t = bias * v[d] if bias > 0.0 else 0.0
        for j in range(np.uint64(d)):
            t += X[i, j] * v[j]
        t *= h[r]
        for j in range(np.uint64(d)):
            p[j] += t * X[i, j]
        if bias > 0.0:
            p[d] += t * bias


@njit
def line_sums(lo, hi, y, c, z, q, loss, eps, delta):
    r"""Over the rows ``lo..hi``, along the margins :math:`z + \delta q`:
    :math:`\sum_i \ell_i'\,q_i`, :math:`\sum_i \ell_i''\,q_i^2` and
    :math:`\sum_i |\ell_i' q_i|` (a scale for the stopping test)."""
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for i in range(np.uint64(lo), np.uint64(hi)):
        qi = q[i]
        if qi == 0.0:
            continue
        _, g1, g2 = _loss(loss, y[i], z[i] + delta * qi, c[i], eps)
        s1 += g1 * qi
        s2 += g2 * qi * qi
        s3 += abs(g1 * qi)
    return s1, s2, s3


@njit
def update_margins(lo, hi, y, c, z, q, loss, eps, delta):
    """``z += delta · q`` over the rows ``lo..hi``; returns how many rows changed between
    active and inactive (zero after a full step: the quadratic model was the objective)."""
    m = 0
    for i in range(np.uint64(lo), np.uint64(hi)):
        before = _loss(loss, y[i], z[i], c[i], eps)[2] > 0.0
        z[i] += delta * q[i]
        after = _loss(loss, y[i], z[i], c[i], eps)[2] > 0.0
        if before != after:
            m += 1
    return m


@njit
def row_curvatures(y, c, z, loss, eps, lo, hi, out):
    r"""``out[:hi-lo]`` the second derivatives :math:`\ell_i''(z_i)` of rows ``lo..hi``."""
    for i in range(lo, hi):
        out[i - lo] = _loss(loss, y[i], z[i], c[i], eps)[2]


@njit
def active_rows(y, z, loss, eps):
    """The rows on an active piece (positive loss at unit cost), ascending, as int64."""
    n = z.shape[0]
    m = 0
    for i in range(n):
        if _loss(loss, y[i], z[i], 1.0, eps)[2] > 0.0:
            m += 1
    out = np.empty(m, dtype=np.int64)
    m = 0
    for i in range(n):
        if _loss(loss, y[i], z[i], 1.0, eps)[2] > 0.0:
            out[m] = i
            m += 1
    return out

