"""Synthetic evaluations with known truth: whole data directories, labelled as simulated.

Two arms: a latent probit model; K arms (``arms=``): Bradley-Terry with Davidson ties. The
models: docs/methods.md ("Simulation").
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from ._schema import BLIND_DIMENSIONS, ORDERS
from ._validate import check_choice, check_positive_int, check_probability, check_range, check_seed
from .errors import ParameterError
from .stats.models import check_outcome_probs, latent_thresholds

__all__ = [
    "DEFAULT_DIMENSION_EFFECTS",
    "DEFAULT_DIMENSION_NOISE",
    "Simulation",
    "SimulationParams",
    "simulate",
]

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


def _words(rng: np.random.Generator, n: int) -> str:
    picks = rng.integers(0, len(_FILLER), size=max(int(n), 1))
    words = np.asarray(_FILLER)[picks]
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return "\n".join(lines)


def _fence(rng: np.random.Generator, body: str) -> str:
    style = rng.random()
    if style < 0.55:
        return body
    if style < 0.8:
        return f"```json\n{body}\n```"
    return f"Here is my evaluation of the two answers.\n\n```json\n{body}\n```\n"


def _break(rng: np.random.Generator, body: str) -> str:
    kind = rng.integers(0, 3)
    if kind == 0:
        return body[: len(body) // 2]  # truncated output (max_tokens hit)
    if kind == 1:
        return "I cannot decide between the two answers without running the code."
    return body.replace('"label": "', '"label": "(a) or (b) ', 1).replace(
        '"verdict": "', '"verdict": "a_wins or b_wins ', 1
    )


def _ww_raw(rng: np.random.Generator, outcome: int, tokens_with: int, tokens_without: int) -> str:
    label = ("(c)", "(b)", "(a)")[outcome]
    long = {"(a)": "WITH was better", "(b)": "roughly equivalent", "(c)": "WITH was worse"}
    spelled = rng.choice([label, label, label[1], label[1].upper(), f"{label} {long[label]}"])
    reasons = {
        "(a)": "WITH cites the exact files and symbols and matches the canonical answer; "
        "WITHOUT misses one call site.",
        "(b)": "Both answers identify the same code paths with similar accuracy.",
        "(c)": "WITH drifts into unrelated files surfaced by the tool and misses the main path.",
    }
    body = {
        "label": str(spelled),
        "reasoning": reasons[label],
        "facts_correct_with": f"{int(rng.integers(2, 6))}/5",
        "facts_correct_without": f"{int(rng.integers(2, 6))}/5",
        "hallucinations_with": str(int(rng.integers(0, 2))),
        "hallucinations_without": str(int(rng.integers(0, 3))),
        "cost_ratio": f"{tokens_with / max(tokens_without, 1):.2f}",
        "uncertainty": str(rng.choice(["low", "medium", "medium", "high"])),
    }
    return _fence(rng, json.dumps(body, indent=2))


def _blind_raw(rng, outcome_a: int, scores_a: np.ndarray, scores_b: np.ndarray) -> str:
    """Blind-pair output; ``outcome_a`` from Agent A's point of view (2 = A wins)."""
    verdict = ("b_wins", "tie", "a_wins")[outcome_a]
    rng.integers(2, 5, size=4)  # an unused draw, kept so later draws stay what they were
    as_str = rng.random() < 0.1  # some judges quote numbers

    def block(s, note):
        d = {
            k: (str(int(v)) if as_str else int(v)) for k, v in zip(BLIND_DIMENSIONS, s, strict=True)
        }
        d["notes"] = note
        return d

    body = {
        "agent_a": block(scores_a, "Cites the relevant files with line ranges."),
        "agent_b": block(scores_b, "Covers the main path but is vague about call sites."),
        "verdict": verdict,
        "verdict_reasoning": "The deciding factor was specificity of the cited symbols.",
    }
    return _fence(rng, json.dumps(body, indent=2))


# --------------------------------------------------------------------------- whole evaluations

DEFAULT_JUDGES = ("anthropic:claude-sonnet-4-20250514", "openai:gpt-5.4")
DEFAULT_AGENT = "qwen:qwen3-coder-480b"
# USD per million (input, output) tokens: a plausible simulated spend.
_SIM_PRICES = {"anthropic": (3.0, 15.0), "openai": (2.5, 10.0)}
# Blind-rubric dimensions, WITH − WITHOUT on the latent score scale (1 = one score point).
DEFAULT_DIMENSION_EFFECTS: Mapping[str, float] = {
    "correctness": 0.60,
    "specificity": 0.40,
    "completeness": 0.20,
    "hallucination_safety": 0.05,
}
# Judge noise on each dimension's difference (SD, score points).
DEFAULT_DIMENSION_NOISE: Mapping[str, float] = {
    "correctness": 0.50,
    "specificity": 0.70,
    "completeness": 0.80,
    "hallucination_safety": 0.60,
}
# The typical score of a dimension and how strongly its difference follows the verdict's latent.
_DIMENSION_LEVEL = dict(zip(BLIND_DIMENSIONS, (3.4, 3.0, 3.2, 3.7), strict=True))
_DIMENSION_LOADING = dict(zip(BLIND_DIMENSIONS, (0.9, 0.6, 0.5, 0.3), strict=True))
_LEVEL_SD = 0.6


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
    #: True WITH − WITHOUT difference per blind-rubric dimension (missing ones: the defaults).
    dimension_effects: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_DIMENSION_EFFECTS)
    )
    dimension_noise: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_DIMENSION_NOISE)
    )


@dataclasses.dataclass(frozen=True)
class Simulation:
    """Paths written by :func:`simulate` and the true parameters."""

    out_dir: Path
    tasks: Path
    runs: Path
    judgments: Path
    truth: Path
    params: SimulationParams


def _dimension_table(value: Mapping[str, float], default: Mapping[str, float], name: str):
    """``value`` over ``default`` as a dict in ``BLIND_DIMENSIONS`` order; ``ValueError`` else."""
    if not isinstance(value, Mapping):
        raise ParameterError(f"{name} must be a mapping of dimension -> number, got {value!r}")
    unknown = sorted(set(value) - set(BLIND_DIMENSIONS))
    if unknown:
        raise ParameterError(
            f"{name}: unknown dimension(s) {unknown}; known: {list(BLIND_DIMENSIONS)}"
        )
    out = {}
    for d in BLIND_DIMENSIONS:
        v = value.get(d, default[d])
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ParameterError(f"{name}[{d!r}] must be a number, got {v!r}") from None
        if isinstance(v, bool) or not math.isfinite(f) or (name == "dimension_noise" and f < 0):
            kind = "a finite number >= 0" if name == "dimension_noise" else "a finite number"
            raise ParameterError(f"{name}[{d!r}] must be {kind}, got {v!r}")
        out[d] = f
    return out


def _dimension_scores(
    z: float, c: np.ndarray, e: np.ndarray, effect: np.ndarray, noise: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(WITH, WITHOUT) 1–5 scores of one judgment, one per dimension."""
    level = np.array([_DIMENSION_LEVEL[d] for d in BLIND_DIMENSIONS]) + _LEVEL_SD * c
    loading = np.array([_DIMENSION_LOADING[d] for d in BLIND_DIMENSIONS])
    diff = effect + loading * z + noise * e
    # floor(x + 0.5), not np.round: no round-half-to-even, so the truth below is exact.
    with_ = np.clip(np.floor(level + diff / 2 + 0.5), 1, 5).astype(int)
    without = np.clip(np.floor(level - diff / 2 + 0.5), 1, 5).astype(int)
    return with_, without


def _true_dimension_differences(
    effect: np.ndarray, noise: np.ndarray, shift: float, scale: float
) -> np.ndarray:
    """Expected WITH − WITHOUT score per dimension on the 1–5 scale (a two-normal mixture)."""
    level = np.array([_DIMENSION_LEVEL[d] for d in BLIND_DIMENSIONS])
    loading = np.array([_DIMENSION_LOADING[d] for d in BLIND_DIMENSIONS])
    sd = np.sqrt(_LEVEL_SD**2 + (loading**2 + noise**2) / 4)[:, None]
    cuts = np.arange(1, 5) + 0.5  # E[clip(floor(x + 0.5), 1, 5)] = 1 + sum_k P(x >= k + 0.5)
    out = np.zeros(len(BLIND_DIMENSIONS))
    for sign in (1.0, -1.0):
        half = (effect + loading * sign * shift / scale) / 2
        up, down = (
            1 + special.ndtr(((level + h)[:, None] - cuts) / sd).sum(-1) for h in (half, -half)
        )
        out += 0.5 * (up - down)
    return out


def _task(t: int, base: pd.Timestamp, *, k_arm: bool) -> dict[str, Any]:
    """Task ``t``; K arms: a shorter canonical answer and a budget no billed count reaches."""
    what, path, sym = _SUBSYSTEMS[t % len(_SUBSYSTEMS)]
    tail = "" if k_arm else "; its callers are the service constructors and the CLI entry point"
    return {
        "task_id": f"T{t + 1:02d}",
        "prompt": _QUESTIONS[t % len(_QUESTIONS)].format(what=what, sym=sym),
        "canonical_answer": f"The {what} lives in {path} ({sym}){tail}.",
        "canonical_written_at": (base - pd.Timedelta(days=2, hours=t)).isoformat(),
        "budget_tokens": 200_000 if k_arm else 12000,
        "budget_wall_s": 600.0,
        "tags": ["simulated"] if k_arm else ["simulated", what.split()[0]],
    }


def _check_design(p: SimulationParams) -> None:
    check_positive_int(p.n_tasks, "n_tasks")
    check_positive_int(p.n_replicates, "n_replicates")
    check_seed(p.seed)
    check_range(p.icc, "icc", 0, 1, closed=(True, False))
    check_range(p.judge_noise, "judge_noise", 0)
    check_range(p.position_bias, "position_bias")
    check_range(p.token_ratio, "token_ratio", 0, closed=(False, True))
    for judge in p.judges:
        provider, _, model = str(judge).partition(":")
        if not (provider and model):
            raise ParameterError(f"a judge must be named 'provider:model', got {judge!r}")


def _judgment(key, t, r, judge, rubric, order, raw, clock, tokens, error=None) -> dict:
    """One judgments.jsonl record; ``key`` seeds its id."""
    return {
        "judgment_id": hashlib.sha256(key.encode()).hexdigest()[:16],
        "task_id": f"T{t + 1:02d}",
        "replicate": r + 1,
        "judge": judge,
        "rubric": rubric.name,
        "prompt_revision": rubric.revision,
        "prompt_sha256": rubric.sha256,
        "order": order,
        "raw": raw,
        "created_at": clock.isoformat(),
        **tokens,
        "error": error,
        "model_id": judge.split(":", 1)[1],
    }


def _write(out: Path, tasks, runs, judgments, truth: dict, params, strengths: dict) -> Simulation:
    from .records import atomic_write, write_jsonl_atomic

    # Each run's own pass/fail, from a stream of its own (no other simulated value moves):
    # beta-binomial per arm (mean expit(strength), intra-task correlation icc), the arms'
    # task rates tied by a normal copula (correlation 1/2) as a task's difficulty would.
    rng, rho = np.random.default_rng([params.seed, 33]), max(params.icc, 1e-6)
    task = {t: i for i, t in enumerate(dict.fromkeys(r["task_id"] for r in runs))}
    mean = special.expit(np.array(list(strengths.values())))
    z = (rng.standard_normal((len(task), 1)) + rng.standard_normal((len(task), len(mean)))) / 2**0.5
    rate = stats.beta.ppf(special.ndtr(z), mean * (1 - rho) / rho, (1 - mean) * (1 - rho) / rho)
    arm = {a: k for k, a in enumerate(strengths)}
    for rec, u in zip(runs, rng.random(len(runs)), strict=True):
        rec["passed"] = bool(u < rate[task[rec["task_id"]], arm[rec["arm"]]])
    truth["passed"] = {"model": "beta-binomial per arm", "icc": rho}
    truth["passed"]["mean"] = dict(zip(strengths, mean.tolist(), strict=True))
    paths = {name: out / f"{name}.jsonl" for name in ("tasks", "runs", "judgments")}
    for name, records in (("tasks", tasks), ("runs", runs), ("judgments", judgments)):
        write_jsonl_atomic(paths[name], records)
    truth = truth | {
        "files_sha256": {k: hashlib.sha256(v.read_bytes()).hexdigest() for k, v in paths.items()}
    }
    truth_file = out / "truth.json"
    atomic_write(truth_file, lambda fh: fh.write(json.dumps(truth, indent=2).encode() + b"\n"))
    return Simulation(out, paths["tasks"], paths["runs"], paths["judgments"], truth_file, params)


def simulate(
    out_dir: str | Path, params: SimulationParams | None = None, **overrides
) -> Simulation:
    """Write a synthetic evaluation with known truth to ``out_dir``.

    ``tasks.jsonl``, ``runs.jsonl``, ``judgments.jsonl`` (raw judge text in both rubrics'
    formats, a ``malformed_rate`` share broken) and ``truth.json``. With ``arms=(...)``: a
    K-arm directory with ``arms.toml`` and judgments of every pair of arms.

    Parameters
    ----------
    out_dir : path-like
        Directory to write (created if needed).
    params : SimulationParams, optional
        All parameters; keyword ``overrides`` replace single fields (and, for K arms, take
        ``arms``, ``reference``, ``strengths``, ``pairs``, ``task_sd``, ``nu``, ``token_ratios``).

    Returns
    -------
    Simulation

    >>> import tempfile, evalstats
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=3, n_replicates=2, seed=1)
    >>> sorted(p.name for p in sim.out_dir.iterdir())
    ['judgments.jsonl', 'runs.jsonl', 'tasks.jsonl', 'truth.json']
    """
    if {"arms", *_K_ARM_ONLY} & set(overrides):
        if overrides.get("arms") is None:
            raise ParameterError(
                f"{', '.join(sorted(set(overrides) & set(_K_ARM_ONLY)))} need arms=(...) "
                "(a K-arm simulation)"
            )
        return _simulate_arms(out_dir, params or SimulationParams(), **overrides)
    from . import rubrics as _rubrics
    from .tokens import count_tokens

    p = dataclasses.replace(params or SimulationParams(), **overrides)
    check_outcome_probs(p.p_win, p.p_tie, p.p_loss)
    _check_design(p)
    for name in ("over_budget_rate", "malformed_rate", "error_rate"):
        check_probability(getattr(p, name), name)
    check_choice(p.orders, "orders", ("random", "both"))
    effects = _dimension_table(p.dimension_effects, DEFAULT_DIMENSION_EFFECTS, "dimension_effects")
    dim_noise = _dimension_table(p.dimension_noise, DEFAULT_DIMENSION_NOISE, "dimension_noise")
    p = dataclasses.replace(p, dimension_effects=effects, dimension_noise=dim_noise)
    effect_v = np.array(list(effects.values()))
    noise_v = np.array(list(dim_noise.values()))
    rng = np.random.default_rng(p.seed)
    # The dimension scores' own stream, one cell per judgment: no other draw shifts.
    (dim_rng,) = rng.spawn(1)
    dim_draws = dim_rng.standard_normal(
        (len(p.rubrics), len(p.judges), p.n_tasks, p.n_replicates, 2, 2, len(BLIND_DIMENSIONS))
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    base = pd.Timestamp("2026-05-20T09:00:00Z")

    tasks = [_task(t, base, k_arm=False) for t in range(p.n_tasks)]

    sigma = np.sqrt(p.icc / (1.0 - p.icc))
    u = rng.standard_normal(p.n_tasks) * sigma
    latent = u[:, None] + rng.standard_normal((p.n_tasks, p.n_replicates))
    over = rng.random((p.n_tasks, p.n_replicates)) < p.over_budget_rate
    pair_order = rng.integers(0, 2, size=(p.n_tasks, p.n_replicates))

    runs = []
    for t in range(p.n_tasks):
        _, path, sym = _SUBSYSTEMS[t % len(_SUBSYSTEMS)]
        for r in range(p.n_replicates):
            started = base + pd.Timedelta(hours=t, minutes=10 * r)
            base_tokens = float(rng.lognormal(np.log(800), 0.4))
            over_arm = rng.integers(0, 2) if over[t, r] else -1
            for a, arm in enumerate(("with", "without")):
                mult = p.token_ratio * rng.lognormal(0, 0.15) if arm == "with" else 1.0
                n_words = int(base_tokens * mult / 1.3)
                files = [path, f"{path.rsplit('/', 1)[0]}/{sym.lower()}_test.go"]
                if arm == "without":
                    files.append("README.md")
                wall = float(
                    np.round(rng.lognormal(np.log(120), 0.3) * (0.8 if arm == "with" else 1.0), 1)
                )
                if a == over_arm:
                    wall = float(np.round(600.0 + rng.uniform(5, 200), 1))
                runs.append({
                    "task_id": f"T{t + 1:02d}", "replicate": r + 1, "arm": arm,
                    "agent_model": p.agent_model,
                    "answer": f"{sym} is defined in {path}. It is called from the service "
                    f"constructors; see also {files[-1]}.",
                    "transcript": _words(rng, n_words), "files_inspected": files, "wall_s": wall,
                    "started_at": (started + pd.Timedelta(minutes=a)).isoformat(),
                    "reported_tokens": None,
                })  # fmt: skip
    run_tokens = count_tokens([r["transcript"] for r in runs]).reshape(p.n_tasks, p.n_replicates, 2)
    for i, rec in enumerate(runs):  # agents over-report now and then: the loader flags it
        rec["reported_tokens"] = int(run_tokens.flat[i] * (1.25 if rng.random() < 0.05 else 1))

    judgments = []
    clock = base + pd.Timedelta(days=1)
    sigma_y = np.sqrt(1.0 + sigma**2 + p.judge_noise**2)
    lo, hi = latent_thresholds(p.p_tie, p.p_loss, sigma_y)
    for k_rubric, rubric_name in enumerate(p.rubrics):
        rubric = _rubrics.get(rubric_name)
        for k_judge, judge in enumerate(p.judges):
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
                    if rubric.needs_order:  # one seeded order per pair, shared by the judges
                        orders = (
                            ["with_first", "without_first"]
                            if p.orders == "both"
                            else [("with_first", "without_first")[pair_order[t, r]]]
                        )
                    else:
                        orders = [None]
                    for order in orders:
                        noise = p.judge_noise * rng.standard_normal()
                        side = {"with_first": 1, "without_first": -1}.get(order, 0)
                        y = latent[t, r] + noise + side * p.position_bias  # favours Agent A
                        outcome = int(y >= lo) + int(y >= hi)
                        if order is None:
                            raw = _ww_raw(rng, outcome, tw, two)
                        else:
                            k_order = ORDERS.index(order)
                            c, e = dim_draws[k_rubric, k_judge, t, r, k_order]
                            s_with, s_without = _dimension_scores(
                                y / sigma_y, c, e, effect_v, noise_v
                            )
                            if order == "with_first":
                                raw = _blind_raw(rng, outcome, s_with, s_without)
                            else:
                                raw = _blind_raw(rng, 2 - outcome, s_without, s_with)
                        error = None
                        if rng.random() < p.malformed_rate:
                            raw = _break(rng, raw)
                        if rng.random() < p.error_rate:
                            raw, error = None, "InternalServerError: simulated 500 after retries"
                        prompt = rubric.render(task, w_run, wo_run, order=order)
                        n_in = int(count_tokens(prompt.system) + count_tokens(prompt.user))
                        n_out = 0 if raw is None else int(count_tokens(raw))
                        clock = clock + pd.Timedelta(seconds=float(rng.uniform(2, 9)))
                        tokens = {"input_tokens": n_in, "output_tokens": n_out,
                                  "usd": round((n_in * price_in + n_out * price_out) / 1e6, 6),
                                  "latency_s": round(float(rng.uniform(2, 9)), 3)}  # fmt: skip
                        key = f"{p.seed}|{rubric_name}|{judge}|{t}|{r}|{order}"
                        judgments.append(
                            _judgment(key, t, r, judge, rubric, order, raw, clock, tokens, error)
                            | {"temperature": 0.0, "max_tokens": 1024}
                        )

    truth = {
        "simulated": True,
        "model": "latent probit: y = u_task + e_pair (+ judge noise); thresholds keep every "
        "judge's marginal win/tie/loss equal to p_win/p_tie/p_loss",
        "params": {
            k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(p).items()
        },
        "true_net_win": p.p_win - p.p_loss,
        "true_score": p.p_win + 0.5 * p.p_tie,
        "dimension_model": "blind-pair scores: D = effect + loading * y/sd(y) + noise * e; "
        "with/without = clip(round(level + c +/- D/2), 1, 5), c ~ N(0, "
        f"{_LEVEL_SD}^2); true_difference = E[with - without] on the 1-5 scale",
        "dimensions": {
            d: {
                "effect": effects[d],
                "noise": dim_noise[d],
                "level": _DIMENSION_LEVEL[d],
                "verdict_loading": _DIMENSION_LOADING[d],
                "true_difference": float(v),
            }
            for d, v in zip(
                BLIND_DIMENSIONS,
                _true_dimension_differences(effect_v, noise_v, p.position_bias, sigma_y),
                strict=True,
            )
        },
        "over_budget_pairs": int(over.sum()),
    }
    strengths = {"with": 2 * (p.p_win - p.p_loss), "without": 0.0}  # pass rates follow the net win
    return _write(out, tasks, runs, judgments, truth, p, strengths)


#: Keywords of :func:`simulate` that only a K-arm simulation (``arms=``) takes.
_K_ARM_ONLY = ("reference", "strengths", "pairs", "task_sd", "nu", "token_ratios")


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a TOML basic string


def _probabilities(u: np.ndarray, nu: float) -> np.ndarray:
    """(..., 3) probabilities of loss, tie, win of ``a`` (Davidson)."""
    w, lo = np.exp(u / 2), np.exp(-u / 2)
    d = w + nu + lo
    return np.stack([lo / d, np.full_like(u, nu) / d, w / d], axis=-1)


def _simulate_arms(
    out_dir: str | Path,
    params: SimulationParams,
    *,
    arms: Sequence[str],
    reference: str | None = None,
    strengths: Sequence[float] | Mapping[str, float] | None = None,
    pairs: str = "all",
    task_sd: float = 1.0,
    nu: float = 0.9,
    token_ratios: Sequence[float] | None = None,
    **overrides: Any,
) -> Simulation:
    """:func:`simulate` given ``arms=``; each run's billed tokens: a task size times the arm's
    ``token_ratios`` entry (default 1, 1.2, 1.4, ...) times run noise."""
    from . import rubrics as _rubrics
    from .records import Arms, arm_pairs
    from .tokens import count_tokens

    q = dataclasses.replace(params, **overrides)
    _check_design(q)
    n_tasks, n_replicates, judges, seed = q.n_tasks, q.n_replicates, q.judges, q.seed
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
    task_sd, nu = check_range(task_sd, "task_sd", 0), check_range(nu, "nu", 0, closed=(False, True))
    rng = np.random.default_rng(seed)
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
    size = rng.lognormal(np.log(6000.0), 0.5, n_tasks)
    noise = rng.lognormal(0.0, 0.25, (n_tasks, n_replicates, len(ids)))
    for t in range(n_tasks):
        _, path, sym = _SUBSYSTEMS[t % len(_SUBSYSTEMS)]
        tasks.append(_task(t, base, k_arm=True))
        for r in range(n_replicates):
            for k, a in enumerate(ids):
                runs.append({
                    "task_id": f"T{t + 1:02d}", "replicate": r + 1, "arm": a,
                    "agent_model": q.agent_model,
                    "answer": f"{sym} is defined in {path} (arm {a}, run {r + 1} of task {t + 1}).",
                    "files_inspected": [path],
                    "wall_s": float(np.round(rng.lognormal(np.log(120), 0.3), 1)),
                    "reported_tokens": int(round(size[t] * ratios[k] * noise[t, r, k])),
                    "started_at": (base + pd.Timedelta(hours=t, minutes=10 * r + k)).isoformat(),
                })  # fmt: skip
    oriented = arm_pairs(arms_obj, pairs)

    index = {a: i for i, a in enumerate(ids)}
    ia = np.array([index[a] for a, _ in oriented])
    ib = np.array([index[b] for _, b in oriented])
    eff = rng.normal(0.0, task_sd / np.sqrt(2), size=(n_tasks, len(ids)))
    u = (s[ia] - s[ib])[None, :] + eff[:, ia] - eff[:, ib]  # (task, pair)
    prob = _probabilities(u, nu)
    rubric = _rubrics.get("with-without")
    judgments = []
    clock = base + pd.Timedelta(days=1)
    for judge in judges:
        draws = rng.random((n_tasks, n_replicates, len(oriented)))
        y = (draws[..., None] > prob.cumsum(-1)[:, None, :, :2]).sum(-1)  # 0 loss 1 tie 2 win
        for t in range(n_tasks):
            for r in range(n_replicates):
                for p, (a, b) in enumerate(oriented):
                    raw = _ww_raw(rng, int(y[t, r, p]), 1000, 1000)
                    clock = clock + pd.Timedelta(seconds=3)
                    key = f"{seed}|{judge}|{t}|{r}|{a}|{b}"
                    tokens = {"output_tokens": int(count_tokens(raw))}
                    judgments.append(
                        _judgment(key, t, r, judge, rubric, None, raw, clock, tokens)
                        | {"arm_a": a, "arm_b": b}
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
            "agent_model": q.agent_model,
        },
    }
    return _write(out, tasks, runs, judgments, truth, q, truth["strengths"])
