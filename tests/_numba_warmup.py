"""Compile the package's numba kernels into their on-disk cache, split over processes.

Every kernel of the package is compiled lazily at its first call and cached on disk
(:mod:`bisvm._numba`). On a machine whose cache is empty (a fresh clone in CI), the
workers of a parallel test run (pytest-xdist) reach the same kernels at about the same
time and both compile them, so the compilation is paid once per worker instead of once.
This module compiles the kernels before the workers start, handing the signatures out to
a pool of processes one function at a time, so that the cost is divided among the cores
instead of repeated on each; the workers then load every kernel from the cache.

The signatures live in ``numba_signatures.txt`` beside this file, one
``module:function<TAB>(argument types)`` per line, the types written as numba prints
them (``array(float64, 1d, C)``, ``readonly array(int32, 1d, C)``,
``Tuple(int64, float64)``, ``UniTuple(int64 x 2)``, ``Literal[int](0)``, ``bool``).
The list only saves time: a stale line (a function renamed, an argument added) is skipped
and a kernel missing from it is compiled lazily as before, so results never depend on it.
Regenerate it after changing which kernels exist or the types they are called with::

    NUMBA_CACHE_DIR=$(mktemp -d) BISVM_NUMBA_WARMUP=0 python -m pytest -n 2 --numba-record

which writes every signature compiled during the run, those of kernels compiled inside
other kernels included (see ``tests/conftest.py``).

Run by hand, ``python tests/_numba_warmup.py [-j N]`` warms the cache and prints what it
compiled.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path

MANIFEST = Path(__file__).with_name("numba_signatures.txt")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Parser:
    """Recursive-descent reader of the type strings that numba's ``str()`` produces."""

    def __init__(self, text):
        self.text = text
        self.pos = 0

    def expect(self, token):
        if not self.text.startswith(token, self.pos):
            raise ValueError(f"expected {token!r} at {self.pos} in {self.text!r}")
        self.pos += len(token)

    def peek(self, token):
        return self.text.startswith(token, self.pos)

    def number(self):
        match = re.compile(r"-?\d+").match(self.text, self.pos)
        if match is None:
            raise ValueError(f"expected an integer at {self.pos} in {self.text!r}")
        self.pos = match.end()
        return int(match.group())

    def type_list(self, close):
        items = []
        while not self.peek(close):
            items.append(self.type())
            if not self.peek(close):
                self.expect(", ")
        self.expect(close)
        return items

    def type(self):
        from numba.core import types

        readonly = aligned = False
        while self.peek("readonly ") or self.peek("unaligned "):
            if self.peek("readonly "):
                readonly = True
                self.expect("readonly ")
            else:
                aligned = True
                self.expect("unaligned ")
        if self.peek("array("):
            self.expect("array(")
            dtype = self.type()
            self.expect(", ")
            ndim = self.number()
            self.expect("d, ")
            layout = self.text[self.pos]
            if layout not in "CFA":
                raise ValueError(f"unknown array layout {layout!r} in {self.text!r}")
            self.pos += 1
            self.expect(")")
            return types.Array(dtype, ndim, layout, readonly=readonly, aligned=not aligned)
        if readonly or aligned:
            raise ValueError(f"only arrays are readonly or unaligned: {self.text!r}")
        if self.peek("Tuple("):
            self.expect("Tuple(")
            return types.Tuple(tuple(self.type_list(")")))
        if self.peek("UniTuple("):
            self.expect("UniTuple(")
            element = self.type()
            self.expect(" x ")
            count = self.number()
            self.expect(")")
            return types.UniTuple(element, count)
        if self.peek("Literal[int]("):
            self.expect("Literal[int](")
            value = self.number()
            self.expect(")")
            return types.IntegerLiteral(value)
        if self.peek("Literal[bool]("):
            self.expect("Literal[bool](")
            value = self.text.startswith("True", self.pos)
            self.expect("True" if value else "False")
            self.expect(")")
            return types.BooleanLiteral(value)
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise ValueError(f"expected a type at {self.pos} in {self.text!r}")
        self.pos = match.end()
        name = "boolean" if match.group() == "bool" else match.group()
        scalar = getattr(types, name, None)
        if not isinstance(scalar, (types.Number, types.Boolean, types.NoneType)):
            raise ValueError(f"unknown scalar type {match.group()!r} in {self.text!r}")
        return scalar


def cache_looks_warm(entries):
    """Whether every listed function already has an index in numba's cache that is newer
    than its source file, read from file names and times only (nothing is imported).

    Only the default cache (``__pycache__`` beside each source file) is inspected; with
    ``NUMBA_CACHE_DIR`` set the answer is ``False`` and the warm-up runs (it then only
    loads what is cached).
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return False
    tag = f".py{sys.version_info.major}{sys.version_info.minor}.nbi"
    roots, listings = {}, {}
    for name in entries:
        module_name, _, qualname = name.partition(":")
        top = module_name.split(".")[0]
        if top not in roots:
            spec = importlib.util.find_spec(top)
            roots[top] = Path(spec.origin).parent if spec and spec.origin else None
        if roots[top] is None:
            return False
        parts = module_name.split(".")[1:]
        source = roots[top].joinpath(*parts).with_suffix(".py")
        if not source.exists():
            continue  # a stale line: nothing to warm
        cache = source.parent / "__pycache__"
        if cache not in listings:
            listings[cache] = {}
            for index in cache.glob(f"*{tag}"):
                function = index.name[:-len(tag)].rpartition("-")[0]
                mtime = index.stat().st_mtime
                listings[cache][function] = max(mtime, listings[cache].get(function, mtime))
        newest = listings[cache].get(f"{parts[-1]}.{qualname}")
        if newest is None or newest < source.stat().st_mtime:
            return False
    return True


def format_signature(signature):
    """The argument types of one compiled overload as one line, in numba's own notation."""
    return "(" + ", ".join(str(t) for t in signature) + ")"


def parse_signature(text):
    """Inverse of :func:`format_signature`: a tuple of numba types.

    Raises
    ------
    ValueError
        If the text is not a parenthesised list of types this reader knows.
    """
    parser = _Parser(text.strip())
    parser.expect("(")
    signature = tuple(parser.type_list(")"))
    if parser.pos != len(parser.text):
        raise ValueError(f"trailing text after the signature {text!r}")
    return signature


def read_manifest(path=MANIFEST):
    """``{"module:function": [signature text, ...]}`` in file order; ``{}`` if no file."""
    entries = {}
    if not Path(path).exists():
        return entries
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, signature = line.partition("\t")
        entries.setdefault(name.strip(), []).append(signature.strip())
    return entries


def write_manifest(entries, path=MANIFEST):
    """Write ``{"module:function": iterable of signature texts}`` sorted, one per line."""
    lines = ["# numba signatures compiled by tests/_numba_warmup.py before a parallel test run;",
             "# regenerate with: NUMBA_CACHE_DIR=$(mktemp -d) BISVM_NUMBA_WARMUP=0 "
             "python -m pytest -n 2 --numba-record"]
    for name in sorted(entries):
        lines.extend(f"{name}\t{signature}" for signature in sorted(set(entries[name])))
    Path(path).write_text("\n".join(lines) + "\n")


def loaded_signatures():
    """Signatures of every package kernel compiled or loaded in this process so far."""
    from bisvm._numba import compiled_functions

    entries = {}
    for dispatcher in compiled_functions():
        function = dispatcher.py_func
        if "<locals>" in function.__qualname__ or not dispatcher.signatures:
            continue
        name = f"{function.__module__}:{function.__qualname__}"
        entries.setdefault(name, []).extend(format_signature(s) for s in dispatcher.signatures)
    return entries


def compile_function(name, signatures):
    """Compile (or load from the cache) one function for the given signature texts.

    Returns ``(name, compiled, loaded, skipped, seconds, cpu_seconds)``: overloads
    compiled here, overloads found in the cache, signature lines that no longer fit the
    function, and the wall and CPU time it took.
    """
    start, cpu = time.perf_counter(), time.process_time()
    import numba

    # starts numba's threading layer, whose symbols a cached parallel kernel links against;
    # a package call always goes through it first, a bare compile() does not
    numba.get_num_threads()
    module_name, _, qualname = name.partition(":")
    try:
        dispatcher = getattr(importlib.import_module(module_name), qualname)
        before = _cache_counts(dispatcher)
    except (ImportError, AttributeError):
        return (name, 0, 0, len(signatures), time.perf_counter() - start,
                time.process_time() - cpu)
    skipped = 0
    for text in signatures:
        try:
            dispatcher.compile(parse_signature(text))
        except Exception:  # a stale line must never stop the run; the kernel compiles lazily
            skipped += 1
    after = _cache_counts(dispatcher)
    return (name, after[0] - before[0], after[1] - before[1], skipped,
            time.perf_counter() - start, time.process_time() - cpu)


def _cache_counts(dispatcher):
    """(overloads compiled, overloads loaded from the cache) so far in this process."""
    loaded = sum(dispatcher.stats.cache_hits.values())
    return len(dispatcher.overloads) - loaded, loaded


def call_graph(names):
    """``{name: names of the list it calls}``, directly or through functions off the list.

    Read from each function's bytecode: the global names it loads that are numba
    dispatchers (inlined functions included, since their callees become the caller's).
    """
    from numba.core.dispatcher import Dispatcher

    def key(dispatcher):
        return f"{dispatcher.py_func.__module__}:{dispatcher.py_func.__qualname__}"

    def direct(dispatcher):
        function = dispatcher.py_func
        found = {}
        for name in function.__code__.co_names:
            value = function.__globals__.get(name)
            if isinstance(value, Dispatcher):
                found[key(value)] = value
        return found

    listed = set(names)
    graph = {}
    for name in names:
        module_name, _, qualname = name.partition(":")
        try:
            root = getattr(importlib.import_module(module_name), qualname)
        except (ImportError, AttributeError):
            graph[name] = set()
            continue
        seen, stack = {name}, [root]
        while stack:
            for callee_name, callee in direct(stack.pop()).items():
                if callee_name not in seen:
                    seen.add(callee_name)
                    stack.append(callee)
        graph[name] = (seen - {name}) & listed
    return graph


def schedule_order(entries, graph):
    """Priority of each function: the longest chain of callers above it first (its
    callers wait for it), then the most signatures."""
    callers = {name: [] for name in entries}
    for name, callees in graph.items():
        for callee in callees:
            callers[callee].append(name)
    depth = {}

    def chain(name, visiting=()):
        if name not in depth:
            above = [chain(c, visiting + (name,)) for c in callers[name] if c not in visiting]
            depth[name] = 1 + max(above, default=0)
        return depth[name]

    return {name: (-chain(name), -len(entries[name]), name) for name in entries}


def warm(processes=2, path=MANIFEST, log=None):
    """Compile every signature of the manifest into the cache with ``processes`` processes.

    A function is handed out only once the functions it calls are in the cache, so that
    its compilation loads them instead of compiling them again (each process would
    otherwise compile the shared callees of its own callers); among the functions ready,
    those with the longest chain of callers waiting on them go first. Returns the list of
    :func:`compile_function` results.
    """
    entries = read_manifest(path)
    if not entries:
        return []
    results = []
    # spawn, not fork: the caller may be a pytest process with threads and imported state
    with ProcessPoolExecutor(max_workers=max(1, processes),
                             mp_context=get_context("spawn")) as pool:
        graph = pool.submit(call_graph, list(entries)).result()
        priority = schedule_order(entries, graph)
        pending, done, running = set(entries), set(), {}
        while pending or running:
            ready = sorted((n for n in pending if graph.get(n, set()) <= done),
                           key=priority.get)
            if not ready and not running:  # a cycle of calls: break it at the first
                ready = sorted(pending, key=priority.get)[:1]
            for name in ready[:max(1, processes) - len(running)]:
                pending.discard(name)
                running[pool.submit(compile_function, name, entries[name])] = name
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                done.add(running.pop(future))
                results.append(future.result())
    if log is not None:
        for name, compiled, loaded, skipped, seconds, cpu in results:
            log(f"{seconds:7.2f} s ({cpu:6.2f} s CPU)  compiled {compiled:2d}  "
                f"loaded {loaded:2d}  skipped {skipped:2d}  {name}")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = warm(args.processes, log=print)
    print(f"{len(results)} functions, "
          f"{sum(r[1] for r in results)} overloads compiled, "
          f"{sum(r[2] for r in results)} loaded, {sum(r[3] for r in results)} skipped, "
          f"{time.perf_counter() - start:.1f} s with {args.processes} processes")


if __name__ == "__main__":
    sys.exit(main())
