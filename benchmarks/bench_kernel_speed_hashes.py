"""Bit-level fingerprint of the SMO engine's solutions, to prove a refactor changes no bits.

A fixed list of dual solves (:func:`bisvm.solvers.dual.smo.solve_smo`) runs in one process,
single-threaded unless the fit asks for threads (the BLAS/OpenMP pools are pinned to one
thread before numpy is imported). For each solve it prints the first 16 hex digits of the
sha256 of ``dual_coef`` and of the dual gradient (C-contiguous float64 bytes, preceded by
the shape), the intercept and the iteration count, then one digest of all of them. Two
source trees that give the same digest solve every problem to the same bits.

The solves cover what the compiled SMO loop branches on: dense and CSR data; the linear,
polynomial, RBF, sigmoid, Laplacian and precomputed kernels; C-SVC (hinge), the L2-SVM
(squared hinge), ε-SVR, ν-SVC, ν-SVR and the one-class SVM; shrinking on and off; the
second-order and the maximal-violating-pair selection; a cache large enough for every
column (float64) and a small one (float32 columns, evictions); a warm start; two threads;
and the working-set solver (``method="working_set"``).

Usage::

    PYTHONPATH=/path/to/src python benchmarks/bench_kernel_speed_hashes.py --out a.json
    PYTHONPATH=/path/to/src python benchmarks/bench_kernel_speed_hashes.py --compare a.json
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

warnings.simplefilter("ignore")


def _digest(a):
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    h = hashlib.sha256(str(a.shape).encode())
    h.update(a.tobytes())
    return h.hexdigest()[:16]


def _data(n, d, seed, *, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    z = X @ w + 0.5 * np.sin(3 * X[:, 0]) + 0.3 * rng.standard_normal(n)
    y = np.where(z + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    if sparse:
        X[rng.random(X.shape) < 0.7] = 0.0
        X = sp.csr_matrix(X)
    return X, y, z


def fits():
    """``(name, problem builder, solve_smo keyword arguments)`` of every solve."""
    from bisvm.kernels import make_kernel
    from bisvm.solvers.dual.nu_smo import nu_svc_dual, nu_svr_dual, one_class_dual
    from bisvm.solvers.dual.smo import csvc_dual, epsilon_svr_dual

    out = []
    kernels = {"linear": {}, "poly": {"gamma": 0.1, "coef0": 1.0, "degree": 3},
               "rbf": {"gamma": 0.2}, "sigmoid": {"gamma": 0.01, "coef0": 0.0},
               "laplacian": {"gamma": 0.05}}
    for sparse in (False, True):
        X, y, z = _data(300, 8, 0, sparse=sparse)
        tag = "csr" if sparse else "dense"
        for kname, kw in kernels.items():
            k = make_kernel(kname, **kw)
            for C in (0.1, 10.0):
                out.append((f"{tag}/{kname}/csvc/C={C}",
                            lambda X=X, y=y, k=k, C=C: csvc_dual(X, y, k, C), {}))
        k = make_kernel("rbf", gamma=0.2)
        out += [
            (f"{tag}/rbf/l2svm", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 3.0,
                                                                 loss="squared_hinge"), {}),
            (f"{tag}/rbf/svr", lambda X=X, z=z, k=k: epsilon_svr_dual(X, z, k, 5.0, 0.2), {}),
            (f"{tag}/rbf/nusvc", lambda X=X, y=y, k=k: nu_svc_dual(X, y, k, 0.3), {}),
            (f"{tag}/rbf/nusvr", lambda X=X, z=z, k=k: nu_svr_dual(X, z, k, 2.0, 0.4), {}),
            (f"{tag}/rbf/oneclass", lambda X=X, k=k: one_class_dual(X, k, 0.2), {}),
            (f"{tag}/rbf/noshrink", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 30.0),
             {"shrinking": False}),
            (f"{tag}/rbf/mvp", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 30.0),
             {"selection": "max_violating_pair"}),
            (f"{tag}/rbf/smallcache", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 30.0),
             {"cache_size": 0.05}),
            (f"{tag}/rbf/threads", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 30.0),
             {"n_jobs": 2}),
            (f"{tag}/rbf/svr/smallcache", lambda X=X, z=z, k=k: epsilon_svr_dual(
                X, z, k, 5.0, 0.2), {"cache_size": 0.1}),
        ]
        alpha0 = np.zeros(300)
        pos, neg = np.flatnonzero(y > 0)[:5], np.flatnonzero(y < 0)[:5]
        alpha0[pos] = 0.5
        alpha0[neg] = 0.5
        out.append((f"{tag}/rbf/warm", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 1.0),
                    {"alpha0": alpha0}))
    X, y, z = _data(250, 2, 1)
    k = make_kernel("rbf", gamma=2.5)
    for C in (1.0, 100.0, 1000.0):
        out.append((f"lowdim/rbf/C={C}", lambda X=X, y=y, k=k, C=C: csvc_dual(X, y, k, C), {}))
    K = np.exp(-0.3 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    kp = make_kernel("precomputed")
    out.append(("precomputed/csvc", lambda K=K, y=y, kp=kp: csvc_dual(K, y, kp, 10.0), {}))
    Xr = X.copy()
    Xr.setflags(write=False)
    out.append(("readonly/rbf", lambda Xr=Xr, y=y, k=k: csvc_dual(Xr, y, k, 10.0), {}))
    X, y, z = _data(1200, 10, 2)
    k = make_kernel("rbf", gamma=0.1)
    out += [
        ("mid/rbf/csvc", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 10.0), {}),
        ("mid/rbf/csvc/smallcache", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 10.0),
         {"cache_size": 2.0}),
        ("mid/rbf/working_set", lambda X=X, y=y, k=k: csvc_dual(X, y, k, 10.0),
         {"method": "working_set"}),
        ("mid/rbf/svr/working_set", lambda X=X, z=z, k=k: epsilon_svr_dual(X, z, k, 3.0, 0.1),
         {"method": "working_set"}),
    ]
    return out


def run():
    from bisvm.solvers.dual.smo import solve_smo

    rows = {}
    for name, build, kw in fits():
        kw = {"method": "smo", **kw}
        try:
            r = solve_smo(build(), tol=1e-3, **kw)
            rows[name] = [_digest(r.dual_coef), _digest(r.stats["dual_gradient"]),
                          _digest([r.intercept]), int(r.n_iter)]
        except Exception as error:  # the same error must recur
            rows[name] = [f"error: {error}"]
        print(name, *rows[name], flush=True)
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    return rows, digest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the hashes to this JSON file")
    ap.add_argument("--compare", help="compare with an earlier --out file (exit 1 on change)")
    ap.add_argument("--signatures", help="write the numba signatures the solves used to this "
                    "JSON file (compiled or loaded from the cache), and print their count")
    args = ap.parse_args(argv)
    import bisvm

    rows, digest = run()
    print(f"{len(rows)} solves, digest {digest} ({bisvm.__file__})")
    if args.signatures:
        from bisvm._numba import compiled_functions

        sigs = {f"{d.py_func.__module__}:{d.py_func.__name__}": [str(s) for s in d.signatures]
                for d in compiled_functions() if d.signatures}
        with open(args.signatures, "w") as fh:
            json.dump(sigs, fh, indent=0)
        print(f"{sum(map(len, sigs.values()))} numba signatures in {len(sigs)} functions")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"digest": digest, "rows": rows, "bisvm_file": bisvm.__file__}, fh,
                      indent=1)
    if args.compare:
        with open(args.compare) as fh:
            old = json.load(fh)["rows"]
        bad = sorted(k for k in set(old) | set(rows) if old.get(k) != rows.get(k))
        for k in bad:
            print("CHANGED", k, old.get(k), rows.get(k))
        if bad:
            sys.exit(1)
        print("identical to", args.compare)


if __name__ == "__main__":
    main()
