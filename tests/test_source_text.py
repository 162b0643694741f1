"""The text of the package source states rules a reader can follow on their own.

Every file under ``src/bisvm`` (Python modules and any ``.html``, ``.css``, ``.js`` or
``.txt`` template) is scanned for

* control characters: only the newline may appear, so no TAB, carriage return, BEL,
  form feed, vertical tab, backspace, NUL or other byte below ``0x20`` (and no DEL);
* references to an issue tracker ("issue 16", "issue #16", "issues 11 and 12", "#12"),
  which a user of the package cannot follow;
* references to unpublished source documents ("seed-000", "seed 004"), where a published
  source should be cited by author, year and title;
* non-raw docstrings with single backslashes, which become control characters at run
  time (``\\t``, ``\\a``, ``\\f``, ``\\n`` where LaTeX ``\\tfrac``, ``\\nabla`` was meant)
  or invalid escapes (``\\mu``).

Each offence is reported as ``path:line: rule: text``. Files listed in :data:`PENDING`
are known offenders owned elsewhere; the list shrinks to empty as they are cleaned.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "bisvm"
SUFFIXES = {".py", ".html", ".css", ".js", ".txt"}
#: file types whose ``#`` + hex digits are colours by construction
COLOUR_FILES = {".html", ".css", ".js"}

#: Files (relative to the repository root) with known offences, cleaned by their owners.
PENDING: set[str] = set()

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
ISSUE_WORD = re.compile(r"\bissues?\s+(?:no\.\s*)?#?\d+", re.IGNORECASE)
# '#' + digits, not inside a word, an HTML entity (&#123;) or a URL path/anchor
HASH_NUMBER = re.compile(r"(?<![\w&#/])#(\d+)(?!\w)")
SEED = re.compile(r"\bseeds?[-_ ]?0\d{2}\b|\bseed-0", re.IGNORECASE)


def is_colour(line, start, digits, suffix):
    """Whether the ``#digits`` at ``start`` of ``line`` is a colour literal.

    A colour has 3, 4, 6 or 8 hexadecimal digits and stands where a value stands: in a
    stylesheet or script, or after ``:``, ``=``, ``(``, ``,`` or a quote (``color: #333``,
    ``"#000000"``). Prose such as ``see #333`` is not a colour.
    """
    if len(digits) not in (3, 4, 6, 8):
        return False
    if suffix in COLOUR_FILES:
        return True
    before = line[:start].rstrip()
    return bool(before) and before[-1] in ":=(,\"'"


def line_offences(line, suffix):
    """The rules a single line breaks, as ``(rule, matched text)`` pairs."""
    found = []
    if m := CONTROL.search(line):
        found.append(("control character", repr(m.group())))
    found += [("issue reference", m.group()) for m in ISSUE_WORD.finditer(line)]
    found += [
        ("issue reference", m.group())
        for m in HASH_NUMBER.finditer(line)
        if not is_colour(line, m.start(), m.group(1), suffix)
    ]
    found += [("unpublished source", m.group()) for m in SEED.finditer(line)]
    return found


#: a single backslash that is not an escaped backslash, quote or line continuation: in a
#: non-raw string it is a control character (``\\t`` of ``\\tfrac``) or an invalid escape
SINGLE_BACKSLASH = re.compile(r"(?<!\\)(?:\\\\)*\\[^\\\n'\"]")


def escaping_docstrings(text):
    """Line numbers of non-raw docstrings with single backslashes.

    In a non-raw string ``\\tfrac`` is a TAB followed by ``frac`` and ``\\nabla`` a
    newline followed by ``abla``, and ``\\mu`` is an invalid escape: LaTeX in a docstring
    is written raw (``r\"\"\"...``) or with doubled backslashes.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes are reported below, by line
        tree = ast.parse(text)
    docstring_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                docstring_lines.add(body[0].lineno)
    bad = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.STRING or tok.start[0] not in docstring_lines:
            continue
        prefix = re.match(r"[A-Za-z]*", tok.string).group().lower()
        if "r" not in prefix and SINGLE_BACKSLASH.search(tok.string):
            bad.append(tok.start[0])
    return bad


def file_offences(path):
    """Every offence in one file, as ``path:line: rule: text`` strings."""
    rel = path.relative_to(ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    out = [
        f"{rel}:{number}: {rule}: {snippet}"
        for number, line in enumerate(text.split("\n"), start=1)
        for rule, snippet in line_offences(line, path.suffix)
    ]
    if path.suffix == ".py":
        out += [
            f"{rel}:{n}: single backslash in a non-raw docstring (write it raw)"
            for n in escaping_docstrings(text)
        ]
    return out


def source_files():
    return sorted(
        p
        for p in SRC.rglob("*")
        if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts
    )


def test_source_text_is_clean():
    offences = []
    for path in source_files():
        if path.relative_to(ROOT).as_posix() not in PENDING:
            offences += file_offences(path)
    assert not offences, "offences in src/:\n" + "\n".join(offences)


def test_pending_files_exist_and_still_offend():
    # an entry whose file is gone or clean must leave the list, so it only shrinks
    stale = [
        rel for rel in sorted(PENDING)
        if not (ROOT / rel).is_file() or not file_offences(ROOT / rel)
    ]
    assert not stale, f"remove from PENDING (clean or missing): {stale}"


def test_the_scan_covers_the_package():
    files = {p.relative_to(SRC).as_posix() for p in source_files()}
    assert {"__init__.py", "selection/criteria.py", "report/html.py"} <= files


@pytest.mark.parametrize(
    "line",
    [
        "x = 1\tbut a tab",
        "a bell \a here",
        "form \f feed",
        "carriage\r",
        "vertical \v tab",
        "back\bspace",
        "nul \x00",
        "escape \x1b[0m",
        "del \x7f",
    ],
)
def test_control_characters_are_rejected(line):
    assert [rule for rule, _ in line_offences(line, ".py")] == ["control character"]


@pytest.mark.parametrize(
    "line",
    [
        "as in issue 16",
        "issue #16's solver contract",
        "Issues 11 and 12 asked for it",
        "issues #11 and #12",
        "see #12",
        "(#14 item 4)",
        "# Model selection figures (#6): criterion curves",
        "fixed in #1234 upstream",
    ],
)
def test_issue_references_are_rejected(line):
    assert "issue reference" in [rule for rule, _ in line_offences(line, ".py")]


@pytest.mark.parametrize(
    "line,suffix",
    [
        ("color: #333;", ".css"),
        ("background:#fff", ".css"),
        ("border: 1px solid #dddddd", ".css"),
        ("<td style='color:#1f77b4'>", ".html"),
        ('ax.plot(x, y, color="#333")', ".py"),
        ("colors = ['#000000', '#d62728']", ".py"),
        ("CSS = 'td {color: #666}'", ".py"),
        ("&#8212; an HTML entity", ".html"),
        ("https://example.org/page#12", ".py"),
        ("# 12 rows per fold", ".py"),
        ("tissue 16 is a word ending in 'issue'", ".py"),
        ("# comment with #hashtag", ".py"),
    ],
)
def test_colours_entities_and_prose_are_accepted(line, suffix):
    assert line_offences(line, suffix) == []


@pytest.mark.parametrize(
    "line", ["(seed-000 Algorithm 8)", "seed 004 §2", "Seed-001", "seeds 001-003", "seed_002"]
)
def test_unpublished_sources_are_rejected(line):
    assert "unpublished source" in [rule for rule, _ in line_offences(line, ".py")]


@pytest.mark.parametrize("line", ["random_state=0 is the seed 0 of the run", "seed=42", "seeded"])
def test_seeds_of_random_generators_are_accepted(line):
    assert line_offences(line, ".py") == []


def test_single_backslashes_in_non_raw_docstrings_are_found():
    text = (
        'def f():\n    """Gradient :math:`\\nabla J`, :math:`\\tfrac12`."""\n\n'
        'def g():\n    r"""Gradient :math:`\\nabla J`."""\n\n'
        'def h():\n    """Escaped :math:`\\\\nabla J`, no control character."""\n\n'
        'def k():\n    """No backslash."""\n\n'
        'def m():\n    """Invalid escape :math:`\\mu`."""\n'
    )
    assert escaping_docstrings(text) == [2, 14]


def test_offences_name_file_and_line(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    path = tmp_path / "m.py"
    path.write_text('"""Module."""\n\n# see issue 16\nx = "seed-000"\n', encoding="utf-8")
    got = [o.split(": ")[0] for o in file_offences(path)]
    assert got == ["m.py:3", "m.py:4"]
