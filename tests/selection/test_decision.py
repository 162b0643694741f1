"""The held-out decision checks of BilevelSVC (issue #12): Platt's calibrated intercept
shift against an independent optimiser, and the paired null-model test."""

import numpy as np
import pytest
from scipy.optimize import minimize

from bisvm.selection.decision import beats_null, platt_shift


def _platt_reference(f, y, w):
    """Platt's fit by scipy's BFGS on the same weighted likelihood (smoothed targets)."""
    n_pos, n_neg = np.sum(y > 0), np.sum(y <= 0)
    t = np.where(y > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    w = w / w.sum()

    def nll(th):
        z = th[0] * f + th[1]
        return float(w @ (np.logaddexp(0.0, z) - t * z))

    th = minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-12}).x
    return th[1] / th[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_platt_shift_matches_an_independent_optimiser(seed):
    rng = np.random.default_rng(seed)
    n = 400
    f = rng.standard_normal(n) * 1.5
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(1.7 * f - 0.6))), 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, n)
    assert platt_shift(f, y, w) == pytest.approx(_platt_reference(f, y, w), abs=1e-6)


def test_platt_shift_recovers_the_bayes_threshold():
    # P(y = 1 | f) = sigmoid(2 f - 1): the accuracy-optimal decision is f > 1/2, so the
    # shift added to the output is -1/2
    rng = np.random.default_rng(0)
    f = rng.standard_normal(200_000)
    y = np.where(rng.random(f.size) < 1 / (1 + np.exp(-(2 * f - 1))), 1.0, -1.0)
    assert platt_shift(f, y) == pytest.approx(-0.5, abs=0.02)


def test_platt_shift_is_zero_without_ranking():
    rng = np.random.default_rng(1)
    y = np.where(rng.random(300) < 0.3, 1.0, -1.0)
    assert platt_shift(np.zeros(300), y) == 0.0
    # outputs that rank the classes the wrong way round: no shift, not a flipped rule
    assert platt_shift(-3.0 * y + 0.1 * rng.standard_normal(300), y) == 0.0


def test_platt_shift_is_finite_on_separated_outputs():
    y = np.r_[-np.ones(50), np.ones(20)]
    f = np.r_[-2.0 - np.arange(50) / 50, 1.0 + np.arange(20) / 20]
    s = platt_shift(f, y)
    # the decision f + s > 0 still separates the rows
    assert np.isfinite(s) and np.all(np.sign(f + s) == y)


def test_beats_null_paired_standard_error():
    y = np.r_[np.ones(30), -np.ones(70)]
    maj = -np.ones(100)
    w = np.full(100, 0.01)
    # perfect outputs beat the majority rule (30 % error) by far
    keep, err, err0 = beats_null(y * 2.0, y, w, maj)
    assert keep and err == 0.0 and err0 == pytest.approx(0.3)
    # the majority rule itself, and a rule no better than it, do not
    assert not beats_null(maj, y, w, maj)[0]
    f = maj.copy()
    f[:3] = 1.0   # 3 minority rows right
    f[30:33] = 1.0  # 3 majority rows wrong: same error, no gain
    assert not beats_null(f, y, w, maj)[0]
    # the rule by hand: gain 5 rows of 100, paired differences of 5 ones and 95 zeros
    f = maj.copy()
    f[:5] = 1.0
    delta = np.r_[np.ones(5), np.zeros(95)]
    gain = w @ delta
    se = np.sqrt(np.sum(w**2 * (delta - gain) ** 2))
    assert beats_null(f, y, w, maj)[0] == (gain > se)
    assert beats_null(f, y, w, maj)[0]
