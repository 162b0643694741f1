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

Compiled kernels
----------------
A whole-suite run with two or more pytest-xdist workers first compiles the package's
numba kernels into their on-disk cache with one process per worker
(``tests/_numba_warmup.py``): on an empty cache (a fresh clone) the workers would
otherwise each compile the same kernels at the same time. It is skipped when every
listed kernel already has a cache index newer than its source. ``BISVM_NUMBA_WARMUP=0``
skips it, ``=1`` forces it for any run. ``--numba-record`` rewrites the list of signatures
it compiles from the kernels the run used; run the whole suite on an empty cache for that,
so that the kernels compiled inside others are listed too (they are then compiled first)::

    NUMBA_CACHE_DIR=$(mktemp -d) BISVM_NUMBA_WARMUP=0 python -m pytest -n 2 --numba-record

Shared fixtures under pytest-xdist
----------------------------------
A module-, class- or session-scoped fixture defined in a test module (a CLI tour, a
subprocess running scikit-learn's own SVM tests, fits shared by a module's tests) is set
up once per worker that runs one of its tests. xdist's default ``load`` distribution
spreads a module's tests over every worker, so each worker would pay for the same
fixture. Such a module's tests are therefore marked ``xdist_group`` (one group per
module) and a run with ``-n N`` and no explicit ``--dist`` distributes by ``loadgroup``:
a group goes to one worker as a unit, every other test is handed out one by one as with
``load``, and the groups go first (most tests first), so the single tests even out the
end of the run.
"""

import os
import time
from pathlib import Path

import _numba_warmup
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


def pytest_addoption(parser):
    parser.addoption(
        "--numba-record", action="store_true", default=False,
        help="rewrite tests/numba_signatures.txt from the numba kernels this run used",
    )


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        # a worker parses the command line again (``load``); the controller tells it the
        # mode, which decides whether the group is appended to the test ids it reports
        if config.workerinput.get("bisvm_loadgroup"):
            config.option.loadgroup = True
    elif (getattr(config.option, "dist", "no") == "load"
          and not _dist_given(config.invocation_params.args)):
        config.option.dist = "loadgroup"


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["bisvm_loadgroup"] = node.config.option.dist == "loadgroup"


def _dist_given(args):
    """Whether the command line chose an xdist distribution mode itself."""
    return any(arg == "-d" or arg == "--dist" or arg.startswith("--dist=")
               or arg in ("--looponfail", "-f") for arg in map(str, args))


def _shared_fixture_scopes(item):
    """Scopes wider than a test of the fixtures that ``item`` uses and its own module
    defines (those of a conftest.py cost nothing to share, e.g. ``one_blas_thread``)."""
    module = item.nodeid.split("::")[0]
    scopes = set()
    for definitions in item._fixtureinfo.name2fixturedefs.values():
        definition = definitions[-1]
        if definition.scope != "function" and definition.baseid == module:
            scopes.add(definition.scope)
    return scopes


@pytest.hookimpl(tryfirst=True)  # before xdist appends the group to the test ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        if _shared_fixture_scopes(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def _warmup_processes(config):
    """How many processes should warm the numba cache before this run (0: none)."""
    if hasattr(config, "workerinput"):
        return 0
    workers = getattr(config.option, "numprocesses", None)
    workers = workers if isinstance(workers, int) else 0
    wanted = os.environ.get("BISVM_NUMBA_WARMUP", "")
    if wanted == "0" or config.option.collectonly:
        return 0
    if wanted == "1":
        return max(workers, 1)
    if workers < 2:
        return 0
    # only a whole-suite run needs (nearly) every kernel; a few files compile what they use
    tests_dir = Path(__file__).parent.resolve()
    given = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    if any(path not in (tests_dir, Path(config.rootpath).resolve()) for path in given):
        return 0
    return workers


def pytest_sessionstart(session):
    config = session.config
    processes = _warmup_processes(config)
    if not processes:
        return
    forced = os.environ.get("BISVM_NUMBA_WARMUP") == "1"
    if not forced and _numba_warmup.cache_looks_warm(_numba_warmup.read_manifest()):
        return
    start = time.perf_counter()
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    try:
        results = _numba_warmup.warm(processes)
    except Exception as error:  # e.g. a crashed pool process: the tests compile lazily
        if reporter is not None:
            reporter.write_line(f"numba kernels: warm-up failed ({error!r}), "
                                "the tests compile what they use")
        return
    if reporter is not None and results:
        reporter.write_line(
            f"numba kernels: {sum(r[1] for r in results)} compiled, "
            f"{sum(r[2] for r in results)} loaded from the cache, "
            f"{sum(r[3] for r in results)} stale signatures skipped, "
            f"{time.perf_counter() - start:.1f} s in {processes} processes"
        )


_RECORDED = pytest.StashKey[dict]()


def pytest_sessionfinish(session):
    config = session.config
    if not config.getoption("numba_record"):
        return
    if hasattr(config, "workerinput"):
        config.workeroutput["numba_signatures"] = _numba_warmup.loaded_signatures()
        return
    if getattr(config.option, "numprocesses", None):
        recorded = config.stash.get(_RECORDED, {})
    else:  # no xdist workers: this process ran the tests
        recorded = _numba_warmup.loaded_signatures()
    # the warm-up's own tests compile kernels of throw-away modules: only the package's
    recorded = {k: v for k, v in recorded.items() if k.startswith("bisvm.")}
    if recorded:
        _numba_warmup.write_manifest(recorded)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """Collect, in the xdist controller, the signatures a worker recorded."""
    signatures = getattr(node, "workeroutput", {}).get("numba_signatures")
    if signatures is None:
        return
    recorded = node.config.stash.setdefault(_RECORDED, {})
    for name, texts in signatures.items():
        recorded.setdefault(name, []).extend(texts)
