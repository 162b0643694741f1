"""Probability calibration of SVM decision values: Platt's sigmoid (with Lin, Lin & Weng's
Newton method) and the pairwise coupling of Wu, Lin & Weng (2004), as LIBSVM does them."""

from __future__ import annotations

import numpy as np

__all__ = ["fit_platt", "sigmoid_prob", "couple"]


def fit_platt(dec, labels, weights=None):
    r"""Platt's sigmoid :math:`P(y=1\mid f) = 1/(1 + e^{Af + B})` by Newton's method with
    backtracking on the regularised targets (Lin, Lin & Weng, 2007). ``labels`` in {0, 1}.

    ``weights`` (the per-sample costs of the machine, relative) weight the
    log-likelihood, so that the calibration minimises the same weighted risk as the SVM
    and keeps the effect of ``class_weight``."""
    dec = np.asarray(dec, dtype=float)
    w = np.ones(dec.size) if weights is None else np.asarray(weights, float)
    w = w * (dec.size / w.sum())
    n_pos = float(np.sum(w[labels == 1]))
    n_neg = float(np.sum(w[labels != 1]))
    t = np.where(labels == 1, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))

    def fval(A, B):
        z = dec * A + B
        # sum of w*(t*z + log(1 + exp(-z))), evaluated stably
        v = np.where(z >= 0, t * z + np.log1p(np.exp(-z)), (t - 1) * z + np.log1p(np.exp(z)))
        return float(w @ v)

    f = fval(A, B)
    sigma = 1e-12
    for _ in range(100):
        z = dec * A + B
        ez = np.exp(-np.abs(z))
        p = np.where(z >= 0, ez / (1.0 + ez), 1.0 / (1.0 + ez))  # 1/(1+exp(z))
        d2 = w * p * (1.0 - p)
        h11 = sigma + float(np.sum(dec * dec * d2))
        h22 = sigma + float(np.sum(d2))
        h21 = float(np.sum(dec * d2))
        d1 = w * (t - p)
        g1 = float(np.sum(dec * d1))
        g2 = float(np.sum(d1))
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            nA, nB = A + step * dA, B + step * dB
            nf = fval(nA, nB)
            if nf < f + 1e-4 * step * gd:
                A, B, f = nA, nB, nf
                break
            step *= 0.5
        else:
            break
    return A, B


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
