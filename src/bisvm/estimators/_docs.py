"""Docstring entries shared by the estimators, written once.

:class:`~bisvm.SVC`, :class:`~bisvm.SVR`, :class:`~bisvm.NuSVC`, :class:`~bisvm.NuSVR`
and :class:`~bisvm.OneClassSVM` take the same kernel and solver parameters with the same
meaning; each class docstring documents every one of its parameters in full from
:data:`SMO_PARAMETERS` (:func:`fill_parameters`), so that the five stay in step. The
methods of one signature across the estimators (``fit``, ``predict``,
``decision_function``, ...) name the argument and return entries they share in
:data:`ARGUMENTS` and :data:`RETURNS` through the :func:`method_doc` decorator, which
writes each method's full numpydoc docstring.
"""

from __future__ import annotations

import textwrap

__all__ = ["ARGUMENTS", "RETURNS", "SMO_PARAMETERS", "fill_parameters", "method_doc"]

SMO_PARAMETERS = {
    "kernel": 'kernel : {"linear", "poly", "rbf", "laplacian", "sigmoid", "precomputed"} '
    'or callable, default="rbf"\n' + r"""    The kernel :math:`k(x, z)`: :math:`x^\top z`,
    :math:`(\gamma x^\top z + c_0)^d`,
    :math:`e^{-\gamma\lVert x - z\rVert^2}`, :math:`e^{-\gamma\lVert x - z\rVert_1}`,
    :math:`\tanh(\gamma x^\top z + c_0)`; ``"precomputed"`` takes the Gram matrix as
    ``X``; a callable returns the Gram block of two sets of samples.""",
    "degree": """degree : int, default=3
    Degree :math:`d` of the polynomial kernel (ignored by the others).""",
    "gamma": r"""gamma : float > 0, "scale" or "auto", default="scale"
    Kernel coefficient :math:`\gamma` of the poly, rbf, laplacian and sigmoid kernels;
    ``"scale"`` is :math:`1/(d\,\mathrm{Var}(X))` and ``"auto"`` is :math:`1/d` for
    :math:`d` features, as in scikit-learn.""",
    "coef0": """coef0 : float, default=0.0
    The constant :math:`c_0` of the poly and sigmoid kernels.""",
    "tol": r"""tol : float, default=1e-3
    Stop when the maximal KKT violation :math:`m(\alpha) - M(\alpha)` of the working-set
    pair is below ``tol`` (LIBSVM's stopping rule).""",
    "shrinking": """shrinking : bool, default=True
    Set aside variables stuck at a bound during SMO (LIBSVM's shrinking heuristic); the
    solution does not depend on it, only the time.""",
    "cache_size": """cache_size : float, default=200
    Size of the kernel column cache, in MB.""",
    "max_iter": """max_iter : int, default=-1
    Cap on SMO iterations per machine (-1: none); reaching it warns.""",
    "selection": """selection : {"second_order", "max_violating_pair"}, default="second_order"
    SMO working-set selection: the second-order rule of Fan, Chen & Lin (2005) or the
    maximal violating pair of Keerthi et al. (2001).""",
    "verbose": """verbose : bool, default=False
    Print one line per SMO solve (iterations, objective, ρ, support vectors, final gap),
    as LIBSVM's ``optimization finished`` report.""",
    "n_jobs": """n_jobs : int or None, default=None
    Threads for SMO's kernel columns, gradient updates and scans (``None``: 1, ``-1``:
    every core). The model does not depend on it; the first threaded fit compiles the
    threaded code once, then it is cached on disk.""",
}


#: fitted attributes of the estimators that train one machine (SVR, NuSVR, OneClassSVM)
SMO_PARAMETERS["one_machine_attributes"] = """coef_ : ndarray of shape (1, n_features)
    Primal weights, for the linear kernel only.
n_iter_ : int
    SMO iterations.
fit_status_ : int
    0 when SMO converged, 1 otherwise.
shape_fit_ : tuple of int
    Shape of the training ``X``."""


#: numpydoc entries of the arguments that several estimator methods share, by key
ARGUMENTS = {
    "X": r"""X : array-like of shape (n_samples, n_features)
    Samples.""",
    "X_original": r"""X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Samples, in the original units.""",
    "X_kernel_sparse": r"""X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Samples, or their kernel values against the training samples when
    ``kernel="precomputed"``.""",
    "X_kernel": r"""X : array-like of shape (n_samples, n_features)
    Samples, or their kernel values against the training samples when
    ``kernel="precomputed"``.""",
    "X_all_features": r"""X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Samples with all the features seen in :meth:`fit`; only the stable ones are
    read.""",
    "X_sparse": r"""X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Samples.""",
    "X_train": r"""X : array-like of shape (n_samples, n_features)
    Training samples.""",
    "X_train_gram_sparse": r"""X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Training samples, or the (n_samples, n_samples) Gram matrix when
    ``kernel="precomputed"``.""",
    "X_train_gram": r"""X : array-like of shape (n_samples, n_features)
    Training samples, or their Gram matrix when ``kernel="precomputed"``.""",
    "X_train_sparse": r"""X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Training samples.""",
    "sample_weight_C": r"""sample_weight : array-like of shape (n_samples,), default=None
    Non-negative weights multiplying ``C`` per sample.""",
    "y_labels": r"""y : array-like of shape (n_samples,)
    Class labels.""",
    "y_values": r"""y : array-like of shape (n_samples,)
    Target values.""",
    "y_selective": r"""y : array-like of shape (n_samples,)
    Targets: numbers for the regression, two classes for the classifier.""",
}

#: numpydoc entries of the return values that several estimator methods share
RETURNS = {
    "labels": r"""ndarray of shape (n_samples,)
    Predicted labels.""",
    "values": r"""ndarray of shape (n_samples,)
    Predicted values.""",
    "proba": r"""ndarray of shape (n_samples, n_classes)
    Probabilities, columns in the order of ``classes_``.""",
    "log_proba": r"""ndarray of shape (n_samples, n_classes)
    The logarithm of :meth:`predict_proba`.""",
}


def fill_parameters(template):
    """Return ``template`` with each line ``{{name}}`` replaced by the entry of ``name``.

    Parameters
    ----------
    template : str
        A class docstring; a line holding only ``{{name}}`` (any indentation) stands for
        the numpydoc entry ``name`` of :data:`SMO_PARAMETERS` (a parameter, or the
        fitted attributes shared by the one-machine estimators).

    Returns
    -------
    str
        The docstring with every entry written out at the placeholder's indentation.
    """
    out = []
    for line in template.split("\n"):
        key = line.strip()
        if key.startswith("{{") and key.endswith("}}"):
            pad = line[:len(line) - len(line.lstrip())]
            out.extend(pad + entry for entry in SMO_PARAMETERS[key[2:-2]].splitlines())
        else:
            out.append(line)
    return "\n".join(out)


def _entry(text):
    """A numpydoc entry's lines: its first line, then its description four spaces in."""
    first, _, rest = text.partition("\n")
    return [first] + textwrap.indent(textwrap.dedent(rest), "    ").split("\n")[
        : None if rest else 0]


def method_doc(summary, *parameters, returns, extended=""):
    """Return a decorator setting a method's numpydoc docstring from shared entries.

    The estimators' methods of one signature (``fit``, ``predict``,
    ``decision_function``, ...) take arguments of one meaning; their entries are
    written once in :data:`ARGUMENTS` and :data:`RETURNS` and named here.

    Parameters
    ----------
    summary : str
        The one-line summary, ending in a period.
    *parameters : str
        For each argument, a key of :data:`ARGUMENTS`, or its full numpydoc entry
        (a ``name : type`` line and its indented description).
    returns : str
        A key of :data:`RETURNS`, or the full numpydoc entry of the return value.
    extended : str, default=""
        Paragraphs between the summary and the sections, without indentation.

    Returns
    -------
    callable
        The decorator, which sets ``__doc__`` and returns the method unchanged.
    """
    lines = [summary, ""]
    if extended:
        first, _, rest = extended.partition("\n")
        lines += [first] + textwrap.dedent(rest).split("\n")[: None if rest else 0] + [""]
    lines += ["Parameters", "----------"]
    for entry in parameters:
        lines += _entry(ARGUMENTS.get(entry, entry))
    lines += ["", "Returns", "-------"] + _entry(RETURNS.get(returns, returns))
    pad = " " * 8
    text = lines[0] + "\n" + "\n".join(pad + line if line else "" for line in lines[1:])
    text += "\n" + pad

    def decorate(method):
        method.__doc__ = text
        return method

    return decorate
