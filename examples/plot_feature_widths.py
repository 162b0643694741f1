"""
Per-feature kernel widths select features
=========================================

With ``widths="per_feature"``, :class:`~bisvm.AutoSVC` learns one RBF width per feature,

.. math::

    k(x, x') = \\exp\\Big(-\\sum_j \\gamma_j (x_j - x'_j)^2\\Big),

together with ``C``, by descending a cross-validated criterion along its hypergradient.
A width learned near zero removes its feature from the kernel: this is automatic
relevance determination, a nonlinear feature selection (Chapelle, Vapnik, Bousquet and
Mukherjee, 2002, "Choosing multiple parameters for support vector machines"). Here the
target is whether Friedman's first regression function,
:math:`10 \\sin(\\pi x_1 x_2) + 20 (x_3 - 1/2)^2 + 10 x_4 + 5 x_5 + \\varepsilon`,
exceeds its median: only the first five of the ten inputs matter.
"""

# %%
# One width for all features against one per feature
# --------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.model_selection import train_test_split

import bisvm
from bisvm import plots, report

X, t = make_friedman1(n_samples=300, n_features=10, noise=0.5, random_state=0)
y = (t > np.median(t)).astype(int)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.25, stratify=y, random_state=0
)
names = [f"x{j + 1}" for j in range(X.shape[1])]

shared = bisvm.AutoSVC(widths="shared", random_state=0).fit(X_train, y_train)
per_feature = bisvm.AutoSVC(widths="per_feature", random_state=0).fit(X_train, y_train)
for label, model in [("shared width", shared), ("per-feature widths", per_feature)]:
    print(f"{label:<19s} test accuracy {model.score(X_test, y_test):.3f}")
print("features kept:", [names[j] for j in np.flatnonzero(per_feature.support_)])

# %%
# The learned relevances
# ----------------------
# :math:`\gamma_j \operatorname{var}(x_j)`, normalised to sum to one; dark bars are the
# features kept by the one-standard-error rule (``support_``), light ones are dropped.
fig, ax = plt.subplots(figsize=(6, 4))
plots.plot_learned_widths(
    names, per_feature.feature_importances_, per_feature.support_, ax=ax
)
fig.tight_layout()

# %%
# The widths along the outer iterations
# -------------------------------------
# ``bisvm.report.outer_path`` returns the iterates of each stage: first the shared width,
# then the per-feature widths, which start from it and part.
stages = report.outer_path(per_feature)
widths = stages[-1][1]
fig, ax = plt.subplots(figsize=(7, 4))
plots.plot_width_paths(widths, names, top=6, ax=ax)
fig.tight_layout()
