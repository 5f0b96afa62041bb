"""WEIRD default-context ratings: parsing, means, WEIRD grouping, max differences."""

import json

import numpy as np
import pandas as pd
import pytest

from judgelab.analyses import contexteval as wc
from judgelab.core import schema
from judgelab.data import catalog
from judgelab.errors import ChoiceError

AGE = list(wc.TABLE8["Age Group"][1])  # Children, Teenagers, Young adults, Middle-aged, Seniors


def test_ratings_table_reparses_default_and_adapted_outputs():
    values = ["Children", "Seniors"]
    items = schema.new_items(
        [
            {
                "benchmark": "w",
                "split": "age_group",
                "item_id": "q1|age_group",
                "task": "qa",
                "meta": {"query_id": "q1", "attribute": "Age Group", "values": values},
            },
            {
                "benchmark": "w",
                "split": "age_group",
                "item_id": "q1|age_group|1",
                "task": "qa",
                "meta": {
                    "query_id": "q1",
                    "attribute": "Age Group",
                    "values": values,
                    "value": "Seniors",
                },
            },
        ]
    )
    j = schema.new_judgments(
        [
            {
                "benchmark": "w",
                "split": "age_group",
                "item_id": "q1|age_group",
                "judge": "r",
                "prompt": "ce.default_relevance",
                "valid": False,
                "output": "**output: {'children': {'relevance': 2}, "
                "'Seniors': {'relevance': 9}}**",
            },
            {
                "benchmark": "w",
                "split": "age_group",
                "item_id": "q1|age_group|1",
                "judge": "r",
                "prompt": "ce.adapted_relevance",
                "valid": True,
                "output": '{"relevance": 4}',
            },
        ]
    )
    r = wc.ratings_table(j, items)
    # "children" matches case-insensitively; 9 is outside 1-5 -> NaN, not dropped.
    assert r["value"].tolist() == ["Children", "Seniors", "Seniors"]
    assert r["rating"].tolist()[0] == 2 and np.isnan(r["rating"].tolist()[1])
    assert r["kind"].tolist() == ["default", "default", "adapted"]
    assert r["value_order"].tolist() == [0, 1, 1]


def test_mean_ratings_hand_computed(ratings):
    r = ratings([("q1", "Age Group", "Children", 2), ("q2", "Age Group", "Children", 4)])
    m = wc.mean_ratings(r, n_boot=100)
    # mean (2 + 4) / 2 = 3; sd = sqrt(((2-3)^2 + (4-3)^2) / 1) = sqrt 2; sem = sqrt2/sqrt2 = 1.
    assert m[["n", "mean", "sem"]].values.tolist() == [[2, 3.0, pytest.approx(1.0)]]
    assert m["sd"].iloc[0] == pytest.approx(np.sqrt(2))


def test_weird_grouping_follows_the_parameter(ratings):
    r = ratings([("q", "Age Group", v, 3) for v in AGE])
    default = wc.group_values(r)["group"].tolist()
    assert default == ["non-WEIRD", "non-WEIRD", "WEIRD", "WEIRD", "non-WEIRD"]
    custom = wc.group_values(r, weird_map={"Age Group": ["Seniors"]})["group"].tolist()
    assert custom == ["non-WEIRD"] * 4 + ["WEIRD"]
    assert wc.group_values(r, weird_map={})["group"].tolist() == [""] * 5


def test_weird_gap_hand_computed_and_follows_the_map(ratings):
    # q1: Children 2, Teenagers 3, Young 5, Middle 4, Seniors 1 -> WEIRD mean 4.5, other 2,
    # gap 2.5. q2: all 3 except Young 4 -> WEIRD 3.5, other 3, gap 0.5. Mean gap = 1.5.
    q1 = [2, 3, 5, 4, 1]
    q2 = [3, 3, 4, 3, 3]
    r = ratings(
        [("q1", "Age Group", v, x) for v, x in zip(AGE, q1, strict=True)]
        + [("q2", "Age Group", v, x) for v, x in zip(AGE, q2, strict=True)]
    )
    g = wc.weird_gap(r, n_boot=100).set_index("attribute").loc["Age Group"]
    assert g["gap"] == pytest.approx(1.5)
    assert (g["mean_weird"], g["mean_other"]) == (pytest.approx(4.0), pytest.approx(2.5))
    assert g["n_queries"] == 2 and g["share_weird_higher"] == 1.0
    assert g["sign_p"] == pytest.approx(0.5)  # 2 of 2 positive: 2 * 0.5^2
    # Seniors as the WEIRD value: q1 1 - mean(2,3,5,4)=3.5 -> -2.5; q2 3 - 3.25 -> -0.25.
    s = wc.weird_gap(r, weird_map={"Age Group": ["Seniors"]}, n_boot=100)
    assert s["gap"].iloc[0] == pytest.approx((-2.5 - 0.25) / 2)


def test_max_differences_paper_examples(ratings):
    # The paper's examples: all 4s -> 0; ratings 5, 5, 3, 3, 2 -> 3 (spec 002 §2.8).
    r = ratings(
        [("q1", "Age Group", v, 4) for v in AGE]
        + [("q2", "Age Group", v, x) for v, x in zip(AGE, [5, 5, 3, 3, 2], strict=True)]
    )
    r["kind"] = "adapted"
    md = wc.max_differences(r)
    assert md["maxdiff"].tolist() == [0, 3]
    assert md["argmin_value"].tolist() == ["Children", "Seniors"]
    dist = wc.max_difference_distribution(md)
    assert dist["pct"].tolist() == [50, 0, 0, 50, 0]
    # a query missing one value is left out unless require_all_values is False
    partial = r[~((r["query_id"] == "q2") & (r["value"] == "Seniors"))]
    assert wc.max_differences(partial)["query_id"].tolist() == ["q1"]
    assert wc.max_differences(partial, require_all_values=False)["maxdiff"].tolist() == [0, 2]


def test_attribute_catalogue_marks_weird_values():
    cat = wc.attribute_catalogue(wc.paper_attributes()).set_index("attribute")
    assert len(cat) == 12 and cat["n_values"].sum() == 52  # Σ|values| over Table 8
    assert cat.loc["Economic Context", "weird_values"] == "Middle-income, High-income"
    assert "Professionals / Experts in the field" in cat.loc["Intended Audience", "values"]
    paper = wc.paper_attributes(value_strings="paper")
    assert "Professionals / Experts" in set(paper["option"])
    with pytest.raises(ChoiceError, match="value_strings must be one of"):
        wc.paper_attributes(value_strings="released")


def test_missing_columns_raise():
    with pytest.raises(KeyError, match="rating"):
        wc.mean_ratings(
            pd.DataFrame({"kind": [], "attribute": [], "value": [], "value_order": []})
        )


def test_sample_ratings_and_plots():
    loaded = catalog.contexteval.load_ratings(["sample:contexteval_weird"])
    assert loaded.is_sample and all(json.loads(m)["illustrative"] for m in loaded.items["meta"])
    r = wc.ratings_table(loaded.judgments, loaded.items)
    assert set(r["kind"]) == {"default", "adapted"}
    means = wc.mean_ratings(r, n_boot=50)
    assert means["attribute"].nunique() == 12
    ax = wc.plots.mean_ratings_panels(wc.group_values(means), hue="group")
    assert len([a for a in ax.figure.axes if a.axison]) == 12
    ax = wc.plots.maxdiff_bars(wc.max_difference_distribution(wc.max_differences(r)))
    assert len(ax.patches) == 12 * 5 and ax.get_xlabel() == "% of queries"
