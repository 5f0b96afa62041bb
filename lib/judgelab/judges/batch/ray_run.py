"""Run exported batch shards through Ray Data's LLM batch processor (`judgelab[ray]`).

`run` reads `judgelab batch export` shards (OpenAI batch input lines `{custom_id, method,
url, body}`), sends every request through `ray.data.llm.build_processor` and writes one
OpenAI batch *output* line per request (`{id, custom_id, response: {status_code, body},
error}`) to one JSONL file, atomically, which `judgelab batch ingest` reads into the cache.

- `engine="http"` (default): `HttpRequestProcessorConfig` against the spec's `base_url` (any
  OpenAI-compatible endpoint). Its HTTP session is judgelab's own (`KeyedSession`): each
  request of a batch is sent at once (paced by `qps`), retried on 408/409/429/5xx, timeouts
  and dropped connections with the spec's backoff, and *every* outcome, an HTTP error or an
  exception included, becomes a row, so one failing request never fails the run and no
  answer is dropped. The key is read from the spec's `api_key_env` inside each Ray worker
  (its environment, inherited from the driver by a local Ray instance; set it on every node
  of a cluster): it is never a Ray parameter, never in Ray's object store, logs or errors.
- `engine="vllm"`: `vLLMEngineProcessorConfig(model_source=spec.model)` on GPU nodes (needs
  `vllm`); answers become chat-completion bodies of the same shape.

A request repeated across input files is sent once. When the run fails part-way, what came
back is kept in `OUT.partial` (ingestible as is) and the error says so.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgelab.core import secrets, tables
from judgelab.errors import JudgeRunError
from judgelab.judges import clients
from judgelab.judges.batch.ingest import requests_of_input
from judgelab.judges.spec import JudgeSpec

ENGINES = ("http", "vllm")
INSTALL_HINT = "pip install 'judgelab[ray]'"
RETRY_STATUS = frozenset({408, 409, 429})


def output_line(
    custom_id: str,
    *,
    status_code: int | None = None,
    body: Any = None,
    error: str | None = None,
    request_id: str | None = None,
) -> dict[str, Any]:
    """Return one OpenAI batch output line (the format `batch ingest` reads).

    An HTTP answer (`status_code` given) goes under `response`; a request that got no HTTP
    answer (`status_code` None) has `response` null and `error` set.

    >>> output_line("k", error="connection refused", request_id="r")["error"]
    {'code': 'request_failed', 'message': 'connection refused'}
    >>> output_line("k", status_code=200, body={"choices": []}, request_id="r")["response"]
    {'status_code': 200, 'request_id': 'r', 'body': {'choices': []}}
    """
    rid = request_id or f"ray-{uuid.uuid4().hex}"
    if status_code is None:
        err = {"code": "request_failed", "message": error or "no response and no error"}
        return {"id": f"batch_req_{rid}", "custom_id": custom_id, "response": None, "error": err}
    response = {"status_code": int(status_code), "request_id": rid, "body": body}
    return {"id": f"batch_req_{rid}", "custom_id": custom_id, "response": response, "error": None}


def line_from_result(custom_id: str, status: int, text: str, error: str) -> dict[str, Any]:
    """Return the output line of one HTTP outcome (`status` 0: no HTTP answer, see `error`).

    A body that is not JSON becomes an error line that says so (never dropped); an HTTP
    error keeps its status and its (decoded) error body.

    >>> line_from_result("k", 0, "", "timeout after 5 s")["error"]["message"]
    'timeout after 5 s'
    >>> line_from_result("k", 500, '{"error": {"message": "boom"}}', "")["response"]["body"]
    {'error': {'message': 'boom'}}
    >>> line_from_result("k", 200, '{"choi', "")["error"]["message"]
    'HTTP 200 answer is not JSON: {"choi'
    """
    if not status:
        return output_line(custom_id, error=error)
    try:
        body = json.loads(text)
    except ValueError:
        if status == 200:
            return output_line(custom_id, error=f"HTTP 200 answer is not JSON: {text[:200]}")
        body = {"error": {"message": text[:500] or f"HTTP {status}"}}
    return output_line(custom_id, status_code=status, body=body)


class _Answer:
    """What the Ray HTTP stage reads of a response: always status 200, our outcome as JSON."""

    status, reason = 200, "OK"

    def __init__(self, outcome: dict[str, Any]):
        self._outcome = outcome

    async def __aenter__(self) -> _Answer:
        return self

    async def __aexit__(self, *exc: object) -> None: ...

    async def json(self) -> dict[str, Any]:
        """Return the outcome `{"status", "text", "error"}` (the stage's `http_response`)."""
        return self._outcome


@dataclass(frozen=True)
class KeyedSession:
    """A picklable session factory for Ray's HTTP stage; holds the key's *name*, not the key.

    Called in a Ray worker, it returns a session whose `post` starts the request at once and
    never raises: the stage gets `{"status": HTTP status or 0, "text": body, "error": why}`.
    """

    api_key_env: str | None
    timeout_s: float
    connect_timeout_s: float | None
    max_retries: int
    backoff_s: float
    max_response_bytes: int | None
    max_wait_s: float = 60.0
    limit: int = 64

    def __call__(self) -> _Session:
        """Return a new session (used as `async with factory() as session`)."""
        return _Session(self)


class _Session:
    def __init__(self, cfg: KeyedSession):
        self.cfg = cfg
        self.key: str | None = None
        self.session: Any = None

    async def __aenter__(self) -> _Session:
        import aiohttp

        cfg = self.cfg
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if cfg.api_key_env is None:
            self.key = "EMPTY"
        else:
            self.key = os.environ.get(cfg.api_key_env) or None
        if self.key is not None:
            headers["Authorization"] = f"Bearer {self.key}"
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=cfg.limit, ssl=clients.ssl_context()),
            timeout=aiohttp.ClientTimeout(total=cfg.timeout_s, sock_connect=cfg.connect_timeout_s),
            headers=headers,
            raise_for_status=False,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.session.close()

    def post(self, url: str, headers: Any = None, data: Any = None) -> asyncio.Task[_Answer]:
        """Start sending one request now; the task's result is what the stage reads."""
        return asyncio.ensure_future(self._send(url, data))

    async def _send(self, url: str, data: Any) -> _Answer:
        if self.key is None:
            why = (
                f"environment variable {self.cfg.api_key_env} is not set in this Ray worker; "
                "set it where Ray runs (on every node of a cluster)"
            )
            return _Answer({"status": 0, "text": "", "error": why})
        body = json.loads(data) if isinstance(data, str) else data
        payload = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
        outcome: dict[str, Any] = {}
        for attempt in range(self.cfg.max_retries + 1):
            outcome, wait_s = await self._attempt(url, payload)
            if wait_s is None:
                break
            if attempt < self.cfg.max_retries:
                backoff = self.cfg.backoff_s * 2**attempt
                await asyncio.sleep(min(self.cfg.max_wait_s, wait_s or backoff))
        return _Answer(outcome)

    async def _attempt(self, url: str, payload: bytes) -> tuple[dict[str, Any], float | None]:
        """Return (outcome, None) when final, or (outcome, server's wait or 0) to retry."""
        import aiohttp

        try:
            async with self.session.post(url, data=payload) as resp:
                raw = await clients.read_capped(resp, self.cfg.max_response_bytes)
                status, wait = resp.status, clients.retry_after(resp.headers)
        except clients.RequestError as exc:  # an answer over max_response_bytes
            return {"status": 0, "text": "", "error": str(exc)}, None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            why = f"{type(exc).__name__}: {exc}".strip(": ")
            return {"status": 0, "text": "", "error": self._scrub(why)}, 0.0
        text = raw.decode("utf-8", "replace")
        if 200 <= status < 300:
            try:  # no JSON or no choices: retried, as the online runner does
                choices = json.loads(text).get("choices")
                ok = isinstance(choices, list) and bool(choices)
            except (ValueError, AttributeError):
                ok = False
            return {"status": 200, "text": text, "error": ""}, (None if ok else 0.0)
        retry = status in RETRY_STATUS or status >= 500
        return {"status": status, "text": self._scrub(text), "error": ""}, (
            (wait or 0.0) if retry else None
        )

    def _scrub(self, text: str) -> str:
        known = [self.key] if self.key and self.key != "EMPTY" else []
        return secrets.scrub(text, known)[:2000]


def _payload(row: dict[str, Any]) -> dict[str, Any]:
    """Ray preprocess: the stage's `payload` is the request body's JSON text, sent verbatim."""
    return {"payload": row["body"]}


def _http_line(row: dict[str, Any]) -> dict[str, Any]:
    """Ray postprocess of the HTTP engine: the output line, as JSON text."""
    res = row["http_response"]
    line = line_from_result(
        row["custom_id"], int(res["status"] or 0), res["text"] or "", res["error"] or ""
    )
    return {"line": json.dumps(line, ensure_ascii=False)}


@dataclass(frozen=True)
class RaySettings:
    """How a Ray run is spread: actors, rows per batch, pacing, cluster, retries."""

    engine: str = "http"
    concurrency: int = 2
    batch_size: int = 16
    qps: int | None = None
    address: str | None = None
    num_cpus: int | None = None
    max_retries: int | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"unknown Ray engine {self.engine!r}; known: {list(ENGINES)}")
        for name in ("concurrency", "batch_size", "qps", "num_cpus"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"Ray {name} must be >= 1, got {value}")
        if self.max_retries is not None and self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")


def import_ray() -> Any:
    """Return the `ray` module, or raise ImportError naming the extra to install."""
    try:
        import ray
        import ray.data.llm  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"the Ray back-end needs Ray Data ({exc.name or 'ray'} is missing): {INSTALL_HINT}"
        ) from None
    return ray


def http_processor(spec: JudgeSpec, settings: RaySettings) -> Any:
    """Return Ray's HTTP request processor aimed at the spec's chat completions URL."""
    from ray.data.llm import HttpRequestProcessorConfig, build_processor

    retries = spec.max_retries if settings.max_retries is None else settings.max_retries
    factory = KeyedSession(
        api_key_env=spec.api_key_env,
        timeout_s=spec.timeout_s,
        connect_timeout_s=spec.connect_timeout_s,
        max_retries=retries,
        backoff_s=spec.backoff_s,
        max_response_bytes=spec.max_response_bytes,
        max_wait_s=spec.max_retry_after_s,
        limit=settings.batch_size,
    )
    config = HttpRequestProcessorConfig(
        url=clients.completions_url(spec.base_url),
        batch_size=settings.batch_size,
        concurrency=settings.concurrency,
        qps=settings.qps,
        max_retries=0,  # retries happen in KeyedSession; the stage never sees a failure
        session_factory=factory,
        http_request_stage={"num_cpus": 0.25},  # I/O-bound: actors share a core
    )
    return build_processor(config, preprocess=_payload, postprocess=_http_line)


def _need_vllm() -> None:
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        raise ImportError(
            "engine 'vllm' needs the vllm package (pip install vllm) on the GPU nodes and the "
            "driver; use engine 'http' against an OpenAI-compatible server otherwise"
        )


def vllm_processor(spec: JudgeSpec, settings: RaySettings) -> Any:
    """Return Ray's vLLM engine processor for the spec's model (GPU nodes with `vllm`).

    Raises:
        ImportError: `vllm` is not installed where the driver runs.
    """
    _need_vllm()
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    config = vLLMEngineProcessorConfig(
        model_source=spec.model,
        batch_size=settings.batch_size,
        concurrency=settings.concurrency,
        should_continue_on_error=True,
    )
    return build_processor(config, preprocess=_engine_row, postprocess=_engine_line)


def _engine_row(row: dict[str, Any]) -> dict[str, Any]:
    """Ray preprocess of the vLLM engine: messages and sampling params of the body."""
    body = json.loads(row["body"])
    names = ("temperature", "top_p", "max_tokens", "seed")
    params = {k: body[k] for k in names if body.get(k) is not None}
    return {"messages": body["messages"], "sampling_params": params}


def _engine_line(row: dict[str, Any]) -> dict[str, Any]:
    """Ray postprocess of the vLLM engine: a chat-completion output line, as JSON text."""
    n_in, n_out = row.get("num_input_tokens"), row.get("num_generated_tokens")
    message = {"role": "assistant", "content": row.get("generated_text")}
    choice = {"index": 0, "message": message, "finish_reason": row.get("finish_reason")}
    usage = {"prompt_tokens": n_in, "completion_tokens": n_out}
    body = {"id": f"vllm-{uuid.uuid4().hex}", "created": int(time.time()), "usage": usage}
    body |= {"model": json.loads(row["body"])["model"], "choices": [choice]}
    line = output_line(str(row["custom_id"]), status_code=200, body=body)
    return {"line": json.dumps(line, ensure_ascii=False, default=int)}


@dataclass
class RayReport:
    """What a Ray run sent and wrote."""

    out: Path
    requests: int
    answered: int
    errors: int
    seconds: float

    def format(self) -> str:
        """Return the report as text."""
        return "\n".join(
            [
                f"  requests sent      {self.requests}",
                f"  answered (HTTP 200) {self.answered}",
                f"  error lines        {self.errors} (ingest counts them; never cached)",
                f"  wall time          {self.seconds:.1f} s",
                f"  output             {self.out}",
            ]
        )


def read_inputs(paths: Sequence[str | os.PathLike[str]], spec: JudgeSpec) -> list[dict[str, str]]:
    """Return the distinct requests of the input shards as `{custom_id, body}` rows.

    Raises:
        BatchFormatError: a line that is not a batch request of this judge's endpoint (its
            `custom_id` is not the key of its body sent to `spec.base_url`).
    """
    rows: dict[str, dict[str, str]] = {}
    for path in paths:
        for cid, request in requests_of_input(path, spec.endpoint_id).items():
            body = {k: v for k, v in request.items() if k != "endpoint"}
            rows.setdefault(cid, {"custom_id": cid, "body": json.dumps(body, ensure_ascii=False)})
    return list(rows.values())


def _line_of_row(row: dict[str, Any]) -> dict[str, Any]:
    """Return the output line of one result row (a row Ray marked as failed included)."""
    if row.get("line"):
        return json.loads(row["line"])
    why = str(row.get("__inference_error__") or "the Ray processor returned no answer")
    return output_line(str(row["custom_id"]), error=secrets.scrub(why)[:2000])


def _start(ray: Any, settings: RaySettings) -> bool:
    """Start (or join) Ray; return whether this call started it (and so stops it)."""
    if ray.is_initialized():
        return False
    if settings.address is None:
        ray.init(
            num_cpus=settings.num_cpus or os.cpu_count() or 1,
            include_dashboard=False,
            log_to_driver=False,
        )
    else:
        ray.init(address=settings.address, log_to_driver=False)
    return True


def _write(result: Any, rows: list[dict[str, str]], tmp: Path) -> tuple[int, int]:
    """Stream the result rows to `tmp`; add error lines for requests Ray lost."""
    todo = {r["custom_id"] for r in rows}
    answered = errors = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in result.iter_rows():
            line = _line_of_row(row)
            if line["custom_id"] not in todo:
                continue  # one line per request: a second result (never seen) is not kept
            todo.discard(line["custom_id"])
            ok = line["error"] is None and line["response"]["status_code"] == 200
            answered, errors = answered + ok, errors + (not ok)
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        for cid in sorted(todo):
            fh.write(json.dumps(output_line(cid, error="no result came back from Ray")) + "\n")
            errors += 1
    return answered, errors


def _failed(exc: BaseException, tmp: Path, target: Path, spec: JudgeSpec) -> JudgeRunError:
    """Keep what came back as `OUT.partial`; return the error to raise (no secret in it)."""
    partial = target.with_name(target.name + ".partial")
    kept = tmp.exists() and tmp.stat().st_size > 0
    if kept:
        os.replace(tmp, partial)
    known = secrets.env_secrets() | {os.environ.get(spec.api_key_env or "", "")}
    why = secrets.scrub(f"{type(exc).__name__}: {exc}", known)[:1000]
    where = (
        f"answers that came back are in {partial} (ingest it; export again to send only "
        "what is still missing)"
        if kept
        else "no answer had come back"
    )
    return JudgeRunError(f"the Ray run failed: {why}; {where}")


def run(
    paths: Sequence[str | os.PathLike[str]],
    spec: JudgeSpec,
    out: str | os.PathLike[str],
    settings: RaySettings | None = None,
) -> RayReport:
    """Send the requests of the input shards through Ray Data; write one output line each.

    Ray is started locally (`num_cpus`, no dashboard) or joined (`address`) unless this
    process has already initialised it; a Ray this call started is shut down at the end.

    Raises:
        BatchFormatError: an input line that is not a request of this judge (nothing sent).
        JudgeSpecError: the spec's `api_key_env` is not set here.
        ImportError: Ray Data (or, for engine "vllm", vllm) is not installed.
        JudgeRunError: the Ray run failed; what came back is kept in `OUT.partial`.
    """
    settings = settings or RaySettings()
    rows = read_inputs(paths, spec)
    if spec.api_key_env is not None:
        spec.api_key()  # the variable must be set here (a local Ray inherits it); never sent
    ray = import_ray()
    make = http_processor if settings.engine == "http" else vllm_processor
    if settings.engine == "vllm":
        _need_vllm()
    started = time.perf_counter()
    own = _start(ray, settings)
    target = Path(out)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = settings.progress
        blocks = max(1, min(1000, -(-len(rows) // settings.batch_size)))
        data = ray.data.from_items(rows, override_num_blocks=blocks)
        with tables.atomic_path(target) as tmp:
            try:
                answered, errors = _write(make(spec, settings)(data), rows, tmp)
            except KeyboardInterrupt as exc:
                _failed(exc, tmp, target, spec)  # keep the partial file, then stop
                raise
            except Exception as exc:
                raise _failed(exc, tmp, target, spec) from None
    finally:
        if own:
            ray.shutdown()
    return RayReport(target, len(rows), answered, errors, time.perf_counter() - started)


__all__ = [
    "ENGINES",
    "INSTALL_HINT",
    "KeyedSession",
    "RayReport",
    "RaySettings",
    "http_processor",
    "import_ray",
    "line_from_result",
    "output_line",
    "read_inputs",
    "run",
    "vllm_processor",
]
