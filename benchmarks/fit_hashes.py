"""Bit-level fingerprint of ``BilevelSVC``'s fits, to prove that a refactor changes no bits.

A fixed list of fits (over 200) is run in one process, single-threaded (the BLAS/OpenMP
pools are pinned to one thread before numpy is imported), warnings silenced. For each fit
it prints a short sha256 (16 hex digits) of ``coef_``, of ``intercept_`` and of
``penalty_weights_`` (each as C-contiguous float64 bytes, preceded by its shape), then one
digest of all of them. Two source trees that give the same digest fit every problem to the
same bits.

The fits:

* ``panel/auto``: ``BilevelSVC(random_state=seed)`` on every classification problem of
  the held-out panel (``bench_panel_data.py``: its real tables and synthetic problems, its
  70/30 stratified split and training-row scaler), split seeds 0-4;
* ``panel/scalar``, ``panel/vector``, ``panel/group``: the other models on a subset (the
  group model with the table's ``feature_groups``);
* ``raw``: unscaled tables (``BilevelSVC`` standardises inside);
* ``wide``: ``bench_wide``'s problems (``_wide_data.py``) at sizes that fit in seconds:
  d > n dense, sparse tf-idf CSR (conjugate-gradient solver), tall dense;
* ``var``: one option at a time: sparse CSR input, ``sample_weight``,
  ``class_weight``, one-vs-rest and shared multiclass, ``refit``, ``null_test=False``,
  every criterion, ``learn_l2_penalty=True``, every lower-level solver, exact L1,
  the scalar and refinement rules, thresholds, sample groups with ``GroupKFold``,
  ``n_jobs=2``, and others.

Usage::

    PYTHONPATH=/path/to/src python benchmarks/fit_hashes.py --out results/fit_hashes_X.json
    PYTHONPATH=/path/to/src python benchmarks/fit_hashes.py --compare OLD.json
    PYTHONPATH=/path/to/src python benchmarks/fit_hashes.py --only var/criterion
    PYTHONPATH=/old/src python benchmarks/fit_hashes.py --arrays old.npz
    PYTHONPATH=/new/src python benchmarks/fit_hashes.py --compare-arrays old.npz
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
           "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import functools  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

warnings.simplefilter("ignore")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_panel_data as data  # noqa: E402
from _wide_data import QUICK, make_problem  # noqa: E402
from _wide_data import _dense as wide_dense  # noqa: E402

SEEDS = range(5)
CLASSIFICATION = tuple(k for k in data.problems()
                       if k not in ("diabetes", "boston", "synreg80x60"))
REAL = tuple(k for k in CLASSIFICATION if not data.problems()[k][1])
GROUPED = ("bfi", "email", "nhefs", "syn600x40")
# bench_wide's problems, shrunk so that each fit takes seconds on one core; the solver
# that "auto" picks for each is the one of the full size (Woodbury for d > n, CG for the
# large sparse one, dense Newton for the tall one)
WIDE = {
    "leukemia": QUICK["leukemia"],  # 72 x 1,500 dense
    "wide": QUICK["wide"],  # 200 x 500 dense
    "sparse": QUICK["sparse"],  # 3,000 x 8,000 CSR
    "tall": wide_dense(5000, 10, 100, 20, 0.4),  # 5,000 x 100 dense
}


@functools.cache
def panel(name, seed, raw=False):
    """(X_train, y_train, table) of the panel's split ``seed``."""
    table, Xtr, _, ytr, _ = data.load(name, seed, raw=raw)
    return Xtr, ytr, table


@functools.cache
def wide(name, seed):
    """(X_train, y_train) of bench_wide's problem ``name`` at the sizes of ``WIDE``."""
    Xtr, _, ytr, _, _ = make_problem(name, seed, WIDE[name])
    return Xtr, ytr


@functools.cache
def multiclass(seed, n_classes=4):
    """A 300 x 20 problem with ``n_classes`` classes, 6 informative features."""
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n_samples=300, n_features=20, n_informative=6,
                               n_redundant=0, n_classes=n_classes, n_clusters_per_class=1,
                               class_sep=1.0, random_state=100 + seed)
    return StandardScaler().fit_transform(X), y


def row_weights(n, seed):
    """Positive row weights in [0.2, 3), some rows at exactly zero weight."""
    rng = np.random.default_rng(500 + seed)
    w = rng.uniform(0.2, 3.0, n)
    w[rng.random(n) < 0.05] = 0.0
    return w


def sample_groups(n, seed, k=25):
    """Sample group labels (k groups of consecutive-ish rows) for ``GroupKFold``."""
    rng = np.random.default_rng(700 + seed)
    return rng.integers(0, k, n)


# --- the fit list: name -> thunk returning (estimator, X, y, fit keyword arguments) ------


def _svc(**kw):
    from bisvm import BilevelSVC

    return BilevelSVC(**kw)


def _panel_fit(name, seed, raw=False, sparse=False, **kw):
    def thunk():
        X, y, table = panel(name, seed, raw)
        args = dict(kw)
        if args.get("model") == "group" or args.pop("with_groups", False):
            args["feature_groups"] = table.groups
        return _svc(random_state=seed, **args), (sp.csr_matrix(X) if sparse else X), y, {}
    return thunk


def _wide_fit(name, seed, weighted=False, **kw):
    def thunk():
        X, y = wide(name, seed)
        fkw = {"sample_weight": row_weights(X.shape[0], seed)} if weighted else {}
        return _svc(random_state=seed, **kw), X, y, fkw
    return thunk


def panel_fits():
    """The held-out panel: every classification problem and seed, and model subsets."""
    fits = {}
    for name in CLASSIFICATION:
        for s in SEEDS:
            fits[f"panel/auto/{name}/s{s}"] = _panel_fit(name, s)
        for s in (0, 1):
            fits[f"panel/scalar/{name}/s{s}"] = _panel_fit(name, s, model="scalar")
    for name in ("breast_cancer", "wine", "bdims", "syn600x40", "seed004_200x400"):
        fits[f"panel/vector/{name}/s0"] = _panel_fit(name, 0, model="vector")
    for name in GROUPED:
        for s in (0, 1):
            fits[f"panel/group/{name}/s{s}"] = _panel_fit(name, s, model="group")
        fits[f"panel/auto_groups/{name}/s2"] = _panel_fit(name, 2, with_groups=True)
    return fits


def raw_fits():
    """Unscaled tables: the estimator's own standardisation on the training rows."""
    fits = {}
    for name in ("breast_cancer", "wine", "pima", "creditcard", "email", "bdims", "nhefs"):
        for s in (0, 1):
            fits[f"raw/auto/{name}/s{s}"] = _panel_fit(name, s, raw=True)
    for name in ("breast_cancer", "creditcard"):
        fits[f"raw/scalar/{name}/s0"] = _panel_fit(name, 0, raw=True, model="scalar")
    fits["raw/group/email/s0"] = _panel_fit("email", 0, raw=True, model="group")
    fits["raw/sparse/email/s0"] = _panel_fit("email", 0, raw=True, sparse=True)
    fits["raw/sparse/creditcard/s1"] = _panel_fit("creditcard", 1, raw=True, sparse=True)
    return fits


def wide_fits():
    """bench_wide's problems: d > n dense, sparse CSR, tall dense."""
    fits = {}
    for name in WIDE:
        for s in (0, 1):
            fits[f"wide/auto/{name}/s{s}"] = _wide_fit(name, s)
        fits[f"wide/scalar/{name}/s0"] = _wide_fit(name, 0, model="scalar")
    fits["wide/refit_true/leukemia/s0"] = _wide_fit("leukemia", 0, refit=True)
    fits["wide/learn_l2/leukemia/s1"] = _wide_fit("leukemia", 1, learn_l2_penalty=True)
    fits["wide/lbfgs/wide/s0"] = _wide_fit("wide", 0, solver="lbfgs")
    fits["wide/newton/wide/s1"] = _wide_fit("wide", 1, solver="newton")
    fits["wide/null_off/wide/s0"] = _wide_fit("wide", 0, null_test=False)
    fits["wide/n_jobs2/tall/s0"] = _wide_fit("tall", 0, n_jobs=2)
    fits["wide/sample_weight/sparse/s1"] = _wide_fit("sparse", 1, weighted=True)
    fits["wide/class_weight_balanced/leukemia/s0"] = _wide_fit("leukemia", 0,
                                                               class_weight="balanced")
    return fits


def _weighted(name, seed, sparse=False, **kw):
    def thunk():
        est, X, y, fkw = _panel_fit(name, seed, sparse=sparse, **kw)()
        return est, X, y, {**fkw, "sample_weight": row_weights(X.shape[0], seed)}
    return thunk


def _grouped(name, seed, **kw):
    def thunk():
        from sklearn.model_selection import GroupKFold

        est, X, y, fkw = _panel_fit(name, seed, **kw)()
        est.set_params(cv=GroupKFold(n_splits=4))
        return est, X, y, {**fkw, "groups": sample_groups(X.shape[0], seed)}
    return thunk


def _multiclass_fit(seed, **kw):
    def thunk():
        X, y = multiclass(seed)
        return _svc(random_state=seed, **kw), X, y, {}
    return thunk


CRITERIA = ("scaled_margin", "margin", "holdout", "kfold", "logistic", "holdout_logistic",
            "holdout_margin", "holdout_scaled_margin")


def variant_fits():
    """One option at a time, on small problems."""
    f = {}
    for name in ("breast_cancer", "syn600x40", "seed004_200x400", "wine"):
        f[f"var/sparse_csr/{name}/s0"] = _panel_fit(name, 0, sparse=True)
    f["var/sparse_csr_scalar/pima/s1"] = _panel_fit("pima", 1, sparse=True, model="scalar")
    for name in ("breast_cancer", "pima", "wine", "syn600x40"):
        f[f"var/sample_weight/{name}/s0"] = _weighted(name, 0)
    f["var/sample_weight_csr/bdims/s1"] = _weighted("bdims", 1, sparse=True)
    f["var/sample_weight_scalar/email/s1"] = _weighted("email", 1, model="scalar")
    for name in ("pima", "creditcard", "wine", "email"):
        f[f"var/class_weight_balanced/{name}/s0"] = _panel_fit(name, 0, class_weight="balanced")
    f["var/class_weight_dict/breast_cancer/s1"] = _panel_fit(
        "breast_cancer", 1, class_weight={0: 1.0, 1: 2.5})
    f["var/class_weight_balanced_crit/affairs/s0"] = _panel_fit(
        "affairs", 0, class_weight="balanced", balanced_criterion=True)
    for s in (0, 1):
        f[f"var/multiclass_ovr/syn4class/s{s}"] = _multiclass_fit(s)
        f[f"var/multiclass_shared/syn4class/s{s}"] = _multiclass_fit(s, multiclass="shared")
        f[f"var/multiclass_shared/wine/s{s}"] = _panel_fit("wine", s, multiclass="shared")
    f["var/multiclass_shared_scalar/wine/s2"] = _panel_fit("wine", 2, multiclass="shared",
                                                           model="scalar")
    f["var/multiclass_ovr_scalar/syn4class/s2"] = _multiclass_fit(2, model="scalar")
    f["var/multiclass_shared_vector/syn4class/s2"] = _multiclass_fit(2, multiclass="shared",
                                                                     model="vector")
    for name in ("breast_cancer", "syn600x40", "bfi"):
        f[f"var/refit_true/{name}/s0"] = _panel_fit(name, 0, refit=True)
        f[f"var/refit_false/{name}/s0"] = _panel_fit(name, 0, refit=False)
    f["var/refit_true_group/email/s1"] = _panel_fit("email", 1, model="group", refit=True)
    for name in ("pima", "frogs", "affairs", "creditcard", "mroz"):
        f[f"var/null_test_off/{name}/s0"] = _panel_fit(name, 0, null_test=False)
    for crit in CRITERIA[1:]:
        for name in ("breast_cancer", "syn600x40"):
            f[f"var/criterion_{crit}/{name}/s0"] = _panel_fit(name, 0, criterion=crit)
        f[f"var/criterion_{crit}_scalar/pima/s1"] = _panel_fit("pima", 1, criterion=crit,
                                                               model="scalar")
    for name in ("breast_cancer", "syn600x40", "bdims"):
        f[f"var/learn_l2/{name}/s0"] = _panel_fit(name, 0, learn_l2_penalty=True)
    f["var/learn_l2_scalar/pima/s0"] = _panel_fit("pima", 0, learn_l2_penalty=True,
                                                  model="scalar")
    for solver, name in (("lbfgs", "breast_cancer"), ("lbfgs", "syn600x40"),
                         ("newton", "seed004_200x400"), ("woodbury", "seed004_200x400"),
                         ("cg", "syn600x40"), ("woodbury", "bdims")):
        f[f"var/solver_{solver}/{name}/s0"] = _panel_fit(name, 0, solver=solver)
    f["var/n_jobs2/syn600x40/s0"] = _panel_fit("syn600x40", 0, n_jobs=2)
    f["var/n_jobs2/wine/s1"] = _panel_fit("wine", 1, n_jobs=2)
    f.update(_option_fits())
    return f


def _option_fits():
    """The remaining constructor options, one each."""
    f = {}
    options = {
        "exact_l1": ("breast_cancer", {"l1_smoothing": 0.0}),
        "exact_l1_group": ("syn600x40", {"l1_smoothing": 0.0, "model": "group"}),
        "warm_init_off": ("syn600x40", {"warm_init": False}),
        "init_penalty": ("breast_cancer", {"init_penalty": 0.01}),
        "early_stopping_on": ("bdims", {"early_stopping": True}),
        "early_stopping_off": ("bdims", {"early_stopping": False}),
        "scalar_rule_min": ("pima", {"scalar_rule": "min", "model": "scalar"}),
        "scalar_rule_1se": ("pima", {"scalar_rule": "1se", "model": "scalar"}),
        "scalar_rule_1se_error": ("breast_cancer", {"scalar_rule": "1se_error"}),
        "refinement_min": ("syn600x40", {"refinement_rule": "min"}),
        "balanced_criterion": ("creditcard", {"balanced_criterion": True}),
        "threshold_zero": ("pima", {"threshold": "zero"}),
        "threshold_1se_balanced": ("affairs", {"threshold": "1se_balanced"}),
        "threshold_1se_gated": ("affairs", {"threshold": "1se_gated"}),
        "cv_repeats2": ("pima", {"cv_repeats": 2}),
        "cv3": ("breast_cancer", {"cv": 3}),
        "hinge_smoothing": ("syn600x40", {"hinge_smoothing": 0.5}),
        "support_threshold": ("breast_cancer", {"support_threshold": 0.05}),
        "l2_penalty": ("bdims", {"l2_penalty": 0.1}),
        "max_iter5": ("syn600x40", {"max_iter": 5}),
        "tol": ("breast_cancer", {"tol": 1e-6}),
        "validation_fraction": ("pima", {"validation_fraction": 0.3,
                                         "criterion": "holdout"}),
        "standardize_off": ("breast_cancer", {"standardize": False}),
        "thesis": ("breast_cancer", {"standardize": False, "penalize_intercept": True,
                                     "warm_init": False, "init_penalty": 0.01,
                                     "criterion": "holdout", "refit": True}),
    }
    for key, (name, kw) in options.items():
        f[f"var/{key}/{name}/s0"] = _panel_fit(name, 0, **kw)
    f["var/raw_standardize_off/pima/s1"] = _panel_fit("pima", 1, raw=True, standardize=False)
    f["var/group_kfold/syn600x40/s1"] = _grouped("syn600x40", 1)
    f["var/group_kfold_scalar/breast_cancer/s1"] = _grouped("breast_cancer", 1,
                                                            model="scalar")
    return f


def all_fits():
    fits = {}
    for part in (panel_fits, raw_fits, wide_fits, variant_fits):
        block = part()
        assert not set(block) & set(fits), "duplicate fit names"
        fits.update(block)
    return fits


# --- hashing and the run ------------------------------------------------------------------


def short_hash(a):
    """First 16 hex digits of sha256(shape, C-contiguous float64 bytes); None for None."""
    if a is None:
        return None
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    h = hashlib.sha256(repr(a.shape).encode())
    h.update(a.tobytes())
    return h.hexdigest()[:16]


def fit_record(thunk, arrays=None, name=None):
    """The three hashes of one fit, or its error in each of them; with ``arrays`` (a
    dict), also its ``coef_``, ``intercept_`` and ``support_`` under ``name``."""
    try:
        est, X, y, kw = thunk()
        # the data are cached across fits: a fit that wrote into its input must not
        # change the next one's
        est.fit(X.copy(), y.copy(), **kw)
        if arrays is not None:
            arrays[f"{name}|coef"] = np.asarray(est.coef_, dtype=np.float64)
            arrays[f"{name}|intercept"] = np.atleast_1d(np.asarray(est.intercept_, float))
            arrays[f"{name}|support"] = np.asarray(est.support_, dtype=bool)
        return {"coef": short_hash(est.coef_), "intercept": short_hash(est.intercept_),
                "beta": short_hash(getattr(est, "penalty_weights_", None))}
    except Exception as exc:  # an error is a fingerprint too: the same error must recur
        msg = f"error {type(exc).__name__}: {exc}"[:200]
        return {"coef": msg, "intercept": msg, "beta": msg}


def compare_arrays(arrays, old_path):
    """How far the fits moved from ``old_path``'s (an ``--arrays`` file), for a change
    that alters bits on purpose: per fit the largest coefficient difference relative to
    the largest coefficient, and whether the selected features are the same."""
    old = np.load(old_path)
    names = sorted({k.split("|")[0] for k in arrays} & {k.split("|")[0] for k in old.files})
    rel, same_support = [], 0
    for name in names:
        a, b = arrays[f"{name}|coef"], old[f"{name}|coef"]
        if a.shape != b.shape:
            rel.append(np.inf)
            continue
        scale = max(float(np.max(np.abs(b))), 1e-300)
        rel.append(float(np.max(np.abs(a - b))) / scale)
        if np.array_equal(arrays[f"{name}|support"], old[f"{name}|support"]):
            same_support += 1
        else:
            moved = np.flatnonzero(arrays[f"{name}|support"] != old[f"{name}|support"])
            print(f"SUPPORT {name}: {moved.size} features differ, relative coef "
                  f"difference {rel[-1]:.2e}", flush=True)
    rel = np.asarray(rel)
    print(f"compare arrays with {old_path}: {len(names)} fits; selected features the same "
          f"on {same_support}; largest coefficient difference relative to the largest "
          f"coefficient: median {np.median(rel):.2e}, 90th percentile "
          f"{np.quantile(rel, 0.9):.2e}, max {rel.max():.2e}; "
          f"{int(np.sum(rel <= 1e-6))} fits within 1e-6", flush=True)


def combined_digest(fits):
    h = hashlib.sha256()
    for name in sorted(fits):
        r = fits[name]
        h.update(f"{name}\t{r['coef']}\t{r['intercept']}\t{r['beta']}\n".encode())
    return h.hexdigest()


def source_commit(path):
    """``git describe``-like identity of the tree holding ``path``: HEAD, plus
    ``+dirty`` when its ``src`` has uncommitted changes."""
    root = Path(path).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "."],
                               text=True, capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def compare(fits, old_path, subset):
    """Names of the fits whose hashes differ from (or are missing in) ``old_path``'s."""
    old = json.loads(Path(old_path).read_text())["fits"]
    names = sorted(set(fits) | (set() if subset else set(old)))
    bad = []
    for name in names:
        a, b = fits.get(name), old.get(name)
        if a != b:
            bad.append(name)
            parts = [k for k in ("coef", "intercept", "beta")
                     if (a or {}).get(k) != (b or {}).get(k)]
            why = "missing here" if a is None else "missing there" if b is None else \
                "differs: " + ",".join(parts)
            print(f"MISMATCH {name}: {why}", flush=True)
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the hashes to this JSON file")
    ap.add_argument("--compare", help="compare with this JSON file; exit 1 on a mismatch")
    ap.add_argument("--only", help="run only the fits whose name contains this substring")
    ap.add_argument("--list", action="store_true", help="list the fit names and stop")
    ap.add_argument("--arrays", help="also save every fit's coef_, intercept_ and support_ "
                    "to this .npz file")
    ap.add_argument("--compare-arrays", help="report how far the fits moved from this "
                    "--arrays file (for a change that alters bits on purpose)")
    args = ap.parse_args(argv)
    import bisvm

    todo = all_fits()
    if args.only:
        todo = {k: v for k, v in todo.items() if args.only in k}
    if args.list:
        print("\n".join(todo), f"\n{len(todo)} fits")
        return 0
    commit = source_commit(bisvm.__file__)
    print(f"bisvm {bisvm.__file__} ({commit}); {len(todo)} fits", flush=True)
    fits, seconds, t0, c0 = {}, {}, time.perf_counter(), time.process_time()
    arrays = {} if (args.arrays or args.compare_arrays) else None
    for name, thunk in todo.items():
        t = time.perf_counter()
        fits[name] = fit_record(thunk, arrays, name)
        seconds[name] = round(time.perf_counter() - t, 3)
        r = fits[name]
        print(f"{name:52s} {r['coef']} {r['intercept']} {r['beta']} {seconds[name]:6.2f}s",
              flush=True)
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    digest = combined_digest(fits)
    print(f"{len(fits)} fits in {total:.1f} s wall, {cpu:.1f} s CPU; digest {digest}",
          flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(
            {"commit": commit, "bisvm_file": bisvm.__file__, "n_fits": len(fits),
             "digest": digest, "total_seconds": round(total, 1),
             "cpu_seconds": round(cpu, 1), "fits": fits,
             "seconds": seconds}, indent=1) + "\n")
    if args.arrays:
        np.savez_compressed(args.arrays, **arrays)
    if args.compare_arrays:
        compare_arrays(arrays, args.compare_arrays)
    if args.compare:
        bad = compare(fits, args.compare, subset=bool(args.only))
        print(f"compare with {args.compare}: "
              + (f"{len(bad)} mismatching fits" if bad else "identical"), flush=True)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
