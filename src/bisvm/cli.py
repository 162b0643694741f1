"""The ``bisvm`` command line. It only calls the public API.

``bisvm select`` is the main job (:mod:`bisvm._cli.select`): learn the sparsity weights of
a smoothed elastic-net SVM by bilevel optimisation (seed-000) and compare it with the
thesis's grid search. ``datasets`` lists the bundled data; ``fit``, ``predict``, ``tune``
and ``report`` live in :mod:`bisvm._cli` too. Every subcommand has ``--json`` (one JSON
object on stdout); bad input ends with one line on stderr and exit code 2; progress goes
to stderr (a bar on a terminal, ``--verbose`` lines elsewhere, ``--quiet`` none).

Building the parser imports no numerical library: ``bisvm --help``, every subcommand's
``--help``, ``--version`` and argument errors answer at once; numpy, scikit-learn, numba
and matplotlib load where the work starts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ._cli.common import EXIT_BAD_INPUT


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(EXIT_BAD_INPUT, f"bisvm: error: {message}\n")


def _cmd_datasets(args):
    from . import data

    items = data.list_datasets()
    rows = items.items() if isinstance(items, dict) else items
    if args.json:
        print(json.dumps(dict(rows)))
    else:
        for name, desc in rows:
            print(f"{name:15s} {desc}")
    return 0


def build_parser():
    """The argument parser of the ``bisvm`` program."""
    from ._cli import fit, predict, report, select, tune
    from ._version import __version__

    p = _Parser(prog="bisvm", description="Support vector machines that tune themselves.",
                epilog="Run 'bisvm COMMAND --help' for a command's options and examples.")
    p.add_argument("--version", action="version", version=f"bisvm {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    select.add_parser(sub)
    d = sub.add_parser("datasets", help="list the bundled data sets",
                       description="List the bundled data sets (no download needed).")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=_cmd_datasets)
    for mod in (fit, predict, tune, report):
        mod.add_parser(sub)
    return p


def main(argv=None):
    """Entry point of the ``bisvm`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return args.func(args)
    except BrokenPipeError:
        # stdout closed early (`bisvm predict m.bisvm --data f.csv | head`): no message;
        # stdout is pointed at devnull so that the interpreter's final flush is quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ValueError, TypeError, FileNotFoundError, OSError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"bisvm: error: {msg}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("bisvm: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
