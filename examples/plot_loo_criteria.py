r"""
Approximate and exact leave-one-out along a regularisation path
===============================================================

:class:`~bisvm.SelectiveRegressionCV` fits the selective-ridge ("berhu") penalised
linear regression along a decreasing grid of the selectivity :math:`\mu` with warm
starts, and chooses :math:`\mu` by a leave-one-out criterion computed from the fit at
each :math:`\mu`. The default, approximate leave-one-out (ALO), corrects each training
residual by its leverage :math:`h_i` on the active set,

.. math::

    r_i^{\mathrm{loo}} \approx \frac{r_i}{1 - h_i},

which for a fixed active set is the exact PRESS residual (Allen, 1974, "The relationship
between variable selection and data augmentation and a method for prediction";
Rad and Maleki, 2020, "A scalable estimate of the out-of-sample prediction error via
approximate leave-one-out cross-validation"). This example draws it beside exact
leave-one-out (one refit per left-out row and :math:`\mu`) and 5-fold cross-validation on
80 rows of scikit-learn's diabetes table. The selective-ridge model and its
leave-one-out criteria are those of Angulo Yauri (2020), "A method of differential
cross-validation for choosing the complexity level of generalized linear dependence
models" (in Russian), master's thesis, MIPT, Moscow.
"""

# %%
# Three criteria on the same path
# -------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes

import bisvm
from bisvm import plots

X, y = load_diabetes(return_X_y=True)
X, y = X[:80], y[:80]

fits = {
    name: bisvm.SelectiveRegressionCV(criterion=criterion, n_mu=16).fit(X, y)
    for name, criterion in [("ALO", "alo"), ("exact LOO", "loo"), ("5-fold CV", "kfold")]
}
for name, fit in fits.items():
    k = fit.selection_index_
    print(f"{name:<10s} chooses mu = {fit.selectivity_:8.4g} with {fit.n_active_path_[k]} features")

# %%
# The curves
# ----------
# The grid of :math:`\mu` is the same for the three fits (it depends on the data only),
# so the curves can be drawn on one axis; each minimum is marked.
grid = fits["ALO"].selectivity_path_
order = np.argsort(grid)
curves = {name: np.asarray(fit.criterion_path_)[order] for name, fit in fits.items()}
fig, ax = plt.subplots(figsize=(7, 4.5))
plots.plot_loo_curves(grid[order], curves, ylabel="mean squared prediction error", ax=ax)
fig.tight_layout()

# %%
# The number of active features along the path
fig, ax = plt.subplots(figsize=(7, 3))
ax.step(grid[order], np.asarray(fits["ALO"].n_active_path_)[order], where="post")
ax.set_xscale("log")
ax.set_xlabel("μ (selectivity)")
ax.set_ylabel("active features")
fig.tight_layout()

# %%
# ALO costs one leverage computation per :math:`\mu`; exact leave-one-out costs one
# refit per row and per :math:`\mu`. Their largest relative difference along the path:
alo, loo = curves["ALO"], curves["exact LOO"]
print(f"max |ALO - LOO| / LOO = {np.max(np.abs(alo - loo) / loo):.3g}")
