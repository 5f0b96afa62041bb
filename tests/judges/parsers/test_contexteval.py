"""Contextualized Evaluations parsers: attribute filters and relevance ratings."""

from __future__ import annotations

import json

from judgelab.core import verdicts
from judgelab.judges import parsers


def test_ce_judgement_is_the_core_parser():
    assert parsers.ce_judgement is verdicts.ce_judgement
    assert parsers.Parsed is verdicts.Parsed


def test_ce_attribute_filter_and_relevance():
    assert json.loads(
        parsers.ce_attribute_filter('Output: {"1": "Yes", "2": "No", "3": "Yes"}').verdict
    ) == {"1": "Yes", "2": "No", "3": "Yes"}
    assert not parsers.ce_attribute_filter('{"1": "Yes", "2": "Maybe", "3": "Yes"}').valid
    rated = (
        "**output: {'Children': {'relevance': 2}, 'Teenagers': {'relevance': 3}, "
        "'Young adults': {'relevance': 5}}**"
    )
    p = parsers.ce_relevance_by_value(rated, ["Children", "Teenagers", "young  adults"])
    assert p.valid
    assert json.loads(p.verdict) == {"Children": 2, "Teenagers": 3, "young  adults": 5}
    partial = parsers.ce_relevance_by_value(
        "**output: {'Children': {'relevance': 7}, 'Teenagers': {'relevance': 3}}**",
        ["Children", "Teenagers"],
    )
    assert not partial.valid  # 7 is outside 1-5: null, and the note names the value
    assert json.loads(partial.verdict) == {"Children": None, "Teenagers": 3}
    assert "Children" in partial.note
    assert parsers.relevance_rating('{"relevance": 4}').verdict == "4"
    assert not parsers.relevance_rating('{"relevance": 4.5}').valid
