"""The building blocks of the estimators' ``_parameter_constraints``
(:mod:`bisvm.estimators._constraints`): scikit-learn's intervals, minus ``bool``."""

import numpy as np
import pytest
from sklearn.utils._param_validation import (
    InvalidParameterError,
    make_constraint,
    validate_parameter_constraints,
)

from bisvm.estimators._constraints import (
    AUTO_OR_BOOL,
    BLAS_THREADS,
    KERNEL,
    MAX_ITER,
    NU,
    SMO_MAX_ITER,
    TOL,
    finite,
    non_negative,
    positive,
)


def _ok(constraints, value):
    return any(make_constraint(c).is_satisfied_by(value) for c in constraints)


@pytest.mark.parametrize("constraints, good, bad", [
    (TOL, [1e-3, 1, np.float32(0.5), np.int64(2)],
     [0, -1.0, np.nan, np.inf, True, np.True_, "1", None]),
    ([positive(allow_inf=True)], [np.inf, 2.0], [0.0, -np.inf, np.nan, True]),
    ([non_negative()], [0, 0.0, np.float64(3)], [-1e-12, np.inf, np.nan, False]),
    ([finite()], [-1e300, 0, 2], [np.inf, -np.inf, np.nan, True]),
    (MAX_ITER, [1, np.int64(5)], [0, -1, 2.0, True]),
    (SMO_MAX_ITER, [-1, np.int64(-1), 1, 1000], [0, -2, True, 1.0]),
    (NU, [1, 0.5, np.float32(1e-3)], [0, 1.5, np.nan, True]),
    (BLAS_THREADS, ["auto", None, 1, 4], ["two", 0, -1, True, 1.5]),
    (AUTO_OR_BOOL, ["auto", True, False], ["yes", 1, 0, np.True_, None]),
    (KERNEL, ["rbf", "precomputed", lambda a, b: a @ b.T], ["spline", 3, None]),
])
def test_accepted_and_refused_values(constraints, good, bad):
    for v in good:
        assert _ok(constraints, v), v
    for v in bad:
        assert not _ok(constraints, v), v


def test_error_names_the_parameter_and_the_caller():
    with pytest.raises(InvalidParameterError,
                       match=r"^The 'tol' parameter of Est must be a float in the range "
                             r"\(0.0, inf\)\. Got True instead\.$") as e:
        validate_parameter_constraints({"tol": TOL}, {"tol": True}, caller_name="Est")
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)
