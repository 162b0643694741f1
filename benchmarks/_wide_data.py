"""Synthetic problems of ``bench_wide.py``: wide, sparse and tall binary classification,
generated deterministically from (problem, seed), with the informative columns known.

Dense problems (``dense_problem``): features in correlated blocks, as genes in pathways,

    x_j = √(1−ρ) · e_j + √ρ · z_{b(j)} + shift · y₀ · s_{b(j)} · [j informative],

with z, e ~ N(0, 1) independent, y₀ = ±1 the clean class and s_b = ±1 a sign per block.
The ``k`` informative columns sit in blocks of ``INFORMATIVE_BLOCK`` (so each has
correlated neighbours), the others in blocks of ``spec.block``; the columns are shuffled,
and the observed label y is y₀ flipped with probability ``flip``. The Bayes rule is
linear (two Gaussians with one covariance), and its accuracy is exact
(:func:`bayes_accuracy`): with q = Σ_blocks shift² m_b/(1 − ρ + m_b ρ) over the
informative blocks of m_b columns, acc = (1 − flip) Φ(√q) + flip (1 − Φ(√q)).

The sparse problem (``sparse_problem``) is text-like: column (term) popularity follows a
Zipf law over a random permutation of the columns, each row (document) draws tokens from
it, counts become tf-idf weights ``(1 + log tf) · idf`` with scikit-learn's smoothed idf,
and rows are L2-normalised, so every value is non-negative. The informative columns are
drawn among the terms present in at least 0.5 % of the rows (so that each one is
learnable), and the label is the sign of ``X_S w_S`` minus its median plus noise.

Test rows come from the same distribution and are never used for tuning; the scaler is
fitted on training rows only (``scale``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

INFORMATIVE_BLOCK = 10


@dataclass(frozen=True)
class Spec:
    """One problem: its kind, sizes (training rows × columns, test rows), number ``k`` of
    informative columns, their class-mean shift and the label-flip rate (dense), or the
    density and label noise (sparse)."""

    kind: str  # "dense" or "sparse"
    n_train: int
    n_test: int
    d: int
    k: int
    shift: float = 0.0
    flip: float = 0.05
    block: int = 50
    rho: float = 0.5
    density: float = 0.001
    sigma: float = 0.3

    def label(self):
        shape = f"{self.n_train:,} × {self.d:,}"
        if self.kind == "sparse":
            return f"{shape} sparse CSR (density {self.density:g})"
        return f"{shape} dense"


def _dense(n_train, n_test, d, k, shift):
    return Spec("dense", n_train, n_test, d, k, shift=shift)


def _sparse(n_train, n_test, d, k, density):
    return Spec("sparse", n_train, n_test, d, k, density=density)


# The target shapes (training matrix = the stated shape) and the --quick sizes.
PROBLEMS = {
    "leukemia": _dense(72, 2000, 7129, 30, 1.0),
    "wide": _dense(200, 2000, 2000, 20, 0.8),
    "sparse": _sparse(20000, 5000, 50000, 100, 0.001),
    "tall": _dense(100000, 20000, 1000, 50, 0.4),
}
QUICK = {
    "leukemia": _dense(72, 1000, 1500, 30, 1.0),
    "wide": _dense(200, 1000, 500, 20, 0.8),
    "sparse": _sparse(3000, 1000, 8000, 60, 0.004),
    "tall": _dense(10000, 2000, 200, 20, 0.4),
}
# Warm-up problems: tiny, but in the same regime (wide, sparse or tall), so that the
# code paths (and numba compilations) of the real fit are the ones exercised.
WARMUP = {
    "leukemia": _dense(40, 10, 300, 10, 1.0),
    "wide": _dense(40, 10, 300, 10, 0.8),
    "sparse": _sparse(400, 10, 2000, 10, 0.01),
    "tall": _dense(2000, 10, 40, 10, 0.4),
}
PROBLEM_IDS = {"leukemia": 1, "wide": 2, "sparse": 3, "tall": 4}


def bayes_accuracy(spec):
    """The exact Bayes accuracy of a dense problem (module docstring), in [0, 1]; None
    for the sparse one (no closed form)."""
    if spec.kind != "dense":
        return None
    from scipy.stats import norm

    n_blocks = -(-spec.k // INFORMATIVE_BLOCK)
    sizes = [min(INFORMATIVE_BLOCK, spec.k - i * INFORMATIVE_BLOCK) for i in range(n_blocks)]
    q = spec.shift**2 * sum(m / (1.0 - spec.rho + m * spec.rho) for m in sizes)
    a = float(norm.cdf(np.sqrt(q)))
    return (1.0 - spec.flip) * a + spec.flip * (1.0 - a)


def dense_problem(spec, rng):
    """Rows of the block-correlated mean-shift model above; returns X, y (±1) and the
    informative column indices."""
    n, d, k = spec.n_train + spec.n_test, spec.d, spec.k
    y_clean = rng.choice([-1, 1], size=n)
    # block id of every column: informative columns in blocks of INFORMATIVE_BLOCK, the
    # others in blocks of spec.block; then the columns are shuffled
    n_inf_blocks = -(-k // INFORMATIVE_BLOCK)
    blocks = np.concatenate([np.arange(k) // INFORMATIVE_BLOCK,
                             n_inf_blocks + np.arange(d - k) // spec.block])
    X = rng.standard_normal((n, d))
    X *= np.sqrt(1.0 - spec.rho)
    X += np.sqrt(spec.rho) * rng.standard_normal((n, blocks[-1] + 1))[:, blocks]
    signs = rng.choice([-1.0, 1.0], size=n_inf_blocks)[blocks[:k]]
    X[:, :k] += (spec.shift * y_clean)[:, None] * signs
    perm = rng.permutation(d)
    X = X[:, perm]
    informative = np.flatnonzero(perm < k)
    y = np.where(rng.random(n) < spec.flip, -y_clean, y_clean)
    return X, y, informative


def _zipf_token_count(p, target):
    """Tokens per row whose expected number of distinct terms, Σ_j 1 − (1 − p_j)^m, is
    ``target`` (bisection on m)."""
    lo, hi = target, 50.0 * target
    for _ in range(60):
        m = 0.5 * (lo + hi)
        if np.sum(-np.expm1(m * np.log1p(-p))) < target:
            lo = m
        else:
            hi = m
    return 0.5 * (lo + hi)


def sparse_problem(spec, rng):
    """Rows of the text-like model above, CSR; returns X, y (±1), informative columns."""
    n, d = spec.n_train + spec.n_test, spec.d
    p = 1.0 / (np.arange(d) + 10.0)
    p = p[rng.permutation(d)]
    p /= p.sum()
    m = _zipf_token_count(p, spec.density * d)
    lengths = rng.poisson(m, size=n) + 1
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.choice(d, size=rows.size, p=p)
    tf = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, d))
    tf.sum_duplicates()
    df = np.bincount(tf.indices, minlength=d)
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    tf.data = (1.0 + np.log(tf.data)) * idf[tf.indices]
    norms = np.sqrt(np.asarray(tf.multiply(tf).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / np.maximum(norms, 1e-300)) @ tf)
    candidates = np.flatnonzero(df >= 0.005 * n)
    if candidates.size < spec.k:  # tiny warm-up problems: take the most frequent terms
        candidates = np.argsort(df)[::-1][: 3 * spec.k]
    cols_s = np.sort(rng.choice(candidates, size=spec.k, replace=False))
    w = rng.choice([-1.0, 1.0], spec.k) * rng.uniform(0.5, 1.5, spec.k)
    t = X[:, cols_s] @ w
    t = t - np.median(t)
    y = np.where(t + spec.sigma * t.std() * rng.standard_normal(n) > 0, 1, -1)
    return X, y, cols_s


def make_problem(name, seed, spec):
    """Training and test split of problem ``name`` (sizes from ``spec``) for ``seed``,
    scaled as a user would: ``StandardScaler`` for dense data, ``MaxAbsScaler`` (keeps
    sparsity and non-negativity) for sparse, both fitted on the training rows only.

    Returns ``X_train, X_test, y_train, y_test, informative``.
    """
    rng = np.random.default_rng([PROBLEM_IDS[name], seed])
    make = sparse_problem if spec.kind == "sparse" else dense_problem
    X, y, informative = make(spec, rng)
    X_train, X_test = X[: spec.n_train], X[spec.n_train:]
    y_train, y_test = y[: spec.n_train], y[spec.n_train:]
    del X
    X_train, X_test = scale(X_train, X_test)
    return X_train, X_test, y_train, y_test, informative


def scale(X_train, X_test):
    """Fit the scaler on the training rows, apply it to both."""
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    scaler = MaxAbsScaler() if sp.issparse(X_train) else StandardScaler(copy=False)
    X_train = scaler.fit_transform(X_train)
    X_test = scaler.transform(X_test)
    if sp.issparse(X_train):
        X_train, X_test = sp.csr_matrix(X_train), sp.csr_matrix(X_test)
    return X_train, X_test
