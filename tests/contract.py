"""The solver contract, checked on a result: one frozen
:class:`~bisvm.solvers.base.SolverResult` with typed fields and a named certificate.

Imported by the per-family contract tests (``tests/solvers/*/test_contract_*.py``);
``tests/`` is on ``sys.path`` through the root ``conftest.py``.
"""

import dataclasses
from types import MappingProxyType

import numpy as np
import pytest

from bisvm.solvers.base import CERTIFICATES, ConvergenceRecord, SolverResult


def check_contract(res, *, certificate, tol=None, scale=1.0, dual=False, active_set=False,
                   record_matches=True):
    """Assert that ``res`` keeps the solver contract.

    Parameters
    ----------
    res : SolverResult
    certificate : str
        The certificate the solver documents.
    tol : float, optional
        When given and ``res.converged``, the certificate must be at most ``tol · scale``.
    dual : bool
        The solver documents dual variables: ``dual_coef`` is a finite float array.
    active_set : bool or {"coef", "dual"}
        The solver documents an active set: an integer index array within the range of
        ``coef`` (``"coef"``) or of ``dual_coef`` (``"dual"``); ``True`` means ``"dual"``
        for a dual solver and ``"coef"`` otherwise.
    record_matches : bool
        The record's last certificate equals the result's (false for solvers that
        document a different per-iteration quantity).
    """
    assert isinstance(res, SolverResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.coef = None
    assert res.certificate == certificate and certificate in CERTIFICATES
    value = res.certificate_value
    assert np.isfinite(value) and value >= 0
    if tol is not None and res.converged:
        assert value <= tol * scale
    assert isinstance(res.stats, MappingProxyType)
    coef = np.asarray(res.coef)
    assert coef.dtype == np.float64 and np.all(np.isfinite(coef))
    assert np.all(np.isfinite(np.asarray(res.intercept, dtype=float)))
    assert isinstance(res.n_iter, (int, np.integer)) and res.n_iter >= 0
    assert isinstance(res.converged, (bool, np.bool_))
    if dual:
        a = np.asarray(res.dual_coef)
        assert a.dtype == np.float64 and np.all(np.isfinite(a))
    if active_set:
        idx = np.asarray(res.active_set)
        assert np.issubdtype(idx.dtype, np.integer)
        over = active_set if isinstance(active_set, str) else ("dual" if dual else "coef")
        bound = np.asarray(res.dual_coef if over == "dual" else coef).shape[-1]
        assert idx.size == 0 or (idx.min() >= 0 and idx.max() < bound)
    rec = res.record
    assert isinstance(rec, ConvergenceRecord)
    assert len(rec.objective) == len(rec.grad_norm) == len(rec.seconds) >= 1
    assert np.all(np.diff(rec.seconds) >= 0)
    if record_matches:
        assert rec.grad_norm[-1] == pytest.approx(value, rel=1e-12, abs=0)
