"""The solver contract across the families: every public solver takes its
problem first and its warm starts as keywords with the contract's names, and each one is
run and checked by a family contract test (``tests/solvers/*/test_contract_*.py``, which
call :func:`contract.check_contract` on its result)."""

import inspect
import pathlib

import pytest

import bisvm.solvers as solvers

WARM_STARTS = {"w0", "alpha0", "partition0", "intercept0"}
RETIRED = {"theta0", "lam0", "beta0", "sets0", "primal0"}
SOLVERS = sorted(n for n in solvers.__all__ if n.startswith("solve_"))
PATHS = ["l1_svm_path", "l1_sqhinge_path"]
CONTRACT_TESTS = "".join(
    p.read_text() for p in pathlib.Path(__file__).parent.rglob("test_contract_*.py"))


def test_every_family_is_exported():
    assert len(SOLVERS) >= 20
    for family in ("primal", "dual", "paths", "selective"):
        assert any(getattr(solvers, n).__module__.startswith(f"bisvm.solvers.{family}")
                   for n in SOLVERS + PATHS), family


@pytest.mark.parametrize("name", SOLVERS)
def test_warm_starts_are_keyword_only_with_the_contract_names(name):
    params = inspect.signature(getattr(solvers, name)).parameters
    assert not RETIRED & set(params), name
    first = next(iter(params.values()))
    assert first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD  # the problem
    for p in params.values():
        if p.name in WARM_STARTS:
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, (name, p.name)


@pytest.mark.parametrize("name", SOLVERS + PATHS)
def test_every_solver_has_a_contract_test(name):
    # called directly or through a parametrised ``solve`` argument
    assert CONTRACT_TESTS.count(name) >= 2, f"{name} is run by no test_contract_*.py"
