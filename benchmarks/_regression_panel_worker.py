"""One fit of one method on one split of one table, in its own process, for
``bench_regression_panel.py``.

Usage::

    python benchmarks/_regression_panel_worker.py TABLE SEED METHOD [--quick]

Prints one JSON line: test R², features kept, informative features kept (synthetic
problems), CPU seconds of the fit (``time.process_time`` around ``fit`` alone), and,
separately, the CPU seconds of the imports and of a warm-up fit of the same method on a
small random problem (numba's compilation or loading of its cache, first-call dispatch),
so that the timed fit measures the method's work, not the process's start-up.

Every thread pool is limited to one thread before numpy is imported, and every method
gets ``n_jobs=1`` where it has the parameter.

Methods (``METHODS``; features are standardised by a ``StandardScaler`` fitted on the
training rows, ``with_mean=False`` on sparse input, inside a ``Pipeline``):

* ``lassocv``: ``LassoCV(cv=5)``;
* ``enetcv``: ``ElasticNetCV(l1_ratio=[.1, .5, .9, .95, 1], cv=5)``;
* ``sparho-wl``: sparho's weighted Lasso (one L1 weight per feature) tuned by its
  ``hoag_search`` (Pedregosa, 2016, "Hyperparameter optimization with approximate
  gradient", ICML) with its default settings, on a held-out criterion
  (``HeldOutMSE``) whose split is 70/30 of the training rows (as sparho's weighted-Lasso
  example), starting from α_j = α_max/10 for every feature (sparse-ho's examples'
  starting point; sparho's example hard-codes 10⁻² for the scale of its data). sparho's
  ``Problem`` has no intercept: y is centred by its training mean (and X by the scaler;
  sparse columns are not centred, their synthetic values have mean zero);
* ``rfecv-svr``: ``RFECV(LinearSVR(), step=0.1, cv=5)`` with y standardised on the
  training rows (``TransformedTargetRegressor``), since LinearSVR's ε = 0 and C = 1 are
  in units of y;
* ``selective-cv``: bisvm's ``SelectiveRegressionCV()`` with its defaults;
* ``bisvm``: ``bisvm.BilevelSVR()`` with its defaults, on the raw columns (it standardises
  inside); reported as skipped while bisvm has no ``BilevelSVR``;
* ``bisvm-epsilon``: ``bisvm.BilevelSVR(loss="epsilon_insensitive")``: the same selection
  with the smoothed ε-insensitive loss of support vector regression.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
           "NUMBA_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
           "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

METHODS = ("lassocv", "enetcv", "sparho-wl", "rfecv-svr", "selective-cv", "bisvm",
           "bisvm-epsilon")
BASELINES = METHODS[:5]
L1_RATIOS = (0.1, 0.5, 0.9, 0.95, 1.0)


def sparho_weighted_lasso_class():
    """A scikit-learn regressor around sparho's weighted-Lasso search (defined lazily, so
    that the other methods never import sparho)."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.base import BaseEstimator, RegressorMixin

    class SparhoWeightedLasso(RegressorMixin, BaseEstimator):
        """min_β (1/2n)‖y − Xβ‖² + Σ_j α_j |β_j| with α tuned by ``hoag_search`` on a
        held-out split of the training rows (``val_fraction``)."""

        def __init__(self, val_fraction=0.3, random_state=0):
            self.val_fraction = val_fraction
            self.random_state = random_state

        def fit(self, X, y):
            from sparho import HeldOutMSE, Problem, SquaredLoss, WeightedL1, hoag_search
            from sparho.adapters import SklearnWeightedLasso

            y = np.asarray(y, float)
            self.y_mean_ = y.mean()
            yc = y - self.y_mean_
            if sp.issparse(X):
                X = sp.csc_matrix(X)
                self.x_mean_ = np.zeros(X.shape[1])
            else:
                X = np.asarray(X, float)
                self.x_mean_ = X.mean(axis=0)
                X = X - self.x_mean_
            n = X.shape[0]
            perm = np.random.default_rng(self.random_state).permutation(n).astype(np.int32)
            n_val = int(round(self.val_fraction * n))
            idx_val, idx_tr = np.sort(perm[:n_val]), np.sort(perm[n_val:])
            alpha_max = np.max(np.abs(X[idx_tr].T @ yc[idx_tr])) / idx_tr.size
            hp0 = np.full(X.shape[1], alpha_max / 10.0)
            res = hoag_search(Problem(SquaredLoss(), WeightedL1(), X, yc), hp0,
                              solver=SklearnWeightedLasso(),
                              criterion=HeldOutMSE(idx_tr, idx_val))
            self.coef_ = np.asarray(res.best_coef, float)
            self.intercept_ = self.y_mean_ - self.x_mean_ @ self.coef_
            self.alpha_ = np.asarray(res.best_hyperparam)
            self.n_iter_ = res.n_iter
            return self

        def predict(self, X):
            return np.asarray(X @ self.coef_).ravel() + self.intercept_

    return SparhoWeightedLasso


def make_method(method, sparse):
    """The estimator of ``method`` (None: not available in this installation)."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.feature_selection import RFECV
    from sklearn.linear_model import ElasticNetCV, LassoCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVR

    def scaled(est):
        return make_pipeline(StandardScaler(with_mean=not sparse), est)

    if method == "lassocv":
        return scaled(LassoCV(cv=5, n_jobs=1, random_state=0))
    if method == "enetcv":
        return scaled(ElasticNetCV(l1_ratio=list(L1_RATIOS), cv=5, n_jobs=1,
                                   random_state=0))
    if method == "sparho-wl":
        return scaled(sparho_weighted_lasso_class()())
    if method == "rfecv-svr":
        return TransformedTargetRegressor(
            scaled(RFECV(LinearSVR(random_state=0, max_iter=10000), step=0.1, cv=5,
                         n_jobs=1)),
            transformer=StandardScaler())
    if method == "selective-cv":
        from bisvm import SelectiveRegressionCV

        return scaled(SelectiveRegressionCV())
    if method in ("bisvm", "bisvm-epsilon"):
        import bisvm

        if not hasattr(bisvm, "BilevelSVR"):
            return None
        return bisvm.BilevelSVR(loss="epsilon_insensitive") if method == "bisvm-epsilon" \
            else bisvm.BilevelSVR()
    raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")


def kept_mask(est, d):
    """Boolean mask of the features a fitted estimator uses."""
    import numpy as np

    if hasattr(est, "regressor_"):
        est = est.regressor_
    if hasattr(est, "steps"):
        est = est[-1]
    if hasattr(est, "support_") and np.asarray(est.support_).shape == (d,):
        return np.asarray(est.support_, bool)
    coef = np.atleast_2d(np.asarray(est.coef_))
    return np.any(coef != 0, axis=0)


def _warm_up(method, sparse):
    """A fit on a small random problem of the input's kind (dense or CSR)."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 12))
    y = X[:, :3] @ np.array([1.0, -1.0, 0.5]) + 0.5 * rng.standard_normal(60)
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_method(method, sparse).fit(X, y)


def run(table, seed, method, quick=False):
    c_import = time.process_time()
    import scipy.sparse as sp
    from sklearn.metrics import r2_score

    sys.path.insert(0, str(Path(__file__).parent))
    import _regression_panel_data as data

    t, Xtr, Xte, ytr, yte = data.load(table, seed, quick)
    sparse = sp.issparse(Xtr)
    est = make_method(method, sparse)
    rec = {"table": table, "seed": seed, "method": method, "quick": quick,
           "n_train": int(Xtr.shape[0]), "d": int(Xtr.shape[1])}
    if est is None:
        rec["status"] = "skipped"
        rec["note"] = "bisvm has no BilevelSVR in this checkout"
        return rec
    c0 = time.process_time()
    _warm_up(method, sparse)
    c1 = time.process_time()
    rec["import_cpu"] = c0 - c_import
    rec["warmup_cpu"] = c1 - c0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w0, c0 = time.perf_counter(), time.process_time()
        est.fit(Xtr, ytr)
        c1, w1 = time.process_time(), time.perf_counter()
    kept = kept_mask(est, Xtr.shape[1])
    rec.update(status="ok", cpu=c1 - c0, wall=w1 - w0, r2=float(r2_score(yte, est.predict(Xte))),
               kept=int(kept.sum()),
               warnings=sorted({type(w.message).__name__ for w in caught}))
    if t.synthetic:
        rec["informative"] = [int(j) for j in t.informative]
        rec["informative_kept"] = int(kept[t.informative].sum())
        rec["false_kept"] = int(kept.sum() - rec["informative_kept"])
    return rec


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    table, seed, method = [a for a in argv if a != "--quick"]
    try:
        rec = run(table, int(seed), method, quick)
    except Exception as exc:  # a failure is a result of the panel, not its end
        msg = f"{type(exc).__name__}: {exc}"
        # an estimator that refuses sparse input has no result here, not a failure
        status = "unsupported" if "Sparse data was passed" in msg else "error"
        rec = {"table": table, "seed": int(seed), "method": method, "quick": quick,
               "status": status, "error": msg[:500]}
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
