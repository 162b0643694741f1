"""`import bisvm`, `bisvm --help` and argument errors load no numerical library.

A real property, checked in a fresh interpreter (``sys.modules``), not a timing: the heavy
libraries (scikit-learn, numba, matplotlib; numpy and pandas too) are imported where the
work starts, so the CLI answers at once. The public names stay reachable.
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "numba", "matplotlib", "numpy", "pandas", "scipy")

PROBE = """
import sys
{body}
print("LOADED=" + ",".join(m for m in {heavy!r} if m in sys.modules))
"""


def loaded_after(body):
    """The heavy modules a fresh interpreter has imported after running ``body``."""
    code = PROBE.format(body=body, heavy=HEAVY)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    line = [s for s in r.stdout.splitlines() if s.startswith("LOADED=")]
    assert line, (r.stdout, r.stderr)
    return {m for m in line[-1][len("LOADED="):].split(",") if m}, r


def test_import_bisvm_loads_no_heavy_library():
    loaded, _ = loaded_after("import bisvm")
    assert loaded == set()


CLI_CALL = """
from bisvm import cli
try:
    code = cli.main({argv!r})
except SystemExit as exc:
    code = exc.code
print("CODE=" + str(code))
"""


@pytest.mark.parametrize("argv", [
    ["--help"], ["--version"],
    ["select", "--help"], ["fit", "--help"], ["predict", "--help"], ["tune", "--help"],
    ["report", "--help"], ["datasets", "--help"],
    ["fit", "--C", "-1"],                      # an argument error
    ["tune", "--dataset", "iris"],             # a missing required option
    ["select", "--model", "bogus"],            # a bad choice
    ["nosuchcommand"],
])
def test_help_version_and_argument_errors_load_no_heavy_library(argv):
    loaded, r = loaded_after(CLI_CALL.format(argv=argv))
    assert loaded == set(), (argv, loaded)
    code = int(r.stdout.split("CODE=")[1].split()[0])
    if argv[-1] in ("--help", "--version"):
        assert code == 0
    else:
        assert code == 2 and len(r.stderr.strip().splitlines()) <= 3  # usage + one line


def test_version_and_help_in_a_real_process():
    r = subprocess.run([sys.executable, "-m", "bisvm", "--version"], capture_output=True,
                       text=True, timeout=60)
    import bisvm

    assert r.returncode == 0 and r.stdout.strip() == f"bisvm {bisvm.__version__}"
    r = subprocess.run([sys.executable, "-m", "bisvm", "--help"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0
    for cmd in ("select", "fit", "predict", "tune", "report", "datasets", "--version"):
        assert cmd in r.stdout


def test_every_public_name_resolves_and_from_import_works():
    code = """
import json, bisvm
# a class may have a metaclass (scikit-learn's selectors are ABCs): "class" for any
names = {n: "class" if isinstance(getattr(bisvm, n), type) else type(getattr(bisvm, n)).__name__
         for n in bisvm.__all__}
from bisvm import SVC, BilevelSVC, read_table, kernels
assert SVC is bisvm.SVC and BilevelSVC is bisvm.BilevelSVC
assert set(bisvm.__all__) <= set(dir(bisvm))
try:
    bisvm.no_such_name
except AttributeError as exc:
    assert "no_such_name" in str(exc)
else:
    raise SystemExit("no AttributeError")
print(json.dumps(names))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    names = json.loads(r.stdout)
    assert names["BilevelSVC"] == "class" and names["kernels"] == "module"
    assert names["__version__"] == "str" and names["load_model"] == "function"
    # the names are the package's own classes, one per module as documented
    import bisvm
    from bisvm.estimators.svm import SVC

    assert bisvm.SVC is SVC


def test_using_one_name_loads_only_its_modules():
    loaded, _ = loaded_after("import bisvm; bisvm.__version__; bisvm.list_datasets")
    assert "matplotlib" not in loaded and "numba" not in loaded
