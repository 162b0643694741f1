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
    DUAL,
    KERNEL,
    MAX_ITER,
    N_JOBS,
    NU,
    SMO_MAX_ITER,
    TOL,
    check_intercept_scaling,
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
    (N_JOBS, [None, 1, -1, np.int64(-3), 8], [0, 1.0, True, "2"]),
    # the rule `dual in ("auto", True, False)`: equality, so 1, 0.0 and numpy bools too
    (DUAL, ["auto", True, False, 1, 0.0, np.True_, np.str_("auto")],
     ["yes", 2, None, [True, False], {"auto": 1}]),
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


def test_dual_names_the_accepted_values():
    with pytest.raises(InvalidParameterError,
                       match=r"^The 'dual' parameter of Est must be equal to one of "
                             r"\{'auto', True, False\}\. Got 'yes' instead\.$"):
        validate_parameter_constraints({"dual": DUAL}, {"dual": "yes"}, caller_name="Est")


def test_intercept_scaling_is_checked_only_with_an_intercept():
    for ok in (1.0, 3, np.float32(0.5), np.inf):
        check_intercept_scaling(True, ok)
    for anything in ("x", None, -1.0, 0.0, np.nan):
        check_intercept_scaling(False, anything)
    for bad in (0.0, -1, np.nan, "1", None):
        with pytest.raises(ValueError, match="intercept_scaling must be > 0 when "
                                             "fit_intercept=True"):
            check_intercept_scaling(True, bad)
