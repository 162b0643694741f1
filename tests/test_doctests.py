"""The Examples sections of the public API run as doctests.

Every name in ``bisvm.__all__`` (for a public submodule such as ``bisvm.kernels``, the
functions and classes in its own ``__all__``), with the methods its classes define, is
searched by :class:`doctest.DocTestFinder`; each docstring holding examples is one test.
Outputs are compared with ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``, so that examples
print rounded or elided floats that do not depend on the BLAS.
"""

import doctest
import inspect

import numpy as np
import pytest

import bisvm

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: Every public estimator class must carry an Examples section.
ESTIMATORS = sorted(
    name for name in bisvm.__all__
    if inspect.isclass(getattr(bisvm, name))
    and getattr(bisvm, name).__module__.startswith("bisvm.estimators"))


def _public_objects():
    for name in bisvm.__all__:
        if name == "__version__":
            continue
        obj = getattr(bisvm, name)
        if inspect.ismodule(obj):
            for sub in obj.__all__:
                member = getattr(obj, sub)
                if inspect.isfunction(member) or inspect.isclass(member):
                    yield f"bisvm.{name}.{sub}", member
        else:
            yield f"bisvm.{name}", obj


def _doctests():
    # recurse=True reaches the methods a class defines; a class's tests are found once
    finder = doctest.DocTestFinder(recurse=True, exclude_empty=True)
    seen = set()
    for qualname, obj in _public_objects():
        for test in finder.find(obj, qualname, globs={}):
            if test.examples and test.name not in seen:
                seen.add(test.name)
                yield test


DOCTESTS = sorted(_doctests(), key=lambda t: t.name)


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report = []
    # each docstring starts from a fresh namespace, under numpy's default print options
    test.globs = {}
    with np.printoptions(legacy=False):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimator_has_examples(name):
    doc = getattr(bisvm, name).__doc__ or ""
    assert "Examples\n    --------" in doc, f"{name} has no Examples section"
