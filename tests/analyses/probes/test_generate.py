"""Probe benchmarks: a control and two arms per probe and item, provenance, shared clusters."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analyses import probes
from judgelab.core import schema


def _items(n: int = 3, **extra) -> pd.DataFrame:
    rows = [
        dict(benchmark="bench", split="s", item_id=str(i), task="pairwise",
             question=f"Question {i}?", response_pos=f"Good answer {i}. It is right.",
             response_neg=f"Bad answer {i}.", gold="pos", meta={"set": "x"}, **extra)
        for i in range(n)
    ]  # fmt: skip
    rows.append(dict(benchmark="bench", split="s", item_id="p", task="pointwise",
                     question="q", response="r", gold="Correct", meta={}))  # fmt: skip
    return schema.new_items(rows)


def test_control_and_both_arms_with_provenance():
    items = _items()
    out = probes.generate(items, ["authority", "distractor"], seed=7)
    schema.validate_items(out)
    assert set(out["benchmark"]) == {"bench+probes"} and len(out) == 3 * (1 + 2 * 2)
    prov = probes.provenance(out).set_index("item_id")
    assert list(prov.columns[2:]) == list(probes.PROVENANCE)
    ctl = prov.loc["0"]
    assert ctl["probe"] == probes.CONTROL and ctl["orig_item_id"] == "0"
    arm = prov.loc["0~authority~neg"]
    assert (arm["probe"], arm["probe_target"], arm["probe_seed"]) == ("authority", "neg", 7)
    assert arm["orig_benchmark"] == "bench" and not arm["probe_noop"]
    by = out.set_index("item_id")
    src = items.set_index("item_id")
    # the arm changes only its target response; gold, question and the other response stay
    assert by.loc["0~authority~neg", "response_pos"] == src.loc["0", "response_pos"]
    assert by.loc["0~authority~neg", "response_neg"].startswith(src.loc["0", "response_neg"])
    assert by.loc["0~authority~pos", "response_neg"] == src.loc["0", "response_neg"]
    assert (by["gold"] == "pos").all() and (by.loc["0~authority~pos", "question"] == "Question 0?")
    # the distractor changes the context only, aimed at the target's words
    d = by.loc["0~distractor~pos"]
    assert d["response_pos"] == src.loc["0", "response_pos"] and "Unrelated note" in d["context"]
    assert pd.isna(by.loc["0", "context"])
    # original meta kept; every row of one original item shares its unit
    assert schema.read_meta(by.loc["1~authority~pos", "meta"])["set"] == "x"
    assert by.groupby(prov["orig_item_id"])["cluster"].nunique().eq(1).all()
    assert by.loc["2", "cluster"] == "bench|s|item|2"
    assert probes.is_probe_benchmark(out) and not probes.is_probe_benchmark(items)


def test_deterministic_per_seed_and_independent_of_other_probes():
    items = _items()
    a = probes.generate(items, ["authority", "verbosity"], seed=1)
    b = probes.generate(items, ["verbosity"], seed=1)
    c = probes.generate(items, ["authority", "verbosity"], seed=2)
    pd.testing.assert_frame_equal(a, probes.generate(items, ["authority", "verbosity"], seed=1))
    key = ["item_id", "response_pos", "response_neg"]
    va, vb = (
        x[x["item_id"].str.contains("verbosity")][key].reset_index(drop=True) for x in (a, b)
    )
    pd.testing.assert_frame_equal(va, vb)
    assert not a["response_pos"].equals(c["response_pos"])


def test_clusters_are_kept_and_lengths_dropped():
    items = _items(cluster="doc-1").assign(len_pos=3.0, len_neg=2.0, len_unit="words")
    out = probes.generate(items, ["emotive"])
    assert set(out["cluster"]) == {"doc-1"}
    assert not any(c.startswith("len_") for c in out.columns)


def test_noop_variants_are_flagged():
    items = _items(1)
    items.loc[0, "response_neg"] = "   "
    out = probes.provenance(probes.generate(items, ["authority"]))
    assert out.set_index("item_id").loc["0~authority~neg", "probe_noop"]
    assert not out.set_index("item_id").loc["0~authority~pos", "probe_noop"]


def test_variant_counts_count_each_arm_and_its_noops():
    items = _items(2)
    items.loc[0, "response_neg"] = "   "  # the authority probe cannot change this response
    out = probes.generate(items, ["authority", "distractor"], seed=1)
    counts = probes.variant_counts(out)
    assert counts.columns.tolist() == ["probe", "probe_target", "items", "noop"]
    arms = counts.set_index(["probe", "probe_target"])
    assert (
        arms.loc[("authority", "neg"), "items"] == 2
        and arms.loc[("authority", "neg"), "noop"] == 1
    )
    assert arms.loc[("authority", "pos"), "noop"] == 0
    assert len(counts) == 1 + 2 * 2 and counts["items"].sum() == len(out)  # control + 4 arms
    assert probes.variant_counts(probes.provenance(out)).equals(counts)  # provenance works too


def test_bad_input_is_refused_clearly():
    items = _items()
    with pytest.raises(ValueError, match="probe must be one of"):
        probes.generate(items, ["nope"])
    with pytest.raises(ValueError, match="given twice"):
        probes.generate(items, ["authority", "authority"])
    with pytest.raises(ValueError, match="no probe given"):
        probes.generate(items, [])
    with pytest.raises(ValueError, match="no pairwise item"):
        probes.generate(items[items["task"] == "pointwise"], ["authority"])
    with pytest.raises(KeyError):
        probes.generate(items.drop(columns=["response_neg"]), ["authority"])
