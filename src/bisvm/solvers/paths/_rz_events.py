r"""The event search of the Rosset–Zhu path (Rosset & Zhu 2007): along the direction of the
current segment, how far λ can decrease before an inactive gradient reaches the bound
(:math:`d_1`, ``"enter"``), an active coefficient reaches 0 (:math:`d_2`, ``"leave"``) or a
margin reaches a knot of the loss (:math:`d_3`, ``"knot"``); and the updates of the
tracker's state at the events. See the module docstring of
:mod:`bisvm.solvers.paths.rz_path`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Event", "apply_events", "knot_consistency", "next_events"]


class Event(NamedTuple):
    """One candidate event: the decrease ``delta`` of λ where it happens, its ``kind``
    (``"enter"``, ``"leave"``, ``"knot"``), the coefficient or sample ``index``, and the
    ``payload``: the entering sign (enter), ``None`` (leave), +1 for the knot at margin 1
    and -1 for the knot at -1 (knot)."""

    delta: float
    kind: str
    index: int
    payload: float | None


def knot_consistency(tr, d):
    """A sample sitting on a knot must move into its assigned piece: move each one that
    the direction ``d`` sends the wrong way to the other piece (the directional derivative
    of the solution map is unique, so one of the two pieces is consistent) and recompute
    the direction. Returns the final direction."""
    t, zone = tr.t, tr.zone
    m = t * tr.z
    dm = t * d.dz
    for _ in range(tr.n):
        on1 = np.abs(m - 1.0) <= 1e-9 * max(1.0, np.abs(m).max())
        bad = np.flatnonzero(on1 & (((zone == 1) & (dm > 0)) | ((zone == 0) & (dm < 0))))
        if tr.huber:
            onm1 = np.abs(m + 1.0) <= 1e-9 * max(1.0, np.abs(m).max())
            bad = np.r_[bad, np.flatnonzero(
                onm1 & (((zone == 1) & (dm < 0)) | ((zone == 2) & (dm > 0))))]
        if bad.size == 0:
            break
        i = int(bad[np.argmax(np.abs(dm[bad]))])
        old = zone[i]
        new = (0 if old == 1 else 1) if abs(m[i] - 1.0) < abs(m[i] + 1.0) else (
            2 if old == 1 else 1)
        tr.flip(i, new)
        d = tr.direction()
        dm = t * d.dz
    return d


def _enter_events(tr, d, scale_tol):
    """d1: an inactive :math:`|g_j|` reaches λ − Δ."""
    inactive = np.ones(tr.p, dtype=bool)
    inactive[tr.act] = False
    idx = np.flatnonzero(inactive)
    if not idx.size:
        return []
    lam = tr.lam
    g, dg = tr.G[idx], d.dG[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(dg + 1.0 > 1e-14, (lam - g) / (dg + 1.0), np.inf)
        lo = np.where(1.0 - dg > 1e-14, (lam + g) / (1.0 - dg), np.inf)
    up = np.maximum(up, 0.0)
    lo = np.maximum(lo, 0.0)
    du = np.minimum(up, lo)
    return [Event(float(du[k]), "enter", int(idx[k]), -1.0 if up[k] <= lo[k] else 1.0)
            for k in np.flatnonzero(du <= du.min() * (1 + 1e-9) + scale_tol)
            if np.isfinite(du[k])]


def _leave_events(tr, d, scale_tol):
    """d2: an active β_j reaches 0."""
    if not tr.act:
        return []
    bA, vA = tr.beta[tr.act], d.vA
    with np.errstate(divide="ignore", invalid="ignore"):
        d2 = np.where(bA * vA < 0, -bA / vA, np.inf)
    d2 = np.maximum(d2, 0.0)
    return [Event(float(d2[k]), "leave", tr.act[k], None)
            for k in np.flatnonzero(d2 <= d2.min() * (1 + 1e-9) + scale_tol)
            if np.isfinite(d2[k])]


def _knot_events(tr, d, scale_tol):
    """d3: a margin reaches a knot (1, or -1 for the modified Huber loss)."""
    zone = tr.zone
    m = tr.t * tr.z
    dm = tr.t * d.dz
    with np.errstate(divide="ignore", invalid="ignore"):
        k1 = np.where(((zone == 1) & (dm > 0)) | ((zone == 0) & (dm < 0)),
                      (1.0 - m) / dm, np.inf)
        if tr.huber:
            km = np.where(((zone == 1) & (dm < 0)) | ((zone == 2) & (dm > 0)),
                          (-1.0 - m) / dm, np.inf)
        else:
            km = np.full(tr.n, np.inf)
    k1 = np.maximum(k1, 0.0)
    km = np.maximum(km, 0.0)
    d3 = np.minimum(k1, km)
    if not np.isfinite(d3.min()):
        return []
    return [Event(float(d3[i]), "knot", int(i), 1.0 if k1[i] <= km[i] else -1.0)
            for i in np.flatnonzero(d3 <= d3.min() * (1 + 1e-9) + scale_tol)]


def next_events(tr, d, scale_tol):
    """Every event within ``scale_tol`` (absolute, in λ) of the first of its kind, in
    the order enter, leave, knot."""
    return (_enter_events(tr, d, scale_tol) + _leave_events(tr, d, scale_tol)
            + _knot_events(tr, d, scale_tol))


def apply_events(tr, events, thresh):
    """Process the events with ``delta <= thresh`` (simultaneous ones together): leaving
    coefficients first, then the knot crossings, then the re-solve at the vertex
    (:meth:`RZTracker.polish`, before the entering coefficients join: they are exactly 0
    there), then the entering coefficients. Returns the kinds processed, in order."""
    kinds = []
    for ev in events:
        if ev.delta <= thresh and ev.kind == "leave" and ev.index in tr.sgn:
            tr.remove_var(ev.index)
            kinds.append("leave")
    for ev in events:
        if ev.delta > thresh or ev.kind != "knot":
            continue
        old = tr.zone[ev.index]
        if ev.payload > 0:  # knot at margin 1
            new = 0 if old == 1 else 1
        else:
            new = 2 if old == 1 else 1
        tr.flip(ev.index, new)
        kinds.append("knot")
    tr.polish()
    for ev in events:
        if ev.delta > thresh or ev.kind != "enter" or ev.index in tr.sgn:
            continue
        tr.add_var(ev.index, ev.payload)
        kinds.append("enter")
    return kinds
