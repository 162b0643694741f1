"""
BilevelSVR: learned sparsity for a continuous target
====================================================

:class:`~bisvm.BilevelSVR` is the regression counterpart of :class:`~bisvm.BilevelSVC`:
a linear model with an elastic-net penalty whose L1 weights (one for all features or one
per feature) are learned by minimising the cross-validated squared error with its
hypergradient. The lower-level problem is

.. math::

    \\min_{w, b}\\; \\frac1n \\sum_i \\ell(y_i - x_i^\\top w - b)
    + \\frac{\\alpha}{2}\\lVert w\\rVert^2 + \\sum_j \\beta_j \\lvert w_j \\rvert,

with :math:`\\ell` the squared loss by default and the absolute value smoothed by a
pseudo-Huber function during the search (González Vallejo, 2024, "Selección de variables
a través de máquinas de soporte vectorial dispersas: un enfoque de optimización
binivel", master's thesis, Escuela Politécnica Nacional, Quito). This example fits it on
scikit-learn's diabetes table in its original units and compares it with scikit-learn's
cross-validated lasso.
"""

# %%
# Fit on the raw table
# --------------------
# The columns are standardised inside the fit (per fold); the coefficients come back in
# the original units.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LassoCV
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bisvm
from bisvm import plots

data = load_diabetes(scaled=False)
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.25, random_state=0
)
est = bisvm.BilevelSVR(random_state=0).fit(X_train, y_train)
lasso = make_pipeline(StandardScaler(), LassoCV(cv=5)).fit(X_train, y_train)

print(f"BilevelSVR keeps {est.support_.sum()} of {X_train.shape[1]} features, "
      f"test R^2 {est.score(X_test, y_test):.3f}")
print(f"LassoCV    keeps {np.count_nonzero(lasso[-1].coef_)} of {X_train.shape[1]} features, "
      f"test R^2 {lasso.score(X_test, y_test):.3f}")

# %%
# The coefficients on a common scale
# ----------------------------------
# Each coefficient times its feature's standard deviation: the change of the prediction
# for one standard deviation of the feature.
sd = X_train.std(axis=0)
idx = np.arange(X_train.shape[1])
fig, ax = plt.subplots(figsize=(7, 4))
ax.bar(idx - 0.2, est.coef_.ravel() * sd, width=0.4, label="BilevelSVR")
ax.bar(idx + 0.2, lasso[-1].coef_, width=0.4, label="LassoCV (standardised)")
ax.axhline(0, color="k", lw=0.6)
ax.set_xticks(idx, data.feature_names)
ax.set_ylabel("coefficient x sd (target units)")
ax.legend()
fig.tight_layout()

# %%
# Predicted against true on the held-out rows
# -------------------------------------------
fig, ax = plt.subplots(figsize=(5, 5))
plots.plot_predicted_vs_true(y_test, est.predict(X_test), title="BilevelSVR", ax=ax)
fig.tight_layout()
