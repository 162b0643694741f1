r"""
How stable is a selection?
==========================

A feature set chosen once depends on the sample it was chosen on. Stability selection
(Meinshausen and Bühlmann, 2010, "Stability selection"; Shah and Samworth, 2013,
"Variable selection with error control: another look at stability selection") refits
the selector on :math:`2B` half-samples drawn as :math:`B` complementary pairs and keeps
the features selected in at least a share :math:`\tau` of the fits. The expected number
of falsely selected features is then bounded by :math:`q^2 / ((2\tau - 1) p)`, with
:math:`q` the average number selected per fit and :math:`p` the number of features.

:class:`~bisvm.StabilitySelection` wraps any selecting estimator; here
:class:`~bisvm.BilevelSVC`, which learns one L1 weight per feature, on the Wine table,
one cultivar against the two others.
"""

# %%
# Fit on 2B = 16 half-samples
# ---------------------------
import matplotlib.pyplot as plt
import numpy as np

import bisvm
from bisvm import plots

data = bisvm.load_dataset("wine")
y = (data.y == 0).astype(int)  # cultivar 0 against the two others
selector = bisvm.StabilitySelection(
    bisvm.BilevelSVC(random_state=0),
    n_pairs=8,
    threshold=0.7,
    random_state=0,
).fit(data.X, y)

names = list(data.feature_names)
stable = [names[j] for j in np.flatnonzero(selector.support_)]
print(f"stable features (frequency >= 0.7): {stable}")
print(f"average number selected per fit q = {selector.average_selected_:.1f}")
print(f"bound on the expected false selections: {selector.false_selection_bound_:.2f}")

# %%
# The bound says something only when :math:`q` is small beside :math:`p`: with 13
# features and a selector that keeps most of them, it exceeds the number of
# features and the frequencies themselves are the useful output.

# %%
# Selection frequencies
# ---------------------
# The dashed line is the threshold :math:`\tau`. Frequencies near 1 or 0 are choices
# the sample does not move; those near 1/2 are a coin toss.
fig, ax = plt.subplots(figsize=(7, 5))
plots.plot_selection_frequency(
    names, selector.selection_frequency_, threshold=selector.threshold, ax=ax
)
fig.tight_layout()

# %%
# How many features each half-sample fit keeps
# --------------------------------------------
# ``subsample_supports_`` holds the selection of each of the :math:`2B` fits; the spread
# of their sizes is another view of how much one fit can be trusted.
sizes = np.asarray(selector.subsample_supports_).sum(axis=1)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.hist(sizes, bins=np.arange(sizes.min(), sizes.max() + 2) - 0.5, rwidth=0.85)
ax.axvline(selector.support_.sum(), color="k", ls="--", label="stable set")
ax.set_xlabel("features selected by one half-sample fit")
ax.set_ylabel("fits")
ax.legend()
fig.tight_layout()

# %%
# The selector predicts too: it refits its estimator on all rows, restricted to the
# stable features, and ``transform`` keeps those columns.
print(f"training accuracy of the refitted model: {selector.score(data.X, y):.3f}")
print(f"transformed shape: {selector.transform(data.X).shape}")
