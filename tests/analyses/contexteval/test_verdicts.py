"""Contextualized Evaluations verdicts: the authors' reading, plurality, examples."""

import pandas as pd
import pytest

from judgelab.analyses import contexteval as ce
from judgelab.errors import ChoiceError

PAIR = "a_vs_b"


def test_verdict_mapping_follows_the_repo(judgments, out):
    j = judgments(
        [
            # order 0 (rand_choice 1): Response 1 is candidate 1.
            ("gen_wo_ctx_eval_wo_ctx", 0, "j0", 0, 0, out("Response 1")),
            # order 1 (rand_choice 2): Response 1 is candidate 2.
            ("gen_wo_ctx_eval_wo_ctx", 0, "j1", 1, 0, out("Response 1")),
            # no dict: substring fallback, "Response 1" wins when both appear.
            ("gen_wo_ctx_eval_wo_ctx", 0, "j2", 0, 0, "Response 2 is fine but Response 1 wins"),
            ("gen_wo_ctx_eval_wo_ctx", 0, "j3", 0, 0, "No response. Finish Reason: SAFETY"),
            # humans: anything but exactly Response 1/2 is a Tie, never Invalid.
            ("gen_wo_ctx_eval_w_ctx", 1, "human", 1, 0, "Response 2"),
            ("gen_wo_ctx_eval_w_ctx", 1, "human", 0, 1, "Both are bad"),
        ]
    )
    v = ce.verdict_table(j)
    assert v["verdict"].tolist() == ["C1", "C2", "C1", "Invalid", "C1", "Tie"]
    assert v["verdict_agg"].tolist() == ["C1", "C2", "C1", "Tie", "C1", "Tie"]
    assert v["setting"].tolist()[-1] == "NoCtxGen-CtxEval"
    assert v["source"].tolist() == ["autorater"] * 4 + ["human"] * 2
    dropped = ce.verdict_table(j, invalid_as="drop")
    assert dropped["verdict_agg"].isna().tolist() == [False, False, False, True, False, False]
    with pytest.raises(ChoiceError, match="invalid_as must be one of"):
        ce.verdict_table(j, invalid_as="Invalid")


def test_plurality_tie_break_by_judge_order():
    # 2-2-1 split: C2 occurs first in judge order, so the repo (Counter.most_common) picks C2.
    assert ce.plurality(["C2", "C1", "C1", "C2", "Tie"]) == ("C2", 2)
    assert ce.plurality(["C1", "C2", "C2", "C1", "Tie"]) == ("C1", 2)
    assert ce.plurality(["C1", "Tie", "C2"], tie_break="prefer_tie") == ("Tie", 1)
    with pytest.raises(ChoiceError, match="tie_break must be one of"):
        ce.plurality(["C1"], tie_break="last")


def test_panel_order_decides_the_plurality(judgments, out):
    # The panel lists j1 before j0: labels in judge order are [C2, C1] -> plurality C2 (1/2).
    rows = [
        ("gen_wo_ctx_eval_wo_ctx", 0, "j0", 0, 0, out("Response 1")),
        ("gen_wo_ctx_eval_wo_ctx", 0, "j1", 0, 0, out("Response 2")),
    ]
    v = ce.verdict_table(judgments(rows), panels={PAIR: ("j1", "j0")})
    ex = ce.example_table(v)
    assert ex.loc[0, "plurality_label"] == "C2" and ex.loc[0, "plurality_share"] == 0.5
    assert ex.loc[0, "majority_label"] is None  # 1/2 is not > 0.5


def test_setting_names_accept_the_repo_ids_and_the_paper_names():
    assert ce.setting_name("gen_w_ctx_eval_w_ctx") == ce.setting_name("CtxGen-CtxEval")
    assert [ce.setting_name(s) for s in ce.REPO_SETTINGS] == list(ce.SETTINGS)
    with pytest.raises(ChoiceError, match="setting must be one of"):
        ce.setting_name("with_context")


def test_missing_columns_raise():
    with pytest.raises(KeyError, match="output"):
        ce.verdict_table(pd.DataFrame({"split": [], "item_id": []}))
