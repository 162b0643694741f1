"""Shared test configuration.

Hypothesis profiles
-------------------
``ci`` (the default)
    Few examples per property, a fixed seed (``derandomize=True``) so that a CI run is
    reproducible, no per-example deadline (numba-compiled code is loaded from its cache on
    the first call, which would otherwise trip the deadline). Keeps the reliability suite
    (``tests/test_reliability_*.py``) near a minute on one core.
``thorough``
    Many more examples with a random seed, for a run by hand before a release::

        HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_reliability_*.py

    Tests that are heavy in themselves (large stress problems) also run only under this
    profile (see ``tests/test_reliability_stress.py``).

Tests that set ``max_examples`` explicitly in their own ``@settings`` keep it under both
profiles.
"""

import os

import pytest
from hypothesis import HealthCheck, settings
from threadpoolctl import threadpool_limits

settings.register_profile(
    "ci",
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "thorough",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="module")
def one_blas_thread():
    """One BLAS thread for a test module whose factorisations are small: extra BLAS
    threads only spin and contend on a shared machine. Use it with
    ``pytestmark = pytest.mark.usefixtures("one_blas_thread")``."""
    with threadpool_limits(1):
        yield
