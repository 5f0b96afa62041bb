"""Text measures on hand-computed examples: refusals, grounding, token-F1, ROUGE-L."""

from __future__ import annotations

import pytest

from judgelab.core import text


@pytest.mark.parametrize(
    ("answer", "refusal"),
    [
        ("The context does not mention the date, so I cannot answer.", True),
        ("There is not enough information to tell.", True),
        ("Unknown.", True),
        ("The library moved in March 2019.", False),
        ("", False),
    ],
)
def test_is_refusal(answer, refusal):
    assert text.is_refusal(answer) is refusal


def test_grounding_counts_content_tokens_found_in_the_context():
    ctx = "The library moved to the civic building in March 2019."
    # library, moved, june, 2021 → library and moved are in the context: 2 of 4
    assert text.grounding("The library moved in June 2021.", ctx) == 0.5
    assert text.grounding("The library moved in March 2019.", ctx) == 1.0
    assert text.grounding("the of and", ctx) == 0.0  # no content tokens at all
    assert text.content_tokens("The library moved in March 2019.") == [
        "library",
        "moved",
        "march",
        "2019",
    ]


def test_token_f1_is_squad_f1():
    # SQuAD tokens: "cat sat on mat" vs "cat on mat": overlap 3, P = 3/4, R = 3/3 → 6/7
    assert text.token_f1("the cat sat on the mat", "a cat on a mat") == pytest.approx(6 / 7)
    assert text.token_f1("", "") == 1.0
    assert text.token_f1("dogs bark", "a cat on a mat") == 0.0
    assert text.squad_tokens("The Eiffel-Tower, in Paris!") == ["eiffeltower", "in", "paris"]


def test_rouge_l_is_the_lcs_f_measure():
    # rouge tokens: 6 vs 5; LCS "the cat on mat" = 4 → P = 4/6, R = 4/5, F = 8/11
    assert text.rouge_l("the cat sat on the mat", "the cat on a mat") == pytest.approx(8 / 11)
    assert text.rouge_l("", "the cat") == 0.0
    assert text.rouge_tokens("Café, 2 cats!") == ["caf", "2", "cats"]


def test_similarity_names_the_two_measures():
    assert text.SIMILARITY == {"token_f1": text.token_f1, "rougeL": text.rouge_l}
