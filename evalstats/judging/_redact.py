"""Scrubbing secrets out of every text the judging code keeps (journal, errors, logs).

How it works: docs/judging.md, "Secrets".
"""

from __future__ import annotations

import base64
import functools
import os
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, unquote, urlsplit

REDACTED = "[redacted]"
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
# Shorter values (a dummy key such as "ollama", an api-version) would match ordinary words.
_MIN_SECRET = 16
_SLICE = 12
# A masked echo: some characters, three or more asterisks, some characters.
_MASKED = re.compile(r"[A-Za-z0-9_\-.]*\*{3,}[A-Za-z0-9_\-.]*")


def _b64(text: str) -> list[str]:
    raw = text.encode("utf-8")
    forms = {base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()}
    # Also without padding: a prefix of the encoded form is what a log cut shows.
    return sorted(forms | {f.rstrip("=") for f in forms})


def url_credentials(url: str) -> list[str]:
    """``user:password``, the password, the user name and the query values of a URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    userinfo = parts.netloc.rsplit("@", 1)[0] if "@" in parts.netloc else ""
    out = [v for s in (userinfo, *userinfo.partition(":")[::2]) for v in (s, unquote(s))]
    for _, value in parse_qsl(parts.query):  # ?api-key=SECRET, echoed in a 404 body
        out.extend([value, quote(value, safe="")])
    return [s for s in out if s]


def configured_secrets() -> list[str]:
    """The API keys and base-URL credentials currently in the environment."""
    out = [os.environ.get(name, "") for name in KEY_ENV.values()]
    for name in BASE_URL_ENV.values():
        out.extend(url_credentials(os.environ.get(name, "")))
    return [s for s in out if s]


@functools.lru_cache(maxsize=32)
def _compiled(secrets: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
    literal: set[str] = set()
    keys = [s for s in secrets if len(s) >= _MIN_SECRET]
    for s in keys:
        literal.add(s)
        literal.update(b for b in _b64(s) if len(b) >= _MIN_SECRET)
        # user:password is sent as base64 of the pair; a bare password also as ":password".
        literal.update(b for b in _b64(":" + s) if len(b) >= _MIN_SECRET)
        if len(s) >= 2 * _SLICE:
            literal.update(s[i : i + _SLICE] for i in range(len(s) - _SLICE + 1))
    if not literal:
        return None, tuple(keys)
    alternatives = "|".join(re.escape(s) for s in sorted(literal, key=len, reverse=True))
    return re.compile(alternatives), tuple(keys)


def _masked_echo(match: re.Match[str], keys: tuple[str, ...]) -> str:
    token = match.group(0)
    head, tail = token.split("*", 1)[0], token.rsplit("*", 1)[1]
    ends = [
        (len(head) >= 3 and k.startswith(head)) or (len(tail) >= 3 and k.endswith(tail))
        for k in keys
    ]
    return REDACTED if any(ends) else token


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret replaced by ``[redacted]``.

    Parameters
    ----------
    text : str
        Any text about to be kept.
    secrets : iterable of str, optional
        The values to remove (default: :func:`configured_secrets`).

    Returns
    -------
    str

    Examples
    --------
    >>> key = "abc123-not-an-sk-key-XYZ789"
    >>> redact(f"Incorrect key {key}; you sent abc1****Z789", [key])
    'Incorrect key [redacted]; you sent [redacted]'
    >>> import base64
    >>> redact("Basic " + base64.b64encode(b"alice:s3cret-pw-42").decode(), ["alice:s3cret-pw-42"])
    'Basic [redacted]'
    >>> redact("nothing secret here ** bold ***", ["abc123-not-an-sk-key-XYZ789"])
    'nothing secret here ** bold ***'
    >>> redact("served by ollama", ["ollama"])  # too short to be told from a word
    'served by ollama'
    """
    if not text:
        return text
    values = tuple(sorted(set(configured_secrets() if secrets is None else secrets)))
    pattern, keys = _compiled(values)
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    if keys and "***" in text:
        text = _MASKED.sub(lambda m: _masked_echo(m, keys), text)
    return text
