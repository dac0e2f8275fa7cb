"""scripts/compare_results.py: an old wide table is matched cell by cell against its long form."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pandas as pd

from evalstats.stats.rates import win_rates

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compare_results.py"


def _script():
    spec = importlib.util.spec_from_file_location("compare_results", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _records(frame: pd.DataFrame) -> list[dict]:
    # every digit kept (to_json would round to 10), NaN as JSON's NaN
    return json.loads(json.dumps(frame.to_dict("records"), default=lambda v: v.item()))


def _docs():
    frame = pd.DataFrame(
        {
            "task_id": list("aabbccdd"),
            "judge": ["j"] * 4 + ["k"] * 4,
            "status": "ok",
            "outcome": ["win", "tie", "win", "loss", "loss", "tie", "win", "win"],
        }
    )
    long = win_rates(frame, by="judge")
    # The old wide layout, written out by hand from the long rows (as the old code wrote it).
    old_rows = []
    for judge, rows in pd.DataFrame(long).groupby("judge", sort=True):
        diag = long.diagnostics.set_index("judge").loc[judge]
        row = {"judge": judge, "n": int(diag["n"]), "wins": int(diag["wins"])}
        for r in rows.to_dict("records"):
            s = r["statistic"]
            row |= {s: r["estimate"], f"{s}_ci_low": r["ci_low"], f"{s}_ci_high": r["ci_high"]}
        row |= {"net_win_p": rows.iloc[3]["p_value"], "df": rows.iloc[0]["df"]}
        row |= {"method": rows.iloc[0]["method"]}
        old_rows.append(row)
    old = {"tables": {"headline": old_rows}}
    new = {
        "tables": {
            "headline": _records(pd.DataFrame(long)),
            "headline_diagnostics": _records(long.diagnostics),
        }
    }
    return json.loads(json.dumps(old, default=lambda v: v.item())), new


def test_same_numbers_match_and_every_change_is_found(tmp_path):
    cr = _script()
    old, new = _docs()
    found, n = cr.wide_vs_long(
        "headline", old["tables"]["headline"], new["tables"]["headline"],
        new["tables"]["headline_diagnostics"],
    )  # fmt: skip
    assert found == [] and n == 2 * (len(old["tables"]["headline"][0]) - 1)
    moved = copy.deepcopy(new)
    moved["tables"]["headline"][8]["ci_high"] += 1e-12  # judge k, net win
    moved["tables"]["headline_diagnostics"][0]["wins"] += 1
    (tmp_path / "a.json").write_text(json.dumps(old))
    (tmp_path / "b.json").write_text(json.dumps(moved))
    assert cr.main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    found, _ = cr.wide_vs_long(
        "headline", old["tables"]["headline"], moved["tables"]["headline"],
        moved["tables"]["headline_diagnostics"],
    )  # fmt: skip
    assert sorted(w for w, _, _ in found) == [
        "tables.headline[0].wins",
        "tables.headline[1].net_win_ci_high",
    ]
    # a cell the new shape lost is a difference, never skipped
    old["tables"]["headline"][0]["gone"] = 1.0
    found, _ = cr.wide_vs_long(
        "headline", old["tables"]["headline"], new["tables"]["headline"],
        new["tables"]["headline_diagnostics"],
    )  # fmt: skip
    assert [w for w, _, _ in found] == ["tables.headline[0].gone (unmatched)"]
