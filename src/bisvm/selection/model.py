r"""The *model* role of the bilevel engine: the lower-level problem seen from above.

Two pieces, as sparse-ho's models separate them:

* the lower-level model itself -- the problem E(w; b) and its solver policy -- lives in
  :mod:`bisvm.solvers` (:class:`~bisvm.solvers.primal.lower_level.LowerLevel`); the engine
  reaches it only through the :class:`LowerModel` interface below, checked once by
  :func:`check_role`;
* :class:`HyperModel` maps the learned hyperparameters β onto the model's penalty
  weights: one scalar for every coordinate, one per coordinate, or one per group (the
  scalar, vector and group models of González Vallejo (2024)), with the ridge weight α
  last when it is learned too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..solvers.primal.lower_level import LowerLevel
from .splits import check_indices

__all__ = ["HyperModel", "make_hyper_model", "LowerModel", "check_role", "LowerLevel",
           "beta_upper_bound"]


@runtime_checkable
class LowerModel(Protocol):
    """What the bilevel engine needs of a lower-level model.

    ``problem`` builds E(·; b) on one fold's training rows; ``reweighted`` gives it new
    weights; ``solve`` returns a solver result (``coef``, ``n_iter``, ``factor``);
    ``newton_factor`` the Hessian at the solution as a factor with ``solve``;
    ``weight_vjp``/``weight_jvp`` the derivative of the optimality condition in the
    weights, applied to a vector, ``l2_vjp``/``l2_jvp`` its derivative in α;
    ``zero_penalty`` the weight that empties the model; ``exact`` whether the problem is
    the exact (non-smooth) weighted-L1 one.
    """

    exact: bool
    l2_penalty: float

    def problem(self, X, y, penalty_groups, weights, l2_penalty=None,
                sample_weight=None): ...

    def reweighted(self, problem, weights, l2_penalty=None): ...

    def solve(self, problem, w0=None, tol=1e-9): ...

    def newton_factor(self, problem, result): ...

    def weight_vjp(self, problem, w, v): ...

    def weight_jvp(self, problem, w, db): ...

    def l2_vjp(self, problem, w, v): ...

    def l2_jvp(self, problem, w, dl2): ...

    def zero_penalty(self, X, y, sample_weight=None): ...


def check_role(obj, role, name):
    """Refuse ``obj`` as the engine's ``name`` unless it provides every member of the
    protocol ``role`` (once, when the engine is built, instead of probing later)."""
    if not isinstance(obj, role):
        missing = [m for m in dir(role) if not m.startswith("_") and not hasattr(obj, m)]
        raise TypeError(f"{name} must provide the {role.__name__} interface; "
                        f"{type(obj).__name__} lacks {missing}")
    return obj


def beta_upper_bound(folds):
    r"""The bound :math:`\beta_{\max} = 10\max_{\rm folds}\max_j \overline{|x_j|}` of
    the outer search (mean over each fold's training rows, weighted by their row weights
    when the fold has them): far above it every coefficient is smoothed away, so BiSVM
    searches :math:`\beta = \beta_{\max}\,\sigma(\theta)` over unconstrained θ.

    Parameters
    ----------
    folds : sequence of Fold
        With ``X_train`` (dense or sparse) and ``w_train`` (None: unweighted).
    """
    def col_mean_abs(f):
        A = abs(f.X_train)
        if f.w_train is None:
            return float(np.max(A.mean(axis=0)))
        w = np.asarray(f.w_train, dtype=float)
        return float(np.max(np.asarray(A.T @ w).ravel())) / w.sum()
    return 10.0 * max(col_mean_abs(f) for f in folds)


@dataclass(frozen=True)
class HyperModel:
    """Map from the hyperparameter vector β to the weights of the penalty groups.

    Attributes
    ----------
    kind : {"scalar", "vector", "group"}
    penalty_groups : ndarray of int, shape (d + 1,)
        Penalty group of each coordinate of the augmented ``w`` (-1: unpenalised).
    hyper_of_group : ndarray of int, shape (n_penalty_groups,)
        Entry of β that weights each penalty group.
    names : tuple of str
        One name per entry of β (features, groups, "intercept", and "l2_penalty" last
        when α is learned).
    group_names : tuple of str
        One name per penalty group (for the scalar model: per coordinate).
    learn_l2 : bool
        Whether the last hyperparameter is the ridge weight α (González Vallejo (2024)
        fixes α = 0.01 and searches (α, β) on a grid).
    """

    kind: str
    penalty_groups: np.ndarray
    hyper_of_group: np.ndarray
    names: tuple
    group_names: tuple = ()
    learn_l2: bool = False

    @property
    def n_hyper(self):
        return len(self.names)

    def weights(self, beta):
        """Penalty weight of every group for hyperparameters ``beta``."""
        return np.asarray(beta, dtype=float)[self.hyper_of_group]

    def l2(self, beta):
        """The learned α, or None when α is fixed."""
        return float(np.asarray(beta)[-1]) if self.learn_l2 else None

    def reduce(self, grad_weights, grad_l2=0.0):
        r"""Chain rule :math:`\partial J/\partial\beta = M^\top \partial J/\partial b`
        (plus :math:`\partial J/\partial\alpha` last when α is learned)."""
        g = np.bincount(self.hyper_of_group, weights=grad_weights, minlength=self.n_hyper)
        if self.learn_l2:
            g[-1] = grad_l2
        return g


def make_hyper_model(kind, n_features, *, groups=None, penalize_intercept=True,
                     feature_names=None, learn_l2=False):
    """Build the :class:`HyperModel` of the scalar, vector or group model.

    Parameters
    ----------
    kind : {"scalar", "vector", "group"}
        Scalar β for every coordinate; one β_j per coordinate; one β_k per group. The
        scalar and vector models both use singleton penalty groups: the scalar model is
        the vector model with all entries tied.
    n_features : int
        Number of features ``d`` (the bias is coordinate ``d``).
    groups : dict of str -> list of int, or sequence of lists, optional
        Feature groups for ``kind="group"``; features in no group get a singleton group
        named after the feature.
    penalize_intercept : bool
        Whether the bias has its own β entry (thesis) or no penalty at all.
    feature_names : sequence of str, optional
    learn_l2 : bool
        Append the ridge weight α as a last hyperparameter (not in the thesis).
    """
    hm = _make_hyper_model(kind, n_features, groups, penalize_intercept, feature_names)
    if not learn_l2:
        return hm
    return HyperModel(hm.kind, hm.penalty_groups, hm.hyper_of_group,
                      hm.names + ("l2_penalty",), hm.group_names, True)


def _make_hyper_model(kind, n_features, groups, penalize_intercept, feature_names):
    d = int(n_features)
    names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(d)]
    if len(names) != d:
        raise ValueError(f"feature_names has {len(names)} entries for {d} features")
    if kind not in ("scalar", "vector", "group"):
        raise ValueError(f"model must be 'scalar', 'vector' or 'group', got {kind!r}")
    if kind != "group" and groups is not None:
        raise ValueError(f"groups are only used by model='group', not model={kind!r}")
    pg = np.full(d + 1, -1, dtype=np.int64)
    if kind in ("scalar", "vector"):
        pg[:d] = np.arange(d)
        n_pg = d
        if penalize_intercept:
            pg[d] = d
            n_pg += 1
        coord_names = tuple(names + (["intercept"] if penalize_intercept else []))
        if kind == "scalar":
            return HyperModel("scalar", pg, np.zeros(n_pg, dtype=np.int64), ("beta",),
                              coord_names)
        return HyperModel("vector", pg, np.arange(n_pg), coord_names, coord_names)
    if groups is None:
        raise ValueError("model='group' needs groups (a dict name -> feature indices)")
    items = list(groups.items()) if isinstance(groups, dict) else [
        (f"group{k}", g) for k, g in enumerate(groups)
    ]
    hyper_names = []
    for name, idx in items:
        idx = np.asarray(idx)
        check_indices(idx, d, empty=f"group {name!r} is empty",
                      not_integer=f"group {name!r} must list integer feature indices",
                      out_of_range=f"group {name!r} has a feature index outside 0..{d - 1}",
                      integer_error=TypeError)
        if np.any(pg[idx] >= 0) or len(np.unique(idx)) != idx.size:
            raise ValueError(f"group {name!r} overlaps another group or repeats a feature")
        pg[idx] = len(hyper_names)
        hyper_names.append(str(name))
    for j in np.flatnonzero(pg[:d] < 0):
        pg[j] = len(hyper_names)
        hyper_names.append(names[j])
    if penalize_intercept:
        pg[d] = len(hyper_names)
        hyper_names.append("intercept")
    return HyperModel("group", pg, np.arange(len(hyper_names)), tuple(hyper_names),
                      tuple(hyper_names))
