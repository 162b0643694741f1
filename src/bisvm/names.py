"""Public name lists shared by the estimators, the data loaders and the command line.

Each list is kept here once, so that ``bisvm select --criterion``, ``bisvm report``,
:class:`~bisvm.estimators.sparse.BilevelSVC` and :func:`bisvm.data.load_dataset` cannot
drift apart. The module imports nothing numerical: the command line builds its parser
from it without loading numpy.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple

__all__ = ["Criterion", "CRITERIA", "DATASETS"]


class Criterion(NamedTuple):
    """An upper-level criterion of :class:`~bisvm.estimators.sparse.BilevelSVC`.

    Attributes
    ----------
    split : {"holdout", "kfold"}
        The validation split (one held-out share or k folds).
    loss : str
        The validation loss of :func:`bisvm.selection.criteria.make_criterion`.
    description : str
        One line for reports and ``--help``.
    """

    split: str
    loss: str
    description: str


#: ``BilevelSVC``'s criteria: name -> (validation split, validation loss, description).
CRITERIA = MappingProxyType({
    "holdout": Criterion(
        "holdout", "squared",
        "halved MSE of raw SVM outputs on the validation split (thesis J)"),
    "kfold": Criterion(
        "kfold", "squared",
        "halved MSE of raw SVM outputs, mean over folds (thesis J)"),
    "logistic": Criterion(
        "kfold", "logistic",
        "mean logistic loss of validation margins, mean over folds"),
    "holdout_logistic": Criterion(
        "holdout", "logistic",
        "mean logistic loss of validation margins on the validation split"),
    "margin": Criterion(
        "kfold", "squared_hinge",
        "halved mean squared hinge of validation margins, mean over folds"),
    "holdout_margin": Criterion(
        "holdout", "squared_hinge",
        "halved mean squared hinge of validation margins on the split"),
    "scaled_margin": Criterion(
        "kfold", "scaled_squared_hinge",
        "halved mean squared hinge of best-rescaled validation margins, mean over folds"),
    "holdout_scaled_margin": Criterion(
        "holdout", "scaled_squared_hinge",
        "halved mean squared hinge of best-rescaled validation margins on the split"),
})

#: The bundled data sets (scikit-learn's copies, no download): name -> description.
DATASETS = MappingProxyType({
    "iris": "Iris flowers: 150 samples, 4 features, 3 classes (setosa, versicolor, "
            "virginica)",
    "breast-cancer": "Wisconsin diagnostic breast cancer: 569 samples, 30 features in 3 "
                     "groups (mean, se, worst), 2 classes",
    "wine": "Wine cultivars: 178 samples, 13 features, 3 classes",
    "digits": "Handwritten digits 8x8: 1797 samples, 64 features, 10 classes",
})
