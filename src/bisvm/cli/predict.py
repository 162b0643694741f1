"""``bisvm predict``: apply a saved model to a table."""

from __future__ import annotations

import argparse
import io
import os
import sys

from . import common

DESCRIPTION = """\
Load a model file written by `bisvm fit --save` (or bisvm.save_model) and predict the
rows of a CSV, Parquet or svmlight file. The file is read with the model's column schema
(same columns, same one-hot categories; other columns are ignored) and scaled with the
model's stored scaling. Writes one CSV row per input row: the prediction, then the
decision value(s) and class probabilities where the model has them. Without --output the
CSV goes to stdout; with --json one JSON object is printed instead (with the predictions
unless --output is given). When the file also holds the model's target column, the
accuracy (classifiers) or R2 (regressors) on it is reported too, whatever classes the
file holds. The model file comes first, as in LIBSVM's svm-predict (--model FILE works
too).

examples:
  bisvm predict cancer.bisvm --data new.csv
  bisvm predict cancer.bisvm --data cancer.csv --output predictions.csv
  bisvm predict cancer.bisvm --data new.csv --json
"""


def add_parser(sub):
    """Add ``bisvm predict`` to the subcommands ``sub``."""
    p = sub.add_parser("predict", help="predict a table with a saved model file",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_file", nargs="?", metavar="MODEL",
                   help="model file (.bisvm) written by bisvm fit --save")
    p.add_argument("--model", dest="model_option", metavar="FILE",
                   help="the model file, as an option (same as MODEL; default: MODEL)")
    p.add_argument("--data", required=True, metavar="FILE",
                   help="CSV, Parquet or svmlight file with the model's feature columns")
    p.add_argument("--drop-missing", action="store_true",
                   help="drop rows with missing values (they get no prediction)")
    p.add_argument("--encoding", metavar="NAME",
                   help="text encoding of a CSV that is not UTF-8 (e.g. latin-1; "
                   "default UTF-8)")
    g = p.add_argument_group(
        "columns of a model file without a column schema",
        "A model file written by bisvm fit --save keeps the training table's column\n"
        "schema, which decides how the file's columns are read; these options are for a\n"
        "model saved without one (bisvm.save_model without schema=), read by its feature\n"
        "names.")
    common.add_column_options(g)
    p.add_argument("--output", metavar="FILE",
                   help="write the CSV here instead of stdout (default: stdout)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
    return p


def read_for_model(path, loaded, drop_missing, encoding=None, *, columns=None,
                   command="predict"):
    """The rows of ``path`` as the model saw its training rows: (Dataset, X). With the
    model's column schema (same columns, same one-hot categories); else by the feature
    names, or by position when the file has none, the columns read as ``columns`` says
    (``read_table``'s ``categorical``, ``drop_columns`` and ``max_categories``, from
    :func:`bisvm.cli.common.table_options`); ``command`` names the subcommand in
    messages."""
    from .. import data

    est = loaded.estimator
    columns = dict(columns or {})
    if loaded.schema is not None:
        given = [opt for opt, key, unset in COLUMN_OPTIONS if columns.get(key, unset) != unset]
        if given:
            raise ValueError(f"{given[0]}: the model file's column schema decides how the "
                             "columns are read; the option is for a model file without one")
        try:
            ds = data.read_table(path, schema=loaded.schema, drop_missing=drop_missing,
                                 encoding=encoding)
        except data.DataError as exc:
            # a model fitted on dense rows reads an svmlight file densely (its schema)
            raise common.without_sparse_hint(exc, command, "split the file into "
                                             "smaller files") from None
        return ds, ds.X
    ds = data.read_table(path, target=False, drop_missing=drop_missing, encoding=encoding,
                         **columns)
    names = loaded.feature_names
    if names is None:
        if ds.n_features != est.n_features_in_:
            raise ValueError(f"{path}: {ds.n_features} columns, the model expects "
                             f"{est.n_features_in_}")
        return ds, ds.X
    missing = [n for n in names if n not in ds.feature_names]
    if missing:
        raise ValueError(f"{path}: missing feature column(s) {', '.join(missing[:5])} that "
                         "the model was trained on")
    return ds, ds.X[:, [ds.feature_names.index(n) for n in names]]


#: (option, read_table keyword, value when the option is not given) of the column options
COLUMN_OPTIONS = (("--categorical", "categorical", "auto"),
                  ("--drop-column", "drop_columns", ()),
                  ("--max-categories", "max_categories", 20))


def outputs(loaded, X):
    """Columns of the prediction table: prediction, decision value(s), probabilities."""
    import numpy as np

    est = loaded.estimator
    Xs = loaded.scaler.transform(X) if loaded.scaler is not None else X
    cols = {"prediction": np.asarray(est.predict(Xs))}
    classes = getattr(est, "classes_", None)
    if hasattr(est, "decision_function"):
        try:
            d = np.asarray(est.decision_function(Xs), dtype=float)
        except (AttributeError, ValueError):  # e.g. a decision shape the model lacks
            d = None
        if d is not None:
            if d.ndim == 1:
                cols["decision"] = d
            elif classes is not None and d.shape[1] == len(classes):
                for k, c in enumerate(classes):
                    cols[f"decision_{c}"] = d[:, k]
            else:
                for k in range(d.shape[1]):
                    cols[f"decision_{k}"] = d[:, k]
    if hasattr(est, "predict_proba") and classes is not None:
        try:
            pr = np.asarray(est.predict_proba(Xs), dtype=float)
        except AttributeError:  # SVC(probability=False) exposes the method but refuses it
            pr = None
        if pr is not None:
            for k, c in enumerate(classes):
                cols[f"proba_{c}"] = pr[:, k]
    return cols, Xs


def model_path(args):
    """The model file of ``bisvm predict MODEL`` or ``--model MODEL`` (one of them)."""
    a, b = args.model_file, args.model_option
    if a is None and b is None:
        raise ValueError("give the model file: bisvm predict MODEL --data FILE")
    if a is not None and b is not None and a != b:
        raise ValueError(f"two model files given ({a} and --model {b}); give one")
    return a if a is not None else b


def score(est, X, y):
    """(name, value) of the model on the file's target: accuracy for a classifier (the
    share of rows whose prediction equals the label, any labels), R2 for a regressor;
    None when the target cannot be compared (a non-numeric target for a regressor).

    No training-time check applies: a file of one class, or of labels the model never
    saw, is scored as it is.
    """
    import numpy as np

    pred = np.asarray(est.predict(X))
    y = np.asarray(y)
    if hasattr(est, "classes_"):
        same = [bool(a == b) for a, b in zip(pred.tolist(), y.tolist())]
        return "accuracy", float(np.mean(same)) if same else None
    if y.dtype.kind not in "biuf":
        return None
    y = y.astype(np.float64)
    ss = float(np.sum((y - y.mean()) ** 2))
    if ss == 0.0:
        return None  # R2 is undefined for a constant target
    return "R2", 1.0 - float(np.sum((y - pred) ** 2)) / ss


def run(args):
    """Predict the rows of ``--data`` with the model file and write or print the CSV
    (or one JSON object); exit code 0."""
    import pandas as pd

    from ..persistence import load_model

    model = model_path(args)
    loaded = load_model(model)
    ds, X = read_for_model(args.data, loaded, args.drop_missing, args.encoding,
                           columns=common.table_options(args))
    cols, Xs = outputs(loaded, X)
    frame = pd.DataFrame(cols)
    result = {"command": "predict", "model": os.fspath(model),
              "estimator": type(loaded.estimator).__name__, "data": os.fspath(args.data),
              "n_rows": int(len(frame)), "columns": list(frame.columns),
              "notes": list(ds.notes)}
    if ds.y is not None:
        scored = score(loaded.estimator, Xs, ds.y)
        if scored is not None and scored[1] is not None:
            result["score_name"], result["score"] = scored
    if args.output:
        frame.to_csv(args.output, index=False)
        result["output"] = os.fspath(args.output)
    if args.json:
        if not args.output:
            result["predictions"] = common.to_py(cols)
        common.emit(args, result, None)
    elif args.output:
        print(f"bisvm predict: {result['n_rows']} rows of {args.data} with "
              f"{result['estimator']} from {model}")
        if "score" in result:
            print(f"{result['score_name']} on the file's target: {result['score']:.4f}")
        print(f"wrote {args.output} ({', '.join(frame.columns)})")
    else:
        buf = io.StringIO()
        frame.to_csv(buf, index=False)
        sys.stdout.write(buf.getvalue())
    return 0
