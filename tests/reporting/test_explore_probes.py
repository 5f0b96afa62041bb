"""The arms behind a probe cell: which verdicts a probe moved, with texts and raw outputs."""

from __future__ import annotations

import pytest

from judgelab.analyses import probes
from judgelab.core import schema
from judgelab.reporting import explore


def _tables():
    rows = [
        dict(benchmark="b", split="s", item_id=str(i), task="pairwise", question=f"q{i}?",
             response_pos="Right answer.", response_neg="Wrong answer.", gold="pos", meta={})
        for i in range(3)
    ]  # fmt: skip
    items = probes.generate(schema.new_items(rows), ["authority"])
    prov = probes.provenance(items)
    out = []
    for r in prov.itertuples():
        moved = r.probe_target == "neg" and r.orig_item_id == "1"
        for order in (0, 1):
            c = "neg" if moved and order == 1 else "pos"
            out.append(dict(benchmark=r.benchmark, split=r.split, item_id=r.item_id, judge="J",
                            order=order, verdict=c, valid=True, chosen=c, correct=c == "pos",
                            output=f"raw {r.item_id}/{order}"))  # fmt: skip
    return items, schema.new_judgments(out)


def test_the_moved_arm_with_its_texts_and_outputs():
    items, judgments = _tables()
    found = explore.probe_cases(judgments, items, probe="authority", kind="toward")
    assert found["item_id"].tolist() == ["1~authority~neg"]
    row = found.iloc[0]
    assert row["verdict_0"] == "control pos → probed pos"
    assert row["verdict_1"] == "control pos → probed neg"
    assert row["output_1"] == "raw 1~authority~neg/1" and "[Source:" in row["response_neg"]
    assert row["category"] == "probe authority: toward"
    html = explore.cases_html(found)
    assert "control pos → probed neg" in html and "[Source:" in html
    assert explore.probe_cases(judgments, items, kind="away").empty
    unchanged = explore.probe_cases(judgments, items, kind="unchanged", judge="J")
    assert len(unchanged) == 5  # 3 items × 2 arms, less the moved one
    with pytest.raises(ValueError, match="kind must be one of"):
        explore.probe_cases(judgments, items, kind="sideways")
