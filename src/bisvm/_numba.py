"""The one place numba is imported and configured.

Every hot loop of the package is compiled through :func:`njit`, which always caches the
machine code on disk (``cache=True``) so that the test-suite and the CLI pay the
compilation cost once per machine, not once per process.
"""

from __future__ import annotations

import numba

__all__ = ["njit", "prange", "numba"]

prange = numba.prange


def njit(*args, **kwargs):
    """``numba.njit`` with ``cache=True`` and ``nogil=True`` unless told otherwise."""
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    if args and callable(args[0]) and len(args) == 1 and not kwargs.get("_signature"):
        return numba.njit(**kwargs)(args[0])
    return numba.njit(*args, **kwargs)
