"""Phase timer of the compiled SMO loop: CPU cycles per phase into the ``prof`` counters.

The counts come from the CPU's cycle (time-stamp) counter, read by LLVM's
``readcyclecounter`` (:func:`cycles`); :func:`bisvm.solvers.dual.smo.solve_smo` converts
them to seconds.

The phases nest: a kernel column can be computed while a working set is selected, while
the active set shrinks or during the step, and the shrunk variables' gradients are
rebuilt inside shrinking. Each column and each rebuild is counted in its own phase
(``PROF_COLUMNS``, ``PROF_REBUILD``), so an enclosing phase is charged its elapsed cycles
less the growth of those two counters meanwhile, and the phases add up to the solve.

:data:`PROFILE` is read when the kernels are compiled: a module-level constant, so with
``False`` numba removes every counter read and update from the machine code (the
compiled kernels are cached on disk, so the cache must be cleared after changing it).
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from ..._numba import njit
from ._smo_layout import PROF_COLUMNS, PROF_REBUILD

#: whether the SMO kernels count cycles per phase (``stats["profile"]``)
PROFILE = True


@intrinsic
def _readcyclecounter(typingctx):
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=fnty)
        return builder.call(fn, [])

    return types.int64(), codegen


@njit
def cycles():
    """The CPU's cycle (time-stamp) counter; differences measure elapsed time."""
    return _readcyclecounter()


@njit(inline="always")
def tick():
    """The cycle counter when profiling, else 0 (no counter read)."""
    if PROFILE:
        return cycles()
    return 0


@njit(inline="always")
def charge(prof, phase, t0):
    """Add the cycles since ``t0`` (from :func:`tick`) to ``prof[phase]``."""
    if PROFILE:
        prof[phase] += cycles() - t0


@njit(inline="always")
def phase_start(prof):
    """The mark :func:`phase_stop` measures from: the cycle counter and the nested
    phases' counters."""
    if PROFILE:
        return cycles(), prof[PROF_COLUMNS], prof[PROF_REBUILD]
    return 0, 0, 0


@njit(inline="always")
def phase_stop(prof, phase, mark):
    """Add to ``prof[phase]`` the cycles since ``mark`` less those that the nested
    phases (kernel columns, gradient rebuilds) counted meanwhile."""
    if PROFILE:
        t0, c0, r0 = mark
        prof[phase] += cycles() - t0 - (prof[PROF_COLUMNS] - c0) - (prof[PROF_REBUILD] - r0)
