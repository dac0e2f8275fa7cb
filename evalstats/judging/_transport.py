"""An HTTP transport that bounds what one attempt may cost in time and memory.

The SDKs' ``timeout`` bounds each socket read, not a call: a server that trickles one byte
per second keeps a call alive forever. Their retry loop honours any ``retry-after`` (the
anthropic SDK up to 49 days), and an error body is read whole before it becomes an
exception. :class:`BoundedTransport` wraps the real transport, below the SDK's retries,
so every attempt -- connect to last byte -- ends within ``timeout`` seconds, an error body
is kept to ``max_error_body`` bytes, and a server's wait hint is capped
(:func:`evalstats.judging._ratelimit.capped_wait`) before the SDK sees it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from ._ratelimit import capped_wait, retry_after

__all__ = ["AttemptDeadline", "BoundedTransport", "MAX_ERROR_BODY_BYTES"]

# An error body is a short JSON message; past this it is only memory a hostile server spends.
MAX_ERROR_BODY_BYTES = 65_536


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
        self._inner = inner
        self._deadline = deadline
        self._timeout = timeout
        self._request = request

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
    """Wrap ``inner`` so that one attempt is bounded in time, error-body size and wait hint.

    Parameters
    ----------
    inner : httpx2.AsyncBaseTransport
        The transport that talks to the network.
    timeout : float
        Seconds from sending the request to the last byte of the response.
    max_error_body : int
        Bytes of a non-2xx body kept (the rest is not read).
    """

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        *,
        timeout: float,
        max_error_body: int = MAX_ERROR_BODY_BYTES,
    ) -> None:
        self._inner = inner
        self._timeout = float(timeout)
        self._max_error_body = int(max_error_body)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = asyncio.get_running_loop().time() + self._timeout
        try:
            async with asyncio.timeout_at(deadline):
                response = await self._inner.handle_async_request(request)
        except TimeoutError:
            raise _timed_out(self._timeout, request) from None
        _cap_wait_headers(response.headers)
        if response.status_code >= 400:
            body = await self._read_error_body(response, deadline, request)
            response.stream = httpx2.ByteStream(body)
            response.headers["content-length"] = str(len(body))
        else:
            response.stream = _DeadlineStream(response.stream, deadline, self._timeout, request)
        return response

    async def _read_error_body(
        self, response: httpx2.Response, deadline: float, request: httpx2.Request
    ) -> bytes:
        kept = bytearray()
        try:
            async with asyncio.timeout_at(deadline):
                async for chunk in response.stream:
                    kept += chunk[: self._max_error_body + 1 - len(kept)]
                    if len(kept) > self._max_error_body:
                        break
        except TimeoutError:
            pass  # an error body that trickles: keep what came; the status says enough
        finally:
            await response.stream.aclose()
        if len(kept) > self._max_error_body:
            return bytes(kept[: self._max_error_body]) + b"...(error body cut)"
        return bytes(kept)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _cap_wait_headers(headers: Any) -> None:
    """Rewrite a ``retry-after`` past the cap to the cap, so the SDK's retry waits that."""
    wait = retry_after(headers, capped=False)
    if wait is None:
        return
    capped = capped_wait(wait, "retry-after")
    if capped < wait:
        headers["retry-after-ms"] = str(int(capped * 1000))
        headers["retry-after"] = str(int(capped))
