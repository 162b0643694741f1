"""scikit-learn's estimator checks on the kernel and linear estimators.

``parametrize_with_checks`` runs every check of ``sklearn.utils.estimator_checks`` (fit
and predict contracts, input validation, sparse input, pickling, clone, sample weights,
...) on :class:`~bisvm.NuSVC`, :class:`~bisvm.NuSVR`, :class:`~bisvm.OneClassSVM`,
:class:`~bisvm.LinearSVR` and :class:`~bisvm.LinearSVC` with
``multi_class="crammer_singer"``. The default ``NuSVC()``, ``NuSVR()``,
``OneClassSVM()`` and ``LinearSVR()`` are checked in ``tests/test_nu_svm.py`` and
``tests/test_linear_svr.py``; here other kernels, losses and solvers. The checks that
cannot hold are listed in :data:`EXPECTED_FAILED` (and ``_expected_failed``) with the
reason: the sample-weight equivalences ask for an exact equality that an iterative solver
stopped at a tolerance cannot give, ν-SVC's class weights make the check's extreme weights
infeasible (scikit-learn's LIBSVM and LIBLINEAR estimators are exempted from the same
checks), and with ``probability=True`` predict follows the probabilities.
"""

import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from bisvm import LinearSVC, LinearSVR, NuSVC, NuSVR, OneClassSVM

_SMO_TOL = ("gamma='scale' depends on X.var(), which repeating rows changes, and SMO stops "
            "at tol=1e-3, so weight 2 and a repeated row give fits that differ by O(tol), "
            "not the 1e-7 the check asks (scikit-learn exempts its LIBSVM estimators too); "
            "tests/test_reliability_properties.py checks weights against repeated rows at a "
            "fixed gamma and a tight tol")
_CD_TOL = ("dual coordinate descent stops at a relative tolerance of 1e-4, so weight 2 and "
           "a repeated row agree to ~1e-4, not 1e-7 (scikit-learn's LIBLINEAR estimators "
           "fail it too)")

_WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data",
                  "check_sample_weight_equivalence_on_sparse_data")

#: class name -> {check name: reason it cannot pass}
EXPECTED_FAILED = {
    "NuSVC": {
        **dict.fromkeys(_WEIGHT_CHECKS, _SMO_TOL),
        # bisvm's NuSVC applies class_weight to the bounds C_i (LIBSVM's nu-SVC ignores
        # it, and scikit-learn exempts its NuSVC from this check: "class_weight is
        # ignored"); the check's weights (1000 against 1e-4) leave one class a total bound
        # of ~1e-3 against ~1e4, and e'alpha = nu sum(C_i) with alpha_i <= C_i per class
        # is then infeasible for every nu above ~1e-6: the fit refuses it (LIBSVM's
        # "specified nu is infeasible") instead of predicting the heavy class
        "check_class_weight_classifiers": (
            "class weights 1000 vs 1e-4 make every practical nu infeasible for nu-SVC with "
            "weighted bounds; the fit refuses (LIBSVM's 'specified nu is infeasible'); "
            "scikit-learn's NuSVC ignores class_weight and is exempted too"),
    },
    "NuSVR": dict.fromkeys(_WEIGHT_CHECKS, _SMO_TOL),
    "OneClassSVM": dict.fromkeys(_WEIGHT_CHECKS, _SMO_TOL),
    "LinearSVR": dict.fromkeys(_WEIGHT_CHECKS, _CD_TOL),
    "LinearSVC": dict.fromkeys(_WEIGHT_CHECKS, _CD_TOL),
}


_PROBA_PREDICT = ("with probability=True bisvm's predict is the arg-max of predict_proba, so "
                  "that the two agree (LIBSVM's do not); the check asks predict to be the "
                  "arg-max of decision_function, and the Platt-calibrated, pairwise-coupled "
                  "probabilities reorder a few points near the boundaries (3 of 300 here)")


def _expected_failed(est):
    if isinstance(est, LinearSVR) and est.dual is False:
        return {}  # the primal Newton solver converges tightly: the weight checks pass
    failed = dict(EXPECTED_FAILED.get(type(est).__name__, {}))
    if getattr(est, "probability", False):
        failed["check_classifiers_train"] = _PROBA_PREDICT
    return failed


@parametrize_with_checks(
    [
        NuSVC(kernel="linear", nu=0.3),
        NuSVC(probability=True, random_state=0),
        NuSVR(kernel="linear", nu=0.3),
        OneClassSVM(kernel="linear", nu=0.2),
        LinearSVR(loss="squared_epsilon_insensitive", dual=True, random_state=0),
        LinearSVR(loss="squared_epsilon_insensitive", dual=False),
        LinearSVC(multi_class="crammer_singer", random_state=0),
    ],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # a solver cap reached on the checks' tiny random problems is not a failure
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_expected_failures_name_real_checks():
    """Each listed check exists in scikit-learn (a renamed check would otherwise leave a
    stale entry that exempts nothing)."""
    import sklearn.utils.estimator_checks as ec

    for name, checks in EXPECTED_FAILED.items():
        for check in checks:
            assert hasattr(ec, check), (name, check)


@pytest.mark.parametrize("est", [NuSVC(), NuSVR(), OneClassSVM()])
def test_nu_estimators_accept_sparse_in_their_tags(est):
    assert est.__sklearn_tags__().input_tags.sparse
