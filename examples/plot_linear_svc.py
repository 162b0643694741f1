r"""
LinearSVC: the same solution as scikit-learn's
==============================================

:class:`~bisvm.LinearSVC` solves the primal L2-regularised linear SVM

.. math::

    \min_{w, b}\; \frac12 (\lVert w \rVert^2 + b^2) + C \sum_i \max(0, 1 - y_i (x_i^\top w + b))^2

(the intercept is LIBLINEAR's constant feature, penalised like the weights) by dual
coordinate descent (Hsieh et al., 2008, "A dual coordinate descent method for
large-scale linear SVM"), the method of LIBLINEAR that scikit-learn's
:class:`~sklearn.svm.LinearSVC` wraps. On the same data and ``C`` both reach the same
minimiser, up to their stopping tolerances; this example draws the two coefficient
vectors against each other, then uses :class:`~bisvm.LinearSVCCV` to choose ``C``.
"""

# %%
# One fit each
# ------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC as SklearnLinearSVC

import bisvm

data = bisvm.load_dataset("breast-cancer")
X = StandardScaler().fit_transform(data.X)
y = data.y

ours = bisvm.LinearSVC(C=0.1, tol=1e-8, max_iter=10_000).fit(X, y)
theirs = SklearnLinearSVC(C=0.1, tol=1e-8, max_iter=10_000, intercept_scaling=1.0).fit(X, y)
print(f"bisvm primal objective: {ours.objective_[0]:.6f}")
gap = np.max(np.abs(ours.coef_ - theirs.coef_))
print(f"largest coefficient difference: {gap:.2e}")
print(f"same training predictions: {np.array_equal(ours.predict(X), theirs.predict(X))}")

# %%
# The coefficients against each other
# -----------------------------------
fig, ax = plt.subplots(figsize=(4.8, 4.8))
ax.scatter(theirs.coef_.ravel(), ours.coef_.ravel(), s=14)
lims = np.array(ax.get_xlim())
ax.plot(lims, lims, "k--", lw=0.8)
ax.set_xlabel("scikit-learn LinearSVC coef_")
ax.set_ylabel("bisvm LinearSVC coef_")
ax.set_title("Breast Cancer, standardised, C = 0.1")
fig.tight_layout()

# %%
# Choosing C by cross-validation
# ------------------------------
# :class:`~bisvm.LinearSVCCV` fits the grid of ``C`` with warm starts in each fold and
# refits at the best one.
cv_model = bisvm.LinearSVCCV(Cs=np.logspace(-3, 1, 9), cv=5).fit(X, y)
scores = cv_model.cv_results_["mean_test_score"]
print(f"best C = {cv_model.best_C_:.3g}, cross-validated accuracy {cv_model.best_score_:.3f}")
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogx(cv_model.Cs_, scores, marker="o")
ax.axvline(cv_model.best_C_, color="k", ls="--")
ax.set_xlabel("C")
ax.set_ylabel("mean cross-validated accuracy")
fig.tight_layout()
