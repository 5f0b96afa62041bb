"""Batch line formats: OpenAI / vLLM batch input and output lines, Anthropic Message Batches.

One planned request (`judgelab.judges.table.Planned`) becomes one input line whose `custom_id`
is its request key (the 64-hex sha256 the cache is keyed by), so an answer coming back lands
under the key the online runner would have stored it under:

- OpenAI / vLLM input: `{"custom_id", "method": "POST", "url": "/v1/chat/completions",
  "body": <the chat payload, model included>}`;
- OpenAI / vLLM output: `{"id", "custom_id", "response": {"status_code", "request_id",
  "body": <chat completion>}, "error"}`;
- Anthropic input: `{"custom_id", "params": {model, max_tokens, messages, system, ...}}`;
  Anthropic result: `{"custom_id", "result": {"type": "succeeded", "message": {...}}}` or
  `{"type": "errored" | "canceled" | "expired", ...}`.

`answer_from_line` turns an output line into the record the online loop stores
(`judgelab.judges.loop`: content, finish_reason, token counts, latency, response model and
id, created_at) or into an error message; nothing here touches the network or the cache.
"""

from __future__ import annotations

import json
import re
from typing import Any

from judgelab.core import secrets
from judgelab.errors import BatchFormatError as BatchFormatError
from judgelab.judges.answers import record_from_completion
from judgelab.judges.table import Planned

CHAT_URL = "/v1/chat/completions"
FORMATS = ("openai", "anthropic")
ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Anthropic's stop reasons in the OpenAI vocabulary the parsers and tables use.
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def openai_line(p: Planned) -> dict[str, Any]:
    """Return the OpenAI / vLLM batch input line of one planned request."""
    return {"custom_id": p.key, "method": "POST", "url": CHAT_URL, "body": p.payload()}


def anthropic_params(payload: dict[str, Any]) -> dict[str, Any]:
    """Return Anthropic Messages params for a chat payload (system messages moved out).

    Anthropic takes no `seed`: samples k > 0 of a self-consistency run are separate requests
    (separate `custom_id`s) with the same params.

    >>> anthropic_params({"model": "m", "max_tokens": 9, "temperature": 0.0, "seed": 3,
    ...     "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]})
    {'model': 'm', 'max_tokens': 9, 'messages': [{'role': 'user', 'content': 'U'}], 'system': 'S', 'temperature': 0.0}
    """  # noqa: E501
    messages = payload.get("messages") or []
    system = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    params: dict[str, Any] = {
        "model": payload["model"],
        "max_tokens": payload["max_tokens"],
        "messages": [m for m in messages if m.get("role") != "system"],
    }
    if system:
        params["system"] = "\n\n".join(system)
    for name in ("temperature", "top_p"):
        if payload.get(name) is not None:
            params[name] = payload[name]
    return params


def anthropic_request(custom_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Return the Anthropic Message Batches request of a chat payload.

    Raises:
        ValueError: `custom_id` is not a valid Anthropic one (1-64 of `[A-Za-z0-9_-]`).
    """
    if not ANTHROPIC_ID.match(custom_id):
        raise ValueError(f"request key {custom_id!r} is not a valid Anthropic custom_id")
    return {"custom_id": custom_id, "params": anthropic_params(payload)}


def anthropic_line(p: Planned) -> dict[str, Any]:
    """Return the Anthropic Message Batches request of one planned request (see above)."""
    return anthropic_request(p.key, p.payload())


def _error_text(error: Any, status: Any = None) -> str:
    """Return a short message for an error object or HTTP status, scrubbed of secrets."""
    return secrets.scrub(_describe(error, status), [])


def _describe(error: Any, status: Any = None) -> str:
    """Return a short message for an error object (`{"code", "message"}`) or HTTP status."""
    if isinstance(error, dict):
        inner = error.get("error") if isinstance(error.get("error"), dict) else error
        code = inner.get("code") if isinstance(inner.get("code"), str) else None
        code, message = code or inner.get("type"), inner.get("message")
        text = ": ".join(str(x) for x in (code, message) if x)
        if text:
            return (f"HTTP {status}: " if status else "") + text[:500]
    if isinstance(error, str) and error:
        return error[:500]
    return f"HTTP {status}" if status else "no response and no error"


def _openai_answer(obj: dict[str, Any], limit: int | None) -> dict[str, Any] | str:
    response = obj.get("response")
    if isinstance(response, dict):
        status = response.get("status_code")
        body = response.get("body")
        if status == 200:
            return record_from_completion(body, limit)
        return _error_text(body if isinstance(body, dict) else obj.get("error"), status)
    return _error_text(obj.get("error"))


def _anthropic_answer(result: Any, limit: int | None) -> dict[str, Any] | str:
    if not isinstance(result, dict):
        return "result is not an object"
    kind = result.get("type")
    if kind != "succeeded":
        return _error_text(result.get("error"), None) if kind == "errored" else str(kind)
    message = result.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return "succeeded result has no message content"
    texts = [b.get("text") for b in message["content"] if isinstance(b, dict)]
    content = "".join(t for t in texts if isinstance(t, str))
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    stop = message.get("stop_reason")
    body = {
        "choices": [
            {"message": {"content": content}, "finish_reason": _STOP_REASONS.get(stop, stop)}
        ],
        "usage": {
            "prompt_tokens": usage.get("input_tokens"),
            "completion_tokens": usage.get("output_tokens"),
        },
        "model": message.get("model"),
        "id": message.get("id"),
    }
    return record_from_completion(body, limit)


def answer_from_line(
    text: str, *, file: str, line: int, limit: int | None = None
) -> tuple[str, dict[str, Any] | str]:
    """Return `(custom_id, record or error message)` of one output line (either format).

    Raises:
        BatchFormatError: the line is not a JSON object with a string `custom_id`.
    """
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise BatchFormatError(file, line, f"not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise BatchFormatError(file, line, f"expected a JSON object, got {type(obj).__name__}")
    cid = obj.get("custom_id")
    if not isinstance(cid, str) or not cid:
        raise BatchFormatError(file, line, "no custom_id (column custom_id)")
    if "result" in obj:
        return cid, _anthropic_answer(obj["result"], limit)
    return cid, _openai_answer(obj, limit)


__all__ = [
    "CHAT_URL",
    "FORMATS",
    "BatchFormatError",
    "anthropic_line",
    "anthropic_params",
    "anthropic_request",
    "answer_from_line",
    "openai_line",
    "record_from_completion",
]
