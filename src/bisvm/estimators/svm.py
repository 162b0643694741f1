r"""Kernel support vector machines trained by SMO: :class:`SVC` and :class:`SVR`.

C-SVC (Cortes & Vapnik 1995) solves, per binary machine with labels :math:`y_i = \pm1`
and per-sample costs :math:`C_i = C \cdot c_{y_i} \cdot s_i`,

.. math::
    \min_\alpha \tfrac12\sum_{ij}\alpha_i\alpha_j y_i y_j k(x_i, x_j) - \sum_i\alpha_i
    \quad\text{s.t.}\quad \sum_i y_i\alpha_i = 0,\ 0 \le \alpha_i \le C_i,

the dual of :math:`\min \tfrac12\lVert w\rVert^2 + \sum_i C_i\max(0, 1 - y_if(x_i))`.
With ``loss="squared_hinge"`` the per-sample loss is :math:`\tfrac12\max(0, 1-y_if)^2`
(the L2-SVM): no upper bound and :math:`k + \delta_{ij}/C_i`. ``C=np.inf`` with the
hinge loss is the hard-margin SVM.

ε-SVR (Smola & Schölkopf 2004, "A tutorial on support vector regression") minimises
:math:`\tfrac12\lVert w\rVert^2 + \sum_i C_i\max(0, |y_i - f(x_i)| - \varepsilon)`.

Both are solved by :func:`bisvm.solvers.dual.smo.solve_smo`; the decision function is
:math:`f(x) = \sum_{i \in SV}` ``dual_coef_`` :math:`_i\,k(x_i, x)` ``+ intercept_``, with
the same attribute layout and sign conventions as scikit-learn's LIBSVM wrappers
(Chang & Lin 2011, "LIBSVM: a library for support vector machines").
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import StratifiedKFold
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from bisvm.estimators._calibration import couple, fit_platt, sigmoid_prob
from bisvm.estimators._constraints import positive
from bisvm.estimators._docs import fill_parameters, method_doc
from bisvm.estimators._multiclass import (
    class_pairs,
    dual_layout,
    ovr_aggregate,
    pair_decisions,
    votes,
)
from bisvm.estimators._smo_base import BaseSMO, positive_weight_rows, warm_alpha
from bisvm.estimators.svr import SVR
from bisvm.solvers.dual.smo import csvc_dual

__all__ = ["SVC", "SVR"]


class SVC(ClassifierMixin, BaseSMO):
    __doc__ = fill_parameters(r"""C-support vector classifier trained by SMO.

    Per binary machine with labels :math:`y_i = \pm1` and per-sample costs
    :math:`C_i = C\,c_{y_i}\,s_i` (``C`` times the class weight times the sample weight),
    the classifier :math:`f(x) = \sum_i \alpha_i y_i k(x_i, x) + b` solves the dual

    .. math::
        \min_\alpha \tfrac12\sum_{ij}\alpha_i\alpha_j y_i y_j k(x_i, x_j) - \sum_i\alpha_i
        \quad\text{s.t.}\quad \sum_i y_i\alpha_i = 0,\ 0 \le \alpha_i \le C_i

    of :math:`\min_{w,b} \tfrac12\lVert w\rVert^2 + \sum_i C_i\max(0, 1 - y_if(x_i))`
    (Cortes & Vapnik 1995). SMO (Platt 1998) with the second-order working-set selection
    of Fan, Chen & Lin (2005) solves it as LIBSVM does (Chang & Lin 2011); the fitted
    attributes have the layout and signs of :class:`sklearn.svm.SVC`, so that the two
    are interchangeable. With ``loss="squared_hinge"`` the per-sample loss is
    :math:`\tfrac12\max(0, 1-y_if)^2` (the L2-SVM): the box has no upper bound and the
    kernel becomes :math:`k + \delta_{ij}/C_i`. ``C=np.inf`` with the hinge loss is the
    hard-margin SVM.

    Parameters
    ----------
    C : float > 0 or inf, default=1.0
        Cost of a margin violation; ``np.inf`` with ``loss="hinge"`` gives the hard margin.
    {{kernel}}
    {{degree}}
    {{gamma}}
    {{coef0}}
    {{shrinking}}
    probability : bool, default=False
        Fit Platt sigmoids (Platt 1999) on 5-fold cross-validated decision values, for
        :meth:`predict_proba`. When True, :meth:`predict` returns the arg-max of
        :meth:`predict_proba`, so that the two agree.
    {{tol}}
    {{cache_size}}
    class_weight : dict, "balanced" or None, default=None
        Multiplies ``C`` per class; ``"balanced"`` is :math:`n / (K n_c)`.
    {{max_iter}}
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        Shape of :meth:`decision_function` for ``multiclass="ovo"``: the pairwise values
        (``"ovo"``) or scikit-learn's vote-plus-confidence aggregate (``"ovr"``).
    break_ties : bool, default=False
        With ``decision_function_shape="ovr"`` and more than two classes, break voting
        ties by the aggregate decision value instead of the lowest class index.
    random_state : int, RandomState or None, default=None
        Seeds the folds of the probability calibration.
    loss : {"hinge", "squared_hinge"}, default="hinge"
        The per-sample loss of the margin: LIBSVM's hinge or the squared hinge.
    multiclass : {"ovo", "ovr"}, default="ovo"
        ``"ovo"`` trains one machine per pair of classes (LIBSVM); ``"ovr"`` trains one
        machine per class against all others and predicts the largest decision value.
    {{selection}}
    warm_start : bool, default=False
        Start SMO from the previous fit's dual solution (scaled into the new box), e.g.
        along a path of ``C`` values on the same data.
    {{verbose}}
    {{n_jobs}}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training rows.
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors (sparse after a fit on sparse ``X``; empty for a
        precomputed kernel).
    n_support_ : ndarray of shape (n_classes,)
        Support vectors per class.
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
        :math:`y_i\alpha_i` of each machine, in LIBSVM's layout; one row per class for
        ``multiclass="ovr"``.
    intercept_ : ndarray of shape (n_machines,)
        The intercept :math:`b` of each machine.
    coef_ : ndarray of shape (n_machines, n_features)
        Primal weights, for the linear kernel only.
    n_iter_ : ndarray of shape (n_machines,)
        SMO iterations per machine.
    probA_, probB_ : ndarray of shape (n_machines,)
        Platt's sigmoid parameters (empty when ``probability=False``).
    fit_status_ : int
        0 when every machine converged, 1 otherwise.
    shape_fit_ : tuple of int
        Shape of the training ``X``.

    See Also
    --------
    bisvm.NuSVC : The same machine parametrised by the fraction of support vectors.
    bisvm.AutoSVC : A kernel SVM that learns ``C`` and the kernel widths.

    References
    ----------
    C. Cortes and V. Vapnik, "Support-vector networks", Machine Learning 20, 1995.

    J. C. Platt, "Fast training of support vector machines using sequential minimal
    optimization", in Advances in Kernel Methods, MIT Press, 1998.

    R.-E. Fan, P.-H. Chen and C.-J. Lin, "Working set selection using second order
    information for training support vector machines", JMLR 6, 2005.

    C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines", ACM
    TIST 2(3), 2011.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from bisvm import SVC
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SVC(C=1.0, kernel="rbf").fit(X, y)
    >>> clf.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> clf.n_support_
    array([ 7, 29, 24]...)
    >>> round(clf.score(X, y), 3)
    0.973
    """)

    # private fitted state that model files must carry (bisvm.persistence)
    _persist_attrs = ("_kernel", "_gamma", "_train_shape", "_alphas", "_pairs")

    _parameter_constraints: dict = {
        **BaseSMO._parameter_constraints,
        # inf (the hard margin) with the hinge loss only: checked in _check_combinations
        "C": [positive(allow_inf=True)],
        "probability": "no_validation",  # read as a truth value
        "class_weight": "no_validation",  # checked by compute_class_weight in fit
        "decision_function_shape": [StrOptions({"ovo", "ovr"})],
        "break_ties": "no_validation",  # read as a truth value
        # read by the probability calibration only, through np.random.RandomState
        "random_state": "no_validation",
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "multiclass": [StrOptions({"ovo", "ovr"})],
        "warm_start": "no_validation",  # read as a truth value
    }

    def __init__(
        self,
        C=1.0,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        shrinking=True,
        probability=False,
        tol=1e-3,
        cache_size=200,
        class_weight=None,
        max_iter=-1,
        decision_function_shape="ovr",
        break_ties=False,
        random_state=None,
        loss="hinge",
        multiclass="ovo",
        selection="second_order",
        warm_start=False,
        verbose=False,
        n_jobs=None,
    ):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.loss = loss
        self.multiclass = multiclass
        self.selection = selection
        self.warm_start = warm_start
        self.verbose = verbose
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ fitting
    def _check_combinations(self):
        """Refuse the combinations of parameter values that the constraints, one
        parameter each, cannot express."""
        if self.loss != "hinge" and np.isinf(self.C):
            raise ValueError(f"C must be finite with loss={self.loss!r} (C=inf, the hard "
                             f"margin, needs the hinge loss), got {self.C!r}")
        if self.multiclass == "ovr" and self.decision_function_shape == "ovo":
            raise ValueError("decision_function_shape='ovo' requires multiclass='ovo'")
        if self.probability and not np.isfinite(float(self.C)):
            raise ValueError("probability=True needs a finite C")

    @method_doc(
        r"""Fit the machine of each pair of classes (or each class for ``"ovr"``).""",
        "X_train_gram_sparse",
        "y_labels",
        r"""sample_weight : array-like of shape (n_samples,), default=None
            Finite weights multiplying ``C`` per sample. Samples of weight zero or below
            are dropped, as LIBSVM drops them (they cannot be support vectors).""",
        returns=r"""SVC
            The fitted estimator.""")
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        self._check_combinations()
        X, y = self._validate_X_train(X, y)
        if not (y.ndim == 1 and y.dtype.kind in "biu"):
            # integer labels are always "binary" or "multiclass" (accepted): the check,
            # about 0.1 ms, is left out for them (a tenth of a small fit)
            check_classification_targets(y)
        classes, y_enc = np.unique(y, return_inverse=True)
        name = type(self).__name__
        if classes.size < 2:
            raise ValueError(
                f"{name} needs samples of at least 2 classes; got 1 class ({classes[0]!r})"
            )
        sw = self._sample_weight(sample_weight, X)
        positive_weight_rows(sw)
        if self.class_weight is None:  # scikit-learn's uniform weights, without its checks
            cw = np.ones(classes.size)
        else:
            cw = compute_class_weight(self.class_weight, classes=classes, y=y)
        if np.any(cw <= 0) or not np.all(np.isfinite(cw)):
            raise ValueError("class_weight must give positive finite weights")
        weights = cw[y_enc] * sw
        kept = [c for c in range(classes.size) if np.any(weights[y_enc == c] > 0)]
        if len(kept) < 2:
            raise ValueError(
                "Invalid input - all samples with positive weights belong to the same class"
                f" ({classes[kept[0]]!r})"
            )
        if len(kept) < classes.size:
            lost = [classes[c] for c in range(classes.size) if c not in kept]
            raise ValueError(f"sample_weight: class(es) {lost!r} have no sample of positive "
                             "weight")
        self._setup_kernel(X)
        warm = getattr(self, "_alphas", None) if getattr(self, "warm_start", False) else None
        if warm is not None and getattr(self, "_train_shape", None) != X.shape:
            warm = None
        self.classes_ = classes
        self._train_shape = X.shape
        k = classes.size
        pairs = class_pairs(k, getattr(self, "multiclass", "ovo") == "ovo")
        machines = []
        alphas = []
        for m, (a, b) in enumerate(pairs):
            if b is None:
                idx = np.flatnonzero(weights > 0)
                yb = np.where(y_enc[idx] == a, 1.0, -1.0)
            else:
                idx = np.flatnonzero(((y_enc == a) | (y_enc == b)) & (weights > 0))
                yb = np.where(y_enc[idx] == a, 1.0, -1.0)
            label = f" {classes[a]} vs {'rest' if b is None else classes[b]}"
            machine, alpha = self._fit_binary(X, idx, yb, weights[idx], warm, m, label)
            machines.append(machine)
            alphas.append(alpha)
        self._alphas = alphas
        self._assemble(machines, y_enc, pairs, X)
        if self.probability:
            self._fit_probability(X, y_enc, weights, pairs)
        else:
            self.probA_ = np.empty(0)
            self.probB_ = np.empty(0)
        self._release_solver_view()
        return self

    def _binary_problem(self, X, idx, yb, w):
        return csvc_dual(
            self._sub_problem_data(X, idx),
            yb,
            self._solve_kernel,
            float(self.C),
            weights=w,
            loss=self.loss,
        )

    def _scale(self, res):
        """``(scale, rho)`` of a binary machine: decision values are
        ``scale * sum_t alpha_t y_t k(x_t, x) - rho``."""
        return 1.0, -res.intercept

    def _fit_binary(self, X, idx, yb, w, warm, m, label=""):
        problem = self._binary_problem(X, idx, yb, w)
        alpha0 = None
        if warm is not None and m < len(warm):
            alpha0 = warm_alpha(warm[m], problem.upper)
        res = self._solve(problem, alpha0, label)
        scale, rho = self._scale(res)
        sv = res.dual_coef > 0
        machine = (idx[sv], scale * yb[sv] * res.dual_coef[sv], rho, res.n_iter, res.converged)
        return machine, res.dual_coef

    def _assemble(self, machines, y_enc, pairs, X):
        """scikit-learn/LIBSVM attribute layout from the per-machine solutions."""
        k = self.classes_.size
        support, self.n_support_, dual, intercept = dual_layout(machines, y_enc, pairs, k)
        self.support_ = support.astype(np.int32)
        if k == 2:  # scikit-learn's binary convention: positive values mean classes_[1]
            dual, intercept = -dual, -intercept
        self.intercept_ = intercept
        self.n_iter_ = np.array([m[3] for m in machines], dtype=np.int32)
        self.fit_status_ = int(not all(m[4] for m in machines))
        self._pairs = pairs
        self.support_vectors_ = self._support_vectors(X, support)
        self._store_dual(dual)

    # probability calibration -------------------------------------------------
    def _fit_probability(self, X, y_enc, weights, pairs):
        rng = np.random.RandomState(
            self.random_state if not isinstance(self.random_state, np.random.RandomState) else None
        )
        if isinstance(self.random_state, np.random.RandomState):
            rng = self.random_state
        A = np.zeros(len(pairs))
        B = np.zeros(len(pairs))
        for m, (a, b) in enumerate(pairs):
            if b is None:
                idx = np.flatnonzero(weights > 0)
            else:
                idx = np.flatnonzero(((y_enc == a) | (y_enc == b)) & (weights > 0))
            yb = np.where(y_enc[idx] == a, 1.0, -1.0)
            dec = np.zeros(idx.size)
            n_min = int(min(np.sum(yb > 0), np.sum(yb < 0)))
            n_splits = max(2, min(5, n_min))
            if n_min < 2:
                dec[:] = yb  # too few samples to cross-validate: use the labels
            else:
                folds = StratifiedKFold(n_splits, shuffle=True, random_state=rng.randint(2**31))
                for tr, te in folds.split(np.zeros(idx.size), yb):
                    sub = idx[tr]
                    problem = self._binary_problem(X, sub, yb[tr], weights[sub])
                    res = self._solve(problem, None, " (calibration fold)")
                    scale, rho = self._scale(res)
                    Kte = self._kernel_block_train(X, idx[te], sub)
                    dec[te] = scale * (Kte @ (yb[tr] * res.dual_coef)) - rho
            A[m], B[m] = fit_platt(dec, (yb > 0).astype(int), weights[idx])
        # A, B act on the LIBSVM-oriented machine value (positive = first class of the
        # pair), as in scikit-learn's probA_/probB_
        self.probA_ = A
        self.probB_ = B

    def _kernel_block_train(self, X, rows, cols):
        if self.kernel == "precomputed":
            return X[np.ix_(rows, cols)]
        return self._kernel(X[rows], X[cols])

    # ------------------------------------------------------------------ prediction
    def _pair_decisions(self, Ksv):
        """Raw per-machine decision values (LIBSVM orientation: positive = first class)."""
        dual, intercept = self._dual_dense(), self.intercept_
        if self.classes_.size == 2:
            dual, intercept = -dual, -intercept
        return pair_decisions(Ksv, dual, intercept, self.n_support_, self._pairs)

    @method_doc(
        "Evaluate the decision function of each machine.",
        "X_kernel_sparse",
        returns=r"""ndarray of shape (n_samples,), (n_samples, n_classes) or (n_samples, n_pairs)
            For two classes, :math:`f(x)` (positive means ``classes_[1]``); else the
            one-vs-rest values or, with ``decision_function_shape="ovo"``, the pairwise
            values.""")
    def decision_function(self, X):
        raw = self._pair_decisions(self._kernel_to_sv(X))
        k = self.classes_.size
        if k == 2:
            return -raw[:, 0]
        if self._pairs[0][1] is None or self.decision_function_shape == "ovo":
            return raw
        return ovr_aggregate(raw, self._pairs, k)

    @method_doc(
        "Predict the class of each sample.",
        "X_kernel_sparse",
        returns="labels",
        extended=r"""Pairwise votes for ``multiclass="ovo"``, the largest decision value for
        ``"ovr"``, the arg-max of :meth:`predict_proba` when ``probability=True``.
        ``break_ties=True`` with ``decision_function_shape="ovo"`` is refused before
        ``X`` is read, as scikit-learn does: ties are broken by the ``"ovr"`` aggregate,
        which that shape does not compute.""")
    def predict(self, X):
        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError(
                "break_ties must be False when decision_function_shape is 'ovo'"
            )
        if self.probability:
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        raw = self._pair_decisions(self._kernel_to_sv(X))
        k = self.classes_.size
        if k == 2:
            return self.classes_[(raw[:, 0] < 0).astype(int)]
        if self._pairs[0][1] is None:
            return self.classes_[np.argmax(raw, axis=1)]
        if self.break_ties and self.decision_function_shape == "ovr":
            return self.classes_[np.argmax(ovr_aggregate(raw, self._pairs, k), axis=1)]
        counts, _ = votes(raw, self._pairs, k)
        return self.classes_[np.argmax(counts, axis=1)]

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    def _check_fitted_proba(self):
        check_is_fitted(self)
        if np.size(self.probA_) == 0:
            raise NotFittedError(
                "predict_proba is not available when fitted with probability=False; "
                "refit with probability=True"
            )

    @available_if(_check_proba)
    @method_doc(
        "Estimate the class probabilities (``probability=True`` only).",
        "X_kernel_sparse",
        returns="proba",
        extended=r"""Platt's sigmoid :math:`1/(1 + e^{A f + B})` on each machine's decision value,
        then the pairwise coupling of Wu, Lin & Weng (2004) for ``"ovo"`` or a
        normalisation to sum one for ``"ovr"``.""")
    def predict_proba(self, X):
        self._check_fitted_proba()
        raw = self._pair_decisions(self._kernel_to_sv(X))
        k = self.classes_.size
        A, B = self.probA_, self.probB_
        if k == 2:
            p0 = sigmoid_prob(raw[:, 0], A[0], B[0])
            return np.column_stack([p0, 1.0 - p0])
        if self._pairs[0][1] is None:
            P = sigmoid_prob(raw, A[None, :], B[None, :])
            P = np.clip(P, 1e-7, 1 - 1e-7)
            return P / P.sum(axis=1, keepdims=True)
        R = np.clip(sigmoid_prob(raw, A[None, :], B[None, :]), 1e-7, 1 - 1e-7)
        out = np.empty((raw.shape[0], k))
        for n in range(raw.shape[0]):
            r = np.zeros((k, k))
            for m, (a, b) in enumerate(self._pairs):
                r[a, b] = R[n, m]
                r[b, a] = 1.0 - R[n, m]
            out[n] = couple(r)
        return out

    @available_if(_check_proba)
    @method_doc(
        "Estimate the logarithm of the class probabilities (``probability=True`` only).",
        "X_kernel_sparse",
        returns="log_proba")
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    @property
    def coef_(self):
        """Primal weights ``dual @ support_vectors_`` per machine (linear kernel only)."""
        check_is_fitted(self)
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        k = self.classes_.size
        dual = self._dual_dense()
        if k == 2 or self._pairs[0][1] is None:
            return self._coef_from_dual(dual)
        # one row per pair: the pair's coefficients over its two classes' support vectors
        starts = np.concatenate([[0], np.cumsum(self.n_support_)])
        pair_dual = np.zeros((len(self._pairs), dual.shape[1]))
        for m, (a, b) in enumerate(self._pairs):
            sa = slice(starts[a], starts[a + 1])
            sb = slice(starts[b], starts[b + 1])
            pair_dual[m, sa] = dual[b - 1, sa]
            pair_dual[m, sb] = dual[a, sb]
        return self._coef_from_dual(pair_dual)
