r"""The docstrings of the selective-ridge estimators, written once for the fixed-μ pair
(:class:`~bisvm.SelectiveRegression`, :class:`~bisvm.SelectiveLogisticRegression`) and
once for the pair that chooses μ (:class:`~bisvm.SelectiveRegressionCV`,
:class:`~bisvm.SelectiveLogisticRegressionCV`); each class fills in its summary, its
loss, its extra attributes and its example.
"""

from __future__ import annotations

__all__ = ["CV_DOC", "FIXED_DOC", "fill_docstring"]


#: The thesis the four estimators implement, as their References cite it.
THESIS = """\
    B. F. Angulo Yauri, "A method of differential cross-validation for choosing the
    complexity level of generalized linear dependence models" (in Russian), master's
    thesis, MIPT, Moscow, 2020."""

#: The start of their Examples sections; each estimator's ``<example>`` continues it.
EXAMPLES = """\
    Examples
    --------
    >>> import numpy as np
    >>> from bisvm import <name>
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(60, 8))
<example>    """


def fill_docstring(template, **fields):
    """Return ``template`` with each ``<name>`` replaced by ``fields[name]``.

    Parameters
    ----------
    template : str
        A docstring whose LaTeX braces stay as they are (hence no ``str.format``).
    **fields : str
        The text of each placeholder.

    Returns
    -------
    str
        The docstring.
    """
    template = template.replace("<thesis>", THESIS).replace("<examples>", EXAMPLES)
    for name, text in fields.items():
        template = template.replace(f"<{name}>", text)
    return template


FIXED_DOC = r"""<summary>

    Minimises :math:`\gamma\sum_i \mathrm{pen}_\mu(a_i) + \sum_t q(y_t, x_t^\top a + b)`
    with the selective-ridge penalty
    :math:`\mathrm{pen}_\mu(a) = 2\mu|a|` for :math:`|a| \le \mu` and
    :math:`\mu^2 + a^2` beyond, and :math:`q` <loss>. The penalty is the L1 norm near
    zero and the ridge beyond μ, so small coefficients are set exactly to zero while
    large ones are shrunk as by ridge regression (Angulo Yauri 2020). It is solved by a
    Newton method on the dual, exact up to rounding.

    Parameters
    ----------
    selectivity : float, default=0.1
        The threshold μ ≥ 0: coefficients whose dual score :math:`|x_i^\top\lambda|`
        stays below μ are exactly zero; ``0`` is ridge regression and
        :math:`\mu \ge \mu_{max}` the empty model.
    ridge : float, default=1.0
        The ridge weight γ > 0.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept :math:`b`.
    tol : float, default=1e-10
        Stopping tolerance of the dual Newton method.
    max_iter : int, default=500
        Cap on its iterations.
    verbose : int, default=0
        When positive, print to stdout the solver's iterations (dual objective,
        stopping certificate) and a summary line.

    Attributes
    ----------
<classes>    coef_ : ndarray of shape (n_features,)
        The coefficients :math:`a`.
    intercept_ : float
        The intercept :math:`b`.
    support_ : ndarray of bool of shape (n_features,)
        The nonzero coefficients (the active set).
    dual_coef_ : ndarray of shape (n_samples,)
        The dual variables λ; :math:`a_i = x_i^\top\lambda` on the ridge part.
    n_iter_ : int
        Newton iterations.
    duality_gap_ : float
        The solver's certificate at the solution (zero at the optimum up to rounding).

    See Also
    --------
    <cv_name> : The same model with μ chosen by a leave-one-out criterion.

    References
    ----------
<thesis>

<examples>"""


CV_DOC = r"""<summary>

    The model is the selective-ridge one of :class:`~bisvm.<fixed>` (Angulo Yauri 2020);
    its threshold μ is chosen along a geometric grid from :math:`\mu_{max}` (the empty
    model) down, each fit warm-started from the previous one, by a leave-one-out
    criterion computed from the fit at each μ (``criterion``):

    * ``"alo"`` (default): approximate leave-one-out by the rank-one update at p = 1,
      held-out outputs :math:`z_j + q'_j L_j/(1 - h_j)` (exact PRESS for regression on
      a fixed active set). Of the one-fit criteria it is the closest to exact
      leave-one-out along the path, at the cost of one leverage computation per μ,
      which is why it is the default (see the estimator notes of the documentation).
    * ``"ij"``: training loss plus the derivative :math:`h_j q'^2_j/q''_j`, the
      first-order (infinitesimal jackknife) leave-one-out estimate; it keeps decreasing
      into the interpolating regime.
    * ``"diffloo"``: DiffLOO as printed in the thesis, for reproducing it. It is exactly
      0 for the empty model, so its arg-min is the empty model.
    * ``"diffloo_exact"``: the exact derivative of the muffled loss (the logistic
      weight corrected); the same trivial minimum.
    * ``"loo"``: exact leave-one-out by ``N`` refits per μ (a reference, slow).
    * ``"kfold"``: ``n_splits``-fold cross-validation (a reference).

    Like exact leave-one-out and k-fold, ALO selects for prediction, not for exact
    support recovery: it keeps the informative features with a few extra ones;
    ``selection_rule="1se"`` with ``scoring="error"`` selects for the support. When the
    chosen model has no feature, an ``EmptyModelWarning`` names the criterion and
    suggests ``"alo"``.

    Parameters
    ----------
    criterion : {"alo", "ij", "diffloo", "diffloo_exact", "loo", "kfold"}, default="alo"
        The criterion scoring each μ, as listed above.
    selection_rule : {"min", "1se"}, default="min"
        ``"min"``: the arg-min of the criterion. ``"1se"``: the sparsest μ whose criterion
        is within one standard error of the minimum (glmnet's ``lambda.1se``; the
        standard error is that of the mean of the N per-object held-out losses,
        :func:`~bisvm.selection.loo.select_index`). ``"min"`` selects for prediction;
        ``"1se"`` trades a little of it for a sparser model, nearer the true support
        when the signal is sparse.
    scoring : {"loss", "error"}, default="loss"
        What the criterion scores: the loss of the held-out outputs, or (classifier,
        criterion ``"alo"``, ``"loo"`` or ``"kfold"``) their misclassification rate, as
        glmnet's ``type.measure="class"``. On separable or nearly separable data the
        held-out log-loss keeps falling as μ shrinks (larger coefficients are more
        confident, and a smaller μ admits more features), so its minimum and its
        one-standard-error point both keep spurious features; the error rate is flat
        once the right features are in, so ``"error"`` with ``"1se"`` picks the sparsest
        model that classifies as well.
    n_mu : int, default=50
        Grid size: :math:`\mu_l = \mu_{max}\,r^{l/(n_\mu-1)}` with :math:`r` =
        ``min_ratio``.
    ridge : float, default=1.0
        The ridge weight γ > 0.
    min_ratio : float, default=1e-8
        Smallest μ over :math:`\mu_{max}` (the thesis's :math:`10^{-8}`).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept.
    n_splits : int, default=5
        Folds of ``"kfold"``.
    random_state : int, default=0
        Shuffling of the folds.
    tol : float, default=1e-10
        Stopping tolerance of the dual Newton method at each μ.
    max_iter : int, default=500
        Cap on its iterations at each μ.
    blas_threads : "auto", int or None, default="auto"
        BLAS threads during the fit (:func:`~bisvm.selection.threads.blas_threads`):
        ``"auto"`` is one thread when the smaller dimension of X is at most
        :data:`~bisvm.selection.threads.SMALL_DENSE` (the path is hundreds of small
        factorisations, on which a thread team costs more than it saves), an int fixes
        the count, None leaves the library default.
    verbose : int, default=0
        Show the path on stderr, one step per μ (and per extra fold path of ``"kfold"``):
        a progress bar when stderr is a terminal, else lines (:mod:`bisvm.progress`).

    Attributes
    ----------
<classes>    selectivity_path_ : ndarray of shape (n_mu,)
        The μ grid, largest first.
    criterion_path_ : ndarray of shape (n_mu,)
        The criterion at each μ.
    criterion_se_path_ : ndarray of shape (n_mu,)
        Standard error of each criterion value.
    n_active_path_ : ndarray of int of shape (n_mu,)
        Number of nonzero coefficients at each μ.
    selectivity_max_ : float
        :math:`\mu_{max}`, the smallest μ of the empty model.
    selectivity_ : float
        The μ chosen by ``selection_rule``; the model below is the fit there.
    selection_index_ : int
        Its index in ``selectivity_path_``.
    blas_threads_ : int or None
        The BLAS thread limit applied during the fit (None: none).
    coef_ : ndarray of shape (n_features,)
        The coefficients at ``selectivity_``.
    intercept_ : float
        The intercept.
    support_ : ndarray of bool of shape (n_features,)
        The nonzero coefficients: the selected features.
    dual_coef_ : ndarray of shape (n_samples,)
        The dual variables λ.
    n_iter_ : int
        Newton iterations of the final fit.
    duality_gap_ : float
        The solver's certificate at the solution.

    References
    ----------
<thesis>

    E. Rad and A. Maleki, "A scalable estimate of the out-of-sample prediction error via
    approximate leave-one-out cross-validation", JRSS B 82, 2020.

<examples>"""
