"""ContextualJudgeBench verdict parsers on realistic judge outputs."""

from __future__ import annotations

import pytest

from judgelab.judges import parsers

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
