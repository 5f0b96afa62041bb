"""`Parsed` and the parsing primitives below the judges (the ContextEval judgement reader)."""

from __future__ import annotations

import pytest

from judgelab.core import verdicts


def test_ce_judgement_repo_exact_and_fallback():
    real = (
        '****output: {"judgement": "Response 2"}****\n\nJustification: Response 2 tailors the '
        "itinerary to a family with young children, as the context specifies."
    )
    assert verdicts.ce_judgement(real).verdict == "Response 2"
    assert verdicts.ce_judgement('**output: {"judgement": "Tie"}**').verdict == "Tie"
    # No dict: the repo falls back to the first of "Response 1"/"Response 2" mentioned.
    fb = verdicts.ce_judgement("Response 2 is fine but Response 1 is better.")
    assert (fb.verdict, fb.note) == ("Response 1", "substring_fallback")
    bad = verdicts.ce_judgement('**output: {"judgement": "Both"}**')
    assert not bad.valid
    assert verdicts.ce_judgement('output: {"judgement": "Response 1"}', mode="robust").valid
    with pytest.raises(ValueError, match="mode"):
        verdicts.ce_judgement("x", mode="fuzzy")


def test_literal_or_json_reads_python_json_and_single_quoted_json():
    assert verdicts.literal_or_json("{'a': 1}") == {"a": 1}
    assert verdicts.literal_or_json('{"b": true}') == {"b": True}  # JSON, not a Python literal
    assert verdicts.literal_or_json("{x") is None
    assert verdicts.is_empty(None) and verdicts.is_empty(" \n") and not verdicts.is_empty("A")
