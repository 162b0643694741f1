"""The self-tuning objectives on Nyström features: the hypergradient of the L2-SVM's
k-fold criterion in log C, log γ and every log γ_j (binary and multiclass one-vs-one
and one-vs-rest, weighted rows, sparse rows) and of the L2-loss ε-SVR's in log C,
log ε and the widths, against central finite differences of the criterion; the
pooled terms against the value; the tuners run end to end on the features."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import KFold, StratifiedKFold

from bisvm.selection.kernel_bilevel import KernelHyperModel
from bisvm.selection.kernel_fit import tune_kernel_svc
from bisvm.selection.kernel_nystroem import (
    NystroemFeatures,
    NystroemSVCObjective,
    NystroemSVRObjective,
    nystroem_pairs,
    nystroem_svr_folds,
)
from bisvm.selection.kernel_svr_tune import SVRHyperModel, tune_kernel_svr
from bisvm.solvers.nystroem import select_landmarks


def _data(n=150, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[rng.random((n, d)) < 0.3] = 0.0  # zeros, so that the sparse case is sparse
    y3 = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 0.8)
    yr = np.sin(X[:, 0]) + 0.3 * X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(n)
    return X, y3, yr


def _central(obj, beta, h=1e-5):
    return np.array([(obj.evaluate(beta * np.exp(h * e)).value
                      - obj.evaluate(beta * np.exp(-h * e)).value) / (2 * h)
                     for e in np.eye(beta.size)])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes,multiclass,weighted", [
    (2, "ovo", False), (2, "ovo", True), (3, "ovo", False), (3, "ovr", True)])
@pytest.mark.parametrize("gamma", [np.array([0.5]), np.array([0.3, 0.7, 0.2])])
def test_svc_hypergradient_matches_central_differences(gamma, n_classes, multiclass,
                                                       weighted, sparse):
    X, y3, _ = _data()
    y = y3 if n_classes == 3 else (y3 > 0).astype(int)
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    rw = np.random.default_rng(1).uniform(0.5, 2.0, y.size) if weighted else None
    Z = X[select_landmarks(X, 20, "kmeans++", 0)]
    feats = NystroemFeatures.build(sp.csr_matrix(X) if sparse else X, Z)
    widths = "shared" if gamma.size == 1 else "per_feature"
    obj = NystroemSVCObjective(feats, nystroem_pairs(y, n_classes, splits, multiclass, rw),
                               KernelHyperModel(widths, 3, 2.0, 1.0), "scaled_squared_hinge")
    beta = np.r_[1.0, gamma]
    ev, se = obj.evaluate_se(beta)
    np.testing.assert_allclose(ev.grad * beta, _central(obj, beta), rtol=1e-5, atol=1e-9)
    t, w, _ = obj.terms(2.0, gamma)
    assert float(w @ t) == pytest.approx(ev.value, rel=1e-12) and se > 0


@pytest.mark.parametrize("gamma", [np.array([0.5]), np.array([0.3, 0.7, 0.2])])
@pytest.mark.parametrize("weighted", [False, True])
def test_svr_hypergradient_matches_central_differences(gamma, weighted):
    X, _, y = _data()
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    sw = np.random.default_rng(1).uniform(0.5, 2.0, y.size) if weighted else None
    Z = X[select_landmarks(X, 20, "kmeans++", 0)]
    widths = "shared" if gamma.size == 1 else "per_feature"
    obj = NystroemSVRObjective(NystroemFeatures.build(X, Z), nystroem_svr_folds(y, splits, sw),
                               SVRHyperModel(widths, 3, 3.0, 0.1, 1.0))
    beta = np.r_[1.0, 1.0, gamma]
    ev = obj.evaluate(beta)
    np.testing.assert_allclose(ev.grad * beta, _central(obj, beta), rtol=1e-5, atol=1e-9)
    t, w, _ = obj.terms(3.0, gamma, epsilon=0.1)
    assert float(w @ t) == pytest.approx(ev.value, rel=1e-12)


def test_tuners_run_on_the_features_and_lower_the_criterion():
    X, y3, yr = _data(n=200)
    y = (y3 > 0).astype(int)
    Z = X[select_landmarks(X, 40, "kmeans++", 0)]
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    res = tune_kernel_svc(X, y, 2, splits, loss="scaled_squared_hinge", landmarks=Z,
                          max_iter=10)
    assert res.value <= np.nanmin(res.scan_values) + 1e-12
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    res = tune_kernel_svr(X, yr, splits, landmarks=Z, max_iter=10)
    assert res.value <= np.nanmin(res.scan_values) + 1e-12 and res.epsilon > 0
