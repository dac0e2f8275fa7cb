"""The report renders on every dataset the loaders accept (issue 10, §6).

Each degenerate design is made with :func:`evalstats.simulate` plus edits of the written
files, rendered with few resamples, and checked: ``index.html`` exists, says why a section
is missing, holds no traceback, and ``results.json`` has the section absent (null) with the
reason under ``unavailable``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evalstats import simulate
from evalstats.report import compute

# Integration (slow: make test runs it, make check does not): computes the report on ten degenerate designs.
pytestmark = pytest.mark.slow

FAST = {"n_resamples": 40, "seed": 1}
JUDGES = ("anthropic:claude-sonnet-4-20250514", "openai:gpt-5.4")
# Small and clean: degenerate by the one edit each design makes, not by chance.
BASE = {
    "n_tasks": 4,
    "n_replicates": 2,
    "over_budget_rate": 0.0,
    "malformed_rate": 0.0,
    "error_rate": 0.0,
    "seed": 3,
}
TRACEBACK_MARKERS = ("Traceback", "Error:", "ipython-input", "most recent call last")


def _edit_jsonl(path: Path, edit: Callable[[dict], dict | None]) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    kept = [r for r in (edit(dict(r)) for r in rows) if r is not None]
    path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")


def _fail(rec: dict) -> dict:
    return rec | {"raw": None, "output_tokens": 0, "error": "APIError: simulated failure"}


def _all_failed(d: Path) -> None:
    _edit_jsonl(d / "judgments.jsonl", _fail)


def _one_judge_failed(d: Path) -> None:
    _edit_jsonl(d / "judgments.jsonl", lambda r: _fail(r) if r["judge"] == JUDGES[1] else r)


def _all_over_budget(d: Path) -> None:
    # Every run over its token budget: every pair is no_answer (whatever a judge said).
    _edit_jsonl(d / "tasks.jsonl", lambda r: r | {"budget_tokens": 1})


# name: (simulate overrides, edit of the written files, sections expected unavailable)
DESIGNS: dict[str, tuple[dict, Callable[[Path], None] | None, tuple[str, ...]]] = {
    "one_task": ({"n_tasks": 1}, None, ("power_mde",)),
    "all_failed": ({}, _all_failed, ("headline", "agreement", "design")),
    "one_judge_failed": ({}, _one_judge_failed, ("agreement",)),
    "all_over_budget": ({}, _all_over_budget, ("headline", "agreement", "design")),
    "all_ties": ({"p_win": 0.0, "p_tie": 1.0, "p_loss": 0.0, "judge_noise": 0.0}, None, ()),
    "one_replicate": ({"n_replicates": 1}, None, ()),
    "one_judge": ({"judges": JUDGES[:1]}, None, ("agreement", "consensus")),
    "no_blind_rubric": ({"rubrics": ("with-without",)}, None, ("position_bias", "dimensions")),
    "only_blind_rubric": ({"rubrics": ("blind-pair",)}, None, ()),
}


def make_design(name: str, dest: Path) -> Path:
    overrides, edit, _ = DESIGNS[name]
    simulate(dest, **(BASE | overrides))
    if edit is not None:
        edit(dest)
    return dest


@pytest.mark.parametrize("name", list(DESIGNS))
def test_degenerate_design_computes(name: str, tmp_path: Path) -> None:
    """Every section either computes or says why not (no exception), on both pages."""
    data = make_design(name, tmp_path / "data")
    res = compute("evaluation", data, **FAST)
    for section in DESIGNS[name][2]:
        assert section not in res.tables, section
        assert res.unavailable.get(section), f"{section}: no reason given"
    assert set(res.tables).isdisjoint(res.unavailable)


def test_a_figure_that_cannot_be_drawn_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plot function refusing the data is reported on the page, not raised."""
    import IPython.display

    import evalstats.plots
    from evalstats.report import show_figure

    def refuses(frame):
        raise ValueError("need at least two tasks to draw")

    shown: list[str] = []
    monkeypatch.setattr(evalstats.plots, "plot_refuses", refuses, raising=False)
    # What the notebook would be shown, caught where IPython displays it.
    monkeypatch.setattr(
        IPython.display, "display", lambda obj, raw: shown.append(obj["text/plain"])
    )
    assert show_figure("plot_refuses", None, name="x") is None
    assert shown == [
        "figure x: not available (evalstats.plots.plot_refuses: need at least two tasks to draw)."
    ]
