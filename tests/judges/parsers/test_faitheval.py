"""FaithEval answer matching: normalisation, phrases and options."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        # spec 003 §2.1.4: a leading label, an explicit answer, a bare or bracketed letter
        ("The answer is B.", "B"),
        ("Answer: C", "C"),
        ("(B)", "B"),
        ("B", "B"),
        ("D) steel nail", "D"),
        ("I think the answer is (A) given the passage.", "A"),
        ("The correct option is C, the glass rod.", "C"),
        ("It is D.", "D"),
        # adversarial: a letter inside a word, an article, an abbreviation, a label not offered
        ("Bees and ants.", None),
        ("A plant needs light.", None),
        ("The U.S.A. is large.", None),
        ("Answer: E", None),
        ("I cannot determine this from the context.", None),
        ("answer is a plant", None),
    ],
)
def test_faitheval_letter_rule(text, letter):
    assert parsers.faitheval_letter(text, "ABCD") == letter
    opts = [("A", "copper wire"), ("B", "glass rod"), ("C", "wooden stick"), ("D", "steel nail")]
    got = parsers.faitheval_option(text, opts, match="letter")
    assert got == letter
