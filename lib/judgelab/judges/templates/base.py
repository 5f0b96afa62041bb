"""What a prompt template is: messages for an item (+ order, + condition) and its parser.

Conditions are strings of `key=value` pairs joined by commas, e.g. `reference=human` or
`context=with`; "" means none. Keys every template understands:

- `reference=<name>`: which reference answer to show. `none` = no reference (the
  no-reference prompt); `human` = the item's `reference` column; any other name reads
  `meta["references"][name]` (e.g. `wrong`, `random`, `self`).
- `context=with|without`: show the item's context or not (Contextualized Evaluations).
- `candidate=pos|neg`: which response of a pairwise item a single-response template grades;
  added automatically when a single-response template runs on a pairwise benchmark.

Pairwise templates return position verdicts, always "A", "B" or "tie"; the table builder
maps them back to `chosen` (pos/neg/tie) through the order. Order 0 shows `response_pos` as
A (first), order 1 shows it as B (second).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from judgelab.errors import NotApplicable as NotApplicable
from judgelab.errors import check_choice
from judgelab.judges.parsers import Parsed

Messages = list[dict[str, str]]


def parse_condition(condition: str) -> dict[str, str]:
    """Return the `key=value` pairs of a condition string.

    >>> parse_condition("reference=human,candidate=pos")
    {'reference': 'human', 'candidate': 'pos'}
    >>> parse_condition("")
    {}
    """
    return dict(_condition_pairs(condition))


@functools.lru_cache(maxsize=1024)
def _condition_pairs(condition: str) -> tuple[tuple[str, str], ...]:
    """The pairs of `parse_condition`, parsed once per distinct condition (one per row)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in condition.split(","))):
        if "=" not in part:
            raise ValueError(f"condition part {part!r} is not key=value (in {condition!r})")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return tuple(out.items())


def format_condition(parts: Mapping[str, str]) -> str:
    """Return the canonical condition string (keys in insertion order).

    >>> format_condition({"reference": "human", "candidate": "neg"})
    'reference=human,candidate=neg'
    """
    return ",".join(f"{k}={v}" for k, v in parts.items())


@dataclass(frozen=True)
class ItemView:
    """One item row as the templates see it (text columns as str or None, meta as a dict)."""

    row: Mapping[str, Any]

    def text(self, column: str) -> str | None:
        """Return a text column, None when missing or empty."""
        v = self.row.get(column)
        return v if isinstance(v, str) and v.strip() else None

    def need(self, column: str) -> str:
        """Return a text column or raise `NotApplicable` naming it."""
        v = self.text(column)
        if v is None:
            raise NotApplicable(f"item has no {column}")
        return v

    @property
    def meta(self) -> dict[str, Any]:
        """Return the parsed `meta` JSON ({} when missing, not JSON or not an object)."""
        from judgelab.core.schema import read_meta  # here: `--list-templates` loads no pandas

        try:
            return read_meta(self.row.get("meta"))
        except ValueError:  # a template never fails on a malformed meta: it has none
            return {}

    @property
    def key(self) -> str:
        """Return `split/item_id` for messages."""
        return f"{self.row.get('split')}/{self.row.get('item_id')}"

    @property
    def turn(self) -> int:
        """Return the conversation turn being judged (meta `turn`, default 1)."""
        try:
            return int(self.meta.get("turn", 1) or 1)
        except (TypeError, ValueError):
            return 1

    def meta_text(self, name: str) -> str:
        """Return `meta[name]` as text or raise `NotApplicable`."""
        v = self.meta.get(name)
        if not isinstance(v, str) or not v.strip():
            raise NotApplicable(f"item meta has no {name!r}")
        return v

    def pair(self, order: int) -> tuple[str, str]:
        """Return the texts shown as (A, B) for `order` (0: pos first, 1: neg first)."""
        pos, neg = self.need("response_pos"), self.need("response_neg")
        return (pos, neg) if order == 0 else (neg, pos)

    def candidate(self, cond: Mapping[str, str]) -> str:
        """Return the single response to grade: `response`, or pos/neg of a pairwise item."""
        which = cond.get("candidate")
        if which == "pos":
            return self.need("response_pos")
        if which == "neg":
            return self.need("response_neg")
        return self.need("response")

    def reference(self, cond: Mapping[str, str], *, turn: int | None = None) -> str | None:
        """Return the reference named by the condition (None for `reference=none`/absent).

        For turn-1 text of a turn-2 item pass `turn=1`: it reads `meta["reference_1"]` or
        `meta["references_1"][name]`.
        """
        name = cond.get("reference")
        if name in (None, "none"):
            return None
        if turn == 1 and self.turn == 2:
            if name == "human":
                return self.meta_text("reference_1")
            refs = self.meta.get("references_1") or {}
        else:
            if name == "human":
                ref = self.text("reference")
                if ref is None:
                    raise NotApplicable("item has no reference (condition reference=human)")
                return ref
            refs = self.meta.get("references") or {}
        ref = refs.get(name) if isinstance(refs, dict) else None
        if not isinstance(ref, str) or not ref.strip():
            raise NotApplicable(f"item has no {name!r} reference (condition reference={name})")
        return ref


Builder = Callable[[ItemView, int, dict[str, str]], Messages]
Parser = Callable[[str | None, ItemView, dict[str, str]], Parsed]
Judge = Callable[[Parsed, ItemView], bool | None]


@dataclass(frozen=True)
class Template:
    """A prompt template with its verdict parser.

    Attributes:
        id: Registry id, also stored in the judgments `prompt` column (e.g. `cjb.workflow`).
        paper: Which paper the template comes from (`contextualjudgebench`, `nofreelabels`,
            `contexteval`, `faitheval`, `ragas`).
        description: One line: what it asks and where the text comes from.
        pairwise: True when the prompt shows two responses (A/B) and runs in both orders.
        build: `(item, order, condition) -> messages`; raises `NotApplicable` when the item
            lacks an input the template needs.
        parse: `(output, item, condition) -> Parsed`; pairwise verdicts are A/B/tie.
        expand_pairs: A single-response template that may grade each response of a pairwise
            item separately (conditions `candidate=pos` / `candidate=neg`).
        condition_keys: Allowed condition keys and values (None: any value).
        default_conditions: What runs when neither the spec nor the CLI names conditions.
        gold_comparable: Whether `verdict` is comparable to the item's `gold` (scores and
            generations are not, so `correct` stays null for them).
        correct: Optional override of the correctness rule (e.g. FaithEval answer matching).
    """

    id: str
    paper: str
    description: str
    pairwise: bool
    build: Builder
    parse: Parser
    expand_pairs: bool = False
    condition_keys: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
    default_conditions: tuple[str, ...] = ("",)
    gold_comparable: bool = True
    correct: Judge | None = None

    def applies_to(self, task: str) -> bool:
        """Return True when the template can judge items of `task`."""
        if self.pairwise:
            return task == "pairwise"
        return task in ("pointwise", "qa") or (task == "pairwise" and self.expand_pairs)

    def check_condition(self, condition: str) -> dict[str, str]:
        """Parse `condition` and check its keys/values against this template."""
        cond = parse_condition(condition)
        allowed = dict(self.condition_keys)
        if self.expand_pairs:
            allowed.setdefault("candidate", ("pos", "neg"))
        for k, v in cond.items():
            if k not in allowed:
                raise ValueError(
                    f"template {self.id} does not take condition key {k!r} "
                    f"(allowed: {sorted(allowed) or 'none'})"
                )
            if allowed[k] is not None:
                check_choice(f"template {self.id}: condition {k}", v, tuple(allowed[k]))
        return cond


def user(text: str) -> Messages:
    """Return a single user message."""
    return [{"role": "user", "content": text}]


def system_user(system: str, text: str) -> Messages:
    """Return a system message followed by a user message."""
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


def fill(template: str, **slots: str) -> str:
    """Replace `{name}` slots in one pass (only those given; other braces are left alone).

    >>> fill("Q: {question} {keep}", question="why?")
    'Q: why? {keep}'
    """
    parts = _slots(template)  # [text, name, text, name, ..., text]
    out = list(parts)
    for i in range(1, len(parts), 2):
        out[i] = slots.get(parts[i], "{" + parts[i] + "}")
    return "".join(out)


_SLOT = re.compile(r"\{(\w+)\}")


@functools.lru_cache(maxsize=1024)
def _slots(template: str) -> list[str]:
    """Return `template` split around its `{name}` slots (names at odd positions)."""
    return _SLOT.split(template)


def fill_brackets(template: str, slots: Mapping[str, str]) -> str:
    r"""Replace `[NAME]` slots (ContextEval style) in one pass, so filled text is left alone.

    >>> fill_brackets("Query: [QUERY]\nResponse 1: [RESPONSE 1]", {"QUERY": "[RESPONSE 1]?",
    ...     "RESPONSE 1": "r"})
    'Query: [RESPONSE 1]?\nResponse 1: r'
    """
    return re.sub(r"\[([A-Z][A-Z0-9_ ]*)\]", lambda m: slots.get(m.group(1), m.group(0)), template)
