"""Hand-built judgments of the prompting tests: model M judged under several prompts."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def _row(judge, prompt, item, order, chosen, *, split="faithfulness_qa", output=None) -> dict:
    return {
        "benchmark": "b",
        "split": split,
        "item_id": item,
        "judge": judge,
        "model": judge.split(".")[0],
        "prompt": prompt,
        "order": order,
        "output": output,
        "valid": True,
        "chosen": chosen,
        "correct": chosen == "pos",
    }


@pytest.fixture()
def row() -> Callable[..., dict]:
    """`row(judge, prompt, item, order, chosen, *, split, output)` → one judgments row."""
    return _row


@pytest.fixture()
def model_rows() -> Callable[[str, list[tuple[str, str]]], list[dict]]:
    """`model_rows(prompt, pairs)`: model M under `prompt`, item k judged pairs[k]."""

    def make(prompt: str, pairs: list[tuple[str, str]]) -> list[dict]:
        return [
            _row(f"M.{prompt}", prompt, f"i{k}", o, c)
            for k, pair in enumerate(pairs)
            for o, c in enumerate(pair)
        ]

    return make
