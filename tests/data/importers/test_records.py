"""Reading a data file of judgments: errors name the file and the line or row."""

from __future__ import annotations

import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.records import read_records


def _write(tmp_path, name, text, encoding="utf-8"):
    p = tmp_path / name
    p.write_bytes(text.encode(encoding))
    return p


def test_empty_file_and_header_only(tmp_path):
    with pytest.raises(SourceFormatError, match="empty file"):
        read_records(_write(tmp_path, "e.csv", ""))
    with pytest.raises(SourceFormatError, match="empty file"):
        read_records(_write(tmp_path, "h.csv", "id,out1\n"))


def test_malformed_json_names_line(tmp_path):
    p = _write(tmp_path, "j.jsonl", '{"id": "a"}\n\n{"id": "b",}\n')
    with pytest.raises(SourceFormatError, match=r"j\.jsonl, line 3: malformed JSON"):
        read_records(p)


def test_non_utf8_is_an_error_naming_the_file(tmp_path):
    p = _write(tmp_path, "latin.csv", "id,out1\nq,caf\u00e9\n", encoding="latin-1")
    with pytest.raises(SourceFormatError, match=r"latin\.csv, line 2: not UTF-8"):
        read_records(p)


def test_rows_are_numbered_from_one_and_jsonl_lines_kept(tmp_path):
    df, unit = read_records(_write(tmp_path, "j.csv", "id,x\na,1\nb,\n"))
    assert unit == "row" and df.index.tolist() == [1, 2] and df.loc[2, "x"] is None
    df, unit = read_records(_write(tmp_path, "j.jsonl", '{"id": "a"}\n\n{"id": "b"}\n'))
    assert unit == "line" and df.index.tolist() == [1, 3]
