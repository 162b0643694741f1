"""``bisvm datasets``: list the bundled data sets."""

from __future__ import annotations

import json


def add_parser(sub):
    """Add ``bisvm datasets`` to the subcommands ``sub``."""
    d = sub.add_parser("datasets", help="list the bundled data sets",
                       description="List the bundled data sets (no download needed).")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=run)
    return d


def run(args):
    """List the bundled data sets (one line each, or one JSON object); exit code 0."""
    from .. import data

    items = data.list_datasets()
    rows = items.items() if isinstance(items, dict) else items
    if args.json:
        print(json.dumps(dict(rows)))
    else:
        for name, desc in rows:
            print(f"{name:15s} {desc}")
    return 0
