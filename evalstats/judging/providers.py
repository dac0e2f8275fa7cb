"""Judge providers: ``anthropic:MODEL`` (Messages API) and ``openai:MODEL`` (Chat Completions).

How it works: docs/judging.md, "Providers".
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import httpx2

from evalstats.errors import EvalstatsError

from ._ratelimit import capped_wait, retry_after
from ._redact import BASE_URL_ENV, KEY_ENV, redact

PROVIDERS = ("anthropic", "openai")
# A judge answer within max_tokens is a few KB; a body past this is kept cut, not parsed.
MAX_BODY_BYTES = 1_000_000
# An error body is a short JSON message; past this it is only memory a hostile server spends.
MAX_ERROR_BODY_BYTES = 65_536
# What an HTTP error left after the SDK's retries means (else "failed": retried on a rerun).
_STATUS_KINDS = {401: "auth", 403: "auth", 429: "rate_limited"}
_STATUS_KINDS |= dict.fromkeys((400, 404, 413, 422), "failed_permanent")


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
    provider, _, model = text.partition(":") if isinstance(text, str) else ("", "", "")
    provider = provider.strip().lower()
    if provider not in PROVIDERS or not model.strip():
        raise ValueError(
            f"judge must be 'provider:model' with provider in {PROVIDERS}, got {text!r}"
        )
    return JudgeSpec(provider, model.strip())


def require_keys(judges: Iterable[JudgeSpec]) -> None:
    """Fail before any work if a judge's key is missing or its base URL unusable."""
    providers = sorted({j.provider for j in judges})
    missing = [KEY_ENV[p] for p in providers if not os.environ.get(KEY_ENV[p])]
    if missing:
        raise MissingKeyError(
            f"set {' and '.join(missing)} in the environment before judging "
            "(nothing was sent; use --dry-run to estimate without a key)"
        )
    for name in (BASE_URL_ENV[p] for p in providers if os.environ.get(BASE_URL_ENV[p])):
        try:
            parts = urlsplit(os.environ[name])
            parts.port  # noqa: B018 -- raises ValueError for a port out of range
            problem = None
            if parts.scheme not in ("http", "https") or not parts.hostname:
                problem = "it must be http(s)://HOST[:PORT][/PATH]"
        except ValueError as exc:
            problem = str(exc)
        if problem:
            msg = f"{name} is not a usable URL: {redact(problem)} (nothing was sent)"
            raise MissingKeyError(msg)


def describe_error(exc: BaseException) -> str:
    """``"ClassName: message"``, key-free and short enough for a journal line."""
    message = redact(f"{type(exc).__name__}: {exc}")
    return message if len(message) <= 500 else message[:497] + "..."


@dataclass
class Client:
    """An SDK client and whether it validates bodies against the SDK's schema."""

    sdk: Any
    strict: bool


def make_client(
    provider: str,
    *,
    max_retries: int,
    timeout: float,
    options: Mapping[str, Any] | None = None,
    on_response: Callable[[int, Mapping[str, str]], None] | None = None,
) -> Client:
    """An async SDK client configured from the environment."""
    opts = dict(options or {})
    if {"api_key", "auth_token"} & opts.keys():
        raise ValueError("API keys come from the environment only, not from client options")
    opts.setdefault("max_retries", max_retries)
    opts.setdefault("timeout", timeout)
    strict = bool(opts.get("_strict_response_validation", False))
    base_url = os.environ.get(BASE_URL_ENV[provider]) or None
    if provider == "anthropic":
        import anthropic as sdk
    else:
        import openai as sdk  # type: ignore[no-redef]
    if "http_client" not in opts:
        hooks: dict[str, list[Any]] = {}
        if on_response is not None:

            async def hook(response: Any) -> None:
                on_response(response.status_code, response.headers)

            hooks["response"] = [hook]
        # Under the SDK's retries: each attempt bounded in time, error body and wait hint.
        inner = httpx2.AsyncHTTPTransport(limits=sdk.DEFAULT_CONNECTION_LIMITS)
        opts["http_client"] = sdk.DefaultAsyncHttpxClient(
            transport=BoundedTransport(inner, timeout=timeout), event_hooks=hooks
        )
    cls = sdk.AsyncAnthropic if provider == "anthropic" else sdk.AsyncOpenAI
    return Client(cls(api_key=os.environ[KEY_ENV[provider]], base_url=base_url, **opts), strict)


def request_params(
    judge: JudgeSpec, messages: list[dict[str, str]], *, temperature: float | None, max_tokens: int
) -> dict[str, Any]:
    """The request body of one judge call, the same for a direct and a batched call."""
    if judge.provider == "anthropic":
        system = "".join(m["content"] for m in messages if m["role"] == "system")
        params: dict[str, Any] = {"model": judge.model, "max_tokens": max_tokens}
        params |= {"system": system, "messages": [m for m in messages if m["role"] != "system"]}
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


@dataclass(frozen=True)
class Outcome:
    """How one call ended (``kind``; see docs/judging.md, "Running judges")."""

    kind: str
    result: CallResult | None = None
    error: str | None = None
    raw: str | None = None
    answered: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Attempts that ended unanswered after they were sent (each may have been billed).
    maybe_billed: int = 0


#: The current call's count of such attempts (the transport adds to it; call() reads it).
_unanswered: contextvars.ContextVar[list[int]] = contextvars.ContextVar("evalstats_unanswered")


def _as_count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value < 0 or value > 1e15:  # NaN, negative, absurd
        return None
    return int(value)


def _anthropic_text(data: Mapping[str, Any]) -> tuple[str | None, str | None]:
    blocks = data.get("content")
    if not isinstance(blocks, list):
        return None, "the reply has no content list"
    texts = [
        b["text"]
        for b in blocks
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    text = "".join(texts)
    if text.strip():
        return text, None
    kinds = sorted({str(b.get("type")) for b in blocks if isinstance(b, Mapping)})
    what = f"only {', '.join(kinds)} blocks" if kinds else "an empty content list"
    return None, f"the reply holds no text ({what}; stop_reason={data.get('stop_reason')!r})"


def _openai_text(data: Mapping[str, Any]) -> tuple[str | None, str | None]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return None, "the reply has no choices (choices: [])"
    first = choices[0] if isinstance(choices[0], Mapping) else {}
    message = first.get("message") if isinstance(first.get("message"), Mapping) else {}
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return content, None
    extra = " (tool calls only)" if message.get("tool_calls") else ""
    return None, (f"the reply holds no text{extra} (finish_reason={first.get('finish_reason')!r})")


def _validate_strict(provider: str, data: Mapping[str, Any]) -> str | None:
    """The SDK's schema check, for clients built with ``_strict_response_validation``."""
    try:
        if provider == "anthropic":
            from anthropic.types import Message

            Message.model_validate(data)
        else:
            from openai.types.chat import ChatCompletion

            ChatCompletion.model_validate(data)
    except Exception as exc:  # pydantic's ValidationError, whatever its version
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"the body does not match the SDK's schema: {first}"
    return None


def parse_body(
    provider: str, body: bytes, content_type: str, request_id: str | None, *, strict: bool = False
) -> Outcome:
    """Turn a 200 body into an :class:`Outcome` (never raises)."""
    text = body.decode("utf-8", errors="replace")
    shown = redact(text[:200])

    def bad(error: str, result: CallResult | None = None) -> Outcome:
        kept = result or CallResult("", None, request_id, None, None)
        return Outcome("retry", kept, redact(error), redact(text), True)

    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return bad(f"NonUTF8Body: the body is not UTF-8 ({exc.reason} at byte {exc.start})")
    if "json" not in (content_type or "").lower():
        return bad(f"NonJSONBody: content-type {content_type!r}, not JSON: {shown}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return bad(f"NonJSONBody: the body is not JSON ({type(exc).__name__}): {shown}")
    if not isinstance(data, dict):
        return bad(f"NonJSONBody: the body is JSON but not an object: {shown}")
    usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
    if provider == "anthropic":
        n_in, n_out = usage.get("input_tokens"), usage.get("output_tokens")
        answer, problem = _anthropic_text(data)
    else:
        n_in, n_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
        answer, problem = _openai_text(data)
    model = data.get("model") if isinstance(data.get("model"), str) else None
    result = CallResult(redact(answer or ""), model, request_id, _as_count(n_in), _as_count(n_out))
    if strict:
        schema = _validate_strict(provider, data)
        if schema is not None:
            return bad(f"SchemaError: {schema}", result)
    if problem is not None:
        return bad(f"EmptyAnswer: {problem}", result)
    return Outcome("ok", result, None, None, True)


async def _read_capped(response: Any, cap: int) -> tuple[bytes, bool]:
    """At most ``cap + 1`` bytes of the body, and whether it ended within ``cap``."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"".join(chunks)[: cap + 1], False
    return b"".join(chunks), True


async def call(client: Client, judge: JudgeSpec, params: Mapping[str, Any]) -> Outcome:
    """One judge call through the SDK (its retries included); never raises an ``Exception``."""
    from . import _interrupt

    drain = _interrupt.current.get()
    if drain is not None and drain.stopping:
        return Outcome("not_sent", None, "Interrupted: not sent")
    task = drain.enter_call() if drain is not None else None
    unanswered = [0]
    token = _unanswered.set(unanswered)
    try:
        outcome = await _call(client, judge, params)
    except asyncio.CancelledError:
        if drain is None or task not in drain.cancelled:
            raise
        unanswered[0] += 1
        error = (
            "Interrupted: the run was stopped before the answer arrived (it may have been "
            "billed; the call is made again on a rerun)"
        )
        outcome = Outcome("failed", None, error)
    finally:
        _unanswered.reset(token)
        if drain is not None:
            drain.leave_call(task)
    return replace(outcome, maybe_billed=unanswered[0])


async def _call(client: Client, judge: JudgeSpec, params: Mapping[str, Any]) -> Outcome:
    max_body = MAX_BODY_BYTES
    kwargs = dict(params)
    answered = False
    request_id = None
    try:
        if judge.provider == "anthropic":
            # The anthropic SDK no longer has a temperature argument; older models accept it.
            temperature = kwargs.pop("temperature", None)
            if temperature is not None:
                kwargs["extra_body"] = {"temperature": temperature}
            stream = client.sdk.messages.with_streaming_response.create(**kwargs)
        else:
            stream = client.sdk.chat.completions.with_streaming_response.create(**kwargs)
        async with stream as response:
            answered = True  # a 2xx: its body is on its way (the SDK raises for others)
            headers = dict(response.headers)
            request_id = headers.get("request-id") or headers.get("x-request-id")
            content_type = headers.get("content-type", "")
            body, complete = await _read_capped(response, max_body)
    except Exception as exc:
        if isinstance(getattr(exc, "status_code", None), int):
            kind = _STATUS_KINDS.get(exc.status_code, "failed")
            response = getattr(exc, "response", None)
            headers = dict(response.headers) if response is not None else {}
            return Outcome(kind, None, describe_error(exc), None, False, headers)
        if answered:
            # A 200 started arriving, then the connection broke: probably billed.
            cut = CallResult("", None, request_id, None, None)
            if isinstance(exc, AttemptDeadline):
                # A paid body trickling past --timeout: re-sent only when asked, as a cut one.
                return Outcome("truncated", cut, f"BodyTooSlow: {describe_error(exc)}", None, True)
            return Outcome("retry", cut, f"BodyCutShort: {describe_error(exc)}", None, True)
        return Outcome("failed", None, describe_error(exc), None, False)
    if not complete:
        raw = redact(body[:max_body].decode("utf-8", errors="replace"))
        error = (
            f"ResponseTooLarge: the body passed {max_body:,} bytes; its first {max_body:,} "
            "bytes are kept in raw, the rest was not read"
        )
        cut = CallResult("", None, request_id, None, None)
        return Outcome("truncated", cut, error, raw, True, headers)
    outcome = parse_body(judge.provider, body, content_type, request_id, strict=client.strict)
    return Outcome(outcome.kind, outcome.result, outcome.error, outcome.raw, True, headers)


class AttemptDeadline(httpx2.ReadTimeout):
    """An attempt passed its deadline (a ``ReadTimeout``, so the SDK retries it as one)."""


def _timed_out(timeout: float, request: httpx2.Request) -> httpx2.ReadTimeout:
    return AttemptDeadline(
        f"the attempt did not finish within --timeout {timeout:g} s (connect to last byte)",
        request=request,
    )


class _DeadlineStream(httpx2.AsyncByteStream):
    """A response body whose every chunk must arrive before the attempt's deadline."""

    def __init__(
        self, inner: Any, deadline: float, timeout: float, request: httpx2.Request
    ) -> None:
        self._inner, self._deadline = inner, deadline
        self._timeout, self._request = timeout, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._inner.__aiter__()
        while True:
            try:
                async with asyncio.timeout_at(self._deadline):
                    chunk = await chunks.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise _timed_out(self._timeout, self._request) from None
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """Wrap ``inner`` so that one attempt is bounded in time, error-body size and wait hint."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, *, timeout: float) -> None:
        self._inner, self._timeout = inner, float(timeout)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = asyncio.get_running_loop().time() + self._timeout
        try:
            async with asyncio.timeout_at(deadline):
                response = await self._inner.handle_async_request(request)
        except TimeoutError:
            if counter := _unanswered.get(None):
                counter[0] += 1  # sent, no answer before the deadline: it may have been billed
            raise _timed_out(self._timeout, request) from None
        # A wait hint past the cap is rewritten to the cap, so that the SDK's retry waits that.
        wait = retry_after(response.headers, capped=False)
        if wait is not None and (capped := capped_wait(wait, "retry-after")) < wait:
            response.headers["retry-after-ms"] = str(int(capped * 1000))
            response.headers["retry-after"] = str(int(capped))
        if response.status_code >= 400:
            body = await _error_body(response, deadline)
            response.stream = httpx2.ByteStream(body)
            response.headers["content-length"] = str(len(body))
        else:
            response.stream = _DeadlineStream(response.stream, deadline, self._timeout, request)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _error_body(response: httpx2.Response, deadline: float) -> bytes:
    """At most ``MAX_ERROR_BODY_BYTES`` of an error body, read before ``deadline``."""
    kept = bytearray()
    try:
        async with asyncio.timeout_at(deadline):
            async for chunk in response.stream:
                kept += chunk[: MAX_ERROR_BODY_BYTES + 1 - len(kept)]
                if len(kept) > MAX_ERROR_BODY_BYTES:
                    break
    except TimeoutError:
        pass  # an error body that trickles: keep what came; the status says enough
    finally:
        await response.stream.aclose()
    if len(kept) > MAX_ERROR_BODY_BYTES:
        return bytes(kept[:MAX_ERROR_BODY_BYTES]) + b"...(error body cut)"
    return bytes(kept)
