"""A simulated K-arm data directory (arms.toml, tasks, runs, judgments with arm_a / arm_b).

Until ``evalstats.simulate(arms=...)`` lands, the comparison report's tests write their data
with this: verdicts from :func:`pair_simulation.simulate_pairwise` (every
pair of arms per task and replicate), judged with the three-way rubric, ``raw`` the JSON it
parses, the candidate in ``arm_a``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from pair_simulation import simulate_pairwise  # K-arm verdicts of known truth, in memory

from evalstats import rubrics

ARM_IDS = ("none", "v1", "v2")
ARMS_TOML = """reference = "none"

[arms]
none = "no tool"
v1 = { name = "tool v1", tool = "Serena 0.9" }
v2 = { name = "tool v2", tool = "Serena 1.0" }
"""
_LABEL = {"win": "(a)", "tie": "(b)", "loss": "(c)"}


def write_karm_dir(
    out: Path, *, seed: int = 0, n_tasks: int = 12, n_reps: int = 2, beta=(0.0, 0.7, 0.4)
) -> Path:
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "arms.toml").write_text(ARMS_TOML, encoding="utf-8")
    base = pd.Timestamp("2026-05-20T09:00:00Z")
    tasks = [
        {"task_id": f"T{t + 1:02d}", "prompt": f"Where is handler {t} defined?",
         "canonical_answer": f"In pkg/h{t}.go.", "canonical_written_at": base.isoformat(),
         "budget_tokens": 10**7, "budget_wall_s": 10_000.0}
        for t in range(n_tasks)
    ]  # fmt: skip
    size = rng.lognormal(np.log(400), 0.5, n_tasks)
    mult = {"none": 1.0, "v1": 0.75, "v2": 1.3}
    runs = []
    for t in range(n_tasks):
        for r in range(1, n_reps + 1):
            for a in ARM_IDS:
                tok = int(size[t] * mult[a] * rng.lognormal(0, 0.2))
                runs.append({
                    "task_id": f"T{t + 1:02d}", "replicate": r, "arm": a,
                    "agent_model": "claude-sonnet-4", "answer": f"pkg/h{t}.go",
                    "transcript": " ".join(["read"] * 20), "wall_s": float(size[t] / 10 * mult[a] * rng.lognormal(0, 0.2)),
                    "started_at": (base + pd.Timedelta(hours=t, minutes=r)).isoformat(),
                    "reported_tokens": tok,
                })  # fmt: skip
    f = simulate_pairwise(rng, np.asarray(beta, float), n_tasks=n_tasks, n_reps=n_reps)
    ids = {f"arm{i}": a for i, a in enumerate(ARM_IDS)}
    ww = rubrics.get("with-without")
    judgments = []
    for i, row in enumerate(f.itertuples()):
        t = int(str(row.task_id)[1:])
        judgments.append({
            "judgment_id": f"j{i:05d}", "task_id": f"T{t + 1:02d}",
            "replicate": int(row.replicate) + 1, "judge": "openai:gpt-5.4",
            "rubric": ww.name, "prompt_revision": ww.revision, "prompt_sha256": ww.sha256,
            "order": None, "raw": json.dumps({"label": _LABEL[row.outcome], "reasoning": "sim"}),
            "created_at": (base + pd.Timedelta(days=1, seconds=i)).isoformat(),
            "arm_a": ids[row.arm_a], "arm_b": ids[row.arm_b], "error": None,
        })  # fmt: skip
    for name, rows in (("tasks", tasks), ("runs", runs), ("judgments", judgments)):
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
    (out / "truth.json").write_text(json.dumps({"simulated": True, "beta": list(beta)}))
    return out


# ----------------------------------------------------------------------------- written by hand

#: The three arms of the hand-written directory, as its runs table spells them (``config``).
HAND_ARM_VALUES = "none=baseline,v1=tool-1,v2=tool-2"
HAND_JUDGES = ("anthropic:claude-sonnet-4-20250514", "openai:gpt-4o")
#: The one judgment whose text no rubric reads (status "invalid" in the frame).
HAND_UNREADABLE = "jh-unreadable"
_HAND_CONFIG = {"none": "baseline", "v1": "tool-1", "v2": "tool-2"}
_HAND_PAIRS = (("v1", "none"), ("v2", "none"), ("v2", "v1"))


def write_hand_karm(src: Path, *, n_tasks: int = 6, n_reps: int = 2) -> Path:
    """A three-arm evaluation as a user would bring it, in ``src``.

    ``tasks.jsonl``; ``runs.csv`` (one row per run, the arm in ``config`` spelled
    :data:`HAND_ARM_VALUES`, the harness's usage in ``tokens``); ``arms.toml`` (names, tools,
    ``reference = "none"``); ``judgments.jsonl`` (two judges of different families on every
    pair of arms, ``arm_a`` / ``arm_b`` on every line, the with-without rubric, ONE verdict
    unreadable: :data:`HAND_UNREADABLE`); ``labels.jsonl`` (ten labels with their arms).
    Import it with ``evalstats import table SRC/runs.csv --map arm=config --arm-values
    HAND_ARM_VALUES --tasks SRC/tasks.jsonl -o DATA_DIR``, then copy the judgments and
    labels into ``DATA_DIR`` (:func:`import_hand_karm` does both).
    """
    src.mkdir(parents=True, exist_ok=True)
    (src / "arms.toml").write_text(ARMS_TOML, encoding="utf-8")
    base = pd.Timestamp("2026-05-20T09:00:00Z")
    tasks = [
        {"task_id": f"H{t}", "prompt": f"Which file defines handler {t}?",
         "canonical_answer": f"pkg/h{t}.go", "canonical_written_at": base.isoformat(),
         "budget_tokens": 100_000, "budget_wall_s": 3_600.0}
        for t in range(1, n_tasks + 1)
    ]  # fmt: skip
    with open(src / "tasks.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in tasks)
    rows = ["task_id,replicate,config,agent_model,answer,wall_s,started_at,tokens"]
    for t in range(1, n_tasks + 1):
        for r in range(1, n_reps + 1):
            for i, arm in enumerate(ARM_IDS):
                when = (base + pd.Timedelta(hours=t, minutes=10 * r + i)).isoformat()
                answer = f"pkg/h{t}.go ({arm} run {r})"
                tokens = 1000 + 150 * t + 300 * i + 20 * r
                rows.append(
                    f"H{t},{r},{_HAND_CONFIG[arm]},qwen:qwen3-coder-480b,{answer},"
                    f"{30 + 5 * t + 4 * i:.1f},{when},{tokens}"
                )
    (src / "runs.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    ww = rubrics.get("with-without")
    judgments, k = [], 0
    for judge in HAND_JUDGES:
        for t in range(1, n_tasks + 1):
            for r in range(1, n_reps + 1):
                for a, b in _HAND_PAIRS:
                    label = ("(a)", "(b)", "(c)", "(a)")[(3 * t + r + len(a + b + judge)) % 4]
                    raw = json.dumps({"label": label, "reasoning": f"{a} vs {b}"})
                    jid = f"jh{k:03d}"
                    if k == 7:
                        jid, raw = HAND_UNREADABLE, "I cannot tell which answer is better."
                    judgments.append({
                        "judgment_id": jid, "task_id": f"H{t}", "replicate": r,
                        "judge": judge, "rubric": ww.name, "prompt_revision": ww.revision,
                        "prompt_sha256": ww.sha256, "order": None, "raw": raw,
                        "created_at": (base + pd.Timedelta(days=1, seconds=k)).isoformat(),
                        "arm_a": a, "arm_b": b, "error": None,
                    })  # fmt: skip
                    k += 1
    with open(src / "judgments.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in judgments)
    labels = [
        {"task_id": f"H{1 + i // 3 % n_tasks}", "replicate": 1 + i // (3 * n_tasks) % n_reps,
         "arm_a": _HAND_PAIRS[i % 3][0], "arm_b": _HAND_PAIRS[i % 3][1],
         "labeler": "ann" if i % 2 else "bo", "outcome": ("win", "tie", "loss")[i % 3],
         "created_at": (base + pd.Timedelta(days=2, minutes=i)).isoformat()}
        for i in range(10)
    ]  # fmt: skip
    with open(src / "labels.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in labels)
    return src


def import_hand_karm(
    src: Path, out: Path, *, arms_toml: bool = True, judgments: bool = True
) -> Path:
    """``evalstats import table`` of :func:`write_hand_karm`'s runs into ``out``, then its
    labels and (with ``judgments``) judgments beside them. With ``arms_toml`` the source's
    ``arms.toml`` (with a reference) is in ``out`` first, as a user's own; without it the
    import writes one."""
    from evalstats.cli import main

    out.mkdir(parents=True, exist_ok=True)
    if arms_toml:
        (out / "arms.toml").write_text((src / "arms.toml").read_text())
    argv = ["import", "table", str(src / "runs.csv"), "--map", "arm=config"]
    argv += ["--arm-values", HAND_ARM_VALUES, "--tasks", str(src / "tasks.jsonl"), "-o", str(out)]
    assert main(argv) == 0
    for name in ("judgments.jsonl", "labels.jsonl")[0 if judgments else 1 :]:
        (out / name).write_text((src / name).read_text())
    return out
