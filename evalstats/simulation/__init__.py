"""Synthetic evaluations with known truth.

Outcomes come from the latent probit model of :mod:`evalstats.stats.models` (task
effects with a stated ICC, thresholds that fix the marginal win/tie/loss probabilities, judge
noise that only lowers agreement); this module turns them into whole data directories: tasks,
runs and raw judge text, labelled as simulated. :func:`draw_outcomes` is re-exported here for
the callers that import it from here.

The blind-pair rubric's four 1–5 dimension scores (seed 001: correctness, specificity,
completeness, hallucination safety) each have their own truth. For a blind judgment with the
judge's latent impression ``y`` of WITH over WITHOUT (the quantity its verdict thresholds; the
position bias included) and ``z = y / sd(y)``, dimension ``d`` gets

* a latent difference ``D = effect_d + loading_d * z + noise_d * e`` (``e ~ N(0, 1)``), so the
  scores lean the way the verdict does without copying it, and ``E[D] = effect_d``;
* a level shared by both answers, ``L = level_d + c`` (``c ~ N(0, 0.6^2)``: how generous this
  judge is on this pair), and the scores ``round(L ± D / 2)`` clipped to 1–5.

``truth.json`` records, per dimension, the effect, noise, level and loading, and
``true_difference``: the expected WITH − WITHOUT score on the 1–5 scale after rounding and
clipping (computed exactly from normal CDFs), which is what
:func:`evalstats.stats.rates.dimension_means` estimates. The scores come from their own
child stream of the seed, so the verdicts, tokens, runs and every other draw of a simulation
do not depend on the dimension parameters.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from .._schema import BLIND_DIMENSIONS, ORDERS
from .._validate import check_positive_int, check_probability, check_seed
from ..errors import ParameterError
from ..stats.models import check_outcome_probs, draw_outcomes, latent_thresholds
from ._texts import _QUESTIONS, _SUBSYSTEMS, _blind_raw, _break, _words, _ww_raw

__all__ = [
    "DEFAULT_DIMENSION_EFFECTS",
    "DEFAULT_DIMENSION_NOISE",
    "Simulation",
    "SimulationParams",
    "draw_outcomes",
    "simulate",
]

# --------------------------------------------------------------------------- whole evaluations

DEFAULT_JUDGES = ("anthropic:claude-sonnet-4-20250514", "openai:gpt-5.4")
DEFAULT_AGENT = "qwen:qwen3-coder-480b"
# USD per million (input, output) tokens used only to give simulated judgments a plausible spend.
_SIM_PRICES = {"anthropic": (3.0, 15.0), "openai": (2.5, 10.0)}

# Blind-rubric dimensions, WITH − WITHOUT on the latent score scale (1 = one score point). A
# code-search tool helps correctness most (the right call sites), then specificity (exact
# paths and symbols); completeness a little; hallucination safety barely (both agents stay
# mostly grounded).
DEFAULT_DIMENSION_EFFECTS: Mapping[str, float] = {
    "correctness": 0.60,
    "specificity": 0.40,
    "completeness": 0.20,
    "hallucination_safety": 0.05,
}
# Judge noise on each dimension's difference (SD, score points): correctness is the easiest to
# judge against the canonical answer, completeness the hardest.
DEFAULT_DIMENSION_NOISE: Mapping[str, float] = {
    "correctness": 0.50,
    "specificity": 0.70,
    "completeness": 0.80,
    "hallucination_safety": 0.60,
}
# Fixed shape of the score model (recorded in truth.json): the typical score of a dimension and
# how strongly its difference follows the judge's overall impression (the verdict's latent).
_DIMENSION_LEVEL = {
    "correctness": 3.4,
    "specificity": 3.0,
    "completeness": 3.2,
    "hallucination_safety": 3.7,
}
_DIMENSION_LOADING = {
    "correctness": 0.9,
    "specificity": 0.6,
    "completeness": 0.5,
    "hallucination_safety": 0.3,
}
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
    #: True mean WITH − WITHOUT difference per blind-rubric dimension (latent score points);
    #: dimensions left out keep their ``DEFAULT_DIMENSION_EFFECTS`` value.
    dimension_effects: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: dict(DEFAULT_DIMENSION_EFFECTS)
    )
    #: Judge noise (SD) on each dimension's difference; defaults ``DEFAULT_DIMENSION_NOISE``.
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
    """(WITH, WITHOUT) 1–5 scores of one judgment, one per dimension (see the module docstring)."""
    level = np.array([_DIMENSION_LEVEL[d] for d in BLIND_DIMENSIONS]) + _LEVEL_SD * c
    loading = np.array([_DIMENSION_LOADING[d] for d in BLIND_DIMENSIONS])
    diff = effect + loading * z + noise * e
    # floor(x + 0.5), not np.round: no round-half-to-even, so the truth below is exact.
    with_ = np.clip(np.floor(level + diff / 2 + 0.5), 1, 5).astype(int)
    without = np.clip(np.floor(level - diff / 2 + 0.5), 1, 5).astype(int)
    return with_, without


def _expected_score(mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """E[clip(floor(x + 0.5), 1, 5)] for x ~ N(mean, sd^2): 1 + sum_k P(x >= k + 0.5)."""
    cuts = np.arange(1, 5) + 0.5
    return 1.0 + special.ndtr((mean[..., None] - cuts) / sd[..., None]).sum(axis=-1)


def _true_dimension_differences(
    effect: np.ndarray, noise: np.ndarray, shift: float, scale: float
) -> np.ndarray:
    """Expected WITH − WITHOUT score per dimension on the 1–5 scale.

    ``z`` is ``N(±shift / scale, 1)`` with either sign equally likely (the position bias with
    both orders, or a fair random order), so each arm's pre-rounding score is a two-component
    normal mixture and its expected rounded, clipped value is a sum of normal CDFs.
    """
    level = np.array([_DIMENSION_LEVEL[d] for d in BLIND_DIMENSIONS])
    loading = np.array([_DIMENSION_LOADING[d] for d in BLIND_DIMENSIONS])
    sd = np.sqrt(_LEVEL_SD**2 + (loading**2 + noise**2) / 4)
    out = np.zeros(len(BLIND_DIMENSIONS))
    for sign in (1.0, -1.0):
        half = (effect + loading * sign * shift / scale) / 2
        out += 0.5 * (_expected_score(level + half, sd) - _expected_score(level - half, sd))
    return out


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


_K_ARM_ONLY = (
    "reference",
    "strengths",
    "pairs",
    "task_sd",
    "nu",
    "token_ratios",
)  # see ._arms.K_ARM_ONLY


def write_simulation(
    out: Path, tasks: list, runs: list, judgments: list, truth: dict, params: Any
) -> Simulation:
    """Write the three files and ``truth.json`` (with the files' sha256) atomically."""
    from ..records import atomic_write, write_jsonl_atomic

    paths = {name: out / f"{name}.jsonl" for name in ("tasks", "runs", "judgments")}
    for name, records in (("tasks", tasks), ("runs", runs), ("judgments", judgments)):
        write_jsonl_atomic(paths[name], records)
    truth = truth | {"files_sha256": {k: _sha256_file(v) for k, v in paths.items()}}
    truth_file = out / "truth.json"
    atomic_write(truth_file, lambda fh: fh.write(json.dumps(truth, indent=2).encode() + b"\n"))
    return Simulation(out, paths["tasks"], paths["runs"], paths["judgments"], truth_file, params)


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

    Blind-pair judgments score each dimension with its own effect
    (``dimension_effects``) and judge noise (``dimension_noise``), leaning with the
    judge's verdict; ``truth.json["dimensions"]`` holds each dimension's parameters and
    its ``true_difference`` (expected WITH − WITHOUT score on the 1–5 scale). The scores
    are drawn from a child stream of ``seed``: changing the dimension parameters changes
    only the scores inside the blind-pair ``raw`` texts, never a verdict, token count,
    run or timestamp.

    With ``arms=("none", "v1", "v2")`` it writes a K-arm directory: ``arms.toml``, runs of
    every arm and three-way judgments of every pair of arms with ``arm_a`` / ``arm_b``, from
    arm ``strengths`` (``reference``, ``pairs``, ``task_sd``, ``nu``: see
    :mod:`evalstats.simulation._arms`).

    Parameters
    ----------
    out_dir : path-like
        Directory to write (created if needed; files replaced atomically).
    params : SimulationParams, optional
        All parameters; keyword ``overrides`` replace single fields (and ``arms``,
        ``reference``, ``strengths``, ``pairs``, ``task_sd``, ``nu``, ``token_ratios`` for K arms).

    Returns
    -------
    Simulation

    Examples
    --------
    >>> import tempfile, evalstats
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=3, n_replicates=2, seed=1)
    >>> sorted(p.name for p in sim.out_dir.iterdir())
    ['judgments.jsonl', 'runs.jsonl', 'tasks.jsonl', 'truth.json']

    Each dimension's true effect, and its expected difference on the 1–5 scale once the
    scores are rounded and clipped:

    >>> import json
    >>> truth = json.loads(sim.truth.read_text())
    >>> for dim, v in truth["dimensions"].items():
    ...     print(f"{dim:<21} {v['effect']:5.2f} {v['true_difference']:6.3f}")
    correctness            0.60  0.589
    specificity            0.40  0.398
    completeness           0.20  0.199
    hallucination_safety   0.05  0.049
    """
    if {"arms", *_K_ARM_ONLY} & set(overrides):
        from ._arms import simulate_arms_from

        return simulate_arms_from(out_dir, params or SimulationParams(), dict(overrides))
    from .. import rubrics as _rubrics
    from ..tokens import count_tokens

    p = dataclasses.replace(params or SimulationParams(), **overrides)
    check_outcome_probs(p.p_win, p.p_tie, p.p_loss)
    check_positive_int(p.n_tasks, "n_tasks")
    check_positive_int(p.n_replicates, "n_replicates")
    check_seed(p.seed)
    for name in ("over_budget_rate", "malformed_rate", "error_rate"):
        check_probability(getattr(p, name), name)
    if p.orders not in ("random", "both"):
        raise ParameterError(f"orders must be 'random' or 'both', got {p.orders!r}")
    for judge in p.judges:
        provider, _, model = str(judge).partition(":")
        if not (provider and model):
            raise ParameterError(f"a judge must be named 'provider:model', got {judge!r}")
    effects = _dimension_table(p.dimension_effects, DEFAULT_DIMENSION_EFFECTS, "dimension_effects")
    dim_noise = _dimension_table(p.dimension_noise, DEFAULT_DIMENSION_NOISE, "dimension_noise")
    p = dataclasses.replace(p, dimension_effects=effects, dimension_noise=dim_noise)
    effect_v = np.array(list(effects.values()))
    noise_v = np.array(list(dim_noise.values()))
    gen = np.random.default_rng(p.seed)
    # The dimension scores' own stream: spawning leaves ``gen``'s state untouched, and every
    # judgment's score noise is fixed by its (rubric, judge, task, replicate, order) cell, so
    # neither the dimension parameters nor over-budget pairs shift any other draw.
    (dim_gen,) = gen.spawn(1)
    dim_draws = dim_gen.standard_normal(
        (len(p.rubrics), len(p.judges), p.n_tasks, p.n_replicates, 2, 2, len(BLIND_DIMENSIONS))
    )
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
    sigma_y = np.sqrt(1.0 + sigma**2 + p.judge_noise**2)
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
                        scale = sigma_y
                        lo, hi = latent_thresholds(p.p_tie, p.p_loss, scale)
                        y = latent[t, r] + noise + shift
                        outcome = int(y >= lo) + int(y >= hi)
                        if order is None:
                            raw = _ww_raw(gen, outcome, tw, two)
                        else:
                            k_order = ORDERS.index(order)
                            c, e = dim_draws[k_rubric, k_judge, t, r, k_order]
                            s_with, s_without = _dimension_scores(
                                y / sigma_y, c, e, effect_v, noise_v
                            )
                            if order == "with_first":
                                raw = _blind_raw(gen, outcome, s_with, s_without)
                            else:
                                raw = _blind_raw(gen, 2 - outcome, s_without, s_with)
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
    return write_simulation(out, tasks, runs, judgments, truth, p)
