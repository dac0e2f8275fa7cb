"""Synthetic evaluations with known truth.

Outcomes come from the latent probit model of :mod:`evalstats.stats.outcome_model` (task
effects with a stated ICC, thresholds that fix the marginal win/tie/loss probabilities, judge
noise that only lowers agreement); this module turns them into whole data directories: tasks,
runs and raw judge text, labelled as simulated. :func:`draw_outcomes` is re-exported here for
the callers that imported it from ``evalstats.simulate``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ._validate import check_positive_int, check_probability
from .stats.outcome_model import check_outcome_probs, draw_outcomes, latent_thresholds

__all__ = ["Simulation", "SimulationParams", "draw_outcomes", "simulate"]

# --------------------------------------------------------------------------- whole evaluations

DEFAULT_JUDGES = ("anthropic:claude-sonnet-4-20250514", "openai:gpt-5.4")
DEFAULT_AGENT = "qwen:qwen3-coder-480b"
# USD per million (input, output) tokens used only to give simulated judgments a plausible spend.
_SIM_PRICES = {"anthropic": (3.0, 15.0), "openai": (2.5, 10.0)}

_SUBSYSTEMS = [
    ("retry policy for outgoing HTTP calls", "internal/http/retry.go", "RetryPolicy"),
    ("cache invalidation after a schema migration", "internal/cache/invalidate.go", "Invalidate"),
    ("authentication middleware ordering", "internal/auth/middleware.go", "Chain"),
    ("rate limiter used by the public API", "internal/api/ratelimit.go", "TokenBucket"),
    ("configuration loading precedence", "internal/config/load.go", "Load"),
    ("background job scheduler", "internal/jobs/scheduler.go", "Scheduler"),
    ("database connection pool sizing", "internal/db/pool.go", "NewPool"),
    ("feature-flag evaluation", "internal/flags/eval.go", "Evaluate"),
    ("metrics exporter registration", "internal/metrics/export.go", "Register"),
    ("graceful shutdown sequence", "cmd/server/main.go", "shutdown"),
    ("request tracing propagation", "internal/trace/propagate.go", "Inject"),
    ("symbol index rebuild", "internal/index/rebuild.go", "Rebuild"),
    ("plugin discovery", "internal/plugins/discover.go", "Discover"),
    ("error wrapping conventions", "internal/errors/wrap.go", "Wrap"),
    ("websocket heartbeat handling", "internal/ws/heartbeat.go", "Heartbeat"),
]
_QUESTIONS = [
    "Where is the {what} implemented, and which call sites depend on {sym}?",
    "Explain how the {what} works end to end; cite the files and symbols involved.",
    "Which code paths reach {sym}, and what would break if its signature changed?",
]
_FILLER = (
    "read_file grep_search list_dir open symbol reference callers definition line "
    "result match function struct package import return error context value "
    "handler config retry cache index token request response test"
).split()


@dataclasses.dataclass(frozen=True)
class SimulationParams:
    """Parameters of a simulated evaluation (all recorded in ``truth.json``)."""

    n_tasks: int = 15
    n_replicates: int = 6
    judges: tuple[str, ...] = DEFAULT_JUDGES
    rubrics: tuple[str, ...] = ("with-without", "blind-pair")
    p_win: float = 0.45
    p_tie: float = 0.35
    p_loss: float = 0.20
    icc: float = 0.3
    judge_noise: float = 0.6
    over_budget_rate: float = 0.03
    malformed_rate: float = 0.03
    error_rate: float = 0.01
    orders: str = "random"
    position_bias: float = 0.0
    token_ratio: float = 0.7
    agent_model: str = DEFAULT_AGENT
    seed: int = 0


@dataclasses.dataclass(frozen=True)
class Simulation:
    """Paths written by :func:`simulate` and the true parameters."""

    out_dir: Path
    tasks: Path
    runs: Path
    judgments: Path
    truth: Path
    params: SimulationParams


def _words(gen: np.random.Generator, n: int) -> str:
    picks = gen.integers(0, len(_FILLER), size=max(int(n), 1))
    words = np.asarray(_FILLER)[picks]
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return "\n".join(lines)


def _fence(gen: np.random.Generator, body: str) -> str:
    style = gen.random()
    if style < 0.55:
        return body
    if style < 0.8:
        return f"```json\n{body}\n```"
    return f"Here is my evaluation of the two answers.\n\n```json\n{body}\n```\n"


def _break(gen: np.random.Generator, body: str) -> str:
    kind = gen.integers(0, 3)
    if kind == 0:
        return body[: len(body) // 2]  # truncated output (max_tokens hit)
    if kind == 1:
        return "I cannot decide between the two answers without running the code."
    return body.replace('"label": "', '"label": "(a) or (b) ', 1).replace(
        '"verdict": "', '"verdict": "a_wins or b_wins ', 1
    )


def _ww_raw(gen, outcome: int, tokens_with: int, tokens_without: int) -> str:
    label = ("(c)", "(b)", "(a)")[outcome]
    spelled = gen.choice(
        [
            label,
            label,
            label[1],
            label[1].upper(),
            {
                "(a)": "(a) WITH was better",
                "(b)": "(b) roughly equivalent",
                "(c)": "(c) WITH was worse",
            }[label],
        ]
    )
    reasons = {
        "(a)": "WITH cites the exact files and symbols and matches the canonical answer; "
        "WITHOUT misses one call site.",
        "(b)": "Both answers identify the same code paths with similar accuracy.",
        "(c)": "WITH drifts into unrelated files surfaced by the tool and misses the main path.",
    }
    body = {
        "label": str(spelled),
        "reasoning": reasons[label],
        "facts_correct_with": f"{int(gen.integers(2, 6))}/5",
        "facts_correct_without": f"{int(gen.integers(2, 6))}/5",
        "hallucinations_with": str(int(gen.integers(0, 2))),
        "hallucinations_without": str(int(gen.integers(0, 3))),
        "cost_ratio": f"{tokens_with / max(tokens_without, 1):.2f}",
        "uncertainty": str(gen.choice(["low", "medium", "medium", "high"])),
    }
    return _fence(gen, json.dumps(body, indent=2))


def _blind_raw(gen, outcome_a: int) -> str:
    """Blind-pair output; ``outcome_a`` is from Agent A's point of view (2 = A wins)."""
    verdict = ("b_wins", "tie", "a_wins")[outcome_a]
    base = gen.integers(2, 5, size=4)
    delta = {2: 1, 1: 0, 0: -1}[outcome_a]
    a = np.clip(base + (delta if delta > 0 else 0), 1, 5)
    b = np.clip(base + (-delta if delta < 0 else 0), 1, 5)
    dims = ("correctness", "specificity", "completeness", "hallucination_safety")
    as_str = gen.random() < 0.1  # some judges quote numbers

    def block(s, note):
        d = {k: (str(int(v)) if as_str else int(v)) for k, v in zip(dims, s, strict=True)}
        d["notes"] = note
        return d

    body = {
        "agent_a": block(a, "Cites the relevant files with line ranges."),
        "agent_b": block(b, "Covers the main path but is vague about call sites."),
        "verdict": verdict,
        "verdict_reasoning": "The deciding factor was specificity of the cited symbols.",
    }
    return _fence(gen, json.dumps(body, indent=2))


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def simulate(
    out_dir: str | Path, params: SimulationParams | None = None, **overrides
) -> Simulation:
    """Write a synthetic evaluation with known truth to ``out_dir``.

    Writes ``tasks.jsonl``, ``runs.jsonl``, ``judgments.jsonl`` and ``truth.json``.
    Judges' ``raw`` texts imitate real model output in both rubrics' JSON formats
    (bare, fenced, with a preamble; label spellings vary; a ``malformed_rate``
    share is broken). Over-budget pairs get no judgments, as the runner would not
    send them. Every judge's marginal win/tie/loss probabilities equal
    ``p_win``/``p_tie``/``p_loss`` (see the module docstring for the model).

    Parameters
    ----------
    out_dir : path-like
        Directory to write (created if needed; files replaced atomically).
    params : SimulationParams, optional
        All parameters; keyword ``overrides`` replace single fields.

    Returns
    -------
    Simulation

    Examples
    --------
    >>> import tempfile, evalstats
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=3, n_replicates=2, seed=1)
    >>> sorted(p.name for p in sim.out_dir.iterdir())
    ['judgments.jsonl', 'runs.jsonl', 'tasks.jsonl', 'truth.json']
    """
    from . import rubrics as _rubrics
    from .records import atomic_write, write_jsonl_atomic
    from .tokens import count_tokens

    p = dataclasses.replace(params or SimulationParams(), **overrides)
    check_outcome_probs(p.p_win, p.p_tie, p.p_loss)
    check_positive_int(p.n_tasks, "n_tasks")
    check_positive_int(p.n_replicates, "n_replicates")
    for name in ("over_budget_rate", "malformed_rate", "error_rate"):
        check_probability(getattr(p, name), name)
    if p.orders not in ("random", "both"):
        raise ValueError(f"orders must be 'random' or 'both', got {p.orders!r}")
    gen = np.random.default_rng(p.seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    base = pd.Timestamp("2026-05-20T09:00:00Z")

    tasks = []
    for t in range(p.n_tasks):
        what, path, sym = _SUBSYSTEMS[t % len(_SUBSYSTEMS)]
        q = _QUESTIONS[t % len(_QUESTIONS)].format(what=what, sym=sym)
        tasks.append(
            {
                "task_id": f"T{t + 1:02d}",
                "prompt": q,
                "canonical_answer": f"The {what} lives in {path} ({sym}); its callers are the "
                f"service constructors and the CLI entry point.",
                "canonical_written_at": (base - pd.Timedelta(days=2, hours=t)).isoformat(),
                "budget_tokens": 12000,
                "budget_wall_s": 600.0,
                "tags": ["simulated", what.split()[0]],
            }
        )

    sigma = np.sqrt(p.icc / (1.0 - p.icc))
    u = gen.standard_normal(p.n_tasks) * sigma
    latent = u[:, None] + gen.standard_normal((p.n_tasks, p.n_replicates))
    over = gen.random((p.n_tasks, p.n_replicates)) < p.over_budget_rate
    pair_order = gen.integers(0, 2, size=(p.n_tasks, p.n_replicates))

    runs = []
    for t in range(p.n_tasks):
        _, path, sym = _SUBSYSTEMS[t % len(_SUBSYSTEMS)]
        for r in range(p.n_replicates):
            started = base + pd.Timedelta(hours=t, minutes=10 * r)
            base_tokens = float(gen.lognormal(np.log(800), 0.4))
            over_arm = gen.integers(0, 2) if over[t, r] else -1
            for a, arm in enumerate(("with", "without")):
                mult = p.token_ratio * gen.lognormal(0, 0.15) if arm == "with" else 1.0
                n_words = int(base_tokens * mult / 1.3)
                files = [path, f"{path.rsplit('/', 1)[0]}/{sym.lower()}_test.go"]
                if arm == "without":
                    files.append("README.md")
                wall = float(
                    np.round(gen.lognormal(np.log(120), 0.3) * (0.8 if arm == "with" else 1.0), 1)
                )
                if a == over_arm:
                    wall = float(np.round(600.0 + gen.uniform(5, 200), 1))
                runs.append(
                    {
                        "task_id": f"T{t + 1:02d}",
                        "replicate": r + 1,
                        "arm": arm,
                        "agent_model": p.agent_model,
                        "answer": f"{sym} is defined in {path}. It is called from the service "
                        f"constructors; see also {files[-1]}.",
                        "transcript": _words(gen, n_words),
                        "files_inspected": files,
                        "wall_s": wall,
                        "started_at": (started + pd.Timedelta(minutes=a)).isoformat(),
                        "reported_tokens": None,
                    }
                )
    run_tokens = count_tokens([r["transcript"] for r in runs]).reshape(p.n_tasks, p.n_replicates, 2)
    for i, rec in enumerate(runs):
        # Agents over-report now and then: the loader must flag it, never trust it.
        rec["reported_tokens"] = int(run_tokens.flat[i] * (1.25 if gen.random() < 0.05 else 1))

    judgments = []
    clock = base + pd.Timedelta(days=1)
    for rubric_name in p.rubrics:
        rubric = _rubrics.get(rubric_name)
        for judge in p.judges:
            price_in, price_out = _SIM_PRICES.get(judge.split(":", 1)[0], (3.0, 15.0))
            for t in range(p.n_tasks):
                task = tasks[t]
                for r in range(p.n_replicates):
                    if over[t, r]:
                        continue
                    i = (t * p.n_replicates + r) * 2
                    w, wo = runs[i], runs[i + 1]
                    tw, two = int(run_tokens[t, r, 0]), int(run_tokens[t, r, 1])
                    w_run = {**w, "tokens": tw}
                    wo_run = {**wo, "tokens": two}
                    if rubric.needs_order:
                        # One seeded order per pair, shared by every judge, so that judges
                        # are compared on identical prompts.
                        orders = (
                            ["with_first", "without_first"]
                            if p.orders == "both"
                            else [("with_first", "without_first")[pair_order[t, r]]]
                        )
                    else:
                        orders = [None]
                    for order in orders:
                        noise = p.judge_noise * gen.standard_normal()
                        shift = 0.0
                        if order is not None:
                            # position bias favours Agent A, whichever arm it is
                            shift = p.position_bias if order == "with_first" else -p.position_bias
                        scale = np.sqrt(1.0 + sigma**2 + p.judge_noise**2)
                        lo, hi = latent_thresholds(p.p_tie, p.p_loss, scale)
                        y = latent[t, r] + noise + shift
                        outcome = int(y >= lo) + int(y >= hi)
                        if order is None:
                            raw = _ww_raw(gen, outcome, tw, two)
                        else:
                            raw = _blind_raw(gen, outcome if order == "with_first" else 2 - outcome)
                        error = None
                        if gen.random() < p.malformed_rate:
                            raw = _break(gen, raw)
                        if gen.random() < p.error_rate:
                            raw, error = None, "InternalServerError: simulated 500 after retries"
                        prompt = rubric.render(task, w_run, wo_run, order=order)
                        n_in = int(count_tokens(prompt.system) + count_tokens(prompt.user))
                        n_out = 0 if raw is None else int(count_tokens(raw))
                        clock = clock + pd.Timedelta(seconds=float(gen.uniform(2, 9)))
                        jid = hashlib.sha256(
                            f"{p.seed}|{rubric_name}|{judge}|{t}|{r}|{order}".encode()
                        ).hexdigest()[:16]
                        judgments.append(
                            {
                                "judgment_id": jid,
                                "task_id": task["task_id"],
                                "replicate": r + 1,
                                "judge": judge,
                                "rubric": rubric.name,
                                "prompt_revision": rubric.revision,
                                "prompt_sha256": rubric.sha256,
                                "order": order,
                                "raw": raw,
                                "created_at": clock.isoformat(),
                                "input_tokens": n_in,
                                "output_tokens": n_out,
                                "usd": round((n_in * price_in + n_out * price_out) / 1e6, 6),
                                "latency_s": round(float(gen.uniform(2, 9)), 3),
                                "error": error,
                                "model_id": judge.split(":", 1)[1],
                                "temperature": 0.0,
                                "max_tokens": 1024,
                            }
                        )

    paths = {name: out / f"{name}.jsonl" for name in ("tasks", "runs", "judgments")}
    write_jsonl_atomic(paths["tasks"], tasks)
    write_jsonl_atomic(paths["runs"], runs)
    write_jsonl_atomic(paths["judgments"], judgments)
    truth = {
        "simulated": True,
        "model": "latent probit: y = u_task + e_pair (+ judge noise); thresholds keep every "
        "judge's marginal win/tie/loss equal to p_win/p_tie/p_loss",
        "params": {
            k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(p).items()
        },
        "true_net_win": p.p_win - p.p_loss,
        "true_score": p.p_win + 0.5 * p.p_tie,
        "over_budget_pairs": int(over.sum()),
        "files_sha256": {k: _sha256_file(v) for k, v in paths.items()},
    }
    truth_file = out / "truth.json"
    atomic_write(truth_file, lambda fh: fh.write(json.dumps(truth, indent=2).encode() + b"\n"))
    return Simulation(out, paths["tasks"], paths["runs"], paths["judgments"], truth_file, p)
