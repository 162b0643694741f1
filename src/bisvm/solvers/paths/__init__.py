"""Regularisation paths: whole solution paths λ ↦ (β(λ), b(λ)) traced exactly by events.

* :mod:`.l1_hinge`: the 1-norm SVM (hinge loss, piecewise linear), by the parametric
  simplex method (:mod:`._simplex`);
* :mod:`.rz_path`: the L1-regularised L2-SVM (squared hinge or modified Huber, piecewise
  quadratic), linear or kernel, by Rosset–Zhu event tracking (state in
  :mod:`._rz_tracker`, event search in :mod:`._rz_events`).
"""
