"""Planning judge calls: the pairs, the units to judge, one call per (judge, pair, order)."""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalstats._families import model_family
from evalstats._schema import ARMS, ORDERS, PAIR_ORDERS
from evalstats._validate import check_positive_int
from evalstats.errors import ParameterError

from . import providers
from ._calls import EXPECTED_OUTPUT_TOKENS, Call, Config, JudgeOptions, Unit, now_iso, rubric_order
from .journal import is_judgment
from .prices import load_prices, price_for
from .providers import JudgeSpec, parse_judge


def _rubric(rubric: Any) -> Any:
    if isinstance(rubric, str):
        from evalstats import rubrics

        return rubrics.get(rubric)
    return rubric


def _order_for(seed: int, task_id: str, replicate: int, arms: tuple[str, str] | None = None) -> str:
    # Hashed per pair, not drawn from a stream: a rerun on grown data keeps every order. The arm
    # shown first depends on the set of arms, not their order in arms.toml, and is the seeds'
    # choice for WITH / WITHOUT: a reordered or grown study sends the same bodies again.
    pair = ARMS if arms is None or set(arms) == set(ARMS) else tuple(sorted(arms))
    text = f"{seed}\0{task_id}\0{replicate}" + ("" if pair == ARMS else f"\0{pair[0]}\0{pair[1]}")
    first = pair[hashlib.sha256(text.encode()).digest()[0] & 1]
    return ORDERS[first != ARMS[0]] if arms is None else PAIR_ORDERS[first != arms[0]]


def _run_mapping(row: Mapping[str, Any], arm: str) -> dict[str, Any]:
    run = {}
    for name in ("answer", "tokens", "wall_s", "files_inspected"):
        value = row.get(f"{arm}_{name}")
        if isinstance(value, np.ndarray | np.generic):
            value = value.tolist()  # numpy scalars and arrays as Python's
        run[name] = None if not isinstance(value, list | str) and pd.isna(value) else value
    return run


def _pairs(tasks: pd.DataFrame, runs: pd.DataFrame, karm: Any, which: str | None) -> pd.DataFrame:
    """Pairs with budgets applied, from a long runs frame or an already paired one."""
    from evalstats.records import pair_runs
    from evalstats.tokens import annotate_runs

    if karm is not None:
        pairs = pair_runs(runs, karm, which or "all")
    elif "with_answer" in runs.columns:
        pairs = runs
    elif "arm" not in runs.columns:
        raise ParameterError("runs needs an 'arm' column (long runs) or with_*/without_* columns")
    else:
        if "over_budget" not in runs.columns or "tokens" not in runs.columns:
            runs = annotate_runs(runs, tasks)
        pairs = pair_runs(runs)
    if missing := [
        c for c in ("task_id", "replicate", "with_answer", "without_answer") if c not in pairs
    ]:
        raise ParameterError(f"paired runs lack columns {missing}")
    if "over_budget" not in pairs.columns:
        raise ParameterError(
            "runs carry no budget flags: load them with records.load_runs(path, tasks) "
            "(or pass long runs with an 'arm' column and let the runner count tokens)"
        )
    return pairs


def _units(
    tasks: pd.DataFrame,
    runs: pd.DataFrame,
    rubric: Any,
    *,
    orders: str,
    seed: int,
    pairs: str | None = None,
    arms: Any = None,
) -> tuple[list[Unit], int]:
    """Rendered prompts for every within-budget pair, and the number of no-answer pairs."""
    if orders not in ("random", "both"):
        raise ParameterError(f"orders must be 'random' or 'both', got {orders!r}")
    if orders == "both" and not rubric.needs_order:
        raise ParameterError(
            f"orders='both' is for a rubric that hides the arms (blind-pair); "
            f"{rubric.name!r} shows them labelled"
        )
    for col in ("task_id", "prompt", "canonical_answer"):
        if col not in tasks.columns:
            raise ParameterError(f"tasks lack column {col!r}")
    from evalstats.records import answers_sha256

    karm = _k_arms(runs, pairs, arms)
    table = _pairs(tasks, runs, karm, pairs)
    over = table["over_budget"].fillna(False).to_numpy(dtype=bool)
    task_by_id = {
        str(t): {"prompt": p, "canonical_answer": c}
        for t, p, c in tasks[["task_id", "prompt", "canonical_answer"]].itertuples(index=False)
    }
    units_in: list[tuple[str, int, str | None, Any, tuple | None]] = []
    variants: dict[tuple[str, str], Any] = {}
    for row in table.loc[~over].to_dict("records"):
        task_id, replicate = str(row["task_id"]), int(row["replicate"])
        if task_id not in task_by_id:
            raise ParameterError(f"pair ({task_id!r}, {replicate}) refers to an unknown task")
        pair = None if karm is None else (str(row["arm_a"]), str(row["arm_b"]))
        if pair is not None and pair not in variants:
            from evalstats.rubrics import with_pair_tools

            # A three-way prompt names both tools; a blind one names no arm.
            tools = [karm.tools.get(a) or karm.name(a) for a in pair]
            variants[pair] = rubric if rubric.needs_order else with_pair_tools(rubric, *tools)
        shown = rubric if pair is None else variants[pair]
        sha = answers_sha256(row["with_answer"], row["without_answer"])
        if not rubric.needs_order:
            chosen: Sequence[str | None] = (None,)
        elif orders == "both":
            chosen = ORDERS if pair is None else PAIR_ORDERS
        else:
            chosen = (_order_for(seed, task_id, replicate, pair),)
        runs_shown = _run_mapping(row, "with"), _run_mapping(row, "without")
        for order in chosen:
            prompt = shown.render(task_by_id[task_id], *runs_shown, order=rubric_order(order))
            units_in.append((task_id, replicate, order, prompt, pair, sha))
    if not units_in:
        return [], int(over.sum())
    from evalstats.tokens import count_tokens

    system_tokens = {s: int(count_tokens(s)) for s in {u[3].system for u in units_in}}
    user_tokens = count_tokens([u[3].user for u in units_in])
    units = [
        Unit(t, r, o, p.messages(), system_tokens[p.system] + int(n), *(pair or (None,) * 2), sha)
        for (t, r, o, p, pair, sha), n in zip(units_in, user_tokens, strict=True)
    ]
    return units, int(over.sum())


def _k_arms(runs: pd.DataFrame, pairs: str | None, arms: Any) -> Any:
    """The K arms to pair, or None for the seeds' WITH / WITHOUT (``pairs`` or not)."""
    if "arm" not in runs.columns:
        if pairs is not None:
            raise ParameterError("pairs= needs long runs (one row per arm, an 'arm' column)")
        return None
    from evalstats.records import Arms

    arms = runs.attrs.get("arms") if arms is None else arms
    if arms is None:
        present = set(runs["arm"].astype(str))
        cats = getattr(runs["arm"].dtype, "categories", None)
        order = [str(a) for a in cats] if cats is not None else sorted(present)
        arms = Arms(tuple(a for a in order if a in present))
    if arms.two_arm:
        return None  # two arms: WITH against WITHOUT, exactly as without pairs=
    if pairs is None:
        raise ParameterError(
            f"the runs have {len(arms.ids)} arms ({', '.join(arms.ids)}): choose the pairs to "
            "judge, pairs='all' or pairs='reference' (evalstats judge --pairs all|reference)"
        )
    return arms


def call_key(
    rubric: Any, judge: JudgeSpec, unit: Unit, *, temperature: float | None, max_tokens: int
) -> str:
    """sha256 of the canonical JSON of everything that makes a call what it is."""
    ident = {"rubric": rubric.name, "revision": rubric.revision, "judge": judge.name}
    ident |= {"messages": unit.messages, "temperature": temperature, "max_tokens": max_tokens}
    ident |= {"order": unit.order, "task_id": unit.task_id, "replicate": unit.replicate}
    ident |= unit.arm_fields()  # K arms only, so that the seeds' two-arm keys stay what they were
    canonical = json.dumps(ident, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _calls(units: Iterable[Unit], judges: Sequence[JudgeSpec], cfg: Config) -> list[Call]:
    out = []
    opts = {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens}
    for judge in judges:
        for unit in units:
            key = call_key(cfg.rubric, judge, unit, **opts)
            params = providers.request_params(judge, unit.messages, **opts)
            out.append(Call(key, judge, unit, params))
    return out


def reuse_answers(
    calls: Iterable[Call], records: Iterable[dict], done: set[str]
) -> tuple[set[str], list[dict]]:
    """Calls a byte-identical request answered, and journal lines for those of another pair."""

    def pair(r: Any) -> tuple:  # either orientation, by the arm shown first
        a, b, order = r.get("arm_a") or ARMS[0], r.get("arm_b") or ARMS[1], r.get("order")
        first = a if order in ("a_first", "with_first") else b if order else None
        return r.get("request_sha256"), r["task_id"], r["replicate"], frozenset((a, b)), first

    ok = [r for r in records if is_judgment(r) and r.get("error") is None]
    answered = {r["request_sha256"]: r for r in ok if r.get("request_sha256")}
    judged = {pair(r) for r in ok}
    keys, lines = set(), []
    for c in calls:
        u, hit = c.unit, answered.get(c.request_sha256) if c.key not in done else None
        if hit is None:
            continue
        keys.add(c.key)
        if pair({**vars(u), "request_sha256": c.request_sha256}) in judged:
            continue  # this pair's own verdict (arms.toml reordered, or a two-arm study grown)
        line = {k: v for k, v in hit.items() if k not in ("arm_a", "arm_b")}
        line.update(judgment_id=uuid.uuid4().hex, task_id=u.task_id, replicate=u.replicate)
        line.update(order=u.order, call_key=c.key, runs_sha256=u.runs_sha256, usd=0.0)
        line.update(usd_counted=0.0, input_tokens=None, output_tokens=None, latency_s=None)
        line.update(u.arm_fields(), created_at=now_iso(), reused=hit["judgment_id"])
        lines.append(line)
    return keys, lines


def first_per_body(calls: Iterable[Call]) -> tuple[list[Call], list[Call]]:
    """The first call of each request body, and the others (answered by it once journaled)."""
    seen: set[str | None] = set()
    firsts: list[Call] = []
    later: list[Call] = []
    for c in calls:
        (later if c.request_sha256 in seen else firsts).append(c)
        seen.add(c.request_sha256)
    return firsts, later


def _check_params(
    judges: Sequence[str | JudgeSpec], concurrency: int, max_tokens: int, temperature: Any
) -> list[JudgeSpec]:
    if isinstance(judges, str | JudgeSpec):
        judges = [judges]
    specs = [parse_judge(j) for j in judges]
    if not specs:
        raise ParameterError("give at least one judge ('provider:model')")
    if len({s.name for s in specs}) != len(specs):
        raise ParameterError(f"a judge is listed twice: {[s.name for s in specs]}")
    check_positive_int(concurrency, "concurrency")
    check_positive_int(max_tokens, "max_tokens")
    if temperature is not None and not (
        isinstance(temperature, int | float) and math.isfinite(temperature) and temperature >= 0
    ):
        raise ParameterError(f"temperature must be None or a number >= 0, got {temperature!r}")
    return specs


def same_family_judges(
    runs: pd.DataFrame, judges: Sequence[JudgeSpec], *, allow: bool = False
) -> str | None:
    """Refuse a judge of an agent's own model family unless ``allow``; the shared family(ies)."""
    cols = [c for c in ("agent_model", "with_agent_model", "without_agent_model") if c in runs]
    agents = sorted({str(a) for c in cols for a in runs[c].dropna()})
    agent_fams = {a: model_family(a) for a in agents}
    shared = [
        (j.name, a, f)
        for j in judges
        for a, f in agent_fams.items()
        if f != "unknown" and model_family(j.name) == f
    ]
    if not shared:
        return None
    if not allow:
        name, agent, fam = shared[0]
        raise ParameterError(
            f"judge {name} is of the agent's own model family ({fam}: agent_model {agent}); "
            "the seed runs the judge as a different model from the agent under test "
            "(--allow-same-family to run it anyway; the audit then reports it)"
        )
    return ",".join(sorted({f for _, _, f in shared}))


def plan_calls(
    tasks: pd.DataFrame,
    runs: pd.DataFrame,
    *,
    rubric: Any,
    judges: Sequence[str | JudgeSpec] | str,
    orders: Literal["random", "both"] = "random",
    options: JudgeOptions | None = None,
    seed: int = 0,
    pairs: Literal["all", "reference"] | None = None,
    arms: Any = None,
) -> pd.DataFrame:
    """Every judge call a run would make, without making any (over-budget pairs left out).

    Parameters
    ----------
    tasks, runs : pandas.DataFrame
        Tasks, and runs long (``records.load_runs``) or paired (``records.pair_runs``).
    rubric : str or Rubric
        ``"with-without"``, ``"blind-pair"`` or a rubric.
    judges : str or sequence of str
        ``"provider:model"`` names.
    options : JudgeOptions, optional
        As for :func:`run_judges`.
    orders : {"random", "both"}
        Blind rubric only: one seeded order per pair, or both orders.
    seed : int, default 0
        Seed of the orders.
    pairs, arms : optional
        K arms only: ``"all"`` or ``"reference"`` pairs, and the :class:`~evalstats.Arms`.

    Returns
    -------
    pandas.DataFrame
        One row per call (``frame.attrs["no_answer_pairs"]``: over-budget pairs left out).

    Examples
    --------
    >>> tasks = pd.DataFrame({"task_id": ["t1"], "prompt": ["Where is X?"],
    ...                       "canonical_answer": ["x.go"]})
    >>> pairs = pd.DataFrame({"task_id": ["t1"], "replicate": [1],
    ...     "with_answer": ["x.go:10"], "with_tokens": [1200], "with_wall_s": [41.0],
    ...     "without_answer": ["unsure"], "without_tokens": [3400], "without_wall_s": [90.0],
    ...     "over_budget": [False]})
    >>> plan = plan_calls(tasks, pairs, rubric="with-without",
    ...                   judges=["anthropic:claude-sonnet-4-20250514", "openai:gpt-4o"])
    >>> plan[["judge", "task_id", "order"]].to_dict("list")["judge"]
    ['anthropic:claude-sonnet-4-20250514', 'openai:gpt-4o']
    """
    opts = options or JudgeOptions()
    specs = _check_params(judges, 1, opts.max_tokens, opts.temperature)
    rub = _rubric(rubric)
    cfg = Config(rub, opts.temperature, opts.max_tokens, load_prices(opts.prices), opts.batch)
    units, no_answer = _units(tasks, runs, rub, orders=orders, seed=seed, pairs=pairs, arms=arms)
    karm = any(u.arm_a is not None for u in units)
    rows = []
    for c in _calls(units, specs, cfg):
        u = c.unit
        price = price_for(c.judge.provider, c.judge.model, cfg.prices)
        est = (
            price.usd(u.input_tokens, EXPECTED_OUTPUT_TOKENS, batch=cfg.batch) if price else np.nan
        )
        pair = [u.arm_a, u.arm_b] if karm else []
        head = [c.judge.name, u.task_id, u.replicate, u.order, *pair]
        rows.append([*head, c.key, u.input_tokens, est, *(m["content"] for m in u.messages[:2])])
    columns = ["judge", "task_id", "replicate", "order", "call_key", "input_tokens", "est_usd"]
    columns[4:4] = ["arm_a", "arm_b"] if karm else []
    frame = pd.DataFrame(rows, columns=[*columns, "system", "user"])
    frame.attrs["no_answer_pairs"] = no_answer
    return frame
