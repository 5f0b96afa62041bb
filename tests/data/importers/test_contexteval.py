"""ContextEval loader on tiny hand-made files: queries, and an autorater judgment file."""

from __future__ import annotations

import pandas as pd

from judgelab.data.importers import contexteval, seeds
from judgelab.testing.sources import tiny_source, write_jsonl


def test_contexteval_queries_and_autorater_file(tmp_path):
    write_jsonl(
        tmp_path / "q.jsonl",
        [{"query": "Is coffee good?", "source": "kiwi", "example_id": "kiwi_1"}],
    )
    write_jsonl(
        tmp_path / "auto.jsonl",
        [
            {
                "query": "Is coffee good?",
                "candidate_one_response": "R1",
                "candidate_two_response": "R2",
                "rand_choice": 1,
                "eval_judgement": "Response 1\nbecause",
            },
            {
                "query": "Tea?",
                "candidate_one_response": "T1",
                "candidate_two_response": "T2",
                "rand_choice": 2,
                "eval_judgement": "Response 1",
            },
            {
                "query": "Juice?",
                "candidate_one_response": "J1",
                "candidate_two_response": "J2",
                "rand_choice": 1,
                # The real autorater shape: the verdict sits in a dict, not on the first line.
                "eval_judgement": '**output: {"judgement": "Response 2"}**',
            },
            {
                "query": "Milk?",
                "candidate_one_response": "M1",
                "candidate_two_response": "M2",
                "rand_choice": 1,
                "eval_judgement": "No response. Finish Reason: SAFETY",
            },
        ],
    )
    src = tiny_source(
        "contexteval",
        ["q.jsonl", "auto.jsonl"],
        "x:y",
        judgment_files={
            "auto.jsonl": {
                "setting": "gen_wo_ctx_eval_wo_ctx",
                "pair": "gpt-4_vs_gemini",
                "judge": "Qwen2-72B",
            }
        },
    )
    imp = contexteval.import_contexteval(tmp_path, src)
    assert imp.items.split.tolist() == ["kiwi"] + ["gen_wo_ctx_eval_wo_ctx"] * 4
    j = imp.judgments
    # row 1: candidate 1 shown first (order 0), "Response 1" -> pos.
    # row 2: rand_choice 2 -> candidate 2 shown first (order 1), "Response 1" -> neg.
    # row 3: candidate 1 first, the dict says "Response 2" -> neg.
    # row 4: a failed call -> kept, invalid.
    assert j.order.tolist() == [0, 1, 0, 0]
    assert [None if pd.isna(c) else c for c in j.chosen] == ["pos", "neg", "neg", None]
    assert j.valid.tolist() == [True, True, True, False]
    assert j.output[3] == "No response. Finish Reason: SAFETY"


def test_seeds_keeps_the_registry_name_of_the_loader():
    # lib/judgelab/resources/sources/contexteval*.yaml name seeds:import_contexteval
    assert seeds.import_contexteval is contexteval.import_contexteval
    assert contexteval.source_split("lmsys/chatbot_arena_conversations") == (
        "chatbot_arena_conversations"
    )
    assert contexteval.source_split(None) == "queries"
