"""Issue 38 item 3: `judgelab judge` on an items .parquet file without pandas (`judges.light`).

The tables the light path writes must equal what the pandas path (`runner.run`) writes from
the same cache: columns, dtypes, rows, order and schema metadata.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from judgelab.cli import judge as cli_judge
from judgelab.core import paths, tables
from judgelab.judges import light, runner
from judgelab.judges import spec as spec_mod
from judgelab.testing.items import pairwise_rows
from judgelab.testing.judge_cli import loopback_spec_dict, write_loopback_spec
from judgelab.testing.openai_server import OpenAIServer, default_responder

KEY = "sk-" + "test-LIGHT-0123456789abcdef"
HEAVY = ("pandas", "scipy", "matplotlib")


def _items(tmp_path: Path, n: int = 6, **kw) -> Path:
    import pandas as pd

    from judgelab.core import schema

    rows = pairwise_rows(n, benchmark="lightbench", splits=("a", "b"), **kw)
    rows[1]["gold"] = None  # an item without gold: `correct` is null
    path = tmp_path / "items.parquet"
    tables.write_items(schema.new_items(pd.DataFrame(rows)), path)
    return path


def _responder():
    calls = []

    def mixed(body):  # every third answer cannot be parsed: invalid rows, raw output kept
        calls.append(1)
        return "no idea" if len(calls) % 3 == 0 else default_responder(body)

    return mixed


def _tables(bench: str, judge_id: str):
    j = pq.read_table(paths.judgments() / bench / f"{judge_id}.parquet")
    d = pq.read_table(paths.judgments() / bench / "details" / f"{judge_id}.parquet")
    return j, d


@pytest.mark.parametrize("limit", [None, 2])  # 2: the other items' rows are pending
def test_light_tables_equal_the_pandas_tables(tmp_path, monkeypatch, limit):
    monkeypatch.setenv("JL_TEST_KEY", KEY)
    path = _items(tmp_path)
    with OpenAIServer(responder=_responder()) as server:
        keys = {"concurrency": 4, "price_in": 1.0, "price_out": 2.0}
        spec_dict = loopback_spec_dict(server.url, api_key_env="JL_TEST_KEY", **keys)
        spec = spec_mod.from_dict(spec_dict)
        frame = tables.read_items(path)
        want = runner.run(frame, spec, limit=limit, progress=False)
        want_j, want_d = _tables("lightbench", spec.judge_id)
        shutil.rmtree(paths.judgments())  # the cache stays: the light run reads every answer
        got = light.run(light.read_items(path), spec, limit=limit, progress=False)
    assert got is not None and got.summary.cache_hits == want.summary.planned
    got_j, got_d = _tables("lightbench", spec.judge_id)
    assert got_j.schema.equals(want_j.schema, check_metadata=True)
    assert got_j.equals(want_j) and got_j.num_rows == (12 if limit is None else 4)
    assert got_d.schema.equals(want_d.schema, check_metadata=True)
    assert got_d.equals(want_d)
    assert got.judgments.equals(want_j)  # the table returned is the one written
    for field in ("rows", "invalid", "pending", "planned", "not_applicable"):
        assert getattr(got.summary, field) == getattr(want.summary, field), field
    assert got.summary.cost_usd == 0 < want.summary.cost_usd  # only new calls cost
    assert want.summary.invalid > 0 and (limit is None or want.summary.pending > 0)
    assert (
        tables.read_judgments(paths.judgments() / "lightbench" / f"{spec.judge_id}.parquet")[
            "correct"
        ]
        .isna()
        .sum()
        == 2
    )  # item 1 has no gold, in both orders


def test_read_items_leaves_files_it_is_not_sure_of_to_pandas(tmp_path):
    import pandas as pd

    path = _items(tmp_path)
    good = tables.read_items(path)
    assert light.read_items(path) == runner.table_mod.item_records(good)
    variants = {
        "dup": pd.concat([good, good.head(1)]),  # a duplicate key
        "task": good.assign(task=["nope"] + list(good["task"][1:])),
        "extra": good.assign(colour="red"),
        "nullkey": good.assign(item_id=[None] + list(good["item_id"][1:])),
        "meta": good.assign(meta="[1]"),  # JSON, but not an object
        "int": good.assign(len_question=1),  # an integer length column
    }
    for name, frame in variants.items():
        frame.to_parquet(tmp_path / f"{name}.parquet", index=False)
        assert light.read_items(tmp_path / f"{name}.parquet") is None, name
    good.to_parquet(tmp_path / "same.parquet", index=False)
    assert light.read_items(tmp_path / "same.parquet") == light.read_items(path)
    jsonl = tmp_path / "items.jsonl"
    jsonl.write_text(json.dumps(pairwise_rows(1, benchmark="b")[0]) + "\n")
    for other in (jsonl, tmp_path / "missing.parquet"):
        assert light.read_items(other) is None, other


def test_cli_on_a_bad_parquet_file_names_the_problem(tmp_path, monkeypatch, capsys):
    import pandas as pd

    good = tables.read_items(_items(tmp_path))
    dup = tmp_path / "dup.parquet"
    pd.concat([good, good.tail(1)]).to_parquet(dup, index=False)
    spec = write_loopback_spec(tmp_path / "j.yaml", "http://127.0.0.1:9/v1", api_key_env="X")
    argv = ["--judge", str(spec), "--benchmark", str(dup), "--no-progress"]
    assert cli_judge.main(argv) == cli_judge.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "dup.parquet" in err and "duplicate key" in err and "row 6" in err


def test_unknown_split_and_partial_rerun_take_the_pandas_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JL_TEST_KEY", KEY)
    path = _items(tmp_path)
    with OpenAIServer() as server:
        spec = write_loopback_spec(tmp_path / "j.yaml", server.url, api_key_env="JL_TEST_KEY")
        args = ["--judge", str(spec), "--benchmark", str(path), "--no-progress"]
        assert cli_judge.main([*args, "--split", "zzz"]) == cli_judge.EXIT_BAD_INPUT
        assert "unknown split(s) ['zzz']" in capsys.readouterr().err
        assert cli_judge.main(args) == 0  # both orders
        assert cli_judge.main([*args, "--order", "0"]) == 0  # rebuilds order 0 only
    judge_id = spec_mod.load(spec).judge_id
    table = tables.read_judgments(paths.judgments() / "lightbench" / f"{judge_id}.parquet")
    assert sorted(table["order"].unique()) == [0, 1] and len(table) == 12  # never shrinks


_PROBE = """
import json, sys
from judgelab.cli.main import main
code = main(sys.argv[1:])
heavy = [m for m in {heavy!r} if m in sys.modules]
print("PROBE " + json.dumps({{"code": code, "heavy": heavy}}))
"""


def _probe(args: list[str], env: dict[str, str]) -> dict:
    code = _PROBE.format(heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120
    )
    line = [x for x in out.stdout.splitlines() if x.startswith("PROBE ")]
    assert line, out.stderr[-2000:]
    return {**json.loads(line[-1].removeprefix("PROBE ")), "out": out.stdout}


def test_judge_loads_no_analysis_stack_fresh_or_cached(tmp_path):
    import os

    path = _items(tmp_path, n=8)
    env = {**os.environ, "JL_TEST_KEY": KEY}
    with OpenAIServer() as server:
        spec = write_loopback_spec(tmp_path / "j.yaml", server.url, api_key_env="JL_TEST_KEY")
        args = ["judge", "--judge", str(spec), "--benchmark", str(path), "--no-progress"]
        fresh = _probe(args, env)
        cached = _probe(args, env)
    assert fresh["code"] == 0 and "requests made      16" in fresh["out"]
    assert cached["code"] == 0 and "cache hits         16" in cached["out"]
    assert fresh["heavy"] == [] and cached["heavy"] == []
    # the same probe sees pandas when the pandas path runs (an items .jsonl file)
    jsonl = tmp_path / "items.jsonl"
    rows = pairwise_rows(2, benchmark="lightbench")
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with OpenAIServer() as server:
        spec = write_loopback_spec(tmp_path / "k.yaml", server.url, api_key_env="JL_TEST_KEY")
        args = ["judge", "--judge", str(spec), "--benchmark", str(jsonl), "--no-progress"]
        assert "pandas" in _probe(args, env)["heavy"]
