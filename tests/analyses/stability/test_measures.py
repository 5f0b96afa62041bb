"""The card's stability row (issue 35 item 4): repeat-trial flips, else template sensitivity."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import registry
from judgelab.analyses.stability import measures as _measures  # noqa: F401  (registers)
from judgelab.data import catalog


def _row(source: str, judge: str | None = None) -> pd.DataFrame:
    loaded = catalog.load_source(source)
    judge = judge or str(loaded.judgments["judge"].iloc[0])
    ctx = registry.CardContext.build(
        loaded.items, loaded.judgments, judge=judge, source=source,
        options=registry.CardOptions(n_boot=99),
    )  # fmt: skip
    return pd.DataFrame(registry.get("stability")(ctx))


def test_i35_4_card_row_is_the_repeat_flip_rate():
    out = _row("sample:contextualjudgebench", "sample-judge-3-mostly-right")
    head = out[out["headline"]].iloc[0]
    assert head["scope"] == "repeat trials" and head["status"] == "ok"
    # counted directly: units (item × order) whose labelled trials are not all the same
    j = catalog.load_source("sample:contextualjudgebench").judgments
    j = j[(j["judge"] == "sample-judge-3-mostly-right") & j["valid"]]
    per = j.groupby(["item_id", "order"])["chosen"].agg(["nunique", "size"])
    per = per[per["size"] >= 2]
    assert head["value"] == pytest.approx((per["nunique"] > 1).mean())
    assert head["n"] == len(per) and head["ci_low"] <= head["value"] <= head["ci_high"]
    assert registry.get("stability").direction == "lower"


def test_i35_4_card_row_falls_back_to_other_prompts_then_na():
    out = _row("sample:judge_strategies")
    assert out.iloc[0]["scope"] == "other prompts" and "2 prompts" in out.iloc[0]["note"]
    na = _row("sample:contextualjudgebench", "sample-judge-1-always-first")
    assert na.iloc[0]["status"] == "n/a" and "one prompt" in na.iloc[0]["note"]
