"""What every HTTP chat client shares: status → error, server waits, URLs, proxies, TLS.

`judgelab.judges.clients` (aiohttp, the openai SDK) and `judgelab.judges.streams` (the lean
HTTP/1.1 client) map answers to the same errors through these functions.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import os
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from judgelab.core import secrets
from judgelab.errors import FatalError, RequestError, RetryableError


def retry_after(headers: Any) -> float | None:
    """Return the wait a server asks for (`retry-after-ms` or `Retry-After`), in seconds.

    >>> retry_after({"retry-after": "2"}), retry_after({"retry-after-ms": "150"})
    (2.0, 0.15)
    """
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        with contextlib.suppress(ValueError):
            return max(0.0, float(ms) / 1000)
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    with contextlib.suppress(TypeError, ValueError):
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return None


def malformed_key(key: str) -> str | None:
    """Return why an API key cannot be sent in a header, or None when it can (never the key).

    >>> malformed_key("sk-abc"), malformed_key(" sk-abc")
    (None, "its first character is a whitespace character (' ')")
    """
    if key.endswith(("\r", "\r\n")):  # a CRLF .env line
        return "it ends with a carriage return (\\r), as keys read from a CRLF .env file do"
    for i, ch in enumerate(key):
        if ch.isspace() or not ch.isprintable() or ord(ch) > 126:
            kind = "a whitespace" if ch.isspace() else "a control or non-ASCII"
            last = i == len(key) - 1
            where = f"character {i + 1}"
            where = "first character" if i == 0 else ("last character" if last else where)
            shown = f" ({ch!r})" if ch.isspace() or not ch.isprintable() else ""
            return f"its {where} is {kind} character{shown}"
    return None


def error_message(body: bytes | str, secret: str | None = None) -> str:
    """Return the message of an error body (`{"error": {"message": ...}}`), else its start.

    The message is scrubbed of `secret` and of anything shaped like a credential *before*
    it is clipped to 500 characters, so a clipped message never keeps part of a key.

    >>> error_message(b'{"error": {"message": "bad model"}}')
    'bad model'
    >>> error_message(b'{"error": "key hf_abcdefghijklmnopqrstuv rejected"}')
    'key *** rejected'
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    message = None
    with contextlib.suppress(ValueError, RecursionError):
        data = json.loads(text)
        err = data.get("error") if isinstance(data, dict) else None
        if isinstance(err, dict) and err.get("message"):
            message = str(err["message"])
        elif isinstance(err, str):
            message = err
    if message is None:
        message = text.strip()
    known = (secret,) if secret and secret != "EMPTY" else ()
    return secrets.scrub(message, known)[:500] or "(empty body)"


def raise_for_status(
    status: int, body: bytes | str, headers: Any, secret: str | None = None
) -> None:
    """Raise the runner's error for a non-2xx HTTP status; return for a 2xx one.

    `secret` (the key in use) is scrubbed from the message with every credential shape.
    """
    if 200 <= status < 300:
        return
    msg = f"HTTP {status}: {error_message(body, secret)}"
    if status in (401, 403):
        kind = "AuthenticationError" if status == 401 else "PermissionDeniedError"
        raise FatalError(f"{kind}: {msg}")
    if status in (408, 409, 429) or status >= 500:
        raise RetryableError(str(status), msg, retry_after(headers))
    raise RequestError(msg)


def completions_url(base_url: str) -> str:
    """Return `<base_url>/chat/completions`, keeping a query string of the base URL.

    >>> completions_url("http://127.0.0.1:8000/v1/?api-version=1")
    'http://127.0.0.1:8000/v1/chat/completions?api-version=1'
    """
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + "/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def env_proxy(url: str) -> str | None:
    """Return the proxy the environment (HTTP(S)_PROXY, NO_PROXY) names for `url`, or None.

    Looked up once per run: aiohttp's own `trust_env` repeats the lookup (and a .netrc read)
    in a worker thread for every request.
    """
    import urllib.request

    parts = urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme) or None


def ssl_context() -> Any:
    """Return the TLS context for https endpoints: `SSL_CERT_FILE`, else certifi's CA bundle.

    The same trust store the openai SDK (httpx) uses, so an endpoint that works with the SDK
    works here too, also on Pythons without system certificates.
    """
    import ssl

    cafile = os.environ.get("SSL_CERT_FILE")
    if not cafile:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:  # pragma: no cover - certifi comes with httpx/openai
            cafile = None
    return ssl.create_default_context(cafile=cafile)


def too_large(what: str, limit: int) -> RequestError:
    """Return the error of an answer over `max_response_bytes` (it is never cached)."""
    return RequestError(
        f"response too large: {what}, over max_response_bytes={limit} (not cached; raise "
        "max_response_bytes in the spec to accept such answers)"
    )


def connect_timeout(limit: float | None) -> RetryableError:
    """Return the retryable error of a TCP connection not made within `limit` seconds."""
    return RetryableError("connect_timeout", f"no connection within {limit:g} s")


__all__ = [
    "connect_timeout",
    "completions_url",
    "env_proxy",
    "error_message",
    "malformed_key",
    "raise_for_status",
    "retry_after",
    "ssl_context",
    "too_large",
]
