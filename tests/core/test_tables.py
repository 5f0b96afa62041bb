import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from judgelab.core import schema, tables
from judgelab.core.schema import SchemaError


def small_judgments(n: int, output: str = "[[A]]") -> pd.DataFrame:
    return schema.new_judgments(
        [
            {
                "benchmark": "b",
                "split": "s",
                "item_id": f"i{k}",
                "judge": "j",
                "output": output,
                "verdict": "A",
                "valid": True,
                "chosen": "pos",
                "correct": True,
            }
            for k in range(n)
        ]
    )


def test_roundtrip_preserves_values_and_dtypes(tmp_path: Path):
    df = small_judgments(5)
    path = tables.write_judgments(df, tmp_path / "j.parquet")
    back = tables.read_judgments(path)
    pd.testing.assert_frame_equal(back, df)


def test_write_validates_and_leaves_no_file(tmp_path: Path):
    df = small_judgments(3)
    df.loc[1, "chosen"] = "left"
    target = tmp_path / "j.parquet"
    with pytest.raises(SchemaError, match=r"file .*j.parquet, column 'chosen', row 1"):
        tables.write_judgments(df, target)
    assert list(tmp_path.iterdir()) == []


def test_read_not_parquet_names_file(tmp_path: Path):
    bad = tmp_path / "notes.parquet"
    bad.write_text("this is not parquet")
    with pytest.raises(tables.TableError, match=r"notes.parquet: not a readable parquet"):
        tables.read_judgments(bad)


def test_read_truncated_parquet_names_file(tmp_path: Path):
    good = tables.write_judgments(small_judgments(50), tmp_path / "j.parquet")
    data = good.read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(tables.TableError, match=r"cut.parquet: not a readable parquet"):
        tables.read_judgments(cut)


def test_read_missing_file(tmp_path: Path):
    with pytest.raises(tables.TableError, match=r"nope.parquet: no such judgments table"):
        tables.read_judgments(tmp_path / "nope.parquet")


def test_read_validates_content(tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    df = small_judgments(2).drop(columns=["judge"])
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "x.parquet")
    with pytest.raises(SchemaError, match=r"file .*x.parquet, column 'judge': missing column"):
        tables.read_judgments(tmp_path / "x.parquet")


WRITER = textwrap.dedent(
    """
    import sys
    import pandas as pd
    from judgelab.core import schema
    from judgelab.core import tables
    n = int(sys.argv[2])
    df = schema.new_judgments([
        {"benchmark": "b", "split": "s", "item_id": f"i{k}", "judge": "j",
         "output": "x" * 2000 + str(k), "valid": True}
        for k in range(n)
    ])
    print("ready", flush=True)
    while True:
        tables.write_judgments(df, sys.argv[1])
    """
)


def test_sigkill_during_write_leaves_old_table_intact(tmp_path: Path):
    target = tmp_path / "j.parquet"
    old = small_judgments(7, output="old")
    tables.write_judgments(old, target)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    # The writer rewrites a ~100 MB-in-memory table in a loop; kill it at several moments.
    for delay in (0.05, 0.3, 0.7):
        proc = subprocess.Popen(
            [sys.executable, str(script), str(target), "40000"], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        back = tables.read_judgments(target)  # whichever table is there is complete
        assert len(back) in (7, 40000)
    # No stray half file is left under a readable table name.
    leftovers = [p.name for p in tmp_path.iterdir() if p.suffix == ".parquet"]
    assert leftovers == ["j.parquet"]


def test_read_jsonl_reports_line(tmp_path: Path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"a": 1}\n{"a": 2\n', encoding="utf-8")
    with pytest.raises(tables.TableError, match=r"x.jsonl, line 2: malformed JSON"):
        tables.read_jsonl(f)
    f.write_text("", encoding="utf-8")
    with pytest.raises(tables.TableError, match=r"x.jsonl: empty file"):
        tables.read_jsonl(f)
    f.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(tables.TableError, match=r"x.jsonl, line 1: not UTF-8"):
        tables.read_jsonl(f)
    f.write_text('\ufeff{"a": 1}\n', encoding="utf-8")  # a BOM is fine
    assert tables.read_jsonl(f) == [{"a": 1}]
