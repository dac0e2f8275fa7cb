"""The third round of fault cases (issue 32), run by ``bench_faults.py --round 3``.

Same harness as the second round (``faults_round2.py``): the real ``evalstats`` command line
in a child process, against the loopback fake (here metered: it sums what each answered
call would bill at the model's price) or on hostile input. Columns, besides round 2's:

- over cap: the fake billed more than ``--max-usd`` (or the run stopped far below it);
- data lost: a data file, a filled sheet, a label or a previous report changed or removed by
  a command that had to refuse (``--force`` unlocks an overwrite), or valid data refused;
- memory: the child passed its memory cap (hangs: its time cap);
- silent wrong results: a number published without its data (n = 20 for 10 pairs, an
  estimate for an arm without verdicts, a stale verdict), a bad parameter accepted, a
  warning the statistic computed missing from the results, a judge's text altered.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests")]

from fakellm import FakeLLM  # noqa: E402
from faults_round2 import (  # noqa: E402
    JUDGE,
    KEY,
    Child,
    _claude_source,
    _common,
    _env,
    _journal,
    _judge_args,
    _money,
    data_dir,
    run_cli,
)

COLUMNS = (
    "paid lost",
    "double-paid",
    "over cap",
    "data lost",
    "hangs",
    "memory",
    "tracebacks",
    "leaks",
    "injections",
    "silent wrong results",
)
SAMPLE, KARM = ROOT / "data" / "sample", ROOT / "data" / "karm"
FAST = ["-p", "n_resamples=40", "-p", "seed=1", "--figures", "svg"]
RENDER_CAP_S = 300.0
PRICE = {"gpt-4o": (2.5, 10.0), "claude-sonnet-4-20250514": (3.0, 15.0)}  # USD per Mtok


class Meter(FakeLLM):
    """The fake, summing the USD of every answer it bills (``discount``: batch price)."""

    def __init__(self, **kw: object) -> None:
        super().__init__(api_key=kw.pop("api_key", KEY), **kw)
        self.billed_usd, self.discount = 0.0, 1.0
        base = self._server.RequestHandlerClass

        class EchoPath(base):  # a 404 quoting the path it was asked, as many servers do
            def _send(self, status: int, payload: object, **kw: object) -> None:
                if status == 404 and isinstance(payload, dict):
                    payload["error"]["message"] += f" (no route {self.path})"
                super()._send(status, payload, **kw)

        self._server.RequestHandlerClass = EchoPath

    def _answer(self, provider: str, params: dict, text: str | None = None) -> dict:
        body = super()._answer(provider, params, text)
        u = body["usage"]
        n_in, n_out = (
            u.get("input_tokens", u.get("prompt_tokens")),
            u.get("output_tokens", u.get("completion_tokens")),
        )
        p_in, p_out = PRICE[params["model"]]
        with self._lock:
            self.billed_usd += (n_in * p_in + n_out * p_out) / 1e6 * self.discount
        return body


def _sha(p: Path) -> str | None:
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def _tree(root: Path) -> dict[str, str | None]:
    return {str(p.relative_to(root)): _sha(p) for p in sorted(root.rglob("*")) if p.is_file()}


def _one_line_2(ch: Child) -> int:
    """1 unless the child refused with exit 2 and exactly one line on stderr."""
    return int(ch.code != 2 or len(ch.err.strip().splitlines()) != 1)


def _caps(children: list[Child]) -> Counter:
    """round 2's counts with the memory cap apart from the time cap."""
    c = _common(children)
    c["memory"] = sum(ch.code == 86 for ch in children)
    c["hangs"] = sum(ch.over_cap and ch.code != 86 for ch in children)
    return c


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _write_lines(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def karm_dir(root: Path, n: int, arms: tuple[str, ...] = ("none", "v1", "v2")) -> Path:
    """``n`` tasks x 1 replicate of K arms, with arms.toml (reference: the first)."""
    data = data_dir(root, n)
    runs = [r for r in _lines(data / "runs.jsonl") if r["arm"] == "with"]
    _write_lines(
        data / "runs.jsonl",
        [dict(r, arm=a, answer=f"{a} {r['task_id']}") for r in runs for a in arms],
    )
    _arms_toml(data, arms)
    return data


def _arms_toml(data: Path, arms: tuple[str, ...] | list[str]) -> None:
    body = "".join(f'"{a}" = {{ name = "arm {a}", tool = "tool {a}" }}\n' for a in arms)
    (data / "arms.toml").write_text(f'reference = "{arms[0]}"\n\n[arms]\n{body}')


# The child watches its own memory: past the cap it exits 86 at once (a 60-arm frame once
# took 8 GB, more than this machine may give one case).
WATCH = """
import os, sys, threading, time
def _watch(cap=float(os.environ.get("FAULTS_CAP_MB", "1500")) * 1e6):
    page = os.sysconf("SC_PAGE_SIZE")
    while True:
        with open("/proc/self/statm") as f:
            if int(f.read().split()[1]) * page > cap:
                os._exit(86)
        time.sleep(0.05)
threading.Thread(target=_watch, daemon=True).start()
"""
MAIN = "from evalstats.cli import main; sys.exit(main())"


def cli(
    args: list[str], env: dict | None = None, *, cap_mb: float = 1500.0, code: str = MAIN, **kw
) -> Child:
    """``evalstats ARGS`` (or ``code``) in a watched child."""
    env = dict(env or {}, FAULTS_CAP_MB=str(cap_mb))
    return run_cli(args, env, code=WATCH + code, cap_mb=cap_mb * 2, **kw)


def _python(code: str, **caps: float) -> Child:
    return cli([], code=code, **caps)


def _frame_rows(data: Path, tmp: Path) -> tuple[Child, list[dict]]:
    """``evalstats frame DATA`` as rows (empty when it failed)."""
    out = tmp / "frame.jsonl"
    ch = cli(["frame", str(data), "-o", str(out)])
    return ch, _lines(out) if out.is_file() else []


# --------------------------------------------------------------------- 1. the spending cap


def case_batch_cap(tmp: Path) -> Counter:
    """``judge --batch --max-usd`` killed while it polls, resumed twice: one cap in all, the
    batch already paid collected rather than submitted again (answers near --max-tokens, so
    the worst case is near the real cost)."""
    cap = 0.03
    with Meter(batch_polls=10**9) as fake:
        fake.discount = 0.5
        data = data_dir(tmp / "data", 40)
        args = _judge_args(data, "openai", "--batch", "--poll-interval", "0.05")
        args += ["--max-usd", str(cap), "--max-tokens", "100"]
        children = []
        for last in (False, False, True):
            if last:
                fake.batch_polls = 1
                for batch in fake.batches.values():
                    batch["polls"] = 10**9
            n, t0 = len(fake.batches), [0.0]

            def submitted(n: int = n, t0: list = t0) -> bool:
                t0[0] = t0[0] or (len(fake.batches) > n and time.perf_counter())
                return bool(t0[0])

            # Killed once it polls a batch it submitted, or (a resume whose pending batch
            # already holds the cap submits none) once it has polled the old one for 5 s.
            start = time.perf_counter()
            polling = lambda t0=t0, s=start, n=n: (  # noqa: E731
                bool(t0[0])
                and time.perf_counter() - t0[0] > 1
                or n > 0
                and time.perf_counter() - s > 5
            )
            submitted = submitted if n == 0 else (lambda: True)
            signals = () if last else ((submitted, 0), (polling, signal.SIGKILL))
            children.append(cli(args, _env(fake), signals=signals))
        c = _money(fake, _journal(data / "judgments.jsonl"), children) + _caps(children)
        c["over cap"] += int(fake.billed_usd > cap)
        return c


def case_timeout_cap(tmp: Path) -> Counter:
    """Every attempt is billed, then times out at the client; run three times (resumes):
    the billed attempts count, in this run and the next."""
    cap = 0.05
    with Meter(latency=0.6) as fake:
        data = data_dir(tmp / "data", 20)
        args = _judge_args(data, "openai", "--timeout", "0.2", "--concurrency", "8")
        args += ["--max-retries", "2", "--max-usd", str(cap)]
        children = [cli(args, _env(fake)) for _ in range(3)]
        time.sleep(0.7)  # the last attempts finish (and bill) on the server
        c = _caps(children)
        c["over cap"] += int(fake.billed_usd > cap)
        return c


def case_inflight_cap(tmp: Path) -> Counter:
    """A cap worth ~5 worst-case calls and ~24 real ones: all 10 calls are made."""
    cap = 0.06
    with Meter(latency=0.2) as fake:
        data = data_dir(tmp / "data", 10)
        ch = cli(_judge_args(data, "openai", "--max-usd", str(cap)), _env(fake))
        journal = _journal(data / "judgments.jsonl")
        c = _money(fake, journal, [ch]) + _caps([ch])
        done = {x["call_key"] for x in journal if x.get("error") is None and x.get("call_key")}
        c["over cap"] += int(fake.billed_usd > cap or len(done) < 10)
        return c


# ------------------------------------------------------------- 2. no write over the data


def case_out_over_data(tmp: Path, command: list[str], target: str) -> Counter:
    """``evalstats COMMAND DATA -o DATA/<target>``: refused, every data file unchanged."""
    data = _copy(SAMPLE, tmp / "data")
    if target.startswith("labels"):
        _hand_labels(data, 4)
    before = _tree(data)
    ch = cli([command[0], str(data), *command[1:], str(data / target)])
    c = _caps([ch])
    c["data lost"] += _one_line_2(ch) + sum(_tree(data).get(k) != v for k, v in before.items())
    return c


def case_judge_out_runs(tmp: Path) -> Counter:
    with Meter() as fake:
        data = data_dir(tmp / "data", 2)
        before = _tree(data)
        ch = cli(_judge_args(data, "openai", "--out", str(data / "runs.jsonl")), _env(fake))
        c = _money(fake, [], [ch]) + _caps([ch])
        c["data lost"] += _one_line_2(ch) + sum(_tree(data).get(k) != v for k, v in before.items())
        c["data lost"] += int(fake.counts()["requests"] > 0)
        return c


def case_user_file(tmp: Path, command: str) -> Counter:
    """``-o`` names a file the user wrote: refused without ``--force``."""
    data = _copy(SAMPLE, tmp / "data")
    mine = tmp / "mine.csv"
    mine.write_text("my,own\n1,2\n")
    ch = cli([command, str(data), "-o", str(mine)])
    c = _caps([ch])
    c["data lost"] += _one_line_2(ch) + int(mine.read_text() != "my,own\n1,2\n")
    return c


def _draw(data: Path, sheet: Path, seed: int, n: int = 4) -> Child:
    return cli(["label", str(data), "-n", str(n), "--seed", str(seed), "-o", str(sheet)])


def _fill(sheet: Path, labeler: str) -> None:
    with sheet.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for i, row in enumerate(rows):
        row["verdict"], row["labeler"] = ("a", "b", "tie")[i % 3], labeler
    with sheet.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def case_redraw_sheet(tmp: Path) -> Counter:
    data, sheet = _copy(SAMPLE, tmp / "data"), tmp / "sheet.csv"
    first = _draw(data, sheet, 1)
    _fill(sheet, "alice")
    filled = sheet.read_bytes()
    second = _draw(data, sheet, 2)
    c = _caps([first, second])
    c["data lost"] += int(first.code != 0) + _one_line_2(second) + int(sheet.read_bytes() != filled)
    return c


def case_concurrent_read(tmp: Path) -> Counter:
    """Four ``label --read`` of four filled sheets at once: every label is kept."""
    data = _copy(SAMPLE, tmp / "data")
    sheets = [tmp / f"sheet{i}.csv" for i in range(4)]
    draw = "from evalstats import draw_sheet\n" + "".join(
        f"draw_sheet({str(data)!r}, 3, seed={i}, path={str(s)!r})\n" for i, s in enumerate(sheets)
    )
    drawn = _python(draw)
    for i, s in enumerate(sheets):
        _fill(s, f"labeler{i}")
    # Earlier labels (18,000) make each read-merge-write long enough for the four to overlap.
    pairs = {(r["task_id"], r["replicate"]) for r in _lines(data / "runs.jsonl")}
    old = [
        {"task_id": t, "replicate": r, "labeler": f"old{k}", "outcome": "tie",
         "created_at": "2026-06-01T10:00:00Z"}
        for k in range(18_000 // len(pairs)) for t, r in sorted(pairs)
    ]  # fmt: skip
    _write_lines(data / "labels.jsonl", old)
    reads: list[Child] = []
    threads = [
        threading.Thread(
            target=lambda s=s: reads.append(cli(["label", str(data), "--read", str(s)]))
        )
        for s in sheets
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    c = _caps([drawn, *reads])
    labels = data / "labels.jsonl"
    c["data lost"] += len(old) + 12 - (len(_lines(labels)) if labels.is_file() else 0)
    return c


# ------------------------------------------------- 3. one verdict per call that still exists


def _judged(fake: FakeLLM, data: Path, *extra: str) -> Child:
    return cli(_judge_args(data, "openai", *extra), _env(fake))


def case_rejudge_options(tmp: Path) -> Counter:
    """``judge`` again with ``--max-tokens 2048``: the frame keeps one verdict per pair."""
    with Meter() as fake:
        data = data_dir(tmp / "data", 10)
        runs = [_judged(fake, data), _judged(fake, data, "--max-tokens", "2048")]
        ch, rows = _frame_rows(data, tmp)
        c = _money(fake, _journal(data / "judgments.jsonl"), runs) + _caps([*runs, ch])
        c["silent wrong results"] += max(0, len(rows) - 10) + int(ch.code != 0)
        return c


def case_reimport(tmp: Path) -> Counter:
    """``import table`` of new answers over a judged directory: no verdict of an old one."""
    with Meter() as fake:
        data = data_dir(tmp / "data", 4)
        first = _judged(fake, data)
        src = tmp / "new_runs.jsonl"
        _write_lines(
            src, [dict(r, answer="rewritten " + r["answer"]) for r in _lines(data / "runs.jsonl")]
        )
        shutil.copy(data / "tasks.jsonl", tmp / "tasks.jsonl")
        imp = cli(
            ["import", "table", str(src), "--tasks", str(tmp / "tasks.jsonl"), "-o", str(data)]
        )
        ch, rows = _frame_rows(data, tmp)
        c = _caps([first, imp, ch])
        if imp.code == 0:  # taken: the old verdicts are stale, never counted
            c["silent wrong results"] += sum(r.get("status") == "ok" for r in rows)
        else:
            c["data lost"] += _one_line_2(imp)
        return c


def case_reorder_arms(tmp: Path) -> Counter:
    """Reversing arms.toml's order re-sends no byte-identical body."""
    with Meter() as fake:
        data = karm_dir(tmp / "data", 4)
        args = ("--rubric", "blind-pair", "--orders", "both", "--pairs", "all")
        first = cli([*_judge_args(data, "openai"), *args], _env(fake))
        _arms_toml(data, ("v2", "v1", "none"))
        second = cli([*_judge_args(data, "openai"), *args], _env(fake))
        journal = _journal(data / "judgments.jsonl")
        return _money(fake, journal, [first, second]) + _caps([first, second])


def case_grow_arms(tmp: Path) -> Counter:
    """A judged WITH/WITHOUT study grows a third arm: only its pairs are paid, and the
    directory still reads."""
    with Meter() as fake:
        data = data_dir(tmp / "data", 3)
        args = ("--rubric", "blind-pair")
        first = cli([*_judge_args(data, "openai"), *args], _env(fake))
        runs = _lines(data / "runs.jsonl")
        new = [dict(r, arm="v2", answer="v2 " + r["task_id"]) for r in runs if r["arm"] == "with"]
        _write_lines(data / "runs.jsonl", runs + new)
        _arms_toml(data, ("without", "with", "v2"))
        second = cli([*_judge_args(data, "openai"), *args, "--pairs", "all"], _env(fake))
        summary = cli(["summary", str(data)])
        c = _money(fake, _journal(data / "judgments.jsonl"), [first, second])
        c += _caps([first, second, summary])
        c["data lost"] += int(second.code != 0) + int(summary.code != 0)
        # 3 + 6 new calls: any other is a pair paid again, identical body or not
        c["double-paid"] = max(c["double-paid"], fake.counts()["requests"] - 9)
        return c


# ------------------------------------------------------------ 4. no estimate without data


def _in_child(code: str, cap_s: float = 300.0, cap_mb: float = 1500.0) -> tuple[Child, dict]:
    """Run ``code`` (which prints one JSON line last) in a child; its result."""
    ch = _python(code, cap_s=cap_s, cap_mb=cap_mb)
    try:
        return ch, json.loads(ch.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return ch, {}


def case_arm_without_verdicts(tmp: Path) -> Counter:
    data = _copy(KARM, tmp / "data")
    rows = [x for x in _lines(data / "judgments.jsonl") if "v2" not in (x["arm_a"], x["arm_b"])]
    _write_lines(data / "judgments.jsonl", rows)
    ch, out = _in_child(f"""
import json, warnings
warnings.simplefilter("ignore")
from evalstats.report import compute
res = compute("evaluation", {str(data)!r}, pages=["comparison"], n_resamples=40, seed=1)
doc = json.loads(json.dumps(res.to_json(), default=str))
hits = 0
for name in ("compare", "rank", "rank_sets", "beats", "pareto"):  # tables of the verdicts
    for row in doc["tables"].get(name) or []:
        if isinstance(row, dict) and "v2" in (row.get("arm"), row.get("arm_a"), row.get("arm_b")):
            hits += "ratio" not in str(row.get("statistic")) and isinstance(row.get("estimate"), (int, float))
print(json.dumps({{"hits": hits}}))
""")
    c = _caps([ch])
    c["silent wrong results"] += out.get("hits", 0) + int(ch.code != 0)
    return c


def case_refused_call(tmp: Path, good: str, bad: str, cap_s: float = 300.0) -> Counter:
    """The public call ``good`` works; ``bad`` (one argument changed) raises ParameterError
    (an EvalstatsError), in a child capped in time and memory."""
    ch, out = _in_child(
        f"""
import json, warnings
warnings.simplefilter("ignore")
from evalstats import EvalstatsError, load_dir, load_frame
from evalstats.stats import arm_costs, rank
f, ds = load_frame({str(KARM)!r}), load_dir({str(KARM)!r})
{good}
try:
    {bad}
    print(json.dumps({{"taken": 1}}))
except EvalstatsError:
    print(json.dumps({{"taken": 0}}))
""",
        cap_s=cap_s,
    )
    c = _caps([ch])
    c["silent wrong results"] += out.get("taken", 0)
    c["data lost"] += int(not out and not ch.over_cap and ch.code != 86)
    return c


def case_plan_margin(tmp: Path) -> Counter:
    data = _copy(SAMPLE, tmp / "data")
    (data / "plan.toml").write_text(
        "written_at = 2026-05-01T11:00:00+02:00\n"
        'primary_rubric = "with-without"\n'
        'primary_judge = "anthropic:claude-sonnet-4-20250514"\n'
        'statistic = "net_win"\nalpha = 0.05\nsidedness = "two-sided"\n'
        'margin = 50\nmargin_kind = "equivalence"\n'
    )
    ch = cli(["summary", str(data)])
    c = _caps([ch])
    c["silent wrong results"] += _one_line_2(ch)
    return c


def _hand_labels(data: Path, n: int, provenance: bool = False) -> None:
    runs = [r for r in _lines(data / "runs.jsonl") if r["arm"] == "with"][:n]
    _write_lines(
        data / "labels.jsonl",
        [
            {
                "task_id": r["task_id"],
                "replicate": r["replicate"],
                "labeler": "me",
                "outcome": ("win", "tie", "loss")[i % 3],
                "created_at": "2026-06-01T10:00:00Z",
            }
            for i, r in enumerate(runs)
        ],
    )


def case_ppi_warning(tmp: Path) -> Counter:
    """Hand-picked labels: the "not a random sample" warning reaches the results."""
    data = _copy(SAMPLE, tmp / "data")
    _hand_labels(data, 30)
    ch, out = _in_child(f"""
import json, warnings
warnings.simplefilter("ignore")
from evalstats.report import compute_results
text = json.dumps(compute_results({str(data)!r}, n_resamples=40, seed=1).to_json(), default=str)
print(json.dumps({{"said": "random sample" in text}}))
""")
    c = _caps([ch])
    c["silent wrong results"] += int(not out.get("said"))
    return c


def case_started_now(tmp: Path) -> Counter:
    data = data_dir(tmp / "data", 2)
    runs = _lines(data / "runs.jsonl")
    runs[1]["started_at"] = "now"
    _write_lines(data / "runs.jsonl", runs)
    ch = cli(
        ["judge", str(data), "--rubric", "with-without", "--judge", JUDGE["openai"], "--dry-run"]
    )
    c = _caps([ch])
    c["silent wrong results"] += _one_line_2(ch)
    return c


def case_audit_model_id(tmp: Path) -> Counter:
    """A Claude journaled behind "openai:gpt-4o" judging a Claude agent fails judge_not_self."""
    data = _copy(SAMPLE, tmp / "data")
    claude = "claude-sonnet-4-20250514"
    _write_lines(
        data / "runs.jsonl",
        [dict(r, agent_model="anthropic:" + claude) for r in _lines(data / "runs.jsonl")],
    )
    rows = [
        dict(x, model_id=claude)
        for x in _lines(data / "judgments.jsonl")
        if x["judge"].startswith("openai:")
    ]
    _write_lines(data / "judgments.jsonl", rows)
    ch, out = _in_child(f"""
import json, warnings
warnings.simplefilter("ignore")
from evalstats import audit, load_dir
a = audit(load_dir({str(data)!r}))
print(json.dumps({{"status": str(a.loc[a["check"] == "judge_not_self", "status"].iloc[0])}}))
""")
    c = _caps([ch])
    c["silent wrong results"] += int(out.get("status") in ("pass", None))
    return c


def case_simulate(tmp: Path, *args: str) -> Counter:
    ch = cli(["simulate", str(tmp / "sim"), "--tasks", "3", "--replicates", "2", *args])
    c = _caps([ch])
    c["silent wrong results"] += _one_line_2(ch)
    return c


# ---------------------------------------------------------------------------- 5. renders

_BASE: dict[str, Path] = {}


def _rendered(tmp: Path) -> tuple[Path, Child | None]:
    """A copy of one K-arm render (made once per bench run)."""
    ch = None
    if "out" not in _BASE:
        base = Path(tempfile.mkdtemp(prefix="faults3-base-"))
        _BASE["data"] = _copy(KARM, base / "data")
        _BASE["out"] = base / "out"
        ch = cli(["report", str(_BASE["data"]), "-o", str(_BASE["out"]), *FAST], cap_s=RENDER_CAP_S)
    out = _copy(_BASE["out"], tmp / "out")
    return out, ch


def _render(out: Path, *extra: str, **kw: object) -> Child:
    return cli(
        ["report", str(_BASE["data"]), "-o", str(out), *FAST, *extra], cap_s=RENDER_CAP_S, **kw
    )


def _first_write(out: Path) -> Callable[[], bool]:
    """True once a render has written (or removed) anything in OUT."""
    seen = {(p, p.stat().st_mtime_ns) for p in out.rglob("*")}

    def writing() -> bool:
        try:
            return {(p, p.stat().st_mtime_ns) for p in out.rglob("*")} != seen
        except OSError:
            return True

    return writing


def case_interrupted_render(tmp: Path) -> Counter:
    """Ctrl-C once the re-render writes OUT: the previous report is left whole."""
    out, base = _rendered(tmp)
    before = _tree(out)
    ch = _render(out, signals=((_first_write(out), signal.SIGINT),))
    c = _caps([x for x in (base, ch) if x])
    after = _tree(out)
    pages = [k for k in before if k.endswith(".html") or k == "results.json"]
    if ch.code == 0:  # finished before the signal: a whole new report
        c["data lost"] += sum(after.get(k) is None for k in pages)
    else:
        c["data lost"] += sum(after.get(k) != before[k] for k in pages)
    return c


def case_user_figure(tmp: Path) -> Counter:
    """A figure the user saves into OUT while a render writes it is neither claimed (in the
    manifest, for the next render to remove) nor removed."""
    out, base = _rendered(tmp)
    mine, writing, stop = out / "figures" / "mine.svg", _first_write(out), threading.Event()

    def save() -> None:
        while not stop.wait(0.05):
            if writing():
                mine.write_text("<svg>mine</svg>")
                return

    thread = threading.Thread(target=save, daemon=True)
    thread.start()
    ch = _render(out)
    stop.set()
    thread.join()
    c = _caps([x for x in (base, ch) if x])
    try:
        listed = json.loads((out / ".evalstats-report.json").read_text())
    except (OSError, ValueError):
        listed = {}
    claimed = "figures/mine.svg" in json.dumps(listed)
    c["data lost"] += int(ch.code != 0) + int(not mine.is_file()) + int(claimed)
    return c


def case_string_param(tmp: Path, param: str) -> Counter:
    """``-p confidence='"0.9"'``: refused before a kernel starts, the last report intact."""
    out, base = _rendered(tmp)
    before = _tree(out)
    ch = _render(out, "-p", param)
    c = _caps([x for x in (base, ch) if x])
    c["data lost"] += _one_line_2(ch) + sum(_tree(out).get(k) != v for k, v in before.items())
    return c


def case_comparison_audit(tmp: Path) -> Counter:
    out, base = _rendered(tmp)
    c = _caps([base] if base else [])
    page = out / "comparison.html"
    c["silent wrong results"] += int(not page.is_file() or "judge_not_self" not in page.read_text())
    return c


# ------------------------------------------------------------------- 6. bounded by design


def _sim_arms(root: Path, k: int, pairs: str, tasks: int = 2) -> Path:
    arms = ",".join(f"a{i:03d}" for i in range(k))
    strengths = ",".join(f"{i / k:.3f}" for i in range(k))
    cli(["simulate", str(root), "--arms", arms, "--reference", "a000", "--strengths", strengths,
             "--pairs", pairs, "--tasks", str(tasks), "--replicates", "1", "--judge", JUDGE["openai"],
             "--rubric", "with-without", "--seed", "1"])  # fmt: skip
    return root


def case_many_arms(tmp: Path, k: int, pairs: str) -> Counter:
    data = _sim_arms(tmp / "data", k, pairs)
    ch, out = _in_child(
        f"""
import json, resource, warnings
warnings.simplefilter("ignore")
from evalstats.report import compute
compute("evaluation", {str(data)!r}, n_resamples=40, seed=1)
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"ok": 1, "cpu_s": use.ru_utime + use.ru_stime}}))
""",
        cap_s=240.0,
        cap_mb=1500.0,
    )
    print(f"    {k} arms: CPU {out.get('cpu_s', float('nan')):.1f} s, peak RSS {ch.rss_mb:.0f} MB")
    c = _caps([ch])
    c["data lost"] += int(not out.get("ok") and not ch.over_cap)
    return c


def case_resamples_arms(tmp: Path) -> Counter:
    data = _sim_arms(tmp / "data", 10, "all")
    args = ["report", str(data), "-o", str(tmp / "out"), "-p", "n_resamples=1000000"]
    ch = cli(args, cap_s=180.0, cap_mb=1500.0)
    c = _caps([ch])
    c["data lost"] += _one_line_2(ch) * int(not ch.over_cap)
    return c


# -------------------------------------------------------------- 7. injection and leaks

BEACON = "![x](https://evil.example/beacon.png)"


def case_export_injection(tmp: Path, where: str) -> Counter:
    """A task id of Markdown image syntax, or an arm name with a newline and a heading,
    exported as Markdown tables and sentences: inert (or the arm name refused in one line)."""
    data = _copy(KARM, tmp / "data")
    if where == "task id":
        for name in ("tasks.jsonl", "runs.jsonl", "judgments.jsonl"):
            p = data / name
            p.write_text(p.read_text().replace('"T01"', json.dumps(BEACON)))
    else:
        text = (data / "arms.toml").read_text()
        (data / "arms.toml").write_text(text.replace('"arm v1"', '"arm v1\\n# Injected"'))
    ch, out = _in_child(f"""
import json, warnings
warnings.simplefilter("ignore")
from evalstats import EvalstatsError
from evalstats.report import compute
try:
    res = compute("evaluation", {str(data)!r}, n_resamples=40, seed=1)
except EvalstatsError as e:
    print(json.dumps({{"refused": str(e)}}))
else:
    open({str(tmp / "results.json")!r}, "w").write(json.dumps(res.to_json(), default=str))
    print("{{}}")
""")
    c = _caps([ch])
    if "refused" in out:
        c["data lost"] += int(where == "task id" or "\n" in out["refused"])
        return c
    md, sentences = tmp / "md", tmp / "sentences.md"
    exp = cli(
        ["export", str(tmp / "results.json"), "--markdown", str(md), "--sentences", str(sentences)]
    )
    c += _caps([exp])
    text = "".join(p.read_text() for p in [*md.glob("*.md"), sentences] if p.is_file())
    c["injections"] += text.count(BEACON)
    c["injections"] += sum(x.lstrip().startswith("# Injected") for x in text.splitlines())
    c["data lost"] += int(ch.code != 0 or exp.code != 0)
    return c


def case_base_url_secret(tmp: Path) -> Counter:
    secret = "qs-secret-5f3b9c2e7a1d4f60"
    with Meter(echo_key=True) as fake:
        data = data_dir(tmp / "data", 1)
        fake.script(["500", "500", "500"])
        env = _env(fake, OPENAI_BASE_URL=fake.openai_url + f"?api-key={secret}")
        ch = cli(_judge_args(data, "openai"), env)
        out = data / "judgments.jsonl"
        c = _caps([ch])
        text = ch.out + ch.err + (out.read_text() if out.is_file() else "")
        c["leaks"] += text.count(secret)
        return c


def case_dummy_key(tmp: Path) -> Counter:
    """``OPENAI_API_KEY=ollama``: a judge's "ollama" is journaled as written."""

    def reply(system: str, user: str, model: str) -> str:
        return json.dumps({"label": "(b)", "reasoning": "Both run on ollama; ollama serves.",
                           "facts_correct_with": "3/3", "facts_correct_without": "3/3",
                           "hallucinations_with": "0", "hallucinations_without": "0",
                           "cost_ratio": "0.8", "uncertainty": "low"})  # fmt: skip

    with Meter(api_key="ollama", reply=reply) as fake:
        data = data_dir(tmp / "data", 2)
        env = dict(_env(fake), OPENAI_API_KEY="ollama")
        ch = cli(_judge_args(data, "openai"), env)
        journal = _journal(data / "judgments.jsonl")
        c = _caps([ch])
        raws = [x.get("raw") or "" for x in journal if x.get("error") is None]
        c["silent wrong results"] += int(not raws) + sum("[redacted]" in r for r in raws)
        return c


# --------------------------------------------------------------------- 8. bad input, one line


def case_refused(tmp: Path, args: Callable[[Path], list[str]], names: str = "") -> Counter:
    """A bad input: one line on stderr (naming ``names``), exit 2."""
    ch = cli(args(tmp))
    c = _caps([ch])
    c["data lost"] += _one_line_2(ch) or int(names not in ch.err)
    return c


def _claude_result(
    tmp: Path, edit: Callable[[dict], None], name: str = "t1__serena__1.jsonl"
) -> list[str]:
    from faults_round2 import TESTS

    events = [
        json.loads(x)
        for x in (TESTS / "fixtures/importers/claude_code" / name).read_text().splitlines()
        if x.strip()
    ]
    for e in events:
        if e.get("type") == "result":
            edit(e)
    src = tmp / "src"
    src.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(e, allow_nan=True) + "\n" for e in events)
    return ["import", "claude-code", *_claude_source(src, name, text), "-o", str(tmp / "out")]


def _set(path: str, value: object) -> Callable[[dict], None]:
    def edit(event: dict) -> None:
        *parents, last = path.split(".")
        node = event
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value

    return edit


def case_truncated_usage(tmp: Path) -> Counter:
    """usage 300.9 tokens: refused (exit 2), never truncated to 300."""
    return case_refused(tmp, lambda t: _claude_result(t, _set("usage.output_tokens", 300.9)))


def case_surrogate(tmp: Path) -> Counter:
    """A lone surrogate in an answer: judged (or refused in one line), no traceback."""
    with Meter() as fake:
        data = data_dir(tmp / "data", 2)
        text = (data / "runs.jsonl").read_text()
        (data / "runs.jsonl").write_text(text.replace('"with T000"', '"with \\ud800 T000"', 1))
        ch = cli(_judge_args(data, "openai"), _env(fake))
        frame = cli(["summary", str(data)])
        c = _caps([ch, frame])
        c["data lost"] += int(ch.code not in (0, 2) or (ch.code == 2 and _one_line_2(ch)))
        c["data lost"] += int(frame.code not in (0, 2) or (frame.code == 2 and _one_line_2(frame)))
        return c


def _results_json(tmp: Path, text: str) -> list[str]:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "results.json").write_text(text)
    return [
        "export",
        str(tmp / "results.json"),
        "--markdown",
        str(tmp / "md"),
        "--macros",
        str(tmp / "m.tex"),
    ]


def _arm_ids(tmp: Path, ids: dict[str, str]) -> list[str]:
    """The K-arm sample with its arm ids renamed, exported with --macros."""
    data = _copy(KARM, tmp / "data")
    for name in ("runs.jsonl", "judgments.jsonl", "arms.toml"):
        p = data / name
        text = p.read_text()
        for old, new in ids.items():
            text = text.replace(f'"{old}"', json.dumps(new, ensure_ascii=False))
        p.write_text(text)
    code = f"""
import json, warnings
warnings.simplefilter("ignore")
from evalstats.report import compute
res = compute("evaluation", {str(data)!r}, pages=["comparison"], n_resamples=40, seed=1)
open({str(tmp / "results.json")!r}, "w").write(json.dumps(res.to_json(), default=str))
"""
    _python(code)
    return ["export", str(tmp / "results.json"), "--macros", str(tmp / "m.tex")]


def case_macros(tmp: Path, ids: dict[str, str]) -> Counter:
    """Arm ids that are not ASCII letters, or collide once made letters: macros or one line."""
    ch = cli(_arm_ids(tmp, ids))
    c = _caps([ch])
    macros = tmp / "m.tex"
    names = (
        [x.split("}")[0] for x in macros.read_text().split("\\newcommand{")[1:]]
        if macros.is_file()
        else []
    )
    c["data lost"] += int(ch.code not in (0, 2) or (ch.code == 2 and _one_line_2(ch)))
    c["silent wrong results"] += len(names) - len(set(names))
    return c


def _null_seed_key(tmp: Path) -> list[str]:
    data, sheet = _copy(SAMPLE, tmp / "data"), tmp / "sheet.csv"
    _draw(data, sheet, 1)
    _fill(sheet, "alice")
    key = Path(str(sheet) + ".key.json")
    doc = json.loads(key.read_text())
    doc["seed"] = None
    key.write_text(json.dumps(doc))
    return ["label", str(data), "--read", str(sheet)]


def _duration(value: str) -> Callable[[Path], list[str]]:
    def args(tmp: Path) -> list[str]:
        out = _claude_result(tmp, _set("duration_ms", 0))
        f = Path(out[2]) / "t1__serena__1.jsonl"
        f.write_text(f.read_text().replace('"duration_ms": 0', f'"duration_ms": {value}'))
        return out

    return args


def _over_budget(tmp: Path) -> list[str]:
    data = data_dir(tmp / "data", 2)
    _write_lines(
        data / "tasks.jsonl", [dict(t, budget_tokens=1) for t in _lines(data / "tasks.jsonl")]
    )
    return ["judge", str(data), "--rubric", "with-without", "--judge", JUDGE["openai"], "--dry-run"]


def case_nothing_to_judge(tmp: Path) -> Counter:
    """Every pair over budget: ``judge`` says so (one line, exit 2), never a silent 0."""
    with Meter() as fake:
        args = _over_budget(tmp)
        args.remove("--dry-run")
        ch = cli(args, _env(fake))
        c = _caps([ch])
        c["silent wrong results"] += _one_line_2(ch)
        return c


def cases() -> list[tuple[str, str, Callable[[Path], Counter]]]:
    out: list[tuple[str, str, Callable[[Path], Counter]]] = [
        ("spending cap", "batch --max-usd 0.03 killed polling, resumed twice", case_batch_cap),
        ("spending cap", "billed attempts that time out count", case_timeout_cap),
        ("spending cap", "in-flight worst cases wait, not end", case_inflight_cap),
    ]
    for command, target in (
        (["label", "-n", "3", "--seed", "1", "-o"], "judgments.jsonl"),
        (["frame", "-o"], "judgments.jsonl"),
        (["frame", "-o"], "runs.jsonl"),
        (["summary", "-o"], "tasks.csv"),
        (["label", "-n", "3", "--seed", "1", "-o"], "labels.csv"),
    ):
        out.append(
            (
                "overwrites",
                f"{command[0]} -o DATA/{target}",
                lambda t, c=command, x=target: case_out_over_data(t, c, x),
            )
        )
    out += [
        ("overwrites", "judge --out DATA/runs.jsonl", case_judge_out_runs),
        ("overwrites", "frame -o a user's existing file", lambda t: case_user_file(t, "frame")),
        ("overwrites", "summary -o a user's existing file", lambda t: case_user_file(t, "summary")),
        ("overwrites", "label re-drawn over a filled sheet", case_redraw_sheet),
        ("overwrites", "two concurrent label --read", case_concurrent_read),
        ("re-runs", "judge again with --max-tokens 2048", case_rejudge_options),
        ("re-runs", "import table over a judged directory", case_reimport),
        ("re-runs", "arms.toml reordered, blind-pair", case_reorder_arms),
        ("re-runs", "two arms judged, a third added", case_grow_arms),
        ("no data, no number", "an arm with runs, no judgments", case_arm_without_verdicts),
    ]
    rank_call = "rank(f, judge='openai:gpt-5.4', n_resamples=50, rng=0, tau={})"
    for tau in ("float('nan')", "0", "-1"):
        bad = rank_call.format(tau)
        good = rank_call.format(1)
        out.append(
            (
                "no data, no number",
                f"rank(tau={tau})",
                lambda t, g=good, b=bad: case_refused_call(t, g, b),
            )
        )
    out += [
        ("no data, no number", "plan.toml margin = 50 for a net win", case_plan_margin),
        ("no data, no number", "PPI of hand-picked labels warns", case_ppi_warning),
        ("no data, no number", 'started_at: "now"', case_started_now),
        ("no data, no number", "audit reads the journaled model_id", case_audit_model_id),
    ]
    for args in (
        ("--icc", "nan"),
        ("--icc", "1"),
        ("--icc", "-0.5"),
        ("--judge-noise", "inf"),
        ("--p-win", "-0.1"),
    ):
        out.append(
            (
                "no data, no number",
                "simulate " + " ".join(args),
                lambda t, a=args: case_simulate(t, *a),
            )
        )
    out += [
        ("renders", "comparison page shows the audit", case_comparison_audit),
        ("renders", "Ctrl-C during a re-render", case_interrupted_render),
        ("renders", "a figure the user saves during a render", case_user_figure),
        ("renders", "-p confidence='\"0.9\"'", lambda t: case_string_param(t, 'confidence="0.9"')),
        ("renders", "-p n_resamples='\"40\"'", lambda t: case_string_param(t, 'n_resamples="40"')),
        ("renders", "-p judges=5", lambda t: case_string_param(t, "judges=5")),
        ("bounded", "60 arms, every pair", lambda t: case_many_arms(t, 60, "all")),
        (
            "bounded",
            "200 arms against the reference",
            lambda t: case_many_arms(t, 200, "reference"),
        ),
        ("bounded", "report -p n_resamples=1000000, 10 arms", case_resamples_arms),
        *[
            ("bounded", name, lambda t, g=good, b=bad: case_refused_call(t, g, b, cap_s=180.0))
            for name, good, bad in (
                (
                    "rank(n_resamples=1e30)",
                    rank_call.format(1),
                    rank_call.replace("50", "1e30").format(1),
                ),
                (
                    "rank(n_resamples=10**12)",
                    rank_call.format(1),
                    rank_call.replace("50", "10**12").format(1),
                ),
                (
                    "arm_costs(n_resamples=10**12)",
                    "arm_costs(ds, n_resamples=50)",
                    "arm_costs(ds, n_resamples=10**12)",
                ),
            )
        ],
        (
            "injection",
            "task id ![x](…) in a Markdown export",
            lambda t: case_export_injection(t, "task id"),
        ),
        (
            "injection",
            "arm name with a newline, a heading",
            lambda t: case_export_injection(t, "arm"),
        ),
        ("leaks", "secret in OPENAI_BASE_URL's query, echoed", case_base_url_secret),
        ("leaks", "OPENAI_API_KEY=ollama leaves a judge's words", case_dummy_key),
        (
            "bad input",
            "Claude Code usage Infinity",
            lambda t: case_refused(
                t, lambda u: _claude_result(u, _set("usage.output_tokens", math.inf))
            ),
        ),
        ("bad input", "Claude Code usage 300.9", case_truncated_usage),
        (
            "bad input",
            "Claude Code duration_ms 1e400",
            lambda t: case_refused(t, _duration("1e400"), "t1__serena__1.jsonl"),
        ),
        (
            "bad input",
            "Claude Code duration_ms NaN",
            lambda t: case_refused(t, _duration("NaN"), "t1__serena__1.jsonl"),
        ),
        ("bad input", "a lone surrogate in an answer", case_surrogate),
        (
            "bad input",
            "export of a truncated results.json",
            lambda t: case_refused(
                t, lambda u: _results_json(u, '{"format": "evalstats-results/1", "tables": {')
            ),
        ),
        *[
            (
                "bad input",
                f"export of a results.json {name}",
                lambda t, b=body: case_refused(t, lambda u: _results_json(u, b)),
            )
            for name, body in (
                (
                    "whose table is a string",
                    '{"format": "evalstats-results/1", "tables": {"headline": "x"}}',
                ),
                (
                    "of rows without fields",
                    '{"format": "evalstats-results/1", "tables": {"headline": [{"estimate": "a"}]}}',
                ),
            )
        ],
        (
            "bad input",
            "--macros of non-ASCII arm ids",
            lambda t: case_macros(t, {"v1": "été", "v2": "日本"}),
        ),
        (
            "bad input",
            "--macros of colliding arm ids",
            lambda t: case_macros(t, {"v1": "v-1", "v2": "v_1"}),
        ),
        ("bad input", 'label key with "seed": null', lambda t: case_refused(t, _null_seed_key)),
        ("bad input", "judge with every pair over budget", case_nothing_to_judge),
    ]
    return out


def main(classes: list[str] | None = None) -> None:
    """Run every case (or those of ``classes``) and print the per-class table."""
    table: dict[str, Counter] = {}
    n_cases: Counter = Counter()
    clean: Counter = Counter()
    with tempfile.TemporaryDirectory() as tmp_name:
        try:
            for i, (klass, name, run) in enumerate(cases()):
                if classes and not any(x == klass or x in name for x in classes):
                    continue
                t0 = time.perf_counter()
                counts = run(Path(tmp_name) / f"case{i}")
                faults = {k: v for k, v in counts.items() if v}
                n_cases[klass] += 1
                clean[klass] += int(not faults)
                table.setdefault(klass, Counter()).update(counts)
                verdict = (
                    "clean" if not faults else ", ".join(f"{k} {v}" for k, v in faults.items())
                )
                print(
                    f"  {klass:18} {name:48} {time.perf_counter() - t0:5.1f} s  {verdict}",
                    flush=True,
                )
        finally:
            if "out" in _BASE:
                shutil.rmtree(_BASE["out"].parent, ignore_errors=True)
    short = [c.replace("silent wrong results", "silent wrong") for c in COLUMNS]
    print(f"{'class':18} {'cases':>5} {'clean':>5} " + " ".join(f"{c:>12}" for c in short))
    total = sum(table.values(), Counter())
    for klass, counts in [*table.items(), ("all", total)]:
        n, ok = (
            (sum(n_cases.values()), sum(clean.values()))
            if klass == "all"
            else (n_cases[klass], clean[klass])
        )
        print(f"{klass:18} {n:>5} {ok:>5} " + " ".join(f"{counts[c]:>12}" for c in COLUMNS))


if __name__ == "__main__":
    main(sys.argv[1:] or None)
