"""Write one model file per bisvm estimator class and the predictions it gave when saved.

Run once, before the solver modules moved (commit 3218a71): ``python
tests/data/models_v1/make_golden.py``. ``tests/test_persistence_golden.py`` loads every
file with today's code and checks the predictions, so a move that changes a class's module
or fields (which model files record) fails there.
"""

import pathlib
import warnings

import numpy as np
from sklearn.datasets import load_iris

from bisvm.persistence import save_model

HERE = pathlib.Path(__file__).parent

CASES = [
    ("svm", "SVC", {"probability": True}, "multiclass"),
    ("svm", "SVR", {"kernel": "poly", "degree": 2}, "regression"),
    ("nu_svm", "NuSVC", {"nu": 0.3}, "multiclass"),
    ("nu_svm", "NuSVR", {}, "regression"),
    ("nu_svm", "OneClassSVM", {"nu": 0.2}, "outlier"),
    ("linear", "LinearSVC", {}, "multiclass"),
    ("linear", "LinearSVC", {"penalty": "l1", "dual": False}, "binary"),
    ("linear_svr", "LinearSVR", {}, "regression"),
    ("kernel_ridge", "KernelRidge", {"kernel": "rbf", "gamma": 0.5}, "regression"),
    ("kernel_logistic", "KernelLogisticRegression", {}, "binary"),
    ("selective", "SelectiveRegression", {}, "regression"),
    ("selective", "SelectiveRegressionCV", {}, "regression"),
    ("selective", "SelectiveLogisticRegression", {}, "binary"),
    ("selective", "SelectiveLogisticRegressionCV", {}, "binary"),
    ("sparse", "ElasticNetSVC", {}, "multiclass"),
    ("sparse", "BilevelSVC", {"model": "scalar"}, "binary"),
    ("sparse", "BilevelSVC", {"model": "vector", "max_iter": 5}, "multiclass"),
]


def data(task):
    """Standardised iris, cut to the task: (X_fit, y_fit, X_predict)."""
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    if task == "binary":
        X, y = X[y < 2], y[y < 2]
    if task == "regression":
        return X[:, 1:], X[:, 0], X[:, 1:]
    if task == "outlier":
        return X, None, X
    return X, y, X


def main():
    import importlib

    for i, (module, name, params, task) in enumerate(CASES):
        cls = getattr(importlib.import_module(f"bisvm.estimators.{module}"), name)
        X, y, Xp = data(task)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(**params).fit(X) if y is None else cls(**params).fit(X, y)
        stem = f"{i:02d}_{name}"
        save_model(est, HERE / f"{stem}.bisvm")
        out = est.decision_function(Xp) if hasattr(est, "decision_function") else est.predict(Xp)
        np.save(HERE / f"{stem}.npy", np.asarray(out, dtype=float))


if __name__ == "__main__":
    main()
