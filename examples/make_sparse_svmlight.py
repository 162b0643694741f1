"""Write the sparse problem of ``benchmarks/bench_wide.py`` (20,000 training and 5,000
test rows × 50,000 columns at density 0.001, text-like, 100 informative columns) as one
svmlight file, for ``bisvm select --data sparse.svm``.

    python examples/make_sparse_svmlight.py [sparse.svm] [--seed 0]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from _wide_data import PROBLEMS, make_problem  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default="sparse.svm")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    Xtr, Xte, ytr, yte, informative = make_problem("sparse", args.seed, PROBLEMS["sparse"])
    X = sp.vstack([Xtr, Xte]).tocsr()
    y = (np.r_[ytr, yte] > 0).astype(int)
    dump_svmlight_file(X, y, args.path, zero_based=True)
    print(f"wrote {args.path}: {X.shape[0]} rows x {X.shape[1]} columns, {X.nnz} stored "
          f"values; informative columns x{', x'.join(map(str, sorted(informative)[:5]))}, ...")


if __name__ == "__main__":
    main()
