"""One secret detector for params, judge specs and error messages: find and scrub.

A credential never belongs in a params file, a judge spec or a printed message. The shapes
known here are provider keys (`sk-…`, `hf_…`, `gsk_…`, `xai-…`, `tgp_…`, `pplx-…`, `AIza…`),
`Bearer …` tokens, credentials in a URL (`https://user:pass@host`) and credentials in a query
string (`?access_token=…`, `auth=`, `sig=`, `key=`, `token=`, and the Azure Functions and API
Management shapes `code=`, `subscription-key=`, `x-api-key=`, …). `find` names the first shape
found (never the secret itself); `scrub` replaces every one with `***`, and `scrub_clip`
scrubs *before* clipping, so a clipped message can never keep part of a key.

>>> find("base_url: https://api.example.com/v1?key=abc123")
'credential in a query string'
>>> scrub("HTTP 401: bad key hf_abcdefghijklmnopqrstuvwx for https://u:p4ss@host/x?sig=zz&a=1")
'HTTP 401: bad key *** for https://***@host/x?sig=***&a=1'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from judgelab.errors import clip

MASK = "***"
_QUERY_NAMES = (
    "access_token|refresh_token|id_token|api_key|apikey|api-key|auth|authorization|sig|"
    "signature|key|token|secret|password|passwd|client_secret|x-amz-signature|x-goog-signature|"
    # Azure Functions (`code=`, `x-functions-key=`) and API Management / gateway keys
    "code|subscription-key|subscription_key|ocp-apim-subscription-key|x-api-key|x-functions-key"
)

# (name, pattern, group to mask: 0 = the whole match)
SHAPES: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("an OpenAI-style key (sk-…)", re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), 0),
    ("a Hugging Face token (hf_…)", re.compile(r"\bhf_[A-Za-z0-9]{16,}"), 0),
    ("a provider key", re.compile(r"\b(?:gsk|xai|tgp|pplx)[_\-][A-Za-z0-9_\-]{16,}"), 0),
    ("a Google API key (AIza…)", re.compile(r"\bAIza[0-9A-Za-z_\-]{16,}"), 0),
    ("a Bearer token", re.compile(r"\bBearer\s+([^\s\"'<>,;]{8,})", re.IGNORECASE), 1),
    (
        "credentials in a URL",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://([^\s/?#@:\"']*:[^\s/?#@\"']*)@"),
        1,
    ),
    (
        "credential in a query string",
        re.compile(rf"[?&;](?:{_QUERY_NAMES})=([^&#\s\"'<>]+)", re.IGNORECASE),
        1,
    ),
)
_ENV_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)


def env_secrets(environ: dict[str, str] | None = None) -> set[str]:
    """Return the values (8+ characters) of environment variables named like a credential."""
    env = os.environ if environ is None else environ
    return {v for k, v in env.items() if v and len(v) >= 8 and _ENV_SECRET_NAME.search(k)}


def find(text: str, known: Iterable[str] = ()) -> str | None:
    """Return what kind of secret `text` holds (e.g. 'a Bearer token'), or None.

    `known` are literal secrets (a key from the environment) to look for as well.
    """
    for name, pattern, _ in SHAPES:
        if pattern.search(text):
            return name
    if any(s and s in text for s in known):
        return "the value of a credential environment variable"
    return None


def scrub(text: str, known: Iterable[str] = ()) -> str:
    """Return `text` with every known secret and every secret-shaped value replaced by ***."""
    for secret in sorted((s for s in known if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, MASK)
    for _, pattern, group in SHAPES:
        if group == 0:
            text = pattern.sub(MASK, text)
        else:
            text = pattern.sub(lambda m, g=group: _mask_group(m, g), text)
    return text


def _mask_group(match: re.Match[str], group: int) -> str:
    start, end = match.span(group)
    whole = match.group(0)
    offset = match.start(0)
    return whole[: start - offset] + MASK + whole[end - offset :]


def scrub_clip(text: str, limit: int, known: Iterable[str] = ()) -> str:
    """Scrub `text`, then clip it to `limit` characters (never the other way round)."""
    return clip(scrub(text, known), limit)
