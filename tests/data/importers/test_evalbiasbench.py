import json
from dataclasses import replace

import pytest

from judgelab.data.importers import SourceFormatError
from judgelab.data.importers.evalbiasbench import import_evalbiasbench
from judgelab.data.sources import SourceFile, parse_source, registry_dir


def _source():
    src = parse_source(registry_dir() / "evalbiasbench.yaml")
    return replace(src, files=[SourceFile("biasbench.json")])


def test_items_with_gold(tmp_path):
    data = {
        "length bias": [
            {
                "bias": "length bias",
                "instruction": "Hi",
                "response1": "short",
                "response2": "long long",
                "label": "1",
            }
        ],
        "concreteness": [
            {
                "bias": "concreteness",
                "instruction": "Why",
                "response1": "a",
                "response2": "b",
                "label": "2",
            }
        ],
    }
    (tmp_path / "biasbench.json").write_text(json.dumps(data))
    items, judgments = import_evalbiasbench(tmp_path, _source())
    assert judgments is None
    # label 1 -> response1 is pos; label 2 -> response2 is pos
    assert items[["split", "response_pos", "gold"]].values.tolist() == [
        ["length_bias", "short", "pos"],
        ["concreteness", "b", "pos"],
    ]


def test_bad_label(tmp_path):
    data = {
        "x": [{"bias": "x", "instruction": "i", "response1": "a", "response2": "b", "label": "3"}]
    }
    (tmp_path / "biasbench.json").write_text(json.dumps(data))
    with pytest.raises(SourceFormatError, match=r"row 0, column 'label'"):
        import_evalbiasbench(tmp_path, _source())
