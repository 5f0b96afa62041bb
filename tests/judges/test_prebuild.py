"""Rows parsed while answers arrive (`judges.prebuild`) give the table built at the end."""

from __future__ import annotations

from judgelab.data import catalog
from judgelab.judges import spec as spec_mod
from judgelab.judges import table
from judgelab.judges.cache import RequestCache, request_key
from judgelab.judges.prebuild import Prebuild
from judgelab.judges.rows import item_records
from judgelab.testing.judge_cli import loopback_spec_dict


def _answer(i: int) -> dict:
    verdict = ("[[A]]", "[[B]]", "no verdict here")[i % 3]
    return {
        "content": verdict,
        "finish_reason": "stop",
        "prompt_tokens": 10 + i,
        "completion_tokens": 2,
        "latency_s": 0.01,
        "created_at": "2026-01-01T00:00:00+00:00",
    }


def test_rows_parsed_in_two_polls_equal_the_rows_built_at_the_end(tmp_path):
    items = catalog.load_items("sample:contextualjudgebench")
    spec = spec_mod.from_dict(loopback_spec_dict("http://127.0.0.1:1/v1", api_key_env="K"))
    plan = table.plan(items, spec)
    answers = {p.key: _answer(i) for i, p in enumerate(plan.requests)}
    with RequestCache(tmp_path / "c.sqlite") as cache:
        cache.put(request_key({"endpoint": "x", "model": "other"}), {"model": "other"}, {})
        pre = Prebuild(item_records(items), plan, cache.path)
        keys = list(answers)
        cache.put_many([(k, plan.requests[0].request, answers[k]) for k in keys[:10]])
        assert pre.poll() == 10 and len(pre.keys_left()) == len(keys) - 10
        cache.put_many([(k, plan.requests[0].request, answers[k]) for k in keys[10:20]])
        assert pre.poll() == 10 and pre.poll() == 0  # nothing new: nothing parsed twice
        left = {k: answers[k] for k in pre.keys_left()}  # the last answers, read at the end
    assert len(left) == len(keys) - 20
    built = table.build_for(items, plan, left, parsed=pre.parsed)
    whole = table.build_for(items, plan, answers)
    assert built.judgments.equals(whole.judgments) and built.details.equals(whole.details)
    assert (~whole.judgments["valid"]).sum() > 0  # the unparseable third is kept, invalid


def test_a_cache_without_rowids_prebuilds_nothing(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE requests (key TEXT PRIMARY KEY, request TEXT NOT NULL, "
        "response TEXT NOT NULL, created_at TEXT NOT NULL) WITHOUT ROWID"
    )
    con.commit()
    con.close()
    items = catalog.load_items("sample:contextualjudgebench")
    spec = spec_mod.from_dict(loopback_spec_dict("http://127.0.0.1:1/v1", api_key_env="K"))
    plan = table.plan(items, spec)
    with RequestCache(path) as cache:
        pre = Prebuild(item_records(items), plan, cache.path)
        cache.put(plan.requests[0].key, plan.requests[0].request, _answer(0))
        assert pre.poll() == 0 and len(pre.keys_left()) == len(plan.keys)
