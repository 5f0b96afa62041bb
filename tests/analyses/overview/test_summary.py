import pandas as pd
import pytest

from judgelab.analyses import overview
from judgelab.core import schema


def make_items() -> pd.DataFrame:
    rows = [
        # split a: contexts X, X (same), lengths ctx 2, pos 1, neg 3
        ("a", "1", "x y", "p", "n n n"),
        ("a", "2", "x y", "p p p", "n"),
        # split b: context X again (shared across splits) and Z
        ("b", "1", "x y", "p", "n"),
        ("b", "2", "z z z z", "p p", "n n n n"),
    ]
    return schema.new_items(
        [
            {
                "benchmark": "t",
                "split": s,
                "item_id": i,
                "task": "pairwise",
                "context": c,
                "response_pos": p,
                "response_neg": n,
            }
            for s, i, c, p, n in rows
        ]
    )


def test_split_statistics_hand_computed():
    st = overview.split_statistics(make_items()).set_index("split")
    assert st.loc["a", "n_items"] == 2
    assert st.loc["a", "n_contexts"] == 1  # the same context twice
    assert st.loc["b", "n_contexts"] == 2
    assert st.loc["Total", "n_contexts"] == 2  # X is shared by a and b: counted once globally
    assert st.loc["a", "L_c"] == 2.0
    assert st.loc["a", "L_pos"] == 2.0  # (1 + 3) / 2
    assert st.loc["a", "L_neg"] == 2.0  # (3 + 1) / 2
    assert st.loc["b", "L_r"] == pytest.approx(2.0)  # ((1+1)/2 + (2+4)/2) / 2
    # Totals are pooled over the 4 items: L_c = (2 + 2 + 2 + 4) / 4
    assert st.loc["Total", "L_c"] == pytest.approx(2.5)
    assert st.loc["Total", "n_items"] == 4
    assert set(st["unit"]) == {"words"}


def test_length_long_has_every_text():
    from judgelab.core import lengths

    long = overview.length_long(lengths.add_lengths(make_items()))
    assert set(long["text"]) == {"context", "positive", "negative"}  # no questions given
    assert len(long) == 12
