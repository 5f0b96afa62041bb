"""Anthropic Message Batches through the optional `anthropic` SDK (`judgelab[anthropic]`).

`AnthropicBatches` wraps an `anthropic.Anthropic` client in the small part of the OpenAI
Files + Batches interface that `openai_batches` uses, so submitting, polling, cancelling,
collecting and the registry work the same for both providers:

- the shard kept in the registry is the OpenAI-format file (it is what `collect` rebuilds
  the cached requests from); "uploading" it only records its path, and creating the batch
  sends its lines as Anthropic requests (`formats.anthropic_params`; `custom_id` = the
  64-hex request key, within Anthropic's 64-character limit);
- `processing_status` maps to the OpenAI states (`ended` → `completed`, or `cancelled` once
  a cancel was asked), and an ended batch's results stream as its "output file": JSON lines
  in Anthropic's results format, which `ingest` reads (`errored`, `canceled` and `expired`
  results are error lines, sent again by the next submit).

Anthropic batches carry no input-file id, so a process killed between sending a batch and
recording its id cannot adopt it: the next submit sends those requests again (at most one
shard paid twice). The SDK is imported only here and only when used.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from judgelab.judges.batch.formats import anthropic_request
from judgelab.judges.spec import DEFAULT_BASE_URL, JudgeSpec

PROVIDER = "anthropic"
MAX_REQUESTS = 100_000  # per Message Batch
MAX_BYTES = 256 * 1024 * 1024
_FILE = "localfile:"
_RESULTS = "results:"


def sdk_base_url(spec: JudgeSpec) -> str:
    """Return the SDK's base URL for the spec: its `base_url` without a trailing `/v1`.

    Raises:
        ValueError: the spec still points at OpenAI's default URL.
    """
    if spec.base_url.rstrip("/") == DEFAULT_BASE_URL:
        raise ValueError(
            f"judge {spec.judge_id} points at {DEFAULT_BASE_URL}; set base_url: "
            "https://api.anthropic.com/v1 in the spec to use Anthropic batches"
        )
    base = spec.base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def open_client(spec: JudgeSpec) -> AnthropicBatches:
    """Return the adapter over an `anthropic.Anthropic` client (key from the environment).

    Raises:
        ImportError: the optional SDK is missing (install `judgelab[anthropic]`).
    """
    try:
        import anthropic
    except ImportError:
        raise ImportError(
            "Anthropic batches need the anthropic SDK: pip install 'judgelab[anthropic]'"
        ) from None
    client = anthropic.Anthropic(
        api_key=spec.api_key(), base_url=sdk_base_url(spec), max_retries=3
    )
    return AnthropicBatches(client)


def _plain(obj: Any) -> Any:
    """Return an SDK object as plain JSON data (dicts pass through)."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    return obj


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def _as_openai(batch: Any) -> SimpleNamespace:
    """Return an Anthropic MessageBatch as the fields `openai_batches` reads."""
    status = _get(batch, "processing_status")
    cancelled = _get(batch, "cancel_initiated_at") is not None
    state = {"in_progress": "in_progress", "canceling": "cancelling"}.get(status)
    if status == "ended":
        state = "cancelled" if cancelled else "completed"
    counts = _get(batch, "request_counts") or {}
    failed = sum(int(_get(counts, k, 0) or 0) for k in ("errored", "canceled", "expired"))
    done = int(_get(counts, "succeeded", 0) or 0)
    total = failed + done + int(_get(counts, "processing", 0) or 0)
    bid = _get(batch, "id")
    return SimpleNamespace(
        id=bid,
        status=state or str(status),
        input_file_id=None,
        output_file_id=f"{_RESULTS}{bid}" if status == "ended" else None,
        error_file_id=None,
        request_counts=SimpleNamespace(total=total, completed=done, failed=failed),
        errors=None,
    )


class _Streamed:
    """A context manager with `iter_bytes()`, as the openai SDK's streamed content."""

    def __init__(self, lines: Iterator[bytes]):
        self._lines = lines

    def __enter__(self) -> _Streamed:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def iter_bytes(self) -> Iterator[bytes]:
        """Yield the content, one JSON line at a time."""
        yield from self._lines


class AnthropicBatches:
    """The Files + Batches calls `openai_batches` makes, over an Anthropic client."""

    provider = PROVIDER

    def __init__(self, client: Any):
        self._client = client
        self.files = SimpleNamespace(
            create=self._upload,
            with_streaming_response=SimpleNamespace(content=self._content),
        )
        self.batches = SimpleNamespace(
            create=self._create, retrieve=self._retrieve, cancel=self._cancel, list=self._list
        )

    def _upload(self, *, file: tuple[str, Any], purpose: str) -> SimpleNamespace:
        del purpose  # Anthropic takes the requests inline: remember where the shard is
        return SimpleNamespace(id=_FILE + str(Path(file[1].name).resolve()))

    def _requests(self, file_id: str) -> list[dict[str, Any]]:
        path = Path(file_id.removeprefix(_FILE))
        lines = [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]
        return [anthropic_request(line["custom_id"], line["body"]) for line in lines]

    def _create(self, *, input_file_id: str, **_: Any) -> SimpleNamespace:
        created = self._client.messages.batches.create(requests=self._requests(input_file_id))
        return _as_openai(created)

    def _retrieve(self, batch_id: str) -> SimpleNamespace:
        return _as_openai(self._client.messages.batches.retrieve(batch_id))

    def _cancel(self, batch_id: str) -> SimpleNamespace:
        return _as_openai(self._client.messages.batches.cancel(batch_id))

    def _list(self, limit: int = 100) -> Iterator[SimpleNamespace]:
        for batch in self._client.messages.batches.list(limit=limit):
            yield _as_openai(batch)

    def _content(self, file_id: str) -> contextlib.AbstractContextManager[Any]:
        batch_id = file_id.removeprefix(_RESULTS)
        results = self._client.messages.batches.results(batch_id)
        lines = ((json.dumps(_plain(r)) + "\n").encode("utf-8") for r in results)
        return _Streamed(lines)


__all__ = ["MAX_BYTES", "MAX_REQUESTS", "PROVIDER", "AnthropicBatches", "open_client"]
