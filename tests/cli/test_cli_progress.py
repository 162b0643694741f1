"""Progress of long runs: a bar on stderr when it is a terminal (a pseudo-terminal here),
nothing under --quiet or --json, one line per step with --verbose in a pipe; stdout stays
the results (one JSON object under --json)."""

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pytest

import bisvm

SRC = str(Path(bisvm.__file__).resolve().parents[1])


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("NO_COLOR", None)
    return env


def run_on_pty(*args, timeout=240):
    """Run ``bisvm ARGS`` with stderr (and stdin) on a pseudo-terminal of 100 columns and
    stdout on a pipe: (exit code, stdout text, terminal text)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    p = subprocess.Popen([sys.executable, "-m", "bisvm", *args], stdin=slave,
                         stdout=subprocess.PIPE, stderr=slave, env=_env(), close_fds=True)
    os.close(slave)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                p.kill()
                raise AssertionError(f"bisvm {' '.join(args)}: no output for {timeout} s")
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        out = p.stdout.read().decode()
        code = p.wait(timeout=timeout)
    finally:
        os.close(master)
        p.stdout.close()
    return code, out, b"".join(chunks).decode(errors="replace")


def run_in_pipe(*args):
    r = subprocess.run([sys.executable, "-m", "bisvm", *args], capture_output=True,
                       text=True, env=_env(), timeout=240)
    return r.returncode, r.stdout, r.stderr


SELECT = ("select", "--dataset", "iris", "--model", "scalar", "--criterion", "holdout")


def test_select_on_a_terminal_shows_the_bisvm_and_grid_bars():
    code, out, term = run_on_pty(*SELECT)
    assert code == 0, term
    assert "BiSVM scalar" in term and "J=" in term and "nonzero=" in term
    assert "grid search (149 β)" in term and "149/149" in term
    assert "\r" in term  # a bar redrawn in place, not lines
    # stdout holds the results only
    assert out.startswith("bisvm select:") and "grid search" in out
    assert "\r" not in out and "J=" not in out


def test_quiet_and_json_draw_nothing_on_a_terminal():
    code, out, term = run_on_pty(*SELECT, "--quiet")
    assert code == 0 and out.startswith("bisvm select:")
    assert term.strip() == ""
    code, out, term = run_on_pty(*SELECT, "--json")
    assert code == 0 and term.strip() == ""
    lines = out.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["model"] == "scalar"


def test_verbose_in_a_pipe_prints_lines_and_json_stays_one_object():
    code, out, err = run_in_pipe(*SELECT, "--json", "--verbose")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 1
    res = json.loads(lines[0])
    steps = [s for s in err.splitlines() if s.startswith("BiSVM scalar iteration")]
    # one line per outer iteration: the start point and each iteration after it
    assert len(steps) == res["iterations"] + 1
    assert "\r" not in err and "grid search (149 β): 149/149 β" in err
    # without --verbose a pipe gets nothing
    code, out, err = run_in_pipe(*SELECT)
    assert code == 0 and err == ""


def test_tune_kfold_refits_and_the_mu_path_show_progress_on_a_terminal(tmp_path):
    code, out, term = run_on_pty("tune", "--dataset", "iris", "--method", "kfold",
                                 "--model", "linear-svc", "--grid-size", "3", "--cv", "3")
    assert code == 0, term
    assert "3-fold refits over 3 C values" in term and "9/9" in term
    assert "ran on" not in out  # no stray lines on stdout
    code, out, term = run_on_pty("tune", "--dataset", "iris", "--target", "petal width (cm)",
                                 "--method", "alo", "--model", "selective", "--grid-size", "8")
    assert code == 0, term
    assert "SelectiveRegressionCV μ path (alo)" in term and "8/8" in term


@pytest.mark.parametrize("argv, needle", [
    (["fit", "--dataset", "iris", "--model", "bilevel", "--bilevel-model", "scalar",
      "--criterion", "holdout"], "BiSVM scalar"),
    (["report", "--dataset", "iris", "--bilevel-model", "scalar", "--no-grid"], "report"),
])
def test_fit_and_report_show_progress_on_a_terminal(tmp_path, argv, needle):
    if argv[0] == "report":
        argv = [*argv, "--out", str(tmp_path / "r.html")]
    code, out, term = run_on_pty(*argv)
    assert code == 0, term
    assert needle in term and "\r" in term
    if argv[0] == "fit":
        code, out, term = run_on_pty(*argv, "--quiet")
        assert code == 0 and term.strip() == ""


# ------------------------------------------------------------ bisvm.progress in process


def test_progress_lines_one_per_step_or_per_5_percent(capsys):
    from bisvm.progress import Progress

    with Progress("few", 4, mode="lines", unit="fit") as bar:
        for _ in range(4):
            bar(1)
    err = capsys.readouterr().err.splitlines()
    assert [s.split(",")[0] for s in err] == [f"few: {k}/4 fit" for k in range(1, 5)]
    with Progress("many", 1000, mode="lines") as bar:
        for _ in range(1000):
            bar(1)
    err = capsys.readouterr().err.splitlines()
    assert 20 <= len(err) <= 21 and err[-1].startswith("many: 1000/1000 it")
    with Progress("none", 10, mode=None) as bar:
        bar(10)
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="mode"):
        Progress("bad", 1, mode="loud")


def test_bilevel_verbose_prints_one_line_per_outer_iteration(capsys):
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import scale

    from bisvm import BilevelSVC

    X, y = load_breast_cancer(return_X_y=True)
    est = BilevelSVC(model="scalar", criterion="holdout", verbose=1, random_state=0)
    est.fit(scale(X), y)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(est.history_)
    for line, h in zip(lines, est.history_):
        assert line.startswith(f"BiSVM scalar iteration {h.iteration}: criterion "
                               f"{h.value:.5f}")
        assert f"{h.n_nonzero} nonzero" in line
    BilevelSVC(model="scalar", criterion="holdout", random_state=0).fit(scale(X), y)
    assert capsys.readouterr().err == ""


def test_progress_line_interval_and_lazy_bar(capsys):
    from bisvm.progress import Progress

    # an unknown total with a line interval: the first call prints, the next wait for it
    with Progress("solver", None, mode="lines", line_interval=3600.0) as bar:
        for _ in range(5):
            bar(1, violation="0.1")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("solver: 1 it, violation 0.1")
    lazy = Progress("lazy", None, mode="bar", lazy=True)
    assert lazy._bar is None  # nothing drawn before the first call
    lazy.close()


def test_kernel_svc_verbose_reports_working_set_iterations(tmp_path, capsys):
    """SVC(verbose=1) on a problem the working-set solver takes: one progress call per
    outer iteration on stderr (the violation reached), LIBSVM's summary on stdout; in the
    CLI, --json --verbose keeps stdout one JSON object and sends both to stderr."""
    from cli_run import in_process
    from sklearn.datasets import make_classification

    from bisvm.kernels import make_kernel
    from bisvm.solvers.dual.smo import csvc_dual, solve_smo

    # 4,400 rows: the CLI's training part (3,300) is still over the working set's 3,000
    X, y = make_classification(n_samples=4400, n_features=8, random_state=0)
    calls = []
    pb = csvc_dual(X, np.where(y > 0, 1.0, -1.0), make_kernel("rbf", gamma=0.1), 1.0)
    res = solve_smo(pb, progress=lambda n, **info: calls.append((n, info)))
    assert len(calls) == res.stats["n_outer"]
    assert float(calls[-1][1]["violation"]) <= 1e-3 < float(calls[0][1]["violation"])
    bisvm.SVC(verbose=1).fit(X, y)
    out, err = capsys.readouterr()
    assert "optimization finished" in out and err.startswith("SVC 0 vs 1: 1 it, violation")
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", comments="",
               header=",".join([f"x{j}" for j in range(8)] + ["target"]))
    code, out, err = in_process(["fit", "--data", str(path), "--target", "target",
                                 "--model", "svc", "--json", "--verbose"], capsys)
    assert code == 0, err
    assert len(out.strip().splitlines()) == 1 and json.loads(out)["model"] == "svc"
    assert "SVC 0 vs 1: 1 it, violation" in err and "optimization finished" in err
