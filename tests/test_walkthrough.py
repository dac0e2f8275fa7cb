"""docs/cli.md's walkthrough runs as written: every command of its shell block, in a temp dir.

The inputs the walkthrough starts from are made here: ``my_eval.py`` is the tiny two-arm
inspect_ai task of the importer tests (mockllm in both arms, so ``inspect eval`` needs no
network), ``claude-outputs/`` the Claude Code fixtures (formats documented in
tests/test_importers_claude_code.py), ``tasks.jsonl`` their tasks. The judges are the
loopback fake server (tests/fakellm.py), reached through ANTHROPIC_BASE_URL / OPENAI_BASE_URL
set in the commands' environment, as a user would set them for a real endpoint.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakellm import FakeLLM, default_reply

import evalstats

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "importers"
HEADING = "## Walkthrough: your own runs and your own rubric"
KEY = "sk-test-walkthrough-1234567890"
# Integration (slow: make test runs it, make check does not): judges, computes and reports end
# to end. inspect_ai is looked up, not imported: importing it takes ~1.5 s of every collection.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("inspect_ai") is None,
        reason="inspect_ai (evalstats[inspect]) absent",
    ),
]


def readme_commands() -> list[str]:
    """The commands of the walkthrough's ``sh`` blocks: comments dropped, continuations joined."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    section = text[start : end if end != -1 else len(text)]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert blocks, "the walkthrough has no sh block"
    commands: list[str] = []
    for block in blocks:
        joined = re.sub(r"\\\n\s*", "", block)
        commands += [
            line.strip()
            for line in joined.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
    return commands


def test_readme_commands_are_found():
    commands = readme_commands()
    assert commands[0].startswith("inspect eval ")
    assert any(c.startswith("evalstats import inspect ") for c in commands)
    assert any(c.startswith("evalstats import claude-code ") for c in commands)
    assert any(c.startswith("evalstats judge ") and c.endswith("--dry-run") for c in commands)
    assert commands[-1].startswith("evalstats report ")


@pytest.mark.slow  # starts a Jupyter kernel
def test_walkthrough(tmp_path):
    work = tmp_path / "walk"
    work.mkdir()
    shutil.copy(FIXTURES / "inspect_tiny_task.py", work / "my_eval.py")
    shutil.copytree(FIXTURES / "claude_code", work / "claude-outputs")
    shutil.copy(FIXTURES / "tasks.jsonl", work / "tasks.jsonl")
    prompts: list[str] = []

    def reply(system: str, user: str, model: str) -> str:
        prompts.append(system + "\n" + user)
        return default_reply(system, user, model)

    with FakeLLM(api_key=KEY, reply=reply) as server:
        env = {
            **os.environ,
            # The package's console scripts (evalstats, inspect) come first on PATH.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_API_KEY": KEY,
            "OPENAI_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": server.anthropic_url,
            "OPENAI_BASE_URL": server.openai_url,
            # inspect_ai keeps traces in the user's data dir: keep them in tmp.
            "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
            "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
            "INSPECT_LOG_DIR": str(work / "logs"),
            "MPLBACKEND": "Agg",
        }
        outputs = {}
        for command in readme_commands():
            proc = subprocess.run(
                ["bash", "-c", command],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert proc.returncode == 0, (
                f"README command failed ({proc.returncode}): {command}\n"
                f"{proc.stdout[-1500:]}\n{proc.stderr[-3000:]}"
            )
            outputs[command] = proc.stdout + proc.stderr

    # Imports: 3 questions x 2 epochs x 2 arms from inspect, 2 tasks x 2 arms from Claude Code.
    mine = evalstats.load_dir(work / "data" / "mine")
    assert len(mine.runs) == 12 and len(mine.tasks) == 3
    claude = evalstats.load_dir(work / "data" / "claude")
    assert len(claude.runs) == 4
    assert claude.runs["files_inspected"].dropna().map(len).sum() > 0

    # The rubric names the tool, not gortex; its sha256 is its file's and not the seed's.
    rubric_file = work / "rubrics" / "serena.toml"
    sha = hashlib.sha256(rubric_file.read_bytes()).hexdigest()
    assert sha != evalstats.rubrics.get("with-without").sha256
    show = next(v for k, v in outputs.items() if k.startswith("evalstats rubric show"))
    assert f"sha256: {sha}" in show
    dry = next(v for k, v in outputs.items() if k.endswith("--dry-run"))
    assert "est_usd" in dry

    # What the judges received, and what the journals hold.
    # Two judges x (6 + 2 pairs), a byte-identical request paid once (the inspect log's two
    # epochs give the same answers); the dry run sent nothing.
    assert len(prompts) == 2 * len(set(prompts)) and 0 < len(set(prompts)) <= 6 + 2
    assert len(mine.judgments) + len(claude.judgments) == 2 * (6 + 2)  # every pair has its verdict
    assert all("gortex" not in p.lower() and "Serena MCP" in p for p in prompts)
    for ds in (mine, claude):
        j = ds.judgments
        assert j is not None and set(j["prompt_sha256"]) == {sha}
        assert set(j["rubric"]) == {"with-without-serena-mcp"} and j["error"].isna().all()
        assert ds.arm_names == {"with": "Serena MCP", "without": "plain Claude Code"}
    copy = work / "data" / "mine" / "rubrics" / "with-without-serena-mcp.r1.toml"
    assert copy.read_bytes() == rubric_file.read_bytes()

    # The report, and its provenance of the rubric.
    report = work / "reports" / "mine"
    assert (report / "index.html").stat().st_size > 0
    results = json.loads((report / "results.json").read_text(encoding="utf-8"))
    [prov] = results["provenance"]["rubrics"]
    assert prov["rubric"] == "with-without-serena-mcp"
    assert prov["judgments_prompt"] == [
        {"prompt_revision": 1, "prompt_sha256": sha, "n_judgments": 12}
    ]
    [pin] = [r for r in results["tables"]["audit"] if r["check"] == "prompt_hash_pinned"]
    assert pin["status"] == "pass", pin["detail"]
