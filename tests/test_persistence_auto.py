"""Model files of the self-tuning kernel estimators :class:`~bisvm.AutoSVC` and
:class:`~bisvm.AutoSVR`: every fitted attribute (the refitted estimator, the learned
widths and the tuning record with its outer history) comes back bit for bit, and so do
the predictions (``check_round_trip``), for shared and per-feature widths, dense and
sparse input, string and multiclass labels, probabilities, and each lower level of
AutoSVR. The file stays data: its ``meta.json`` names only allowed classes."""

import json
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from bisvm import AutoSVC, AutoSVR
from bisvm.persistence import ModelFileError, check_round_trip, load_model, save_model

# few outer iterations keep the fits short; a file must hold whatever the fit reached
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def interaction():
    """60 x 4 rows whose class is the sign of x0 * x1: only an RBF kernel that weighs
    those two columns separates it."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 4))
    return X, (X[:, 0] * X[:, 1] > 0).astype(int)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 3))
    return X, np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(80)


def _same_predictions(a, b, X):
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    if hasattr(a, "decision_function"):
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("widths", ["shared", "per_feature"])
def test_autosvc_round_trip(interaction, widths, tmp_path):
    X, y = interaction
    est = AutoSVC(widths=widths, max_iter=8, random_state=0).fit(X, y)
    back = check_round_trip(est, X, tmp_path / "m.bisvm").estimator
    assert type(back) is AutoSVC and back.get_params() == est.get_params()
    _same_predictions(est, back, X)
    for name in ("C_", "gamma_", "learned_gamma_", "scale_", "feature_importances_",
                 "support_", "threshold_", "cv_value_", "n_solves_"):
        np.testing.assert_array_equal(getattr(back, name), getattr(est, name))
    # the tuning record keeps its outer path (what the report draws)
    assert len(back.tuning_.history) == len(est.tuning_.history)
    for h0, h1 in zip(est.tuning_.history[-1], back.tuning_.history[-1]):
        np.testing.assert_array_equal(h0.beta, h1.beta)
    # the selector survives too
    np.testing.assert_array_equal(back.transform(X), est.transform(X))


def test_autosvc_sparse_strings_multiclass_and_probabilities(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 5))
    X[np.abs(X) < 0.6] = 0.0
    y = np.array(["low", "mid", "high"])[np.digitize(X[:, 0] + X[:, 1], [-0.7, 0.7])]
    Xs = sp.csr_matrix(X)
    est = AutoSVC(max_iter=5, probability=True, random_state=0).fit(Xs, y)
    loaded = check_round_trip(est, Xs, tmp_path / "s.bisvm")
    back = loaded.estimator
    assert loaded.meta["format_version"] == 2 or not any(
        sp.issparse(v) for v in vars(est).values())
    np.testing.assert_array_equal(back.classes_, est.classes_)
    np.testing.assert_array_equal(back.predict(Xs), est.predict(Xs))
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("params", [
    {"lower": "kernel_ridge"},
    {"lower": "kernel_ridge", "widths": "per_feature"},
    {"lower": "svr"},
    {"lower": "kernel_ridge", "approximation": "nystroem", "n_components": 20},
])
def test_autosvr_round_trip_of_each_lower_level(regression, params, tmp_path):
    X, y = regression
    est = AutoSVR(max_iter=6, random_state=0, **params).fit(X, y)
    back = check_round_trip(est, X, tmp_path / "r.bisvm").estimator
    assert back.lower_ == est.lower_
    assert back.approximation_ == est.approximation_
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.score(X, y) == est.score(X, y)
    for name in ("C_", "epsilon_", "ridge_", "y_mean_", "y_scale_"):
        assert getattr(back, name) == getattr(est, name)


def test_autosvc_file_names_only_bisvm_classes(interaction, tmp_path):
    X, y = interaction
    est = AutoSVC(max_iter=4, random_state=0).fit(X, y)
    path = tmp_path / "m.bisvm"
    save_model(est, path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["arrays.npz", "meta.json"]
        meta = json.loads(z.read("meta.json"))
    classes = set()

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("class"), str):
                classes.add(node["class"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(meta["estimator"])
    assert {"bisvm.estimators.auto_svc.AutoSVC", "bisvm.estimators.svm.SVC"} <= classes
    assert all(c.startswith("bisvm.") for c in classes)


def test_autosvc_tampered_file_is_refused(interaction, tmp_path):
    X, y = interaction
    est = AutoSVC(max_iter=4, random_state=0).fit(X, y)
    path = tmp_path / "m.bisvm"
    save_model(est, path)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(members["meta.json"])
    meta["estimator"]["$estimator"]["class"] = "os.system"
    bad = tmp_path / "bad.bisvm"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("meta.json", json.dumps(meta))
        z.writestr("arrays.npz", members["arrays.npz"])
    with pytest.raises(ModelFileError, match="not allowed"):
        load_model(bad)
