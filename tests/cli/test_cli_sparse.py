"""Issue #11 item 5: svmlight files stay sparse from the file to the estimator.

The data layer (reader, scaling, split) is checked against scikit-learn's own sparse
tools (``load_svmlight_file``, ``StandardScaler(with_mean=False)``, ``MaxAbsScaler``) and
against the dense path of bisvm itself, and never densifies ``X`` (types at each stage,
and a ``tracemalloc`` peak far below the size of a dense copy).
"""

import json
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.preprocessing import MaxAbsScaler, StandardScaler

from bisvm.data import (
    MAX_DENSE_ELEMENTS,
    SPARSE_AUTO_MIN_ENTRIES,
    DataError,
    NumberedNames,
    Scaler,
    read_table,
    train_test_split_seeded,
)


def sparse_problem(n, d, density, seed=0, informative=5):
    """A sparse two-class problem: the label is the sign of a few informative columns,
    which are denser than the noise columns so that every row can be classified."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    dense_part = rng.normal(size=(n, informative)) * (rng.random((n, informative)) < 0.6)
    X = sp.hstack([sp.csr_matrix(dense_part), X[:, informative:]], format="lil")
    X[0, d - 1] = 0.5  # the file then declares all d features
    X = X.tocsr()
    w = np.array([2.0, -2.0, 1.5, -1.5, 1.0][:informative])
    y = np.where(dense_part @ w + 0.1 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def write_svm(tmp_path, X, y, name="p.svm"):
    path = tmp_path / name
    dump_svmlight_file(X, y, str(path), zero_based=True)
    return path


# --------------------------------------------------------------------------- reader


def test_reader_keeps_csr_and_agrees_with_sklearn_and_the_dense_read(tmp_path):
    X, y = sparse_problem(300, 400, 0.02)
    path = write_svm(tmp_path, X, y)
    ds = read_table(path, sparse=True)
    ref_X, ref_y = load_svmlight_file(str(path), zero_based=True)
    assert sp.issparse(ds.X) and ds.X.format == "csr" and ds.X.dtype == np.float64
    assert ds.X.shape == (300, 400) == (ds.n_samples, ds.n_features)
    assert (ds.X != ref_X).nnz == 0 and np.array_equal(ds.y, ref_y)
    assert ds.X.nnz == np.count_nonzero(ds.X.data)  # no explicit zeros
    assert ds.feature_names[:2] == ["x0", "x1"] and ds.feature_names[-1] == "x399"
    assert any("kept sparse" in note for note in ds.notes)
    dense = read_table(path, sparse=False)
    assert isinstance(dense.X, np.ndarray)
    np.testing.assert_array_equal(dense.X, ds.X.toarray())
    assert not any("sparse" in note for note in dense.notes)


def test_auto_rule_small_or_dense_files_are_dense_large_sparse_ones_csr(tmp_path):
    # small: dense (120,000 entries)
    X, y = sparse_problem(300, 400, 0.02)
    assert isinstance(read_table(write_svm(tmp_path, X, y, "s.svm")).X, np.ndarray)
    # large and sparse: CSR (1,200 x 1,000 = 1.2e6 entries, ~1 % stored)
    X, y = sparse_problem(1200, 1000, 0.01)
    assert 1200 * 1000 > SPARSE_AUTO_MIN_ENTRIES
    assert sp.issparse(read_table(write_svm(tmp_path, X, y, "l.svm")).X)
    # large but mostly stored: dense
    rng = np.random.default_rng(1)
    Xd = rng.normal(size=(1100, 1000))
    Xd[:, :10] += 0.5  # no column is all zero
    yd = np.where(Xd[:, 0] > 0.5, 1, -1)
    assert isinstance(read_table(write_svm(tmp_path, Xd, yd, "d.svm")).X, np.ndarray)


def test_missing_values_in_sparse_rows_are_named_or_dropped(tmp_path):
    path = tmp_path / "m.svm"
    path.write_bytes(b"1 0:1 3:2\n-1 1:1 4:nan\n1 2:inf\n-1 0:-1 4:3\n1 3:1\n")
    with pytest.raises(DataError, match=r"column 'x4', row 2: missing or infinite"):
        read_table(path, sparse=True)
    ds = read_table(path, sparse=True, drop_missing=True)
    dense = read_table(path, sparse=False, drop_missing=True)
    assert sp.issparse(ds.X) and ds.dropped_rows == 2 == dense.dropped_rows
    np.testing.assert_array_equal(ds.X.toarray(), dense.X)
    np.testing.assert_array_equal(ds.X.toarray(), [[1, 0, 0, 2, 0], [-1, 0, 0, 0, 3],
                                                   [0, 0, 0, 1, 0]])
    assert ds.y.tolist() == [1, -1, 1]


def test_size_limits_and_the_sparse_option(tmp_path):
    # six rows declaring feature index 19,999,999: a tiny CSR, a 1.2e8-value dense copy
    path = tmp_path / "wide.svm"
    path.write_bytes(b"".join(b"%d 0:1 19999999:%d\n" % (s, i + 1)
                              for i, s in enumerate([1, -1] * 3)))
    assert 6 * 20_000_000 > MAX_DENSE_ELEMENTS
    with pytest.raises(DataError, match="too large to hold densely.*sparse"):
        read_table(path, sparse=False)
    ds = read_table(path)  # auto: sparse
    assert sp.issparse(ds.X) and ds.X.shape == (6, 20_000_000) and ds.X.nnz == 12
    with pytest.raises(ValueError, match="sparse must be"):
        read_table(path, sparse="yes")


def test_numbered_names_behave_as_the_list_of_names():
    names = NumberedNames(12)
    ref = [f"x{j}" for j in range(12)]
    assert names == ref and ref == names and list(names) == ref and len(names) == 12
    assert names[3] == "x3" and names[-1] == "x11" and names[2:5] == ref[2:5]
    assert names.index("x10") == 10 and "x11" in names
    for bad in ("x12", "x01", "x-1", "y3", 3):
        assert bad not in names
    with pytest.raises(ValueError, match="not in the feature names"):
        names.index("x12")
    with pytest.raises(IndexError):
        names[12]
    assert names != ref[:-1] and "x0, x1, x2, ..., x11" in repr(names)
    assert json.dumps(list(names[:2])) == '["x0", "x1"]'


def test_prediction_file_is_read_with_the_training_base_and_width(tmp_path):
    train = tmp_path / "train.svm"
    train.write_bytes(b"1 0:1 2:0.5\n-1 1:2 3:1\n1 0:3\n")  # zero-based (has index 0)
    ds = read_table(train)
    assert ds.svmlight_base == 0 and ds.X.shape == (3, 4)
    schema = json.loads(json.dumps(ds.schema))
    assert schema["svmlight_base"] == 0
    new = tmp_path / "new.svm"
    new.write_bytes(b"1 2:4\n")  # no index 0 and a lower largest index
    auto = read_table(new, target=False)  # on its own, read as one-based (sklearn's rule)
    assert auto.svmlight_base == 1 and auto.X.tolist() == [[0.0, 4.0]] and auto.y is None
    back = read_table(new, schema=schema)  # one label is fine for rows to predict
    assert back.X.shape == (1, 4) and back.X.tolist() == [[0.0, 0.0, 4.0, 0.0]]
    assert back.y.tolist() == [1]
    new.write_bytes(b"1 4:1\n")
    with pytest.raises(DataError, match="feature index 4 is beyond the 4 features"):
        read_table(new, schema=schema)
    # a one-based training file: x0 is index 1, and index 0 later is an error
    train.write_bytes(b"1 1:1 3:2\n-1 2:1\n")
    one = read_table(train)
    assert one.svmlight_base == 1 and one.X.tolist() == [[1.0, 0.0, 2.0], [0.0, 1.0, 0.0]]
    new.write_bytes(b"1 0:1 1:1\n")
    with pytest.raises(DataError, match="index 0 in a file read as one-based"):
        read_table(new, schema=one.schema)
    with pytest.raises(ValueError, match="svmlight_base must be 0 or 1"):
        read_table(new, schema={**one.schema, "svmlight_base": 2})


def test_prediction_file_is_read_as_sparse_as_the_training_file(tmp_path):
    X, y = sparse_problem(300, 400, 0.02)
    path = write_svm(tmp_path, X, y)
    sparse_sch = read_table(path, sparse=True).schema
    dense_sch = read_table(path).schema  # small: dense
    assert sparse_sch["svmlight_sparse"] is True and dense_sch["svmlight_sparse"] is False
    assert sp.issparse(read_table(path, schema=json.loads(json.dumps(sparse_sch))).X)
    assert isinstance(read_table(path, schema=dense_sch).X, np.ndarray)
    assert sp.issparse(read_table(path, schema=dense_sch, sparse=True).X)  # explicit wins
    with pytest.raises(ValueError, match="svmlight_sparse must be true or false"):
        read_table(path, schema={**sparse_sch, "svmlight_sparse": "yes"})


# --------------------------------------------------------------------------- scaler


def _with_special_columns(X):
    """Append an all-zero column, a constant stored column and a 1e300-scale column."""
    n = X.shape[0]
    rng = np.random.default_rng(3)
    big = np.where(rng.random(n) < 0.3, rng.normal(size=n) * 1e300, 0.0)
    extra = sp.csr_matrix(np.c_[np.zeros(n), np.full(n, 7.0), big])
    return sp.hstack([X, extra], format="csr")


def test_standard_on_sparse_is_standard_without_centering():
    X, _ = sparse_problem(200, 50, 0.1)
    X = _with_special_columns(X)
    before = X.copy()
    sc = Scaler("standard").fit(X)
    assert sc.effective_method_ == "standard-uncentered" and "without centering" in sc.describe()
    assert np.all(sc.offset_ == 0) and np.isfinite(sc.scale_).all() and np.all(sc.scale_ > 0)
    Z = sc.transform(X)
    assert sp.issparse(Z) and Z.format == "csr"
    assert np.array_equal(Z.indices, X.indices) and np.array_equal(Z.indptr, X.indptr)
    assert (X != before).nnz == 0  # the input is not scaled in place
    # the divisor is the training standard deviation: sklearn's with_mean=False scaler
    # (on the ordinary columns) and bisvm's own dense standard scaler agree
    ref = StandardScaler(with_mean=False).fit(X[:, :50])
    np.testing.assert_allclose(sc.scale_[:50], ref.scale_, rtol=1e-12)
    np.testing.assert_allclose(Z[:, :50].toarray(), ref.transform(X[:, :50]).toarray(),
                               rtol=1e-12)
    dense = Scaler("standard").fit(X.toarray())
    np.testing.assert_allclose(sc.scale_, dense.scale_, rtol=1e-12)
    # zero-variance columns are left as they are, not divided by zero; the 1e300 column
    # gets unit variance
    assert sc.scale_[50] == 1.0 and sc.scale_[51] == 1.0
    assert np.isfinite(Z.data).all()
    np.testing.assert_allclose(Z[:, 52].toarray().std(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(sc.inverse_transform(Z).toarray(), X.toarray(), rtol=1e-12)


def test_minmax_on_sparse_is_maxabs_and_none_is_identity():
    X, _ = sparse_problem(150, 40, 0.1, seed=2)
    X = _with_special_columns(X)
    sc = Scaler("minmax").fit(X)
    assert sc.effective_method_ == "maxabs" and "max-abs" in sc.describe()
    ref = MaxAbsScaler().fit(X)
    Z = sc.transform(X)
    assert sp.issparse(Z)
    np.testing.assert_allclose(Z.toarray(), ref.transform(X).toarray(), rtol=1e-12)
    assert abs(Z).max() <= 1.0 + 1e-15
    sn = Scaler("none").fit(X)
    assert sn.effective_method_ == "none"
    assert (sn.transform(X) != X).nnz == 0 and sp.issparse(sn.transform(X))


def test_sparse_scaler_record_round_trip_and_validation():
    X, _ = sparse_problem(100, 30, 0.2, seed=4)
    sc = Scaler("standard").fit(X)
    rec = json.loads(json.dumps(sc.to_dict()))
    assert rec["effective_method"] == "standard-uncentered"
    back = Scaler.from_dict(rec)
    assert back.effective_method_ == "standard-uncentered"
    assert back.transform(X).data.tobytes() == sc.transform(X).data.tobytes()
    # a record written before effective_method existed reads as its method
    old = {k: v for k, v in Scaler("standard").fit(X.toarray()).to_dict().items()
           if k != "effective_method"}
    assert Scaler.from_dict(old).effective_method_ == "standard"
    with pytest.raises(ValueError, match="does not go with method"):
        Scaler.from_dict({**rec, "method": "minmax"})
    with pytest.raises(ValueError, match="zero offsets"):
        Scaler.from_dict({**rec, "offset": [1.0] * 30})


def test_dense_fitted_scaler_on_sparse_rows_gives_the_dense_result():
    X, _ = sparse_problem(80, 20, 0.2, seed=5)
    sc = Scaler("standard").fit(X.toarray())  # centres
    Z = sc.transform(X)
    assert isinstance(Z, np.ndarray)
    np.testing.assert_allclose(Z, sc.transform(X.toarray()), rtol=1e-12)


def test_sparse_scaler_bad_input():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, np.inf], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="non-finite value at row 1, column 1"):
        Scaler().fit(X)
    sc = Scaler().fit(sp.csr_matrix(np.eye(3)))
    with pytest.raises(ValueError, match="X has 2 features, the scaler was fitted on 3"):
        sc.transform(sp.csr_matrix(np.eye(2)))


# --------------------------------------------------------------------------- split


def test_split_of_csr_rows_is_the_split_of_the_dense_rows():
    X, y = sparse_problem(300, 60, 0.1, seed=6)
    a = train_test_split_seeded(X, y, 0.25, random_state=7)
    b = train_test_split_seeded(X.toarray(), y, 0.25, random_state=7)
    assert sp.issparse(a[0]) and sp.issparse(a[1]) and a[0].format == "csr"
    np.testing.assert_array_equal(a[0].toarray(), b[0])
    np.testing.assert_array_equal(a[1].toarray(), b[1])
    np.testing.assert_array_equal(a[2], b[2])
    np.testing.assert_array_equal(a[3], b[3])


def test_read_split_scale_never_densify(tmp_path):
    """A 2,000 x 20,000 file (0.25 % stored): a dense copy would take 320 MB; reading,
    splitting and scaling it must stay far below that."""
    n, d = 2000, 20_000
    X, y = sparse_problem(n, d, 0.0025, seed=8)
    path = write_svm(tmp_path, X, y)
    del X
    tracemalloc.start()
    try:
        ds = read_table(path)
        assert sp.issparse(ds.X) and ds.X.shape == (n, d)
        Xtr, Xte, ytr, yte = train_test_split_seeded(ds.X, ds.y, 0.25, random_state=0)
        assert sp.issparse(Xtr) and sp.issparse(Xte)
        sc = Scaler("standard").fit(Xtr)
        Ztr, Zte = sc.transform(Xtr), sc.transform(Xte)
        assert sp.issparse(Ztr) and sp.issparse(Zte)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.05 * n * d * 8, peak  # < 16 MB against 320 MB dense


# --------------------------------------------------------------------------- CLI


def run_cli(capsys, *args):
    """``bisvm ARGS`` in this process: (exit code, stdout, stderr)."""
    from bisvm.cli import main

    code = main(list(map(str, args)))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def svm_file(tmp_path_factory):
    X, y = sparse_problem(200, 300, 0.03, seed=11)
    return write_svm(tmp_path_factory.mktemp("svm"), X, y)


def test_select_on_svmlight_keeps_x_sparse_end_to_end(svm_file):
    """As a user runs it (a subprocess, --json): the estimator receives the CSR matrix
    unscaled and standardises it itself (columns divided only, never densified), the
    informative columns are selected."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "bisvm", "select", "--data", str(svm_file),
                        "--sparse", "always", "--no-grid", "--max-iter", "25", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert out["input"]["sparse"] and out["input"]["estimator_input"] == "csr_matrix"
    assert out["input"]["stored_values"] > 0 and out["input"]["density"] < 0.05
    assert out["scaling"] == "none" and out["standardized_inside"]
    assert any("standardises each column inside the fit" in n for n in out["notes"])
    assert out["lower_level_solver"] in ("newton", "woodbury", "cg")
    assert out["n_features"] == 300 and out["features_listed"] == "all"
    assert len(out["coefficients"]) == 300 and out["coefficients"]["x299"] is not None
    top = out["selected_features"][:8]
    assert {"x0", "x1", "x2", "x3"} <= set(top), top
    assert 0.8 <= out["test_accuracy"] <= 1.0
    assert np.isfinite(out["test_halved_mse"]) and out["n_selected"] < 150


def test_select_sparse_and_dense_agree_and_beat_the_grid(svm_file, tmp_path, capsys):
    """Without scaling the sparse and the dense run solve the same problems: the same
    learned weight, coefficients, criterion and grid (the dense path is the reference).
    The plots of the sparse run keep the 40 largest of the 300 features."""
    common = ["select", "--data", svm_file, "--model", "scalar", "--criterion", "holdout",
              "--scaling", "none", "--json"]
    code, out, err = run_cli(capsys, *common, "--sparse", "always", "--out", tmp_path / "p")
    assert code == 0, err
    sparse = json.loads(out)
    for name in ("validation_curve.png", "regularization_path.png", "importance.png"):
        assert (tmp_path / "p" / name).stat().st_size > 1000
    assert any("importance.png: the 40 of 300 features" in n for n in sparse["notes"])
    assert any("regularization_path.png: the 40 of 300" in n for n in sparse["notes"])
    code, out, err = run_cli(capsys, *common, "--sparse", "never")
    assert code == 0, err
    dense = json.loads(out)
    assert sparse["input"]["sparse"] and not dense["input"]["sparse"]
    assert dense["input"]["estimator_input"] == "ndarray"
    for key in ("validation_objective", "grid_validation_objective", "test_halved_mse"):
        np.testing.assert_allclose(sparse[key], dense[key], rtol=1e-8)
    np.testing.assert_allclose(sparse["penalty_weights"]["beta"],
                               dense["penalty_weights"]["beta"], rtol=1e-6)
    cs = np.array([sparse["coefficients"][f"x{j}"] for j in range(300)])
    cd = np.array([dense["coefficients"][f"x{j}"] for j in range(300)])
    np.testing.assert_allclose(cs, cd, atol=1e-8 * np.abs(cd).max())
    assert sparse["test_accuracy"] == dense["test_accuracy"] >= 0.8
    # 300 features outnumber a fold's rows, so the scalar rule is the 1-SE one
    # (BilevelSVC's scalar_rule="auto"): a weight at least the grid's best, i.e. a model
    # at least as sparse, whose criterion is not below the grid's minimum
    assert sparse["penalty_weights"]["beta"] >= sparse["grid_beta"] * (1 - 1e-6)
    assert sparse["validation_objective"] >= sparse["grid_validation_objective"] - 1e-4
    assert sparse["grid_lower_level_solves"] >= 149


def test_select_sparse_text_report(svm_file, capsys):
    # --scaling standard asks the CLI to scale: on sparse X without centering, and the
    # estimator does not standardise again
    code, out, err = run_cli(capsys, "select", "--data", svm_file, "--sparse", "always",
                             "--model", "scalar", "--no-grid", "--scaling", "standard")
    assert code == 0, err
    assert "150 training rows, 50 test rows" in out
    assert "sparse X:" in out and "note: scaling: standard without centering" in out
    assert "(standardize=False)" in out and "coef (per training standard deviation)" in out
    assert "test accuracy" in out and "selected" in out
    assert any(s in out for s in ("Woodbury", "Newton-CG", "dense Newton"))


def test_select_json_lists_only_selected_features_above_1000(tmp_path, capsys):
    X, y = sparse_problem(240, 3000, 0.004, seed=12)
    path = write_svm(tmp_path, X, y)
    code, out, err = run_cli(capsys, "select", "--data", path, "--sparse", "always",
                             "--model", "scalar", "--no-grid", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["n_features"] == 3000 and r["features_listed"] == "selected"
    assert set(r["coefficients"]) == set(r["selected_features"]) == set(r["importance"])
    assert 0 < r["n_selected"] < 3000 and r["input"]["estimator_input"] == "csr_matrix"


def test_fit_and_predict_with_sparse_svmlight(svm_file, tmp_path, capsys):
    model = tmp_path / "m.bisvm"
    code, out, err = run_cli(capsys, "fit", "--model", "elastic-net", "--data", svm_file,
                             "--sparse", "always", "--test-size", "0.25", "--save", model,
                             "--json")
    assert code == 0, err
    fit = json.loads(out)
    assert fit["test_score"] >= 0.8
    assert fit["scaling"] == "none" and fit["params"]["standardize"] is True
    # rows to predict: a file with placeholder labels that never reaches the last index
    new = tmp_path / "new.svm"
    new.write_bytes(b"0 0:1.5 3:2\n0 1:-1.5\n0 2:0.5 10:1\n")
    code, out, err = run_cli(capsys, "predict", "--model", model, "--data", new, "--json")
    assert code == 0, err
    pred = json.loads(out)
    assert pred["n_rows"] == 3 and any("kept sparse" in n for n in pred["notes"])
    # the same rows, dense, through the library: same decisions
    from bisvm.persistence import load_model

    loaded = load_model(model)
    rows = np.zeros((3, 300))
    rows[0, [0, 3]] = [1.5, 2.0]
    rows[1, 1] = -1.5
    rows[2, [2, 10]] = [0.5, 1.0]
    ref = loaded.estimator.decision_function(loaded.scaler.transform(rows))
    np.testing.assert_allclose(pred["predictions"]["decision"], ref, rtol=1e-10, atol=1e-12)
    # a model that takes no sparse input refuses --sparse always in one line
    code, out, err = run_cli(capsys, "fit", "--model", "kernel-logistic", "--data",
                             svm_file, "--sparse", "always")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "does not take sparse input" in err
    # bisvm tune indexes X densely: no --sparse option, svmlight files are read densely
    with pytest.raises(SystemExit):
        run_cli(capsys, "tune", "--model", "elastic-net", "--method", "grid",
                "--data", svm_file, "--sparse", "always")
    assert "unrecognized arguments: --sparse" in capsys.readouterr().err
