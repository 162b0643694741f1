"""The numba cache warm-up of the test-suite (``tests/_numba_warmup.py``): its signature
notation reads back exactly what numba prints, stale lines are skipped, callees are ordered
before their callers, and a warmed kernel is loaded from the cache afterwards."""

import textwrap

import _numba_warmup as warmup
import numpy as np
import pytest
from numba.core import types

from bisvm._numba import compiled_functions

SIGNATURES = [
    (types.float64, types.int64, types.boolean, types.int32, types.float32, types.uint64),
    (types.Array(types.float64, 2, "C"), types.Array(types.int32, 1, "A"),
     types.Array(types.float32, 3, "F")),
    (types.Array(types.float64, 2, "C", readonly=True),
     types.Array(types.int8, 1, "C", aligned=False),
     types.Array(types.bool_, 1, "C", readonly=True, aligned=False)),
    (types.Tuple((types.Array(types.float64, 2, "C"), types.int64,
                  types.Tuple((types.Array(types.int64, 1, "C"), types.float64)))),
     types.UniTuple(types.int64, 3), types.Tuple(())),
    (types.IntegerLiteral(0), types.IntegerLiteral(-7), types.BooleanLiteral(True),
     types.BooleanLiteral(False)),
    (),
]


@pytest.mark.parametrize("signature", SIGNATURES, ids=range(len(SIGNATURES)))
def test_signature_text_round_trips(signature):
    text = warmup.format_signature(signature)
    assert warmup.parse_signature(text) == signature
    assert text == "(" + ", ".join(str(t) for t in signature) + ")"


@pytest.mark.parametrize("text", ["float64", "(float64", "(float64) x", "(complex_thing)",
                                  "(array(float64, 1d, Q))", "(readonly int64)",
                                  "(UniTuple(int64 x n))", "(Literal[int](zero))"])
def test_malformed_signature_text_is_a_value_error(text):
    with pytest.raises(ValueError):
        warmup.parse_signature(text)


def test_committed_manifest_parses():
    entries = warmup.read_manifest()
    assert entries, "tests/numba_signatures.txt is missing or empty"
    for name, texts in entries.items():
        module, _, function = name.partition(":")
        assert module.startswith("bisvm.") and function, name
        for text in texts:
            warmup.parse_signature(text)


def test_manifest_write_read_round_trip(tmp_path):
    path = tmp_path / "signatures.txt"
    entries = {"pkg.mod:g": ["(int64)", "(float64)", "(int64)"], "pkg.mod:f": ["()"]}
    warmup.write_manifest(entries, path)
    assert warmup.read_manifest(path) == {"pkg.mod:f": ["()"],
                                          "pkg.mod:g": ["(float64)", "(int64)"]}
    assert warmup.read_manifest(tmp_path / "absent.txt") == {}


@pytest.fixture
def kernel_module(tmp_path, monkeypatch):
    """A throw-away module of compiled functions: ``top`` calls the inlined ``middle``,
    which calls ``leaf``; ``other`` calls nothing."""
    name = f"warmup_kernels_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        from bisvm._numba import njit

        @njit
        def leaf(x):
            return 2.0 * x

        @njit(inline="always")
        def middle(x):
            return leaf(x) + 1.0

        @njit
        def top(a):
            s = 0.0
            for v in a:
                s += middle(v)
            return s

        @njit
        def other(n):
            return n + 1
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_call_graph_follows_inlined_functions(kernel_module):
    names = [f"{kernel_module}:{f}" for f in ("top", "leaf", "other")]
    graph = warmup.call_graph(names + [f"{kernel_module}:gone", "no_such_module:f"])
    assert graph[names[0]] == {names[1]}  # through `middle`, which is not on the list
    assert graph[names[1]] == set() and graph[names[2]] == set()
    assert graph[f"{kernel_module}:gone"] == set()
    order = warmup.schedule_order({n: ["()"] for n in names}, graph)
    assert order[names[1]] < order[names[0]]


def test_stale_lines_are_skipped(kernel_module):
    result = warmup.compile_function(f"{kernel_module}:other",
                                     ["(int64, int64, int64)", "(not a type)"])
    assert result[:4] == (f"{kernel_module}:other", 0, 0, 2)
    assert warmup.compile_function(f"{kernel_module}:gone", ["(int64)"])[3] == 1
    assert warmup.compile_function("no_such_module:f", ["(int64)"])[3] == 1


def test_warm_compiles_once_then_loads(kernel_module, tmp_path):
    manifest = tmp_path / "signatures.txt"
    warmup.write_manifest({f"{kernel_module}:top": ["(array(float64, 1d, C))"],
                           f"{kernel_module}:leaf": ["(float64)"]}, manifest)
    first = {r[0]: r[1:4] for r in warmup.warm(1, path=manifest)}
    assert first == {f"{kernel_module}:top": (1, 0, 0), f"{kernel_module}:leaf": (1, 0, 0)}
    # this process never compiled them: both come from the cache the warm-up wrote
    for name in first:
        assert warmup.compile_function(name, warmup.read_manifest(manifest)[name])[1:4] == (
            0, 1, 0)
    assert __import__(kernel_module).top(np.ones(2)) == pytest.approx(6.0)


def test_loaded_signatures_lists_what_ran(kernel_module):
    module = __import__(kernel_module)
    assert module.top(np.arange(3.0)) == pytest.approx(2 * 3.0 + 3)
    recorded = warmup.loaded_signatures()
    assert recorded[f"{kernel_module}:top"] == ["(array(float64, 1d, C))"]
    assert any(d.py_func is module.top.py_func for d in compiled_functions())
