r"""Compiled epochs of the dual coordinate descent of :mod:`bisvm.solvers.dual.dual_cd`.

One call runs one epoch (a pass over the active samples in a fresh random order) in place
on explicit arrays, for dense row-major ``X`` and for CSR ``(data, indices, indptr)``; the
per-sample quantities are packed in one 32-byte record per sample (:func:`pack_state`).
The intercept is an implicit last feature of constant value ``bias`` (no augmented copy of
``X`` is made); ``w`` has ``d + 1`` entries when ``bias > 0``.

Per sample ``i`` (Hsieh et al. 2008, Alg. 1 with the shrinking of their §3.2):

* :math:`G = y_i w^\top x_i - 1 + D_{ii}\alpha_i` (partial derivative of the dual),
* projected gradient :math:`PG` = ``G`` clipped by the bounds ``0 <= α_i <= U_i``; a
  sample at a bound whose gradient points outwards by more than the previous epoch's
  extreme ``PGmax_old``/``PGmin_old`` is shrunk (moved behind ``active_size``),
* :math:`\alpha_i \leftarrow \min(\max(\alpha_i - G/Q_{ii}, 0), U_i)`,
  :math:`w \mathrel{+}= (\alpha_i - \alpha_i^{old})\, y_i x_i`.

Each epoch also returns the exact change of the dual objective (the sum of the
per-step changes :math:`G\delta + \tfrac12\bar Q_{ii}\delta^2`, so the caller tracks the
dual objective without an :math:`O(n + d)` pass per epoch) and the sum of the visited
samples' duality-gap terms (Fenchel-Young gaps, each :math:`\ge 0`), the estimate that
decides when the exact gap is worth a pass over ``X`` (:func:`loss_sum`).

The random order makes every row a cache miss once ``X`` outgrows the cache; the epochs
prefetch the row and per-sample entries ``_AHEAD`` samples ahead (the CSR row pointers
twice as far, and the entries of ``w`` a row will read ``_W_AHEAD`` samples ahead), which
hides most of that latency. The arithmetic, and therefore
the iterates, are unchanged. CSR column indices are read as unsigned (they are never
negative), which spares numba's negative-index wraparound test on every access of ``w``.
"""

from __future__ import annotations

import numpy as np

from ..._numba import njit, prefetch

__all__ = ["rng_state", "pack_state", "epoch", "dual_objective", "svr_dual_objective",
           "row_sq_norms_csr", "shuffle_prefix", "loss_sum", "ALPHA"]


def rng_state(seed):
    """State of the epochs' permutation generator (SplitMix64, one ``uint64``): explicit
    rather than numba's global ``np.random`` so that concurrent fits (``nogil`` threads)
    do not share a stream, and cheaper per draw than ``np.random.randint``."""
    return np.array([int(seed) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


@njit
def _splitmix64(state):
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(fastmath=True)
def _dot_dense(X, i, w, d, bias):
    s = 0.0
    for j in range(d):  # X[i] @ w[:d]
        s += X[i, j] * w[j]
    if bias > 0.0:
        s += bias * w[d]
    return s


@njit(fastmath=True)
def _dot_csr(data, indices, indptr, i, w, d, bias):
    s = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        s += data[p] * w[np.uint64(indices[p])]
    if bias > 0.0:
        s += bias * w[d]
    return s


@njit(fastmath=True)
def _axpy_csr(data, indices, indptr, i, w, d, bias, step):
    for p in range(indptr[i], indptr[i + 1]):  # w[:d] += step * x_i
        w[np.uint64(indices[p])] += step * data[p]
    if bias > 0.0:
        w[d] += step * bias


@njit(fastmath=True)
def _axpy_dense(X, i, w, d, bias, step):
    for j in range(d):  # w[:d] += step * X[i]
        w[j] += step * X[i, j]
    if bias > 0.0:
        w[d] += step * bias


# samples of look-ahead for the prefetches of the rows (far enough for a memory access,
# near enough for the lines to stay in cache) and of the entries of w a row reads (its
# indices are in cache by then)
_AHEAD = 4
_W_AHEAD = 2

# Columns of the per-sample state ``S`` (one row of 4 float64 per sample): label (the
# target for regression), dual variable, Q_ii + D_ii, and the box: the upper bound U_i of
# an unsquared loss (D_ii = 0), or D_ii = 1/(2C_i) of a squared one (U_i = inf). One
# 32-byte record aligned on 32 bytes instead of five arrays, so that visiting a sample in
# random order touches one cache line, not five.
Y, ALPHA, QD, BOX = 0, 1, 2, 3
_WIDTH = 4


def pack_state(y, alpha, qd, diag, upper, squared):
    """The per-sample state ``S`` of the epochs (columns ``Y, ALPHA, QD, BOX``; ``BOX``
    is ``diag`` when ``squared``, else ``upper``), its rows aligned on cache-line
    boundaries."""
    n = np.shape(y)[0]
    buf = np.empty(n * _WIDTH + 8)
    off = (-buf.ctypes.data % 64) // 8
    S = buf[off:off + n * _WIDTH].reshape(n, _WIDTH)
    S[:, Y] = y
    S[:, ALPHA] = alpha
    S[:, QD] = qd
    S[:, BOX] = diag if squared else upper
    return S


def state_diag(S, squared):
    """:math:`D_{ii}` of every sample from the packed state."""
    return S[:, BOX].copy() if squared else np.zeros(S.shape[0])


@njit
def _box(S, i, squared):
    """``(D_ii, U_i)`` of sample ``i``."""
    if squared:
        return S[i, BOX], np.inf
    return 0.0, S[i, BOX]


@njit
def _prefetch_sample(i, S):
    prefetch(S, i * _WIDTH)


@njit
def _prefetch_dense(X, index, s, active_size, S):
    if s + _AHEAD < active_size:
        i = index[s + _AHEAD]
        d = X.shape[1]
        start = i * d
        # the first lines only: the hardware prefetcher follows a sequential row
        for j in range(0, min(d, 32), 8):
            prefetch(X, start + j)
        _prefetch_sample(i, S)


@njit
def _prefetch_csr(data, indices, indptr, index, s, active_size, S, w):
    if s + _W_AHEAD < active_size:
        # w outgrows the L2 cache at ~10^5 features; its entries are gathered in row order
        k = index[s + _W_AHEAD]
        for p in range(indptr[k], indptr[k + 1]):
            prefetch(w, np.uint64(indices[p]))
    if s + 2 * _AHEAD < active_size:
        prefetch(indptr, index[s + 2 * _AHEAD])
    if s + _AHEAD < active_size:
        i = index[s + _AHEAD]
        p0 = indptr[i]
        p1 = indptr[i + 1]
        for p in range(p0, p1, 8):  # 8 float64 per 64-byte line
            prefetch(data, p)
        for p in range(p0, p1, 64 // indices.itemsize):  # one per 64-byte line
            prefetch(indices, p)
        if p1 > p0:
            prefetch(data, p1 - 1)
            prefetch(indices, p1 - 1)
        _prefetch_sample(i, S)


@njit
def shuffle_prefix(index, active_size, state):
    # Fisher-Yates on index[:active_size] (LIBLINEAR's swap(index[i], index[i + rand()%...]));
    # the draw in [0, m) is Lemire's multiply-shift of the top 32 bits (bias < m / 2**32)
    for s in range(active_size - 1):
        m = np.uint64(active_size - s)
        j = s + np.int64(((_splitmix64(state) >> np.uint64(32)) * m) >> np.uint64(32))
        t = index[s]
        index[s] = index[j]
        index[j] = t


@njit
def _pg(alpha_i, G, upper_i, pgmax_old, pgmin_old):
    """Projected gradient; ``shrink`` when the sample sits at a bound and will stay."""
    if alpha_i == 0.0:
        if G > pgmax_old:
            return 0.0, True
        return min(G, 0.0), False
    if alpha_i == upper_i:
        if G < pgmin_old:
            return 0.0, True
        return max(G, 0.0), False
    return G, False


@njit(fastmath=True)
def _svm_gap_term(a, m1, diag, upper, squared):
    r"""Sample ``i``'s share of the duality gap, :math:`\alpha_i (m_i - 1) + \tfrac12
    D_{ii}\alpha_i^2 + C_i \xi_i` with :math:`m_i = y_i w^\top x_i` (``m1`` is
    :math:`m_i - 1`). It is the Fenchel-Young gap of the sample's loss and its conjugate,
    hence :math:`\ge 0`, and the terms add up to the primal plus the dual objective
    because :math:`\|w\|^2 = \sum_i \alpha_i m_i`. :math:`C_i` is ``upper`` for the
    hinge and :math:`1/(2D_{ii})` for the squared hinge."""
    t = max(-m1, 0.0)
    if not squared:
        return a * m1 + upper * t
    return a * m1 + 0.5 * diag * a * a + t * t / (2.0 * diag)


@njit(fastmath=True)
def _svm_step(S, i, dot, pgmax_old, pgmin_old, squared):
    r"""The coordinate step of sample ``i`` given ``dot`` :math:`= w^\top x_i` (``S``
    updated in place). Returns ``(shrink, PG, step of w along x_i, change of the dual
    objective, gap term before the step)``: the exact one-variable minimisation zeroes
    the sample's own term, so the term is read on arrival; what the sweep adds up is the
    gap left where each sample was visited."""
    old = S[i, ALPHA]
    diag, upper = _box(S, i, squared)
    m1 = S[i, Y] * dot - 1.0
    G = m1 + diag * old
    PG, shrink = _pg(old, G, upper, pgmax_old, pgmin_old)
    if shrink:
        return True, 0.0, 0.0, 0.0, 0.0
    a = old
    # LIBLINEAR skips a step when |PG| <= 1e-12. A hinge sample's gap term is up to
    # U_i |PG|, so with U_i > 1 the threshold is divided by U_i: otherwise a large C
    # leaves the free samples' margins further from 1 than the gap rule accepts
    if abs(PG) > (1e-12 if squared or upper <= 1.0 else 1e-12 / upper):
        a = min(max(old - G / S[i, QD], 0.0), upper)
        S[i, ALPHA] = a
    delta = a - old
    gap = _svm_gap_term(old, m1, diag, upper, squared)
    # f(α + δe_i) - f(α) = Gδ + ½Q̄_ii δ²
    return False, PG, delta * S[i, Y], delta * (G + 0.5 * S[i, QD] * delta), gap


@njit(fastmath=True)
def dual_objective(w, S, squared):
    """½‖w‖² + ½ Σ D_ii α_i² − Σ α_i, in a compiled loop: a NumPy ``w @ w`` goes through a
    multithreaded BLAS whose wake-up costs more than the sum itself on a loaded machine."""
    s = 0.0
    for j in range(w.shape[0]):
        s += w[j] * w[j]
    t = 0.0
    for i in range(S.shape[0]):
        diag = _box(S, i, squared)[0]
        t += S[i, ALPHA] * (0.5 * diag * S[i, ALPHA] - 1.0)
    return 0.5 * s + t


@njit
def _svr_step(beta, G, H, eps, upper, gmax_old):
    r"""One coordinate of the SVR dual (Ho & Lin 2012, Algorithm 4 with shrinking).

    The one-variable problem :math:`\min_d\ G d + \tfrac12 H d^2 + \epsilon|\beta + d|`,
    :math:`-U \le \beta + d \le U`, is solved exactly: with :math:`G^\pm = G \pm
    \epsilon` the one-sided derivatives of the objective at ``β = 0``, the minimiser lies
    on the positive piece when :math:`G^+ < H\beta`, on the negative one when
    :math:`G^- > H\beta`, and at 0 otherwise. Returns ``(β_new, violation, shrink)``, the
    violation being the distance of 0 from the subdifferential (0 at the optimum)."""
    Gp = G + eps
    Gn = G - eps
    viol = 0.0
    if beta == 0.0:
        if Gp < 0.0:
            viol = -Gp
        elif Gn > 0.0:
            viol = Gn
        elif Gp > gmax_old and Gn < -gmax_old:
            return beta, 0.0, True
    elif beta >= upper:
        if Gp > 0.0:
            viol = Gp
        elif Gp < -gmax_old:
            return beta, 0.0, True
    elif beta <= -upper:
        if Gn < 0.0:
            viol = -Gn
        elif Gn > gmax_old:
            return beta, 0.0, True
    elif beta > 0.0:
        viol = abs(Gp)
    else:
        viol = abs(Gn)
    if Gp < H * beta:
        step = -Gp / H
    elif Gn > H * beta:
        step = -Gn / H
    else:
        step = -beta
    if abs(step) < 1e-12:
        return beta, viol, False
    return min(max(beta + step, -upper), upper), viol, False


@njit(fastmath=True)
def _svr_gap_term(b, r, eps, diag, upper, squared):
    r"""Sample ``i``'s share of the SVR duality gap, :math:`\epsilon|\beta_i| - \beta_i
    r_i + \tfrac12 D_{ii}\beta_i^2 + C_i\xi(r_i)` with the residual :math:`r_i = y_i -
    w^\top x_i` (Fenchel-Young, :math:`\ge 0`; the terms add up to primal plus dual)."""
    t = max(abs(r) - eps, 0.0)
    if not squared:
        return eps * abs(b) - b * r + upper * t
    return eps * abs(b) - b * r + 0.5 * diag * b * b + t * t / (2.0 * diag)


@njit(fastmath=True)
def _svr_update(S, i, dot, eps, gmax_old, squared):
    r"""The SVR coordinate step of sample ``i`` given ``dot`` :math:`= w^\top x_i` (``S``
    updated in place): returns ``(shrink, violation, step of w, change of the dual
    objective, gap term before the step)``."""
    old = S[i, ALPHA]
    qd = S[i, QD]
    diag, upper = _box(S, i, squared)
    r = S[i, Y] - dot
    # the smooth partial derivative of the dual: G = -r_i + D_ii β_i
    G = diag * old - r
    b, viol, shrink = _svr_step(old, G, qd, eps, upper, gmax_old)
    if shrink:
        return True, 0.0, 0.0, 0.0, 0.0
    delta = b - old
    S[i, ALPHA] = b
    dd = delta * (G + 0.5 * qd * delta) + eps * (abs(b) - abs(old))
    gap = _svr_gap_term(old, r, eps, diag, upper, squared)
    return False, viol, delta, dd, gap


@njit(fastmath=True)
def epoch(dense, X, data, indices, indptr, d, bias, eps, S, w, index, active_size, old_hi,
          old_lo, state, squared, svr):
    """One epoch over the active samples of dense ``X`` (``dense``) or of CSR ``(data,
    indices, indptr)`` (the unused layout gets empty placeholders), in a fresh random order.

    Classification (``svr`` false): the hinge or, with ``squared``, the squared hinge;
    ``old_hi``, ``old_lo`` are the previous epoch's shrinking thresholds ``PGmax_old``,
    ``PGmin_old`` (shrinking off: ``±inf``). Returns ``(active_size, PGmax_new,
    PGmin_new, change of the dual objective, Σ gap terms of the visited samples)``.

    Regression (``svr``): ``S[:, Y]`` holds the targets and ``S[:, ALPHA]`` β, ``eps`` the
    tube; ``old_hi`` is ``Gmax_old`` (shrinking off: ``inf``) and ``old_lo`` unused.
    Returns ``(active_size, Gmax_new, Gnorm1_new, change of the dual objective, Σ gap
    terms)``: the largest and the summed violations first.

    One loop serves the four cases: the layout decides how a row is read (prefetch,
    inner product, update of ``w``), the task which coordinate step is taken; both are
    fixed for the epoch, so their branches cost nothing the CPU does not predict."""
    shuffle_prefix(index, active_size, state)
    # classification: the extreme projected gradients; regression: the largest and the
    # summed violations, both from zero
    top = 0.0 if svr else -np.inf
    other = 0.0 if svr else np.inf
    ddual = 0.0
    gap = 0.0
    s = 0
    while s < active_size:
        if dense:
            _prefetch_dense(X, index, s, active_size, S)
        else:
            _prefetch_csr(data, indices, indptr, index, s, active_size, S, w)
        i = index[s]
        if dense:
            dot = _dot_dense(X, i, w, d, bias)
        else:
            dot = _dot_csr(data, indices, indptr, i, w, d, bias)
        if svr:
            shrink, v, step, dd, g = _svr_update(S, i, dot, eps, old_hi, squared)
        else:
            shrink, v, step, dd, g = _svm_step(S, i, dot, old_hi, old_lo, squared)
        if shrink:
            active_size -= 1
            index[s] = index[active_size]
            index[active_size] = i
            continue
        top = max(top, v)
        other = other + v if svr else min(other, v)
        ddual += dd
        gap += g
        if step != 0.0:
            if dense:
                _axpy_dense(X, i, w, d, bias, step)
            else:
                _axpy_csr(data, indices, indptr, i, w, d, bias, step)
        s += 1
    return active_size, top, other, ddual, gap


@njit(fastmath=True)
def svr_dual_objective(w, S, eps, squared):
    """½‖w‖² + Σ (½ D_ii β_i² − y_i β_i + ε|β_i|) (the SVR dual, to be minimised)."""
    s = 0.0
    for j in range(w.shape[0]):
        s += w[j] * w[j]
    t = 0.0
    for i in range(S.shape[0]):
        b = S[i, ALPHA]
        diag = _box(S, i, squared)[0]
        t += b * (0.5 * diag * b - S[i, Y]) + eps * abs(b)
    return 0.5 * s + t


#: Unit roundoff of float64.
_UNIT = 2.0 ** -53


@njit(fastmath=True)
def _loss_term(y, z, squared, regression, eps, delta):
    """``(ξ, |dξ/dz| δ)``: the sample's loss and the most a margin error of ``delta`` can
    change it (at the kink of an unsquared loss within ``delta``, the steeper side)."""
    if regression:
        t = abs(y - z) - eps
    else:
        t = 1.0 - y * z
    if squared:
        t = max(t, 0.0)
        return t * t, (2.0 * t + delta) * delta
    return max(t, 0.0), delta if t >= -delta else 0.0


# Sequential passes over X use dots compiled without reassociation: with it LLVM turns
# the sparse dot into AVX2 gathers, slower than scalar loads on rows this short.
# Each returns the dot and the sum of its terms' magnitudes (for its rounding error bound).
@njit(fastmath={"contract"})
def _dot_csr_seq(data, indices, indptr, i, w):
    s = 0.0
    a = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        t = data[p] * w[np.uint64(indices[p])]
        s += t
        a += abs(t)
    return s, a


@njit(fastmath=True)  # contiguous: reassociation vectorises it without gathers
def _dot_dense_seq(X, i, w, d):
    s = 0.0
    a = 0.0
    for j in range(d):
        t = X[i, j] * w[j]
        s += t
        a += abs(t)
    return s, a


@njit(fastmath={"contract"})
def loss_sum(dense, X, data, indices, indptr, d, bias, w, y, cost, squared, regression,
             eps):
    r"""``(Σ c_i ξ_i(w), its rounding uncertainty)`` over all rows in storage order (one
    sequential pass, the cheap half of the primal objective): the hinge
    :math:`\max(0, 1 - y_i z_i)` or, for ``regression``, :math:`\max(0, |y_i - z_i| -
    \epsilon)`, squared when ``squared``, with :math:`z_i = w^\top x_i` (+ ``bias``
    ``w[d]``). Rows of zero cost are skipped.

    The uncertainty is :math:`\sum_i c_i |\xi_i'(z_i)|\,\delta_i` with
    :math:`\delta_i = u\,((k_i + 2)\sum_j |w_j \tilde x_{ij}| + 1 + |y_i| + \epsilon)`
    (``u`` the unit roundoff, ``k_i`` the terms of the row's dot product): the standard
    bound :math:`\gamma_k \sum_j |w_j x_{ij}|` on the rounding error of a dot product
    of :math:`k` terms (Higham 2002, *Accuracy and Stability of Numerical Algorithms*,
    §3.1) and of the subtraction from the label. With a large ``C`` a margin wrong in
    its last bit moves the loss by ``C`` times that bit, so a duality gap below this
    level is not resolvable in float64 and the gap rule does not ask for it."""
    n = y.shape[0]
    wb = bias * w[d] if bias > 0.0 else 0.0
    total = 0.0
    floor = 0.0
    for i in range(n):
        c = cost[i]
        if c == 0.0:
            continue
        if dense:
            z, a = _dot_dense_seq(X, i, w, d)
            k = d
        else:
            z, a = _dot_csr_seq(data, indices, indptr, i, w)
            k = indptr[i + 1] - indptr[i]
        z += wb
        delta = _UNIT * ((k + 2) * (a + abs(wb)) + 1.0 + eps
                         + (abs(y[i]) if regression else 0.0))
        xi, dxi = _loss_term(y[i], z, squared, regression, eps, delta)
        total += c * xi
        floor += c * dxi
    return total, floor


@njit
def row_sq_norms_csr(data, indices, indptr, d):
    """``‖x_i‖²`` of every CSR row, without building ``X.multiply(X)``; exact also when a
    row repeats a column (entries are summed first, as scipy does), so that a
    non-canonical matrix needs no sorted copy. One pass sums the squares and marks the
    columns met in the row; only a row that meets a column twice is summed again."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    seen = np.full(d, -1, dtype=np.int64)
    acc = np.zeros(0)
    for i in range(n):
        p0 = indptr[i]
        p1 = indptr[i + 1]
        s = 0.0
        repeated = False
        for p in range(p0, p1):
            j = np.uint64(indices[p])
            s += data[p] * data[p]
            repeated = repeated or seen[j] == i
            seen[j] = i
        if repeated:
            if acc.shape[0] == 0:
                acc = np.zeros(d)
            for p in range(p0, p1):
                acc[np.uint64(indices[p])] += data[p]
            s = 0.0
            for p in range(p0, p1):
                j = np.uint64(indices[p])
                s += acc[j] * acc[j]
                acc[j] = 0.0  # a repeated column adds 0 the second time
        out[i] = s
    return out
