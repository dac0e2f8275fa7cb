#!/usr/bin/env python3
"""Compare two results.json files number by number: ``compare_results.py OLD NEW``.

Prints every difference (path, old, new) in the tables, parameters, unavailable sections and
provenance (library versions excepted), and exits 1 when any published number differs.
Used to check that a change of the report code leaves the sample report's numbers as they
were (same seed): render with the old code, render with the new, compare.

A table that was wide in OLD (one row per group, ``<statistic>_ci_low`` and the like) and is
long in NEW (one row per group and ``statistic``, issue 20's one result shape, its per-group
counts in ``<table>_diagnostics``) is compared cell by cell: each old cell is looked up in
the new rows of its group, by the rule the wide view is made with (``<statistic>`` =
``estimate``, ``<statistic>_se`` = ``se``, ``_ci_low``, ``_ci_high``, ``_p`` = ``p_value``,
``_df`` = ``df``, ``_<extra>``), else in the diagnostics, else in a column the group's rows
share, else through :data:`RENAMED` (the old names that the new shape renamed). An old cell
found nowhere is listed as unmatched (and counts as a difference), so nothing published can
go missing silently.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

IGNORED = ("provenance.versions", "provenance.package")
SUFFIXES = {
    "": "estimate",
    "_se": "se",
    "_ci_low": "ci_low",
    "_ci_high": "ci_high",
    "_p": "p_value",
    "_df": "df",
}
TIDY = ("statistic", "estimate", "se", "ci_low", "ci_high", "p_value", "df", "n", "n_tasks")
TIDY += ("method", "confidence")
#: Old column -> (statistic, new column): names the long shape gave another name.
RENAMED: dict[str, tuple[str | None, str]] = {
    # win_rates: the rates' df is the win rate row's; net win's is its own row's df
    "df": ("win_rate", "df"),
    # position_bias
    "first_shown_p": ("first_shown_win_rate", "p_value"),
    "first_shown_df": ("first_shown_win_rate", "df"),
    # judge_agreement: the clustered kappa row and the IID kappa row
    "kappa_cluster_se": ("kappa", "se"),
    "kappa_method": ("kappa", "method"),
    "kappa_se": ("kappa_iid", "se"),
    "fleiss_p": ("fleiss_kappa", "p_value"),
    # cost_ratios: one row per ratio already (``metric`` is now ``statistic``)
    "se_log": (None, "se"),
    "n_pairs": (None, "n"),
}


_SEED_ARMS = {"arm_a": "with", "arm_b": "without"}
#: Column names issue 31's one vocabulary renamed, old -> new (the values compared as before).
RENAMED_COLUMNS = {"n_sims": "n_resamples", "n_clusters": "n_tasks"}


def differences(a: Any, b: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    if path.lstrip(".") in IGNORED:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        a = {RENAMED_COLUMNS.get(k, k) if RENAMED_COLUMNS.get(k) not in a else k: v
             for k, v in a.items()}  # fmt: skip
        for k in sorted(set(a) | set(b)):
            sub = f"{path}.{k}"
            if k not in a or k not in b:
                # Issue 31: every row names its pair of arms; the seeds' (with, without)
                # added to a two-arm table is not a change of a number.
                if k not in a and b.get(k) == _SEED_ARMS.get(k):
                    continue
                if sub.lstrip(".") not in IGNORED:
                    yield sub, a.get(k, "<absent>"), b.get(k, "<absent>")
                continue
            yield from differences(a[k], b[k], sub)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path} (length)", len(a), len(b)
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from differences(x, y, f"{path}[{i}]")
    elif type(a) is not type(b) or a != b:
        yield path, a, b


def is_long(rows: Any) -> bool:
    return bool(rows) and isinstance(rows[0], dict) and {"statistic", "estimate"} <= set(rows[0])


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def _key(row: Mapping[str, Any], cols: Sequence[str]) -> tuple:
    return tuple(row.get(c) for c in cols)


def _lookup(
    col: str, stats: dict[str, dict[str, Any]], diag: Mapping[str, Any] | None, metric: str | None
) -> tuple[bool, Any]:
    """The new value of old column ``col`` of one group (found?, value)."""
    if metric is not None:  # a table already one row per statistic (cost)
        row = stats.get(metric)
        if row is None:
            return False, None
        if col in row:
            return True, row[col]
        if col in RENAMED and RENAMED[col][0] is None:
            return True, row.get(RENAMED[col][1])
        return False, None
    if diag is not None and col in diag:
        return True, diag[col]
    # a renamed column first: old kappa_se (the IID SE) is not the kappa row's se (clustered)
    if col in RENAMED and RENAMED[col][0] in stats:
        stat, new = RENAMED[col]
        return True, stats[stat].get(new)
    # the longest statistic name that ``col`` starts with: kappa_linear before kappa
    for stat in sorted(stats, key=len, reverse=True):
        if not col.startswith(stat):
            continue
        rest = col[len(stat) :]
        row = stats[stat]
        if rest in SUFFIXES:
            return True, row.get(SUFFIXES[rest])
        if rest.startswith("_") and rest[1:] in row and rest[1:] not in TIDY:
            return True, row[rest[1:]]
    shared = {repr(r.get(col, "<absent>")) for r in stats.values()}
    if len(shared) == 1 and col in next(iter(stats.values())):
        return True, next(iter(stats.values()))[col]
    return False, None


def wide_vs_long(
    name: str, old: list[dict[str, Any]], new: list[dict[str, Any]], diag: list[dict] | None
) -> tuple[list[tuple[str, Any, Any]], int]:
    """Differences between an old wide table and its new long form, and the cells compared."""
    cols = list(new[0])
    by = cols[: cols.index("statistic")]
    metric_col = "metric" if not by and "metric" in old[0] else None
    groups: dict[tuple, dict[str, dict[str, Any]]] = {}
    for r in new:
        groups.setdefault(_key(r, by), {})[r["statistic"]] = r
    diags = {_key(r, by): r for r in diag or []}
    out, compared = [], 0
    for i, row in enumerate(old):
        if metric_col:
            stats, metric = {r["statistic"]: r for r in new}, row[metric_col]
        else:
            stats, metric = groups.get(_key(row, by)), None
        if stats is None:
            out.append((f"tables.{name}[{i}] (group {_key(row, by)})", "<row>", "<absent>"))
            continue
        for col, value in row.items():
            if col in by or col == metric_col:
                continue
            found, got = _lookup(col, stats, diags.get(_key(row, by)), metric)
            compared += 1
            if not found:
                out.append((f"tables.{name}[{i}].{col} (unmatched)", value, "<absent>"))
            elif not _same(value, got):
                out.append((f"tables.{name}[{i}].{col}", value, got))
    return out, compared


def count_numbers(doc: Any) -> int:
    if isinstance(doc, dict):
        return sum(count_numbers(v) for v in doc.values())
    if isinstance(doc, list):
        return sum(count_numbers(v) for v in doc)
    return int(isinstance(doc, int | float) and not isinstance(doc, bool))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv)
    old_tables, new_tables = old.get("tables", {}), new.get("tables", {})
    diffs: list[tuple[str, Any, Any]] = []
    reshaped = []
    for name in sorted(set(old_tables) | set(new_tables)):
        a, b = old_tables.get(name, "<absent>"), new_tables.get(name, "<absent>")
        if name.endswith("_diagnostics") and name[: -len("_diagnostics")] in old_tables:
            continue  # compared as part of its table
        if isinstance(a, list) and isinstance(b, list) and is_long(b) and not is_long(a) and a:
            found, n = wide_vs_long(name, a, b, new_tables.get(f"{name}_diagnostics"))
            diffs += found
            reshaped.append(f"{name} ({n} cells)")
            continue
        diffs += list(differences(a, b, f".tables.{name}"))
    rest_old = {k: v for k, v in old.items() if k != "tables"}
    rest_new = {k: v for k, v in new.items() if k != "tables"}
    diffs += list(differences(rest_old, rest_new))
    for where, a, b in diffs:
        print(f"{where.lstrip('.')}: {a!r} -> {b!r}")
    if reshaped:
        print("wide -> long, matched cell by cell: " + ", ".join(reshaped))
    n = count_numbers(old_tables)
    print(f"{len(diffs)} difference(s); {n} numbers in the old tables")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
