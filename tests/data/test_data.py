"""Tests of the data layer: bundled sets, readers and their errors, groups, scaling,
splits and target encoding. Files are written by the tests into ``tmp_path``."""

import dataclasses
import json
import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_breast_cancer, load_iris
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from bisvm.data import (
    DataError,
    Scaler,
    binary_target,
    list_datasets,
    load_dataset,
    parse_groups,
    read_table,
    train_test_split_seeded,
)


def write(tmp_path, name, content):
    p = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    p.write_bytes(content)
    return p


# --------------------------------------------------------------------------- bundled


@pytest.mark.parametrize(
    "name, shape, n_classes",
    [("iris", (150, 4), 3), ("breast-cancer", (569, 30), 2), ("wine", (178, 13), 3),
     ("digits", (1797, 64), 10)],
)
def test_bundled_datasets(name, shape, n_classes):
    ds = load_dataset(name)
    assert ds.X.shape == shape and ds.X.dtype == np.float64 and ds.X.flags.c_contiguous
    assert ds.y.shape == (shape[0],)
    assert len(ds.feature_names) == shape[1]
    assert len(ds.target_names) == n_classes == np.unique(ds.y).size
    assert ds.description and name in list_datasets()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.X = None  # frozen record


def test_breast_cancer_groups_match_feature_names():
    ds = load_dataset("Breast_Cancer")
    assert ds.groups == {"mean": list(range(10)), "se": list(range(10, 20)),
                         "worst": list(range(20, 30))}
    ref = load_breast_cancer()
    np.testing.assert_array_equal(ds.X, ref.data)
    assert all(ds.feature_names[j].startswith("mean") for j in ds.groups["mean"])
    assert all(ds.feature_names[j].endswith("error") for j in ds.groups["se"])
    assert all(ds.feature_names[j].startswith("worst") for j in ds.groups["worst"])
    assert load_dataset("iris").groups is None


def test_unknown_dataset_lists_available():
    with pytest.raises(DataError, match="unknown dataset 'churn'.*iris.*breast-cancer"):
        load_dataset("churn")


def test_list_datasets_one_line_descriptions():
    d = list_datasets()
    assert set(d) == {"iris", "breast-cancer", "wine", "digits"}
    assert all(isinstance(v, str) and "\n" not in v and v for v in d.values())


# --------------------------------------------------------------------------- CSV


def test_csv_basic_target_by_name_and_default_last(tmp_path):
    p = write(tmp_path, "d.csv", "y,a,b\n1,0.5,2\n0,1.5,3\n1,2.5,4\n")
    ds = read_table(p, target="y")
    np.testing.assert_array_equal(ds.X, [[0.5, 2], [1.5, 3], [2.5, 4]])
    np.testing.assert_array_equal(ds.y, [1, 0, 1])
    assert ds.feature_names == ["a", "b"] and ds.target == "y" and ds.target_names == [0, 1]
    ds2 = read_table(p)  # last column
    assert ds2.target == "b" and ds2.feature_names == ["y", "a"]
    ds3 = read_table(p, target=False)
    assert ds3.y is None and ds3.X.shape == (3, 3)


def test_tsv_semicolon_and_txt(tmp_path):
    for name, text in [("d.tsv", "a\tb\ty\n1\t2\tu\n3\t4\tv\n"),
                       ("d.csv", "a;b;y\n1;2;u\n3;4;v\n"),
                       ("d.txt", "a|b|y\n1|2|u\n3|4|v\n5|6|u\n")]:
        ds = read_table(write(tmp_path, name, text))
        assert ds.feature_names == ["a", "b"], name
        assert ds.X[1].tolist() == [3, 4]
        assert ds.y.tolist()[:2] == ["u", "v"]


def test_utf8_bom_and_string_target(tmp_path):
    p = write(tmp_path, "d.csv", "\ufeffa,label\n1,cat\n2,dog\n")
    ds = read_table(p)
    assert ds.feature_names == ["a"] and ds.y.tolist() == ["cat", "dog"]


def test_one_hot_encoding_is_reported(tmp_path):
    p = write(tmp_path, "d.csv",
              "tenure,bandwidth,churn\n1,low,yes\n5,high,no\n3,low,no\n7,mid,yes\n")
    ds = read_table(p, target="churn")
    assert ds.feature_names == ["tenure", "bandwidth=high", "bandwidth=low", "bandwidth=mid"]
    assert ds.encoded == {"bandwidth": ["bandwidth=high", "bandwidth=low", "bandwidth=mid"]}
    assert ds.categories == {"bandwidth": ["high", "low", "mid"]}
    np.testing.assert_array_equal(ds.X[:, 1:], [[0, 1, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert any("one-hot encoded column 'bandwidth'" in n for n in ds.notes)
    assert ds.columns == ["tenure", "bandwidth"]


def test_forced_categorical_and_none(tmp_path):
    p = write(tmp_path, "d.csv", "code,plan,y\n1,a,0\n2,b,1\n1,a,1\n")
    ds = read_table(p, categorical=["code"])
    assert ds.feature_names == ["code=1", "code=2", "plan=a", "plan=b"]
    with pytest.raises(DataError, match=r"column 'plan', row 1 \(line 2\): 'a' is not a number"):
        read_table(p, categorical="none")
    with pytest.raises(DataError, match="categorical column 'nope' is not a feature"):
        read_table(p, categorical=["nope"])


def test_too_many_categories_is_an_error_and_drop_columns(tmp_path):
    rows = "\n".join(f"id{i},{i % 3},{i % 2}" for i in range(30))
    p = write(tmp_path, "d.csv", "id,a,y\n" + rows + "\n")
    with pytest.raises(DataError, match="column 'id' is text with 30 distinct values"):
        read_table(p)
    ds = read_table(p, drop_columns=["id"])
    assert ds.feature_names == ["a"]
    assert read_table(p, max_categories=40).X.shape == (30, 31)
    with pytest.raises(DataError, match="cannot drop column 'zz'"):
        read_table(p, drop_columns=["zz"])


def test_mixed_numeric_text_column_names_column_and_first_row(tmp_path):
    p = write(tmp_path, "d.csv", "a,b,y\n1,2.0,0\n2,3.5,1\n3,4x,0\n4,?,1\n5,6,0\n")
    with pytest.raises(DataError) as err:
        read_table(p)
    msg = str(err.value)
    assert "d.csv" in msg and "column 'b'" in msg and "row 3 (line 4)" in msg and "'4x'" in msg
    assert "\n" not in msg
    assert err.value.column == "b" and err.value.row == 3


@pytest.mark.parametrize(
    "content, pattern",
    [
        (b"", "empty file"),
        (b"  \n\n \n", "empty file"),
        (b"a,b,y\n", "no data rows"),
        (b"a,b,y\n1,2,3\n4,5\n", r"ragged row 2 \(line 3\): 2 fields, the header has 3"),
        (b"a,b,y\n1,2,3\n4,5,6,7\n", r"ragged row 2 \(line 3\): 4 fields"),
        (b"a,b,y\n1,caf\xe9,0\n2,x,1\n", r"not valid UTF-8 \(byte 0xe9 on line 2\).*encoding="),
        (b"a,a,y\n1,2,0\n2,3,1\n", "duplicate column name 'a'"),
        (b"a,b,y\n1,2,0\n2,3,0\n", "target column 'y' has a single value '0'"),
        (b"a,b,y\n1,,0\n2,3,1\n", r"column 'b', row 1 \(line 2\): missing value"),
        (b"a,b,y\n1,2,0\n2,inf,1\n", r"column 'b', row 2 \(line 3\): infinite value inf"),
        (b"a,b,y\n1,2,0\n2,-inf,1\n", "infinite value -inf"),
        (b"a,b,y\n1,2,0\n2,3,\n", r"column 'y', row 2 \(line 3\): missing target value"),
        (b"a,b,y\n1,2,0\n2,3,NA\n4,5,1\n", "column 'y', row 2"),
        (b"a,b,y\n1,2,0\n2,3,inf\n", "infinite target value"),
        (b"a,b\x00,y\n1,2,0\n", "cannot be parsed as CSV"),
        (b"y\n1\n0\n", "no feature columns"),
    ],
)
def test_csv_errors(tmp_path, content, pattern):
    p = write(tmp_path, "bad.csv", content)
    with pytest.raises(DataError, match=pattern) as err:
        read_table(p)
    msg = str(err.value)
    assert str(p) in msg and "\n" not in msg
    assert isinstance(err.value, ValueError)


def test_missing_target_lists_columns(tmp_path):
    p = write(tmp_path, "d.csv", "a,b,y\n1,2,0\n2,3,1\n")
    with pytest.raises(DataError, match="no target column 'label'; columns are 'a', 'b', 'y'"):
        read_table(p, target="label")


def test_missing_file_directory_and_unknown_extension(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_table(tmp_path / "nope.csv")
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(DataError, match="is a directory"):
        read_table(tmp_path / "dir.csv")
    p = write(tmp_path, "d.dat", "a,y\n1,0\n2,1\n")
    with pytest.raises(DataError, match="cannot tell the format.*'.dat'"):
        read_table(p)
    assert read_table(p, fmt="csv").X.shape == (2, 1)
    with pytest.raises(DataError, match="unknown format 'xls'"):
        read_table(p, fmt="xls")


def test_latin1_accepted_only_when_asked(tmp_path):
    p = write(tmp_path, "d.csv", "a,ville,y\n1,Orléans,0\n2,Besançon,1\n".encode("latin-1"))
    with pytest.raises(DataError, match="not valid UTF-8"):
        read_table(p)
    ds = read_table(p, encoding="latin-1")
    assert ds.feature_names == ["a", "ville=Besançon", "ville=Orléans"]
    with pytest.raises(DataError, match="unknown encoding 'klingon'"):
        read_table(p, encoding="klingon")


def test_drop_missing_reports_count(tmp_path):
    p = write(tmp_path, "d.csv", "a,b,y\n1,2,0\n,3,1\n4,inf,0\n5,6,\n7,8,1\n9,10,0\n")
    ds = read_table(p, drop_missing=True)
    assert ds.dropped_rows == 3
    np.testing.assert_array_equal(ds.X, [[1, 2], [7, 8], [9, 10]])
    np.testing.assert_array_equal(ds.y, [0, 1, 0])
    assert any("dropped 3 of 6 rows" in n and "row 2 (line 3)" in n for n in ds.notes)
    all_bad = write(tmp_path, "e.csv", "a,y\n,0\n,1\n")
    with pytest.raises(DataError, match="no rows left after dropping 2 rows"):
        read_table(all_bad, drop_missing=True)


def test_drop_missing_in_a_categorical_column(tmp_path):
    p = write(tmp_path, "d.csv", "a,c,y\n1,u,0\n2,,1\n3,v,0\n4,u,1\n")
    with pytest.raises(DataError, match=r"column 'c', row 2 \(line 3\): missing value"):
        read_table(p)
    ds = read_table(p, drop_missing=True)
    assert ds.dropped_rows == 1 and ds.feature_names == ["a", "c=u", "c=v"]


def test_booleans_are_numeric_features(tmp_path):
    p = write(tmp_path, "d.csv", "a,flag,y\n1,True,x\n2,False,z\n")
    ds = read_table(p)
    np.testing.assert_array_equal(ds.X, [[1, 1], [2, 0]])


def test_schema_reapplies_columns_and_categories(tmp_path):
    train = write(tmp_path, "train.csv", "a,plan,id,y\n1,x,7,0\n2,y,8,1\n3,z,9,0\n")
    ds = read_table(train, drop_columns=["id"])
    schema = json.loads(json.dumps(ds.schema))  # it must survive a model file
    new = write(tmp_path, "new.csv", "plan,extra,a\nz,q,10\nx,q,20\n")
    ds2 = read_table(new, schema=schema)
    assert ds2.y is None and ds2.feature_names == ds.feature_names
    np.testing.assert_array_equal(ds2.X, [[10, 0, 0, 1], [20, 1, 0, 0]])
    with_target = write(tmp_path, "t.csv", "a,plan,y\n5,y,1\n6,x,0\n")
    np.testing.assert_array_equal(read_table(with_target, schema=schema).y, [1, 0])
    unseen = write(tmp_path, "u.csv", "a,plan\n1,x\n2,gold\n")
    with pytest.raises(DataError, match=r"column 'plan', row 2 \(line 3\): category 'gold' was "
                                        "not seen in training"):
        read_table(unseen, schema=schema)
    lacking = write(tmp_path, "l.csv", "plan\nx\n")
    with pytest.raises(DataError, match="column 'a' used by the model is missing"):
        read_table(lacking, schema=schema)


# --------------------------------------------------------------------------- Parquet


def test_parquet_without_pyarrow_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import fails
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    p = write(tmp_path, "d.parquet", b"PAR1....PAR1")
    with pytest.raises(DataError, match="pip install pyarrow"):
        read_table(p)


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    import pandas as pd

    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "c": ["u", "v", "u"], "y": ["n", "p", "p"]})
    frame.to_parquet(tmp_path / "d.parquet")
    ds = read_table(tmp_path / "d.parquet")
    assert ds.feature_names == ["a", "c=u", "c=v"] and ds.y.tolist() == ["n", "p", "p"]
    write(tmp_path, "junk.pq", b"not parquet at all")
    with pytest.raises(DataError, match="cannot be read as Parquet"):
        read_table(tmp_path / "junk.pq")
    frame.iloc[:0].to_parquet(tmp_path / "empty.parquet")
    with pytest.raises(DataError, match="empty.parquet: no rows"):
        read_table(tmp_path / "empty.parquet")
    frame["a"] = [1.0, np.inf, 3.0]
    frame.to_parquet(tmp_path / "inf.parquet")
    with pytest.raises(DataError, match="column 'a', row 2: infinite value inf"):
        read_table(tmp_path / "inf.parquet")


def test_parquet_duplicate_columns(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table([pa.array([1, 2]), pa.array([3, 4]), pa.array([0, 1])], names=["a", "a", "y"])
    pq.write_table(table, tmp_path / "d.parquet")
    with pytest.raises(DataError, match="d.parquet: duplicate column name 'a'"):
        read_table(tmp_path / "d.parquet")


# --------------------------------------------------------------------------- svmlight


def test_svmlight_round_trip(tmp_path):
    X, y = load_iris(return_X_y=True)
    p = tmp_path / "iris.svm"
    dump_svmlight_file(X, y, str(p), zero_based=True)
    ds = read_table(p)
    np.testing.assert_allclose(ds.X, X)
    np.testing.assert_array_equal(ds.y, y)
    assert ds.y.dtype.kind == "i" and ds.feature_names == ["x0", "x1", "x2", "x3"]
    assert read_table(p, fmt="libsvm").X.shape == (150, 4)


@pytest.mark.parametrize(
    "content, pattern",
    [
        (b"1 1:0.5 2:1\n-1 1:abc\n", r"cannot be parsed as svmlight/libsvm \(line 2\)"),
        (b"1 1:0.5\n1 2:1\n", "single value 1"),
        (b"1 1:0.5\n-1 1:nan\n", "column 'x0', row 2: missing or infinite"),
        (b"1 1:1\n-1 999999999:1\n", "declares 999999999 features, more than the limit"),
        (b"# only a comment\n", "no rows|cannot be parsed"),
    ],
)
def test_svmlight_errors(tmp_path, content, pattern):
    p = write(tmp_path, "bad.libsvm", content)
    with pytest.raises(DataError, match=pattern) as err:
        read_table(p)
    assert str(p) in str(err.value)


def test_svmlight_drop_missing(tmp_path):
    p = write(tmp_path, "d.svmlight", b"1 0:0.5\n-1 0:nan\n-1 0:2\n")
    ds = read_table(p, drop_missing=True)
    assert ds.dropped_rows == 1 and ds.X.tolist() == [[0.5], [2.0]]


# --------------------------------------------------------------------------- groups

CANCER = list(load_breast_cancer().feature_names)


def test_groups_by_ranges_and_prefixes_agree_on_breast_cancer():
    by_range = parse_groups("mean=0-9,se=10-19,worst=20-29", CANCER)
    assert by_range == {"mean": list(range(10)), "se": list(range(10, 20)),
                        "worst": list(range(20, 30))}
    by_name = parse_groups("mean, error ,worst", CANCER)
    assert list(by_name.values()) == list(by_range.values())
    assert list(by_name) == ["mean", "error", "worst"]


def test_groups_multi_range_mixed_and_singletons():
    names = ["age", "inc_a", "inc_b", "x", "y", "z"]
    g = parse_groups("inc,pos=3+5", names)
    assert g == {"inc": [1, 2], "pos": [3, 5], "age": [0], "y": [4]}
    covered = sorted(j for idx in g.values() for j in idx)
    assert covered == list(range(len(names)))
    assert parse_groups({"a": [0, 1]}, ["p", "q", "r"]) == {"a": [0, 1], "r": [2]}


@pytest.mark.parametrize(
    "spec, pattern",
    [
        ("mean,bogus", "group token 'bogus': no feature name"),
        ("a=0-9,b=5-12", "group 'b' overlaps group 'a' at feature 5"),
        ("a=0-40", "group token 'a=0-40': index 40 out of range 0-29"),
        ("a=9-3", "range 9-3 is reversed"),
        ("a=x-3", "'x-3' is not an index or a range"),
        ("=0-3", "missing group name"),
        ("mean,,worst", "empty group between commas"),
        ("a=0-1,a=2-3", "group 'a' given twice"),
        ("", "empty group specification"),
        ("mean,mean radius", "group .mean radius. overlaps group .mean. at feature 0"),
    ],
)
def test_group_errors_name_the_token(spec, pattern):
    with pytest.raises(DataError, match=pattern):
        parse_groups(spec, CANCER)


# --------------------------------------------------------------------------- scaler


@pytest.mark.parametrize("method, ref", [("standard", StandardScaler), ("minmax", MinMaxScaler)])
def test_scaler_fits_on_training_rows_only(method, ref):
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 5.0, size=(60, 4))
    X_train, X_test = X[:40], X[40:] * 10  # test rows from another scale
    sc = Scaler(method).fit(X_train)
    expected = ref().fit(X_train)
    np.testing.assert_allclose(sc.transform(X_test), expected.transform(X_test), rtol=1e-12)
    np.testing.assert_allclose(sc.transform(X_train), expected.transform(X_train), atol=1e-12)
    np.testing.assert_allclose(sc.inverse_transform(sc.transform(X_test)), X_test, rtol=1e-12)
    # statistics are those of the training rows, not of all rows
    assert not np.allclose(sc.offset_, Scaler(method).fit(X).offset_)


def test_scaler_constant_columns_and_none():
    X = np.array([[1.0, 5.0, 1e12], [2.0, 5.0, 1e12], [3.0, 5.0, 1e12]])
    for method in ("standard", "minmax"):
        Z = Scaler(method).fit_transform(X)
        assert np.isfinite(Z).all() and np.all(Z[:, 1:] == 0.0)
    np.testing.assert_array_equal(Scaler("none").fit_transform(X), X)


def test_scaler_dict_round_trip_is_exact():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 5)) * np.array([1e-8, 1, 1e6, 3, 7])
    sc = Scaler("standard").fit(X)
    back = Scaler.from_dict(json.loads(json.dumps(sc.to_dict())))
    assert back.transform(X).tobytes() == sc.transform(X).tobytes()


@pytest.mark.parametrize(
    "record, pattern",
    [
        ({"method": "zscore", "offset": [0], "scale": [1]}, "unknown method"),
        ({"method": "standard", "offset": [0, 1], "scale": [1]}, "same length"),
        ({"method": "standard", "offset": [0], "scale": [0]}, "> 0"),
        ({"method": "standard", "offset": ["a"], "scale": [1]}, "malformed"),
        ({"method": "standard"}, "malformed"),
        ([1, 2], "must be a dict"),
    ],
)
def test_scaler_from_bad_dict(record, pattern):
    with pytest.raises(ValueError, match=pattern):
        Scaler.from_dict(record)


def test_scaler_errors():
    with pytest.raises(ValueError, match="method must be"):
        Scaler("robust").fit(np.ones((3, 2)))
    sc = Scaler().fit(np.arange(6.0).reshape(3, 2))
    with pytest.raises(ValueError, match="X has 3 features, the scaler was fitted on 2"):
        sc.transform(np.ones((2, 3)))
    with pytest.raises(ValueError, match="non-finite value at row 1, column 0"):
        sc.transform([[1.0, 2.0], [np.nan, 1.0]])


def _cancer_frame():
    ds = load_breast_cancer(as_frame=True)
    return ds.frame.drop(columns="target"), ds.target


@pytest.mark.parametrize("method, ref", [("standard", StandardScaler), ("minmax", MinMaxScaler)])
def test_scaler_pandas_output_matches_scikit_learn(method, ref):
    import pandas as pd

    X, _ = _cancer_frame()
    X = X.set_index(pd.RangeIndex(100, 100 + len(X)))  # the index must survive
    ours = Scaler(method).set_output(transform="pandas")
    theirs = ref().set_output(transform="pandas")
    for got, want in ((ours.fit_transform(X), theirs.fit_transform(X)),
                      (ours.transform(X.iloc[:7]), theirs.transform(X.iloc[:7]))):
        assert isinstance(got, pd.DataFrame)
        pd.testing.assert_index_equal(got.columns, want.columns)
        pd.testing.assert_index_equal(got.index, want.index)
        np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-12, atol=1e-12)
    # "default" switches back to arrays, as scikit-learn's
    assert isinstance(ours.set_output(transform="default").transform(X), np.ndarray)


def test_scaler_feature_names_out_as_standard_scaler():
    X, _ = _cancer_frame()
    ours, theirs = Scaler().fit(X), StandardScaler().fit(X)
    np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    A = X.to_numpy()
    ours, theirs = Scaler().fit(A), StandardScaler().fit(A)
    assert not hasattr(ours, "feature_names_in_")
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    given = [f"c{j}" for j in range(A.shape[1])]
    np.testing.assert_array_equal(ours.get_feature_names_out(given),
                                  theirs.get_feature_names_out(given))
    with pytest.raises(ValueError):
        ours.get_feature_names_out(["a", "b"])  # wrong length: scikit-learn's error
    # refitted on an array, the names of the DataFrame fit are forgotten
    assert not hasattr(Scaler().fit(X).fit(A), "feature_names_in_")


def test_scaler_warns_on_renamed_columns_as_standard_scaler():
    import warnings

    X, _ = _cancer_frame()
    renamed = X.rename(columns={X.columns[0]: "something else"})
    for sc in (Scaler().fit(X), StandardScaler().fit(X)):
        with pytest.raises(ValueError, match="feature names should match"):
            sc.transform(renamed)
    for sc in (Scaler().fit(X.to_numpy()), StandardScaler().fit(X.to_numpy())):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sc.transform(X)
        assert any("was fitted without feature names" in str(w.message) for w in caught)


def test_scaler_in_a_pandas_pipeline():
    import pandas as pd
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X, y = _cancer_frame()
    ours = make_pipeline(Scaler(), LogisticRegression(max_iter=500)).set_output(
        transform="pandas").fit(X, y)
    theirs = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).set_output(
        transform="pandas").fit(X, y)
    Z = ours[:-1].transform(X)
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == list(X.columns)
    np.testing.assert_array_equal(ours[-1].feature_names_in_, X.columns.to_numpy())
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-6,
                               atol=1e-8)


def test_scaler_sparse_input_keeps_names_out_and_refuses_pandas_output():
    import scipy.sparse as sp

    X = sp.random(20, 4, density=0.5, format="csr", random_state=0)
    sc = Scaler().fit(X)
    np.testing.assert_array_equal(sc.get_feature_names_out(), ["x0", "x1", "x2", "x3"])
    # a DataFrame cannot hold a sparse matrix: scikit-learn's own refusal
    with pytest.raises(ValueError, match="[Ss]parse"):
        Scaler().set_output(transform="pandas").fit_transform(X)


# --------------------------------------------------------------------------- splits


def test_split_is_reproducible_and_stratified():
    ds = load_dataset("breast-cancer")
    a = train_test_split_seeded(ds.X, ds.y, 0.2, random_state=3)
    b = train_test_split_seeded(ds.X, ds.y, 0.2, random_state=3)
    c = train_test_split_seeded(ds.X, ds.y, 0.2, random_state=4)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[1], c[1])
    _, X_test, y_train, y_test = a
    assert X_test.shape[0] == 114
    assert abs(y_test.mean() - ds.y.mean()) < 0.01 and abs(y_train.mean() - ds.y.mean()) < 0.01


def test_split_regression_and_errors():
    X = np.arange(20.0).reshape(10, 2)
    y = np.linspace(0, 1, 10) + 0.123
    X_tr, X_te, _, _ = train_test_split_seeded(X, y, 3, random_state=0)
    assert X_te.shape == (3, 2) and X_tr.shape == (7, 2)
    with pytest.raises(DataError, match="class 2 has only 1 sample"):
        train_test_split_seeded(X, np.array([0] * 5 + [1] * 4 + [2]), 0.3)
    with pytest.raises(ValueError, match="test_size"):
        train_test_split_seeded(X, y, 1.5)
    with pytest.raises(ValueError, match="test_size"):
        train_test_split_seeded(X, y, 10)
    assert len(train_test_split_seeded(X, np.array([0] * 9 + [1]), 0.3, stratify=False)[1]) == 3


# --------------------------------------------------------------------------- targets


@pytest.mark.parametrize(
    "y, neg, pos",
    [
        (["no", "yes", "yes", "no"], "no", "yes"),
        ([False, True, True, False], False, True),
        ([0, 1, 1, 0], 0, 1),
        ([-1, 1, 1, -1], -1, 1),
        ([2.0, 5.0, 5.0, 2.0], 2.0, 5.0),
    ],
)
def test_binary_target_encodings(y, neg, pos):
    bt = binary_target(y)
    np.testing.assert_array_equal(bt.y, [-1.0, 1.0, 1.0, -1.0])
    assert bt.y.dtype == np.float64 and bt.negative == neg and bt.positive == pos
    assert bt.inverse(bt.y).tolist() == list(y)
    assert bt.inverse([-0.3, 2.0]).tolist() == [neg, pos]


def test_binary_target_positive_and_one_vs_rest():
    bt = binary_target(["a", "b", "a"], positive="a")
    np.testing.assert_array_equal(bt.y, [1, -1, 1])
    assert bt.negative == "b"
    wine = load_dataset("wine")
    ovr = binary_target(wine.y, positive=0, one_vs_rest=True)
    assert (ovr.y == 1).sum() == (wine.y == 0).sum() == 59
    assert binary_target([0, 1, 0], positive="1").positive == 1  # CLI passes strings


@pytest.mark.parametrize(
    "y, kwargs, pattern",
    [
        (["a", "a"], {}, "one class"),
        ([0, 1, 2], {}, "3 classes"),
        ([0, 1, 2], {"positive": 0}, "one_vs_rest=True"),
        ([0, 1], {"positive": 7}, "positive label 7 is not in the target"),
        ([0.0, np.nan], {}, "missing or infinite"),
        (np.array(["a", None], dtype=object), {}, "missing value"),
        ([], {}, "empty"),
    ],
)
def test_binary_target_errors(y, kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        binary_target(y, **kwargs)


# --------------------------------------------------------------------------- fuzz

# BISVM_FUZZ_EXAMPLES=5000 python -m pytest tests/test_data.py -k fuzz: a longer run
FUZZ = settings(max_examples=int(os.environ.get("BISVM_FUZZ_EXAMPLES", 60)), deadline=None,
                derandomize="BISVM_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

VALID_CSV = b"a,b,plan,y\n1,2.5,x,yes\n2,3.5,y,no\n3,0.1,x,yes\n4,1,z,no\n"


@FUZZ
@given(data=st.binary(max_size=300), ext=st.sampled_from([".csv", ".tsv", ".txt", ".svm"]))
def test_fuzz_random_bytes_only_data_error(tmp_path, data, ext):
    p = tmp_path / f"f{ext}"
    p.write_bytes(data)
    try:
        ds = read_table(p)
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    assert ds.X.dtype == np.float64 and np.isfinite(ds.X).all()
    assert ds.X.shape[0] == ds.y.shape[0] >= 1


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, len(VALID_CSV) - 1), st.binary(max_size=3)),
                      min_size=1, max_size=4),
       drop=st.booleans())
def test_fuzz_mutated_csv_only_data_error(tmp_path, edits, drop):
    data = bytearray(VALID_CSV)
    for pos, ins in edits:
        pos = min(pos, len(data))
        data[pos:pos + 1] = ins
    p = tmp_path / "m.csv"
    p.write_bytes(bytes(data))
    try:
        ds = read_table(p, drop_missing=drop)
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    assert np.isfinite(ds.X).all() and len(ds.feature_names) == ds.X.shape[1]


TRICKY = ["", "nan", "inf", "-inf", "1e400", "1e300", "1e-320", "abc", "1", "0", " ", '"', '""',
          "NA", "True", "False", "-0", "1,5", "é", "\t", "2.5", "x y", "0x10", "None", "?", "'"]


@FUZZ
@given(n_cols=st.integers(1, 4),
       rows=st.lists(st.lists(st.sampled_from(TRICKY), min_size=1, max_size=5), max_size=8),
       drop=st.booleans(), categorical=st.sampled_from(["auto", "none"]))
def test_fuzz_tables_of_tricky_cells(tmp_path, n_cols, rows, drop, categorical):
    """Ragged rows, quotes, missing/infinite/overflowing numbers, text among numbers."""
    header = ",".join(f"c{i}" for i in range(n_cols))
    p = tmp_path / "t.csv"
    p.write_text(header + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
    try:
        ds = read_table(p, drop_missing=drop, categorical=categorical)
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    assert np.isfinite(ds.X).all() and ds.X.shape == (len(ds.y), len(ds.feature_names))
    assert np.unique(ds.y).size >= 2
