r"""Sparse linear SVMs with the smoothed elastic-net penalty of González Vallejo (2024).

* :class:`ElasticNetSVC` -- the lower level alone, with given L1 weights;
* :class:`BilevelSVC` -- the same model whose L1 weights (one scalar, one per feature or
  one per group) are *learned* by BiSVM L-BFGS on a validation criterion, with
  importance scores.

Both minimise, for labels :math:`y_i \in \{-1, +1\}` and :math:`w = (w_{1..d}, b)`,

.. math::
    E(w) = \frac1n\sum_i \mu\log\big(1 + e^{(1 - y_i(x_i^\top w_{1..d} + b))/\mu}\big)
         + \frac{\alpha}{2}\|w\|^2 + \sum_k \beta_k\big(\sqrt{\gamma^2 + \|w_k\|^2}-\gamma\big)

on standardised features with the bias unpenalised (``standardize=True``, as glmnet;
``standardize=False`` penalises the columns as they are and, like the thesis, the bias).
Multiclass targets are handled one-vs-rest (beyond the thesis).

Reference: C. L. González Vallejo, "Selección de variables a través de máquinas de
soporte vectorial dispersas: un enfoque de optimización binivel", master's thesis,
Escuela Politécnica Nacional, Quito, 2024.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ..selection.bilevel import make_hyper_model, resolve_solver
from ..selection.bilevel_fit import feature_groups
from ..selection.importance import support_mask
from ._constraints import positive
from ._docs import method_doc
from ._sample_weight import checked_sample_weight
from ._verbose import print_solve
from .bilevel_svc import BilevelSVC
from .smoothed_base import SmoothedSVMBase

__all__ = ["ElasticNetSVC", "BilevelSVC"]


class ElasticNetSVC(SmoothedSVMBase):
    r"""Smoothed elastic-net (L2L1) SVM with fixed L1 weights.

    For labels :math:`y_i = \pm1` and :math:`w = (w_{1..d}, b)` it minimises

    .. math::
        E(w) = \frac1n\sum_i \mu\log\big(1 + e^{(1 - y_i(x_i^\top w_{1..d} + b))/\mu}\big)
             + \frac{\alpha}{2}\|w\|^2
             + \sum_k \beta_k\big(\sqrt{\gamma^2 + \|w_k\|^2}-\gamma\big),

    the softplus-smoothed hinge with a ridge term and a Pseudo-Huber smoothed (group) L1
    penalty of weights β (González Vallejo 2024). Smoothing both makes :math:`E`
    twice differentiable, so Newton's method solves it and the bilevel learner
    :class:`~bisvm.BilevelSVC` can differentiate its solution with respect to β.
    The features are standardised inside, with the bias unpenalised, as glmnet does
    (Friedman, Hastie & Tibshirani 2010); multiclass targets are fitted one-vs-rest.
    X may be dense or scipy.sparse (CSR/CSC); sparse input is never densified.

    Parameters
    ----------
    penalty_weight : float or array-like
        The thesis's β: a scalar for every coefficient, one weight per coefficient
        (``feature_groups=None``; length ``n_features``, plus one for the intercept, last,
        when it is penalised) or one per group (plus one for a penalised intercept). With
        ``standardize=True`` (the default) β weighs the coefficients of standardised
        features, so the same β means a different model than on raw columns; pass
        ``standardize=False`` for the meaning on the columns as given.
    feature_groups : dict of str -> list, or list of lists, optional
        Feature groups of the group penalty :math:`\sum_k\beta_k\bar H_\gamma(w_k)`:
        column indices, or column names when X is a DataFrame.
    l2_penalty : float, default=0.01
        The thesis's α.
    hinge_smoothing : float, default=0.25
        The thesis's μ (softplus hinge :math:`\mu\log(1+e^{u/\mu})`).
    l1_smoothing : float, default=0.01
        The thesis's γ (Pseudo-Huber :math:`\sqrt{\gamma^2+w^2}-\gamma`). ``0`` is the
        exact weighted (group) L1 penalty :math:`\sum_k\beta_k\|w_k\|_2` (beyond the
        thesis), solved by a working-set proximal Newton method with exact zeros
        (:func:`~bisvm.solvers.primal.exact_l1.solve_exact_l1`; ``solver_`` is then
        ``"exact_l1"`` and ``tol`` bounds the KKT violation).
    penalize_intercept : bool or "auto", default="auto"
        ``"auto"``: only when ``standardize=False`` (True needs ``standardize=False``).
    solver : {"auto", "newton", "woodbury", "cg", "lbfgs"}, default="auto"
        Lower-level solver: Newton on the dense d × d Hessian (``"newton"``), Newton
        with the step solved in the n × n sample space (``"woodbury"``, d > n),
        truncated Newton with preconditioned CG on Hessian-vector products (``"cg"``,
        large sparse data), the thesis's L-BFGS, or ``"auto"``: chosen by the shape and
        sparsity of X (:func:`bisvm.selection.bilevel.resolve_solver`); the choice is in
        ``solver_``.
    tol : float, default=1e-8
        Gradient-norm tolerance.
    max_iter : int, default=500
        Cap on the lower-level solver's iterations.
    verbose : int, default=0
        Print each solver iteration and a summary per binary problem to stdout.
    standardize : bool, default=True
        Penalise the coefficients of standardised features (weighted by
        ``sample_weight``), with the intercept unpenalised, and report ``coef_`` and
        ``intercept_`` in the original units (Friedman, Hastie & Tibshirani 2010).
    support_threshold : float, default=0.01
        The thesis's ε: ``support_`` holds the features with :math:`|w_j| > \varepsilon`
        (standardised units with ``standardize=True``; any nonzero in the exact L1 mode).
    groups : deprecated
        The former name of ``feature_groups`` (one release, with a ``FutureWarning``).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights in the original units of the features.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts, in the original units.
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_iter_ : ndarray of int
        Solver iterations per binary problem.
    convergence_ : list of ConvergenceRecord
        Objective, gradient norm and seconds per solver iteration, one record per binary
        problem.
    solver_ : str
        The lower-level solver used (``solver``, or what ``"auto"`` chose).
    support_ : ndarray of bool, shape (n_features,)
        Selected features (in any class); ``transform`` keeps them. The smoothed penalty
        leaves the others small but nonzero, so ``SelectFromModel`` needs
        ``importance_getter="support_"`` to keep exactly these.

    See Also
    --------
    bisvm.BilevelSVC : The same model with its L1 weights learned.

    References
    ----------
    C. L. González Vallejo, "Selección de variables a través de máquinas de soporte
    vectorial dispersas: un enfoque de optimización binivel", master's thesis, Escuela
    Politécnica Nacional, Quito, 2024.

    J. Friedman, T. Hastie and R. Tibshirani, "Regularization paths for generalized
    linear models via coordinate descent", Journal of Statistical Software 33, 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import ElasticNetSVC
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(100, 6))
    >>> y = np.where(X[:, 0] - X[:, 1] > 0, 1, -1)
    >>> clf = ElasticNetSVC(penalty_weight=0.1).fit(X, y)
    >>> clf.get_support(indices=True)
    array([0, 1])
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        **SmoothedSVMBase._lower_constraints,
        # a scalar or one weight per penalty group: checked against the data in fit
        "penalty_weight": "no_validation",
        "l2_penalty": [positive()],
        "support_threshold": [positive()],
        # the lower-level solver's own check: a finite number > 0, True counted as 1
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, penalty_weight=0.1, *, feature_groups=None, l2_penalty=0.01,
                 hinge_smoothing=0.25, l1_smoothing=0.01, penalize_intercept="auto",
                 solver="auto", tol=1e-8, max_iter=500, verbose=0, standardize=True,
                 support_threshold=0.01, groups=None):
        self.penalty_weight = penalty_weight
        self.feature_groups = feature_groups
        self.groups = groups
        self.standardize = standardize
        self.support_threshold = support_threshold
        self.l2_penalty = l2_penalty
        self.hinge_smoothing = hinge_smoothing
        self.l1_smoothing = l1_smoothing
        self.penalize_intercept = penalize_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    @method_doc(
        "Fit one binary problem, or one per class (one-vs-rest).",
        "X_train_sparse",
        "y_labels",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights of the loss terms,
            :math:`\frac{1}{\sum_i s_i}\sum_i s_i\ell_i`, and of the standardisation: an
            integer weight k fits the same model as k copies of the row, and a zero
            weight the model without it.""",
        returns=r"""ElasticNetSVC
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y = self._validate_xy(X, y)
        lower = replace(self._lower_level(), max_iter=int(self.max_iter))
        sw = checked_sample_weight(sample_weight, y, self.classes_)
        d = X.shape[1]
        groups = feature_groups(self._feature_groups())
        hyper = make_hyper_model("group" if groups is not None else "vector", d,
                                 groups=groups, penalize_intercept=lower.penalize_intercept)
        beta = np.asarray(self.penalty_weight, dtype=float)
        if beta.ndim == 0:
            beta = np.full(hyper.n_hyper, float(beta))
        if beta.shape != (hyper.n_hyper,):
            raise ValueError(
                f"penalty_weight must be a scalar or have {hyper.n_hyper} entries "
                f"({', '.join(hyper.names)}), got shape {beta.shape}"
            )
        if not np.all(np.isfinite(beta)) or np.any(beta < 0):
            raise ValueError("penalty_weight must be finite and non-negative")
        Xa, cs = self._design(X, sw)
        self.solver_ = "exact_l1" if lower.exact else resolve_solver(self.solver, Xa)
        lower = replace(lower, solver=lower.solver if lower.exact else self.solver_)
        coefs, iters, records = [], [], []
        for yb, k in self._binary_targets(y):
            P = lower.problem(Xa, yb, hyper.penalty_groups, hyper.weights(beta),
                              sample_weight=sw)
            r = lower.solve(P, tol=self.tol)
            if self.verbose:  # binary: class 1 against class 0, else one against the rest
                rest = self.classes_[0] if self.classes_.size == 2 else "rest"
                print_solve(f"ElasticNetSVC ({self.solver_}) {self.classes_[k]} vs {rest}", r)
            coefs.append(r.coef)
            iters.append(r.n_iter)
            records.append(r.record)
        thr = 0.0 if lower.exact else float(self.support_threshold)
        self.support_ = np.any([support_mask(c, hyper, thr)[:-1] for c in coefs], axis=0) \
            if thr > 0 else np.any(np.array(coefs)[:, :-1] != 0, axis=0)
        self._store(coefs, [cs] * len(coefs))
        self.n_iter_ = np.array(iters)
        self.convergence_ = records
        return self
