"""FaithBench contrastive pairs: by gold label or severity, all or disjoint."""

import pytest

from judgelab.analyses import faithfulness


def test_faithbench_pairs_by_gold_and_severity(fb_items):
    pairs = faithfulness.faithbench_pairs(fb_items)
    # S1: {1,2} x {3} = 2 pairs; S2: {4,5} x {6} = 2; S3 has one label only -> 0
    assert sorted(pairs["pair_id"]) == ["1>3", "2>3", "4>6", "5>6"]
    assert pairs["group"].nunique() == 2
    sev = faithfulness.faithbench_pairs(fb_items, by="severity")
    # S1 ranks 0,0,3 -> 2 pairs; S2 ranks 0 (4), 1 (5 Benign), 2 (6) -> 3 pairs
    assert sorted(sev["pair_id"]) == ["1>3", "2>3", "4>5", "4>6", "5>6"]
    dis = faithfulness.faithbench_pairs(fb_items, pairing="disjoint", seed=3)
    # each summary at most once: one pair per source
    assert len(dis) == 2 and not set(dis["item_pos"]) & set(dis["item_neg"])
    summary = faithfulness.pair_summary(pairs)
    assert summary[["pairs", "sources", "summaries"]].iloc[0].tolist() == [4, 2, 6]
    with pytest.raises(ValueError, match="pairing"):
        faithfulness.faithbench_pairs(fb_items, pairing="some")
    with pytest.raises(KeyError):
        faithfulness.faithbench_pairs(fb_items.drop(columns="gold"))
