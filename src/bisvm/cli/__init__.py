"""The ``bisvm`` command line. It only calls the public API.

One module per subcommand, each with ``add_parser(subparsers)`` and ``run(args)``:
``bisvm select`` is the main job (:mod:`bisvm.cli.select`): learn the sparsity weights
of a smoothed elastic-net SVM by bilevel optimisation (C. L. González Vallejo, master's
thesis, Escuela Politécnica Nacional, 2024) and compare it with the thesis's grid
search, or, on a continuous target (:mod:`~bisvm.cli.task`), those of the smoothed
elastic-net SVR (:mod:`~bisvm.cli.select_regression`); :mod:`~bisvm.cli.datasets` lists
the bundled data; :mod:`~bisvm.cli.fit`, :mod:`~bisvm.cli.predict`,
:mod:`~bisvm.cli.tune` and :mod:`~bisvm.cli.report` do the rest. This module wires them
up and turns bad input into one line on stderr with exit code 2. Every subcommand has
``--json`` (one JSON object on stdout); progress goes to stderr (a bar on a terminal,
``--verbose`` lines elsewhere, ``--quiet`` none).

Building the parser imports no numerical library: ``bisvm --help``, every subcommand's
``--help``, ``--version`` and argument errors answer at once; numpy, scikit-learn, numba
and matplotlib load where the work starts.
"""

from __future__ import annotations

import argparse
import os
import sys

from .common import EXIT_BAD_INPUT


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors exit with the code of bad input (2) and one
    ``bisvm: error:`` line."""

    def error(self, message):
        self.exit(EXIT_BAD_INPUT, f"bisvm: error: {message}\n")


def build_parser():
    """Build the argument parser of the ``bisvm`` program.

    Building it has no side effect and imports no numerical library; the documentation
    site generates the command-line reference from it. Options that set an estimator's
    parameter take the estimator's default and choices (:mod:`bisvm.cli.defaults`).

    Returns
    -------
    argparse.ArgumentParser
        The parser, with one subparser per subcommand; a parsed command's ``func``
        runs it.
    """
    from .._version import __version__
    from . import datasets, fit, predict, report, select, tune

    p = _Parser(prog="bisvm", description="Support vector machines that tune themselves.",
                epilog="Run 'bisvm COMMAND --help' for a command's options and examples.")
    p.add_argument("--version", action="version", version=f"bisvm {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in (select, datasets, fit, predict, tune, report):
        mod.add_parser(sub)
    return p


def main(argv=None):
    """Run the ``bisvm`` console script.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 on success, 2 for bad input (one line on stderr), 130 when
        interrupted.
    """
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
