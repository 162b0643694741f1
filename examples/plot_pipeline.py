"""
BilevelSVC as the first step of a Pipeline
==========================================

Every self-tuning selector of bisvm is also a scikit-learn selector: after ``fit``,
``get_support()`` says which columns it keeps and ``transform`` returns them. So
:class:`~bisvm.BilevelSVC` can choose the features and hand them to any downstream
model in a :class:`~sklearn.pipeline.Pipeline`, and the whole pipeline can be
cross-validated: the selection is then redone inside each training fold, so the score
is not biased by a selection made on the rows it is tested on. To give the selector
something to do, the Breast Cancer table gets 30 extra columns of noise.
"""

# %%
# Selector, then a kernel SVM on the kept columns
# -----------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bisvm

# The 30 measurements of the Breast Cancer table, and 30 columns of seeded noise that a
# good selector should drop.
data = bisvm.load_dataset("breast-cancer")
rng = np.random.default_rng(0)
X = np.hstack([data.X, rng.standard_normal((data.X.shape[0], 30))])
y = data.y
names = list(data.feature_names) + [f"noise {k}" for k in range(30)]

pipe = make_pipeline(
    bisvm.BilevelSVC(random_state=0),
    StandardScaler(),
    bisvm.SVC(kernel="rbf", C=1.0),
)
pipe.fit(X, y)
selector = pipe[0]
kept = selector.get_support()
print(f"kept {kept.sum()} of {X.shape[1]} columns, {kept[30:].sum()} of them noise")
print("first names out:", list(selector.get_feature_names_out(names))[:5])

# %%
# Cross-validated accuracy, with and without the selector
# -------------------------------------------------------
cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
with_selection = cross_val_score(pipe, X, y, cv=cv)
without = cross_val_score(make_pipeline(StandardScaler(), bisvm.SVC(kernel="rbf")), X, y, cv=cv)
print(f"selector + SVC: {with_selection.mean():.3f} +/- {with_selection.std():.3f}")
print(f"SVC on all 60:  {without.mean():.3f} +/- {without.std():.3f}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.boxplot([with_selection, without], showmeans=True)
ax.set_xticks([1, 2], [f"BilevelSVC ({kept.sum()} cols) + SVC", "SVC (60 cols)"])
ax.set_ylabel("fold accuracy")
ax.set_title("3-fold cross-validation")
fig.tight_layout()

# %%
# How many columns each fold's selector kept
# ------------------------------------------
# Fitting the pipeline per fold by hand shows the selection moving with the sample.
counts = []
for train, _ in cv.split(X, y):
    counts.append(int(pipe.fit(X[train], y[train])[0].get_support().sum()))
print("columns kept per fold:", counts)
fig, ax = plt.subplots(figsize=(6, 3))
ax.bar(np.arange(1, len(counts) + 1), counts)
ax.set_xlabel("fold")
ax.set_ylabel("columns kept")
fig.tight_layout()
