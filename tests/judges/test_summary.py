"""What a run reports: the summary text, the dry-run estimate and its token rule."""

from __future__ import annotations

import json
import math

from judgelab.judges import summary


def test_estimate_tokens_is_chars_over_four_plus_chat_overheads():
    # ceil(401 / 4) = 101, + 4 per message (2) + 3 for the reply = 112
    msgs = [{"role": "system", "content": "x" * 1}, {"role": "user", "content": "y" * 400}]
    assert summary.estimate_tokens(msgs) == 112


def test_estimate_row_and_text():
    est = summary.Estimate(10, 4, 6, 1, 600, 60, None)
    assert math.isnan(est.as_row()["est_cost_usd"]) and est.as_row()["to_request"] == 6
    assert "unknown (no prices in spec)" in est.format()


def test_summary_text_names_failures_and_how_to_retry():
    s = summary.Summary(
        judge="j",
        benchmark="b",
        planned=4,
        cache_hits=1,
        requested=3,
        answered=2,
        failed=1,
        retries=2,
        not_applicable=0,
        rows=3,
        invalid=1,
        pending=1,
        prompt_tokens=30,
        completion_tokens=6,
        cost_usd=0.5,
        wall_s=1.0,
        retry_reasons={"timeout": 2},
        errors={"abcdef0123456789": "HTTP 400"},
    )
    text = s.format()
    assert "retries            2 (timeout=2)" in text
    assert "FAILED abcdef012345: HTTP 400" in text
    assert "rerun the same command to retry them" in text
    assert json.loads(summary.summary_json(s))["failed"] == 1
