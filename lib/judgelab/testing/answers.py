"""Deterministic answers of the loopback servers (`openai_server`, `batch_server`).

The same request body always gets the same answer, in the verdict format its prompt asks for.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_key(body: dict[str, Any]) -> str:
    """Return the sha256 of the canonical JSON of a request body (the server's count key)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hash_int(text: str) -> int:
    """Return a 48-bit integer hash of `text` (stable across runs and machines)."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16)


def default_responder(body: dict[str, Any]) -> str:
    """Answer in the verdict format the prompt asks for, choosing the verdict from a hash.

    The choice depends only on the messages (and the `seed` and `temperature`), so the same
    request always gets the same answer; different prompts get different verdicts.
    """
    messages = body.get("messages") or []
    text = "\n".join(str(m.get("content", "")) for m in messages)
    salt = json.dumps([body.get("seed"), body.get("temperature")])
    h = hash_int(text + salt)
    first = h % 2 == 0
    if "**Result:**" in text:
        return f"**Reasoning:** Response {'A' if first else 'B'} is better supported.\n\n" + (
            "**Result:** A" if first else "**Result:** B"
        )
    if "[[Correct]]" in text:
        verdict = "[[Correct]]" if first else "[[Incorrect]]"
        return f"The assistant's answer was compared with the question. {verdict}"
    if "[[A]]" in text:
        return f"Assistant {'A' if first else 'B'} is more correct. [[{'A' if first else 'B'}]]"
    if '"judgement"' in text:
        choice = ("Response 1", "Response 2", "Tie")[h % 3]
        return f'**output: {{"judgement": "{choice}"}}**\nIt addresses the query better.'
    if "unknown" in text or "conflict" in text:
        return "unknown" if first else "conflict"
    return "A" if first else "B"


def completion(body: dict[str, Any], content: Any, finish: str) -> dict[str, Any]:
    """Return an OpenAI chat.completion object answering `body` with `content`."""
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages") or [])
    completion_tokens = max(1, len(str(content)) // 4) if content else 0
    return {
        "id": "chatcmpl-" + canonical_key(body)[:24],
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": str(body.get("model", "")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": max(1, prompt_chars // 4),
            "completion_tokens": completion_tokens,
            "total_tokens": max(1, prompt_chars // 4) + completion_tokens,
        },
    }
