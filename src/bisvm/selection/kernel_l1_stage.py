r"""The final stage of :class:`~bisvm.AutoSVR`: kernel ridge at its learned values, or the
L1-loss ε-SVR near them, whichever has the smaller k-fold validation error.

**Why.** Kernel ridge's ridge and widths are learned on a smooth criterion (its exact
leave-one-out error), but it squares every residual it fits. The ε-SVR with the L1
(absolute) ε-insensitive loss,

.. math::
    \min_{f, b}\ \tfrac12\lVert f\rVert_K^2 + C\sum_i s_i\max(0, |y_i - f(x_i) - b| -
    \varepsilon),

grows linearly in large residuals and ignores those inside the tube: a robust fit
(Vapnik 1995, "The Nature of Statistical Learning Theory"; Huber 1964 for the linear
penalty of outliers), which a grid search over (C, γ, ε) reaches on tables with
heavy-tailed noise and which neither squared-loss lower level of AutoSVR contains. Its
validation error is piecewise smooth in (C, ε, γ) -- the free set of the dual changes
-- so, rather than a second hypergradient descent, this stage runs a short scan around
the point the smooth lower level learned and lets k-fold validation choose, the same
comparison on the same folds for both models.

**The scan.** On the standardised target, with the kernel
:math:`K = \exp(-\sum_j\gamma_j(x_j - x'_j)^2)` at the learned widths, ridge λ and
leave-one-out mean squared error J: the widths multiplied by each of
:data:`WIDTH_FACTORS` (the kernel becomes :math:`K^{t}`, so one Gram matrix serves all
three), tube half-widths :data:`EPSILONS` (in standard deviations of the target), and
:math:`C = C_0 c` for c in :data:`C_FACTORS`, :math:`C_0 = \sqrt J/\lambda`. The centre
:math:`C_0` matches the two losses' pull on a typical residual: kernel ridge is
:math:`\tfrac12\lVert f\rVert^2 + \frac1{2\lambda}\sum_i s_ir_i^2`, whose loss pulls
residual :math:`r_i` with force :math:`s_ir_i/\lambda`, the L1 loss with :math:`Cs_i`,
and :math:`|r_i|\approx\sqrt J`. Each fold's solves are warm-started along the scan
(C rising within a chain, so the previous dual point stays feasible). Cost:
``len(WIDTH_FACTORS) * len(EPSILONS) * len(C_FACTORS)`` SMO solves per fold
(:data:`N_SCAN` points) plus k kernel ridge solves for the reference, all on
:math:`(1 - 1/k)n` rows, and one refit.

**The choice** is the model of smaller weighted k-fold mean squared error, kernel ridge
on ties. The ε-SVR chosen is refitted as a plain :class:`~bisvm.SVR` at the chosen
(C, ε) on the columns rescaled by the chosen widths.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels import make_kernel
from ..solvers.dual.smo import epsilon_svr_dual, solve_smo
from .kernel_ridge_loo import kernel_ridge_fit

__all__ = ["L1StageResult", "WIDTH_FACTORS", "EPSILONS", "C_FACTORS", "N_SCAN",
           "kernel_ridge_cv_error", "l1_svr_scan", "l1_stage"]

#: Multipliers of the learned widths the scan tries (the L1 loss often prefers a
#: slightly different width from the squared loss's).
WIDTH_FACTORS = (0.5, 1.0, 2.0)

#: Tube half-widths of the scan, in standard deviations of the target (a narrow tube,
#: close to least absolute deviations, to a wide one that ignores half the noise).
EPSILONS = (0.05, 0.2, 0.5)

#: Multipliers of the centre :math:`C_0 = \sqrt J/\lambda` (module docstring), a decade
#: around it.
C_FACTORS = (10.0 ** -0.5, 1.0, 10.0 ** 0.5)

#: Points of the scan; each costs one SMO solve per fold.
N_SCAN = len(WIDTH_FACTORS) * len(EPSILONS) * len(C_FACTORS)

#: SMO stopping tolerance of the scan and the refit (bisvm's and LIBSVM's default).
SMO_TOL = 1e-3


@dataclass(frozen=True)
class L1StageResult:
    """Outcome of :func:`l1_stage`.

    Attributes
    ----------
    model : {"kernel_ridge", "epsilon_svr"}
        The model of smaller k-fold error.
    width_factor, C, epsilon : float
        The best scan point (ε on the standardised target), chosen or not.
    value : float
        Its k-fold weighted mean squared error.
    reference : float
        Kernel ridge's k-fold weighted mean squared error at its learned values, on the
        same folds.
    scan : ndarray of shape (N_SCAN, 4)
        Every point: width factor, C, ε, k-fold error.
    n_solves : int
        SMO solves and kernel ridge solves run.
    """

    model: str
    width_factor: float
    C: float
    epsilon: float
    value: float
    reference: float
    scan: np.ndarray
    n_solves: int


def _weights(sw, n):
    return np.ones(n) if sw is None else np.asarray(sw, dtype=float)


def kernel_ridge_cv_error(K, y, splits, ridge, sw=None):
    r"""Weighted k-fold mean squared error of kernel ridge (with intercept) on a Gram matrix.

    Parameters
    ----------
    K : ndarray of shape (n, n)
    y : ndarray of shape (n,)
    splits : list of (train, validation) index arrays
    ridge : float
        λ of :func:`~bisvm.selection.kernel_ridge_loo.kernel_ridge_fit`.
    sw : ndarray of shape (n,), optional
        Sample weights, of the fits and of the squared errors.

    Returns
    -------
    float
        :math:`\sum_i s_ir_i^2/\sum_i s_i` over the validation rows of all folds.
    """
    s = _weights(sw, y.size)
    err = den = 0.0
    for tr, va in splits:
        fit = kernel_ridge_fit(K[np.ix_(tr, tr)], y[tr, None], s[tr], float(ridge), True)
        pred = K[np.ix_(va, tr)] @ fit.theta[:, 0] + fit.intercept[0]
        err += float(s[va] @ (y[va] - pred) ** 2)
        den += float(s[va].sum())
    return err / den


def l1_svr_scan(K, y, splits, C0, sw=None, *, width_factors=WIDTH_FACTORS,
                epsilons=EPSILONS, C_factors=C_FACTORS):
    """Weighted k-fold mean squared error of the L1-loss ε-SVR over a scan (module
    docstring), warm-started within each fold.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix at width factor 1 (entries in (0, 1]: an RBF kernel).
    y : ndarray of shape (n,)
    splits : list of (train, validation) index arrays
    C0 : float
        Centre of the C scan.
    sw : ndarray of shape (n,), optional
        Sample weights (each row's C multiplied by its weight; errors weighted).
    width_factors, epsilons, C_factors : sequences of float

    Returns
    -------
    ndarray of shape (len(width_factors) * len(epsilons) * len(C_factors), 4)
        Rows (width factor, C, ε, error), width factors outermost.
    """
    if not (np.isfinite(C0) and C0 > 0):
        raise ValueError(f"C0 must be a positive finite number, got {C0!r}")
    s = _weights(sw, y.size)
    Cs = float(C0) * np.sort(np.asarray(C_factors, dtype=float))
    points = [(t, c, e) for t in width_factors for e in epsilons for c in Cs]
    err = np.zeros(len(points))
    den = 0.0
    kernel = make_kernel("precomputed")
    for tr, va in splits:
        K_tr, K_va = K[np.ix_(tr, tr)], K[np.ix_(va, tr)]
        chain_start = None  # the dual point of the smallest C: feasible for every chain
        alpha = t_now = None
        for p, (t, c, e) in enumerate(points):
            if c == Cs[0]:
                alpha = chain_start
            if t != t_now:  # width factors outermost: each fold's powers computed once
                t_now = t
                Kt, Kv = (K_tr, K_va) if t == 1.0 else (K_tr ** t, K_va ** t)
            prob = epsilon_svr_dual(Kt, y[tr], kernel, c, e, weights=s[tr])
            res = solve_smo(prob, alpha0=alpha, tol=SMO_TOL, method="smo")
            alpha = res.dual_coef
            if c == Cs[0]:
                chain_start = alpha
            pred = Kv @ res.coef + res.intercept
            err[p] += float(s[va] @ (y[va] - pred) ** 2)
        den += float(s[va].sum())
    return np.column_stack([np.array(points)[:, [0, 1, 2]], err / den])


def l1_stage(K, y, splits, ridge, loo_mse, sw=None):
    """Kernel ridge at (``ridge``, the widths of ``K``) or the best L1-loss ε-SVR of the
    scan around it, by k-fold validation (module docstring).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix at the learned widths.
    y : ndarray of shape (n,)
        Standardised target.
    splits : list of (train, validation) index arrays
    ridge : float
        Learned ridge λ.
    loo_mse : float
        Kernel ridge's leave-one-out mean squared error at the learned values (sets the
        centre of the C scan).
    sw : ndarray of shape (n,), optional

    Returns
    -------
    L1StageResult
    """
    if not (np.isfinite(ridge) and ridge > 0):
        raise ValueError(f"ridge must be a positive finite number, got {ridge!r}")
    if not (np.isfinite(loo_mse) and loo_mse >= 0):
        raise ValueError(f"loo_mse must be a non-negative finite number, got {loo_mse!r}")
    splits = list(splits)
    # a perfect leave-one-out fit still needs a finite centre: the smallest residual
    # scale the standardised target resolves
    C0 = max(np.sqrt(loo_mse), 1e-3) / float(ridge)
    reference = kernel_ridge_cv_error(K, y, splits, ridge, sw)
    scan = l1_svr_scan(K, y, splits, C0, sw)
    best = int(np.argmin(scan[:, 3]))
    t, c, e, v = (float(x) for x in scan[best])
    model = "epsilon_svr" if v < reference else "kernel_ridge"
    return L1StageResult(model, t, c, e, v, reference, scan,
                         len(splits) * (scan.shape[0] + 1))
