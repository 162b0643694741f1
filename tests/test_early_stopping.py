"""The held-out monitor of BiSVM L-BFGS (issue #12): the one-standard-error rule against
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


def _run(rule, terms):
    mon = HeldOutMonitor(_Scripted(terms), None, patience=10, rule=rule)
    for k in range(len(terms)):
        mon.update(SimpleNamespace(beta=np.array([k])), float(k), 1e-9)
    return int(mon.best[0].beta[0])


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
    X, y = make_classification(300, 30, n_informative=4, n_redundant=0, flip_y=0.1,
                               random_state=1)
    est = BilevelSVC(early_stopping=True, refinement_rule="1se", random_state=0,
                     max_iter=30).fit(X, y)
    h = est.history_
    start = h[0].monitor_value
    assert np.isfinite(start)
    # the chosen iterate's held-out value is the start's or better
    chosen = [e.monitor_value for e in h
              if np.allclose(e.beta, est.penalty_weights_, rtol=1e-12)]
    assert chosen and min(chosen) <= start + 1e-12
