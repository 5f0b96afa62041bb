"""The items behind a number: outcome categories, a seeded handful, expandable HTML."""

from __future__ import annotations

import pandas as pd
import polars as pl
import pytest

from judgelab.core import schema
from judgelab.reporting import execution, explore


def _pairwise():
    items = schema.new_items(
        [
            dict(benchmark="b", split="s", item_id=str(i), task="pairwise", question=f"q{i}",
                 response_pos="short good", response_neg="a much longer but worse answer",
                 gold="pos", meta={})
            for i in range(4)
        ]
    )  # fmt: skip
    picks = {"0": ("pos", "neg"), "1": ("neg", "neg"), "2": ("pos", "pos"), "3": ("neg", None)}
    rows = []
    for item, (c0, c1) in picks.items():
        for order, c in ((0, c0), (1, c1)):
            verdict = None if c is None else ("A" if (c == "pos") == (order == 0) else "B")
            rows.append(dict(benchmark="b", split="s", item_id=item, judge="J", order=order,
                             verdict=verdict, valid=c is not None, chosen=c,
                             correct=c == "pos", output=f"raw {item}/{order} <b>"))  # fmt: skip
    return items, schema.new_judgments(rows)


@pytest.mark.parametrize(
    ("category", "expected"),
    [
        ("flipped", ["0"]),
        ("consistently_wrong", ["1"]),
        ("consistently_right", ["2"]),
        ("longer_worse", ["0", "1", "3"]),
        ("invalid", ["3"]),
        ("false_positive", []),  # a pointwise category: no case in pairwise data
    ],
)
def test_pairwise_categories(category, expected):
    items, judgments = _pairwise()
    found = explore.cases(judgments, items, category)
    assert sorted(found["item_id"]) == expected


def test_pointwise_categories_and_unknown():
    items = schema.new_items(
        [dict(benchmark="b", split="s", item_id=str(i), task="pointwise", question="q",
              response="r", gold=g, meta={}) for i, g in enumerate(["Correct", "Incorrect"])]
    )  # fmt: skip
    judgments = schema.new_judgments(
        [dict(benchmark="b", split="s", item_id=str(i), judge="J", verdict=v, valid=v is not None,
              output=str(v)) for i, v in enumerate(["Incorrect", "Correct"])]
    )  # fmt: skip
    assert explore.cases(judgments, items, "false_positive")["item_id"].tolist() == ["1"]
    assert explore.cases(judgments, items, "false_negative")["item_id"].tolist() == ["0"]
    with pytest.raises(ValueError, match="unknown category"):
        explore.cases(judgments, items, "weird")


def test_examples_are_seeded_and_html_is_escaped_and_expandable():
    items, judgments = _pairwise()
    found = explore.cases(judgments, items, "longer_worse")
    a = explore.examples(found, 2, seed=1)
    assert a["item_id"].tolist() == explore.examples(found, 2, seed=1)["item_id"].tolist()
    page = explore.cases_html(a)
    assert page.count("<details") == 2 and "&lt;b&gt;" in page and "<b>\n" not in page
    assert "Order 1 (worse shown first)" in page
    assert list(explore.summary(a).columns)[:3] == ["judge", "split", "item_id"]
    assert "No case" in explore.cases_html(pd.DataFrame())


def test_browse_is_a_note_when_headless(monkeypatch):
    items, judgments = _pairwise()
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    monkeypatch.setenv("JUDGELAB_HEADLESS", "1")
    assert explore.browse(judgments, items) is None
    assert "Open this notebook in JupyterLab" in shown[0].data


def test_browse_widget_switches_category(monkeypatch):
    pytest.importorskip("ipywidgets")
    items, judgments = _pairwise()
    monkeypatch.delenv("JUDGELAB_HEADLESS", raising=False)
    box = explore.browse(judgments, items, category="flipped")
    judge, category, split = box.children[0].children
    assert judge.options == ("J",) and split.options == ("(all)", "s")
    assert category.options == ("flipped", "consistently_wrong", "consistently_right",
                                "longer_worse", "invalid")  # fmt: skip
    category.value = "consistently_wrong"  # re-renders without a kernel: must not raise
    assert category.value == "consistently_wrong"


def test_view_html_counts_and_shows_the_chosen_cases():
    items, judgments = _pairwise()
    page = explore.view_html(judgments, items, "longer_worse", "J", None, n=2, seed=0)
    assert "<b>3</b> case(s); showing up to 2" in page
    assert page.count("<details") == 2
    page = explore.view_html(judgments, items, "flipped", "J", "s")
    assert "<b>1</b> case(s)" in page and "item 0" in page
    assert "<b>0</b> case(s)" in explore.view_html(judgments, items, "flipped", "nobody", None)


def test_pipeline_marks_kernels_headless():

    assert execution._KERNEL_VARS["JUDGELAB_HEADLESS"] == "1"


def test_summary_clips_each_question_once_and_keeps_missing_ones_empty():
    long = "word " * 40
    found = pd.DataFrame(
        {
            "judge": ["a", "b", "c", "d"],
            "item_id": ["1", "1", "2", "3"],
            "question": [long, long, None, "short"],
        }
    )
    got = explore.summary(found)["question"].tolist()
    assert got[0] == got[1] == explore.clip(long, 80) and got[0].endswith("…")
    assert got[2:] == ["", "short"]


def test_section_writes_every_case_and_shows_a_handful(capsys, monkeypatch):
    items, judgments = _pairwise()
    written = {}

    class Out:
        def table(self, frame, name):
            written[name] = frame

    shown = []
    monkeypatch.setattr(explore, "show", shown.append)
    explore.section(Out(), judgments, items, "longer_worse", n=2, seed=0)
    full = explore.cases(judgments, items, "longer_worse")
    want = explore.summary(full)
    pd.testing.assert_frame_equal(written["examples"], want)
    assert len(want) == 3
    # the cases carry the summary's item columns only; the shown few get every item column
    ex = explore.examples(full, 2, seed=0).reset_index(drop=True)
    got = shown[0]
    assert set(ex.columns) <= set(got.columns) and len(got) == 2
    pd.testing.assert_frame_equal(got[list(ex.columns)], ex, check_dtype=False)


@pytest.mark.parametrize(("count", "n", "seed"), [(0, 5, 0), (3, 5, 0), (10, 5, 3), (1000, 7, 42)])
def test_drawn_positions_are_what_examples_draws(count, n, seed):
    found = pd.DataFrame({"x": range(count)})
    want = explore.examples(found, n, seed=seed)["x"].to_numpy()
    assert explore.drawn(count, n, seed).tolist() == want.tolist()


def test_a_table_written_in_parts_is_the_table_written_whole(tmp_path, monkeypatch):
    from judgelab.reporting import notebook

    monkeypatch.setenv("JUDGELAB_FIGURES", str(tmp_path))
    frame = pd.DataFrame(
        {"a": ["x", None, 'q"uote', "new\nline", ""], "b": [1.5, float("nan"), 2, 3, 4]}
    )
    whole = notebook.save_table(frame, "whole", notebook="nb")
    parts = notebook.save_table((frame.iloc[i : i + 2] for i in (0, 2, 4)), "parts", notebook="nb")
    assert parts.read_bytes() == whole.read_bytes()
    empty = notebook.save_table(iter([frame.iloc[0:0]]), "empty", notebook="nb")
    assert empty.read_text() == frame.iloc[0:0].to_csv(index=False)
    # polars parts (a large source's Examples) write the same text
    polars_parts = (pl.from_pandas(frame.iloc[i : i + 2]) for i in (0, 2, 4))
    mixed = notebook.save_table(polars_parts, "polars", notebook="nb")
    assert mixed.read_bytes() == whole.read_bytes()
