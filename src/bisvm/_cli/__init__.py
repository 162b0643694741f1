"""Subcommands of the ``bisvm`` program other than ``select`` and ``datasets``.

Each module adds one subcommand with ``add_parser(subparsers)``; :mod:`bisvm.cli` wires
them up and turns bad input into one line on stderr with exit code 2.
"""
