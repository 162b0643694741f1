"""
AutoSVC: a kernel SVM that learns C and its width
=================================================

:class:`~bisvm.AutoSVC` learns the cost ``C`` and the RBF width :math:`\\gamma` of a
kernel SVM by descending a cross-validated criterion along its hypergradient instead of
evaluating a grid. The lower level is the L2-SVM with the kernel
:math:`k(x, x') = \\exp(-\\gamma \\lVert x - x' \\rVert^2)`; its solution is differentiable
in :math:`(C, \\gamma)` wherever the set of free support vectors does not change, and the
hypergradient comes from the adjoint of their KKT system (Keerthi, Sindhwani and
Chapelle, 2007, "An efficient method for gradient-based adaptation of hyperparameters in
SVM models"). A plain :class:`~bisvm.SVC` is then refitted at the learned values.

This example fits it on two interleaved half-moons, draws the learned decision boundary,
and draws the outer path on the cross-validated error surface that a grid search would
have had to evaluate point by point.
"""

# %%
# Learn C and gamma
# -----------------
import matplotlib.pyplot as plt
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split

import bisvm
from bisvm import plots, report

X, y = make_moons(n_samples=240, noise=0.25, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
est = bisvm.AutoSVC(random_state=0).fit(X_train, y_train)
print(f"learned C = {est.C_:.3g}, gamma = {est.gamma_:.3g}")
print(f"test accuracy: {est.score(X_test, y_test):.3f}")

# %%
# The decision boundary
# ---------------------
# The solid line is :math:`f(x) = 0`, the dashed lines the margins :math:`f(x) = \pm 1`;
# circled points are support vectors.
fig, ax = plt.subplots(figsize=(6, 5))
plots.plot_decision_boundary(est, X_train, y_train, feature_names=["x1", "x2"], ax=ax)
fig.tight_layout()

# %%
# The outer path on the cross-validated surface
# ---------------------------------------------
# ``bisvm.report.kernel_figures`` evaluates the 3-fold error of the refitted model's
# class on a 6 x 6 log grid around the path (here only to draw it; the fit itself never
# needs the grid) and draws the iterates from the start (square) to the learned point
# (star).
for ax, caption in report.kernel_figures(
    est, ["x1", "x2"], X=X_train, y=y_train, n_points=6, cv=3
):
    ax.figure.set_size_inches(6, 5)
    ax.figure.tight_layout()
    print(caption)
