"""Shared fixtures: small valid datasets written to tmp dirs, and the path to ../shared."""

from __future__ import annotations

import gc
import json
import socket
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
#: Input files, not tests: --doctest-modules would import fixtures/importers/*.py (an inspect_ai
#: task, whose import alone takes ~1.5 s) while collecting.
collect_ignore_glob = ["fixtures/*"]


def shared_path(*parts: str) -> Path:
    """Path inside ../shared, or skip the test with the reason when it is absent."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not found: ../shared (public reference data) is absent in this clone")
    return p


#: The report's own docstring examples compute the sample report: like the integration test
#: files (each marked ``slow`` by its ``pytestmark``), make test runs them, make check does not.
INTEGRATION_DOCTESTS = "evalstats/report/"


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.path.as_posix()
        if INTEGRATION_DOCTESTS in path and item.__class__.__name__ == "DoctestItem":
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _collect_only_this_tests_garbage():
    """Freeze what exists before each test, so that a garbage collection during the test
    scans only the objects the test made. statsmodels' Holm (``multipletests``) calls
    ``gc.collect()`` on every call, which in a session holding every imported module and
    collected test took 0.1-0.5 s a call; frozen objects are still freed by reference
    counting, and each test's leftovers are collected here before the next freeze."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Fail any test that tries to reach a non-loopback address."""
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and not (
            host.startswith("127.") or host in ("localhost", "::1") or host.startswith("/")
        ):
            raise RuntimeError(f"network access attempted in a test: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def make_task(task_id: str = "T1", **kw) -> dict:
    rec = {
        "task_id": task_id,
        "prompt": f"Where is {task_id} handled?",
        "canonical_answer": "In handler.go.",
        "canonical_written_at": "2026-05-01T10:00:00Z",
        "budget_tokens": 1000,
        "budget_wall_s": 300.0,
        "tags": ["x"],
    }
    rec.update(kw)
    return rec


def make_run(task_id: str = "T1", replicate: int = 1, arm: str = "with", **kw) -> dict:
    rec = {
        "task_id": task_id,
        "replicate": replicate,
        "arm": arm,
        "agent_model": "qwen:qwen3-coder",
        "answer": f"{arm} answer for {task_id}/{replicate}",
        "files_inspected": ["a.go"],
        "wall_s": 60.0,
        "started_at": "2026-05-02T10:00:00Z",
    }
    rec.update(kw)
    return rec


@pytest.fixture
def small_dir(tmp_path: Path) -> Path:
    """2 tasks x 2 replicates, both arms, no judgments."""
    tasks = [make_task("T1"), make_task("T2")]
    runs = [make_run(t, r, a) for t in ("T1", "T2") for r in (1, 2) for a in ("with", "without")]
    write_jsonl(tmp_path / "tasks.jsonl", tasks)
    write_jsonl(tmp_path / "runs.jsonl", runs)
    return tmp_path


def first_difference(a, b, path="$"):
    """Where two JSON-like values first differ (None when equal), for readable failures."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(set(a) ^ set(b))}"
        for k in a:
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if type(a) is not type(b) or a != b:
        return f"{path}: {a!r} != {b!r}"
    return None
