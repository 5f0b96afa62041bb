"""A loopback fake of the OpenAI Batch API for tests (never a real model, never the internet).

Routes (under `/v1`): `POST /files` (multipart upload), `GET /files/{id}`,
`GET /files/{id}/content`, `POST /batches`, `GET /batches` (list), `GET /batches/{id}`,
`POST /batches/{id}/cancel`. A batch moves validating → in_progress → its outcome, one step
per retrieve (`BatchPlan.polls`), or waits in `in_progress` while `hold` is set. Each input
line is answered as `testing.openai_server` answers the same body (`default_responder`,
same completion JSON), so a batch run and an online run against the two fakes get identical
answers.

Knobs (`BatchPlan`): `outcomes` (per created batch, in order, the last one repeating):
`completed`, `failed` (validation failed, no output), `expired` (the lines a hash picks with
probability `expire_done` are answered, the rest go to the error file as `batch_expired`);
`error_rate`: lines answered with an HTTP 500 in the error file (only on the first
`error_attempts` receptions of a custom_id, so a resubmission succeeds); `drop_rate`: lines
left out of both files (lost by the provider); `shuffle`: output
lines out of order; a cancelled batch answers the lines a hash picks with probability 0.5.
`received` counts each custom_id over all batches; `api_key` makes every request need it;
`forget(batch_id)` makes the fake answer 404 for a batch (a provider that lost or purged it).
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler
from typing import Any

from judgelab.testing.answers import completion, default_responder
from judgelab.testing.loopback import LoopbackServer

OUTCOMES = ("completed", "failed", "expired")
CREATED = 1_700_000_000


def _unit(text: str) -> float:
    """Return a number in [0, 1) drawn from a hash of `text` (reproducible)."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16) / 16**12


@dataclass
class BatchPlan:
    """How the fake treats batches (see the module docstring)."""

    polls: int = 2
    outcomes: tuple[str, ...] = ("completed",)
    error_rate: float = 0.0
    error_attempts: int = 1
    expire_done: float = 0.5
    drop_rate: float = 0.0
    shuffle: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        bad = [o for o in self.outcomes if o not in OUTCOMES]
        if bad or not self.outcomes:
            raise ValueError(f"unknown batch outcome(s) {bad}; known: {list(OUTCOMES)}")


@dataclass
class _State:
    plan: BatchPlan
    api_key: str | None
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    polls: Counter[str] = field(default_factory=Counter)
    received: Counter[str] = field(default_factory=Counter)
    created: int = 0
    hold: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def _line_out(batch_id: str, obj: dict[str, Any], fate: str) -> dict[str, Any]:
    """Return the output (or error) line of one request line under `fate`."""
    cid = obj.get("custom_id")
    rid = "batch_req_" + hashlib.sha256(f"{batch_id}{cid}".encode()).hexdigest()[:16]
    out: dict[str, Any] = {"id": rid, "custom_id": cid, "error": None}
    if fate == "answer":
        body = obj["body"]
        answer = completion(body, default_responder(body), "stop")
        return {**out, "response": {"status_code": 200, "request_id": rid, "body": answer}}
    if fate == "error":
        err = {"error": {"message": "injected server error", "type": "server_error"}}
        return {**out, "response": {"status_code": 500, "request_id": rid, "body": err}}
    code = "batch_expired" if fate == "expired" else "batch_cancelled"
    message = f"This request could not be executed before the batch was {fate}."
    return {**out, "response": None, "error": {"code": code, "message": message}}


def _new_file(state: _State, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
    fid = f"file-{len(state.files):06d}"
    state.files[fid] = {
        "id": fid,
        "object": "file",
        "bytes": len(content),
        "created_at": CREATED,
        "filename": filename,
        "purpose": purpose,
        "status": "processed",
        "_content": content,
    }
    return state.files[fid]


def _public(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if not k.startswith("_")}


def _finish(state: _State, batch: dict[str, Any], outcome: str) -> None:
    """Answer the batch's lines under `outcome` and write its output and error files."""
    text = state.files[batch["input_file_id"]]["_content"].decode("utf-8")
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    plan, good, bad = state.plan, [], []
    for obj in lines:
        cid = str(obj.get("custom_id"))
        state.received[cid] += 1
        if _unit(f"{plan.seed}:drop:{batch['id']}:{cid}") < plan.drop_rate:
            continue  # in neither file: the client must notice it is missing
        if outcome in ("expired", "cancelled"):
            share = plan.expire_done if outcome == "expired" else 0.5
            if _unit(f"{plan.seed}:{batch['id']}:{cid}") >= share:
                bad.append(_line_out(batch["id"], obj, outcome))
                continue
        first = state.received[cid] <= plan.error_attempts
        if first and _unit(f"{plan.seed}:err:{cid}") < plan.error_rate:
            bad.append(_line_out(batch["id"], obj, "error"))
        else:
            good.append(_line_out(batch["id"], obj, "answer"))
    if plan.shuffle:
        random.Random(f"{plan.seed}:{batch['id']}").shuffle(good)
    for kind, rows in (("output_file_id", good), ("error_file_id", bad)):
        if rows:
            data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
            name = f"{batch['id']}_{kind}.jsonl"
            batch[kind] = _new_file(state, data, name, "batch_output")["id"]
    batch["request_counts"] = {"total": len(lines), "completed": len(good), "failed": len(bad)}
    batch["status"] = outcome
    batch[f"{outcome}_at"] = CREATED + 2


def _validate(state: _State, batch: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the validation errors of a batch's input file (as OpenAI lists them)."""
    errors, seen = [], set()
    text = state.files[batch["input_file_id"]]["_content"].decode("utf-8", "replace")
    for no, raw in enumerate(text.splitlines(), start=1):
        try:
            obj = json.loads(raw)
            ok = obj["method"] == "POST" and obj["url"] == batch["endpoint"]
            ok = ok and isinstance(obj["body"].get("messages"), list) and obj["body"].get("model")
            dup = obj["custom_id"] in seen
            seen.add(obj["custom_id"])
        except (ValueError, KeyError, TypeError, AttributeError):
            ok, dup = False, False
        if not ok or dup:
            why = "duplicate custom_id" if dup else "invalid request line"
            errors.append({"code": "invalid_request", "message": why, "line": no, "param": None})
    return errors


def _advance(state: _State, batch: dict[str, Any]) -> None:
    """Move a batch one step on (called on each retrieve)."""
    if batch["status"] in ("completed", "failed", "expired", "cancelled"):
        return
    if batch["status"] == "cancelling":
        _finish(state, batch, "cancelled")
        return
    state.polls[batch["id"]] += 1
    n = state.polls[batch["id"]]
    if batch["status"] == "validating":
        errors = _validate(state, batch)
        if errors or batch["_outcome"] == "failed":
            errors = errors or [{"code": "invalid_request", "message": "injected", "line": None}]
            listed = {"object": "list", "data": errors}
            batch.update(status="failed", failed_at=CREATED + 1, errors=listed)
            return
        batch.update(status="in_progress", in_progress_at=CREATED + 1)
    if batch["status"] == "in_progress" and n >= state.plan.polls and not state.hold:
        _finish(state, batch, batch["_outcome"])


def _create_batch(state: _State, body: dict[str, Any]) -> dict[str, Any]:
    bid = f"batch_{state.created:06d}"
    outcomes = state.plan.outcomes
    outcome = outcomes[min(state.created, len(outcomes) - 1)]
    state.created += 1
    batch = {
        "id": bid,
        "object": "batch",
        "endpoint": body.get("endpoint"),
        "errors": None,
        "input_file_id": body.get("input_file_id"),
        "completion_window": body.get("completion_window", "24h"),
        "status": "validating",
        "output_file_id": None,
        "error_file_id": None,
        "created_at": CREATED,
        "expires_at": CREATED + 86_400,
        "request_counts": {"total": 0, "completed": 0, "failed": 0},
        "metadata": body.get("metadata"),
        "_outcome": outcome,
    }
    state.batches[bid] = batch
    return batch


def _upload(state: _State, ctype: str, raw: bytes) -> tuple[int, Any]:
    """Store a multipart upload (`file`, `purpose`); return the file object."""
    head = f"Content-Type: {ctype}\r\n\r\n".encode("latin-1")
    msg = BytesParser(policy=default_policy).parsebytes(head + raw)
    if not msg.is_multipart():
        return 400, {"error": {"message": "expected multipart/form-data"}}
    parts = {p.get_param("name", header="content-disposition"): p for p in msg.iter_parts()}
    if "file" not in parts:
        return 400, {"error": {"message": "no file part"}}
    purpose = parts["purpose"].get_content().strip() if "purpose" in parts else ""
    content = parts["file"].get_payload(decode=True) or b""
    name = parts["file"].get_filename() or "upload.jsonl"
    return 200, _public(_new_file(state, content, name, str(purpose)))


def _route(state: _State, method: str, path: str, ctype: str, raw: bytes) -> tuple[int, Any]:
    """Return (status, JSON object or raw bytes) for one request."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if parts[:1] == ["v1"]:
        parts = parts[1:]
    with state.lock:
        if method == "POST" and parts == ["files"]:
            return _upload(state, ctype, raw)
        if method == "GET" and len(parts) in (2, 3) and parts[0] == "files":
            f = state.files.get(parts[1])
            if f is None:
                return 404, {"error": {"message": f"no file {parts[1]}"}}
            return (200, f["_content"]) if parts[2:] == ["content"] else (200, _public(f))
        if method == "POST" and parts == ["batches"]:
            body = json.loads(raw or b"{}")
            if body.get("input_file_id") not in state.files:
                return 400, {"error": {"message": "unknown input_file_id"}}
            return 200, _public(_create_batch(state, body))
        if method == "GET" and parts == ["batches"]:
            data = [_public(b) for b in reversed(state.batches.values())]
            return 200, {"object": "list", "data": data, "has_more": False}
        batch = state.batches.get(parts[1]) if len(parts) >= 2 and parts[0] == "batches" else None
        if batch is not None and method == "GET" and len(parts) == 2:
            _advance(state, batch)
            return 200, _public(batch)
        if batch is not None and method == "POST" and parts[2:] == ["cancel"]:
            if batch["status"] in ("validating", "in_progress"):
                batch.update(status="cancelling", cancelling_at=CREATED + 1)
            return 200, _public(batch)
    return 404, {"error": {"message": f"no route {method} {path}"}}


class BatchServer(LoopbackServer):
    """The fake Batch API on 127.0.0.1 (see the module docstring); a context manager.

    Args:
        plan: How batches behave (default: complete after two polls, no errors).
        api_key: If set, every request must carry `Authorization: Bearer <api_key>`.
    """

    def __init__(self, plan: BatchPlan | None = None, *, api_key: str | None = None):
        super().__init__()
        self.state = _State(plan or BatchPlan(), api_key)

    @property
    def url(self) -> str:
        """Return the base URL to give a client (ends in `/v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def received(self) -> dict[str, int]:
        """Return how many times each custom_id was processed, over all batches."""
        with self.state.lock:
            return dict(self.state.received)

    @property
    def batches(self) -> list[dict[str, Any]]:
        """Return the batches created so far (oldest first)."""
        with self.state.lock:
            return [_public(b) for b in self.state.batches.values()]

    def set_plan(self, plan: BatchPlan) -> None:
        """Replace the plan (batches created later take their outcome from it)."""
        self.state.plan = plan

    def forget(self, batch_id: str) -> None:
        """Drop a batch: every later call about it answers 404, as for one purged upstream."""
        with self.state.lock:
            del self.state.batches[batch_id]

    def hold(self, on: bool = True) -> None:
        """Keep every batch in `in_progress` while `on` (a long-running batch)."""
        self.state.hold = on

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """Return the request handler bound to this server's state."""
        state = self.state

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                wanted = state.api_key
                if wanted is not None and self.headers.get("Authorization") != f"Bearer {wanted}":
                    status, out = 401, {"error": {"message": "missing or wrong API key"}}
                else:
                    ctype = self.headers.get("Content-Type", "")
                    status, out = _route(state, self.command, self.path, ctype, raw)
                data = out if isinstance(out, bytes) else json.dumps(out).encode("utf-8")
                self.send_response(status)
                kind = "application/octet-stream" if isinstance(out, bytes) else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


__all__ = ["OUTCOMES", "BatchPlan", "BatchServer"]
