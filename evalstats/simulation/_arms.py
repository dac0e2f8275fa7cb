"""A simulated K-arm data directory: ``arms.toml``, runs of every arm, judgments of every pair.

The model (Bradley-Terry with Davidson ties, task-clustered): arm ``i`` has strength
``s_i`` (``strengths``, logit scale); on task ``t`` each arm gets an effect
``e_ti ~ N(0, task_sd^2 / 2)``, so a pair's task effect has SD ``task_sd``. Every judge's
verdict on pair ``(a, b)`` in replicate ``r`` is drawn independently given the task effects,
with ``u = s_a - s_b + e_ta - e_tb``::

    P(a wins) = exp(u/2) / D,  P(tie) = nu / D,  P(b wins) = exp(-u/2) / D,
    D = exp(u/2) + nu + exp(-u/2).

Judgments are the three-way rubric's (``arm_a`` the candidate in the WITH role), one per
judge, pair, task and replicate, with ``raw`` texts like the two-arm simulation's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError

__all__ = ["simulate_arms", "simulate_arms_from"]

#: Keywords of :func:`evalstats.simulate` that only a K-arm simulation (``arms=``) takes.
K_ARM_ONLY = ("reference", "strengths", "pairs", "task_sd", "nu", "token_ratios")


def simulate_arms_from(out_dir: str | Path, params: Any, overrides: dict[str, Any]) -> Any:
    """:func:`evalstats.simulate` given ``arms=`` (or a K-arm keyword): the K-arm directory.

    ``n_tasks``, ``n_replicates``, ``judges``, ``agent_model`` and ``seed`` come from the
    simulation's parameters; the K-arm keywords from ``overrides``.
    """
    import dataclasses

    from .._validate import check_positive_int, check_seed

    arms = overrides.pop("arms", None)
    k_arm = {k: overrides.pop(k) for k in K_ARM_ONLY if k in overrides}
    if arms is None:
        raise ParameterError(f"{', '.join(sorted(k_arm))} need arms=(...) (a K-arm simulation)")
    q = dataclasses.replace(params, **overrides)
    check_positive_int(q.n_tasks, "n_tasks")
    check_positive_int(q.n_replicates, "n_replicates")
    check_seed(q.seed)
    return simulate_arms(
        out_dir,
        arms=arms,
        n_tasks=q.n_tasks,
        n_replicates=q.n_replicates,
        judges=q.judges,
        agent_model=q.agent_model,
        seed=q.seed,
        params_type=q,
        **k_arm,
    )


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a TOML basic string


def _probabilities(u: np.ndarray, nu: float) -> np.ndarray:
    """(..., 3) probabilities of loss, tie, win of ``a`` (Davidson)."""
    w, lo = np.exp(u / 2), np.exp(-u / 2)
    d = w + nu + lo
    return np.stack([lo / d, np.full_like(u, nu) / d, w / d], axis=-1)


def simulate_arms(
    out_dir: str | Path,
    *,
    arms: Sequence[str],
    reference: str | None = None,
    strengths: Sequence[float] | Mapping[str, float] | None = None,
    pairs: str = "all",
    n_tasks: int = 15,
    n_replicates: int = 3,
    judges: Sequence[str] = (),
    task_sd: float = 1.0,
    nu: float = 0.9,
    token_ratios: Sequence[float] | None = None,
    agent_model: str = "qwen:qwen3-coder-480b",
    seed: int = 0,
    params_type: Any = None,
) -> Any:
    """Write a K-arm directory per the K-arm contract; see the module docstring.

    Called by :func:`evalstats.simulate` when it is given ``arms=``. Each run has a billed
    token count (``reported_tokens``): a task size (lognormal, median 6,000, log-SD 0.5) times
    the arm's ``token_ratios`` entry (default 1, 1.2, 1.4, ...: the stronger arms of the
    default strengths cost more, so the cost-quality frontier is not one arm) times run noise
    (log-SD 0.25).
    """
    from .. import rubrics as _rubrics
    from ..records import Arms, arm_pairs
    from ..tokens import count_tokens
    from . import write_simulation
    from ._texts import _QUESTIONS, _SUBSYSTEMS, _ww_raw

    ids = tuple(str(a) for a in arms)
    if len(ids) < 2 or len(set(ids)) != len(ids) or not all(a.strip() for a in ids):
        raise ParameterError(f"arms must be two or more distinct non-empty names, got {arms!r}")
    if reference is not None and reference not in ids:
        raise ParameterError(f"reference {reference!r} is not one of the arms {list(ids)}")
    if strengths is None:
        s = np.linspace(0.0, 0.5 * (len(ids) - 1), len(ids))
    elif isinstance(strengths, Mapping):
        unknown = sorted(set(strengths) - set(ids))
        if unknown:
            raise ParameterError(f"strengths name arms {unknown} not in arms={list(ids)}")
        s = np.array([float(strengths.get(a, 0.0)) for a in ids])
    else:
        s = np.asarray(list(strengths), dtype=float)
        if s.shape != (len(ids),):
            raise ParameterError(f"strengths needs one value per arm ({len(ids)}), got {s.size}")
    if not np.isfinite(s).all():
        raise ParameterError("strengths must be finite numbers")
    ratios = (
        1.0 + 0.2 * np.arange(len(ids))
        if token_ratios is None
        else np.asarray(list(token_ratios), dtype=float)
    )
    if ratios.shape != (len(ids),) or not (np.isfinite(ratios).all() and (ratios > 0).all()):
        raise ParameterError(f"token_ratios needs one positive value per arm ({len(ids)})")
    if not (task_sd >= 0 and nu > 0):
        raise ParameterError(f"task_sd must be >= 0 and nu > 0, got {task_sd}, {nu}")
    for judge in judges:
        provider, _, model = str(judge).partition(":")
        if not (provider and model):
            raise ParameterError(f"a judge must be named 'provider:model', got {judge!r}")
    gen = np.random.default_rng(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    base = pd.Timestamp("2026-05-20T09:00:00Z")
    lines = [f"reference = {_toml_str(reference)}", ""] if reference else []
    lines.append("[arms]")
    for a in ids:
        lines.append(
            f"{_toml_str(a)} = {{ name = {_toml_str(f'arm {a}')}, tool = "
            f"{_toml_str('no tool' if a == reference else f'tool {a}')} }}"
        )
    (out / "arms.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    arms_obj = Arms(
        ids,
        names={a: f"arm {a}" for a in ids},
        tools={a: "no tool" if a == reference else f"tool {a}" for a in ids},
        reference=reference,
    )
    tasks, runs = [], []
    size = gen.lognormal(np.log(6000.0), 0.5, n_tasks)
    noise = gen.lognormal(0.0, 0.25, (n_tasks, n_replicates, len(ids)))
    for t in range(n_tasks):
        what, path, sym = _SUBSYSTEMS[t % len(_SUBSYSTEMS)]
        tasks.append(
            {
                "task_id": f"T{t + 1:02d}",
                "prompt": _QUESTIONS[t % len(_QUESTIONS)].format(what=what, sym=sym),
                "canonical_answer": f"The {what} lives in {path} ({sym}).",
                "canonical_written_at": (base - pd.Timedelta(days=2, hours=t)).isoformat(),
                "budget_tokens": 200_000,  # billed counts reach ~25,000: no run over budget
                "budget_wall_s": 600.0,
                "tags": ["simulated"],
            }
        )
        for r in range(n_replicates):
            for k, a in enumerate(ids):
                runs.append(
                    {
                        "task_id": f"T{t + 1:02d}",
                        "replicate": r + 1,
                        "arm": a,
                        "agent_model": agent_model,
                        "answer": f"{sym} is defined in {path} (arm {a}, run {r + 1} of task {t + 1}).",
                        "files_inspected": [path],
                        "wall_s": float(np.round(gen.lognormal(np.log(120), 0.3), 1)),
                        "reported_tokens": int(round(size[t] * ratios[k] * noise[t, r, k])),
                        "started_at": (
                            base + pd.Timedelta(hours=t, minutes=10 * r + k)
                        ).isoformat(),
                    }
                )
    oriented = arm_pairs(arms_obj, pairs)
    index = {a: i for i, a in enumerate(ids)}
    ia = np.array([index[a] for a, _ in oriented])
    ib = np.array([index[b] for _, b in oriented])
    eff = gen.normal(0.0, task_sd / np.sqrt(2), size=(n_tasks, len(ids)))
    u = (s[ia] - s[ib])[None, :] + eff[:, ia] - eff[:, ib]  # (task, pair)
    prob = _probabilities(u, nu)
    rubric = _rubrics.get("with-without")
    judgments = []
    clock = base + pd.Timedelta(days=1)
    for judge in judges:
        draws = gen.random((n_tasks, n_replicates, len(oriented)))
        y = (draws[..., None] > prob.cumsum(-1)[:, None, :, :2]).sum(-1)  # 0 loss 1 tie 2 win
        for t in range(n_tasks):
            for r in range(n_replicates):
                for p, (a, b) in enumerate(oriented):
                    raw = _ww_raw(gen, int(y[t, r, p]), 1000, 1000)
                    clock = clock + pd.Timedelta(seconds=3)
                    jid = hashlib.sha256(f"{seed}|{judge}|{t}|{r}|{a}|{b}".encode()).hexdigest()[
                        :16
                    ]
                    judgments.append(
                        {
                            "judgment_id": jid,
                            "task_id": f"T{t + 1:02d}",
                            "replicate": r + 1,
                            "judge": judge,
                            "rubric": rubric.name,
                            "prompt_revision": rubric.revision,
                            "prompt_sha256": rubric.sha256,
                            "order": None,
                            "raw": raw,
                            "created_at": clock.isoformat(),
                            "output_tokens": int(count_tokens(raw)),
                            "error": None,
                            "model_id": judge.split(":", 1)[1],
                            "arm_a": a,
                            "arm_b": b,
                        }
                    )
    truth = {
        "simulated": True,
        "model": "Bradley-Terry with Davidson ties: u = s_a - s_b + e_ta - e_tb, "
        "e_ti ~ N(0, task_sd^2/2); P(win, tie, loss) proportional to exp(u/2), nu, exp(-u/2)",
        "arms": list(ids),
        "reference": reference,
        "strengths": {a: float(v) for a, v in zip(ids, s, strict=True)},
        "pairs": [list(x) for x in oriented],
        "params": {
            "n_tasks": n_tasks,
            "n_replicates": n_replicates,
            "judges": list(judges),
            "task_sd": task_sd,
            "nu": nu,
            "token_ratios": {a: float(v) for a, v in zip(ids, ratios, strict=True)},
            "seed": seed,
            "agent_model": agent_model,
        },
    }
    return write_simulation(out, tasks, runs, judgments, truth, params_type)
