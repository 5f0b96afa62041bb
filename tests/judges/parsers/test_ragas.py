"""Ragas / AdminRo parsers: scores, rankings, faithfulness and relevance."""

from __future__ import annotations

import json

from judgelab.judges import parsers


def test_ragas_scores_and_choices():
    assert parsers.score_0_10("8 - the answer is grounded").verdict == "8"
    assert parsers.score_0_10("Scor: 10/10").verdict == "10"
    assert parsers.score_0_10("7.5").verdict == "7.5"
    assert not parsers.score_0_10("eleven").valid
    assert not parsers.score_0_10("Score: 42").valid
    assert parsers.rank_choice("[[2]] Răspunsul 2 este mai complet.").verdict == "B"
    assert parsers.rank_choice("Contextul 1 conține doar informația necesară.").verdict == "A"
    conflict = parsers.rank_choice("Answer 1 is short; overall Answer 2 is better.")
    assert conflict.verdict == "B"
    assert "conflicting" in conflict.note
    assert not parsers.rank_choice("Ambele sunt bune.").valid


def test_ragas_decomposition_parsers():
    out = json.dumps(
        [
            {"statement": "Cererea se depune la primărie.", "reason": "în context", "verdict": 1},
            {"statement": "Taxa este 50 lei.", "reason": "nu apare", "verdict": 0},
            {"statement": "Termenul este 30 zile.", "reason": "în context", "verdict": "Yes"},
        ],
        ensure_ascii=False,
    )
    p = parsers.ragas_faithfulness("```json\n" + out + "\n```")
    assert p.verdict == "0.6667"  # 2 supported of 3 statements
    assert not parsers.ragas_faithfulness('[{"statement": "x", "verdict": -1}]').valid
    assert not parsers.ragas_faithfulness("[]").valid
    ctx = "Cererea se depune la primărie. Taxa este zero. Termenul este 30 de zile. Program L-V."
    assert parsers.context_relevance("Cererea se depune la primărie.", ctx).verdict == "0.2500"
    assert parsers.context_relevance("Insufficient Information", ctx).verdict == "0.0000"
    assert not parsers.context_relevance("x.", "").valid
