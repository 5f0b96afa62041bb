"""Issue 34 item 4: each leaderboard number links to the items behind it, on the judge's card.

The toy judge of `pairwise_tables` (CA 2/4, position A 6/8, final choices pos, tie, tie, pos)
and the graded answers of `correctness_tables`: each measure's items table holds exactly the
items (or judgments) the measure counted, and how each counted.
"""

from __future__ import annotations

import re

import pandas as pd

from judgelab.reporting import card, leaderboard


def _measure(items: pd.DataFrame, measure: str) -> pd.DataFrame:
    return items[items["measure"] == measure].dropna(axis=1, how="all")


def test_i34_4_card_items_are_the_items_each_measure_counted(pairwise_tables):
    items, judgments = pairwise_tables
    ctx = card.CardContext.build(items, judgments, judge="m.p", source="toy")
    got = card.judge_items(ctx)
    assert list(dict.fromkeys(got["measure"])) == ["ca", "kappa_human", "pos_a_rate",
                                                   "invalid_rate"]  # fmt: skip
    ca = _measure(got, "ca").set_index("item_id")
    assert ca["correct_both_orders"].to_dict() == {"1": True, "2": False, "3": False, "4": True}
    assert ca.loc["2", ["verdict_A_first", "verdict_A_second"]].tolist() == ["pos", "neg"]
    kappa = _measure(got, "kappa_human").set_index("item_id")
    assert kappa["final"].tolist() == ["pos", "tie", "tie", "pos"]
    assert kappa["agrees_with_human"].sum() == 2
    pos_a = _measure(got, "pos_a_rate")
    assert (pos_a["verdicts_for_A"].sum(), pos_a["valid_verdicts"].sum()) == (6, 8)  # 6/8
    invalid = _measure(got, "invalid_rate")
    assert len(invalid) == 8 and not invalid["invalid"].any()
    m = card.collect_measures(items, judgments, judge="m.p", source="toy", n_boot=50)
    head = card.headlines(m).set_index("measure")
    assert head.loc["ca", "n"] == len(ca) and head.loc["pos_a_rate", "n"] == 8


def test_i34_4_card_items_of_a_pointwise_judge(correctness_tables):
    items, judgments = correctness_tables
    ctx = card.CardContext.build(items, judgments, judge="g.umass", source="toy")
    got = card.judge_items(ctx)
    assert sorted(set(got["measure"])) == ["invalid_rate", "kappa_human"]  # no pairwise ones
    kappa = _measure(got, "kappa_human")
    assert kappa["human"].tolist() == ["Correct", "Correct", "Incorrect", "Incorrect"]
    assert kappa["agrees_with_human"].tolist() == [True, False, False, True]


def test_i34_4_card_items_view_anchors_each_measure_and_comparison_lists_none(
    pairwise_tables,
):
    items, judgments = pairwise_tables
    ctx = card.CardContext.build(items, judgments, judge="m.p", source="toy")
    page = str(card.items_view(card.judge_items(ctx).assign(key="toy:m.p")))
    for measure in card.ITEM_MEASURES:
        assert f'id="{leaderboard.items_anchor(measure)}"' in page
    assert page.count('<table id="jl-items-') == 4 and "Consistent accuracy: 4 items" in page
    sources = {"toy": card.CardSource("toy", None, ["a", "b"], "")}
    assert "compares 2 judges" in card.items_reason(sources)
    assert card.items_reason({"toy": card.CardSource("toy", None, ["a"], "")}) is None


def test_i34_4_leaderboard_numbers_link_to_the_items_behind_them():
    measures = pd.DataFrame(
        [
            {"key": k, "source": k.split(":")[0], "judge": k.split(":")[1], "measure": m,
             "headline": True, "value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 10,
             "status": "ok", "note": ""}
            for k in ("s:own", "s:other")
            for m in ("ca", "pos_a_rate", "kappa_human", "invalid_rate")
        ]
    )  # fmt: skip
    lights = pd.DataFrame(columns=list(leaderboard.LIGHT_COLUMNS))
    board = leaderboard.rows(measures, lights, {"s:own": "own.html"}, "all.html")
    assert leaderboard.items_anchor("pos_a_rate") == "items-pos-a-rate"
    own = board[board["Judge"].str.contains("<b>own</b>")].iloc[0]
    other = board[board["Judge"].str.contains("<b>other</b>")].iloc[0]
    for col in leaderboard.COLUMNS:
        assert f'href="own.html#{leaderboard.items_anchor(col.measure)}"' in own[col.name]
        assert 'href="all.html#Every-measure"' in other[col.name]  # no own card: as before
    assert 'href="own.html#Every-measure"' in own["Judge"]


def test_i34_4_leaderboard_legend_says_where_numbers_link():
    legend = leaderboard.legend_html()
    assert "items behind it" in legend and "comparison card" in legend


def test_i34_4_card_items_view_cuts_a_long_table_and_links_every_row(monkeypatch):
    # a UMass judge: 3,600 judgments (the page would pass 1 MB); 3 invalid ones come first
    monkeypatch.setattr(card.items, "ROWS_SHOWN", 10)
    n = 25
    rows = pd.DataFrame(
        {"key": "u:j", "measure": "invalid_rate", "split": "V1",
         "item_id": [f"i{i}" for i in range(n)], "cluster": ["q " * 80] * n, "order": "0",
         "verdict": "Correct", "invalid": [i in (7, 13, 21) for i in range(n)]}
    )  # fmt: skip
    page = str(card.items_view(rows, csv="../../figures/x/items.csv"))
    assert "Shown: 10 of 25 rows, those with <code>invalid</code> true first" in page
    assert 'href="../../figures/x/items.csv"' in page
    shown = list(dict.fromkeys(re.findall(r"\b(i\d+)\b", page)))  # preview, then the data
    assert shown == ["i7", "i13", "i21", *[f"i{i}" for i in range(7)]]  # invalid ones first
    assert "q q q" in page and ("q " * 40) not in page  # clusters cut at a word boundary
