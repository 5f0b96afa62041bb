"""Preferences per pair: pointwise scores compared, and `ragas.*` runs over the pair items."""

import pandas as pd

from judgelab.analyses import faithfulness


def test_pointwise_preferences_and_judgment_scores(fb_items):
    pairs = faithfulness.faithbench_pairs(fb_items)
    judg = pd.DataFrame(
        {
            "item_id": ["1", "2", "3", "4", "5", "6"],
            "judge": "d",
            "output": ["1", "0", "0", "0.8", "0.3", None],
            "verdict": ["Consistent", "Hallucinated", "Hallucinated", "Consistent", "x", None],
            "valid": [True, True, True, True, True, False],
        }
    )
    scores = faithfulness.judgment_scores(judg)
    assert scores["score"].tolist()[:5] == [1.0, 0.0, 0.0, 0.8, 0.3]
    prefs = faithfulness.pointwise_preferences(scores, pairs).set_index("pair_id")["pref"]
    # 1>3: 1 vs 0 pos; 2>3: 0 vs 0 tie; 4>6 and 5>6: item 6 invalid
    assert prefs.to_dict() == {"1>3": "pos", "2>3": "tie", "4>6": "invalid", "5>6": "invalid"}


def test_template_preferences_from_pair_items(fb_items):
    items = fb_items
    pairs = faithfulness.faithbench_pairs(items)
    table = faithfulness.pair_items(items, pairs)
    assert set(table["benchmark"]) == {"fb_pairs"} and set(table["task"]) == {"pairwise"}
    rows = []
    for pid, (c0, c1) in {
        "1>3": ("pos", "pos"),
        "2>3": ("pos", "neg"),
        "4>6": ("neg", "neg"),
    }.items():
        for order, chosen in ((0, c0), (1, c1)):
            rows.append((pid, "j.cmp", "ragas.compare", "", order, None, chosen))
    for pid, sp, sn in (("1>3", "9", "2"), ("2>3", "5", "5")):
        rows.append((pid, "j.dir", "ragas.direct", "candidate=pos", 0, sp, None))
        rows.append((pid, "j.dir", "ragas.direct", "candidate=neg", 0, sn, None))
    j = pd.DataFrame(
        rows, columns=["item_id", "judge", "prompt", "condition", "order", "verdict", "chosen"]
    ).assign(valid=True)
    prefs = faithfulness.template_preferences(j, table)
    got = {(r.judge, r.pair_id): (r.method, r.pref) for r in prefs.itertuples()}
    assert got[("j.cmp", "1>3")] == ("Ranking", "pos")
    assert got[("j.cmp", "2>3")] == ("Ranking", "tie")  # the orders disagree
    assert got[("j.cmp", "4>6")] == ("Ranking", "neg")
    assert got[("j.dir", "1>3")] == ("Baseline", "pos")
    assert got[("j.dir", "2>3")] == ("Baseline", "tie")
    first = faithfulness.template_preferences(j, table, orders="1").set_index(["judge", "pair_id"])
    assert first.loc[("j.cmp", "2>3"), "pref"] == "neg"
