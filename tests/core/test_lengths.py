import numpy as np
import pandas as pd
import pytest

from judgelab.core import lengths
from judgelab.data import catalog


def test_words_and_chars():
    assert lengths.count("a  b\nc") == 3.0
    assert lengths.count("a  b\nc", unit="chars") == 6.0
    assert np.isnan(lengths.count(None))
    assert lengths.counts(["one two", None, ""], "words").tolist()[0] == 2.0


def test_unknown_unit_is_a_clear_error():
    with pytest.raises(lengths.LengthUnitError, match=r"unknown length unit 'bytes'"):
        lengths.count("x", unit="bytes")


def test_tiktoken_unit_fails_clearly_when_unavailable():
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        with pytest.raises(lengths.LengthUnitError, match=r"needs the `tiktoken` package"):
            lengths.count("x", unit="tiktoken:cl100k_base")
    else:  # installed: either it works offline or it says why not
        try:
            assert lengths.count("hello world", unit="tiktoken:cl100k_base") >= 2
        except lengths.LengthUnitError as exc:
            assert "not available offline" in str(exc)


def test_add_lengths_names_unit_and_refuses_mixing():
    items = catalog.load_items("sample:contextualjudgebench")
    out = lengths.add_lengths(items)
    assert (out["len_unit"] == "words").all()
    row = out[out["item_id"] == "faithfulness_qa-1"].iloc[0]
    assert row["len_pos"] == 5  # "The book was published first."
    assert row["len_neg"] == 2  # "Movie first."
    assert np.isnan(row["len_response"])
    with pytest.raises(lengths.LengthUnitError, match=r"refusing to mix"):
        lengths.add_lengths(out, unit="chars")


def test_add_lengths_does_not_mutate_input():
    items = pd.DataFrame({"context": ["a b"], "benchmark": ["b"]})
    lengths.add_lengths(items)
    assert "len_context" not in items.columns


def test_counts_of_repeated_and_odd_values_equal_counting_each_text():
    texts = ["a b", None, float("nan"), 3, "a b", "", " x\u3000y ", pd.NA, True, "True", 1]
    want = [float(len(t.split())) if isinstance(t, str) else np.nan for t in texts]
    for given in (texts, iter(texts), pd.Series(texts, dtype=object)):
        np.testing.assert_array_equal(lengths.counts(given), want)
    assert lengths.counts([]).shape == (0,)
    np.testing.assert_array_equal(lengths.counts(["ab", "ab", None], "chars"), [2, 2, np.nan])


def test_counts_of_a_text_column_equal_those_of_its_values_and_add_lengths_copies_nothing():
    """An Arrow-backed column is counted as it is; the lengths are those of its values."""
    texts = pd.Series(["a b", None, "a b", "c", ""], dtype="string[pyarrow]")
    as_list = [t if isinstance(t, str) else None for t in texts.astype(object)]
    np.testing.assert_array_equal(lengths.counts(texts, "words"), lengths.counts(as_list, "words"))
    np.testing.assert_array_equal(
        lengths.counts(pd.Series(["x", 3, np.nan], dtype=object)), [1.0, np.nan, np.nan]
    )
    items = pd.DataFrame({"item_id": ["1", "2"], "response_pos": pd.array(["a b", "c"])})
    before = items.copy()
    out = lengths.add_lengths(items)
    out.loc[0, "response_pos"] = "changed"  # copy-on-write: the input stays as it was
    pd.testing.assert_frame_equal(items, before)
    assert out["len_pos"].tolist() == [2.0, 1.0]
