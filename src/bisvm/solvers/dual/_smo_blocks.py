r"""Kernel columns of the SMO solver computed in blocks (numba, one thread).

A kernel column :math:`k(x_s, x_q)` over the active samples :math:`q` is an inner-product
column :math:`a_q = \langle x_s, x_q\rangle` followed by an elementwise transform
(:math:`e^{-\gamma(\lVert x_s\rVert^2 + \lVert x_q\rVert^2 - 2a_q)}` for the RBF kernel,
:math:`(\gamma a_q + c_0)^p` for the polynomial one, ...). Both halves are written so that
the inner loop runs over *targets* :math:`q`, contiguous in memory, and vectorises:

* the inner products read ``XT``, the transpose of the active rows of ``X`` (``d`` rows of
  contiguous length-``n`` vectors, compacted in place when the active set shrinks), one
  ``axpy`` :math:`a \mathrel{+}= x_{sf}\,XT_{f,:}` per nonzero feature of :math:`x_s`,
  in blocks of :data:`BQ` targets so that the accumulator stays in the L1 cache;
* the exponential is evaluated by :func:`exp_block`, a branch-free Cody–Waite reduction
  and degree-13 polynomial (relative error :math:`< 3\cdot10^{-16}`), whose loops the
  compiler vectorises where ``math.exp`` would be a libm call per entry.

Bit-identical dense and sparse columns. Every inner product is the *sequential* sum of
:math:`x_{sf}x_{qf}` over the features in increasing order: the dense ``axpy`` loop adds
one feature at a time to each target's accumulator, and the sparse path walks the CSC
columns of the features of :math:`x_s` in increasing order, so each target receives the
same nonzero products in the same order (a zero product adds an exact :math:`\pm 0`).
The squared norms are the same sequential sums (:func:`sq_norms_dense`,
:func:`sq_norms_csr`) and both paths share the transform, so a sparse and a dense fit of
the same data see the same kernel values to the last bit, take the same SMO steps and
stop at the same iterate (scikit-learn's ``test_sparse.py`` compares them to 1e-7; with
LIBSVM's own sparse/dense summation orders the working-set ties differ).

:func:`block_matvec` (gradient reconstruction, :math:`\sum_c a_c k(x_r, x_c)` over the
support vectors) multiplies blocks of rows with the support vectors by BLAS (sparse rows
scattered into dense blocks, so both forms make the same BLAS calls) and applies the same
transform, so it too is identical for dense and sparse data.
"""

from __future__ import annotations

import math

import numpy as np

from ..._numba import njit
from ._smo_layout import (
    KD_COEF0,
    KD_DATA,
    KD_DEGREE,
    KD_GAMMA,
    KD_INDICES,
    KD_INDPTR,
    KD_KCODE,
    KD_SQN,
    KD_WORK,
    KD_X,
    SX_DOTBUF,
    SX_MARK,
    SX_TOUCHED,
)

#: targets per block: an accumulator of 1024 doubles (8 kB) stays in the L1 cache
BQ = 1024
#: targets per block of the four-column kernel (4 accumulators of 256 doubles: 8 kB)
BQ4 = 256
#: padding between the four accumulator rows (see :func:`acc4`)
ACC_PAD = 8
#: rows per BLAS product of the gradient reconstruction
GEMM_ROWS = 64
#: largest dense copy of the support vectors the reconstruction makes for BLAS
GEMM_MAX_BYTES = 2**28

LINEAR, POLY, RBF, SIGMOID, LAPLACIAN, PRECOMPUTED = 0, 1, 2, 3, 4, 5

# fdlibm's split of log(2): LN2_HI has 21 trailing zero bits, so k * LN2_HI is exact
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
LOG2E = 1.44269504088896338700e00
# below this exp(x) is under 2**-1022: the result is returned as 0
EXP_MIN = -708.0


@njit
def sq_norms_dense(X, out):
    """``out[s] = sum_f X[s, f]**2``, summed sequentially (the order of the sparse
    version: zeros add an exact 0)."""
    for s in range(X.shape[0]):
        acc = 0.0
        for f in range(X.shape[1]):
            acc += X[s, f] * X[s, f]
        out[s] = acc


@njit
def sq_norms_csr(data, indptr, out):
    """``out[s] = sum over the stored entries of row s of v**2`` in index order."""
    for s in range(indptr.shape[0] - 1):
        acc = 0.0
        for k in range(indptr[s], indptr[s + 1]):
            acc += data[k] * data[k]
        out[s] = acc


@njit
def exp_block(x, nb, scale_bits):
    r"""``x[:nb] = exp(x[:nb])`` in place for ``x <= 0`` (the RBF argument).

    :math:`e^x = 2^k e^r` with :math:`k = \mathrm{round}(x/\log 2)` and
    :math:`r = x - k\log 2 \in [-\tfrac12\log 2, \tfrac12\log 2]` (Cody–Waite: the product
    with the high part of :math:`\log 2` is exact); :math:`e^r` by its Taylor polynomial
    of degree 13 (truncation :math:`< 10^{-17}`), :math:`2^k` by writing the exponent
    field (``scale_bits``, an int64 scratch array of length ``>= nb``). Arguments below
    :data:`EXP_MIN` give 0.
    """
    for q in range(nb):
        v0 = x[q]
        v = v0 if v0 > EXP_MIN else EXP_MIN
        t = math.floor(v * LOG2E + 0.5)
        r = (v - t * LN2_HI) - t * LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        x[q] = p
        # the bits of 2**t (0.0 below EXP_MIN)
        scale_bits[q] = ((np.int64(t) + 1023) << 52) if v0 > EXP_MIN else 0
    scale = scale_bits.view(np.float64)
    for q in range(nb):
        x[q] *= scale[q]


@njit
def dense_dots(xs, XT, q0, nb, acc):
    """``acc[:nb] = XT[:, q0:q0+nb].T @ xs`` summed feature by feature in order.

    The nonzero features of ``xs`` are taken eight (then four) at a time, each target's
    running sum updated by their products in turn: the same sequential order with an
    eighth of the accumulator traffic."""
    d = xs.shape[0]
    nz = np.empty(d, dtype=np.int64)
    m = 0
    for f in range(d):
        if xs[f] != 0.0:
            nz[m] = f
            m += 1
    for q in range(nb):
        acc[q] = 0.0
    k = 0
    while k + 8 <= m:
        v0, v1, v2, v3 = xs[nz[k]], xs[nz[k + 1]], xs[nz[k + 2]], xs[nz[k + 3]]
        v4, v5, v6, v7 = xs[nz[k + 4]], xs[nz[k + 5]], xs[nz[k + 6]], xs[nz[k + 7]]
        r0 = XT[nz[k], q0:q0 + nb]
        r1 = XT[nz[k + 1], q0:q0 + nb]
        r2 = XT[nz[k + 2], q0:q0 + nb]
        r3 = XT[nz[k + 3], q0:q0 + nb]
        r4 = XT[nz[k + 4], q0:q0 + nb]
        r5 = XT[nz[k + 5], q0:q0 + nb]
        r6 = XT[nz[k + 6], q0:q0 + nb]
        r7 = XT[nz[k + 7], q0:q0 + nb]
        for q in range(nb):
            a = acc[q] + v0 * r0[q]
            a = a + v1 * r1[q]
            a = a + v2 * r2[q]
            a = a + v3 * r3[q]
            a = a + v4 * r4[q]
            a = a + v5 * r5[q]
            a = a + v6 * r6[q]
            acc[q] = a + v7 * r7[q]
        k += 8
    while k + 4 <= m:
        f0, f1, f2, f3 = nz[k], nz[k + 1], nz[k + 2], nz[k + 3]
        v0, v1, v2, v3 = xs[f0], xs[f1], xs[f2], xs[f3]
        r0 = XT[f0, q0:q0 + nb]
        r1 = XT[f1, q0:q0 + nb]
        r2 = XT[f2, q0:q0 + nb]
        r3 = XT[f3, q0:q0 + nb]
        for q in range(nb):
            a = acc[q] + v0 * r0[q]
            a = a + v1 * r1[q]
            a = a + v2 * r2[q]
            acc[q] = a + v3 * r3[q]
        k += 4
    while k < m:
        v = xs[nz[k]]
        row = XT[nz[k], q0:q0 + nb]
        for q in range(nb):
            acc[q] += v * row[q]
        k += 1


@njit
def acc4(nb):
    """Four accumulator rows of ``nb`` entries, ``nb + ACC_PAD`` apart: rows a multiple
    of 4 kB apart map to the same L1 sets and evict each other in the four-column
    kernel."""
    return np.empty((4, nb + ACC_PAD))


@njit
def dense_dots4(X, r, XT, q0, nb, acc):
    """``acc[u, :nb]`` for the rows ``r[0..3]`` of ``X`` at once (one pass over ``XT``,
    four features per sweep, the features where all four rows are zero skipped; each
    entry is still the sequential sum of :func:`dense_dots`, a zero product adding an
    exact 0). ``acc`` comes from :func:`acc4`."""
    for u in range(4):
        for q in range(nb):
            acc[u, q] = 0.0
    a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
    x0, x1, x2, x3 = X[r[0]], X[r[1]], X[r[2]], X[r[3]]
    d = X.shape[1]
    nz = np.empty(d, dtype=np.int64)
    m = 0
    for f in range(d):
        if x0[f] != 0.0 or x1[f] != 0.0 or x2[f] != 0.0 or x3[f] != 0.0:
            nz[m] = f
            m += 1
    k = 0
    # four features by four rows: 16 coefficients and 4 target rows in registers, one
    # load and one store of each accumulator per four features
    while k + 4 <= m:
        f0, f1, f2, f3 = nz[k], nz[k + 1], nz[k + 2], nz[k + 3]
        b00, b01, b02, b03 = x0[f0], x0[f1], x0[f2], x0[f3]
        b10, b11, b12, b13 = x1[f0], x1[f1], x1[f2], x1[f3]
        b20, b21, b22, b23 = x2[f0], x2[f1], x2[f2], x2[f3]
        b30, b31, b32, b33 = x3[f0], x3[f1], x3[f2], x3[f3]
        r0 = XT[f0, q0:q0 + nb]
        r1 = XT[f1, q0:q0 + nb]
        r2 = XT[f2, q0:q0 + nb]
        r3 = XT[f3, q0:q0 + nb]
        for q in range(nb):
            w0 = r0[q]
            w1 = r1[q]
            w2 = r2[q]
            w3 = r3[q]
            a0[q] = (((a0[q] + b00 * w0) + b01 * w1) + b02 * w2) + b03 * w3
            a1[q] = (((a1[q] + b10 * w0) + b11 * w1) + b12 * w2) + b13 * w3
            a2[q] = (((a2[q] + b20 * w0) + b21 * w1) + b22 * w2) + b23 * w3
            a3[q] = (((a3[q] + b30 * w0) + b31 * w1) + b32 * w2) + b33 * w3
        k += 4
    while k < m:
        f = nz[k]
        v0, v1, v2, v3 = x0[f], x1[f], x2[f], x3[f]
        row = XT[f, q0:q0 + nb]
        for q in range(nb):
            w = row[q]
            a0[q] += v0 * w
            a1[q] += v1 * w
            a2[q] += v2 * w
            a3[q] += v3 * w
        k += 1


@njit
def columns4_block(pool, bases, rows, nr, pos, q0, nb, X, sqn, XT, sqa, kcode, gamma, coef0,
                   degree, acc, bits):
    """Entries ``q0 .. q0+nb-1`` of the columns of the ``nr <= 4`` samples ``rows`` (dense
    data), written at the pool offsets ``bases``; ``rows`` padded to 4 entries."""
    dense_dots4(X, rows, XT, q0, nb, acc)
    for u in range(nr):
        a = acc[u]
        transform(a, nb, sqn[rows[u]], sqa, q0, kcode, gamma, coef0, degree, bits)
        if kcode == RBF and q0 <= pos[u] < q0 + nb:
            a[pos[u] - q0] = 1.0
        b = bases[u] + q0
        for q in range(nb):
            pool[b + q] = a[q]


@njit
def block_columns4(pool, bases, rows, nr, pos, W, kd):
    """Up to four kernel columns in one pass over the transposed active rows (dense
    data): the same values as four calls of :func:`block_column`."""
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, act_s, nth = kd
    acc = acc4(np.int64(BQ4))  # a typed size: one compiled acc4, not one per constant
    bits = np.empty(BQ4, dtype=np.int64)
    for q0 in range(0, W, BQ4):
        columns4_block(pool, bases, rows, nr, pos, q0, min(BQ4, W - q0), X, sqn, XT, sqa,
                       kcode, gamma, coef0, degree, acc, bits)


@njit
def csc_dots(s, data, ind, ptr, sx):
    """``dotbuf[j] = <x_s, x_j>`` for every row ``j`` sharing a feature with ``x_s`` (CSR
    row ``s``, CSC columns in ``sx``), listed in ``touched[:m]``; returns ``m``. The
    features of ``x_s`` are visited in increasing order, so each ``dotbuf[j]`` is the
    sequential sum of the dense path."""
    tdata, tind, tptr, base, dotbuf, mark, touched = sx
    m = 0
    for k in range(ptr[s], ptr[s + 1]):
        f = ind[k]
        v = data[k]
        for kk in range(tptr[f], tptr[f + 1]):
            j = tind[kk]
            if not mark[j]:
                mark[j] = True
                touched[m] = j
                m += 1
            dotbuf[j] += v * tdata[kk]
    return m


@njit
def clear_dots(m, sx):
    dotbuf = sx[SX_DOTBUF]
    mark = sx[SX_MARK]
    touched = sx[SX_TOUCHED]
    for q in range(m):
        j = touched[q]
        dotbuf[j] = 0.0
        mark[j] = False


@njit
def transform(acc, nb, sq_s, sq_t, t0, kcode, gamma, coef0, degree, scale_bits):
    r"""Kernel values from inner products in place: ``acc[q]`` becomes
    :math:`\kappa(a_q)` with the target norms ``sq_t[t0 + q]``."""
    if kcode == RBF:
        for q in range(nb):
            dist = sq_s + sq_t[t0 + q] - 2.0 * acc[q]
            acc[q] = -gamma * (dist if dist > 0.0 else 0.0)
        exp_block(acc, nb, scale_bits)
    elif kcode == POLY and degree == 3.0:
        # the default degree in one pass: u * (u * u) is the product the repeated
        # squaring below forms for the exponent 3 (1 * u, then times u * u), bit for bit
        for q in range(nb):
            u = gamma * acc[q] + coef0
            acc[q] = u * (u * u)
    elif kcode == POLY and degree == 2.0:
        for q in range(nb):  # likewise 1 * (u * u)
            u = gamma * acc[q] + coef0
            acc[q] = u * u
    elif kcode == POLY:
        for q in range(nb):
            acc[q] = gamma * acc[q] + coef0
        # repeated squaring with the exponent's bits outside the loop over targets (the
        # arithmetic of a per-entry power by squaring, but vectorised)
        e = int(degree)
        res = np.ones(nb)
        while e > 0:
            if e & 1:
                for q in range(nb):
                    res[q] *= acc[q]
            e >>= 1
            if e > 0:
                for q in range(nb):
                    acc[q] *= acc[q]
        for q in range(nb):
            acc[q] = res[q]
    elif kcode == SIGMOID:
        for q in range(nb):
            acc[q] = math.tanh(gamma * acc[q] + coef0)


@njit
def column_block(out, s, pos_s, q0, nb, X, sqn, XT, sqa, act_s, dotbuf, sparse, kcode, gamma,
                 coef0, degree, acc, bits):
    """Entries ``q0 .. q0+nb-1`` of the kernel column of sample ``s`` over the active
    samples (``pos_s``: position of ``s`` among them, -1 if inactive) into ``out``.
    Dense data read the compacted transpose ``XT``, sparse data the inner products already
    in ``dotbuf`` (see :func:`csc_dots`). Explicit arrays, no tuples: numba's threaded
    loops cannot capture nested tuples."""
    if sparse:
        for q in range(nb):
            acc[q] = dotbuf[act_s[q0 + q]]
    else:
        dense_dots(X[s], XT, q0, nb, acc)
    transform(acc, nb, sqn[s], sqa, q0, kcode, gamma, coef0, degree, bits)
    if kcode == RBF and q0 <= pos_s < q0 + nb:
        acc[pos_s - q0] = 1.0
    for q in range(nb):
        out[q0 + q] = acc[q]


@njit
def block_column(out, s, pos_s, W, kd):
    """``out[q] = k(x_s, x_{act_s[q]})`` for the ``W`` active samples (one thread)."""
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, act_s, nth = kd
    sparse = ptr.shape[0] > 0
    m = csc_dots(s, data, ind, ptr, sx) if sparse else 0
    acc = np.empty(BQ)
    bits = np.empty(BQ, dtype=np.int64)
    for q0 in range(0, W, BQ):
        column_block(out, s, pos_s, q0, min(BQ, W - q0), X, sqn, XT, sqa, act_s,
                     sx[SX_DOTBUF], sparse, kcode, gamma, coef0, degree, acc, bits)
    if sparse:
        clear_dots(m, sx)


@njit
def sv_transpose(X, cols):
    """``X[cols].T`` as a contiguous ``(d, m)`` array."""
    d = X.shape[1]
    m = cols.shape[0]
    XT = np.empty((d, m))
    for c in range(m):
        for f in range(d):
            XT[f, c] = X[cols[c], f]
    return XT


@njit
def accumulate(total, u, a, nb, c0, cols, coef, row, kcode):
    """``total[u] += sum_q coef[c0+q] a[q]`` in order (``k(x, x) = 1`` exactly for RBF)."""
    t = total[u]
    for q in range(nb):
        if kcode == RBF and cols[c0 + q] == row:
            a[q] = 1.0
        t += coef[c0 + q] * a[q]
    total[u] = t


@njit
def matvec_rows_dense(rows, r0, nr, cols, coef, X, sqn, XTc, sqc, kcode, gamma, coef0, degree,
                      out, acc, bits):
    r"""``out[r0 + u] = sum_c coef[c] k(x_{rows[r0+u]}, x_{cols[c]})`` for ``u < nr <= 4``,
    the sum over ``c`` sequential; ``XTc = X[cols].T`` and ``sqc`` the norms of the
    columns."""
    m = cols.shape[0]
    rr = np.empty(4, dtype=np.int64)
    for u in range(4):
        rr[u] = rows[r0 + min(u, nr - 1)]
    total = np.zeros(4)
    for c0 in range(0, m, BQ):
        nb = min(BQ, m - c0)
        dense_dots4(X, rr, XTc, c0, nb, acc)
        for u in range(nr):
            transform(acc[u], nb, sqn[rr[u]], sqc, c0, kcode, gamma, coef0, degree, bits)
            accumulate(total, u, acc[u], nb, c0, cols, coef, rr[u], kcode)
    for u in range(nr):
        out[r0 + u] = total[u]


@njit
def dense_rows(kd, rows, r0, nb, XR):
    """``XR[:nb] = X[rows[r0:r0+nb]]`` as dense rows (CSR rows scattered into zeros);
    reads only ``kd[:10]``."""
    X = kd[KD_X]
    data = kd[KD_DATA]
    ind = kd[KD_INDICES]
    ptr = kd[KD_INDPTR]
    for u in range(nb):
        s = rows[r0 + u]
        if ptr.shape[0] == 0:
            XR[u, :] = X[s]
        else:
            XR[u, :] = 0.0
            for k in range(ptr[s], ptr[s + 1]):
                XR[u, ind[k]] = data[k]


@njit
def n_features(kd):
    return kd[KD_WORK].shape[0] if kd[KD_INDPTR].shape[0] > 0 else kd[KD_X].shape[1]


@njit
def gemm_rows(rows, r0, nb, cols, coef, kd, XCt, sqc, XR, out):
    r"""``out[r0 + u]`` for ``u < nb`` by one BLAS product of the dense rows with
    ``XCt = X[cols].T``, then the vectorised transform and a sequential sum over ``c``."""
    sqn = kd[KD_SQN]
    kcode = kd[KD_KCODE]
    m = cols.shape[0]
    dense_rows(kd, rows, r0, nb, XR)
    D = np.dot(XR[:nb], XCt)
    bits = np.empty(BQ, dtype=np.int64)
    total = np.zeros(1)
    for u in range(nb):
        row = D[u]
        total[0] = 0.0
        for c0 in range(0, m, BQ):
            n_c = min(BQ, m - c0)
            a = row[c0:c0 + n_c]
            transform(a, n_c, sqn[rows[r0 + u]], sqc, c0, kcode, kd[KD_GAMMA], kd[KD_COEF0],
                      kd[KD_DEGREE], bits)
            accumulate(total, np.int64(0), a, n_c, c0, cols, coef, rows[r0 + u], kcode)
        out[r0 + u] = total[0]


@njit
def gemm_operands(kd, cols):
    """``(X[cols].T, norms of cols, row buffer)`` for :func:`gemm_rows`."""
    m = cols.shape[0]
    d = n_features(kd)
    XC = np.empty((m, d))
    dense_rows(kd, cols, np.int64(0), m, XC)
    sqc = np.empty(m)
    for c in range(m):
        sqc[c] = kd[KD_SQN][cols[c]]
    return np.ascontiguousarray(XC.T), sqc


@njit
def use_gemm(kd, cols):
    """Whether the reconstruction goes through BLAS: when ``X[cols]`` as a dense matrix
    takes at most :data:`GEMM_MAX_BYTES` (dense and sparse data decide alike, so both
    stay bit-identical)."""
    return 8 * cols.shape[0] * n_features(kd) <= GEMM_MAX_BYTES


@njit
def block_matvec(rows, n_rows, cols, coef, kd, out):
    """``out[r] = sum_c coef[c] k(x_{rows[r]}, x_{cols[c]})`` (inner-product kernels).

    When the support vectors fit densely (:func:`use_gemm`) the inner products are BLAS
    products of blocks of :data:`GEMM_ROWS` rows (sparse rows scattered into a dense
    block first, so dense and sparse data make the same BLAS calls); otherwise dense rows
    go four at a time against ``X[cols].T`` and sparse rows one at a time from their CSC
    inner products, in the same sequential summation order."""
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, act_s, nth = kd
    m = cols.shape[0]
    if use_gemm(kd, cols):
        XCt, sqc = gemm_operands(kd, cols)
        XR = np.empty((GEMM_ROWS, XCt.shape[0]))
        for r0 in range(0, n_rows, GEMM_ROWS):
            gemm_rows(rows, r0, min(GEMM_ROWS, n_rows - r0), cols, coef, kd, XCt, sqc, XR,
                      out)
        return
    sqc = np.empty(m)
    for c in range(m):
        sqc[c] = sqn[cols[c]]
    bits = np.empty(BQ, dtype=np.int64)
    if ptr.shape[0] == 0:
        XTc = sv_transpose(X, cols)
        acc = acc4(np.int64(BQ))
        for r0 in range(0, n_rows, 4):
            matvec_rows_dense(rows, r0, min(4, n_rows - r0), cols, coef, X, sqn, XTc, sqc,
                              kcode, gamma, coef0, degree, out, acc, bits)
        return
    dotbuf = sx[SX_DOTBUF]
    a = np.empty(BQ)
    total = np.zeros(1)
    for r in range(n_rows):
        sr = rows[r]
        mm = csc_dots(sr, data, ind, ptr, sx)
        total[0] = 0.0
        for c0 in range(0, m, BQ):
            nb = min(BQ, m - c0)
            for q in range(nb):
                a[q] = dotbuf[cols[c0 + q]]
            transform(a, nb, sqn[sr], sqc, c0, kcode, gamma, coef0, degree, bits)
            accumulate(total, np.int64(0), a, nb, c0, cols, coef, sr, kcode)
        out[r] = total[0]
        clear_dots(mm, sx)


@njit
def compact_active(kd, act_s, old_pos, m, rebuild):
    """Make ``XT`` and ``sqa`` hold the samples ``act_s[:m]``: compacted in place when
    they are a subset of the previous ones in the same order (``old_pos`` their previous
    positions; a forward copy is safe), rebuilt from ``X`` otherwise."""
    X, sqn, data, ind, ptr, work, kcode, gamma, coef0, degree, sx, XT, sqa, kd_act, nth = kd
    for q in range(m):
        kd_act[q] = act_s[q]
        sqa[q] = sqn[act_s[q]]
    if ptr.shape[0] > 0 or XT.shape[0] == 0:
        return
    d = XT.shape[0]
    if rebuild:
        for q in range(m):
            s = act_s[q]
            for f in range(d):
                XT[f, q] = X[s, f]
        return
    for f in range(d):
        row = XT[f]
        for q in range(m):
            row[q] = row[old_pos[act_s[q]]]


@njit
def kernel_diag(sqn, kcode, gamma, coef0, degree):
    """:math:`k(x_s, x_s)` from the sequential squared norms, by the transform of the
    columns (so the diagonal equals each column's own entry to the last bit)."""
    n = sqn.shape[0]
    out = np.ones(n)
    if kcode == RBF:
        return out
    bits = np.empty(BQ, dtype=np.int64)
    acc = np.empty(BQ)
    for q0 in range(0, n, BQ):
        nb = min(BQ, n - q0)
        for q in range(nb):
            acc[q] = sqn[q0 + q]
        transform(acc, nb, 0.0, sqn, q0, kcode, gamma, coef0, degree, bits)
        for q in range(nb):
            out[q0 + q] = acc[q]
    return out
