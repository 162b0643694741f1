"""The one place numba is imported and configured.

Every hot loop of the package is compiled through :func:`njit`, which always caches the
machine code on disk (``cache=True``) so that the test-suite and the CLI pay the
compilation cost once per machine, not once per process.
"""

from __future__ import annotations

import numba
from llvmlite import ir
from llvmlite.binding import llvm_version_info
from numba.core import cgutils, types
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic

__all__ = ["njit", "prange", "numba", "prefetch", "compiled_functions"]

prange = numba.prange

# every dispatcher made by njit, so that tooling (the test-suite's cache warm-up) can list
# the kernels and the signatures they were compiled for without importing each module
_DISPATCHERS = []


def njit(*args, **kwargs):
    """``numba.njit`` with ``cache=True`` and ``nogil=True`` unless told otherwise."""
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    if args and callable(args[0]) and len(args) == 1 and not kwargs.get("_signature"):
        return _registered(numba.njit(**kwargs)(args[0]))
    made = numba.njit(*args, **kwargs)
    if isinstance(made, Dispatcher):
        return _registered(made)
    # the decorator form, njit(...)(function): register what it returns
    return lambda function: _registered(made(function))


def _registered(dispatcher):
    _DISPATCHERS.append(dispatcher)
    return dispatcher


def compiled_functions():
    """The numba dispatchers made by :func:`njit` in this process, in creation order.

    Each one's ``signatures`` lists the argument types it has been compiled for or loaded
    from the cache with so far.
    """
    return list(_DISPATCHERS)


# LLVM >= 15 names the intrinsic by the opaque pointer type, older ones by i8*
_PREFETCH = ("llvm.prefetch.p0" if llvm_version_info >= (15,) else "llvm.prefetch.p0i8")


@intrinsic
def prefetch(typingctx, arr, idx):
    """``prefetch(a, i)``: hint the CPU to load the cache line of ``a[i]`` (LLVM's
    ``llvm.prefetch``, read, high locality). No effect on results; out-of-range indices are
    harmless (a prefetch never faults).

    Why: coordinate descent visits samples in random order, so on data larger than the
    cache every row starts with a memory stall; issuing the loads of the rows a few steps
    ahead overlaps those stalls with the current row's arithmetic.
    """
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        # the address only: no bounds check, and it is never dereferenced
        base = builder.ptrtoint(ary.data, ir.IntType(64))
        offset = builder.mul(builder.sext(args[1], ir.IntType(64)) if args[1].type.width < 64
                             else args[1], ir.Constant(ir.IntType(64), aryty.dtype.bitwidth // 8))
        i8p = ir.IntType(8).as_pointer()
        ptr = builder.inttoptr(builder.add(base, offset), i8p)
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, idx), codegen
