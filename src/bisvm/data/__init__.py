"""Data layer: bundled datasets, table readers, feature groups, scaling, splits, targets.

Everything a user hands to bisvm passes through here before an estimator sees it, so every
check that can be phrased in the user's terms (file, column, row) is made here and raised
as :class:`DataError`, a :class:`ValueError` whose message is one line naming the file,
the column and the row. The CLI prints that line and exits with code 2.

Readers
-------
:func:`read_table` reads CSV/TSV (pandas), Parquet (pandas + pyarrow) and svmlight/libsvm
(:func:`sklearn.datasets.load_svmlight_file`) into a frozen :class:`Dataset`; an svmlight
matrix stays a ``scipy.sparse`` CSR matrix when it is large and sparse (``sparse="auto"``),
and :class:`Scaler` and :func:`train_test_split_seeded` keep it so:

* the target column is chosen by name (default: the last column; ``target=False`` reads
  features only, e.g. for prediction);
* numeric and boolean columns are features as they are; text columns with at most
  ``max_categories`` distinct values are one-hot encoded into columns ``"<col>=<value>"``
  (reported in :attr:`Dataset.encoded` and :attr:`Dataset.notes`); a text column whose
  values are mostly numbers is an error naming the first value that is not one (a typo
  should not silently become a category);
* missing (empty, ``NA``, ``nan``) and infinite values are errors naming the column and
  the first row, or, with ``drop_missing=True``, their rows are dropped and counted;
* :attr:`Dataset.schema` records the columns and categories, and
  ``read_table(..., schema=...)`` re-applies them to new data so that a model sees the
  same feature columns at prediction time as at training time.

Rows are numbered from 1 for the first data row; for CSV the file line is given too.
"""

from __future__ import annotations

from .bundled import BREAST_CANCER_GROUPS, list_datasets, load_dataset
from .groups import parse_groups
from .records import (
    MAX_DENSE_ELEMENTS,
    MAX_FEATURES,
    SPARSE_AUTO_MAX_DENSITY,
    SPARSE_AUTO_MIN_ENTRIES,
    DataError,
    Dataset,
    NumberedNames,
    check_schema,
)
from .scaling import Scaler
from .tables import read_table
from .targets import BinaryTarget, binary_target, train_test_split_seeded

# The classes keep the path they had before bisvm.data became a package: model files name
# record classes by module and name (bisvm.persistence), and so do the docs.
for _cls in (DataError, Dataset, NumberedNames, BinaryTarget, Scaler):
    _cls.__module__ = __name__
del _cls

__all__ = [
    "MAX_DENSE_ELEMENTS",
    "MAX_FEATURES",
    "SPARSE_AUTO_MIN_ENTRIES",
    "SPARSE_AUTO_MAX_DENSITY",
    "DataError",
    "Dataset",
    "NumberedNames",
    "BinaryTarget",
    "Scaler",
    "binary_target",
    "list_datasets",
    "load_dataset",
    "parse_groups",
    "read_table",
    "train_test_split_seeded",
    "BREAST_CANCER_GROUPS",
    "check_schema",
]
