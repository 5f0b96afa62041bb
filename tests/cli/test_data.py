"""`judgelab data list|fetch|import|import-file` end to end on a tmp registry and mirror."""

from __future__ import annotations

import json

import pandas as pd

from judgelab.cli import main as cli
from judgelab.core import paths, tables
from judgelab.data import ingest as imports


def test_list_shows_sources(tiny_registry, capsys):
    assert cli.main(["data", "list"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("tinypairs"))
    # kind, licence, size unknown, 1 file, not cached, in the mirror, not imported, unit = item,
    # no Hugging Face commit pinned
    assert line.split() == [
        "tinypairs",
        "corpus",
        "MIT",
        "?",
        "1",
        "no",
        "yes",
        "no",
        "item",
        "-",
        "-",
    ]
    assert "contextualjudgebench" in out


def test_import_writes_tables_and_summary(tiny_registry, capsys):
    assert cli.main(["data", "import", "tinypairs"]) == 0
    out = capsys.readouterr().out
    items = tables.read_items(paths.items() / "tinypairs.parquet")
    assert items.item_id.tolist() == ["1", "2"]
    gpt4 = tables.read_judgments(paths.judgments() / "tinypairs" / "GPT-4.parquet")
    # 3 GPT-4 rows: valid, valid, "junk" invalid; no ties.
    assert (len(gpt4), int(gpt4.valid.sum())) == (3, 2)
    summary = [x.split() for x in out.splitlines() if x.startswith(("GPT-4", "Llama"))]
    assert summary == [["GPT-4", "3", "2", "1", "0"], ["Llama", "1", "1", "0", "1"]]
    assert imports.is_imported("tinypairs")
    assert sorted(p.name for p in tiny_registry.rglob("*")) == [
        "j.csv",
        "tiny",
    ]  # mirror untouched


def test_import_limit_and_ensure_imported(tiny_registry):
    imports.ensure_imported("tinypairs")
    first = (paths.items() / "tinypairs.parquet").stat().st_mtime_ns
    imports.ensure_imported("tinypairs")  # already there: nothing rewritten
    assert (paths.items() / "tinypairs.parquet").stat().st_mtime_ns == first
    report = imports.import_source("tinypairs", limit=1)
    assert report.n_items == 1 and report.n_judgments == 2  # item 1 has two GPT-4 rows
    # Llama only judged item 2: its stale table from the full import is removed.
    assert not (paths.judgments() / "tinypairs" / "Llama.parquet").exists()


def test_unknown_source_exits_2_listing_known(tiny_registry, capsys):
    assert cli.main(["data", "import", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown source 'nope'" in err and "tinypairs" in err


def test_bad_mirror_content_writes_nothing(tiny_registry, capsys):
    csv = tiny_registry / "tiny/j.csv"
    csv.write_text(csv.read_text().replace(",swap,", ",swop,"))
    assert cli.main(["data", "import", "tinypairs"]) == 2
    err = capsys.readouterr().err
    assert "j.csv" in err and "column 'swap'" in err
    assert not paths.items().exists() or not any(paths.items().glob("*.parquet"))
    assert not paths.judgments().exists()


def test_import_file_and_its_errors(tmp_path, capsys):
    data = tmp_path / "mine.jsonl"
    data.write_text(
        json.dumps({"qid": "a", "q": "2+2", "ans": "4", "gold": "Correct", "v": "Correct"})
        + "\n"
        + json.dumps({"qid": "b", "q": "3+3", "ans": "7", "gold": "Incorrect", "v": "Correct"})
        + "\n"
    )
    mapping = tmp_path / "m.yaml"
    mapping.write_text(
        "benchmark: mine\ntask: pointwise\nitem_id: qid\nquestion: q\nresponse: ans\n"
        "gold: gold\nverdict: v\njudge: my-judge\n"
    )
    assert cli.main(["data", "import-file", str(data), "--mapping", str(mapping)]) == 0
    j = tables.read_judgments(paths.judgments() / "mine" / "my-judge.parquet")
    assert j.correct.tolist() == [True, False]  # Correct==Correct; Correct!=Incorrect
    capsys.readouterr()

    mapping.write_text("benchmark: mine\ntask: pointwise\nitem_id: id_col\nverdict: v\n")
    assert cli.main(["data", "import-file", str(data), "--mapping", str(mapping)]) == 2
    assert "column 'id_col'" in capsys.readouterr().err

    data.write_text('{"qid": "a"}\n{"qid": \n')
    assert cli.main(["data", "import-file", str(data), "--mapping", str(mapping)]) == 2
    assert "mine.jsonl, line 2: malformed JSON" in capsys.readouterr().err


def test_fetch_via_mirror_then_missing_file(tiny_registry, capsys):
    assert cli.main(["data", "fetch", "tinypairs"]) == 0
    assert "1 files of tinypairs verified in" in capsys.readouterr().out
    (tiny_registry / "tiny/j.csv").unlink()
    assert cli.main(["data", "fetch", "tinypairs"]) == 1
    assert "j.csv: missing from the mirror" in capsys.readouterr().err


def _two_judges_no_ids(tmp_path):
    data = tmp_path / "pairs.jsonl"
    rows = [
        {"who": who, "q": f"Question {i}?", "r1": f"good {i}", "r2": f"bad {i}", "v": "1"}
        for who in ("judge-a", "judge-b")
        for i in range(3)
    ]
    rows[4] = {**rows[4], "r1": rows[4]["r2"], "r2": rows[4]["r1"], "v": "2"}  # slots swapped
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mapping = tmp_path / "m.yaml"
    mapping.write_text(
        "benchmark: pairs\nquestion: q\nresponse_1: r1\nresponse_2: r2\nverdict: v\n"
        "judge: {column: who}\n"
    )
    return data, mapping


def test_i34_5_import_without_ids_one_item_per_content(tmp_path, capsys):
    data, mapping = _two_judges_no_ids(tmp_path)
    assert cli.main(["data", "import-file", str(data), "--mapping", str(mapping)]) == 0
    out = capsys.readouterr().out
    items = tables.read_items(paths.items() / "pairs.parquet")
    assert len(items) == 3  # 3 questions judged by 2 judges: 3 items, not 6
    assert items["item_id"].str.fullmatch(r"c[0-9a-f]{16}").all()
    j = pd.concat(
        tables.read_judgments(p) for p in sorted((paths.judgments() / "pairs").glob("*.parquet"))
    )
    assert j.groupby("item_id")["judge"].nunique().tolist() == [2, 2, 2]
    assert "no item_id column: item ids derived from the content" in out
    # The same ids on a second import: they are a function of the text alone.
    assert cli.main(["data", "import-file", str(data), "--mapping", str(mapping)]) == 0
    again = tables.read_items(paths.items() / "pairs.parquet")
    assert sorted(again["item_id"]) == sorted(items["item_id"])


def test_i34_5_import_without_ids_refuses_repeated_content(tmp_path, capsys):
    data, mapping = _two_judges_no_ids(tmp_path)
    lines = data.read_text().splitlines()
    data.write_text("\n".join([*lines, lines[0]]) + "\n")  # judge-a judges Question 0 twice
    assert cli.main(["data", "import-file", str(data), "--mapping", str(mapping)]) == 2
    err = capsys.readouterr().err
    assert "pairs.jsonl, line 7" in err and "column 'q'" in err
    assert "question 'Question 0?', first at" in err and "judged again by 'judge-a'" in err
