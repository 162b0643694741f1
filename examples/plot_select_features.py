"""
Feature selection on a real table with BilevelSVC
=================================================

:class:`~bisvm.BilevelSVC` learns one L1 weight per feature of a smoothed elastic-net SVM
by minimising a cross-validated criterion with its hypergradient (bilevel optimisation),
instead of searching a grid. This example fits it on the Breast Cancer table (569 tumours,
30 measurements), scores it on rows the tuning never saw, and draws the figures of
``bisvm report``: the importance of the selected features beside a tree ensemble's, how
often each feature was selected by the fold models, and the convergence of the outer
iterations.
"""

# %%
# Fit on three quarters of the rows
# ---------------------------------
# ``BilevelSVC`` standardises each column inside the fit, so the raw table goes in
# unchanged; the coefficients come back in the original units.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.model_selection import train_test_split

import bisvm
from bisvm import plots

data = bisvm.load_dataset("breast-cancer")
X_train, X_test, y_train, y_test = train_test_split(
    data.X, data.y, test_size=0.25, stratify=data.y, random_state=0
)
est = bisvm.BilevelSVC(random_state=0).fit(X_train, y_train)

print(f"model chosen by model='auto': {est.model_}")
print(f"selected {est.support_.sum()} of {X_train.shape[1]} features")
print(f"test accuracy: {est.score(X_test, y_test):.3f}")

# %%
# Which features, and how much each weighs
# ----------------------------------------
# ``feature_importances_`` is each feature's share of :math:`\sum_j |w_j|` on the
# standardised columns; zero for a dropped feature. Beside it, the impurity importance of
# an extremely randomised tree ensemble fitted on the same rows, a model-free reference.
names = list(data.feature_names)
trees = ExtraTreesClassifier(n_estimators=200, random_state=0).fit(X_train, y_train)
fig, ax = plt.subplots(figsize=(7, 7))
plots.plot_importance(
    names, est.feature_importances_, trees.feature_importances_, max_bars=20, ax=ax
)
fig.tight_layout()

# %%
# How often the fold models select each feature
# ---------------------------------------------
# ``selection_frequency_`` is the share of the cross-validation fold models whose
# solution keeps the feature: 1 means every fold agrees, values near 1/2 mean the choice
# depends on the sample.
fig, ax = plt.subplots(figsize=(7, 7))
plots.plot_selection_frequency(names, est.selection_frequency_, max_bars=30, ax=ax)
fig.tight_layout()

# %%
# Convergence of the outer iterations
# -----------------------------------
# ``history_`` records each outer (L-BFGS) iterate: the validation criterion and the norm
# of its hypergradient.
fig, ax = plt.subplots(figsize=(7, 4))
plots.plot_convergence(est.history_, title="BiSVM outer iterations", ax=ax)
fig.tight_layout()

# %%
# The selected features, largest importance first
order = np.argsort(-est.feature_importances_)
for j in order[: est.support_.sum()]:
    print(f"{names[j]:<25s} {est.feature_importances_[j]:.3f}  coef {est.coef_[0, j]:+.4g}")
