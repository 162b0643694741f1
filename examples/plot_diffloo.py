"""
Choosing the complexity of a logistic model by leave-one-out criteria
=====================================================================

:class:`~bisvm.SelectiveLogisticRegressionCV` fits a logistic regression with the
selective-ridge ("berhu") penalty along a decreasing grid of the selectivity
:math:`\\mu`, the path of Angulo Yauri (2020), "A method of differential cross-validation
for choosing the complexity level of generalized linear dependence models" (in Russian),
master's thesis, MIPT, Moscow. A large :math:`\\mu` keeps few features, a small one many;
the complexity is chosen by a leave-one-out criterion computed from each fit:

* ``"diffloo"``: the differential cross-validation criterion as printed in that thesis;
  it is exactly zero for the empty model, so its minimum sits at the sparse end of the
  path, and it is kept for reproducing the thesis;
* ``"ij"``: the training loss plus that derivative term, a first-order (infinitesimal
  jackknife) estimate of the leave-one-out loss;
* ``"alo"``: approximate leave-one-out by a rank-one correction of each output with its
  leverage (Rad and Maleki, 2020, "A scalable estimate of the out-of-sample prediction
  error via approximate leave-one-out cross-validation"), the default;
* ``"kfold"``: 5-fold cross-validation, a reference that costs five fits per
  :math:`\\mu`.

The data: 200 rows, 40 features of which the first three carry the class, 10 % of the
labels flipped.
"""

# %%
# Four criteria on one path
# -------------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification

import bisvm
from bisvm import plots

X, y = make_classification(
    n_samples=200, n_features=40, n_informative=3, n_redundant=0, flip_y=0.1,
    shuffle=False, random_state=0,
)
fits = {}
for criterion in ["diffloo", "ij", "alo", "kfold"]:
    with warnings.catch_warnings():
        # The printed criterion's trivial minimum is reported by a warning; here it is
        # the point of the comparison.
        warnings.simplefilter("ignore")
        fits[criterion] = bisvm.SelectiveLogisticRegressionCV(
            criterion=criterion, n_mu=20
        ).fit(X, y)
for criterion, fit in fits.items():
    print(f"{criterion:<8s} mu = {fit.selectivity_:8.4g}: "
          f"{fit.n_active_path_[fit.selection_index_]} features")

# %%
# The criteria along the path
# ---------------------------
# DiffLOO is on another scale from the three estimates of the held-out log-loss, so it
# gets its own panel. Each curve's minimum is marked.
grid = fits["alo"].selectivity_path_
order = np.argsort(grid)
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
plots.plot_loo_curves(
    grid[order],
    {name: np.asarray(fits[name].criterion_path_)[order] for name in ["ij", "alo", "kfold"]},
    ylabel="estimated held-out log-loss",
    ax=axes[0],
)
plots.plot_loo_curves(
    grid[order],
    {"diffloo": np.asarray(fits["diffloo"].criterion_path_)[order]},
    ylabel="DiffLOO",
    ax=axes[1],
)
fig.tight_layout()

# %%
# Number of features along the path
# ---------------------------------
fig, ax = plt.subplots(figsize=(7, 3))
ax.step(grid[order], np.asarray(fits["alo"].n_active_path_)[order], where="post")
for name, fit in fits.items():
    ax.axvline(fit.selectivity_, ls="--", lw=0.8, label=name, color=f"C{list(fits).index(name)}")
ax.set_xscale("log")
ax.set_xlabel("μ (selectivity)")
ax.set_ylabel("active features")
ax.legend(title="chosen by", fontsize=8)
fig.tight_layout()
