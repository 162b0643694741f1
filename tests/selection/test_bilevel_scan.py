"""The stages of BilevelSVC: the scalar scan that starts BiSVM, the
held-out judgement of the vector refinement, the one-standard-error rule on the pooled
validation error, the line-search cap and the BLAS thread limit."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from bisvm import BilevelSVC
from bisvm.selection.bilevel import (
    BilevelObjective,
    Fold,
    LowerLevel,
    bisvm_lbfgs,
    make_hyper_model,
)
from bisvm.selection.model import beta_upper_bound
from bisvm.selection.one_se import one_se_error_scalar
from bisvm.selection.search import SCAN_POINTS, scalar_scan
from bisvm.selection.splits import validation_splits
from bisvm.selection.staged import StagedSettings, fit_staged
from bisvm.selection.threads import SMALL_GRAM, gram_threads
from bisvm.solvers.primal.lower_level import add_bias_column


def _objective(n=160, d=12, seed=3, model="scalar", loss="scaled_squared_hinge", k=4):
    X, y = make_classification(n, d, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=seed)
    y = np.where(y == 1, 1.0, -1.0)
    Xa = np.c_[X, np.ones(n)]
    idx = np.arange(n) % k
    folds = tuple(Fold(Xa[idx != j], y[idx != j], Xa[idx == j], y[idx == j])
                  for j in range(k))
    return BilevelObjective(folds, LowerLevel(), make_hyper_model(model, d), loss=loss)


def test_scan_values_are_the_objective_at_each_beta():
    obj = _objective()
    scan = scalar_scan(obj)
    assert scan.betas.size == SCAN_POINTS
    # log-spaced over four decades up to a tenth of the outer bound
    np.testing.assert_allclose(scan.betas[-1], beta_upper_bound(obj.folds) / 10, rtol=1e-12)
    np.testing.assert_allclose(np.diff(np.log10(scan.betas)), 4 / (SCAN_POINTS - 1))
    for b, v, ws in zip(scan.betas, scan.values, scan.coefs):
        # cold solves, and the criterion by hand from the scaled squared hinge's terms
        direct = obj.value(np.array([b]), None, 1e-11)
        assert v == pytest.approx(direct, rel=1e-6, abs=1e-9)
        cold, _ = obj.solve(np.array([b]), None, 1e-11)
        for w, wc in zip(ws, cold):
            np.testing.assert_allclose(w, wc, atol=1e-6)
    assert scan.best_value == scan.values.min()
    assert scan.lower_solves == SCAN_POINTS * len(obj.folds)
    with pytest.raises(ValueError, match="scalar"):
        scalar_scan(_objective(model="vector"))


def test_scan_with_patience_stops_past_its_minimum_and_keeps_the_same_best():
    obj = _objective()
    betas = beta_upper_bound(obj.folds) / 10 * np.logspace(-6, 0, 13)
    full = scalar_scan(obj, betas)
    short = scalar_scan(obj, betas, patience=2)
    seen = np.isfinite(short.values)
    k = int(np.flatnonzero(seen)[0])
    # the visited points are the largest weights, solved exactly as on the full walk
    assert seen[k:].all() and not seen[:k].any() and k > 0
    np.testing.assert_array_equal(short.values[k:], full.values[k:])
    assert all(c is None for c in short.coefs[:k])
    # it stopped after two consecutive points above the minimum seen before them
    assert np.all(short.values[k:k + 2] > short.values[k + 2:].min())
    assert short.best_index == full.best_index
    assert short.lower_solves == (betas.size - k) * len(obj.folds)


def test_scalar_stage_is_no_worse_than_the_best_scan_point():
    X, y = make_classification(200, 15, n_informative=4, n_redundant=0, flip_y=0.15,
                               random_state=5)
    X = StandardScaler().fit_transform(X)  # l2_penalty "auto" is then LowerLevel's 0.01
    Xa, yb = add_bias_column(X), np.where(y == 1, 1.0, -1.0)
    hyper = make_hyper_model("scalar", 15)
    fit = fit_staged(Xa, yb, LowerLevel(), hyper, StagedSettings(model="scalar",
                                                                 random_state=0))
    assert fit.scan is not None
    assert fit.value <= fit.scan.best_value + 1e-12
    # the value reported is the criterion at the returned beta on the same folds
    folds = validation_splits(yb, "kfold", validation_fraction=0.2, cv=5, random_state=0)
    obj = BilevelObjective(tuple(Fold(Xa[tr], yb[tr], Xa[va], yb[va]) for tr, va in folds),
                           LowerLevel(), hyper, loss="scaled_squared_hinge")
    assert obj.value(fit.beta, None, 1e-11) == pytest.approx(fit.value, rel=1e-4)
    # the estimator reports the same stage
    est = BilevelSVC(model="scalar", random_state=0, standardize=False).fit(X, y)
    assert est.validation_score_ == pytest.approx(fit.value, rel=1e-12)
    # an explicit init_penalty skips the scan (the thesis's start)
    fit0 = fit_staged(Xa, yb, LowerLevel(), hyper,
                      StagedSettings(model="scalar", random_state=0, init_penalty=0.01))
    assert fit0.scan is None


def _rejected_case():
    """A problem whose per-feature refinement the held-out rows reject (all features
    equally informative: per-feature weights have nothing to add)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(150, 6))
    y = np.where(X.sum(axis=1) + 1.5 * rng.normal(size=150) > 0, 1, 0)
    return X, y


def test_rejected_refinement_is_exactly_the_scalar_model():
    X, y = _rejected_case()
    vec = BilevelSVC(random_state=0).fit(X, y)
    assert vec.refined_ is False
    sca = BilevelSVC(model="scalar", random_state=0).fit(X, y)
    assert sca.refined_ is None
    np.testing.assert_array_equal(vec.coef_, sca.coef_)
    np.testing.assert_array_equal(vec.intercept_, sca.intercept_)
    np.testing.assert_array_equal(vec.penalty_weights_,
                                  np.full(X.shape[1], sca.penalty_weights_[0]))
    assert vec.validation_score_ == sca.validation_score_
    # the group model, rejected, keeps the scalar weight on every group (its penalty,
    # on group norms, is not the scalar model's, so neither are its coefficients)
    grp = BilevelSVC(model="group", feature_groups={"a": [0, 1, 2], "b": [3, 4, 5]},
                     random_state=0).fit(X, y)
    if grp.refined_ is False:
        np.testing.assert_array_equal(grp.penalty_weights_,
                                      np.full(2, sca.penalty_weights_[0]))


def test_accepted_refinement_is_the_held_out_best_iterate():
    X, y = make_classification(300, 30, n_informative=3, n_redundant=0, flip_y=0.05,
                               random_state=0)
    vec = BilevelSVC(random_state=0, refinement_rule="min").fit(X, y)
    assert vec.refined_ is True
    assert np.ptp(vec.penalty_weights_) > 0
    held = np.array([e.monitor_value for e in vec.history_])
    k = int(np.argmin(held))
    assert k > 0 and held[k] < held[0]
    np.testing.assert_array_equal(vec.penalty_weights_, vec.history_[k].beta)
    sca = BilevelSVC(model="scalar", random_state=0).fit(X, y)
    assert not np.array_equal(vec.coef_, sca.coef_)


def _errors_by_hand(obj, beta):
    ws, _ = obj.solve(np.array([beta]), None, 1e-11)
    e = np.concatenate([np.sign(f.X_val @ w) != f.y_val for f, w in zip(obj.folds, ws)])
    return e.astype(float)


def test_one_se_error_rule_by_hand():
    obj = _objective(n=200, seed=7, loss="squared_hinge")
    res = bisvm_lbfgs(obj, 0.01, warn=False)
    b, coefs, steps, path = one_se_error_scalar(obj, float(res.beta[0]), warm=res.coefs)
    assert steps == path.betas.size - 1 >= 1
    # equal fold sizes: the pooled error is the plain mean over all validation rows, and
    # its standard error sqrt(sum (e - E)^2) / N
    errs = []
    for beta in path.betas:
        e = _errors_by_hand(obj, beta)
        errs.append(e.mean())
        assert path.errors[len(errs) - 1] == pytest.approx(e.mean(), abs=1e-12)
    errs = np.array(errs)
    k = int(np.argmin(errs))
    e_min = _errors_by_hand(obj, path.betas[k])
    se = np.sqrt(np.sum((e_min - e_min.mean()) ** 2)) / e_min.size
    ok = errs <= errs[k] + se + 1e-12
    assert b == path.betas[np.flatnonzero(ok)[-1]]  # the largest within one SE
    assert errs[path.chosen_index] <= errs[k] + se + 1e-12
    assert np.all(~ok[path.chosen_index + 1:])
    assert b >= res.beta[0]
    est = BilevelSVC(model="scalar", scalar_rule="1se_error", random_state=0)
    X, y = make_classification(200, 12, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=7)
    plain = BilevelSVC(model="scalar", random_state=0).fit(X, y)
    assert est.fit(X, y).penalty_weights_[0] >= plain.penalty_weights_[0]
    with pytest.raises(ValueError, match="scalar_rule"):
        BilevelSVC(scalar_rule="2se").fit(X, y)


def test_max_line_search_caps_the_trials():
    obj = _objective(model="vector")
    res = bisvm_lbfgs(obj, 0.01, max_iter=5, max_line_search=1, warn=False)
    # the start, then at most one trial per iteration (plus the stopping one)
    assert len(res.trials) <= 1 + res.n_iter + 1
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="max_line_search"):
            bisvm_lbfgs(obj, 0.01, max_line_search=bad)


def test_blas_threads_by_gram_size_and_validation():
    assert gram_threads(200, 2000) == 1
    assert gram_threads(100_000, 1000) is None  # 1e11 flops: the library default
    n = int(np.ceil(SMALL_GRAM ** (1 / 3))) + 1
    assert gram_threads(n, n) is None and gram_threads(n - 2, n - 2) == 1
    assert gram_threads(10, 10, threads=3) == 3 and gram_threads(10, 10, None) is None
    X, y = make_classification(60, 5, random_state=0)
    assert BilevelSVC(model="scalar", random_state=0).fit(X, y).blas_threads_ == 1
    assert BilevelSVC(model="scalar", blas_threads=None,
                      random_state=0).fit(X, y).blas_threads_ is None
    for bad in ("two", 0, -1, True, 1.5):
        with pytest.raises(ValueError, match="blas_threads"):
            BilevelSVC(blas_threads=bad).fit(X, y)


def test_repeated_folds_validate_every_row_once_per_repeat():
    y = np.r_[np.zeros(23), np.ones(17)]
    splits = validation_splits(y, "kfold", validation_fraction=0.2, cv=4, random_state=0,
                               repeats=3)
    assert len(splits) == 12
    counts = np.bincount(np.concatenate([va for _, va in splits]), minlength=y.size)
    np.testing.assert_array_equal(counts, 3)
    for tr, va in splits:
        assert np.intersect1d(tr, va).size == 0 and tr.size + va.size == y.size
    # one repeat is the plain stratified k-fold of the default
    one = validation_splits(y, "kfold", validation_fraction=0.2, cv=4, random_state=0)
    assert len(one) == 4
    X, yy = make_classification(80, 5, random_state=0)
    est = BilevelSVC(model="scalar", cv=4, cv_repeats=2, random_state=0).fit(X, yy)
    assert np.isfinite(est.validation_score_)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="cv_repeats"):
            BilevelSVC(cv_repeats=bad).fit(X, yy)
