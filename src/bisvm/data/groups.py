"""Feature groups from a text spec (index ranges or name prefixes)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .records import DataError, short_list

_RANGE_RE = re.compile(r"^\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?$")


def parse_groups(spec, feature_names):
    """Parse a feature-group specification into ``{group name: [feature indices]}``.

    Two forms, which can be mixed, separated by commas:

    * index ranges, ``"mean=0-9,se=10-19,worst=20-29"``: inclusive 0-based ranges; a group
      may list several ranges or indices joined by ``+`` (``"a=0-3+7+9-10"``);
    * name prefixes, ``"mean,error,worst"``: a group per token, holding the features whose
      name starts with it (case-insensitive). A token that starts no name matches the
      features that contain it as a whole word (so ``error`` finds Breast Cancer's
      ``"radius error"``, ...).

    Features covered by no group are put in singleton groups named after the feature, after
    the given groups, in feature order (a group penalty then treats them as individual
    features).

    Parameters
    ----------
    spec : str or mapping of str to sequence of int
        The groups, as text in the forms above or as a mapping of names to indices.
    feature_names : sequence of str
        The feature names, in column order.

    Returns
    -------
    dict of str to list of int
        Each group's name and its 0-based feature indices; every feature is in exactly
        one group.

    Raises
    ------
    DataError
        On an unknown prefix, an index out of range, a reversed range, overlapping groups,
        an empty or duplicate group name, naming the offending token.

    Examples
    --------
    >>> from bisvm import parse_groups
    >>> parse_groups("a=0-1,b=3", ["x0", "x1", "x2", "x3"])
    {'a': [0, 1], 'b': [3], 'x2': [2]}
    >>> parse_groups("sepal", ["sepal length", "sepal width", "petal length"])
    {'sepal': [0, 1], 'petal length': [2]}
    """
    names = [str(f) for f in feature_names]
    d = len(names)
    if isinstance(spec, Mapping):
        groups = {}
        for k, v in spec.items():
            idx = [int(i) for i in v]
            for i in idx:
                if not 0 <= i < d:
                    raise DataError(f"group {k!r}: index {i} out of range 0-{d - 1}", column=str(k))
            groups[str(k)] = idx
        return _finish_groups(groups, names, spec_text=str(dict(spec)))
    if not isinstance(spec, str) or not spec.strip():
        raise DataError(f"empty group specification {spec!r}")
    groups = {}
    for token in spec.split(","):
        tok = token.strip()
        if not tok:
            raise DataError(f"group specification {spec!r}: empty group between commas")
        if "=" in tok:
            name, _, ranges = (t.strip() for t in tok.partition("="))
            if not name:
                raise DataError(f"group token {tok!r}: missing group name before '='")
            idx = []
            for part in ranges.split("+"):
                m = _RANGE_RE.match(part)
                if not m:
                    raise DataError(
                        f"group token {tok!r}: {part.strip()!r} is not an index or a range a-b"
                    )
                lo = int(m.group(1))
                hi = int(m.group(2)) if m.group(2) is not None else lo
                if lo > hi:
                    raise DataError(f"group token {tok!r}: range {lo}-{hi} is reversed")
                if lo < 0 or hi >= d:
                    raise DataError(
                        f"group token {tok!r}: index {hi if hi >= d else lo} out of range "
                        f"0-{d - 1} ({d} features)"
                    )
                idx.extend(range(lo, hi + 1))
        else:
            name = tok
            low = tok.lower()
            idx = [j for j, f in enumerate(names) if f.lower().startswith(low)]
            if not idx:
                word = re.compile(r"(?:^|[^0-9a-z])" + re.escape(low) + r"(?:$|[^0-9a-z])")
                idx = [j for j, f in enumerate(names) if word.search(f.lower())]
            if not idx:
                raise DataError(
                    f"group token {tok!r}: no feature name starts with it or contains it as a "
                    f"word (features: {short_list(names, 6)})"
                )
        if name in groups:
            raise DataError(f"group token {tok!r}: group {name!r} given twice")
        if len(set(idx)) != len(idx):
            raise DataError(f"group token {tok!r}: lists a feature twice")
        groups[name] = idx
    return _finish_groups(groups, names, spec_text=spec)


def _finish_groups(groups, names, spec_text):
    owner = {}
    for g, idx in groups.items():
        if not idx:
            raise DataError(f"group {g!r} is empty", column=g)
        for j in idx:
            if j in owner:
                raise DataError(
                    f"group {g!r} overlaps group {owner[j]!r} at feature {j} ({names[j]!r})",
                    column=g,
                )
            owner[j] = g
    out = {g: list(idx) for g, idx in groups.items()}
    for j, f in enumerate(names):
        if j not in owner:
            key = f
            while key in out:
                key = key + "_"
            out[key] = [j]
    return out
