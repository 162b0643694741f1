"""
Scalar, vector or group model
=============================

:class:`~bisvm.BilevelSVC` can learn one L1 weight for all features (``model="scalar"``),
one per feature (``"vector"``) or one per group of columns (``"group"``, with
``feature_groups``; the penalty is then the group lasso's
:math:`\\sum_k \\beta_k \\lVert w_{G_k} \\rVert_2`, which keeps or drops a group as a whole;
Yuan and Lin, 2006, "Model selection and estimation in regression with grouped
variables"). The vector and group models start from the scalar one and refine it; the
refinement replaces the scalar model only when rows held out of the tuning confirm it
(``refined_``). ``model="auto"`` chooses the group model when groups are given, else the
vector model when the features are no more than the rows of a training fold, else the
scalar model.

The Breast Cancer table has three natural groups of ten columns (the mean, standard
error and worst value of ten measurements); here two groups of ten noise columns are
added, so each model has something to drop.
"""

# %%
# Three models on the same rows
# -----------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import bisvm

data = bisvm.load_dataset("breast-cancer")
rng = np.random.default_rng(0)
X = np.hstack([data.X, rng.standard_normal((data.X.shape[0], 20))])
groups = dict(data.groups)
groups["noise A"] = list(range(30, 40))
groups["noise B"] = list(range(40, 50))
X_train, X_test, y_train, y_test = train_test_split(
    X, data.y, test_size=0.25, stratify=data.y, random_state=0
)

models = {
    "scalar": bisvm.BilevelSVC(model="scalar", random_state=0),
    "vector": bisvm.BilevelSVC(model="vector", random_state=0),
    "group": bisvm.BilevelSVC(feature_groups=groups, random_state=0),
}
for name, est in models.items():
    est.fit(X_train, y_train)
    print(f"{name:<7s} model_={est.model_:<7s} refined_={est.refined_!s:<5s} "
          f"keeps {est.support_[:30].sum():2d} real + {est.support_[30:].sum():2d} noise "
          f"columns, test accuracy {est.score(X_test, y_test):.3f}")

# %%
# What each model keeps
# ---------------------
# One row per model, one column per feature: dark cells are the kept columns. The
# vertical lines separate the five groups.
fig, ax = plt.subplots(figsize=(10, 2.6))
ax.imshow(np.array([est.support_ for est in models.values()]), aspect="auto",
          cmap="Greys", vmin=0, vmax=1.4, interpolation="nearest")
for edge in (9.5, 19.5, 29.5, 39.5):
    ax.axvline(edge, color="tab:red", lw=1)
ax.set_yticks(range(len(models)), list(models))
ax.set_xticks([4.5, 14.5, 24.5, 34.5, 44.5], list(groups))
ax.set_title("kept columns per model")
fig.tight_layout()

# %%
# The learned weights of the vector model
# ---------------------------------------
# A larger :math:`\beta_j` charges more for a nonzero coefficient :math:`w_j`.
vector = models["vector"]
weights = np.ravel(vector.penalty_weights_)[: X.shape[1]]
print(f"median learned weight: measurements {np.median(weights[:30]):.4g}, "
      f"noise {np.median(weights[30:]):.4g}")
fig, ax = plt.subplots(figsize=(10, 3.2))
ax.bar(np.arange(30), weights[:30], color="tab:blue", label="measurements")
ax.bar(np.arange(30, 50), weights[30:], color="tab:gray", label="noise")
ax.set_yscale("log")
ax.set_xlabel("column")
ax.set_ylabel("learned L1 weight")
ax.legend()
fig.tight_layout()
