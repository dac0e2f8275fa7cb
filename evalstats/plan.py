"""The declared analysis plan: ``plan.toml`` in the data directory.

What a plan holds and how it is hashed: docs/data.md (Analysis plan).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ._validate import check_choice, check_positive_int, check_range
from .errors import DataError

__all__ = [
    "CONSENSUS_RULES", "MARGIN_KINDS", "PLAN_KEYS", "PLAN_STATISTICS", "SIDEDNESS", "Plan",
    "find_plan", "load_plan", "parse_plan", "read_toml",
]  # fmt: skip

# stats.rates.RATE_NAMES and stats.cost.COST_METRICS (a test keeps them equal).
PLAN_STATISTICS = (
    "win_rate", "tie_rate", "loss_rate", "net_win", "score", "tokens_total_ratio",
    "tokens_geomean_ratio", "tokens_median_ratio", "wall_total_ratio", "wall_geomean_ratio",
    "wall_median_ratio",
)  # fmt: skip
SIDEDNESS = ("two-sided", "greater", "less")
MARGIN_KINDS = ("equivalence", "non-inferiority")
# stats.agreement.consensus rules; the consensus frame names its judge "consensus:<rule>".
CONSENSUS_RULES = ("unanimous", "majority")
PLAN_KEYS = (
    "written_at", "primary_rubric", "primary_judge", "consensus", "statistic", "alpha",
    "sidedness", "margin", "margin_kind", "tasks", "replicates", "judges", "rubrics", "note",
)  # fmt: skip


@dataclass(frozen=True)
class Plan:
    """A validated analysis plan.

    The :data:`PLAN_KEYS` (exactly one of ``primary_judge`` and ``consensus``; ``margin`` with
    ``margin_kind``), plus ``path`` and ``file_mtime`` (not hashed; the audit falls back on the
    file time when ``written_at`` is absent)."""

    primary_rubric: str
    statistic: str
    primary_judge: str | None = None
    consensus: str | None = None
    alpha: float = 0.05
    sidedness: str = "two-sided"
    margin: float | None = None
    margin_kind: str | None = None
    tasks: int | tuple[str, ...] | None = None
    replicates: int | None = None
    judges: tuple[str, ...] | None = None
    rubrics: tuple[str, ...] | None = None
    written_at: _dt.datetime | None = None
    note: str | None = None
    path: str | None = field(default=None, compare=False)
    file_mtime: _dt.datetime | None = field(default=None, compare=False, repr=False)

    @property
    def primary_judge_name(self) -> str:
        """The ``judge`` value of the primary verdicts: the judge, or ``consensus:<rule>``."""
        return self.primary_judge or f"consensus:{self.consensus}"

    @property
    def primary_key(self) -> dict[str, str]:
        """``{"rubric": ..., "judge": ...}``: the primary row of a judge x rubric table."""
        return {"rubric": self.primary_rubric, "judge": self.primary_judge_name}

    @property
    def n_tasks(self) -> int | None:
        """Planned number of tasks (the count, or the number of listed ids)."""
        return len(self.tasks) if isinstance(self.tasks, tuple) else self.tasks

    def to_dict(self) -> dict[str, Any]:
        """The canonical content: every hashed field, JSON-ready (lists, ISO-8601 UTC)."""
        out: dict[str, Any] = {}
        for key in PLAN_KEYS:
            value = getattr(self, key)
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, _dt.datetime):
                value = value.isoformat()
            out[key] = value
        return out

    @property
    def sha256(self) -> str:
        """sha256 (hex) of :meth:`to_dict` as sorted-key, compact JSON."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _line_of(text: str, key: str) -> int | None:
    """The line where a top-level key (or table) is set."""
    k = re.escape(key)
    pattern = rf"^\s*(?:{k}|\"{k}\"|'{k}')\s*(?:=|\.)|^\s*\[+\s*(?:{k}|\"{k}\")\s*[\].]"
    for n, line in enumerate(text.splitlines(), start=1):
        if re.search(pattern, line):
            return n
    return None


def read_toml(p: Path) -> tuple[dict[str, Any], str]:
    """A TOML file's table and text; ``DataError`` (with the line) when it cannot be read."""
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise DataError("file not found", path=p) from None
    except IsADirectoryError:
        raise DataError("is a directory, not a file", path=p) from None
    except UnicodeDecodeError:
        raise DataError("invalid UTF-8; save the file as UTF-8", path=p) from None
    except OSError as exc:
        raise DataError(
            f"cannot read the file ({exc.strerror or type(exc).__name__})", path=p
        ) from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"at line (\d+)", str(exc))
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise DataError(
            f"not valid TOML ({reason})", path=p, line=int(m.group(1)) if m else None
        ) from None


def _kind(v: Any) -> str:
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "an array"
    return f"{type(v).__name__} {v!r}"


def _timestamp(value: Any) -> _dt.datetime:
    if isinstance(value, str):
        try:
            value = _dt.datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"expected an ISO-8601 date and time, got {value!r}") from None
    if isinstance(value, _dt.datetime):
        # Naive times are taken as UTC, as everywhere in the data contract.
        return value.replace(tzinfo=_dt.UTC) if value.tzinfo is None else value.astimezone(_dt.UTC)
    if isinstance(value, _dt.date):
        raise ValueError(f"expected a date and a time, got the date {value.isoformat()} alone")
    raise ValueError(f"expected an ISO-8601 date and time, got {_kind(value)}")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {_kind(value)}")
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
        raise ValueError(f"expected an array of non-empty strings, got {_kind(value)}")
    if not value:
        raise ValueError("expected a non-empty array")
    dup = sorted({x for x in value if value.count(x) > 1})
    if dup:
        raise ValueError(f"listed twice: {', '.join(map(repr, dup))}")
    return tuple(sorted(value))


_CHECKS = {
    "written_at": _timestamp,
    "primary_rubric": _text,
    "primary_judge": _text,
    "consensus": lambda v: check_choice(v, "consensus", CONSENSUS_RULES),
    "statistic": lambda v: check_choice(v, "statistic", PLAN_STATISTICS),
    "alpha": lambda v: check_range(v, "alpha", 0, 0.5, closed=(False, True)),
    "sidedness": lambda v: check_choice(v, "sidedness", SIDEDNESS),
    "margin": lambda v: check_range(v, "margin", 0, closed=(False, True)),
    "margin_kind": lambda v: check_choice(v, "margin_kind", MARGIN_KINDS),
    "tasks": lambda v: _names(v) if isinstance(v, list) else check_positive_int(v, "tasks"),
    "replicates": lambda v: check_positive_int(v, "replicates"),
    "judges": _names,
    "rubrics": _names,
    "note": lambda v: v if isinstance(v, str) else _text(v),
}


def parse_plan(
    data: Mapping[str, Any], *, path: str | os.PathLike[str] | None = None, text: str | None = None
) -> Plan:
    """Validate a plan given as a mapping.

    ``DataError`` names the file, line (from ``text``) and field of an unknown key, a wrong or
    missing value, or keys that contradict.

    >>> plan = parse_plan({"primary_rubric": "with-without", "consensus": "unanimous",
    ...                    "statistic": "net_win", "alpha": 0.05, "tasks": 15})
    >>> plan.primary_key, plan.n_tasks, len(plan.sha256)
    ({'rubric': 'with-without', 'judge': 'consensus:unanimous'}, 15, 64)
    """

    def fail(key: str | None, reason: str) -> DataError:
        line = _line_of(text, key) if (text is not None and key) else None
        return DataError(reason, path=path, line=line, field=key)

    # null (what to_dict writes for an unset field) is an absent key.
    data = {k: v for k, v in data.items() if v is not None}
    unknown = [k for k in data if k not in PLAN_KEYS]
    if unknown:
        raise fail(unknown[0], f"unknown key {unknown[0]!r}; known: {', '.join(PLAN_KEYS)}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        try:
            values[key] = _CHECKS[key](value)
        except ValueError as exc:
            raise fail(key, str(exc)) from None
    for key in ("primary_rubric", "statistic"):
        if key not in values:
            raise fail(None, f"missing required key {key!r}")
    if "primary_judge" in values and "consensus" in values:
        raise fail("consensus", "give either primary_judge or consensus, not both")
    if "primary_judge" not in values and "consensus" not in values:
        rules = " or ".join(CONSENSUS_RULES)
        raise fail(None, f"missing the primary judge: give primary_judge or consensus ({rules})")
    if ("margin" in values) != ("margin_kind" in values):
        key = "margin" if "margin" in values else "margin_kind"
        raise fail(key, "margin and margin_kind go together: give both or neither")
    margin, stat = values.get("margin"), values["statistic"]
    half = 1.0 if stat == "net_win" else 0.5  # half the range: a wider margin holds for all
    if margin is not None and stat in PLAN_STATISTICS[:5] and margin >= half:
        span = "[-1, 1]" if stat == "net_win" else "[0, 1]"
        raise fail("margin", f"margin must be < {half:g} for {stat} (in {span}), got {margin:g}")
    rubrics, judges = values.get("rubrics"), values.get("judges")
    rubric, judge = values["primary_rubric"], values.get("primary_judge")
    if rubrics is not None and rubric not in rubrics:
        raise fail("primary_rubric", f"{rubric!r} is not in rubrics {list(rubrics)}")
    if judges is not None and judge is not None and judge not in judges:
        raise fail("primary_judge", f"{judge!r} is not in judges {list(judges)}")
    return Plan(**values, path=None if path is None else str(path))


def load_plan(path: str | os.PathLike[str]) -> Plan:
    """Read and validate ``plan.toml``; the Plan has ``path`` and ``file_mtime``.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "plan.toml"
    >>> _ = p.write_text('''
    ... written_at = 2026-05-01T09:00:00Z
    ... primary_rubric = "with-without"
    ... primary_judge = "anthropic:claude-sonnet-4-20250514"
    ... statistic = "net_win"
    ... ''')
    >>> plan = load_plan(p)
    >>> plan.statistic, plan.sidedness, plan.written_at.isoformat()
    ('net_win', 'two-sided', '2026-05-01T09:00:00+00:00')
    """
    p = Path(path)
    if p.suffix.lower() != ".toml":
        raise DataError(f"unsupported plan file type {p.suffix!r}; use plan.toml", path=p)
    data, text = read_toml(p)
    plan = parse_plan(data, path=p, text=text)
    return replace(plan, file_mtime=_dt.datetime.fromtimestamp(p.stat().st_mtime, tz=_dt.UTC))


def find_plan(data_dir: str | os.PathLike[str]) -> Path | None:
    """``DATA_DIR/plan.toml``, or None."""
    p = Path(data_dir) / "plan.toml"
    return p if p.exists() else None
