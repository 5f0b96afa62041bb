"""Surface vs content justification shares (Figure 4)."""

import pandas as pd
import pytest

from judgelab.analyses import contexteval as ce
from judgelab.errors import ChoiceError


def _coded(baseline: str = "NoCtxGen-NoCtxEval", context: str = "CtxGen-CtxEval"):
    return pd.DataFrame(
        {
            "source": "human",
            "setting": [baseline] * 4 + [context] * 2,
            "codes": ["Codes: 2", "Codes: 1, 2", "Codes: 1", "??", "Codes: 1", "Codes: 1"],
        }
    )


def test_justification_shares_hand_computed():
    coded = _coded()
    sh = ce.justification_shares(coded).set_index("setting")
    # baseline: surface in 2 of 4 = 50%, content 2 of 4, both 1 of 4, unparseable 1 of 4.
    assert sh.loc[
        "NoCtxGen-NoCtxEval", ["pct_surface", "pct_content", "pct_both", "pct_unparseable"]
    ].tolist() == [50, 50, 25, 25]
    assert sh.loc["CtxGen-CtxEval", "delta_surface"] == pytest.approx(-50)
    # share of code mentions: 2 surface + 2 content mentions -> 50 / 50.
    m = ce.justification_shares(coded, normalization="share_of_code_mentions")
    assert m["pct_surface"].iloc[0] == 50
    with pytest.raises(ChoiceError, match="normalization must be one of"):
        ce.justification_shares(coded, normalization="share")


def test_repo_setting_ids_are_named_as_the_paper():
    # The loaders keep the repo's setting ids; the table names them as the paper does.
    named = ce.justification_shares(_coded())
    repo = ce.justification_shares(_coded("gen_wo_ctx_eval_wo_ctx", "gen_w_ctx_eval_w_ctx"))
    pd.testing.assert_frame_equal(repo, named)


def test_parse_codes():
    assert ce.parse_codes("Codes: 1, 2") == (True, True, True)
    assert ce.parse_codes("none") == (False, False, False)
    assert ce.parse_codes(None) == (False, False, False)


def test_missing_columns_raise():
    with pytest.raises(KeyError, match="codes"):
        ce.justification_shares(pd.DataFrame({"source": [], "setting": []}))
