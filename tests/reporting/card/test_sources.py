"""Card keys and sources: keys never merge sources; an unavailable source falls back."""

import pytest

from judgelab.reporting import card


def test_parse_key_keeps_sources_apart():
    assert card.parse_key("umass_llm_eval_triviaqa:GPT-4.umass") == (
        "umass_llm_eval_triviaqa",
        "GPT-4.umass",
    )
    assert str(card.CardKey("llmbar", "GPT-4.Vanilla")) == "llmbar:GPT-4.Vanilla"
    for bad in ("GPT-4", "llmbar:", ":GPT-4", "sample:set"):
        with pytest.raises(ValueError, match="source"):
            card.parse_key(bad)


def test_load_sources_falls_back_with_a_note(monkeypatch):
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    sources = card.load_sources(
        ["llmbar:GPT-4.Vanilla"], fallbacks={"llmbar": "sample:contextualjudgebench"}
    )
    ((label, cs),) = sources.items()
    assert label == "sample:contextualjudgebench" and cs.requested == "llmbar"
    assert cs.judges == ["sample-judge-1-always-first"]
    assert "unavailable" in cs.note
    with pytest.raises(ValueError, match="unknown judge"):
        card.load_sources(["sample:contextualjudgebench:nobody"])
