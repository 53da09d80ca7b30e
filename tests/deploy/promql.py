"""Metric names in PromQL expressions, without a full PromQL parser.

:func:`metric_names` removes string literals, label matchers (``{...}``), grouping label
lists (``by (...)``, ``on (...)``, ...) and range selectors, then keeps the identifiers that
are neither keywords nor called like functions: what remains are the metric names an
expression selects. Grafana's ``label_values(metric, label)`` is understood too.
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_LABEL_LIST = re.compile(
    r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", re.IGNORECASE
)
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_IDENTIFIER = re.compile(r"(?<![\w:.$])([A-Za-z_:][\w:]*)(\s*\()?")
_LABEL_VALUES = re.compile(r"label_values\(\s*([A-Za-z_:][\w:]*)\s*(?:\{[^}]*\})?\s*,\s*\w+\s*\)")
_KEYWORDS = frozenset(
    {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right"}
    | {"offset", "bool", "atan2", "inf", "nan", "start", "end"}
    # Aggregation operators, also written `sum by (job) (...)`.
    | {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values"}
    | {"bottomk", "topk", "quantile", "limitk", "limit_ratio"}
)


def metric_names(expr: str) -> set[str]:
    """The metric names ``expr`` selects (see the module docstring)."""
    names = set(_LABEL_VALUES.findall(expr))
    text = _LABEL_VALUES.sub(" ", expr)
    text = _STRING.sub('""', text)
    text = _LABEL_LIST.sub(r" \1 ", text)
    text = _MATCHERS.sub("{}", text)
    text = _RANGE.sub("[]", text)
    for match in _IDENTIFIER.finditer(text):
        name, call = match.groups()
        if call is None and name.lower() not in _KEYWORDS:
            names.add(name)
    return names
