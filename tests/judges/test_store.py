"""Where a judge's tables live, writing them, and the conditions they already hold."""

from __future__ import annotations

from judgelab.core import paths, schema, tables
from judgelab.judges import offline, store


def _items():
    base = {"split": "s", "task": "pairwise", "question": "Q?", "gold": "pos"}
    return schema.new_items(
        [
            {**base, "benchmark": b, "item_id": "1", "response_pos": "a b", "response_neg": "a"}
            for b in ("one", "two")
        ]
    )


def test_paths_follow_the_judgments_folder():
    assert store.judgments_path("b", "j") == paths.judgments() / "b" / "j.parquet"
    assert store.details_path("b", "j") == paths.judgments() / "b" / "details" / "j.parquet"


def test_write_one_table_per_benchmark_and_read_back_its_conditions():
    items = _items()
    assert store.existing_conditions(items, "j") == []  # no table yet
    built = offline.build(items, name="prefer_longer", options={}, judge_id="j")
    with store.table_lock(items, "j"):
        written = store.write(built, "j")
    assert written == [store.judgments_path("one", "j"), store.judgments_path("two", "j")]
    back = tables.read_judgments(written[1])
    assert back["benchmark"].unique().tolist() == ["two"] and len(back) == 2  # both orders
    assert store.details_path("two", "j").exists()
    assert store.existing_conditions(items, "j") == [""]
