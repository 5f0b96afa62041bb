"""Loaders of the contexteval notebooks: attributes, ratings, follow-ups, justification codes."""

import json
from pathlib import Path

import pandas as pd
import pytest

from judgelab.analyses import contexteval
from judgelab.data import catalog, fetch

PAIR = "x_vs_y"
HUMAN_FILE = f"human_judgements/{PAIR}.json"
REGISTRY = f"""name: tinycontexteval
kind: corpus
title: "Tiny ContextEval human judgments"
licence: MIT
homepage: https://example.org
origin: {{type: url, base: "http://127.0.0.1:9/"}}
mirror_dir: tinyce
importer: "judgelab.data.importers.seeds:import_contexteval"
files:
  - {{path: {HUMAN_FILE}}}
options:
  judgment_files:
    {HUMAN_FILE}: {{pair: {PAIR}, judge: human}}
"""


def _record(example_id: str, satisfied: list[tuple[bool | None, bool | None]]) -> dict:
    return {
        "example_id": example_id,
        "setting": "gen_w_ctx_eval_w_ctx",
        "follow_up_qas": [
            {"qa": "q", "satisfied_1": s1, "satisfied_2": s2} for s1, s2 in satisfied
        ],
    }


def test_followup_counts_skip_annotators_with_missing_labels():
    recs = [
        _record("x_rep0", [(True, False)] * 3),
        _record("x_rep1", [(None, False)]),
    ]
    fu = catalog.contexteval.followup_counts(recs, pair=PAIR)
    assert fu[["example_key", "rep", "diff"]].values.tolist() == [[f"{PAIR}/human/x", 0, 3]]
    assert fu["setting"].tolist() == ["gen_w_ctx_eval_w_ctx"]  # as recorded


def test_followups_of_the_release_are_read_from_the_human_files(tmp_path, monkeypatch):
    reg, mirror = tmp_path / "reg", tmp_path / "mirror" / "tinyce" / "human_judgements"
    reg.mkdir()
    mirror.mkdir(parents=True)
    (reg / "tinycontexteval.yaml").write_text(REGISTRY)
    records = [
        _record("e_rep0", [(True, True), (True, False)]),
        _record("e_rep1", [(False, True)]),
    ]
    (mirror / f"{PAIR}.json").write_text(json.dumps(records))
    monkeypatch.setenv("JUDGELAB_SOURCES", str(reg))
    monkeypatch.setenv("JUDGELAB_MIRROR", str(tmp_path / "mirror"))
    loaded = catalog.Loaded(pd.DataFrame(), None, "tinycontexteval", "tinycontexteval", False, "")
    fu = catalog.contexteval.load_followups(loaded)
    assert fu[["example_key", "rep", "n_qas", "diff"]].values.tolist() == [
        [f"{PAIR}/human/e", 0, 2, 1],
        [f"{PAIR}/human/e", 1, 1, -1],
    ]
    assert catalog.contexteval.load_justification_codes(loaded).empty  # the release has none


def test_sample_followups_and_codes_feed_tables_5_and_4():
    loaded = catalog.load_source("sample:contexteval_pairwise")
    fu = catalog.contexteval.load_followups(loaded)
    assert len(fu) > 0 and (fu["diff"] == fu["n_sat_pos1"] - fu["n_sat_pos2"]).all()
    codes = catalog.contexteval.load_justification_codes(loaded)
    assert list(codes.columns[:4]) == ["source", "pair", "setting", "codes"] and len(codes) > 0
    ex = contexteval.example_table(contexteval.verdict_table(loaded.judgments, loaded.items))
    t5 = contexteval.constraint_subset_agreement(ex, fu)
    assert set(t5["setting"]) == {"NoCtxGen-CtxEval", "CtxGen-CtxEval"}
    assert (t5["n_with_labels"] > 0).all()
    shares = contexteval.justification_shares(codes)
    assert set(shares["setting"]) == set(contexteval.SETTINGS)


def test_missing_ratings_source_falls_back_with_reason():
    loaded = catalog.contexteval.load_ratings(
        ["no_such_benchmark"], fallback="sample:contexteval_weird"
    )
    assert loaded.is_sample and "no_such_benchmark" in loaded.reason
    with pytest.raises(catalog.SourceNotFound):
        catalog.contexteval.load_ratings(["no_such_benchmark"])


def test_attributes_fall_back_only_when_asked(monkeypatch):
    monkeypatch.setenv("JUDGELAB_OFFLINE", "1")
    table8 = contexteval.paper_attributes()
    attributes, origin = catalog.contexteval.load_attributes("contexteval", fallback=table8)
    assert attributes is table8 and origin.startswith("fallback (released file unavailable")
    with pytest.raises(fetch.FetchError):
        catalog.contexteval.load_attributes("contexteval")


def test_attributes_of_a_staged_release(tmp_path: Path, monkeypatch):
    reg, mirror = tmp_path / "reg", tmp_path / "mirror" / "attrs"
    reg.mkdir()
    mirror.mkdir(parents=True)
    (reg / "tinyattrs.yaml").write_text(
        REGISTRY.replace("tinycontexteval", "tinyattrs")
        .replace("mirror_dir: tinyce", "mirror_dir: attrs")
        .split("files:")[0]
        + "files:\n  - {path: contextual_attributes_qas.txt}\n"
    )
    (mirror / "contextual_attributes_qas.txt").write_text(
        '* Style\nQ: Which style? A: ["Formal", "Informal"]\n'
    )
    monkeypatch.setenv("JUDGELAB_SOURCES", str(reg))
    monkeypatch.setenv("JUDGELAB_MIRROR", str(tmp_path / "mirror"))
    attributes, origin = catalog.contexteval.load_attributes("tinyattrs")
    assert origin == "released file of source 'tinyattrs'"
    assert attributes["option"].tolist() == ["Formal", "Informal"]
