r"""The class-pair bookkeeping of the multi-class kernel SVC (LIBSVM's layout, as
scikit-learn exposes it): which binary machines are trained, how their support vectors and
coefficients are laid out in ``dual_coef_``, and how their decision values vote.

One-vs-one (LIBSVM, Hsu & Lin 2002): one machine per pair :math:`(a, b)`, :math:`a < b`,
positive for class ``a``; the prediction is the class with the most votes. One-vs-rest:
one machine per class :math:`(a, \text{None})`, positive for ``a``. ``dual_coef_`` has one
row per *other* class: the coefficient of a support vector of class ``c`` in the machine
:math:`(a, b)` is stored in row ``b - 1`` when ``c = a`` and in row ``a`` when ``c = b``
(LIBSVM's ``sv_coef``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["class_pairs", "dual_layout", "ovr_aggregate", "pair_decisions", "votes"]


def class_pairs(k, ovo):
    """The machines: every pair ``(a, b)``, ``a < b`` (one-vs-one, and always for two
    classes), or ``(a, None)`` per class (one-vs-rest)."""
    if ovo or k == 2:
        return [(a, b) for a in range(k) for b in range(a + 1, k)]
    return [(a, None) for a in range(k)]


def dual_layout(machines, y_enc, pairs, k):
    """LIBSVM's layout of the per-machine solutions.

    Parameters
    ----------
    machines : list of tuples
        ``(sv_idx, coef, rho, ...)`` per machine: its support vectors (training indices),
        their coefficients :math:`y_t\\alpha_t` (times the machine's scale) and its ρ.
    y_enc : ndarray of int
        Class index of each training sample.
    pairs : list of tuples
        As :func:`class_pairs`.
    k : int

    Returns
    -------
    support : ndarray of int
        Support vectors of all machines, grouped by class.
    n_support : ndarray of int32, shape (k,)
    dual : ndarray, shape (k - 1, n_SV) for one-vs-one, (k, n_SV) for one-vs-rest
    intercept : ndarray, shape (n_machines,)
        :math:`-\\rho` per machine.
    """
    is_sv = np.zeros(y_enc.size, dtype=bool)
    for sv_idx, *_ in machines:
        is_sv[sv_idx] = True
    support = np.concatenate([np.flatnonzero(is_sv & (y_enc == c)) for c in range(k)])
    n_support = np.array([np.sum(is_sv & (y_enc == c)) for c in range(k)], np.int32)
    pos = np.full(y_enc.size, -1)
    pos[support] = np.arange(support.size)
    if pairs[0][1] is not None:
        dual = np.zeros((k - 1, support.size))
        for (a, b), (sv_idx, coef, *_) in zip(pairs, machines, strict=True):
            in_a = y_enc[sv_idx] == a
            dual[b - 1, pos[sv_idx[in_a]]] = coef[in_a]
            dual[a, pos[sv_idx[~in_a]]] = coef[~in_a]
    else:
        dual = np.zeros((k, support.size))
        for (a, _), (sv_idx, coef, *_) in zip(pairs, machines, strict=True):
            dual[a, pos[sv_idx]] = coef
    intercept = np.array([-m[2] for m in machines])
    return support, n_support, dual, intercept


def pair_decisions(Ksv, dual, intercept, n_support, pairs):
    """Raw per-machine decision values (LIBSVM orientation: positive = first class) from
    the kernel values ``Ksv`` between the inputs and the support vectors."""
    starts = np.concatenate([[0], np.cumsum(n_support)])
    out = np.empty((Ksv.shape[0], len(pairs)))
    for m, (a, b) in enumerate(pairs):
        if b is None:
            out[:, m] = Ksv @ dual[a] + intercept[m]
            continue
        sa = slice(starts[a], starts[a + 1])
        sb = slice(starts[b], starts[b + 1])
        out[:, m] = Ksv[:, sa] @ dual[b - 1, sa] + Ksv[:, sb] @ dual[a, sb] + intercept[m]
    return out


def votes(raw, pairs, k):
    """One-vs-one votes per class and the summed confidences (the decision values for the
    class minus those against it)."""
    counts = np.zeros((raw.shape[0], k))
    conf = np.zeros((raw.shape[0], k))
    for m, (a, b) in enumerate(pairs):
        win_a = raw[:, m] > 0
        counts[win_a, a] += 1
        counts[~win_a, b] += 1
        conf[:, a] += raw[:, m]
        conf[:, b] -= raw[:, m]
    return counts, conf


def ovr_aggregate(raw, pairs, k):
    """scikit-learn's one-vs-rest shape of one-vs-one decision values: the votes plus the
    confidences squashed into (-1/3, 1/3), so that they only break ties."""
    counts, conf = votes(raw, pairs, k)
    return counts + conf / (3 * (np.abs(conf) + 1))
