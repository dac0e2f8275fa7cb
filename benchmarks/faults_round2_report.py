"""The report's cases of the second fault round (issue 21 items 1, 6 and 7), for
``faults_round2.cases()``: the same columns, counted from the files and the child.

- data lost: a data file, a user's file or an edited report file removed or changed by a
  render; a bad ``-o`` or parameter not refused with exit 2;
- hangs: a render waiting past its bound, a heatmap past its memory cap;
- injections: a formula cell in a CSV the report writes, a live ``<script`` in Markdown
  or sentences, a bidirectional control character left in a page or a LaTeX table.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import json
import shutil
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SAMPLE = ROOT / "data" / "sample"
FAST = ["-p", "n_resamples=40", "-p", "seed=1", "--figures", "svg"]
RENDER_CAP_S = 300.0
BIDI = "\u202e"
SCRIPT = "<script>alert(1)</script>"


def _sha(p: Path) -> str | None:
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def _bytes(p: Path) -> bytes | None:
    return p.read_bytes() if p.is_file() else None


def _sample(dest: Path) -> Path:
    shutil.copytree(SAMPLE, dest)
    return dest


def _risky(cells: list[str]) -> int:
    return sum(c[:1] in ("=", "+", "-", "@", "\t", "\r") and not _number(c) for c in cells)


def _number(c: str) -> bool:
    try:
        float(c)
    except ValueError:
        return False
    return True


def case_out_in_data(tmp: Path, run_cli: Callable, common: Callable, inside: bool) -> Counter:
    data = _sample(tmp / "data")
    before = {p.name: _sha(p) for p in data.iterdir()}
    out = data / "out" if inside else data
    ch = run_cli(["report", str(data), "-o", str(out), *FAST], cap_s=RENDER_CAP_S)
    c = common([ch])
    after = {p.name: _sha(p) for p in data.iterdir()}
    c["data lost"] += int(ch.code != 2 or len(ch.err.strip().splitlines()) != 1)
    c["data lost"] += sum(after.get(k) != v for k, v in before.items())
    return c


def case_rerender(tmp: Path, run_cli: Callable, common: Callable) -> Counter:
    """OUT holds the data directory, a user's note, a data-named file and a figure edited
    since the last render, all listed by an old manifest; a judge-like writer touches the
    journal and the note during the render. Only the stale, unedited figure may go."""
    out = tmp / "out"
    data = _sample(out / "data")
    (out / "figures").mkdir(parents=True)
    keep = {
        "notes.md": b"user notes\n",
        "judgments.jsonl": (data / "judgments.jsonl").read_bytes(),
        "figures/edited.svg": b"<svg>edited by the user</svg>",
    }
    for rel, body in keep.items():
        (out / rel).write_bytes(body)
    (out / "figures" / "stale.svg").write_bytes(b"<svg/>")
    hashes = {rel: _sha(out / rel) for rel in (*keep, "figures/stale.svg")}
    hashes["figures/edited.svg"] = hashlib.sha256(b"<svg>as rendered</svg>").hexdigest()
    hashes["data/judgments.jsonl"] = _sha(data / "judgments.jsonl")
    manifest = {"format": "x", "files": sorted(hashes), "sha256": hashes}
    (out / ".evalstats-report.json").write_text(json.dumps(manifest))
    stop = threading.Event()

    def writer() -> None:  # the journal and a note touched while the render runs
        while not stop.wait(0.3):
            for p in (data / "judgments.jsonl", out / "notes.md"):
                p.touch()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        ch = run_cli(["report", str(data), "-o", str(out), *FAST], cap_s=RENDER_CAP_S)
    finally:
        stop.set()
        thread.join()
    c = common([ch])
    c["data lost"] += int(ch.code != 0)
    c["data lost"] += sum(_bytes(out / rel) != body for rel, body in keep.items())
    c["data lost"] += int(_sha(data / "judgments.jsonl") != hashes["data/judgments.jsonl"])
    try:
        listed = json.loads((out / ".evalstats-report.json").read_text())["sha256"]
    except (OSError, ValueError, KeyError):
        listed = {}
    # What a third render would remove: nothing but the report's own files.
    c["data lost"] += sum(1 for rel in listed if rel in keep or rel.startswith("data/"))
    c["data lost"] += int((out / "figures" / "stale.svg").exists() or not listed)
    return c


def case_locked(tmp: Path, run_cli: Callable, common: Callable) -> Counter:
    data, out = _sample(tmp / "data"), tmp / "out"
    out.mkdir()
    with open(out / ".evalstats-report.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        env = {"EVALSTATS_REPORT_LOCK_WAIT_S": "1"}
        ch = run_cli(["report", str(data), "-o", str(out), *FAST], env, cap_s=RENDER_CAP_S)
    c = common([ch])
    c["data lost"] += int(ch.code != 2 or "another render" not in ch.err)
    c["data lost"] += int((out / "index.html").exists())  # wrote while the other held OUT
    return c


def case_resamples(tmp: Path, run_cli: Callable, common: Callable) -> Counter:
    data = _sample(tmp / "data")
    args = ["report", str(data), "-o", str(tmp / "out"), "-p", "n_resamples=1e9"]
    ch = run_cli(args, cap_s=60.0)
    c = common([ch])
    c["data lost"] += int(ch.code != 2)
    return c


HEATMAP = """
import io, numpy as np, pandas as pd
from evalstats.plots import plot_task_heatmap
n = 10_000
rng = np.random.default_rng(0)
frame = pd.DataFrame({"task_id": np.repeat([f"T{i}" for i in range(n)], 3),
    "replicate": np.tile([1, 2, 3], n), "judge": "j", "rubric": "r", "order": None,
    "status": "ok", "outcome": rng.choice(["win", "tie", "loss"], 3 * n)})
plot_task_heatmap(frame).savefig(io.BytesIO(), format="svg")
"""


def case_heatmap(tmp: Path, run_python: Callable, common: Callable) -> Counter:
    ch = run_python(HEATMAP, cap_s=120.0, cap_mb=1500.0)
    c = common([ch])
    c["data lost"] += int(ch.code != 0)
    return c


def _attack_frame() -> object:
    import pandas as pd
    from faults_round2 import ATTACKS

    return pd.DataFrame({"task_id": [f"T{i}" for i in range(len(ATTACKS))], "answer": ATTACKS})


def case_report_tables(tmp: Path) -> Counter:
    tmp.mkdir(parents=True, exist_ok=True)
    from evalstats.report._results import Results

    Results({"attack": _attack_frame()}, {}, {}, False).write_tables(tmp)
    with (tmp / "tables" / "attack.csv").open(newline="", encoding="utf-8") as fh:
        cells = [x for row in csv.reader(fh) for x in row]
    return Counter(injections=_risky(cells))


def case_frame_csv(tmp: Path) -> Counter:
    tmp.mkdir(parents=True, exist_ok=True)
    from evalstats.records import read_table_raw, write_frame_atomic

    frame = _attack_frame()
    path = write_frame_atomic(frame, tmp / "frame.csv")
    with path.open(newline="", encoding="utf-8") as fh:
        cells = [x for row in csv.reader(fh) for x in row]
    back = read_table_raw(path)[0]  # what evalstats reads back is what it wrote
    lost = int(back["answer"].tolist() != frame["answer"].tolist())
    return Counter(injections=_risky(cells), **{"data lost": lost})


def case_markdown(tmp: Path) -> Counter:
    tmp.mkdir(parents=True, exist_ok=True)
    import pandas as pd

    from evalstats.report import compute_results, headline_paragraph, result_sentences
    from evalstats.report._export import markdown_table

    text = markdown_table(pd.DataFrame({"judge": [SCRIPT], "n": [1]}))
    doc = compute_results(SAMPLE, n_resamples=50, seed=0).to_json()
    doc.setdefault("provenance", {})["arm_names"] = {"with": SCRIPT, "without": "<img src=x>"}
    text += headline_paragraph(doc) + "\n".join(result_sentences(doc))
    return Counter(injections=text.count("<script") + text.count("<img"))


def case_bidi(tmp: Path) -> Counter:
    tmp.mkdir(parents=True, exist_ok=True)
    import pandas as pd

    from evalstats.report._export import latex_table
    from evalstats.report._html import page

    html = page(f"task {BIDI}x", f"<table><td>answer {BIDI}txt.exe</td></table>")
    tex = latex_table(pd.DataFrame({"task": [f"T{BIDI}1"], "n": [1]}))
    return Counter(injections=html.count(BIDI) + tex.count(BIDI))


def cases(run_cli: Callable, run_python: Callable, common: Callable) -> list[tuple]:
    """(class, name, case) for ``faults_round2.cases()``."""
    return [
        ("report", "-o the data directory", lambda t: case_out_in_data(t, run_cli, common, False)),
        (
            "report",
            "-o inside the data directory",
            lambda t: case_out_in_data(t, run_cli, common, True),
        ),
        (
            "report",
            "re-render: journal, notes, edited figure",
            lambda t: case_rerender(t, run_cli, common),
        ),
        ("report", "second render into a locked OUT", lambda t: case_locked(t, run_cli, common)),
        (
            "bounded memory",
            "report -p n_resamples=1e9",
            lambda t: case_resamples(t, run_cli, common),
        ),
        (
            "bounded memory",
            "heatmap of 10,000 tasks",
            lambda t: case_heatmap(t, run_python, common),
        ),
        ("injection", "report CSV tables of formula cells", case_report_tables),
        ("injection", "verdict frame CSV (write_frame_atomic)", case_frame_csv),
        ("injection", "<script> in Markdown table, sentences", case_markdown),
        ("injection", "bidi controls in the HTML page, LaTeX", case_bidi),
    ]
