r"""Rosset–Zhu path tracking for an L1 penalty on a piecewise-quadratic, differentiable loss:
the whole solution path of the L1-regularised L2-SVM, linear and with a non-linear kernel
(Rosset & Zhu 2007, "Piecewise linear regularized solution paths").

.. math::
    \min_{\beta, b}\ f_\lambda(\beta, b) = \lambda\sum_j|\beta_j|
    + \tfrac{\alpha}{2}\,\beta^\top R\,\beta + C\sum_i \ell(z_i, t_i),\qquad
    z = Z\beta + b,\quad \lambda \ge 0,

with labels :math:`t_i = \pm 1`, an unpenalised intercept ``b`` (optional) and

* **linear case** (§6.2): :math:`R = I`, :math:`Z = X`; the coefficients are over features;
* **kernel case** (§6.3): :math:`w = \sum_i \beta_i t_i \varphi(x_i)`, so
  :math:`R = Q`, :math:`Q_{ij} = t_i t_j k(x_i, x_j)` and :math:`Z = K\,\mathrm{diag}(t)`,
  :math:`z_i = y(x_i) = \sum_j \beta_j t_j k(x_i, x_j)`; the coefficients are over training
  samples and each vertex of the path is a sparse kernel expansion (the "sparse
  approximations in between" of §6.3).

The loss ``ℓ`` is the squared hinge :math:`\max(0, 1 - t z)^2` (scikit-learn's
``squared_hinge``; a factor ½ in front of the loss would only rescale ``C``) or the
modified Huber loss (``"modified_huber"``, scikit-learn's convention: :math:`\max(0, 1 -
tz)^2` for :math:`tz \ge -1`, :math:`-4tz` below; Zhang 2004, "Solving large scale
linear prediction problems using stochastic gradient descent algorithms"). Both are
piecewise quadratic in the margin :math:`m_i = t_i z_i` with knots at ``1`` (and
``-1``) and continuous derivative, so within a fixed assignment of samples to pieces
(a *zone*) :math:`\partial\ell/\partial z_i = D_i z_i + e_i` with :math:`D_i \in \{0, 2\}`.

**Optimality** (Rosset & Zhu 2007): with :math:`g = \nabla_\beta(\tfrac\alpha2
\beta^\top R\beta + C\sum\ell)`, active set :math:`A = \{j: \beta_j \ne 0\}`,

.. math::
    g_j + \lambda\,\mathrm{sgn}(\beta_j) = 0\ (j \in A),\qquad |g_j| \le \lambda\
    (j \notin A),\qquad C\sum_i \partial\ell/\partial z_i = 0 \ (\text{intercept}).

Inside a zone these are linear in :math:`(\beta_A, b)`:
:math:`M\,[b; \beta_A] = [0; -\lambda s_A] - C\,\tilde Z_A^\top e` with
:math:`M = \alpha \tilde R_{AA} + C\,\tilde Z_A^\top D \tilde Z_A`,
:math:`\tilde Z_A = [\mathbf 1, Z_A]`. Hence :math:`\beta(\lambda)` is piecewise linear and
moves, as λ decreases, along :math:`\gamma = M^{-1}[0; s_A]`.

**Algorithm**: start at :math:`\lambda_{\max} = \max_j |g_j(0)|` with β = 0 (the
intercept at its optimum for β = 0, in closed form :math:`b_0 = (n_+ - n_-)/n`), ``A`` =
the argmax; follow γ until the first of

* ``"enter"`` (:math:`d_1`): an inactive :math:`|g_j|` reaches λ — ``j`` joins ``A`` with
  sign :math:`-\mathrm{sgn}(g_j)`;
* ``"leave"`` (:math:`d_2`): an active :math:`\beta_j` reaches 0 — ``j`` leaves ``A``;
* ``"knot"`` (:math:`d_3`): a margin :math:`m_i` reaches a knot — sample ``i`` changes
  piece (:math:`M` changes by a rank-one term :math:`\pm 2C\tilde z_i\tilde z_i^\top`);

update and repeat down to ``lambda_min``. Simultaneous events (within a relative
tolerance) are processed together; a sample that a knot event moved to the other piece is
moved back if the new direction sends it the wrong way (the directional derivative of the
solution map is unique, so one of the two pieces is always consistent).

**No drift.** At every vertex the optimality system of the new zone is re-solved for
:math:`(b, \beta_A)` at the vertex's λ (before entering coefficients join: they are exactly
0 there) and the gradient is recomputed from scratch, so rounding errors of the steps do
not accumulate along the path; the re-solved point is kept only if it keeps every sign
and every sample in its piece. The KKT residual at the breakpoints is at rounding level
(:math:`\sim 10^{-15}\lambda_{\max}` in the tests) while :math:`M` is well conditioned;
it grows like :math:`\epsilon\,\mathrm{cond}(M)`, which for RBF kernels towards λ = 0
(many active basis functions, :math:`\mathrm{cond}(M) \sim \mathrm{cond}(K)^2`) reaches
about :math:`10^{-8}\lambda_{\max}` — stop earlier with ``lambda_min_ratio`` there.

**Cost per event.** :math:`M^{-1}` is kept explicitly and updated in
:math:`O(|A|^2)` (bordering for ``enter``, the Schur complement for ``leave``,
Sherman–Morrison for ``knot``); every solve is refined twice against :math:`M` and checked
by its residual, and :math:`M^{-1}` is rebuilt from :math:`M` (kept alongside,
:math:`O(|A|^3)` by a symmetric eigendecomposition) only when the check fails or
:math:`M` is singular. The gradient and its direction need two products with ``Z``:
:math:`O(n\,d)` (linear) or :math:`O(n^2)` (kernel) per event, plus :math:`O(n|A|)` with
the active columns (kept contiguous in a buffer). No :math:`O(n^3)` work per event unless
:math:`M` is singular. Events number a few times ``n + p`` in practice (most are knot
crossings), so a whole path costs about :math:`O((n+p)\,n\,d)` (linear) or
:math:`O(n^3)` (kernel).

**Singular reduced systems.** :math:`M` is positive definite when :math:`\alpha > 0` and
:math:`R_{AA}` is (linear case; kernel case with a strictly positive-definite kernel such as
RBF on distinct points) and at least one sample lies in the quadratic piece (for the
intercept row). It is singular when (a) no sample is in the quadratic piece (zero loss:
the intercept is then undetermined on an interval; it is held fixed, which keeps every
optimality condition), (b) the kernel matrix restricted to ``A`` is singular (linear or
polynomial kernel with :math:`|A|` above its rank, duplicated samples) and the loss does
not make the block definite, or (c) :math:`\alpha = 0` with more active coefficients than
samples in the quadratic piece. Then the minimiser is not unique; the minimum-norm
direction (pseudo-inverse by a symmetric eigendecomposition, eigenvalues below
:math:`10^{-12}\max` dropped) is followed, which keeps the optimality conditions — the path is
then one optimal path among several.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ...kernels import check_precomputed, make_kernel
from .._record import check_real
from ..base import warn_cap
from ._rz_events import apply_events, knot_consistency, next_events
from ._rz_tracker import LOSSES, RZTracker, loss_value_derivative
from .base import PathResult

__all__ = ["L1SqHingePath", "l1_sqhinge_path", "l1_sqhinge_objective",
           "loss_value_derivative"]


def l1_sqhinge_objective(Z, t, coef, intercept, lam, *, C=1.0, l2_penalty=1.0, R=None,
                         loss="squared_hinge"):
    r""":math:`\lambda\|\beta\|_1 + \tfrac\alpha2\beta^\top R\beta + C\sum_i\ell(z_i, t_i)`,
    :math:`z = Z\beta + b` (``R = I`` when not given; for the kernel case pass
    ``Z = K diag(t)`` and ``R = diag(t) K diag(t)``)."""
    coef = np.asarray(coef, dtype=float)
    z = np.asarray(Z) @ coef + intercept
    quad = coef @ coef if R is None else coef @ (np.asarray(R) @ coef)
    val, _ = loss_value_derivative(loss, np.asarray(t, dtype=float), z)
    return float(lam * np.abs(coef).sum() + 0.5 * l2_penalty * quad + C * val.sum())


@dataclass(frozen=True)
class L1SqHingePath(PathResult):
    r"""The exact, piecewise-linear regularisation path of the L1-regularised L2-SVM.

    :meth:`result_at` gives the solver-contract view at any λ (its ``objective`` is NaN:
    the path does not keep the data; :func:`l1_sqhinge_objective` evaluates it).

    Attributes
    ----------
    breakpoints : ndarray of shape (K,)
        :math:`\lambda_0 = \lambda_{\max} > \lambda_1 > \dots > \lambda_{K-1} =`
        ``lambda_min``: the λ of every event, the start and the end of the path.
        :math:`\beta(\lambda)` is linear between consecutive breakpoints and 0 above
        :math:`\lambda_{\max}`.
    coefs : ndarray of shape (K, p)
        ``coefs[k]`` = :math:`\beta(\lambda_k)`; ``p`` = features (linear case) or training
        samples (kernel case: the coefficient of :math:`t_j k(\cdot, x_j)`).
    intercepts : ndarray of shape (K,)
    n_active : ndarray of shape (K,)
        :math:`|A|` on the segment that starts at each breakpoint.
    events : tuple of str, length K
        What happened at each breakpoint: ``"start"``, ``"enter"``, ``"leave"``,
        ``"knot"`` (several joined by ``+`` when simultaneous), ``"end"`` or ``"cap"``.
    losses : ndarray of shape (K,)
        :math:`\sum_i\ell(z_i, t_i)` at each breakpoint.
    l1_norms : ndarray of shape (K,)
    lambda_min : float
        Where the tracking stopped (the last breakpoint).
    n_events : int
        Events processed (simultaneous ones counted once).
    loss : str
    C, l2_penalty : float
    fit_intercept : bool
    kernel : Kernel or None
        ``None`` in the linear case.
    X_fit : ndarray or None
        Training inputs (kernel case, not precomputed), for :meth:`decision_function`.
    labels : ndarray of shape (n,)
        Training labels as ±1 (kernel case), the :math:`t_j` of the expansion.
    classes : ndarray of shape (2,)
        Original labels; ``classes[1]`` is the positive class (+1).
    """

    n_active: np.ndarray
    loss: str
    C: float
    l2_penalty: float
    fit_intercept: bool
    kernel: object
    X_fit: np.ndarray | None
    labels: np.ndarray
    classes: np.ndarray

    @property
    def lambda_max(self):
        r""":math:`\lambda_{\max}`: β = 0 for every λ at or above it."""
        return float(self.breakpoints[0])

    def solution(self, lam):
        """``(coef, intercept)`` optimal at ``lam``: exact linear interpolation between the
        two breakpoints around ``lam`` (β = 0 above :math:`\\lambda_{\\max}`)."""
        if isinstance(lam, bool) or not isinstance(lam, Real) or not np.isfinite(lam):
            raise ValueError(f"lam must be a finite real number, got {lam!r}")
        lam = float(lam)
        bp = self.breakpoints
        if lam < self.lambda_min * (1 - 1e-12):
            raise ValueError(f"lam={lam} is below the end of the path {self.lambda_min}")
        if lam >= bp[0] or bp.size == 1:
            return self.coefs[0].copy(), float(self.intercepts[0])
        # bp decreasing: k with bp[k] >= lam > bp[k+1]
        k = int(np.searchsorted(-bp, -lam, side="right")) - 1
        k = min(max(k, 0), bp.size - 2)
        w = (bp[k] - lam) / (bp[k] - bp[k + 1])
        w = min(max(w, 0.0), 1.0)
        coef = (1 - w) * self.coefs[k] + w * self.coefs[k + 1]
        b = (1 - w) * self.intercepts[k] + w * self.intercepts[k + 1]
        return coef, float(b)

    def decision_function(self, X, lam):
        r"""Decision values :math:`x^\top\beta(\lambda) + b` (linear case) or
        :math:`\sum_{j \in A}\beta_j t_j k(x, x_j) + b` (kernel case: only the active
        basis functions are evaluated). For ``kernel="precomputed"`` pass
        :math:`K(X_{new}, X_{train})`."""
        coef, b = self.solution(lam)
        if self.kernel is None:
            X = np.asarray(X, dtype=float)
            if X.ndim != 2 or X.shape[1] != coef.size:
                raise ValueError(f"X must have shape (n, {coef.size}), got {X.shape}")
            if not np.all(np.isfinite(X)):
                raise ValueError("X contains NaN or infinity")
            return X @ coef + b
        nz = np.flatnonzero(coef)
        if self.kernel.name == "precomputed":
            K = check_precomputed(X, n_train=coef.size, symmetric=False)
            return K[:, nz] @ (coef[nz] * self.labels[nz]) + b
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.X_fit.shape[1]:
            raise ValueError(f"X must have shape (n, {self.X_fit.shape[1]}), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinity")
        if nz.size == 0:
            return np.full(X.shape[0], b)
        return self.kernel(X, self.X_fit[nz]) @ (coef[nz] * self.labels[nz]) + b

    def predict(self, X, lam):
        """Class labels (from :attr:`classes`) at ``lam``."""
        return np.where(self.decision_function(X, lam) >= 0, self.classes[1], self.classes[0])


def l1_sqhinge_path(X, y, *, kernel=None, gamma="scale", degree=3, coef0=0.0, C=1.0,
                    l2_penalty=1.0, loss="squared_hinge", fit_intercept=True,
                    lambda_min=None, lambda_min_ratio=None, max_events=None, tol=1e-10):
    r"""Trace the exact regularisation path of the L1-regularised squared-hinge SVM.

    The solution :math:`\lambda \mapsto (\beta(\lambda), b(\lambda))` of
    :math:`\min \tfrac\alpha2\beta^\top R\beta + C\sum_i\ell(y_i, z_i) +
    \lambda\|\beta\|_1` is piecewise linear in λ for a piecewise-quadratic,
    differentiable loss, so it is followed exactly from :math:`\lambda_{\max}` (β = 0)
    down to ``lambda_min`` event by event: a coefficient enters or leaves the active set,
    or a sample crosses a knot of the loss (Rosset & Zhu 2007, "Piecewise linear
    regularized solution paths"). The module docstring states the optimality conditions
    and the algorithm.

    Parameters
    ----------
    X : array-like of shape (n, d) or (n, n)
        Training samples, or their Gram matrix when ``kernel="precomputed"``.
    y : array-like of shape (n,)
        Two classes; the larger label (in sorted order) is the positive class (+1).
    kernel : None, {"linear", "poly", "rbf", "laplacian", "sigmoid", "precomputed"} or callable
        ``None``: the linear model (coefficients over features, :math:`R = I`).
        Otherwise the kernel expansion (coefficients over training samples,
        :math:`R = Q`); kernels as in :mod:`bisvm.kernels`. The Gram matrix must be
        positive semi-definite (checked: otherwise the problem is not convex; a sigmoid
        kernel often is not).
    gamma : float or {"scale", "auto"}
        Kernel width of the RBF, Laplacian, polynomial and sigmoid kernels
        (:func:`bisvm.kernels.make_kernel`).
    degree : int
        Degree of the polynomial kernel.
    coef0 : float
        Constant term of the polynomial and sigmoid kernels.
    C : float > 0
        Weight of the loss.
    l2_penalty : float >= 0
        The weight α of :math:`\tfrac12\beta^\top R\beta` (the elastic-net form with
        α = 1; α = 0 gives the pure L1 problem of scikit-learn's
        ``LinearSVC(penalty="l1", loss="squared_hinge")`` with ``C_sklearn = C / λ``).
    loss : {"squared_hinge", "modified_huber"}
        The squared hinge, or the modified Huber loss (the squared hinge continued
        linearly below a margin of -1).
    fit_intercept : bool
        Unpenalised intercept ``b`` (always free, no λ term).
    lambda_min : float >= 0, optional
        End of the path. Default: 0 when ``l2_penalty > 0`` (the path then ends at the
        minimiser of the unpenalised problem), else :math:`10^{-3}\lambda_{\max}`.
    lambda_min_ratio : float in (0, 1), optional
        End the path at ``lambda_min_ratio`` :math:`\lambda_{\max}` instead (exclusive
        with ``lambda_min``).
    max_events : int, optional
        Cap on events (default ``20 (n + p)``); reaching it ends the path with a
        :class:`~sklearn.exceptions.ConvergenceWarning`.
    tol : float
        Relative tolerance for simultaneous events.

    Returns
    -------
    L1SqHingePath
        The breakpoints, the solution at each (coefficients, intercept, loss, L1 norm),
        the event at each, and ``solution(lam)``, ``decision_function`` and ``predict``
        at any λ on the path (linear interpolation between breakpoints is exact).

    Raises
    ------
    ValueError
        If a parameter is out of range, ``y`` does not hold exactly two classes, or the
        Gram matrix is not positive semi-definite.
    TypeError
        If ``fit_intercept`` is not a bool.

    See Also
    --------
    bisvm.l1_svm_path : The path of the 1-norm SVM (hinge loss).

    Examples
    --------
    Versicolor against virginica: at half of :math:`\lambda_{\max}` only the petal
    length (feature 2) is in the model.

    >>> from sklearn.datasets import load_iris
    >>> from bisvm import l1_sqhinge_path
    >>> X, y = load_iris(return_X_y=True)
    >>> path = l1_sqhinge_path(X[y > 0], y[y > 0], lambda_min_ratio=0.1)
    >>> coef, intercept = path.solution(0.5 * path.lambda_max)
    >>> coef.nonzero()[0].tolist()
    [2]
    """
    C, alpha, lambda_min, ratio, tol = _check_options(
        loss, C, l2_penalty, lambda_min, lambda_min_ratio, tol, fit_intercept, max_events)
    Z, t, K, kern, X_fit, classes = _prepare_inputs(X, y, kernel, gamma, degree, coef0)
    n, p = Z.shape
    max_events = 20 * (n + p) if max_events is None else int(max_events)
    tr = RZTracker(Z, t, C=C, alpha=alpha, loss=loss, fit_intercept=fit_intercept, K=K)
    if ratio is not None:
        lambda_min = ratio * tr.lam_max
    elif lambda_min is None:
        lambda_min = 0.0 if alpha > 0 else 1e-3 * tr.lam_max
    n_events, capped = _track(tr, lambda_min, max_events, tol)
    if capped:
        warn_cap("Rosset–Zhu path tracking (l1_sqhinge_path)", max_events, tr.lam,
                 lambda_min)
    coefs = np.array(tr.coefs)
    return L1SqHingePath(
        breakpoints=np.array(tr.bps), coefs=coefs, intercepts=np.array(tr.bs),
        n_active=np.array(tr.nact), events=tuple(tr.evs), losses=np.array(tr.losses),
        l1_norms=np.abs(coefs).sum(axis=1), lambda_min=float(tr.lam), n_events=n_events,
        loss=loss, C=C, l2_penalty=alpha, fit_intercept=bool(fit_intercept), kernel=kern,
        X_fit=X_fit, labels=t if kern is not None else None, classes=classes,
    )


def _check_options(loss, C, l2_penalty, lambda_min, lambda_min_ratio, tol, fit_intercept,
                   max_events):
    """The options of :func:`l1_sqhinge_path`, checked: ``(C, alpha, lambda_min, ratio,
    tol)`` as floats (None where not given); ValueError or TypeError naming the option."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    C = check_real("C", C, positive=True)
    alpha = check_real("l2_penalty", l2_penalty)
    lambda_min = check_real("lambda_min", lambda_min, allow_none=True)
    ratio = check_real("lambda_min_ratio", lambda_min_ratio, allow_none=True)
    if ratio is not None and not 0 < ratio < 1:
        raise ValueError(f"lambda_min_ratio must be in (0, 1), got {lambda_min_ratio!r}")
    if ratio is not None and lambda_min is not None:
        raise ValueError("give lambda_min or lambda_min_ratio, not both")
    tol = check_real("tol", tol, positive=True)
    if not isinstance(fit_intercept, bool | np.bool_):
        raise TypeError(f"fit_intercept must be a bool, got {fit_intercept!r}")
    if max_events is not None and (isinstance(max_events, bool)
                                   or not isinstance(max_events, Integral) or max_events < 1):
        raise ValueError(f"max_events must be a positive integer, got {max_events!r}")
    return C, alpha, lambda_min, ratio, tol


def _check_psd(K):
    """The problem is convex only for a positive semi-definite Gram matrix (a sigmoid
    kernel or a user matrix may not be): one smallest-eigenvalue computation, O(n^3) like
    the path itself."""
    from scipy.linalg import eigh

    low = float(eigh(K, eigvals_only=True, subset_by_index=[0, 0])[0])
    top = max(float(np.abs(np.diag(K)).max()), 1e-300)
    if low < -1e-8 * K.shape[0] * top:
        raise ValueError(
            f"the kernel matrix is not positive semi-definite (smallest eigenvalue "
            f"{low:.3g}): the objective is not convex and has no path")


def _prepare_inputs(X, y, kernel, gamma, degree, coef0):
    """Checks of ``X``, ``y`` and the kernel, the Gram matrix, the ±1 labels (the
    estimator's part of :func:`l1_sqhinge_path`).

    Returns ``(Z, t, K, kern, X_fit, classes)``: ``Z = X`` and ``K = None`` in the linear
    case, ``Z = K diag(t)`` in the kernel case.
    """
    y = np.asarray(y)
    if kernel is not None and not (isinstance(kernel, str) or callable(kernel)):
        raise ValueError(f"kernel must be None, a kernel name or a callable, got {kernel!r}")
    if isinstance(kernel, str) and kernel == "precomputed":
        K = check_precomputed(X)
        kern = make_kernel("precomputed")
        X_fit = None
        n = K.shape[0]
    else:
        X = np.asarray(X, dtype=float) if not hasattr(X, "toarray") else X.toarray()
        if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
            raise ValueError(
                f"X must be a 2-D array with at least 2 rows and 1 column, got shape "
                f"{X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinity")
        n = X.shape[0]
        if kernel is not None:
            kern = make_kernel(kernel, gamma=gamma, coef0=coef0, degree=degree, X=X)
            K = kern(X)
            if not np.all(np.isfinite(K)):
                raise ValueError("the kernel matrix contains NaN or infinity")
            X_fit = X
        else:
            kern, K, X_fit = None, None, None
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if K is not None:
        _check_psd(K)
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"y must have exactly 2 classes, got {classes.size}")
    t = np.where(y == classes[1], 1.0, -1.0)
    Z = X if kern is None else K * t[None, :]  # Z = K diag(t): z_i = Σ_j β_j t_j k(x_i, x_j)
    return Z, t, K, kern, X_fit, classes


def _track(tr, lambda_min, max_events, tol):
    """Follow the path from the tracker's start down to ``lambda_min``: at each segment
    the direction (made consistent at the knots), the first events (simultaneous ones
    within ``tol`` relative to λ), the step, the updates at the vertex and its record.
    Returns ``(n_events, capped)``."""
    n_events = 0
    while True:
        d = knot_consistency(tr, tr.direction())
        scale_tol = tol * max(tr.lam, 1e-300)
        events = next_events(tr, d, scale_tol)
        d_end = tr.lam - lambda_min
        d_ev = min((ev.delta for ev in events), default=np.inf)
        step = d_end if d_ev >= d_end - scale_tol else d_ev
        tr.advance(step, d)
        if step == d_end or n_events >= max_events:
            if step == d_end:
                tr.lam = lambda_min
            tr.polish()
            tr.refresh()
            capped = step != d_end
            tr.record("cap" if capped else "end")
            return n_events, capped
        n_events += 1
        kinds = apply_events(tr, events, d_ev * (1 + 1e-9) + scale_tol)
        tr.refresh()  # exact re-evaluation at the vertex (no drift along the path)
        rec = "+".join(sorted(set(kinds), key=["enter", "leave", "knot"].index))
        if tr.lam < tr.bps[-1] - scale_tol:
            tr.record(rec)
        else:  # a zero-length event: update the last vertex in place
            tr.amend_last(rec)
        if tr.lam <= 0:
            tr.record("end")
            return n_events, False
