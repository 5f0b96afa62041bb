"""Batch export: the online runner's requests, minus cached and in-flight keys, sharded."""

from __future__ import annotations

import json

import pytest

from judgelab.judges import runner, table
from judgelab.judges.batch import export
from judgelab.judges.cache import RequestCache

URL = "http://127.0.0.1:9/v1"


def _read(files):
    return [json.loads(x) for f in files for x in f.read_text().splitlines()]


def test_export_is_the_runner_plan_and_skips_cached_and_held_keys(cjb, make_spec, tmp_path):
    spec = make_spec(URL)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        work = export.pending(cjb, spec, cache, splits=None, limit=5)
        planned = table.plan(cjb.head(5), spec).requests
        assert [p.key for p in work.todo] == [p.key for p in planned] and len(planned) == 10
        # Cache three answers and hold two keys in a (pretend) submitted batch.
        cached = [p.key for p in planned[:3]]
        cache.put_many([(k, {"q": k}, {"content": "A"}) for k in cached])
        held = {planned[3].key, planned[4].key}
        work = export.pending(cjb, spec, cache, held=held, limit=5)
    assert [p.key for p in work.todo] == [p.key for p in planned[5:]]
    assert work.cached == set(cached) and work.in_flight == 2
    files = export.write_shards(work.todo, tmp_path / "out")
    lines = _read(files)
    assert [x["custom_id"] for x in lines] == [p.key for p in planned[5:]]
    assert not set(cached) & {x["custom_id"] for x in lines}


def test_dry_run_counts_match_the_online_dry_run(cjb, make_spec, tmp_path):
    spec = make_spec(URL, price_in=2.0, price_out=8.0)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        online = runner.dry_run(cjb, spec, cache=cache)
        work = export.pending(cjb, spec, cache)
    half = export.estimate(work, spec)
    assert (half.planned, half.to_submit, half.prompt_tokens) == (
        online.planned,
        online.to_request,
        online.prompt_tokens,
    )
    assert half.cost_usd == pytest.approx(online.cost_usd / 2)
    given = export.estimate(work, spec, price_in=1.0, price_out=1.0)
    tokens = given.prompt_tokens + given.max_completion_tokens
    assert given.cost_usd == pytest.approx(tokens / 1e6)
    assert "0.5 x the spec's prices" in half.format()
    assert export.estimate(work, make_spec(URL)).cost_usd is None
    with pytest.raises(ValueError, match="discount"):
        export.estimate(work, spec, discount=1.5)


def test_shards_respect_line_and_byte_limits_and_are_written_whole(cjb, make_spec, tmp_path):
    spec = make_spec(URL)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        todo = export.pending(cjb, spec, cache).todo
    out = tmp_path / "out"
    files = export.write_shards(todo, out, max_lines=7)
    assert [len(f.read_text().splitlines()) for f in files] == [7, 7, 7, 7, 4]
    assert _read(files) == [export.formats.openai_line(p) for p in todo]
    sizes = [len(export.encode(export.formats.openai_line(p))) for p in todo]
    limit = max(sizes) * 3  # at most three lines fit
    files = export.write_shards(todo, out, max_bytes=limit)
    assert all(f.stat().st_size <= limit for f in files) and len(files) >= 11
    assert len(_read(files)) == 32
    # A smaller export into the same folder leaves no stale shard behind.
    files = export.write_shards(todo[:3], out)
    assert sorted(p.name for p in out.iterdir()) == ["requests-00000.jsonl"]
    with pytest.raises(ValueError, match="over the shard limit"):
        export.write_shards(todo, tmp_path / "tiny", max_bytes=100)
    assert not list((tmp_path / "tiny").glob("*"))  # nothing half-written


def test_anthropic_export_and_offline_judges(cjb, make_spec, tmp_path):
    spec = make_spec(URL)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        todo = export.pending(cjb, spec, cache).todo
        files = export.write_shards(todo, tmp_path / "a", fmt="anthropic")
        lines = _read(files)
        assert [x["custom_id"] for x in lines] == [p.key for p in todo]
        assert all(set(x) == {"custom_id", "params"} for x in lines)
        with pytest.raises(ValueError, match="unknown batch format"):
            export.write_shards(todo, tmp_path / "b", fmt="gemini")
        from judgelab.judges import spec as spec_mod

        offline = spec_mod.from_dict({"endpoint": "offline", "model": "always_a"})
        with pytest.raises(ValueError, match="offline baseline"):
            export.pending(cjb, offline, cache)


def test_rel3_10_stale_shards_are_only_this_prefix_s_own(cjb, make_spec, tmp_path):
    spec = make_spec(URL)
    out = tmp_path / "out"
    out.mkdir()
    others = ["ab-00000.jsonl", "a-0001.jsonl", "a-00001.jsonl.bak", "xa-00002.jsonl"]
    others.append("A-00003.jsonl")
    for name in others:
        (out / name).write_text("keep\n")
    with RequestCache(tmp_path / "c.sqlite") as cache:
        todo = export.pending(cjb, spec, cache, limit=2).todo
    export.write_shards(todo, out, prefix="a", max_lines=1)  # a-00000 .. a-00003
    assert (out / "a-00003.jsonl").exists()
    export.write_shards(todo, out, prefix="a", max_lines=3)  # a-00000, a-00001
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted({"a-00000.jsonl", "a-00001.jsonl", *others})
    for prefix in ("*", "a/b", "..", "[a]"):
        with pytest.raises(ValueError, match="shard prefix name"):
            export.write_shards(todo, out, prefix=prefix)
    assert sorted(p.name for p in out.iterdir()) == names
