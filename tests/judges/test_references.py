"""The runner derives the references a condition needs (spec 001 §3.3): random and self."""

from __future__ import annotations

import json

import pytest

from judgelab.core import schema
from judgelab.judges import runner, table
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.openai_server import OpenAIServer


def _items():
    rows = []
    # Three questions, each answered by two candidates; "judge-model" is the judge's own model.
    for q, ref in (("q1", "Paris"), ("q2", "Rome"), ("q3", "Oslo")):
        for cand, answer in (("judge-model", f"own answer to {q}"), ("other", f"other on {q}")):
            rows.append(
                {
                    "benchmark": "nfl_tiny",
                    "split": "s",
                    "item_id": f"{q}:{cand}",
                    "task": "pointwise",
                    "question": f"Capital for {q}?",
                    "response": answer,
                    "reference": ref,
                    "gold": "Correct",
                    "meta": {"candidate_model": cand},
                }
            )
    return schema.new_items(rows)


@pytest.fixture()
def spec(monkeypatch):
    monkeypatch.setenv("JL_REF_KEY", "dummy-ref-key")
    with OpenAIServer() as server:
        yield spec_mod.from_dict(
            {
                "endpoint": "openai-compatible",
                "model": "judge-model",
                "base_url": server.url,
                "api_key_env": "JL_REF_KEY",
                "template": "nfl.single",
                "conditions": ["reference=none", "reference=random", "reference=self"],
                "seed": 7,
            }
        )


def _reference_in(request) -> str:
    text = request.request["messages"][-1]["content"]
    start = text.index("[The Start of Reference Answer]\n") + len(
        "[The Start of Reference Answer]\n"
    )
    return text[start : text.index("\n[The End of Reference Answer]")]


def test_random_and_self_references_are_built_by_the_runner(spec):
    items = _items()
    plan = table.plan(runner.with_condition_references(items, spec), spec)
    by = {(r.item_id, r.condition): r for r in plan.requests}
    own = dict(zip(items["item_id"], items["reference"], strict=True))
    for item_id in own:
        # random: another question's reference, never the item's own.
        ref = _reference_in(by[(item_id, "reference=random")])
        assert ref in {"Paris", "Rome", "Oslo"} and ref != own[item_id]
        # self: the judge model's own answer to the same question, for every candidate.
        q = item_id.split(":")[0]
        assert _reference_in(by[(item_id, "reference=self")]) == f"own answer to {q}"
    # One draw per question: both candidates of a question get the same random reference.
    assert _reference_in(by[("q1:judge-model", "reference=random")]) == _reference_in(
        by[("q1:other", "reference=random")]
    )


def test_derived_references_are_stable_and_respect_given_ones(spec, tmp_path):
    items = _items()
    first = runner.with_condition_references(items, spec)
    assert first["meta"].tolist() == runner.with_condition_references(items, spec)["meta"].tolist()
    # A split/limit selection requests a subset but the prompts (and cache keys) do not change.
    with RequestCache(tmp_path / "c.sqlite") as cache:
        part = runner.run(items, spec, limit=2, cache=cache, progress=False, write_tables=False)
        full = runner.run(items, spec, cache=cache, progress=False, write_tables=False)
    assert part.summary.answered == 2 * 3  # 2 items x 3 conditions
    assert full.summary.cache_hits == 6 and full.summary.answered == 12
    # A reference the item already carries wins over the derived one.
    given = items.copy()
    meta = json.loads(given.loc[0, "meta"])
    meta["references"] = {"random": "hand-picked"}
    given.loc[0, "meta"] = json.dumps(meta)
    out = json.loads(runner.with_condition_references(given, spec).loc[0, "meta"])
    assert out["references"]["random"] == "hand-picked"
