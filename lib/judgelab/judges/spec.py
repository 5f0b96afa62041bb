"""Judge specs: which model, where, with which prompt and sampling params (YAML or dict).

A spec never holds a key. `api_key_env` names the environment variable that holds it; a
literal key anywhere in the spec (a field such as `api_key`, or a value that looks like a
key) is rejected with an error telling the user to use an environment variable.

Remote judge (`params/judges/gpt-4o-mini-workflow.yaml`)::

    endpoint: openai-compatible
    model: gpt-4o-mini
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY
    template: cjb.workflow
    temperature: 0.0
    max_tokens: 1024
    concurrency: 16
    price_in: 0.15        # USD per 1M prompt tokens
    price_out: 0.60       # USD per 1M completion tokens

Offline baseline (`endpoint: offline`; `model` names the baseline, `options` its params)::

    endpoint: offline
    model: reference_similarity
    options: {metric: token_f1, threshold: 0.5}
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from judgelab.core import paths, secrets, tables, yamlsafe
from judgelab.core.names import safe_name
from judgelab.errors import ChoiceError, UnsafeNameError, check_choice
from judgelab.errors import JudgeSpecError as JudgeSpecError
from judgelab.judges import clients, templates
from judgelab.judges.baselines import BASELINES

ENDPOINTS = ("openai-compatible", "offline")
CLIENTS = clients.CLIENTS
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SECRET_KEY_RE = re.compile(
    r"(^|_)(api_?key|key|token|secret|password|passwd|authorization|bearer)$", re.IGNORECASE
)
_SAFE_SECRET_NAMES = {"api_key_env"}


@dataclass(frozen=True)
class JudgeSpec:
    """A judge: endpoint + model + prompt template + sampling and run params.

    Attributes:
        endpoint: "openai-compatible" (any OpenAI-style chat API) or "offline" (a baseline).
        model: The model id sent to the endpoint, or the offline baseline's name.
        template: Prompt template id (see `judgelab.judges.templates.names()`); remote only.
        base_url: API root; vLLM/Ollama/Together work by changing it.
        api_key_env: Name of the environment variable holding the key (None: no key).
        temperature, top_p, max_tokens, seed: Sampling params sent with every request.
        n: Samples per (item, condition, order); `n > 1` draws self-consistency samples.
        orders: Presentation orders for pairwise items: (0, 1) = both (the default).
        conditions: Conditions to run (default: the template's own default).
        concurrency, timeout_s, max_retries, backoff_s: How requests are made.
        workers: Processes that share the requests (default 1); `concurrency` is split
            between them. More than one helps at high concurrency, where one process's
            event loop limits the rate (see `judgelab.judges.workers`).
        connect_timeout_s: Longest wait for a TCP connection (default 10 s), apart from
            `timeout_s`: a connection attempt the server silently drops (a full listen
            backlog) is retried after this, not after the whole `timeout_s`.
        max_retry_after_s: The longest server-asked wait (`Retry-After`) honoured per retry;
            a longer one is cut to this (default 60 s).
        deadline_s: Stop requesting after this many seconds of the request phase (None: no
            deadline); what is left is counted as failed, and the next run requests it.
        max_response_bytes: Largest answer accepted (default 2 MB); a larger one is counted
            as failed and never cached.
        client: HTTP client: "aiohttp" (default) or "openai" (the official SDK); both send
            the same requests, so the cache and the judge id do not depend on it. ("streams",
            a hand-written HTTP/1.1 client, was removed in issue 32: it is refused, naming
            these two.)
        price_in, price_out: USD per 1M prompt / completion tokens (None: cost unknown).
        options: Offline baseline params (e.g. `threshold`).
        id: Judge id override (default: model + template + a hash of the params).
        name: Where the spec came from (the YAML stem); informational.
    """

    endpoint: str
    model: str
    template: str | None = None
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int = 1024
    seed: int | None = None
    n: int = 1
    orders: tuple[int, ...] = (0, 1)
    conditions: tuple[str, ...] | None = None
    concurrency: int = 8
    workers: int = 1
    timeout_s: float = 120.0
    connect_timeout_s: float = 10.0
    max_retries: int = 6
    backoff_s: float = 1.0
    max_retry_after_s: float = 60.0
    deadline_s: float | None = None
    max_response_bytes: int = 2_000_000  # issue 19 item 8: not in the judge id or cache key
    client: str = "aiohttp"
    price_in: float | None = None
    price_out: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    name: str | None = None

    @property
    def is_offline(self) -> bool:
        """Return True for an offline baseline."""
        return self.endpoint == "offline"

    @functools.cached_property  # the spec is frozen: computed once
    def endpoint_id(self) -> str:
        """Return the base URL without credentials or query (part of every cache key)."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"

    def sampling(self) -> dict[str, Any]:
        """Return the sampling params that go into every request (None values left out)."""
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.seed is not None:
            out["seed"] = self.seed
        return out

    @functools.cached_property
    def judge_id(self) -> str:
        """Return the judge id: `id:`, else derived from model, template and params.

        The derived id reads `<model>__<template>`, with `__<key>=<value>` for each sampling
        parameter (and `n`) that differs from its default and `__<host[:port]>` when the
        endpoint is not the default one: what makes two judges different, in words. `model`
        is its last path component (`meta-llama/Llama-3.1-8B` -> `Llama-3.1-8B`). An id that
        is not a safe name (`core.names.safe_name`) is refused: set `id:` in the spec.
        """
        if self.id:
            return self.id
        if self.is_offline:
            opts = _short_hash(self.options) if self.options else ""
            return _slug(f"offline-{self.model}" + (f"-{opts}" if opts else ""))
        parts = [self.model.rstrip("/").rsplit("/", 1)[-1], str(self.template)]
        defaults = {"temperature": 0.0, "max_tokens": 1024, "n": 1}
        params = {**self.sampling(), "n": self.n}
        parts += [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                  for k, v in params.items() if defaults.get(k) != v]  # fmt: skip
        default = urlsplit(DEFAULT_BASE_URL)
        here = urlsplit(self.base_url)
        if (here.hostname, here.port) != (default.hostname, default.port):
            parts.append(f"{here.hostname}" + (f":{here.port}" if here.port else ""))
        where = f"judge spec {self.name!r}: no `id:` (set one), so model + template make it"
        return safe_name("judge", "__".join(parts), where=where)

    @property
    def prompt_id(self) -> str:
        """Return what the `prompt` column holds: the template id, or `offline:<name>`."""
        return f"offline:{self.model}" if self.is_offline else str(self.template)

    def api_key(self) -> str:
        """Return the key from the environment (a placeholder when no key is needed).

        Raises:
            JudgeSpecError: `api_key_env` is set but the variable is empty or missing, or
                its value holds whitespace or control characters (e.g. a carriage return
                from a CRLF `.env` file); the message names the variable, never the key.
        """
        if self.api_key_env is None:
            return "EMPTY"
        value = os.environ.get(self.api_key_env)
        if not value:
            raise JudgeSpecError(
                f"environment variable {self.api_key_env} is not set; export it with the key "
                "for this endpoint (keys are never read from spec files)",
                source=self.name,
                key="api_key_env",
            )
        problem = clients.malformed_key(value)
        if problem:
            raise JudgeSpecError(
                f"environment variable {self.api_key_env} holds a malformed key: {problem}. "
                "Export the key alone (no quotes, spaces or line ending)",
                source=self.name,
                key="api_key_env",
            )
        return value


def _slug(text: str) -> str:
    """Return `text` made file-name safe.

    >>> _slug("meta-llama/Llama-3.1-8B__cjb.workflow")
    'meta-llama-Llama-3.1-8B__cjb.workflow'
    """
    return re.sub(r"[^A-Za-z0-9._=-]+", "-", text).strip("-")


def _short_hash(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _find_secrets(obj: Any, path: str = "") -> str | None:
    """Return the dotted path of the first literal secret in `obj`, or None."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            sub = f"{path}.{k}" if path else str(k)
            if str(k) not in _SAFE_SECRET_NAMES and _SECRET_KEY_RE.search(str(k)) and v:
                return sub
            found = _find_secrets(v, sub)
            if found:
                return found
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            found = _find_secrets(v, f"{path}[{i}]")
            if found:
                return found
    elif isinstance(obj, str):
        if secrets.find(obj):  # issue 19 item 16: the one shared detector
            return path or "<value>"
    return None


def _fail(problem: str, source: str | None, key: str | None = None) -> JudgeSpecError:
    return JudgeSpecError(problem, source=source, key=key)


def _number(data: dict[str, Any], key: str, source: str | None, *, kind: type) -> Any:
    value = data[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(f"expected a number, got {value!r}", source, key)
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise _fail(f"expected an integer, got {value!r}", source, key)
        return int(value)
    if not math.isfinite(float(value)):
        raise _fail(f"expected a finite number, got {value!r}", source, key)
    return float(value)


_CHECKS: dict[str, tuple[str, Any]] = {
    # key: (kind, predicate description + check)
    "temperature": ("float", (lambda v: 0.0 <= v <= 2.0, "between 0 and 2")),
    "top_p": ("float", (lambda v: 0.0 < v <= 1.0, "in (0, 1]")),
    "max_tokens": ("int", (lambda v: v > 0, "a positive integer")),
    "seed": ("int", (lambda v: True, "an integer")),
    "n": ("int", (lambda v: v >= 1, "at least 1")),
    "concurrency": ("int", (lambda v: v >= 1, "at least 1")),
    "workers": ("int", (lambda v: 1 <= v <= 256, "between 1 and 256")),
    "timeout_s": ("float", (lambda v: v > 0, "positive")),
    "connect_timeout_s": ("float", (lambda v: v > 0, "positive")),
    "max_retries": ("int", (lambda v: v >= 0, "0 or more")),
    "backoff_s": ("float", (lambda v: v >= 0, "0 or more")),
    "max_retry_after_s": ("float", (lambda v: v >= 0, "0 or more")),
    "deadline_s": ("float", (lambda v: v > 0, "positive (seconds), or null for none")),
    "max_response_bytes": ("int", (lambda v: v >= 1024, "at least 1024 (bytes)")),
    "price_in": ("float", (lambda v: v >= 0, "0 or more (USD per 1M tokens)")),
    "price_out": ("float", (lambda v: v >= 0, "0 or more (USD per 1M tokens)")),
}


def _choice(out: dict[str, Any], key: str, options: tuple[str, ...], source: str | None) -> None:
    """Raise `JudgeSpecError` naming `key` when `out[key]` is not one of `options`."""
    try:
        check_choice(key, out[key], options)
    except ChoiceError as exc:
        raise _fail(str(exc), source, key) from None


def _check_keys(data: Any, source: str | None) -> None:
    """Reject a non-mapping, a literal secret, an unknown key, or a missing required key."""
    if not isinstance(data, dict):
        raise _fail(f"expected a mapping of keys, got {type(data).__name__}", source)
    leaked = _find_secrets(data)
    if leaked:
        raise _fail(
            "looks like a literal API key; never put keys in spec files. Put the key in an "
            "environment variable and name it with `api_key_env: OPENAI_API_KEY` (or similar)",
            source,
            leaked,
        )
    known = {f.name for f in fields(JudgeSpec)}
    for key in data:
        if key not in known:
            raise _fail(f"unknown key; expected one of {sorted(known - {'name'})}", source, key)
    for key in ("endpoint", "model"):
        if key not in data or data[key] in (None, ""):
            raise _fail("missing (required)", source, key)


def _check_values(out: dict[str, Any], source: str | None) -> None:
    """Check (and convert in place) the endpoint, strings, numbers, key env, client, URL."""
    _choice(out, "endpoint", ENDPOINTS, source)
    for key in ("model", "template", "base_url", "id"):
        if out.get(key) is not None and not isinstance(out[key], str):
            raise _fail(f"expected a string, got {out[key]!r}", source, key)
    for key, (kind, (ok, desc)) in _CHECKS.items():
        if key in out:
            out[key] = _number(out, key, source, kind=int if kind == "int" else float)
            if out[key] is not None and not ok(out[key]):
                raise _fail(f"{out[key]!r} must be {desc}", source, key)
            if out[key] is None and key not in (
                "top_p",
                "seed",
                "price_in",
                "price_out",
                "deadline_s",
            ):
                raise _fail("must not be null", source, key)
    env = out.get("api_key_env", "OPENAI_API_KEY")
    if env is not None and (not isinstance(env, str) or not _ENV_RE.match(env)):
        raise _fail(
            f"{env!r} is not an environment variable name (e.g. OPENAI_API_KEY); it must "
            "name the variable that holds the key, not the key itself",
            source,
            "api_key_env",
        )
    if out.get("client") == "streams":  # issue 32 item 3
        raise _fail(
            "client 'streams' was removed (a hand-written HTTP/1.1 client that read bytes a "
            "server sent past Content-Length as the next request's answer); use 'aiohttp' "
            "(the default: leave `client` out) or 'openai' (the official SDK). For more "
            "requests per second against a local server, raise `workers`",
            source,
            "client",
        )
    if "client" in out:
        _choice(out, "client", CLIENTS, source)
    if "base_url" in out and not re.match(r"^https?://", out["base_url"]):
        raise _fail(f"{out['base_url']!r} is not an http(s) URL", source, "base_url")


def _normalise_lists(out: dict[str, Any], source: str | None) -> None:
    """Turn `orders`, `conditions` and `options` into their canonical forms, in place."""
    if "orders" in out:
        orders = out["orders"]
        if orders == "both":
            orders = [0, 1]
        if isinstance(orders, int) and not isinstance(orders, bool):
            orders = [orders]
        if (
            not isinstance(orders, list | tuple)
            or not orders
            or any(o not in (0, 1) or isinstance(o, bool) for o in orders)
        ):
            raise _fail(f"{out['orders']!r} must be 'both', 0, 1 or [0, 1]", source, "orders")
        out["orders"] = tuple(sorted(set(orders)))
    if "conditions" in out and out["conditions"] is not None:
        conds = out["conditions"]
        if isinstance(conds, str):
            conds = [conds]
        if not isinstance(conds, list | tuple) or not all(isinstance(c, str) for c in conds):
            raise _fail(f"{conds!r} must be a list of strings", source, "conditions")
        out["conditions"] = tuple(conds)
    if "options" in out:
        if out["options"] is None:
            out["options"] = {}
        if not isinstance(out["options"], dict):
            raise _fail(f"expected a mapping, got {out['options']!r}", source, "options")
    if out.get("id") is not None:
        try:  # the one validator of names (core.names): refused, never rewritten
            safe_name("judge id", out["id"])
        except UnsafeNameError as exc:
            raise _fail(str(exc), source, "id") from None


def _check_judge(out: dict[str, Any], source: str | None) -> None:
    """Check the offline baseline and its options, or the remote judge's template."""
    if out["endpoint"] == "offline":
        if out["model"] not in BASELINES:
            raise _fail(
                f"unknown offline baseline {out['model']!r}; known: {sorted(BASELINES)}",
                source,
                "model",
            )
        try:
            BASELINES[out["model"]].check_options(out.get("options", {}))
        except ValueError as exc:
            raise _fail(str(exc), source, "options") from None
        if out.get("template") is not None:
            raise _fail("offline baselines take no template", source, "template")
        return
    if not out.get("template"):
        raise _fail(
            f"missing (required for remote judges); known: {templates.names()}",
            source,
            "template",
        )
    if out["template"] not in templates.REGISTRY:
        raise _fail(
            f"unknown template {out['template']!r} (`judgelab judge --list-templates` "
            f"describes them); known: {templates.names()}",
            source,
            "template",
        )
    if out.get("options"):
        raise _fail("options are for offline baselines only", source, "options")


def from_dict(data: dict[str, Any], *, source: str | None = None) -> JudgeSpec:
    """Validate a judge spec given as a mapping and return it.

    Raises:
        JudgeSpecError: unknown key, bad value, a literal key, or an unknown template or
            offline baseline; the message names `source` and the key.
    """
    _check_keys(data, source)
    out = dict(data)
    _check_values(out, source)
    _normalise_lists(out, source)
    _check_judge(out, source)
    out.setdefault("name", Path(source).stem if source else None)
    return JudgeSpec(**out)


def load(path: str | os.PathLike[str]) -> JudgeSpec:
    """Read and validate a judge spec YAML file.

    Raises:
        JudgeSpecError: the file is missing, not YAML, or not a valid spec (names the file).
    """
    p = Path(path)
    if not p.exists():
        raise JudgeSpecError("no such file", source=str(p))
    try:
        data = yamlsafe.load(tables.read_utf8(p), source=str(p))
    except yamlsafe.YamlError as exc:
        raise JudgeSpecError(exc.problem, source=f"{p}, line {exc.line}") from None
    except tables.NotUTF8 as exc:
        raise JudgeSpecError(exc.problem, source=f"{p}, line {exc.line}") from None
    except yaml.YAMLError as exc:
        raise JudgeSpecError(f"not valid YAML ({exc})", source=str(p)) from None
    if data is None:
        raise JudgeSpecError("empty file", source=str(p))
    return from_dict(data, source=str(p))


def resolve(name_or_path: str) -> JudgeSpec:
    """Load a spec from a YAML path, or by name from `params/judges/<name>.yaml`."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return load(p)
    candidate = paths.params() / "judges" / f"{name_or_path}.yaml"
    if candidate.exists():
        return load(candidate)
    known = sorted(x.stem for x in (paths.params() / "judges").glob("*.yaml"))
    raise JudgeSpecError(
        f"no judge spec named {name_or_path!r}: not a file and not in {candidate.parent} "
        f"(known: {known})"
    )
