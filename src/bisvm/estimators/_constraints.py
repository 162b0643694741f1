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
with their messages.
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
    "NU",
    "SMO_MAX_ITER",
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
#: ``nu`` of the ν-SVMs: ``0 < nu <= 1``.
NU = [NumberInterval(Real, 0, 1, closed="right")]
#: ``max_iter`` of the SMO estimators: an integer >= 1, or -1 for no limit.
SMO_MAX_ITER = [int_at_least(1), Options(Integral, {-1})]
