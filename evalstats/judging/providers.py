"""Judge providers: ``anthropic:MODEL`` (Messages API) and ``openai:MODEL`` (Chat Completions).

Clients are the official async SDK clients; keys and base URLs come from the standard
environment variables, never from arguments, so that a key cannot end up in a notebook, a
journal line or a call key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anthropic
import openai

from evalstats.errors import EvalstatsError

__all__ = [
    "API_ERRORS",
    "CallResult",
    "JudgeAuthError",
    "JudgeSpec",
    "MissingKeyError",
    "PROVIDERS",
    "parse_judge",
]

PROVIDERS = ("anthropic", "openai")
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}

# Every failure the SDKs raise for a call (HTTP status, connection, timeout, bad body).
API_ERRORS: tuple[type[BaseException], ...] = (anthropic.APIError, openai.APIError)


class MissingKeyError(EvalstatsError):
    """A judge's API key is not set in the environment."""


class JudgeAuthError(EvalstatsError):
    """A provider refused the key (401/403); the run stopped starting calls."""


@dataclass(frozen=True)
class JudgeSpec:
    """A judge as the user names it: ``provider:model``.

    Examples
    --------
    >>> parse_judge("openai:llama3:8b")
    JudgeSpec(provider='openai', model='llama3:8b')
    >>> parse_judge("anthropic:claude-sonnet-4-20250514").name
    'anthropic:claude-sonnet-4-20250514'
    """

    provider: str
    model: str

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def __str__(self) -> str:
        return self.name


def parse_judge(text: str | JudgeSpec) -> JudgeSpec:
    """Read ``"provider:model"`` (the model may itself contain colons)."""
    if isinstance(text, JudgeSpec):
        return text
    if not isinstance(text, str) or ":" not in text:
        raise ValueError(
            f"judge must be 'provider:model' with provider in {PROVIDERS}, got {text!r}"
        )
    provider, model = text.split(":", 1)
    provider = provider.strip().lower()
    if provider not in PROVIDERS or not model.strip():
        raise ValueError(
            f"judge must be 'provider:model' with provider in {PROVIDERS}, got {text!r}"
        )
    return JudgeSpec(provider, model.strip())


def require_keys(judges: Iterable[JudgeSpec]) -> None:
    """Fail before any work if a judge's key is missing (names the variable, not a value)."""
    missing = sorted(
        {KEY_ENV[j.provider] for j in judges if not os.environ.get(KEY_ENV[j.provider])}
    )
    if missing:
        raise MissingKeyError(
            f"set {' and '.join(missing)} in the environment before judging "
            "(nothing was sent; use --dry-run to estimate without a key)"
        )


def secrets() -> list[str]:
    """The key values currently in the environment (to scrub from any text we keep)."""
    return [os.environ[v] for v in KEY_ENV.values() if os.environ.get(v)]


# Key-shaped tokens a server may echo back ("Incorrect API key provided: sk-ab***yz").
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-*.]{4,}|[A-Za-z0-9_\-]{8,}\*{3,}[A-Za-z0-9_\-]*)")


def scrub(text: str, keys: Iterable[str] | None = None) -> str:
    """Remove every API key (and key-shaped token) from ``text``."""
    for key in sorted(keys if keys is not None else secrets(), key=len, reverse=True):
        if key:
            text = text.replace(key, "[redacted]")
            # Servers echo partial keys; any 12+ character slice of ours goes too.
            if len(key) >= 24:
                text = re.sub(
                    "|".join(re.escape(key[i : i + 12]) for i in range(0, len(key) - 11, 4)),
                    "[redacted]",
                    text,
                )
    return _KEYLIKE.sub("[redacted]", text)


def describe_error(exc: BaseException) -> str:
    """``"ClassName: message"``, key-free and short enough for a journal line."""
    message = scrub(f"{type(exc).__name__}: {exc}")
    return message if len(message) <= 500 else message[:497] + "..."


def make_client(
    provider: str,
    *,
    max_retries: int,
    timeout: float,
    options: Mapping[str, Any] | None = None,
) -> anthropic.AsyncAnthropic | openai.AsyncOpenAI:
    """An async SDK client configured from the environment."""
    opts = dict(options or {})
    if {"api_key", "auth_token"} & opts.keys():
        raise ValueError("API keys come from the environment only, not from client options")
    opts.setdefault("max_retries", max_retries)
    opts.setdefault("timeout", timeout)
    base_url = os.environ.get(BASE_URL_ENV[provider]) or None
    if provider == "anthropic":
        return anthropic.AsyncAnthropic(
            api_key=os.environ[KEY_ENV[provider]], base_url=base_url, **opts
        )
    return openai.AsyncOpenAI(api_key=os.environ[KEY_ENV[provider]], base_url=base_url, **opts)


def request_params(
    judge: JudgeSpec,
    messages: list[dict[str, str]],
    *,
    temperature: float | None,
    max_tokens: int,
) -> dict[str, Any]:
    """The request body of one judge call, the same for a direct and a batched call."""
    if judge.provider == "anthropic":
        system = "".join(m["content"] for m in messages if m["role"] == "system")
        params: dict[str, Any] = {
            "model": judge.model,
            "max_tokens": max_tokens,
            "system": system,
            "messages": [m for m in messages if m["role"] != "system"],
        }
    else:
        # max_completion_tokens: OpenAI's current name; reasoning models reject max_tokens.
        params = {
            "model": judge.model,
            "messages": list(messages),
            "max_completion_tokens": max_tokens,
        }
    # None means "the provider's default": newer Anthropic models reject any temperature.
    if temperature is not None:
        params["temperature"] = temperature
    return params


@dataclass(frozen=True)
class CallResult:
    """What a successful call returns, as stored in the judgment line."""

    raw: str
    model_id: str | None
    request_id: str | None
    input_tokens: int | None
    output_tokens: int | None


def anthropic_result(message: Any, request_id: str | None) -> CallResult:
    text = "".join(getattr(block, "text", "") or "" for block in message.content)
    usage = message.usage
    return CallResult(text, message.model, request_id, usage.input_tokens, usage.output_tokens)


def openai_result(completion: Any, request_id: str | None) -> CallResult:
    choice = completion.choices[0] if completion.choices else None
    text = (choice.message.content or "") if choice is not None else ""
    usage = completion.usage
    return CallResult(
        text,
        completion.model,
        request_id,
        usage.prompt_tokens if usage else None,
        usage.completion_tokens if usage else None,
    )


async def call(client: Any, judge: JudgeSpec, params: Mapping[str, Any]) -> CallResult:
    """One judge call through the SDK (its retries included)."""
    kwargs = dict(params)
    if judge.provider == "anthropic":
        # The anthropic SDK no longer has a temperature argument; older models accept it.
        temperature = kwargs.pop("temperature", None)
        if temperature is not None:
            kwargs["extra_body"] = {"temperature": temperature}
        message = await client.messages.create(**kwargs)
        return anthropic_result(message, getattr(message, "_request_id", None))
    completion = await client.chat.completions.create(**kwargs)
    return openai_result(completion, getattr(completion, "_request_id", None))
