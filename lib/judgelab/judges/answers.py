"""A chat completion as the request cache stores it: one record shape for every back-end.

The online loop (`judgelab.judges.loop`) and the batch back-ends (`judgelab.judges.batch`)
both turn a completion body into this record, so a table built from the cache is the same
whichever back-end answered: content, finish_reason, prompt/completion tokens, latency,
response model and id, created_at. A content that is not text (a number, a list: issue 32
item 5) is kept flagged (`cache.check_record`), never cached as the table's text.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from judgelab.judges.cache import check_record, storable_json

TOO_LARGE = "response too large"


def _iso(created: Any) -> str:
    """Return a completion's `created` (unix seconds) as ISO-8601 UTC, else now."""
    if isinstance(created, int | float) and not isinstance(created, bool) and created > 0:
        try:
            return datetime.fromtimestamp(created, UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            pass
    return datetime.now(UTC).isoformat()


def _too_big(content: Any, limit: int | None) -> str | None:
    if limit is None or content is None:
        return None
    text = content if isinstance(content, str) else storable_json(content)  # 42, [..], {..}
    if len(text) <= limit // 4:
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= limit:
        return None
    return f"response too large: {size} bytes of content, over max_response_bytes={limit}"


def record_from_completion(
    body: Any,
    limit: int | None = None,
    *,
    latency_s: float | None = None,
    created_at: str | None = None,
) -> dict[str, Any] | str:
    """Return the cache record of a chat completion body, or why it is not an answer.

    Args:
        body: The decoded JSON of a chat completion.
        limit: `max_response_bytes` (None: no limit); a larger content is not an answer.
        latency_s: The request's latency (None for a batch: it has none per request).
        created_at: When the answer arrived (default: the completion's `created`, else now).

    Returns:
        The record (checked by `cache.check_record`), or a message: why it is not one.
    """
    if not isinstance(body, dict):
        return f"response body is a {type(body).__name__}, not a JSON object"
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "response has no choices"
    choice = choices[0]
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    content = message.get("content")
    problem = _too_big(content, limit)
    if problem:
        return problem
    record = {
        "content": content,
        "finish_reason": choice.get("finish_reason"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "latency_s": latency_s,
        "response_model": body.get("model"),
        "response_id": body.get("id"),
        "created_at": created_at or _iso(body.get("created")),
    }
    return check_record(record)[0]


__all__ = ["TOO_LARGE", "record_from_completion"]
