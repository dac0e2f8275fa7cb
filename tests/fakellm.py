"""A loopback fake of the Anthropic Messages and OpenAI Chat Completions APIs.

Used by the judging tests (as a pytest fixture) and by ``benchmarks/bench_judging.py``.
It speaks just enough of both wire formats, batch endpoints included, for the official
SDKs to pass strict response validation, and it can inject the faults a real API
produces: 429 with ``retry-after-ms``, 500, 529 overloaded, a stalled response (client
timeout), a TCP reset, and a 200 whose text is not judge JSON.

The server counts, per request body, how many 200s it answered ("paid" calls): the
body of a judge call is a function of everything the runner hashes into its call key,
so duplicate payments are visible here independently of the runner's own bookkeeping.

Run standalone (used by the kill -9 test and the benchmark)::

    python tests/fakellm.py --port-file P --latency 0.1 --fault-rate 0.2 --counts-file C
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import itertools
import json
import random
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("429", "500", "529", "timeout", "reset", "badjson")
# What a hostile or broken server sends (issue 10): 200s that are not JSON, not UTF-8 or
# text/plain; answers without text; bodies cut short (by a FIN or a RST) or of 20 MB;
# usage far above max_tokens; the key echoed in the judge text; permanent 4xx.
HOSTILE_KINDS = (
    "notjson",
    "notutf8",
    "textplain",
    "emptycontent",
    "nochoices",
    "tooluse",
    "truncated",
    "midreset",
    "huge",
    "overusage",
    "echo",
    "400",
    "404",
    "413",
    "422",
)
# The second round (issue 21): a body trickled one byte at a time (defeats a per-read
# timeout), wait hints of 10^9 s, ``inf`` and a reset in the year 2999, and an error body of
# ``huge_error_bytes``. Not in "all": the benchmark draws them in its own cases.
ROUND2_KINDS = ("trickle", "waitforever", "waitinf", "reset2999", "hugeerror")
# 200s whose body carries no usable judge text: the runner journals and re-asks them.
ANSWERED_BAD = ("notjson", "notutf8", "textplain", "emptycontent", "nochoices", "tooluse")
HUGE_BYTES = 20_000_000

WITH_WITHOUT_REPLY = {
    "label": "(b)",
    "reasoning": "Both answers cover the same code paths.",
    "facts_correct_with": "3/3",
    "facts_correct_without": "3/3",
    "hallucinations_with": "0",
    "hallucinations_without": "0",
    "cost_ratio": "0.8",
    "uncertainty": "low",
}


def _blind_reply(verdict: str) -> dict[str, Any]:
    side = {
        "correctness": 4,
        "specificity": 3,
        "completeness": 4,
        "hallucination_safety": 5,
        "notes": "Grounded in cited code.",
    }
    return {
        "agent_a": side,
        "agent_b": dict(side, correctness=3),
        "verdict": verdict,
        "verdict_reasoning": "A cites the exact function.",
    }


def default_reply(system: str, user: str, model: str) -> str:
    """Valid judge JSON for whichever seed rubric the prompt uses, varied by content."""
    digest = hashlib.sha256((model + user).encode()).digest()
    if "Agent A" in system or "agent_a" in system:
        return json.dumps(_blind_reply(("a_wins", "b_wins", "tie")[digest[0] % 3]))
    return json.dumps(dict(WITH_WITHOUT_REPLY, label=("(a)", "(b)", "(c)")[digest[0] % 3]))


def body_key(params: dict[str, Any]) -> str:
    """Identity of one judge call as the server sees it (same for direct and batch calls)."""
    keep = {
        k: params.get(k)
        for k in ("model", "system", "messages", "temperature", "max_tokens")
        if k in params
    }
    if "max_completion_tokens" in params:
        keep["max_tokens"] = params["max_completion_tokens"]
    return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()


class FakeLLM:
    """A threaded HTTP server on 127.0.0.1 faking both providers.

    Parameters
    ----------
    latency : float
        Seconds each successful or failed call takes.
    fault_rate : float
        Probability that a call gets one of ``fault_kinds`` (seeded, ``seed``).
    fault_kinds : iterable of str
        Subset of ``FAULT_KINDS``.
    api_key : str or None
        If set, requests without this key get a 401.
    stall_s : float
        How long a "timeout" fault stalls before dropping the connection.
    reply : callable
        ``reply(system, user, model) -> str`` gives the judge text.
    batch_polls : int
        Number of retrieve calls a batch stays in progress before it ends.
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        fault_kinds: Iterable[str] = FAULT_KINDS,
        seed: int = 0,
        api_key: str | None = None,
        stall_s: float = 1.0,
        reply: Callable[[str, str, str], str] = default_reply,
        batch_polls: int = 1,
        batch_error_every: int = 0,
        echo_key: bool = False,
        port: int = 0,
        rate_limit: tuple[float, float] | None = None,
        burst_s: float = 5.0,
        trickle_s: float = 0.05,
        huge_error_bytes: int = 50_000_000,
    ) -> None:
        self.trickle_s = trickle_s  # seconds between the bytes of a "trickle" body
        self.huge_error_bytes = huge_error_bytes
        # Bytes of "hugeerror" bodies the client accepted before it stopped reading.
        self.error_bytes_sent = 0
        # "submit" or "poll": the batch endpoints answer 500 (quoting the key if echo_key).
        self.batch_fail: str | None = None
        self.latency = latency
        self.fault_rate = fault_rate
        self.fault_kinds = tuple(fault_kinds)
        self.api_key = api_key
        self.stall_s = stall_s
        self.reply = reply
        self.batch_polls = batch_polls
        self.batch_error_every = batch_error_every  # every k-th batched request errors
        self.echo_key = echo_key  # error bodies quote the key, as some real servers do
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._scripted: list[str] = []
        self._ids = itertools.count(1)
        self.paid: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.requests = 0
        self.seen_auth: list[str] = []
        self.batches: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        # Request ids of every 200 sent for a judge call (a "paid" call), in order.
        self.paid_ids: list[str] = []
        self.rate_limited = 0
        # (requests per minute, tokens per minute): token buckets refilled continuously,
        # holding ``burst_s`` seconds of the limit, as the providers meter them.
        self.rate_limit = rate_limit
        self._buckets: dict[str, list[float]] = {}
        if rate_limit is not None:
            now = time.monotonic()
            self._buckets = {
                "requests": [rate_limit[0] * burst_s / 60, now, rate_limit[0] * burst_s / 60],
                "tokens": [rate_limit[1] * burst_s / 60, now, rate_limit[1] * burst_s / 60],
            }
        self._server = _QuietServer(("127.0.0.1", port), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def point_sdks(self, monkeypatch) -> None:
        """Point both SDKs at this server as a user would: the key and the base URL of each
        provider in the environment (undone by ``monkeypatch`` after the test)."""
        for provider, url in (("ANTHROPIC", self.anthropic_url), ("OPENAI", self.openai_url)):
            monkeypatch.setenv(f"{provider}_API_KEY", self.api_key)
            monkeypatch.setenv(f"{provider}_BASE_URL", url)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- fault control ---------------------------------------------------------------------
    def script(self, faults: Iterable[str | None]) -> None:
        """Apply these faults (``None`` = no fault) to the next calls, before random ones."""
        with self._lock:
            self._scripted.extend(faults)

    def _next_fault(self) -> str | None:
        with self._lock:
            self.requests += 1
            if self._scripted:
                fault = self._scripted.pop(0)
            elif self.fault_rate and self._rng.random() < self.fault_rate:
                fault = self._rng.choice(self.fault_kinds)
            else:
                fault = None
            if fault:
                self.faults[fault] += 1
            return fault

    def _admit(self, tokens: float) -> tuple[bool, dict[str, str]]:
        """Token-bucket admission of one call; the rate-limit headers both providers send."""
        if self.rate_limit is None:
            return True, {}
        with self._lock:
            now = time.monotonic()
            per_s = {"requests": self.rate_limit[0] / 60, "tokens": self.rate_limit[1] / 60}
            for name, bucket in self._buckets.items():
                level, at, cap = bucket
                bucket[0], bucket[1] = min(cap, level + per_s[name] * (now - at)), now
            need = {"requests": 1.0, "tokens": float(tokens)}
            short = {n: need[n] - b[0] for n, b in self._buckets.items() if b[0] < need[n]}
            ok = not short
            if ok:
                for name, bucket in self._buckets.items():
                    bucket[0] -= need[name]
            else:
                self.rate_limited += 1
            headers: dict[str, str] = {}
            for name, (level, _, cap) in self._buckets.items():
                limit = int(self.rate_limit[0 if name == "requests" else 1])
                reset_s = (cap - level) / per_s[name]
                when = time.time() + reset_s
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when))
                headers[f"anthropic-ratelimit-{name}-limit"] = str(limit)
                headers[f"anthropic-ratelimit-{name}-remaining"] = str(max(0, int(level)))
                headers[f"anthropic-ratelimit-{name}-reset"] = stamp + "Z"
                headers[f"x-ratelimit-limit-{name}"] = str(limit)
                headers[f"x-ratelimit-remaining-{name}"] = str(max(0, int(level)))
                headers[f"x-ratelimit-reset-{name}"] = f"{reset_s:.3f}s"
            if not ok:
                wait = max(short[n] / per_s[n] for n in short)
                headers["retry-after-ms"] = str(max(1, int(wait * 1000)))
                headers["retry-after"] = str(max(1, int(wait + 0.999)))
            return ok, headers

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):08d}"

    def counts(self) -> dict[str, Any]:
        with self._lock:
            return {
                "paid": dict(self.paid),
                "paid_ids": list(self.paid_ids),
                "faults": dict(self.faults),
                "requests": self.requests,
                "rate_limited": self.rate_limited,
            }

    # -- bodies ----------------------------------------------------------------------------
    def _huge(self, provider: str, params: dict[str, Any]) -> bytes:
        """A valid answer whose text makes the body ``HUGE_BYTES`` long (built once)."""
        body = self._answer(provider, params, "")
        blob = json.dumps(body).encode()
        filler = b"x" * (HUGE_BYTES - len(blob))
        marker = b'"text": ""' if provider == "anthropic" else b'"content": ""'
        return blob.replace(marker, marker[:-1] + filler + b'"', 1)

    def _answer(self, provider: str, params: dict[str, Any], text: str | None = None) -> dict:
        """A successful response body; records the payment."""
        system, user = _prompt_parts(provider, params)
        if text is None:
            text = self.reply(system, user, params["model"])
        n_in = max(1, (len(system) + len(user)) // 4)
        n_out = max(1, len(text) // 4)
        with self._lock:
            self.paid[body_key(params)] += 1
        if provider == "anthropic":
            return {
                "id": self._new_id("msg"),
                "type": "message",
                "role": "assistant",
                "model": params["model"] + "-fake",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": n_in, "output_tokens": n_out},
            }
        return {
            "id": self._new_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": params["model"] + "-fake",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {
                "prompt_tokens": n_in,
                "completion_tokens": n_out,
                "total_tokens": n_in + n_out,
            },
        }


def _prompt_parts(provider: str, params: dict[str, Any]) -> tuple[str, str]:
    if provider == "anthropic":
        system = params.get("system") or ""
        if isinstance(system, list):
            system = "".join(block.get("text", "") for block in system)
        user = "".join(
            m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in params["messages"]
        )
    else:
        system = "".join(
            m["content"] for m in params["messages"] if m.get("role") in ("system", "developer")
        )
        user = "".join(m["content"] for m in params["messages"] if m.get("role") == "user")
    return system, user


def _error_body(provider: str, status: int) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}.get(
        status, "api_error"
    )
    message = {429: "Rate limited", 529: "Overloaded", 401: "invalid x-api-key"}.get(
        status, "Internal server error"
    )
    if provider == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class _QuietServer(ThreadingHTTPServer):
    # The default backlog of 5 drops connections under 32-way concurrency.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients killed or reset mid-request are part of the tests


def _make_handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Without this, Nagle's algorithm plus the client's delayed ACK adds ~40 ms to
            # some responses: latency the fake would invent, not the runner's.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        # -- plumbing ----------------------------------------------------------------------
        def _body(self) -> bytes:
            n = int(self.headers.get("content-length") or 0)
            return self.rfile.read(n) if n else b""

        def _send(
            self,
            status: int,
            payload: Any,
            *,
            headers: dict[str, str] | None = None,
            raw: bytes | None = None,
            content_type: str = "application/json",
            paid: Any = False,
            cut: int | None = None,
        ) -> None:
            """Send one response; ``paid``: a judge call answered (True, or its params to
            count it by body); ``cut``: send only that many body bytes."""
            data = raw if raw is not None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            request_header = "request-id" if self._provider == "anthropic" else "x-request-id"
            rid = fake._new_id("req")
            self.send_header(request_header, rid)
            extra = dict(getattr(self, "_limit_headers", None) or {})
            extra.update(headers or {})
            for key, value in extra.items():
                self.send_header(key, value)
            if paid:
                with fake._lock:
                    fake.paid_ids.append(rid)
                    if isinstance(paid, dict):
                        fake.paid[body_key(paid)] += 1
            # Headers and body in one send (end_headers would flush the headers alone).
            self._headers_buffer.append(b"\r\n")
            try:
                self.wfile.write(b"".join(self._headers_buffer) + data[:cut])
            except OSError:
                pass  # the client stopped reading (a capped reader closes early)
            self._headers_buffer = []

        def _authorised(self) -> bool:
            given = self.headers.get("x-api-key") or ""
            bearer = self.headers.get("authorization") or ""
            if bearer.lower().startswith("bearer "):
                given = given or bearer[7:]
            with fake._lock:
                fake.seen_auth.append(given)
            if fake.api_key is not None and given != fake.api_key:
                body = _error_body(self._provider, 401)
                if fake.echo_key:
                    body["error"]["message"] += f": {given}"
                self._send(401, body)
                return False
            self._given_key = given
            return True

        def _reset(self) -> None:
            # SO_LINGER 0 makes close() send a RST: the client sees a connection reset.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()

        def _fault(self, fault: str) -> bool:
            """Apply a transport or HTTP fault; True if the request is finished."""
            if fault == "reset":
                self._reset()
                return True
            if fault == "timeout":
                time.sleep(fake.stall_s)
                self._reset()
                return True
            status = {"429": 429, "500": 500, "529": 529}.get(fault)
            if status is None:
                return False
            headers = {"retry-after-ms": "20"} if status == 429 else {"retry-after-ms": "10"}
            if status == 429:
                headers["retry-after"] = "1"
            body = _error_body(self._provider, status)
            if fake.echo_key:
                inner = body["error"]
                auth = self.headers.get("authorization") or ""
                inner["message"] += f" (key {self._given_key}, auth {auth}, request {self.path})"
            self._send(status, body, headers=headers)
            return True

        # -- routes ------------------------------------------------------------------------
        def do_POST(self) -> None:
            body = self._body()
            path = self.path.split("?")[0]
            self._provider = "anthropic" if path.startswith("/v1/messages") else "openai"
            if not self._authorised():
                return
            if path in ("/v1/messages", "/v1/chat/completions"):
                self._judge_call(json.loads(body))
            elif path in ("/v1/messages/batches", "/v1/files") and fake.batch_fail == "submit":
                self._batch_fault()
            elif path == "/v1/messages/batches":
                self._anthropic_batch_create(json.loads(body))
            elif path == "/v1/files":
                self._openai_file_upload(body)
            elif path == "/v1/batches":
                self._openai_batch_create(json.loads(body))
            else:  # echo_key: as some servers do, the 404 quotes the request (query included)
                error = _error_body(self._provider, 404)
                error["error"]["message"] += f": {self.path}" if fake.echo_key else ""
                self._send(404, error)

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            self._provider = "anthropic" if path.startswith("/v1/messages") else "openai"
            if not self._authorised():
                return
            parts = path.strip("/").split("/")
            if fake.batch_fail == "poll" and "batches" in parts:
                self._batch_fault()
            elif parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                self._anthropic_batch_get(parts[3])
            elif parts[:3] == ["v1", "messages", "batches"] and parts[-1] == "results":
                batch = fake.batches[parts[3]]
                lines = "".join(json.dumps(r) + "\n" for r in batch["results"])
                self._send(200, None, raw=lines.encode(), content_type="application/binary")
            elif parts[:2] == ["v1", "batches"] and len(parts) == 3:
                self._openai_batch_get(parts[2])
            elif parts[:2] == ["v1", "files"] and parts[-1] == "content":
                self._send(
                    200, None, raw=fake.files[parts[2]], content_type="application/octet-stream"
                )
            else:
                self._send(404, _error_body(self._provider, 404))

        def _judge_call(self, params: dict[str, Any]) -> None:
            fault = fake._next_fault()
            self._limit_headers = {}
            if fake.latency:
                time.sleep(fake.latency)
            if fake.rate_limit is not None:
                # Like the providers: the prompt (system included) plus an output estimate.
                system, user = _prompt_parts(self._provider, params)
                estimate = (len(system) + len(user)) // 4 + 300
                admitted, limit_headers = fake._admit(estimate)
                if not admitted:
                    self._send(429, _error_body(self._provider, 429), headers=limit_headers)
                    return
                self._limit_headers = limit_headers
            if fault and self._fault(fault):
                return
            if fault in ROUND2_KINDS:
                self._round2(fault, params)
                return
            if fault in HOSTILE_KINDS:
                self._hostile(fault, params)
                return
            text = "I would pick (a), the WITH answer." if fault == "badjson" else None
            self._send(200, fake._answer(self._provider, params, text), paid=True)

        def _hostile(self, fault: str, params: dict[str, Any]) -> None:
            provider = self._provider
            if fault in ("400", "404", "413", "422"):
                body = _error_body(provider, int(fault))
                if fault == "400":
                    body["error"]["message"] = "prompt is too long: 250000 tokens > 200000"
                self._send(int(fault), body)
                return
            if fault == "notjson":
                self._send(200, None, raw=b"<html><body>502 Bad Gateway</body></html>", paid=params)
            elif fault == "notutf8":
                self._send(200, None, raw=b'{"id": "\xff\xfe\xfa"}', paid=params)
            elif fault == "textplain":
                self._send(200, None, raw=b"upstream busy", content_type="text/plain", paid=params)
            elif fault in ("emptycontent", "nochoices", "tooluse"):
                body = fake._answer(provider, params, "")
                if provider == "anthropic":
                    body["content"] = (
                        [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}]
                        if fault == "tooluse"
                        else []
                    )
                    body["stop_reason"] = "tool_use" if fault == "tooluse" else "end_turn"
                elif fault == "nochoices":
                    body["choices"] = []
                elif fault == "tooluse":
                    body["choices"][0]["message"] = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "lookup", "arguments": "{}"},
                            }
                        ],
                    }
                    body["choices"][0]["finish_reason"] = "tool_calls"
                self._send(200, body, paid=True)
            elif fault in ("truncated", "midreset"):
                data = json.dumps(fake._answer(provider, params)).encode()
                self._send(200, None, raw=data, cut=len(data) // 2, paid=True)
                if fault == "midreset":
                    time.sleep(0.05)  # the client has the headers and half the body: reset
                    self._reset()
                else:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
            elif fault == "huge":
                self._send(200, None, raw=fake._huge(provider, params), paid=True)
            elif fault == "overusage":
                body = fake._answer(provider, params)
                usage = body["usage"]
                if provider == "anthropic":
                    usage["input_tokens"], usage["output_tokens"] = 50_000_000, 10_000_000
                else:
                    usage["prompt_tokens"], usage["completion_tokens"] = 50_000_000, 10_000_000
                    usage["total_tokens"] = 60_000_000
                self._send(200, body, paid=True)
            elif fault == "echo":
                import base64

                key = getattr(self, "_given_key", "")
                wrapped = base64.b64encode(key.encode()).decode()
                masked = key[:4] + "****" + key[-4:]
                text = fake.reply(*_prompt_parts(provider, params), params["model"])
                auth = self.headers.get("authorization") or ""
                text = f"key {key} / {wrapped} / {masked} / {auth} " + text
                self._send(200, fake._answer(provider, params, text), paid=True)

        def _round2(self, fault: str, params: dict[str, Any]) -> None:
            provider = self._provider
            if fault == "trickle":
                data = json.dumps(fake._answer(provider, params)).encode()
                self._send(200, None, raw=data, cut=1, paid=True)
                for i in range(1, len(data)):
                    time.sleep(fake.trickle_s)
                    try:
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                    except OSError:
                        return  # the client gave up: what a bounded attempt does
            elif fault in ("waitforever", "waitinf"):
                wait = "1000000000" if fault == "waitforever" else "inf"
                headers = {"retry-after": wait, "retry-after-ms": wait + ("000" * (wait[0] != "i"))}
                self._send(429, _error_body(provider, 429), headers=headers)
            elif fault == "reset2999":
                stamp = "2999-01-01T00:00:00Z"
                headers = {
                    "anthropic-ratelimit-requests-remaining": "0",
                    "anthropic-ratelimit-requests-reset": stamp,
                    "x-ratelimit-remaining-requests": "0",
                    "x-ratelimit-reset-requests": "8760000h",
                }
                self._send(200, fake._answer(provider, params), headers=headers, paid=True)
            elif fault == "hugeerror":
                self._stream_error(_error_body(provider, 500))

        def _stream_error(self, body: dict[str, Any]) -> None:
            """A 500 whose body is ``huge_error_bytes`` long, written in 64 KB pieces."""
            head = json.dumps(body).encode()[:-1] + b', "detail": "'
            size = fake.huge_error_bytes
            self.send_response(500)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(size))
            self.end_headers()
            sent, piece = 0, b"x" * 65_536
            try:
                self.wfile.write(head)
                sent = len(head)
                while sent < size - 2:
                    chunk = piece[: size - 2 - sent]
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    with fake._lock:
                        fake.error_bytes_sent = max(fake.error_bytes_sent, sent)
                self.wfile.write(b'"}')
            except OSError:
                pass
            self.close_connection = True

        def _batch_fault(self) -> bool:
            body = _error_body(self._provider, 500)
            if fake.echo_key:
                body["error"]["message"] += f" (key {self._given_key})"
            self._send(500, body, headers={"x-should-retry": "false"})
            return True

        # -- Anthropic Message Batches -----------------------------------------------------
        def _anthropic_batch_create(self, payload: dict[str, Any]) -> None:
            batch_id = fake._new_id("msgbatch")
            results = []
            for i, request in enumerate(payload["requests"], start=1):
                if fake.batch_error_every and i % fake.batch_error_every == 0:
                    result = {
                        "type": "errored",
                        "error": {
                            "type": "error",
                            "error": {"type": "api_error", "message": "Internal error"},
                        },
                    }
                else:
                    message = fake._answer("anthropic", request["params"])
                    result = {"type": "succeeded", "message": message}
                results.append({"custom_id": request["custom_id"], "result": result})
            fake.batches[batch_id] = {"results": results, "polls": 0, "n": len(results)}
            self._send(200, self._anthropic_batch_json(batch_id, ended=False))

        def _anthropic_batch_json(self, batch_id: str, *, ended: bool) -> dict[str, Any]:
            batch = fake.batches[batch_id]
            ok = sum(r["result"]["type"] == "succeeded" for r in batch["results"])
            counts = {
                "processing": 0 if ended else batch["n"],
                "succeeded": ok if ended else 0,
                "errored": batch["n"] - ok if ended else 0,
                "canceled": 0,
                "expired": 0,
            }
            out = {
                "id": batch_id,
                "type": "message_batch",
                "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts,
                "created_at": "2026-01-01T00:00:00Z",
                "expires_at": "2026-01-02T00:00:00Z",
                "results_url": None,
            }
            if ended:
                out["ended_at"] = "2026-01-01T00:10:00Z"
                out["results_url"] = f"{fake.anthropic_url}/v1/messages/batches/{batch_id}/results"
            return out

        def _anthropic_batch_get(self, batch_id: str) -> None:
            batch = fake.batches[batch_id]
            batch["polls"] += 1
            ended = batch["polls"] >= fake.batch_polls
            self._send(200, self._anthropic_batch_json(batch_id, ended=ended))

        # -- OpenAI Batch API --------------------------------------------------------------
        def _openai_file_upload(self, body: bytes) -> None:
            header = f"Content-Type: {self.headers['content-type']}\r\n\r\n".encode()
            message = email.parser.BytesParser().parsebytes(header + body)
            content = b""
            for part in message.get_payload():
                if part.get_param("name", header="content-disposition") == "file":
                    content = part.get_payload(decode=True)
            file_id = fake._new_id("file")
            fake.files[file_id] = content
            self._send(
                200,
                {
                    "id": file_id,
                    "object": "file",
                    "bytes": len(content),
                    "created_at": int(time.time()),
                    "filename": "batch.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                },
            )

        def _openai_batch_create(self, payload: dict[str, Any]) -> None:
            batch_id = fake._new_id("batch")
            out_lines, err_lines = [], []
            lines = fake.files[payload["input_file_id"]].decode().splitlines()
            for i, line in enumerate(lines, start=1):
                request = json.loads(line)
                rid = fake._new_id("req")
                if fake.batch_error_every and i % fake.batch_error_every == 0:
                    err_lines.append(
                        {
                            "id": fake._new_id("batch_req"),
                            "custom_id": request["custom_id"],
                            "response": {
                                "status_code": 500,
                                "request_id": rid,
                                "body": _error_body("openai", 500),
                            },
                            "error": None,
                        }
                    )
                    continue
                out_lines.append(
                    {
                        "id": fake._new_id("batch_req"),
                        "custom_id": request["custom_id"],
                        "error": None,
                        "response": {
                            "status_code": 200,
                            "request_id": rid,
                            "body": fake._answer("openai", request["body"]),
                        },
                    }
                )
            out_id, err_id = fake._new_id("file"), fake._new_id("file")
            fake.files[out_id] = "".join(json.dumps(x) + "\n" for x in out_lines).encode()
            fake.files[err_id] = "".join(json.dumps(x) + "\n" for x in err_lines).encode()
            fake.batches[batch_id] = {
                "polls": 0,
                "input_file_id": payload["input_file_id"],
                "endpoint": payload["endpoint"],
                "output_file_id": out_id,
                "error_file_id": err_id if err_lines else None,
                "n": len(out_lines) + len(err_lines),
                "failed": len(err_lines),
            }
            self._send(200, self._openai_batch_json(batch_id, done=False))

        def _openai_batch_json(self, batch_id: str, *, done: bool) -> dict[str, Any]:
            batch = fake.batches[batch_id]
            out = {
                "id": batch_id,
                "object": "batch",
                "endpoint": batch["endpoint"],
                "input_file_id": batch["input_file_id"],
                "completion_window": "24h",
                "created_at": int(time.time()),
                "status": "completed" if done else "validating",
            }
            if done:
                out.update(
                    output_file_id=batch["output_file_id"],
                    error_file_id=batch["error_file_id"],
                    completed_at=int(time.time()),
                    request_counts={
                        "total": batch["n"],
                        "completed": batch["n"] - batch["failed"],
                        "failed": batch["failed"],
                    },
                )
            return out

        def _openai_batch_get(self, batch_id: str) -> None:
            batch = fake.batches[batch_id]
            batch["polls"] += 1
            self._send(
                200, self._openai_batch_json(batch_id, done=batch["polls"] >= fake.batch_polls)
            )

    return Handler


def make_data(n_tasks: int, replicates: int = 1, *, over_budget: int = 0) -> tuple[Any, Any]:
    """Small tasks and paired-runs frames (the last ``over_budget`` pairs exceed a budget)."""
    import pandas as pd

    tasks = pd.DataFrame(
        {
            "task_id": [f"t{i:03d}" for i in range(n_tasks)],
            "prompt": [f"Where is symbol S{i} defined?" for i in range(n_tasks)],
            "canonical_answer": [f"pkg/s{i}.go:{10 + i}" for i in range(n_tasks)],
        }
    )
    rows = []
    for i in range(n_tasks):
        for r in range(1, replicates + 1):
            rows.append(
                {
                    "task_id": f"t{i:03d}",
                    "replicate": r,
                    "with_answer": f"S{i} is in pkg/s{i}.go:{10 + i} (run {r}).",
                    "with_tokens": 1000 + i,
                    "with_wall_s": 30.0 + r,
                    "with_files_inspected": [f"pkg/s{i}.go"],
                    "without_answer": f"Probably somewhere in pkg/ (run {r}).",
                    "without_tokens": 2500 + i,
                    "without_wall_s": 60.0 + r,
                    "without_files_inspected": ["pkg/a.go", "pkg/b.go"],
                }
            )
    pairs = pd.DataFrame(rows)
    flags = [False] * len(rows)
    for j in range(over_budget):
        flags[-1 - j] = True
    pairs["with_over_budget"] = flags
    pairs["without_over_budget"] = False
    pairs["over_budget"] = flags
    return tasks, pairs


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--counts-file", help="write counts here on SIGTERM")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--fault-kinds", default="classic", help="'classic', 'all' or a comma-separated list"
    )
    parser.add_argument("--stall-s", type=float, default=1.0)
    parser.add_argument("--rate-limit", help="RPM,TPM: token buckets with rate-limit headers")
    parser.add_argument("--burst-s", type=float, default=5.0)
    parser.add_argument("--api-key")
    args = parser.parse_args()
    import signal
    from pathlib import Path

    kinds = {"classic": FAULT_KINDS, "all": (*FAULT_KINDS, *HOSTILE_KINDS)}.get(
        args.fault_kinds, tuple(args.fault_kinds.split(","))
    )
    limit = tuple(float(x) for x in args.rate_limit.split(",")) if args.rate_limit else None
    fake = FakeLLM(
        latency=args.latency,
        fault_rate=args.fault_rate,
        fault_kinds=kinds,
        seed=args.seed,
        stall_s=args.stall_s,
        rate_limit=limit,
        burst_s=args.burst_s,
        api_key=args.api_key,
    ).start()

    def _stop(*_: object) -> None:
        if args.counts_file:
            Path(args.counts_file).write_text(json.dumps(fake.counts()))
        fake.stop()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _stop)
    Path(args.port_file).write_text(str(fake.port))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    _main()
