"""What a render writes, and where (issue 10): only inside OUT, never over the user's files,
nothing left in the temp folder, and no configured secret in any file it writes.

One render, in a subprocess (``evalstats report``) so that TMPDIR, JUPYTER_RUNTIME_DIR and
the API-key variables are those of a fresh process, covers all three: OUT already holds the
user's files and a previous render's manifest; the judge texts echo a fake key and a base URL
with credentials.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalstats import simulate
from evalstats.report import render_report

# No "sk-" prefix: the scrubbing must not depend on what a key looks like.
MANIFEST = ".evalstats-report.json"  # the output manifest's name, pinned
FAKE_KEY = "zz-test-Q7fK2mN9pL4xW8vR3tY6uB1cD5eH0jA"
USERINFO = "alice:s3cret-pw-9Xq"
BASE_URL = f"http://{USERINFO}@judge-proxy.invalid:8443/v1"
SECRET_FORMS = (
    FAKE_KEY,
    USERINFO,
    "s3cret-pw-9Xq",
    *(
        enc(s.encode()).decode().rstrip("=")
        for s in (FAKE_KEY, USERINFO)
        for enc in (base64.b64encode, base64.urlsafe_b64encode)
    ),
)
CLI = "import sys; from evalstats.cli import main; sys.exit(main())"
# Every figure format, so that the PNG files too are checked for secrets.
FAST = ["-p", "n_resamples=40", "-p", "seed=1", "--figures", "svg,pdf,png"]


def _leaky_data(dest: Path) -> Path:
    """A small evaluation whose judge texts quote the key and the credentials."""
    simulate(dest, n_tasks=4, n_replicates=2, error_rate=0.0, over_budget_rate=0.0, seed=5)
    path = dest / "judgments.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    basic = base64.b64encode(USERINFO.encode()).decode()
    for i, rec in enumerate(rows):
        if rec["rubric"] != "with-without" or rec.get("raw") is None:
            continue
        if i % 5 == 0:  # not JSON: shown verbatim among the invalid outputs
            rec["raw"] = (
                f"Your key {FAKE_KEY} was sent to {BASE_URL} (Authorization: Basic {basic}); "
                "no verdict."
            )
        else:
            try:
                body = json.loads(rec["raw"])
            except json.JSONDecodeError:
                continue
            if isinstance(body, dict):
                body["reasoning"] = f"{FAKE_KEY} via {BASE_URL}: " + str(body.get("reasoning"))
                rec["raw"] = json.dumps(body)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("safety")
    data = _leaky_data(base / "data")
    out, tmp, runtime = base / "out", base / "tmp", base / "runtime"
    for d in (out / "figures", out / "tables", tmp, runtime):
        d.mkdir(parents=True)
    (out / "figures" / "my-sketch.png").write_bytes(b"user figure")
    (out / "tables" / "my-notes.csv").write_text("mine\n", encoding="utf-8")
    (out / "notes.md").write_text("user notes\n", encoding="utf-8")
    # A previous render wrote a figure this one will not draw: its manifest names it.
    (out / "figures" / "stale_old.svg").write_text("<svg/>", encoding="utf-8")
    (base / "outside.txt").write_text("not OUT's\n", encoding="utf-8")
    listed = ["figures/stale_old.svg", "../outside.txt", "/etc/hostname"]
    hashes = {r: hashlib.sha256((out / r).read_bytes()).hexdigest() for r in listed[:2]}
    (out / MANIFEST).write_text(json.dumps({"files": listed, "sha256": hashes}), encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MPLCONFIGDIR", "IPYTHONDIR") and not k.endswith(("_API_KEY", "_BASE_URL"))
    }
    env |= {
        "TMPDIR": str(tmp),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "OPENAI_BASE_URL": BASE_URL,
    }
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "report", str(data), "-o", str(out), *FAST],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"base": base, "out": out, "tmp": tmp, "runtime": runtime, "log": proc}


@pytest.mark.slow
def test_user_files_in_out_survive(rendered: dict) -> None:
    out = rendered["out"]
    assert (out / "index.html").is_file()
    assert (out / "figures" / "my-sketch.png").read_bytes() == b"user figure"
    assert (out / "tables" / "my-notes.csv").read_text(encoding="utf-8") == "mine\n"
    assert (out / "notes.md").is_file()
    assert (rendered["base"] / "outside.txt").is_file()  # a manifest never reaches outside OUT
    assert not (out / "figures" / "stale_old.svg").exists()  # the report's own, replaced
    listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert "index.html" in listed and "results.json" in listed
    assert any(f.startswith("figures/") for f in listed)
    assert not {"figures/my-sketch.png", "tables/my-notes.csv", "notes.md"} & set(listed)


@pytest.mark.slow
def test_rerender_keeps_user_files_and_replaces_its_own(rendered: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    data = rendered["base"] / "data"
    render_report(data, out, params={"n_resamples": 40, "seed": 1}, figures="svg")
    (out / "figures" / "keep.txt").write_text("mine", encoding="utf-8")
    (out / "figures" / "headline.svg").write_text("edited", encoding="utf-8")
    render_report(data, out, params={"n_resamples": 40, "seed": 1}, figures="svg")
    assert (out / "figures" / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert (out / "figures" / "headline.svg").read_text(encoding="utf-8") != "edited"
    listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert "figures/headline.svg" in listed and "figures/keep.txt" not in listed


@pytest.mark.slow
def test_nothing_left_in_temp_or_runtime_dir(rendered: dict) -> None:
    assert sorted(p.name for p in rendered["tmp"].rglob("*")) == []
    assert sorted(p.name for p in rendered["runtime"].rglob("*")) == []


@pytest.mark.slow
def test_no_secret_in_any_written_file(rendered: dict) -> None:
    out = rendered["out"]
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {p.suffix for p in written} >= {
        ".html",
        ".json",
        ".csv",
        ".ipynb",
        ".png",
        ".svg",
        ".pdf",
    }
    shown = False
    for p in written:
        data = p.read_bytes()
        for form in SECRET_FORMS:
            assert form.encode() not in data, f"{p.relative_to(out)} holds {form!r}"
        shown = shown or b"[redacted]" in data
    assert shown, "the judge texts that echoed the key are not shown at all"
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "[redacted]" in index and "judge-proxy.invalid" in index
    proc = rendered["log"]
    for form in SECRET_FORMS:
        assert form not in proc.stdout + proc.stderr
