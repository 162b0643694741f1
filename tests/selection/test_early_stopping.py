"""The held-out monitor of BiSVM L-BFGS: the one-standard-error rule against
the start, checked against a hand computation on scripted held-out terms, and the
BilevelSVC parameter that selects it."""

from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import make_classification

from bisvm import BilevelSVC
from bisvm.selection.early_stopping import HeldOutMonitor


class _Scripted:
    """A monitor objective whose per-row held-out terms at iterate k are given."""

    def __init__(self, terms):
        self.terms_by_beta = terms
        crit = SimpleNamespace(terms=lambda w: (w, np.full(w.size, 1.0 / w.size)))
        self.criteria = (crit,)
        self.folds = (None,)

    def solve(self, beta, warm, tol):
        return (self.terms_by_beta[int(beta[0])],), 0


def _drive(mon, n):
    """Feed iterates 0..n-1 to the monitor; the index of the one it keeps."""
    for k in range(n):
        mon.update(SimpleNamespace(beta=np.array([k])), float(k), 1e-9)
    return int(mon.best[0].beta[0])


def _run(rule, terms):
    return _drive(HeldOutMonitor(_Scripted(terms), None, patience=10, rule=rule), len(terms))


def test_one_se_rule_against_the_start_by_hand():
    rng = np.random.default_rng(0)
    t0 = rng.uniform(0.2, 1.0, 40)
    e = rng.normal(0, 1, 40)
    e -= e.mean()
    small = t0 - 0.01 + 0.2 * e   # mean gain 0.01, SE ~ 0.03
    large = t0 - 0.15 + 0.05 * e  # mean gain 0.15, SE ~ 0.008
    def gain_and_se(t):
        # equal weights 1/m: mean gain and sqrt(sum w^2 (d - mean)^2)
        d = t0 - t
        return d.mean(), np.sqrt(np.sum((d - d.mean()) ** 2)) / d.size

    g, se = gain_and_se(small)
    assert 0 < g <= se
    g, se = gain_and_se(large)
    assert g > se
    assert _run("min", [t0, small]) == 1       # any decrease counts
    assert _run("1se", [t0, small]) == 0       # within noise: keep the start
    assert _run("1se", [t0, small, large]) == 2
    assert _run("min", [t0, t0 + 0.1]) == 0


def test_monitor_rule_validated():
    with pytest.raises(ValueError, match="monitor_rule"):
        HeldOutMonitor(_Scripted([np.ones(3)]), None, 5, rule="max")
    X, y = make_classification(60, 5, random_state=0)
    with pytest.raises(ValueError, match="refinement_rule"):
        BilevelSVC(refinement_rule="2se").fit(X, y)


def test_one_se_refinement_never_worse_on_held_out_than_the_scalar_start():
    # refit=True: no sparsity preference, so the held-out value can only improve
    X, y = make_classification(300, 30, n_informative=4, n_redundant=0, flip_y=0.1,
                               random_state=1)
    est = BilevelSVC(early_stopping=True, refinement_rule="1se", random_state=0,
                     max_iter=30, refit=True).fit(X, y)
    h = est.history_
    start = h[0].monitor_value
    assert np.isfinite(start)
    # the chosen iterate's held-out value is the start's or better
    chosen = [e.monitor_value for e in h
              if np.allclose(e.beta, est.penalty_weights_, rtol=1e-12)]
    assert chosen and min(chosen) <= start + 1e-12


def test_one_se_scalar_path_by_hand():
    from bisvm.selection.bilevel import (
        BilevelObjective,
        Fold,
        LowerLevel,
        bisvm_lbfgs,
        make_hyper_model,
    )
    from bisvm.selection.one_se import one_se_scalar

    X, y = make_classification(200, 12, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=3)
    y = np.where(y == 1, 1.0, -1.0)
    Xa = np.c_[X, np.ones(len(y))]
    idx = np.arange(len(y)) % 4
    folds = tuple(Fold(Xa[idx != k], y[idx != k], Xa[idx == k], y[idx == k])
                  for k in range(4))
    obj = BilevelObjective(folds, LowerLevel(), make_hyper_model("scalar", 12),
                           loss="squared_hinge")
    res = bisvm_lbfgs(obj, 0.01)
    b, coefs, steps = one_se_scalar(obj, float(res.beta[0]), warm=res.coefs)

    def value_and_se(beta):
        ws, _ = obj.solve(np.array([beta]), None, 1e-10)
        # per-row squared hinge of every validation row, by hand; each row once
        r = np.concatenate([np.maximum(0, 1 - f.y_val * (f.X_val @ w)) ** 2 / 2
                            for f, w in zip(folds, ws)])
        return r.mean(), r.std() / np.sqrt(r.size)  # equal weights 1/N

    J0, se = value_and_se(float(res.beta[0]))
    assert value_and_se(b)[0] <= J0 + se + 1e-9
    assert value_and_se(b * 1.25)[0] > J0 + se - 1e-9
    assert b >= res.beta[0] and steps >= 1
    # the sparser end of the path keeps no more features
    n0 = np.sum(np.abs(np.mean(res.coefs, axis=0)[:-1]) > 0.01)
    assert np.sum(np.abs(np.mean(coefs, axis=0)[:-1]) > 0.01) <= n0
    est = BilevelSVC(model="scalar", scalar_rule="1se", random_state=0).fit(X, y)
    plain = BilevelSVC(model="scalar", random_state=0).fit(X, y)
    assert est.penalty_weights_[0] >= plain.penalty_weights_[0]


class _ScriptedSparse:
    """Held-out terms and monitor solutions (features, bias 0) given per iterate."""

    def __init__(self, terms, coefs):
        from bisvm.selection.bilevel import make_hyper_model

        self.terms_by_beta, self.coefs, self.k = terms, coefs, 0
        self.hyper = make_hyper_model("vector", len(coefs[0]))
        t = self.terms_by_beta
        crit = SimpleNamespace(terms=lambda w: (t[self.k], np.full(t[self.k].size,
                                                                  1.0 / t[self.k].size)))
        self.criteria = (crit,)
        self.folds = (None,)

    def solve(self, beta, warm, tol):
        self.k = int(beta[0])
        return (np.r_[self.coefs[self.k], 0.0],), 0


def _run_sparse(terms, coefs, threshold=0.01):
    return _drive(HeldOutMonitor(_ScriptedSparse(terms, coefs), None, patience=10,
                                 rule="1se", threshold=threshold), len(terms))


def test_one_se_rule_prefers_the_sparsest_iterate_within_the_noise():
    rng = np.random.default_rng(0)
    t0 = rng.uniform(0.2, 1.0, 40)
    e = rng.normal(0, 1, 40)
    e -= e.mean()
    same = t0 + 0.005 + 0.2 * e    # slightly worse, well within one SE
    worse = t0 + 0.3 + 0.05 * e    # worse beyond one SE
    better = t0 - 0.15 + 0.05 * e  # better beyond one SE
    w5 = np.array([0.5, -0.4, 0.3, 0.2, 0.1, 0.001])
    w3 = np.array([0.6, -0.5, 0.3, 0.0, 0.005, 0.0])   # 3 features above 0.01
    w1 = np.array([0.9, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert _run_sparse([t0, same], [w5, w3]) == 1          # sparser, not worse: taken
    assert _run_sparse([t0, same], [w5, w3], None) == 0    # no threshold: the start
    assert _run_sparse([t0, same, worse], [w5, w3, w1]) == 1   # sparser but worse: not
    assert _run_sparse([t0, same, better], [w5, w3, w5]) == 2  # a real gain wins
    assert _run_sparse([t0, same], [w3, w5]) == 0          # denser: not taken
