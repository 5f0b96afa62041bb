"""FaithEval answer matching: normalisation, phrases and options."""

from __future__ import annotations

from judgelab.judges import parsers


def test_faitheval_normalise_and_phrases():
    assert parsers.faitheval_normalize("The_answer is: 'Unknown'.") == "answer is unknown"
    assert parsers.faitheval_phrase("Unknown.", "unknown", mode="strict") == "unknown"
    # Non-strict "not" is a substring test: "cannot" and "nothing" both match.
    assert parsers.faitheval_phrase("Nothing in the text.", "unknown", mode="nonstrict") == "not"
    assert parsers.faitheval_phrase("Paris", "unknown", mode="nonstrict") is None
    # Strict "conflict" also passes "conflicting" (substring), as in the repo.
    assert (
        parsers.faitheval_phrase("Conflicting reports.", "conflict", mode="strict") == "conflict"
    )
    assert (
        parsers.faitheval_phrase("There are two answers.", "conflict", mode="nonstrict")
        == "two answers"
    )
