"""A report's results document as the paper export reads it: loading, its tables, numbers.

The export (:mod:`evalstats.report._paper`) reads ``results.json`` (a path, its parsed dict,
or a :class:`~evalstats.report.Results`); a long result is pivoted here to one row per group
(its ``<table>_diagnostics`` joined), the side-by-side form every exported table, macro and
sentence is made from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._tidy import is_long, result_by, wide
from ..errors import DataError

_FORMAT = "evalstats-results/1"
_RATES = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")
# Table name -> statistics shown (those present), in this order.
EXPORT_TABLES: dict[str, tuple[str, ...]] = {
    "headline": _RATES,
    "consensus": _RATES,
    "agreement": ("observed_agreement", "kappa", "kappa_linear", "ac1", "pabak"),
    "cost": ("estimate",),
    "per_task": ("win_rate", "tie_rate", "loss_rate", "net_win"),
}
_MACRO_TABLES = ("headline", "consensus")
_AGREEMENT_MACROS = ("observed_agreement", "kappa", "kappa_linear", "ac1", "pabak")
_METHOD_TEXT = {
    "cr2_wilson": "CR2 Wilson with Bell-McCaffrey df",
    "cr2_t": "CR2 t with Bell-McCaffrey df",
    "wild_webb": "wild cluster bootstrap, Webb weights",
    "iid_wilson": "IID Wilson, not clustered",
    "cluster_wilson": "Wilson at the design-effect sample size",
    "cluster_t": "cluster-robust t",
    "bca": "BCa cluster bootstrap",
    "percentile": "percentile cluster bootstrap",
    "basic": "basic cluster bootstrap",
    "jackknife_t": "jackknife over tasks with t quantiles",
    # the comparison page (K arms): compare, rank, arm_costs, pareto
    "task_bootstrap_studentized": (
        "task-cluster bootstrap-t on the logit (rates) / atanh (net win) scale, replicates "
        "nested in tasks"
    ),
    "task_bootstrap_percentile": "percentile task-cluster bootstrap (replicates nested)",
    "task_bootstrap_wald": "CR1 Wald t with a task-bootstrap max-t for the simultaneous bands",
    "task_bootstrap_studentized_log": "task-cluster bootstrap-t on the log ratio",
    "task_bootstrap_percentile_log": "percentile task-cluster bootstrap of the ratio",
    "simultaneous_stepdown": "simultaneous step-down (Mogstad, Romano, Shaikh & Wilhelm 2023)",
    "marginal_stepdown": "marginal step-down (Mogstad, Romano, Shaikh & Wilhelm 2023)",
    "task_bootstrap_share": "share of the task-bootstrap resamples",
    "atanh_jackknife_exact": (
        "delete-one-task jackknife t on Fisher's z (with an exact bound at few disagreements)"
    ),
    "atanh_jackknife_midp_blaker": (
        "delete-one-task jackknife t on Fisher's z (with a mid-p binomial bound at few "
        "disagreements)"
    ),
}
_COST_TEXT = {
    "tokens_total_ratio": "total tokens",
    "tokens_geomean_ratio": "tokens per pair (geometric mean of the ratios)",
    "tokens_median_ratio": "tokens per pair (median of the ratios)",
    "wall_total_ratio": "total wall-clock time",
    "wall_geomean_ratio": "wall-clock time per pair (geometric mean of the ratios)",
    "wall_median_ratio": "wall-clock time per pair (median of the ratios)",
}


def _load(results: Any) -> dict[str, Any]:
    """results.json (a path), its parsed dict, or a :class:`~evalstats.report.Results`."""
    if hasattr(results, "to_json") and callable(results.to_json):
        return results.to_json()
    if isinstance(results, Mapping):
        doc = dict(results)
        where = None
    else:
        where = Path(os.fspath(results))
        try:
            doc = json.loads(where.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError("results file not found", path=where) from None
        except json.JSONDecodeError as exc:
            raise DataError(f"not JSON: {exc.msg}", path=where, line=exc.lineno) from None
    if not isinstance(doc, Mapping) or doc.get("format") != _FORMAT:
        got = doc.get("format") if isinstance(doc, Mapping) else type(doc).__name__
        raise DataError(f"not an {_FORMAT} document (format={got!r})", path=where, field="format")
    if not isinstance(doc.get("tables"), Mapping):
        raise DataError("no tables in the results document", path=where, field="tables")
    return dict(doc)


_COST_LEGACY = {"metric": "statistic", "se_log": "se", "n_pairs": "n", "n_clusters": "n_tasks"}


def _table(doc: Mapping[str, Any], name: str) -> pd.DataFrame | None:
    """Table ``name`` of a results document; a long result pivoted to one row per group
    (its ``<name>_diagnostics`` joined), the side-by-side form every export prints."""
    rows = doc["tables"].get(name)
    if not rows:
        return None
    table = pd.DataFrame(rows)
    if name == "cost" and "metric" in table:  # a results.json of before the one shape
        table = table.rename(columns=_COST_LEGACY)
    # one row per statistic alone (per pair of arms, K arms) is its own view
    if is_long(table) and set(result_by(table)) - {"arm_a", "arm_b"}:
        diag = doc["tables"].get(f"{name}_diagnostics")
        table = wide(table, diagnostics=pd.DataFrame(diag) if diag else None)
    return table


def _confidence(doc: Mapping[str, Any]) -> float:
    conf = doc.get("parameters", {}).get("confidence")
    if conf is None:
        conf = doc.get("provenance", {}).get("confidence", 0.95)
    return float(conf)


def _pct(x: float) -> str:
    return f"{x * 100:g}"


def _f(v: Any) -> float:
    return np.nan if v is None else float(v)


def _g(x: Any) -> str:
    return f"{float(x):g}"


def method_words(method: Any) -> str:
    """The words a sentence uses for an interval method (a results.json row's ``method``).

    A known name in words, any other (a method added later) verbatim.

    >>> method_words("cr2_wilson"), method_words("clustered atanh jackknife")
    ('CR2 Wilson with Bell-McCaffrey df', 'clustered atanh jackknife')
    """
    m = "" if method is None or method != method else str(method)
    return _METHOD_TEXT.get(m, m)
