"""Model files written by earlier layouts of the package still load and predict.

A model file names each class by module path and checks its fields, so this is the guard
for every move of an estimator or a record it stores (``ConvergenceRecord``,
``HistoryEntry``, ``Kernel``). The files and predictions were written by
``tests/data/models_v1/make_golden.py`` at commit 3218a71.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

from bisvm.persistence import load_model

HERE = pathlib.Path(__file__).parent / "data" / "models_v1"
_spec = importlib.util.spec_from_file_location("make_golden", HERE / "make_golden.py")
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)

FILES = sorted(HERE.glob("*.bisvm"))


def test_one_file_per_case():
    assert len(FILES) == len(make_golden.CASES)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_saved_model_loads_and_predicts_as_when_saved(path):
    index = int(path.stem.split("_")[0])
    module, name, _, task = make_golden.CASES[index]
    est = load_model(path).estimator
    assert type(est).__name__ == name
    assert type(est).__module__ == f"bisvm.estimators.{module}"
    _, _, Xp = make_golden.data(task)
    out = est.decision_function(Xp) if hasattr(est, "decision_function") else est.predict(Xp)
    np.testing.assert_allclose(out, np.load(path.with_suffix(".npy")), rtol=1e-12, atol=1e-12)
