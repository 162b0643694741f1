"""Model files of models fitted on sparse X (format version 2, the ``$csr`` node).

Round trips: every estimator that accepts sparse X comes back predicting the same bytes on
sparse and on dense rows, with its sparse attributes (``support_vectors_``,
``dual_coef_``) sparse and identical array for array. Refusals: a CSR triple that is not a
consistent CSR structure is refused with a message naming it, even when the file's sha256
digests were recomputed after the edit (so the structural check, not the digest, catches
it)."""

import hashlib
import io
import json
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator
from sklearn.datasets import load_iris

import bisvm
from bisvm.persistence import (
    ModelFileError,
    check_round_trip,
    is_registered,
    load_model,
    register_estimator,
    save_model,
    unregister_estimator,
)


class Holder(BaseEstimator):
    """An estimator whose fitted attribute ``m_`` a test sets to any matrix."""

    def __init__(self, c=1.0):
        self.c = c

    def predict(self, X):
        return np.asarray(self.m_ @ np.ones(self.m_.shape[1])).ravel()[: len(X)]


@pytest.fixture(autouse=True)
def registry():
    added = not is_registered(Holder)
    register_estimator(Holder)
    yield
    if added:
        unregister_estimator(Holder)


@pytest.fixture(scope="module")
def sparse_iris():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    X[np.abs(X) < 0.6] = 0.0  # about half the entries are zero
    return sp.csr_matrix(X), X, y


CASES = [
    ("SVC", {"probability": True, "random_state": 0}, "multiclass"),
    ("SVC", {"kernel": "linear"}, "binary"),
    ("SVR", {"kernel": "poly", "degree": 2}, "regression"),
    ("NuSVC", {"nu": 0.3}, "multiclass"),
    ("NuSVR", {"kernel": "linear"}, "regression"),
    ("OneClassSVM", {"nu": 0.2}, "novelty"),
    ("LinearSVR", {"C": 0.5}, "regression"),
    ("ElasticNetSVC", {}, "binary"),
    ("BilevelSVC", {"model": "scalar", "max_iter": 5}, "binary"),
]


@pytest.mark.parametrize("name, params, task", CASES,
                         ids=[f"{n}-{t}" for n, _, t in CASES])
def test_sparse_fit_round_trip_bit_for_bit(sparse_iris, tmp_path, name, params, task):
    Xs, X, y = sparse_iris
    if task == "binary":
        keep = y < 2
        Xs, X, y = Xs[keep], X[keep], y[keep]
    target = {"regression": X[:, 0] + 0.3 * X[:, 2], "novelty": None}.get(task, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = getattr(bisvm, name)(**params).fit(Xs, target)
    sparse_attrs = sorted(k for k, v in vars(est).items() if sp.issparse(v))
    loaded = check_round_trip(est, Xs, tmp_path / "s.bisvm")
    check_round_trip(est, X, tmp_path / "d.bisvm")  # and predicting dense rows
    model = loaded.estimator
    for attr in sparse_attrs:  # sparse stays sparse, of the same class
        assert type(getattr(model, attr)) is type(getattr(est, attr))
    # the lowest version describing the file: 2 only when a sparse matrix is in it
    assert loaded.meta["format_version"] == (2 if sparse_attrs else 1)
    if hasattr(est, "support_vectors_"):
        assert sparse_attrs == ["dual_coef_", "support_vectors_"]
        # the loaded decision function is the kernel expansion over the loaded support
        # vectors, recomputed here with scipy (an independent evaluation)
        if params.get("kernel") == "linear":
            f = np.asarray(model.dual_coef_ @ (model.support_vectors_ @ X.T)).ravel()
            f = f + model.intercept_[0]
            out = model.predict(X) if task == "regression" else model.decision_function(X)
            np.testing.assert_allclose(out, f, rtol=1e-12, atol=1e-12)


def _csr_holder(m):
    h = Holder()
    h.m_ = m
    return h


def test_csr_class_and_index_dtype_are_kept(tmp_path):
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(6, 9)) * (rng.random((6, 9)) < 0.3)
    for cls in (sp.csr_matrix, sp.csr_array):
        for idx in (np.int32, np.int64):
            m = cls(dense)
            m.indices, m.indptr = m.indices.astype(idx), m.indptr.astype(idx)
            loaded = check_round_trip(_csr_holder(m), dense, tmp_path / "h.bisvm")
            out = loaded.estimator.m_
            assert type(out) is cls and out.indices.dtype == idx and out.indptr.dtype == idx
            assert np.array_equal(out.toarray(), dense)
    # an empty matrix and one with an empty row
    for m in (sp.csr_matrix((3, 4)), sp.csr_matrix(np.array([[0, 1.5], [0, 0], [2, 0]]))):
        check_round_trip(_csr_holder(m), np.zeros((3, 1)), tmp_path / "e.bisvm")


def test_other_sparse_formats_refused_at_save(tmp_path):
    with pytest.raises(TypeError, match=r"Holder.m_: a .*csc_matrix cannot be stored.*tocsr"):
        save_model(_csr_holder(sp.csc_matrix(np.eye(3))), tmp_path / "x.bisvm")


# ------------------------------------------------------------------------ tampered CSR


def _saved(tmp_path):
    m = sp.csr_matrix(np.array([[1.0, 0, 2.0, 0], [0, 0, 0, 0], [0, 3.0, 0, 4.0]]))
    path = tmp_path / "ok.bisvm"
    save_model(_csr_holder(m), path)
    return path


def _rewrite(src, dst, edit):
    """Apply ``edit(meta, arrays)`` and write a consistent file: sha256, shape and dtype of
    every array recomputed, so only the loader's structural checks can object."""
    with zipfile.ZipFile(src) as zf:
        meta = json.loads(zf.read("meta.json"))
        with np.load(io.BytesIO(zf.read("arrays.npz"))) as z:
            arrays = {k: z[k] for k in z.files}
    edit(meta, arrays)
    for k, a in arrays.items():
        meta["arrays"][k].update(shape=list(a.shape), dtype=a.dtype.str,
                                 sha256=hashlib.sha256(np.ascontiguousarray(a).tobytes())
                                 .hexdigest())
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("meta.json", json.dumps(meta))
        zf.writestr("arrays.npz", buf.getvalue())
    return dst


def _node(meta):
    return meta["estimator"]["$estimator"]["attributes"]["m_"]["$csr"]


def _set(key, fn):
    def edit(meta, arrays):
        arrays[f"attr/m_/{key}"] = fn(arrays[f"attr/m_/{key}"])
    return edit


TAMPERED = {
    "indptr decreasing": (_set("indptr", lambda a: np.array([0, 3, 1, 4], a.dtype)),
                          "not non-decreasing"),
    "index out of range": (_set("indices", lambda a: np.where(a == 3, 4, a).astype(a.dtype)),
                           r"column index out of range \[0, 4\)"),
    "negative index": (_set("indices", lambda a: a - 1), "column index out of range"),
    "indptr too short": (_set("indptr", lambda a: a[:-1]), "indptr has 3 entries for 3 rows"),
    "indptr end": (_set("indptr", lambda a: np.minimum(a, 3)), "must run from 0 to 4"),
    "indptr start": (_set("indptr", lambda a: a + 1), "must run from 0 to 4"),
    "indices length": (_set("indices", lambda a: a[:-1]), "indices .3. and data .4. differ"),
    "float indices": (_set("indices", lambda a: a.astype(float)), "int32 or int64"),
    "2-d data": (_set("data", lambda a: a[None, :]), "1-d numeric"),
    "string data": (_set("data", lambda a: a.astype(str)), "1-d numeric"),
    "shape": (lambda m, a: _node(m).update(shape=[3, -4]), "two non-negative integers"),
    "shape float": (lambda m, a: _node(m).update(shape=[3.0, 4]), "two non-negative"),
    "class": (lambda m, a: _node(m).update({"class": "csc_matrix"}),
              "sparse class 'csc_matrix' is not allowed"),
    "missing part": (lambda m, a: _node(m).pop("indptr"), r"malformed \$csr node"),
    "version 1": (lambda m, a: m.update(format_version=1),
                  r"sparse matrix \(\$csr\) in a format version 1 file"),
}


@pytest.mark.parametrize("case", TAMPERED)
def test_inconsistent_csr_is_refused(tmp_path, case):
    edit, pattern = TAMPERED[case]
    bad = _rewrite(_saved(tmp_path), tmp_path / "bad.bisvm", edit)
    with pytest.raises(ModelFileError, match=pattern):
        load_model(bad)


def test_untampered_rewrite_loads(tmp_path):
    """The rewriting helper itself keeps a valid file valid (so the refusals above come
    from the edits)."""
    ok = _rewrite(_saved(tmp_path), tmp_path / "same.bisvm", lambda m, a: None)
    m = load_model(ok).estimator.m_
    assert np.array_equal(m.toarray(), [[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 4]])


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.text(max_size=12),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["class", "shape", "data", "indices", "indptr"]),
       value=st.one_of(_JSON, st.sampled_from(["attr/m_/data", "attr/m_/indices",
                                               "attr/m_/indptr"])))
def test_fuzzed_csr_node_loads_or_is_refused_cleanly(tmp_path, field, value):
    """Any JSON in any field of the ``$csr`` node: the load either refuses with
    ModelFileError or gives back a consistent CSR matrix (never another exception)."""
    ok = _saved(tmp_path)
    bad = _rewrite(ok, tmp_path / "fuzz.bisvm", lambda m, a: _node(m).update({field: value}))
    try:
        m = load_model(bad).estimator.m_
    except ModelFileError:
        return
    m.check_format(full_check=True)  # scipy's own consistency check
    assert m.shape[0] + 1 == m.indptr.size
