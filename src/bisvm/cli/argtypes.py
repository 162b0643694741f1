"""argparse types of the subcommands: each message names its option.

Standard library only (``bisvm --help`` must not import numpy).
"""

from __future__ import annotations

import argparse
import json
import math


def positive_float(name):
    """argparse type: a finite number > 0 (the message names the option)."""

    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"{name} must be positive, got {text!r}")
        return v

    return parse


def nonneg_float(name):
    """argparse type: a finite number >= 0 (the message names the option)."""

    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not (math.isfinite(v) and v >= 0):
            raise argparse.ArgumentTypeError(f"{name} must be >= 0, got {text!r}")
        return v

    return parse


def positive_int(name, minimum=1):
    """argparse type: an integer >= ``minimum`` (the message names the option)."""

    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be an integer, got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be >= {minimum}, got {text!r}")
        return v

    return parse


def fraction(name):
    """argparse type: a number in [0, 1) (the message names the option)."""

    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not 0 <= v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be in [0, 1), got {text!r}")
        return v

    return parse


def share(name, above=0.0):
    """argparse type: a number in (above, 1]."""

    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not above < v <= 1:
            raise argparse.ArgumentTypeError(f"{name} must be in ({above:g}, 1], got {text!r}")
        return v

    return parse


def auto_or(number):
    """argparse type: ``auto`` (the estimator's own rule) or what ``number`` parses."""

    def parse(text):
        return "auto" if text == "auto" else number(text)

    return parse


def gamma_value(text):
    """Kernel width: ``scale``, ``auto`` or a positive number."""
    if text in ("scale", "auto"):
        return text
    return positive_float("--gamma")(text)


def key_value(text):
    """``NAME=VALUE`` with VALUE parsed as JSON when it is JSON (numbers, true, null, lists),
    else kept as a string."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        v = json.loads(value)
    except ValueError:
        v = value
    return name.strip().replace("-", "_"), v
