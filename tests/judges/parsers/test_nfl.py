"""No Free Labels verdict parsers on realistic judge outputs."""

from __future__ import annotations

from judgelab.judges import parsers

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
