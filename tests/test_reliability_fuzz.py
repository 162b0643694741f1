"""Fuzzing the file readers, the model loader and ``bisvm predict`` with a
time bound.

Each test runs one batch of random and mutated files in a fresh interpreter
(``subprocess`` with a timeout): the batch must terminate within the bound (a hang
fails the test), every case must end in success or in the documented error --
``DataError`` from :func:`bisvm.data.read_table`, ``ModelFileError`` from
:func:`bisvm.persistence.load_model`, exit code 2 with one ``bisvm: error: …`` line for
the CLI -- and nothing may be executed: the batches plant pickle payloads (a whole
pickle file, an object-dtype ``.npy`` inside the model archive, class paths such as
``builtins.open`` in ``meta.json``) whose execution would create a marker file, and the
marker must not exist afterwards.

The cases are drawn from seeded ``numpy`` generators, so a CI run is reproducible. By
hand, ``BISVM_FUZZ_CASES=5000 BISVM_FUZZ_SEED=7 python -m pytest
tests/test_reliability_fuzz.py`` runs larger batches with another seed (the time bound
grows with the number of cases).
"""

import json
import os
import subprocess
import sys
import textwrap

CASES = int(os.environ.get("BISVM_FUZZ_CASES", 0)) or None
SEED = int(os.environ.get("BISVM_FUZZ_SEED", 0))

# the driver runs in the child interpreter: argv = kind, seed, n_cases, work directory
DRIVER = textwrap.dedent(r'''
import contextlib, io, json, os, pickle, sys, traceback, zipfile
import numpy as np

kind, seed, n_cases, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.chdir(work)
MARKER = os.path.join(work, "EXECUTED")


class Payload:
    """Unpickling this creates MARKER: proof that a loader executed file content."""

    target = MARKER

    def __reduce__(self):
        return (open, (self.target, "w"))


# self-test: the payload does create its file when something unpickles it
_probe = Payload()
_probe.target = os.path.join(work, "SELFTEST")
pickle.loads(pickle.dumps(_probe))
SELFTEST = os.path.exists(_probe.target)
os.remove(_probe.target)

rng = np.random.RandomState(seed)
TOKENS = [b"\x00", b'"', b"'", b",", b";", b"\t", b"\r", b"\n", b"\r\n", b"1e400",
          b"-1e400", b"nan", b"inf", b"-", b"0x1F", b"1,5", b"\xef\xbb\xbf", b"\xff\xfe",
          b"\xe9", b"\xc3", b"\x80", b"#", b":", b"0:1", b"-1:2", b"99999999999:1",
          b"2147483648:1", b"3:nan", b"qid:1", b"1e308", b"1e-320", b" ", b'""',
          b"9" * 400, b"a" * 5000, b"\n" * 50, b"=cmd|' /C calc'!A0", b"__import__('os')"]


def mutate(raw, k=None):
    b = bytearray(raw)
    for _ in range(k or (1 if rng.rand() < 0.5 else rng.randint(2, 6))):
        op = rng.randint(6)
        pos = rng.randint(len(b) + 1)
        if op == 0 and b:  # flip a byte
            b[min(pos, len(b) - 1)] = rng.randint(256)
        elif op == 1:  # insert a tricky token
            b[pos:pos] = TOKENS[rng.randint(len(TOKENS))]
        elif op == 2 and b:  # delete a run
            del b[pos:pos + rng.randint(1, 20)]
        elif op == 3:  # truncate
            del b[pos:]
        elif op == 4 and b:  # duplicate a run
            j = rng.randint(len(b))
            b[pos:pos] = b[j:j + rng.randint(1, 80)]
        else:  # random bytes
            b[pos:pos] = bytes(rng.randint(0, 256, size=rng.randint(1, 30)).tolist())
    return bytes(b)


def random_file():
    if rng.rand() < 0.5:
        return bytes(rng.randint(0, 256, size=rng.randint(0, 400)).tolist())
    # printable noise with the separators that matter
    alphabet = list(b"0123456789.,-+eE:\n \t\"'abcxyz#")
    return bytes(rng.choice(alphabet, size=rng.randint(0, 400)).tolist())


def base_csv():
    n = rng.randint(3, 12)
    rows = ["a,b,colour,label"]
    colours = ["red", "green", '"blue, dark"']
    for i in range(n):
        rows.append(f"{rng.randn():.6g},{rng.randn() * 1e3:.6g},"
                    f"{colours[i % 3]},{['yes', 'no'][i % 2]}")
    return ("\n".join(rows) + "\n").encode()


def base_svmlight():
    lines = []
    for i in range(rng.randint(3, 12)):
        feats = " ".join(f"{j}:{rng.randn():.6g}" for j in sorted(
            rng.choice(np.arange(1, 8), size=rng.randint(1, 5), replace=False)))
        lines.append(f"{[-1, 1][i % 2]} {feats}")
    return ("\n".join(lines) + "\n").encode()


ALL_RESULTS = {}


def batch(name):
    """The counters of one sub-batch (csv, svmlight, parquet, model, predict)."""
    return ALL_RESULTS.setdefault(name, {"cases": 0, "ok": 0, "documented": 0,
                                         "unexpected": []})


def record_unexpected(results, case, exc):
    results["unexpected"].append(
        f"{case}: {type(exc).__name__}: {str(exc)[:200]} | "
        + traceback.format_exc().strip().splitlines()[-2][:200])


def write(name, raw):
    with open(name, "wb") as fh:
        fh.write(raw)
    return name


def base_parquet():
    import pandas as pd

    n = rng.randint(3, 12)
    buf = io.BytesIO()
    pd.DataFrame({"a": rng.randn(n), "c": rng.choice(["x", "y"], n),
                  "label": rng.choice(["yes", "no"], n)}).to_parquet(buf)
    return buf.getvalue()


if kind == "tables":
    from bisvm.data import DataError, read_table

    def fuzz_tables(results, ext, base, n_sub, readers):
        for i in range(n_sub):
            u = rng.rand()  # 20 % random files, 10 % valid ones, the rest mutated
            raw = random_file() if u < 0.2 else base() if u < 0.3 else mutate(base())
            path = write(f"case{i}{ext}", raw)
            for kw in readers:
                results["cases"] += 1
                try:
                    ds = read_table(path, **kw)
                except DataError:
                    results["documented"] += 1
                    continue
                except Exception as exc:  # anything else is a finding
                    record_unexpected(results, f"case {i} {kw} {raw[:120]!r}", exc)
                    continue
                if not (ds.X.dtype == np.float64 and np.all(np.isfinite(ds.X))
                        and ds.X.shape[0] >= 1
                        and (ds.y is None or len(ds.y) == ds.X.shape[0])):
                    results["unexpected"].append(f"case {i} {kw}: invalid Dataset {ds.X!r}")
                    continue
                results["ok"] += 1

    fuzz_tables(batch("csv"), ".csv", base_csv, n_cases,
                ({}, {"target": False}, {"drop_missing": True}))
    fuzz_tables(batch("svmlight"), ".svm", base_svmlight, n_cases, ({},))
    fuzz_tables(batch("parquet"), ".parquet", base_parquet, n_cases // 3, ({},))

elif kind == "models":
    from bisvm import SVC, Scaler, save_model
    from bisvm.data import read_table
    from bisvm.persistence import ModelFileError, load_model

    X = rng.randn(30, 3)
    y = np.where(X[:, 0] > 0, "yes", "no")
    sc = Scaler().fit(X)
    est = SVC(kernel="rbf", probability=False).fit(sc.transform(X), y)
    save_model(est, "good.bisvm", feature_names=["a", "b", "c"], scaler=sc)
    good = open("good.bisvm", "rb").read()
    zf = zipfile.ZipFile(io.BytesIO(good))
    META = json.loads(zf.read("meta.json"))
    NPZ = zf.read("arrays.npz")
    with open("new.csv", "w") as fh:
        fh.write("a,b,c\n" + "\n".join(",".join(f"{v:.4g}" for v in r) for r in X[:5]) + "\n")

    def pickled_npy():
        buf = io.BytesIO()
        np.save(buf, np.array([Payload(), 1], dtype=object), allow_pickle=True)
        return buf.getvalue()

    def pickled_npz():
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            with zipfile.ZipFile(io.BytesIO(NPZ)) as src:
                for info in src.infolist():
                    z.writestr(info.filename, src.read(info.filename))
                victim = src.infolist()[rng.randint(len(src.infolist()))].filename
            z.writestr(victim, pickled_npy())
        return buf.getvalue()

    EVIL = ["builtins.open", "os.system", "subprocess.Popen", "builtins.eval",
            "bisvm.persistence.save_model", "bisvm.data.read_table", "pickle.loads",
            "numpy.load", "bisvm.estimators.svm.np", "__main__.Payload"]
    ODD = [None, -1, 0, 1e308, -1e308, "x" * 3000, [], {}, True, [[[[[]]]]],
           {"$estimator": {"class": "builtins.open", "params": {"file": MARKER}}},
           {"$record": {"class": "os.system", "fields": {"command": "touch " + MARKER}}},
           {"$array": "does_not_exist"}, {"$ndarray": 1}, "NaN", 2**70]

    def mutate_json(node, depth=0):
        """A copy of meta.json with one value replaced somewhere down a random path."""
        if isinstance(node, dict) and node and rng.rand() < 0.85:
            key = list(node)[rng.randint(len(node))]
            out = dict(node)
            if rng.rand() < 0.25 or not isinstance(node[key], (dict, list)):
                if key == "class" or rng.rand() < 0.2:
                    out[key] = EVIL[rng.randint(len(EVIL))]
                else:
                    out[key] = ODD[rng.randint(len(ODD))]
            else:
                out[key] = mutate_json(node[key], depth + 1)
            if rng.rand() < 0.05:
                out["params"] = {"__class__": "x", "kernel": "rbf"}
            return out
        if isinstance(node, list) and node:
            out = list(node)
            j = rng.randint(len(out))
            out[j] = mutate_json(out[j], depth + 1) if rng.rand() < 0.6 else \
                ODD[rng.randint(len(ODD))]
            return out
        return ODD[rng.randint(len(ODD))]

    def archive(meta=None, npz=None, extra=()):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("meta.json", json.dumps(META if meta is None else meta))
            z.writestr("arrays.npz", NPZ if npz is None else npz)
            for name, data in extra:
                z.writestr(name, data)
        return buf.getvalue()

    def model_case():
        r = rng.randint(9)
        if r == 0:
            return mutate(good)
        if r == 1:
            return pickle.dumps(Payload())
        if r == 2:
            return archive(npz=pickled_npz())
        if r == 3:
            return archive(extra=[(["__init__.py", "evil.py", "meta.pkl", "x.npy"][
                rng.randint(4)], pickle.dumps(Payload()))])
        if r == 4:
            return random_file()
        if r == 5:
            return archive(npz=mutate(NPZ, rng.randint(1, 3)))
        if r == 6:  # a pickle where meta.json should be
            return _zip_with_meta_bytes(pickle.dumps(Payload()))
        return archive(meta=mutate_json(META))

    def _zip_with_meta_bytes(meta_bytes):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("meta.json", meta_bytes)
            z.writestr("arrays.npz", NPZ)
        return buf.getvalue()

    if True:
        results = batch("model")
        for i in range(n_cases):
            path = write(f"case{i}.bisvm", model_case())
            results["cases"] += 1
            try:
                loaded = load_model(path)
            except ModelFileError as exc:
                msg = str(exc)
                if "\n" in msg or not msg.startswith(path):
                    results["unexpected"].append(f"case {i}: message not one line "
                                                 f"naming the file: {msg[:200]!r}")
                else:
                    results["documented"] += 1
                continue
            except Exception as exc:
                record_unexpected(results, f"case {i}", exc)
                continue
            results["ok"] += 1
    if True:
        from bisvm.cli import main

        results = batch("predict")
        for i in range(n_cases * 2 // 5):
            path = write(f"case{i}.bisvm", model_case())
            results["cases"] += 1
            err, out = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                    code = main(["predict", "--model", path, "--data", "new.csv"])
            except SystemExit as exc:
                code = exc.code
            except BaseException as exc:  # a traceback for the user
                record_unexpected(results, f"case {i}", exc)
                continue
            lines = err.getvalue().strip().splitlines()
            if code == 0:
                results["ok"] += 1
            elif code == 2 and len(lines) == 1 and lines[0].startswith("bisvm: error: "):
                results["documented"] += 1
            else:
                results["unexpected"].append(
                    f"case {i}: exit {code}, stderr {err.getvalue()[:300]!r}")

print(json.dumps({"batches": ALL_RESULTS, "marker": os.path.exists(MARKER),
                  "selftest": SELFTEST}))
''')


def _run_batch(tmp_path, kind, n_cases, timeout):
    """Run one batch in a child interpreter; a batch that does not end within
    ``timeout`` seconds fails (hang bound, not a speed assertion). Returns the counters
    of its sub-batches."""
    n = CASES or n_cases
    bound = timeout * max(1.0, n / n_cases)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, kind, str(SEED), str(n), str(tmp_path)],
        capture_output=True, text=True, timeout=bound, cwd=tmp_path,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["selftest"], "the pickle payload does not work: the check would be void"
    assert not res["marker"], "a loader executed content of a file (marker created)"
    assert not (tmp_path / "EXECUTED").exists()
    for name, b in res["batches"].items():
        assert not b["unexpected"], f"{name}:\n" + "\n".join(b["unexpected"][:10])
        print(name, {k: v for k, v in b.items() if k != "unexpected"})
    return res["batches"]


def test_fuzz_table_readers_terminate_with_dataset_or_data_error(tmp_path):
    """Random and mutated CSV (read three ways), svmlight and Parquet files: a valid
    ``Dataset`` of finite numbers or a ``DataError``; the batch ends within its time
    bound."""
    res = _run_batch(tmp_path, "tables", 150, timeout=120)
    assert set(res) == {"csv", "svmlight", "parquet"}
    for name, b in res.items():
        # the mutations must exercise both outcomes, or the fuzzer tests nothing
        assert b["ok"] > 0 and b["documented"] > 0, (name, b)


def test_fuzz_model_loader_and_cli_predict(tmp_path):
    """Mutated model files (bytes, archive members, meta.json values and class paths,
    pickle payloads in every place): ``load_model`` gives a model or a one-line
    ``ModelFileError`` naming the file, and ``bisvm predict`` exits 0, or 2 with one line
    ``bisvm: error: …`` (no traceback); no payload runs."""
    res = _run_batch(tmp_path, "models", 200, timeout=120)
    assert res["model"]["documented"] > 0 and res["model"]["cases"] >= 200, res["model"]
    assert res["predict"]["ok"] > 0 and res["predict"]["documented"] > 0, res["predict"]
