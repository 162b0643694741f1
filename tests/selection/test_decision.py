"""The held-out decision checks of BilevelSVC: Platt's calibrated intercept
shift against an independent optimiser, the paired null-model tests (the log-loss one
against a hand calculation with scipy's Platt fit), and the
one-standard-error balanced thresholds against an enumeration of every threshold."""

import numpy as np
import pytest
from scipy.optimize import minimize

from bisvm.selection.decision import (
    balanced_weights_of,
    beats_null,
    beats_null_balanced,
    one_se_balanced_shift,
    platt_shift,
)


def _platt_ac(f, y, w):
    """Platt's (a, c) by scipy's BFGS on the weighted likelihood with smoothed targets."""
    n_pos, n_neg = np.sum(y > 0), np.sum(y <= 0)
    t = np.where(y > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    w = w / w.sum()

    def nll(th):
        z = th[0] * f + th[1]
        return float(w @ (np.logaddexp(0.0, z) - t * z))

    return minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-12}).x


def _platt_reference(f, y, w):
    """The shift c / a of Platt's fit by scipy (:func:`_platt_ac`)."""
    a, c = _platt_ac(f, y, w)
    return c / a


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


def test_beats_null_log_loss_against_a_hand_calculation():
    rng = np.random.default_rng(3)
    n = 400
    y = np.where(rng.random(n) < 0.25, 1.0, -1.0)
    maj = -np.ones(n)
    w = rng.uniform(0.5, 2.0, n)
    w /= w.sum()
    # outputs that rank the classes but stay below zero: the sign predicts the majority
    # class everywhere (no misclassification gain), the ranking is signal
    f = -np.exp(-0.8 * (y > 0) + 0.5 * rng.standard_normal(n))
    assert np.all(f < 0)
    keep, loss, loss0 = beats_null(f, y, w, maj)
    a, c = _platt_ac(f, y, w)
    z = a * f + c
    ell = np.where(y > 0, np.log1p(np.exp(-z)), np.log1p(np.exp(z)))
    pi = w @ (y > 0)
    ell0 = np.where(y > 0, -np.log(pi), -np.log(1 - pi))
    delta = ell0 - ell
    gain = w @ delta
    se = np.sqrt(np.sum(w**2 * (delta - gain) ** 2))
    assert loss == pytest.approx(w @ ell, rel=1e-6)
    assert loss0 == pytest.approx(w @ ell0, rel=1e-12)
    assert keep == (gain > se) and keep


def test_beats_null_drops_outputs_without_signal():
    y = np.r_[np.ones(30), -np.ones(70)]
    maj = -np.ones(100)
    w = np.full(100, 0.01)
    # constant outputs and outputs ranked the wrong way round carry no signal
    assert not beats_null(maj, y, w, maj)[0]
    assert not beats_null(-2.0 * y, y, w, maj)[0]
    # perfect outputs do
    assert beats_null(y * 2.0, y, w, maj)[0]
    # outputs independent of the labels: kept on at most a few of 40 draws (the one
    # standard error margin against two calibration parameters fitted on the rows)
    rng = np.random.default_rng(0)
    kept = 0
    for _ in range(40):
        yy = np.where(rng.random(300) < 0.3, 1.0, -1.0)
        kept += beats_null(rng.standard_normal(300), yy, np.full(300, 1 / 300),
                           -np.ones(300))[0]
    assert kept <= 4


def _zone_sample():
    """70 negatives far below, 20 positives far above, and between them 10 rows at
    -0.45, -0.35, ..., 0.45 labelled -, +, -, +, ... upwards: every cut between two of
    those pairs misclassifies 4 rows (the fewest), and a lower such cut finds more
    positives (higher balanced accuracy). Prior 0.25, so P > prior lies below the zone's
    first positive and P > 1/2 above 0.05."""
    zone = np.arange(10) * 0.1 - 0.45
    f = np.r_[np.linspace(-3, -1.2, 70), zone, np.linspace(1.2, 3, 20)]
    y = np.r_[-np.ones(70), np.tile([-1.0, 1.0], 5), np.ones(20)]
    return f, y


def test_one_se_balanced_known_answer():
    f, y = _zone_sample()
    zone_pos = np.arange(70, 80)
    # P > 1/2 predicts the zone's positives from 0.15 up: 5 errors, not the fewest
    half = np.sign(f + platt_shift(f, y))
    assert np.flatnonzero(half[zone_pos] > 0).min() == 6
    assert np.sum(half != y) == 5
    # the rule: the fewest errors (4) and every positive found, i.e. the lowest cut
    # between the pairs (the zone's rows from -0.35 up are predicted +)
    d = np.sign(f + one_se_balanced_shift(f, y))
    assert np.sum(d != y) == 4
    assert np.flatnonzero(d[zone_pos] > 0).min() == 1 and np.all(d[zone_pos][1:] > 0)
    assert np.all(d[y > 0] > 0)
    # gated: the most accurate significant move is the nearest cut with 4 errors (the
    # zone's rows from 0.05 up predicted +)
    g = np.sign(f + one_se_balanced_shift(f, y, gated=True))
    assert np.sum(g != y) == 4
    assert np.flatnonzero(g[zone_pos] > 0).min() == 5 and np.all(g[zone_pos][5:] > 0)


def _enumerated(f, y, w, gated):
    """Every threshold between Platt's P > 1/2 and P > prior (found from Platt's shift
    and a second fit), each with its own paired standard errors, as dense matrices."""
    w = w / w.sum()
    t_half = -platt_shift(f, y, w)
    # P > prior needs Platt's slope: refit by scipy (as _platt_reference)
    n_pos = np.sum(y > 0)
    t = np.where(y > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (y.size - n_pos + 2.0))
    th = minimize(lambda th: float(w @ (np.logaddexp(0.0, th[0] * f + th[1])
                                        - t * (th[0] * f + th[1]))),
                  np.zeros(2), method="BFGS", options={"gtol": 1e-12}).x
    prior = w[y > 0].sum()
    t_prior = (np.log(prior / (1 - prior)) - th[1]) / th[0]
    lo, hi = sorted((t_half, t_prior))
    u = np.unique(f)
    mids = (u[1:] + u[:-1]) / 2
    ts = np.r_[t_half, t_prior, mids[(mids > lo) & (mids < hi)]]
    E = (np.where(f[None, :] > ts[:, None], 1.0, -1.0) != y).astype(float)
    v = balanced_weights_of(y, w)

    def paired(err_rows, u, j):
        d = err_rows - err_rows[j]
        m = d @ u
        return m, np.sqrt(((d - m[:, None]) ** 2) @ u**2)

    m, se = paired(E, w, int(np.argmin(E @ w)))
    ok = m <= se + 1e-12
    if gated:
        mb, seb = paired(E, v, 0)
        move = ok & (-mb > seb)
        move[0] = False
        ok = move if move.any() else np.arange(ts.size) == 0
        return ts, ok, -(E @ w)
    return ts, ok, -(E @ v)


@pytest.mark.parametrize("gated", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_one_se_balanced_matches_an_enumeration(seed, gated):
    rng = np.random.default_rng(seed)
    n = 250
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    f = np.round(0.9 * y + rng.standard_normal(n) - 0.4, 2)  # ties on purpose
    w = rng.uniform(0.5, 2.0, n)
    ts, ok, score = _enumerated(f, y, w, gated)
    d = np.where(f + one_se_balanced_shift(f, y, w, gated=gated) > 0, 1.0, -1.0)
    wn = w / w.sum()
    got = -((d != y) @ (wn if gated else balanced_weights_of(y, wn)))
    assert got == pytest.approx(np.max(score[ok]), abs=1e-9)


def test_one_se_balanced_is_zero_without_ranking():
    rng = np.random.default_rng(2)
    y = np.where(rng.random(200) < 0.3, 1.0, -1.0)
    assert one_se_balanced_shift(np.zeros(200), y) == 0.0
    assert one_se_balanced_shift(-y, y) == 0.0
    assert one_se_balanced_shift(rng.standard_normal(200), np.ones(200)) == 0.0


def test_beats_null_balanced_keeps_a_model_that_finds_the_minority():
    y = np.r_[np.ones(30), -np.ones(170)]
    maj = -np.ones(200)
    w = np.full(200, 1 / 200)
    # 15 minority rows found for 15 majority rows lost: same error as the majority rule
    f = maj.copy()
    f[:15] = 1.0
    f[30:45] = 1.0
    keep, err, err0 = beats_null_balanced(f, y, w, maj)
    assert keep and err == pytest.approx(err0)
    # the balanced gain by hand: 15/60 - 15/340 against its paired standard error
    v = balanced_weights_of(y, w)
    delta = (maj != y).astype(float) - (np.sign(f) != y)
    gain = v @ delta
    assert gain == pytest.approx(15 / 60 - 15 / 340)
    assert gain > np.sqrt(np.sum(v**2 * (delta - gain) ** 2))
    # the majority rule itself is not kept, nor a model that buys balanced accuracy
    # with a clear loss of accuracy (every row predicted +)
    assert not beats_null_balanced(maj, y, w, maj)[0]
    assert not beats_null_balanced(np.ones(200), y, w, maj)[0]
    # perfect outputs are kept
    assert beats_null_balanced(y * 2.0, y, w, maj)[0]
