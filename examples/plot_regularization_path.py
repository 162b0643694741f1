r"""
The exact regularisation path of the L1 squared-hinge SVM
=========================================================

:func:`~bisvm.l1_sqhinge_path` traces the solution of the L1-regularised L2-SVM

.. math::

    \min_{\beta, b}\; \lambda \lVert\beta\rVert_1 + \frac{\alpha}{2}\lVert\beta\rVert_2^2
    + C \sum_i \max(0, 1 - y_i (x_i^\top \beta + b))^2

(here with the defaults :math:`\alpha = C = 1`) for every :math:`\lambda` at once. The
coefficients are piecewise linear in :math:`\lambda` (Rosset and Zhu, 2007, "Piecewise
linear regularized solution paths", Annals of Statistics), so the path is exact between
its breakpoints: there is no grid of :math:`\lambda` to choose. Read from the largest
:math:`\lambda` down, it shows the order in which the features enter the model, and the
held-out accuracy along it shows how many are needed.
"""

# %%
# Trace the path on the standardised Breast Cancer table
# ------------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import bisvm
from bisvm import plots

data = bisvm.load_dataset("breast-cancer")
X_train, X_test, y_train, y_test = train_test_split(
    data.X, data.y, test_size=0.3, stratify=data.y, random_state=0
)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

path = bisvm.l1_sqhinge_path(X_train, y_train, lambda_min_ratio=1e-3)
print(f"{len(path.breakpoints)} breakpoints from lambda_max = {path.lambda_max:.4g}")

# %%
# Coefficient paths
# -----------------
# Each line is one coefficient :math:`\beta_j(\lambda)`; the eight largest are labelled.
fig, ax = plt.subplots(figsize=(8, 5))
plots.plot_l1_path(path, top=8, feature_names=list(data.feature_names), ax=ax)
fig.tight_layout()

# %%
# The order in which features enter
entered = []
for coef in path.coefs:
    for j in np.flatnonzero(coef):
        if j not in entered:
            entered.append(j)
print("first ten features to enter:")
for rank, j in enumerate(entered[:10], start=1):
    print(f"  {rank:2d}. {data.feature_names[j]}")

# %%
# Held-out accuracy against the number of active features
# -------------------------------------------------------
# ``path.predict(X, lam)`` evaluates the exact solution at any :math:`\lambda`; at the
# breakpoints the number of nonzero coefficients changes by one.
n_active = np.array([np.count_nonzero(c) for c in path.coefs])
accuracy = np.array([np.mean(path.predict(X_test, lam) == y_test) for lam in path.breakpoints])
best = {}
for k, acc in zip(n_active, accuracy):
    best[k] = max(best.get(k, 0.0), acc)
ks = np.array(sorted(best))
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(ks, [best[k] for k in ks], marker="o", ms=3)
ax.set_xlabel("number of nonzero coefficients")
ax.set_ylabel("held-out accuracy (best at that size)")
ax.set_title("Accuracy along the L1 path")
ax.grid(alpha=0.3)
fig.tight_layout()
