import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.contexteval_attributes import (
    parse_contextual_attributes,
    read_contextual_attributes,
)

ATTRS = (
    "* Level of Detail\n"
    'Q: How much detail do you prefer in the response? A: ["One-sentence answer", "Key points"]\n'
    "* Gender\n"
    "Q: Should the response consider any specific gender perspective? "
    'A: ["Male", "Female", "Non-binary"]\n'
)


def test_attributes_tidy_table(tmp_path):
    (tmp_path / "contextual_attributes_qas.txt").write_text(ATTRS)
    df = read_contextual_attributes(tmp_path)
    # 2 options + 3 options = 5 rows
    assert len(df) == 5
    assert df.groupby("attribute", sort=False)["option"].count().to_dict() == {
        "Level of Detail": 2,
        "Gender": 3,
    }
    assert df.iloc[4].tolist() == [
        "Gender",
        "Should the response consider any specific gender perspective?",
        "Non-binary",
        2,
    ]


def test_attributes_errors_name_the_line():
    with pytest.raises(SourceFormatError, match="line 2: expected"):
        parse_contextual_attributes("* Style\nWhat style?", file="a.txt")
    with pytest.raises(SourceFormatError, match=r"line 2: options are not a JSON list"):
        parse_contextual_attributes('* Style\nQ: Which? A: ["a", ]', file="a.txt")
    with pytest.raises(SourceFormatError, match="'Style' has no Q/A line"):
        parse_contextual_attributes("* Style\n* Other\nQ: x? A: []", file="a.txt")
