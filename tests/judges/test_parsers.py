"""Verdict parsers on realistic judge outputs, for every template family."""

from __future__ import annotations

import json

import pytest

from judgelab.judges import parsers

# ------------------------------------------------------------------ ContextualJudgeBench

SFR_OK = """**Reasoning:** Response A correctly states that the shortcut is \
Control+Option+Return, which is attributable to passage [1]. Response B refuses even \
though the context answers the question, so it is not faithful to the context.

**Result:** A"""

SFR_BOLD = "**Reasoning:** B is grounded.\n\n**Result:** **B**"
SFR_DOT = "**Reasoning:** B is grounded.\n\n**Result:** B."
SFR_TWO = "**Result:** A\n\nWait, re-reading the context...\n\n**Result:** B"
SFR_NONE = "Both responses are good, but I lean towards the first one."


@pytest.mark.parametrize(
    ("text", "verdict", "valid"),
    [
        (SFR_OK, "A", True),
        (SFR_BOLD, None, False),  # "**B**" is not exactly B: the repo rule is strict
        (SFR_DOT, None, False),
        (SFR_TWO, "B", True),  # split(...)[-1]: the last marker wins
        (SFR_NONE, None, False),
        ("", None, False),
        (None, None, False),
    ],
)
def test_cjb_default_parser(text, verdict, valid):
    p = parsers.split_marker(text)
    assert (p.verdict, p.valid) == (verdict, valid)


def test_cjb_default_parser_records_multiple_markers():
    p = parsers.split_marker(SFR_TWO)
    assert p.n_tokens == 2
    assert "multiple" in p.note


def test_skywork_bracket_rule_checks_a_first():
    # Skywork-Critic emits only the verdict; an output with both reads as A (repo behaviour).
    assert parsers.bracket_first("[[B]]").verdict == "B"
    both = parsers.bracket_first("Initially [[B]] seemed right, but [[A]] is better.")
    assert (both.verdict, both.n_tokens) == ("A", 2)
    assert "A wins" in both.note
    assert not parsers.bracket_first("Response B").valid


def test_offsetbias_prometheus_glider():
    assert parsers.offsetbias("Output (b)").verdict == "B"
    assert parsers.offsetbias("Output (a) is better than Output (b)").verdict == "A"
    assert not parsers.offsetbias("The second one").valid
    prom = (
        "Feedback: Response B includes details not supported by the context, while Response A "
        "stays faithful. [RESULT] A"
    )
    assert parsers.prometheus(prom).verdict == "A"
    assert not parsers.prometheus("Feedback: A is better. [RESULT] Response A").valid
    glider = (
        "<reasoning>OUTPUT 2 cites the passage.</reasoning><highlight>x</highlight>"
        "<score>1</score>"
    )
    assert parsers.glider(glider).verdict == "B"
    assert parsers.glider("<score> 0 </score>").verdict == "A"
    assert not parsers.glider("<score>0.5</score>").valid
    assert not parsers.glider("<score>one</score>").valid
    assert not parsers.glider("no tags").valid


def test_structured_fields_and_verification():
    out = (
        "**Response A reasoning:** all claims are in [1].\n\n**Response A:** yes\n\n"
        "**Response B reasoning:** invents a date.\n\n**Response B:** No\n\n"
        "**Reasoning:** A is faithful.\n\n**Result:** A"
    )
    assert parsers.yes_no_field(out, "Response A") == "yes"
    assert parsers.yes_no_field(out, "Response B") == "no"
    assert parsers.split_marker(out).verdict == "A"
    ver = "<explanation>: The critique relies on faithfulness as primary.\n<decision>: Yes"
    assert parsers.verification_decision(ver).verdict == "Yes"
    assert parsers.verification_decision("<explanation>: x\n<decision>: No").verdict == "No"
    # "not" contains "no": the repo's substring test reads this as both → invalid here, with
    # the repo's benefit-of-the-doubt policy named in the note.
    amb = parsers.verification_decision("<decision>: Yes, though not entirely")
    assert (amb.verdict, amb.valid) == (None, False)
    assert "repo: verified" in amb.note


# ------------------------------------------------------------------ No Free Labels

NFL_SINGLE = """The assistant's answer computes the present value using the annuity formula. \
Comparing with the reference, the final figure of $4,329.48 matches. There are no mistakes.

[[Correct]]"""

NFL_OVERRULE = """The reference answer states that an IRA is a type of annuity, which is \
inaccurate. In contrast, the assistant's answer provides a more accurate description. \
Overall, the reference answer contains significant inaccuracies ... [[Correct]]"""

NFL_TWO = """If the answer were complete it would be [[Correct]]. However, it omits the lease \
liability remeasurement, so my verdict is [[Incorrect]]."""


def test_nfl_single_last_match_and_multiple_tokens():
    assert parsers.nfl_single(NFL_SINGLE).verdict == "Correct"
    assert parsers.nfl_single(NFL_OVERRULE).verdict == "Correct"  # App. D: counted as printed
    p = parsers.nfl_single(NFL_TWO)
    assert (p.verdict, p.n_tokens) == ("Incorrect", 2)
    assert "conflicting" in p.note
    assert parsers.nfl_single(NFL_TWO, rule="first").verdict == "Correct"
    # "Incorrect" contains "correct": never a substring test.
    assert not parsers.nfl_single("The answer is incorrect.").valid
    assert parsers.nfl_single("[[ incorrect ]]").verdict == "Incorrect"


def test_nfl_pairwise_last_match_vs_fastchat():
    text = "Assistant A makes an arithmetic slip, so not [[A]]. Assistant B is right: [[B]]"
    assert parsers.nfl_pairwise(text).verdict == "B"
    assert parsers.nfl_pairwise(text).n_tokens == 2
    assert parsers.nfl_pairwise(text, rule="first_fastchat").verdict == "A"
    assert not parsers.nfl_pairwise("[[C]]").valid  # no tie option in this paper
    assert not parsers.nfl_pairwise("Both are equally correct.").valid


# ------------------------------------------------------------------ Contextualized Evaluations


def test_ce_judgement_repo_exact_and_fallback():
    real = (
        '****output: {"judgement": "Response 2"}****\n\nJustification: Response 2 tailors the '
        "itinerary to a family with young children, as the context specifies."
    )
    assert parsers.ce_judgement(real).verdict == "Response 2"
    assert parsers.ce_judgement('**output: {"judgement": "Tie"}**').verdict == "Tie"
    # No dict: the repo falls back to the first of "Response 1"/"Response 2" mentioned.
    fb = parsers.ce_judgement("Response 2 is fine but Response 1 is better.")
    assert (fb.verdict, fb.note) == ("Response 1", "substring_fallback")
    bad = parsers.ce_judgement('**output: {"judgement": "Both"}**')
    assert not bad.valid
    assert parsers.ce_judgement('output: {"judgement": "Response 1"}', mode="robust").valid
    with pytest.raises(ValueError, match="mode"):
        parsers.ce_judgement("x", mode="fuzzy")


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


# ------------------------------------------------------------------ FaithEval


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


# ------------------------------------------------------------------ Ragas / AdminRo


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
