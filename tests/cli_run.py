"""``bisvm`` run in the test process, shared by the CLI tests."""

import json

from bisvm import cli


def in_process(argv, capsys):
    """Run ``bisvm`` in this process: (exit code, stdout, stderr)."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's --help and usage errors
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def cli_json(argv, capsys):
    """The one JSON object a successful ``--json`` run prints."""
    code, out, err = in_process(argv, capsys)
    assert code == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    return json.loads(lines[0])
