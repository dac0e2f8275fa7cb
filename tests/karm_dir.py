"""A simulated K-arm data directory (arms.toml, tasks, runs, judgments with arm_a / arm_b).

Until ``evalstats.simulate(arms=...)`` lands, the comparison report's tests write their data
with this: verdicts from :func:`evalstats.stats._pair_simulation.simulate_pairwise` (every
pair of arms per task and replicate), judged with the three-way rubric, ``raw`` the JSON it
parses, the candidate in ``arm_a``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from evalstats import rubrics
from evalstats.stats._pair_simulation import simulate_pairwise

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
