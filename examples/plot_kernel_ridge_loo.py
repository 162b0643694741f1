"""
Exact leave-one-out of kernel ridge regression at the cost of one fit
=====================================================================

Kernel ridge regression predicts :math:`\\hat y = H y` with the hat matrix
:math:`H = K (K + C I)^{-1}` (without intercept), so its leave-one-out residuals need no
refit: by the Sherman-Morrison identity

.. math::

    y_i - \\hat f^{(-i)}(x_i) = \\frac{y_i - \\hat y_i}{1 - H_{ii}}

(Allen, 1974, "The relationship between variable selection and data augmentation and a
method for prediction"; Wahba, 1990, "Spline models for observational data").
:class:`~bisvm.KernelRidge` returns them as ``loo_residuals_`` and their mean square as
``loo_mse_`` from the same Cholesky factor as the fit. This example checks them against
brute-force leave-one-out with scikit-learn's :class:`~sklearn.kernel_ridge.KernelRidge`
and uses them to choose the ridge :math:`C` and the RBF width :math:`\\gamma`.
"""

# %%
# Closed form against refits
# --------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.kernel_ridge import KernelRidge as SklearnKernelRidge
from sklearn.model_selection import LeaveOneOut, cross_val_predict

import bisvm

X, y = load_diabetes(return_X_y=True)
X, y = X[:150], y[:150] - y[:150].mean()
gamma = 1.0 / (X.shape[1] * X.var())

model = bisvm.KernelRidge(ridge=0.1, kernel="rbf", gamma=gamma).fit(X, y)
refits = cross_val_predict(
    SklearnKernelRidge(alpha=0.1, kernel="rbf", gamma=gamma), X, y, cv=LeaveOneOut()
)
brute = y - refits
print(f"closed-form LOO MSE {model.loo_mse_:.2f}, "
      f"150 refits {np.mean(brute ** 2):.2f}, "
      f"largest residual difference {np.max(np.abs(model.loo_residuals_ - brute)):.1e}")

fig, ax = plt.subplots(figsize=(4.8, 4.8))
ax.scatter(brute, model.loo_residuals_, s=10)
lims = np.array(ax.get_xlim())
ax.plot(lims, lims, "k--", lw=0.8)
ax.set_xlabel("leave-one-out residual, 150 refits (scikit-learn)")
ax.set_ylabel("loo_residuals_, one fit (bisvm)")
fig.tight_layout()

# %%
# Choosing C and gamma on a grid
# ------------------------------
# Each grid point costs one fit, yet its score is the exact leave-one-out error.
ridges = np.logspace(-4, 1, 16)
gammas = gamma * np.logspace(-1, 1.5, 6)
loo = np.array([
    [bisvm.KernelRidge(ridge=c, kernel="rbf", gamma=g).fit(X, y).loo_mse_ for c in ridges]
    for g in gammas
])
best_g, best_c = np.unravel_index(np.argmin(loo), loo.shape)
print(f"smallest LOO MSE {loo.min():.1f} at C = {ridges[best_c]:.3g}, "
      f"gamma = {gammas[best_g]:.3g}")

fig, ax = plt.subplots(figsize=(7, 4.5))
for k, g in enumerate(gammas):
    ax.semilogx(ridges, loo[k], label=f"γ = {g:.3g}")
ax.scatter([ridges[best_c]], [loo.min()], color="k", zorder=3, label="minimum")
ax.set_xlabel("C (ridge)")
ax.set_ylabel("exact leave-one-out MSE")
ax.legend(fontsize=8)
fig.tight_layout()
