"""Probability calibration of SVM decision values: Platt's sigmoid (with Lin, Lin & Weng's
Newton method) and the pairwise coupling of Wu, Lin & Weng (2004), as LIBSVM does them."""

from __future__ import annotations

import numpy as np

from ..solvers.primal.newton import damped_newton

__all__ = ["fit_platt", "sigmoid_prob", "couple"]


def fit_platt(dec, labels, weights=None):
    r"""Platt's sigmoid :math:`P(y=1\mid f) = 1/(1 + e^{Af + B})` by Newton's method with
    backtracking on the regularised targets (Lin, Lin & Weng, 2007). ``labels`` in {0, 1}.

    ``weights`` (the per-sample costs of the machine, relative) weight the
    log-likelihood, so that the calibration minimises the same weighted risk as the SVM
    and keeps the effect of ``class_weight``.

    The loop is :func:`~bisvm.solvers.primal.newton.damped_newton` with the settings of
    Lin, Lin & Weng's Algorithm 1 (LIBSVM's ``sigmoid_train``): stop when both gradient
    entries are below 1e-5, at most 100 Newton steps, the Hessian shifted by
    :math:`\sigma = 10^{-12}`, the strict Armijo test with :math:`c_1 = 10^{-4}` over the
    steps :math:`1, \tfrac12, \dots, 2^{-33}` (the last one :math:`\ge 10^{-10}`)."""
    dec = np.asarray(dec, dtype=float)
    w = np.ones(dec.size) if weights is None else np.asarray(weights, float)
    w = w * (dec.size / w.sum())
    n_pos = float(np.sum(w[labels == 1]))
    n_neg = float(np.sum(w[labels != 1]))
    t = np.where(labels == 1, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def evaluate(x):
        A, B = x[0], x[1]
        z = dec * A + B
        # sum of w*(t*z + log(1 + exp(-z))), evaluated stably
        v = np.where(z >= 0, t * z + np.log1p(np.exp(-z)), (t - 1) * z + np.log1p(np.exp(z)))
        ez = np.exp(-np.abs(z))
        p = np.where(z >= 0, ez / (1.0 + ez), 1.0 / (1.0 + ez))  # 1/(1+exp(z))
        d1 = w * (t - p)
        g = np.array([float(np.sum(dec * d1)), float(np.sum(d1))])
        return float(w @ v), g, w * p * (1.0 - p)

    def direction(x, g, d2):
        sigma = 1e-12
        h11 = sigma + float(np.sum(dec * dec * d2))
        h22 = sigma + float(np.sum(d2))
        h21 = float(np.sum(dec * d2))
        g1, g2 = float(g[0]), float(g[1])
        det = h11 * h22 - h21 * h21
        return np.array([-(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det])

    x0 = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])
    run = damped_newton(evaluate, direction, x0, max_iter=100, max_ls=34, strict=True,
                        flat_ok=False, steepest_fallback=False, warn=False,
                        converged=lambda g: abs(g[0]) < 1e-5 and abs(g[1]) < 1e-5,
                        # g1*dA + g2*dB in this order: a BLAS dot may fuse and round differently
                        slope=lambda g, p: float(g[0]) * float(p[0]) + float(g[1]) * float(p[1]))
    return run.x[0], run.x[1]


def sigmoid_prob(dec, A, B):
    z = dec * A + B
    return np.where(z >= 0, np.exp(-z) / (1.0 + np.exp(-z)), 1.0 / (1.0 + np.exp(z)))


def couple(r, max_iter=100):
    """Pairwise coupling of Wu, Lin & Weng (2004), method 2 (as in LIBSVM).

    ``r[i, j]`` estimates P(class i | i or j); returns the class probabilities."""
    k = r.shape[0]
    Q = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                Q[i, i] += r[j, i] ** 2
                Q[i, j] = -r[j, i] * r[i, j]
    p = np.full(k, 1.0 / k)
    eps = 0.005 / k
    for _ in range(max(100, k)):
        Qp = Q @ p
        pQp = float(p @ Qp)
        if np.max(np.abs(Qp - pQp)) < eps:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2 * Qp[t])) / (1 + diff) ** 2
            Qp = (Qp + diff * Q[t]) / (1 + diff)
            p /= 1 + diff
    return p
