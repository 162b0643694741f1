"""Sphinx directive ``bisvm-cli``: the reference of the ``bisvm`` program, from argparse.

The directive builds the parser with :func:`bisvm.cli.build_parser` at build time and
renders, for the program and each subcommand, the usage line, the description, and every
option with its metavar, default, choices and help, grouped as ``--help`` groups them. The
page therefore cannot drift from the program: it is the program's own parser, read.

Only the public argparse attributes of actions (``option_strings``, ``dest``, ``help``,
``default``, ``choices``, ``metavar``, ``nargs``) are read; the usage and the group list
come from ``format_usage`` and ``_action_groups``, the one stable place argparse keeps the
grouping that ``--help`` prints.
"""

from __future__ import annotations

import argparse
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _expand(action, prog):
    """The help text with argparse's ``%(default)s``-style fields filled in."""
    text = action.help or ""
    if "%" not in text:
        return text
    params = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
    params["prog"] = prog
    for key in ("choices",):
        if params.get(key) is not None:
            params[key] = ", ".join(map(str, params[key]))
    try:
        return text % params
    except (KeyError, TypeError, ValueError):
        return text


def _invocation(action):
    if not action.option_strings:
        return action.metavar or action.dest
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    meta = action.metavar or action.dest.upper()
    if isinstance(meta, tuple):
        meta = " ".join(meta)
    return ", ".join(f"{s} {meta}" for s in action.option_strings)


def _facts(action):
    """Default and choices, stated only when they say something."""
    out = []
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        out.append("choices: " + ", ".join(map(str, action.choices)))
    default = action.default
    if (action.option_strings and action.nargs != 0 and default is not None
            and default is not argparse.SUPPRESS and default != []):
        out.append(f"default: {default}")
    return out


def _section(title, ids):
    sec = nodes.section(ids=[nodes.make_id(ids)])
    sec += nodes.title(text=title)
    return sec


def _parser_nodes(parser, title, anchor):
    sec = _section(title, anchor)
    sec += nodes.literal_block(text=parser.format_usage().strip(), language="none")
    if parser.description:
        # a raw description is laid out by hand (examples in columns): keep its lines
        if issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter):
            sec += nodes.literal_block(text=parser.description.strip("\n"), language="none")
        else:
            sec += nodes.paragraph(text=parser.description)
    subactions = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.help is not argparse.SUPPRESS]
        subactions += [a for a in actions if isinstance(a, argparse._SubParsersAction)]
        actions = [a for a in actions if not isinstance(a, argparse._SubParsersAction)]
        if not actions:
            continue
        rubric = nodes.rubric(text=group.title or "options")
        sec += rubric
        dl = nodes.definition_list()
        for action in actions:
            item = nodes.definition_list_item()
            term = nodes.term()
            term += nodes.literal(text=_invocation(action))
            item += term
            body = nodes.definition()
            help_text = _expand(action, parser.prog)
            if help_text:
                body += nodes.paragraph(text=help_text)
            facts = _facts(action)
            if facts:
                para = nodes.paragraph()
                for i, fact in enumerate(facts):
                    if i:
                        para += nodes.Text("; ")
                    para += nodes.emphasis(text=fact)
                body += para
            item += body
            dl += item
        sec += dl
    if parser.epilog:
        sec += nodes.literal_block(text=parser.epilog, language="none")
    children = []
    for sub in subactions:
        helps = {a.dest: a.help for a in sub._choices_actions}
        for name, subparser in sub.choices.items():
            child, grandchildren = _parser_nodes(subparser, f"bisvm {name}", f"bisvm-{name}")
            if helps.get(name):
                child.insert(1, nodes.paragraph(text=helps[name]))
            children += [child, *grandchildren]
    return sec, children


class BisvmCliDirective(SphinxDirective):
    """Render the reference of the ``bisvm`` program from its argument parser."""

    has_content = False

    def run(self):
        from bisvm.cli import build_parser

        # argparse wraps the usage to the terminal's width: fix it, so that the page does
        # not depend on the shell that built it
        saved = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "88"
        try:
            top, children = _parser_nodes(build_parser(), "bisvm", "bisvm-program")
        finally:
            if saved is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = saved
        return [top, *children]


def setup(app):
    app.add_directive("bisvm-cli", BisvmCliDirective)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
