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
unless --output is given). When the file also holds the target column, the score is
reported too.

examples:
  bisvm predict --model iris.bisvm --data new.csv --output predictions.csv
  bisvm predict --model iris.bisvm --data new.csv --json
"""


def add_parser(sub):
    p = sub.add_parser("predict", help="predict a table with a saved model file",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, metavar="FILE", help="model file (.bisvm)")
    p.add_argument("--data", required=True, metavar="FILE",
                   help="CSV, Parquet or svmlight file with the model's feature columns")
    p.add_argument("--drop-missing", action="store_true",
                   help="drop rows with missing values (they get no prediction)")
    p.add_argument("--encoding", metavar="NAME",
                   help="text encoding of a CSV that is not UTF-8 (e.g. latin-1)")
    p.add_argument("--output", metavar="FILE", help="write the CSV here instead of stdout")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
    return p


def _read(path, loaded, drop_missing, encoding=None):
    from .. import data

    est = loaded.estimator
    if loaded.schema is not None:
        ds = data.read_table(path, schema=loaded.schema, drop_missing=drop_missing,
                             encoding=encoding)
        return ds, ds.X
    ds = data.read_table(path, target=False, drop_missing=drop_missing, encoding=encoding)
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


def run(args):
    import numpy as np
    import pandas as pd

    from ..persistence import load_model

    loaded = load_model(args.model)
    ds, X = _read(args.data, loaded, args.drop_missing, args.encoding)
    cols, Xs = outputs(loaded, X)
    frame = pd.DataFrame(cols)
    result = {"command": "predict", "model": os.fspath(args.model),
              "estimator": type(loaded.estimator).__name__, "data": os.fspath(args.data),
              "n_rows": int(len(frame)), "columns": list(frame.columns),
              "notes": list(ds.notes)}
    if ds.y is not None:
        try:
            y = ds.y
            if not hasattr(loaded.estimator, "classes_"):
                y = np.asarray(y, dtype=float)
            result["score"] = float(loaded.estimator.score(Xs, y))
            result["score_name"] = "accuracy" if hasattr(loaded.estimator, "classes_") else "R2"
        except (ValueError, TypeError):
            pass  # a target the model cannot score (other labels): predictions still stand
    if args.output:
        frame.to_csv(args.output, index=False)
        result["output"] = os.fspath(args.output)
    if args.json:
        if not args.output:
            result["predictions"] = common.to_py(cols)
        common.emit(args, result, None)
    elif args.output:
        print(f"bisvm predict: {result['n_rows']} rows of {args.data} with "
              f"{result['estimator']} from {args.model}")
        if "score" in result:
            print(f"{result['score_name']} on the file's target: {result['score']:.4f}")
        print(f"wrote {args.output} ({', '.join(frame.columns)})")
    else:
        buf = io.StringIO()
        frame.to_csv(buf, index=False)
        sys.stdout.write(buf.getvalue())
    return 0
