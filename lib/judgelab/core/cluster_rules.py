"""Cluster rules: the names a source may declare as its resampling unit (no table stack).

`judgelab.core.clusters` applies a rule to an items table; this module only names and checks
rules and parses a source's `cluster:` declaration, so reading the source registry (a
listing, `judgelab data list`) imports neither pandas nor numpy. Both `core.clusters` and
`data.clustering` re-export what they used to define here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: The column that carries the resampling unit.
COLUMN = "cluster"
#: Rules a source may declare (plus ``meta.<key>``).
RULES = ("item", "question", "context")
KEYS = ("benchmark", "split", "item_id")


def check_rule(rule: str) -> str:
    """Return `rule` if it is a known cluster rule, else raise ValueError naming the choices."""
    if rule in RULES or (rule.startswith("meta.") and len(rule) > len("meta.")):
        return rule
    raise ValueError(f"unknown cluster rule {rule!r}; known: {list(RULES)} or 'meta.<key>'")


def parse_cluster(value: Any) -> tuple[str, ...]:
    """Return a `cluster` declaration as a tuple of rules (None -> `("item",)`).

    >>> parse_cluster("question"), parse_cluster(["meta.qid", "question"])
    (('question',), ('meta.qid', 'question'))

    Raises:
        ValueError: not a rule or a non-empty list of rules (the message names the choices).
    """
    if value is None:
        return ("item",)
    rules = [value] if isinstance(value, str) else value
    if not isinstance(rules, list) or not rules or not all(isinstance(r, str) for r in rules):
        raise ValueError(f"must be a cluster rule or a list of rules, got {value!r}")
    for rule in rules:
        check_rule(rule)
    return tuple(rules)


def rule_text(rules: Sequence[str]) -> str:
    """Return a declaration as one line (`"meta.question_idx, question"`)."""
    return ", ".join(rules)


__all__ = ["COLUMN", "KEYS", "RULES", "check_rule", "parse_cluster", "rule_text"]
