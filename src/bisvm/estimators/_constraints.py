"""Building blocks of the estimators' ``_parameter_constraints``.

The estimators validate their constructor parameters as scikit-learn's own do: a class
attribute ``_parameter_constraints`` (``sklearn.utils._param_validation``) checked by
``self._validate_params()`` at the top of ``fit``. An invalid value raises
``InvalidParameterError``, both a ``ValueError`` and a ``TypeError``, whose message names
the parameter, the estimator and the accepted values ("The 'ridge' parameter of
SelectiveRegression must be a float in the range (0.0, inf). Got -1 instead.").

What scikit-learn's :class:`~sklearn.utils._param_validation.Interval` does not do, and
bisvm's checks always did: refuse ``True``/``False`` where a number is expected (Python
counts ``bool`` as an ``Integral``, so ``Interval(Integral, 1, None)`` takes ``True`` as
1). :class:`NumberInterval` is that Interval. Like Interval, it takes Python and numpy
numbers alike, refuses NaN, and refuses ``±inf`` unless the interval is closed on that
side with no finite bound (``closed="right"`` with ``right=None`` takes ``inf``).

Checks that depend on the data (a weight vector's length against ``n_features``, feature
groups against the columns) or on two parameters together stay in the estimators' code,
with their messages; the one shared by two estimators, ``intercept_scaling`` when
``fit_intercept``, is :func:`check_intercept_scaling`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, Options, StrOptions

from ..kernels import KERNELS

__all__ = [
    "NumberInterval",
    "positive",
    "non_negative",
    "finite",
    "int_at_least",
    "TOL",
    "MAX_ITER",
    "BLAS_THREADS",
    "AUTO_OR_BOOL",
    "KERNEL",
    "KERNEL_PARAMETERS",
    "NU",
    "SMO_MAX_ITER",
    "N_JOBS",
    "EqualToOneOf",
    "DUAL",
    "check_intercept_scaling",
]


class NumberInterval(Interval):
    """:class:`~sklearn.utils._param_validation.Interval` that refuses ``bool``.

    ``NumberInterval(Real, 0, None, closed="neither")`` takes ``1``, ``0.5``,
    ``np.float32(0.5)`` and ``np.int64(2)``, and refuses ``True``, ``0``, ``-1``,
    ``nan``, ``inf`` and ``"1"``.
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)


class EqualToOneOf(Options):
    """The values equal (``==``) to one of ``options``, whatever their type: the rule of
    ``value in (option, ...)``, so ``EqualToOneOf("auto", True, False)`` takes ``1``,
    ``0.0`` and ``np.True_`` as well, and refuses ``"yes"`` and ``2``. Unlike
    :class:`~sklearn.utils._param_validation.Options` (a set) it takes unhashable values
    without error (they are compared, and refused unless equal to an option).
    """

    def __init__(self, *options):
        super().__init__(object, set())
        self.options = options  # a tuple: ``in`` compares by identity, then ``==``

    def is_satisfied_by(self, val):
        return val in self.options

    def __str__(self):
        return "equal to one of {" + ", ".join(map(repr, self.options)) + "}"


def positive(*, allow_inf=False):
    """A real number > 0 (and finite unless ``allow_inf``), not a bool."""
    return NumberInterval(Real, 0, None, closed="right" if allow_inf else "neither")


def non_negative():
    """A finite real number >= 0, not a bool."""
    return NumberInterval(Real, 0, None, closed="left")


def finite():
    """Any finite real number, not a bool."""
    return NumberInterval(Real, None, None, closed="neither")


def int_at_least(low):
    """An integer >= ``low`` (Python or numpy), not a bool."""
    return NumberInterval(Integral, low, None, closed="left")


#: ``tol`` of the iterative solvers: a finite number > 0.
TOL = [positive()]
#: ``max_iter``: an integer >= 1.
MAX_ITER = [int_at_least(1)]
#: ``blas_threads`` (:mod:`bisvm.selection.threads`): "auto", an integer >= 1 or None.
#: The threads module refuses numpy integers as well, when the fit applies the value.
BLAS_THREADS = [StrOptions({"auto"}), int_at_least(1), None]
#: "auto", True or False (not a numpy bool, nor 0 or 1).
AUTO_OR_BOOL = [StrOptions({"auto"}), Options(bool, {True, False})]
#: ``kernel`` of the kernel estimators: a name of :data:`bisvm.kernels.KERNELS` or a
#: callable. Their ``gamma``, ``degree`` and ``coef0`` are checked by
#: :func:`bisvm.kernels.make_kernel` for the kernels that use them.
KERNEL = [StrOptions(set(KERNELS)), callable]
#: The constraints of ``kernel``, ``gamma``, ``degree`` and ``coef0`` together: the last
#: three are left to :func:`~bisvm.kernels.make_kernel`, because whether they are used
#: depends on the kernel (a callable uses none, "linear" and "precomputed" no gamma, only
#: "poly" needs an integral degree), which a constraint on one parameter cannot say.
KERNEL_PARAMETERS = {
    "kernel": KERNEL,
    "gamma": "no_validation",
    "degree": "no_validation",
    "coef0": "no_validation",
}
#: ``nu`` of the ν-SVMs: ``0 < nu <= 1``.
NU = [NumberInterval(Real, 0, 1, closed="right")]
#: ``max_iter`` of the SMO estimators: an integer >= 1, or -1 for no limit.
SMO_MAX_ITER = [int_at_least(1), Options(Integral, {-1})]
#: ``n_jobs`` of the SMO estimators: None or a nonzero integer (joblib's convention,
#: :func:`bisvm.solvers.dual.smo.resolve_n_jobs`).
N_JOBS = [None, int_at_least(1), NumberInterval(Integral, None, -1, closed="right")]
#: ``dual`` of LinearSVC and LinearSVR: "auto", or a value equal to True or False (the
#: rule ``dual in ("auto", True, False)`` they always had: 1, 0 and numpy bools too).
DUAL = [EqualToOneOf("auto", True, False)]


def check_intercept_scaling(fit_intercept, intercept_scaling):
    """Refuse an ``intercept_scaling`` that is not a real > 0 when ``fit_intercept``.

    LIBLINEAR's constant feature ``-B``; without an intercept the value is unused and
    anything is accepted, which a constraint on one parameter cannot say.
    """
    if fit_intercept and not (isinstance(intercept_scaling, Real) and intercept_scaling > 0):
        raise ValueError(f"intercept_scaling must be > 0 when fit_intercept=True, got "
                         f"{intercept_scaling!r}")
