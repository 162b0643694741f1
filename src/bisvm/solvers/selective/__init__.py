r"""The selective-ridge family (Angulo Yauri 2020, "A method of differential
cross-validation for choosing the complexity level of generalized linear dependence
models"): linear and logistic regression with the selective penalty
:math:`\mathrm{pen}_\mu`, solved by Newton's method on the exact dual.

==================  ====================================================================
``problem``         :class:`SelectiveProblem` (primal :math:`J`, dual :math:`W`, the gap),
                    :func:`selectivity_max` and the μ grid of Algorithm B
``linalg``          :class:`SelectiveNewtonFactor` (the face matrix, Woodbury),
                    the constrained Newton candidate and its minimum-norm solve of
                    rank-deficient (duplicated) kink constraints
``linesearch``      exact and golden-section step lengths on :math:`W`
``fallback``        primal coordinate descent for the squared loss
``algorithm_a``     :func:`solve_dual_newton` (Algorithm A)
``algorithm_b``     :func:`solve_selectivity_path` (Algorithm B)
==================  ====================================================================
"""

from .algorithm_a import solve_dual_newton
from .algorithm_b import solve_selectivity_path
from .fallback import selective_scalar_min
from .linalg import (
    SelectiveNewtonFactor,
    distinct_constraints,
    face_candidate,
    min_norm_psd_solve,
)
from .problem import (
    SelectiveProblem,
    check_magnitude,
    equal_split_duplicates,
    selective_loss,
    selectivity_grid,
    selectivity_max,
)

__all__ = [
    "SelectiveProblem",
    "SelectiveNewtonFactor",
    "face_candidate",
    "distinct_constraints",
    "min_norm_psd_solve",
    "equal_split_duplicates",
    "selectivity_max",
    "selectivity_grid",
    "solve_dual_newton",
    "solve_selectivity_path",
    "selective_loss",
    "check_magnitude",
    "selective_scalar_min",
]
