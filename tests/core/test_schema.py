import pandas as pd
import pytest

from judgelab.core import schema
from judgelab.core.schema import SchemaError


def items_df(n: int = 3) -> pd.DataFrame:
    return schema.new_items(
        [
            {
                "benchmark": "b",
                "split": "s",
                "item_id": f"i{k}",
                "task": "pairwise",
                "question": "q",
                "context": "c",
                "response_pos": "p",
                "response_neg": "n",
                "gold": "pos",
                "meta": {"illustrative": True},
            }
            for k in range(n)
        ]
    )


def judgments_df() -> pd.DataFrame:
    rows = []
    for k in range(2):
        for order in (0, 1):
            rows.append(
                {
                    "benchmark": "b",
                    "split": "s",
                    "item_id": f"i{k}",
                    "judge": "j",
                    "order": order,
                    "output": "[[A]]",
                    "verdict": "A",
                    "valid": True,
                    "chosen": "pos" if order == 0 else "neg",
                    "correct": order == 0,
                }
            )
    return schema.new_judgments(rows)


def test_valid_tables_pass_and_coerce():
    items = items_df()
    schema.validate_items(items)
    j = judgments_df()
    schema.validate_judgments(j)
    assert j["order"].dtype == "int8"
    assert j["valid"].dtype == bool
    assert list(j.columns) == [c.name for c in schema.JUDGMENTS.columns if c.required]
    assert items["meta"].iloc[0] == '{"illustrative": true}'


def test_missing_column_names_table_and_column():
    df = items_df().drop(columns=["task"])
    with pytest.raises(SchemaError, match=r"items table, column 'task': missing column"):
        schema.validate_items(df)


def test_wrong_dtype_names_column_row_and_key():
    df = judgments_df()
    df["order"] = df["order"].astype(object)
    df.loc[2, "order"] = "first"
    with pytest.raises(SchemaError) as exc:
        schema.validate_judgments(df)
    msg = str(exc.value)
    assert "judgments table" in msg and "column 'order'" in msg and "row 2" in msg
    assert "item_id='i1'" in msg and "expected int values" in msg


def test_null_key_is_rejected():
    df = items_df()
    df.loc[1, "item_id"] = None
    with pytest.raises(SchemaError, match=r"column 'item_id', row 1.*null value.*key column"):
        schema.validate_items(df)


def test_duplicate_key_names_first_duplicate():
    df = pd.concat([judgments_df(), judgments_df().iloc[[3]]], ignore_index=True)
    with pytest.raises(SchemaError) as exc:
        schema.validate_judgments(df)
    msg = str(exc.value)
    assert "duplicate key" in msg and "row 4" in msg and "item_id='i1'" in msg and "order=1" in msg


def test_order_outside_domain():
    df = judgments_df()
    df["order"] = df["order"].astype("int64")
    df.loc[0, "order"] = 2
    with pytest.raises(SchemaError, match=r"column 'order', row 0.*value 2 outside its domain"):
        schema.validate_judgments(df)


def test_chosen_outside_domain():
    df = judgments_df()
    df.loc[1, "chosen"] = "A"
    with pytest.raises(SchemaError, match=r"column 'chosen', row 1.*'A' outside its domain"):
        schema.validate_judgments(df)


def test_task_outside_domain():
    df = items_df()
    df.loc[0, "task"] = "ranking"
    with pytest.raises(SchemaError, match=r"column 'task', row 0.*'ranking'"):
        schema.validate_items(df)


def test_unexpected_column_rejected():
    df = items_df()
    df["score"] = 1
    with pytest.raises(SchemaError, match=r"unexpected column\(s\) \['score'\]"):
        schema.validate_items(df)


def test_meta_must_be_json_object():
    df = items_df()
    df.loc[2, "meta"] = "[1, 2]"
    with pytest.raises(SchemaError, match=r"column 'meta', row 2.*not an object"):
        schema.validate_items(df)
    df.loc[2, "meta"] = "{oops"
    with pytest.raises(SchemaError, match=r"column 'meta', row 2, .*: invalid JSON"):
        schema.validate_items(df)


def test_chosen_must_be_null_when_invalid():
    df = judgments_df()
    df.loc[0, "valid"] = False
    with pytest.raises(SchemaError, match=r"chosen='pos' on an invalid judgment"):
        schema.validate_judgments(df)


def test_negative_tokens_rejected():
    df = judgments_df()
    df["prompt_tokens"] = pd.array([10, 10, -1, 10], dtype="Int64")
    with pytest.raises(SchemaError, match=r"column 'prompt_tokens', row 2.*below minimum"):
        schema.validate_judgments(df)


def test_source_is_named_in_message():
    with pytest.raises(SchemaError, match=r"file /x/y.parquet"):
        schema.validate_items(items_df().drop(columns=["split"]), source="/x/y.parquet")


def test_empty_tables_are_valid():
    schema.validate_judgments(schema.empty(schema.JUDGMENTS))
    schema.validate_items(schema.empty(schema.ITEMS))


def test_meta_first_bad_row_among_repeated_values():
    """Each distinct `meta` is parsed once: the row named is still the first bad one."""
    df = items_df(4)
    df["meta"] = ["{}", "{oops", "{}", "{oops"]
    with pytest.raises(SchemaError, match=r"column 'meta', row 1, .*: invalid JSON"):
        schema.validate_items(df)
    df["meta"] = ["{}", None, "[]", "{oops"]  # a null is no problem; "[]" comes first
    with pytest.raises(SchemaError, match=r"column 'meta', row 2.*JSON list, not an object"):
        schema.validate_items(df)
