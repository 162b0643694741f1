"""Parameter descriptions shared by the docstrings of the SMO-trained kernel estimators.

:class:`~bisvm.SVC`, :class:`~bisvm.SVR`, :class:`~bisvm.NuSVC`, :class:`~bisvm.NuSVR`
and :class:`~bisvm.OneClassSVM` take the same kernel and solver parameters with the same
meaning; each class docstring documents every one of its parameters in full from the
entries below, so that the five stay in step.
"""

from __future__ import annotations

__all__ = ["SMO_PARAMETERS", "fill_parameters"]

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


def fill_parameters(template):
    """Return ``template`` with each line ``{{name}}`` replaced by the entry of ``name``.

    Parameters
    ----------
    template : str
        A class docstring; a line holding only ``{{name}}`` (any indentation) stands for
        the numpydoc entry of the parameter ``name`` of :data:`SMO_PARAMETERS`.

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
