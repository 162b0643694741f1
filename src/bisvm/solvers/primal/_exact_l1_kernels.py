r"""Compiled inner loops of the exact weighted (group) L1 solver (:mod:`.exact_l1`).

The working-set columns :math:`X_W` reach these kernels either as a dense, row-major
``XT`` of shape ``(|W|, n)`` (column ``j`` of :math:`X_W` is the contiguous row ``XT[j]``)
or as the CSC arrays ``(indptr, indices, data)`` of :math:`X_W`; ``dense`` says which
(the other arguments are then empty placeholders). Coordinates of the working set are
laid out block by block: block ``b`` holds the local columns
``blk_ptr[b]:blk_ptr[b + 1]`` and carries the weight ``blk_beta[b]`` (0 for an
unpenalised coordinate).
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit

__all__ = ["block_curvature", "cd_quadratic", "group_shrink"]


@njit(inline="always")
def _col_dot_weighted(dense, XT, indptr, indices, data, j, D, u):
    """:math:`\\sum_i X_{ij} D_i u_i`."""
    s = 0.0
    if dense:
        row = XT[j]
        for i in range(row.shape[0]):
            s += row[i] * D[i] * u[i]
    else:
        for p in range(indptr[j], indptr[j + 1]):
            i = indices[p]
            s += data[p] * D[i] * u[i]
    return s


@njit(inline="always")
def _col_axpy(dense, XT, indptr, indices, data, j, a, u):
    """``u += a * X[:, j]``."""
    if dense:
        row = XT[j]
        for i in range(row.shape[0]):
            u[i] += a * row[i]
    else:
        for p in range(indptr[j], indptr[j + 1]):
            u[indices[p]] += a * data[p]


@njit(error_model="numpy")
def block_curvature(dense, XT, indptr, indices, data, D, ridge, blk_ptr):
    r"""Diagonal blocks :math:`H_{bb} = X_b^\top \mathrm{diag}(D) X_b + \mathrm{diag}(r_b)`
    of the working-set Hessian, as eigendecompositions.

    Returns ``(evals, evecs, evec_ptr)``: the eigenvalues of block ``b`` are
    ``evals[blk_ptr[b]:blk_ptr[b + 1]]`` (ascending) and its eigenvectors the columns of
    ``evecs[evec_ptr[b]:evec_ptr[b + 1]].reshape(size, size)``; a singleton block stores
    :math:`H_{jj}` and the eigenvector 1. Cost :math:`O(\sum_b |b|\,\mathrm{nnz}(X_b)
    + |b|^3)`: nothing beyond the diagonal blocks is formed.
    """
    n_blk = blk_ptr.shape[0] - 1
    n = D.shape[0]
    nw = blk_ptr[n_blk]
    evals = np.empty(nw)
    evec_ptr = np.zeros(n_blk + 1, dtype=np.int64)
    for b in range(n_blk):
        m = blk_ptr[b + 1] - blk_ptr[b]
        evec_ptr[b + 1] = evec_ptr[b] + m * m
    evecs = np.empty(evec_ptr[n_blk])
    work = np.zeros(n)
    for b in range(n_blk):
        s0 = blk_ptr[b]
        m = blk_ptr[b + 1] - s0
        H = np.empty((m, m))
        for a in range(m):
            ja = s0 + a
            # one column scattered into a dense work vector, dotted with the others
            if dense:
                for i in range(n):
                    work[i] = XT[ja, i] * D[i]
            else:
                for p in range(indptr[ja], indptr[ja + 1]):
                    work[indices[p]] += data[p] * D[indices[p]]
            for c in range(a, m):
                jc = s0 + c
                s = 0.0
                if dense:
                    for i in range(n):
                        s += work[i] * XT[jc, i]
                else:
                    for p in range(indptr[jc], indptr[jc + 1]):
                        s += work[indices[p]] * data[p]
                H[a, c] = s
                H[c, a] = s
            H[a, a] += ridge[ja]
            if not dense:
                for p in range(indptr[ja], indptr[ja + 1]):
                    work[indices[p]] = 0.0
        if m == 1:
            evals[s0] = H[0, 0]
            evecs[evec_ptr[b]] = 1.0
        else:
            lam, Q = np.linalg.eigh(H)
            for a in range(m):
                evals[s0 + a] = lam[a]
                for c in range(m):
                    evecs[evec_ptr[b] + a * m + c] = Q[a, c]
    return evals, evecs, evec_ptr


@njit(error_model="numpy")
def group_shrink(lam, chat, beta):
    r"""Minimiser in :math:`\hat v` of :math:`\tfrac12 \hat v^\top\Lambda\hat v
    - \hat c^\top \hat v + \beta\|\hat v\|` (the block problem in the eigenbasis).

    Zero when :math:`\|\hat c\| \le \beta`; otherwise
    :math:`\hat v = \rho\,\hat c/(\Lambda\rho + \beta)` with :math:`\rho = \|\hat v\|` the
    root of the secular equation :math:`q(\rho) = \|\hat c/(\Lambda\rho+\beta)\|^{-1} = 1`.
    :math:`q` is increasing and exactly linear for one eigenvalue, so Newton's method on it
    (Moré-Sorensen's trick for trust regions) converges in a few steps; it is safeguarded
    by the bracket :math:`[(\|\hat c\|-\beta)/\lambda_{\max}, (\|\hat c\|-\beta)/\lambda_{\min}]`.
    """
    m = lam.shape[0]
    out = np.zeros(m)
    cn = np.sqrt(np.sum(chat * chat))
    lmax = lam[m - 1]
    if lmax <= 0.0:
        return out  # no curvature at all: leave the block where it is (caller keeps v)
    lmin = max(lam[0], 1e-12 * lmax)
    if beta <= 0.0:
        for a in range(m):
            out[a] = chat[a] / max(lam[a], lmin)
        return out
    if cn <= beta:
        return out
    lo = (cn - beta) / lmax
    hi = min((cn - beta) / lmin, 1e300)
    rho = lo
    for _ in range(100):
        f = 0.0
        fp = 0.0
        for a in range(m):
            den = max(lam[a], lmin) * rho + beta
            t = chat[a] * chat[a] / (den * den)
            f += t
            fp += t * max(lam[a], lmin) / den
        if f <= 0.0:  # every term underflowed: rho is far too large
            hi = rho
            rho = 0.5 * (lo + hi)
            continue
        q = 1.0 / np.sqrt(f)
        if abs(q - 1.0) <= 4e-16:
            break
        if q < 1.0:
            lo = rho
        else:
            hi = rho
        qp = fp * q * q * q
        step = rho - (q - 1.0) / qp if qp > 0.0 else 0.5 * (lo + hi)
        if not (lo < step < hi):
            step = 0.5 * (lo + hi)
        if hi - lo <= 1e-16 * hi:
            break
        rho = step
    for a in range(m):
        out[a] = rho * chat[a] / (max(lam[a], lmin) * rho + beta)
    return out


@njit(error_model="numpy")
def cd_quadratic(dense, XT, indptr, indices, data, D, ridge, grad, w, blk_ptr, blk_beta,
                 evals, evecs, evec_ptr, max_pass, tol):
    r"""Block coordinate descent on the proximal-Newton model of the working set,

    .. math::
        \min_v\; g^\top (v - w) + \tfrac12 (v - w)^\top H (v - w)
              + \sum_b \beta_b \|v_b\|_2,\qquad
        H = X_W^\top \mathrm{diag}(D) X_W + \mathrm{diag}(r),

    each block minimised exactly (soft-thresholding for a singleton, :func:`group_shrink`
    in the eigenbasis of :math:`H_{bb}` for a group). :math:`u = X_W (v - w)` is kept up to
    date, so a pass costs :math:`O(\mathrm{nnz}(X_W) + \sum_b |b|^2)`. Stops after the
    first pass whose largest block move, in gradient units
    :math:`\lambda_{\max}(H_{bb})\|\Delta v_b\|`, is at most ``tol``.

    Returns ``(v, u, n_pass)``.
    """
    n_blk = blk_ptr.shape[0] - 1
    v = w.copy()
    u = np.zeros(D.shape[0])
    gb = np.empty(v.shape[0])
    n_pass = 0
    for _ in range(max_pass):
        n_pass += 1
        move = 0.0
        for b in range(n_blk):
            s0 = blk_ptr[b]
            m = blk_ptr[b + 1] - s0
            if m == 1:
                h = evals[s0]
                if h <= 0.0:
                    continue
                gj = grad[s0] + _col_dot_weighted(dense, XT, indptr, indices, data, s0, D, u) \
                    + ridge[s0] * (v[s0] - w[s0])
                t = v[s0] - gj / h
                thr = blk_beta[b] / h
                new = t - thr if t > thr else (t + thr if t < -thr else 0.0)
                delta = new - v[s0]
                if delta != 0.0:
                    v[s0] = new
                    _col_axpy(dense, XT, indptr, indices, data, s0, delta, u)
                    move = max(move, h * abs(delta))
                continue
            if evals[s0 + m - 1] <= 0.0:
                continue
            for a in range(m):
                j = s0 + a
                gb[a] = grad[j] + _col_dot_weighted(dense, XT, indptr, indices, data, j, D, u) \
                    + ridge[j] * (v[j] - w[j])
            # c = H_bb v_b - g_b in the eigenbasis: chat = Lambda Q^T v_b - Q^T g_b
            Q = evecs[evec_ptr[b]:evec_ptr[b + 1]].reshape((m, m))
            lam = evals[s0:s0 + m]
            chat = np.empty(m)
            for c in range(m):
                qv = 0.0
                qg = 0.0
                for a in range(m):
                    qv += Q[a, c] * v[s0 + a]
                    qg += Q[a, c] * gb[a]
                chat[c] = lam[c] * qv - qg
            vhat = group_shrink(lam, chat, blk_beta[b])
            dn = 0.0
            for a in range(m):
                new = 0.0
                for c in range(m):
                    new += Q[a, c] * vhat[c]
                delta = new - v[s0 + a]
                if delta != 0.0:
                    v[s0 + a] = new
                    _col_axpy(dense, XT, indptr, indices, data, s0 + a, delta, u)
                    dn += delta * delta
            move = max(move, lam[m - 1] * np.sqrt(dn))
        if move <= tol:
            break
    return v, u, n_pass
