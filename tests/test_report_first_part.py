"""A page's first part: the kernel starts on it while the renderer computes the rest.

``evalstats report`` hands the report page's notebook the tables of its first sections
(``ReportKind.first_part``) as soon as they are computed; the rest of the page follows in
the page's own pickle, which the first part's :class:`PendingTables` wait for on the first
lookup of a table they do not hold. These tests check that the first part holds exactly
the page's own numbers, that every way of reading it waits for the rest instead of
answering "absent", that its JSON view equals the whole page's, and that a renderer that
fails after the first part ends the wait with its error instead of a hang.
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from evalstats.report import _render
from evalstats.report._kinds import prepare
from evalstats.report._results import PendingTables, Results, first_part

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
PARAMS = {"n_resamples": 200, "seed": 3}


@pytest.fixture(scope="module")
def parts():
    if not SAMPLE.exists():
        pytest.skip("data/sample is absent")
    prepared = prepare("evaluation", SAMPLE, **PARAMS)
    got = []
    whole = prepared.compute(["report"], on_first_part=got.append)
    assert len(got) == 3, "the report page is handed over in three parts, then whole"
    return got[0], whole, got


def _dump(obj, path: Path) -> None:
    # As the renderer writes it: whole or not at all (a waiting reader may look any time).
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def test_the_first_part_holds_the_pages_own_numbers(parts):
    first, whole, _ = parts
    assert {"headline", "consensus", "missing_bounds", "design_coverage"} <= set(first.tables)
    assert set(first.tables) < set(whole.tables), "the rest of the page is not in the first part"
    for name, table in first.tables.items():
        # Computed before the rest, never changed by it: what the kernel shows first is
        # what results.json publishes.
        assert table.equals(whole.tables[name]), name


def test_a_first_part_waits_for_the_rest_on_every_kind_of_lookup(parts, tmp_path):
    first, whole, _ = parts
    complete = tmp_path / "report.pickle"
    _dump(first_part(first, complete), tmp_path / "report.first.pickle")
    for read in (
        lambda t: t.get("audit"),
        lambda t: t["audit"],
        lambda t: "audit" in t,
        lambda t: list(t),
        lambda t: len(t),
        lambda t: dict(t.items()),
    ):
        with (tmp_path / "report.first.pickle").open("rb") as fh:
            res = pickle.load(fh)
        assert isinstance(res.tables, PendingTables)
        assert res.tables.get("headline") is not None  # held: no wait
        writer = threading.Timer(0.2, _dump, (whole, complete))
        start = time.monotonic()
        writer.start()
        try:
            read(res.tables)
        finally:
            writer.join()
        assert time.monotonic() - start >= 0.15, "answered before the rest was written"
        assert set(res.tables) == set(whole.tables)
        assert res.unavailable == whole.unavailable
        complete.unlink()


def test_a_table_the_first_part_found_unavailable_is_answered_without_waiting(
    parts, tmp_path, monkeypatch
):
    """The sample has no analysis plan: primary_test, the first part's last section, is
    unavailable with its reason, and the notebook's cell for it must not wait for the rest
    of the page (no complete pickle is ever written here)."""
    from evalstats.report import _results

    monkeypatch.setattr(_results, "_PENDING_WAIT_SECONDS", 1.0)  # a wait fails fast
    first, whole, _ = parts
    assert "primary_test" in first.unavailable and "primary_test" not in first.tables
    part = first_part(first, tmp_path / "never-written.pickle")
    assert part.tables.get("primary_test") is None
    assert "primary_test" not in part.tables
    assert part.unavailable["primary_test"] == whole.unavailable["primary_test"]
    with pytest.raises(KeyError):
        part.tables["primary_test"]


def test_each_part_is_waited_for_only_as_far_as_a_lookup_needs(parts, tmp_path, monkeypatch):
    """After the first part come agreement (part 2) and cost to per-task (part 3): a cell
    asking for agreement waits for part 2 only, per_task for part 3, and a table of the
    last sections (audit) for the whole page. Each part holds every table before it."""
    from evalstats.report import _results

    monkeypatch.setattr(_results, "_PENDING_WAIT_SECONDS", 2.0)  # a wrong wait fails fast
    first, whole, got = parts
    names = [set(part.tables) for part in got]
    assert names[0] < names[1] < names[2] < set(whole.tables)
    assert "agreement" in names[1] - names[0] and "per_task" in names[2] - names[1]
    paths = [tmp_path / "report.part2.pickle", tmp_path / "report.part3.pickle"]
    complete = tmp_path / "report.pickle"
    res = pickle.loads(pickle.dumps(first_part(first, [*paths, complete])))
    _dump(first_part(got[1], [paths[1], complete]), paths[0])
    assert res.tables["agreement"].equals(whole.tables["agreement"])  # part 2 only
    with pytest.raises(TimeoutError, match="part3"):
        res.tables.get("per_task")  # part 3 is not written: the lookup waits for it
    _dump(first_part(got[2], [complete]), paths[1])
    assert res.tables["per_task"].equals(whole.tables["per_task"])
    with pytest.raises(TimeoutError, match="report.pickle"):
        res.tables.get("audit")  # only the whole page has it
    _dump(whole, complete)
    assert res.tables["audit"].equals(whole.tables["audit"])
    assert set(res.tables) == set(whole.tables) and res.unavailable == whole.unavailable


def test_the_first_parts_json_view_equals_the_whole_pages(parts, tmp_path):
    first, whole, _ = parts
    complete = tmp_path / "report.pickle"
    _dump(whole, complete)
    part = first_part(first, complete)
    lazy = part.to_json()
    eager = whole.to_json()
    assert lazy["tables"]["headline"] == eager["tables"]["headline"]
    assert dict(lazy["tables"]) == eager["tables"]
    assert dict(lazy["unavailable"]) == eager["unavailable"]
    assert {k: lazy[k] for k in ("format", "simulated", "parameters", "provenance")} == {
        k: eager[k] for k in ("format", "simulated", "parameters", "provenance")
    }


def test_a_renderer_that_fails_after_the_first_part_ends_the_wait(parts, tmp_path):
    first, _, _ = parts
    complete = tmp_path / "report.pickle"
    part = pickle.loads(pickle.dumps(first_part(first, complete)))
    (tmp_path / "report.pickle.failed").write_text("RuntimeError: disk full", encoding="utf-8")
    with pytest.raises(RuntimeError, match="disk full"):
        part.tables.get("audit")


def test_the_report_raises_the_computations_error_not_a_notebook_error(monkeypatch, tmp_path):
    """The rest of page 0 fails while the kernel already shows its first part."""
    if not SAMPLE.exists():
        pytest.skip("data/sample is absent")
    real = _render._dump

    def failing(obj, path):
        if path.name == "report.pickle":
            raise OSError("no space left on device")
        real(obj, path)

    monkeypatch.setattr(_render, "_dump", failing)
    start = time.monotonic()
    with pytest.raises(OSError, match="no space left"):
        _render.render_report(SAMPLE, tmp_path / "out", params=PARAMS)
    assert time.monotonic() - start < 120
    assert not os.path.exists(tmp_path / "out" / "index.html")


def test_a_part_whose_section_the_page_lacks_is_the_whole_page(tmp_path, monkeypatch):
    """A kind may name a section a page does not compute (a rubric-less design, a kind
    registered by a user): that part is then written as the whole page, so a notebook
    waiting for it is not left waiting."""
    import types

    from evalstats.report import _results

    monkeypatch.setattr(_results, "_PENDING_WAIT_SECONDS", 2.0)
    whole = Results({"a": pd.DataFrame({"x": [1]}), "b": pd.DataFrame({"x": [2]})}, {}, {}, False)
    first = Results({"a": pd.DataFrame({"x": [1]})}, {}, {}, False)

    def compute(pages, on_first_part=None):
        on_first_part(first)  # after section "a"; section "never" is not on this page
        return whole

    prepared = types.SimpleNamespace(
        spec=types.SimpleNamespace(part_ends=lambda page: ("a", "never")), compute=compute
    )
    queue = tmp_path / "queue"
    queue.mkdir()
    pages = _render._Pages(["report"], tmp_path, queue, tmp_path / "out")
    pages.start(prepared)
    pages.wait_all()
    pages.join()
    assert [p.name for p in pages.parts[0]] == ["report.part1.pickle", "report.part2.pickle"]
    with pages.handed[0].open("rb") as fh:
        res = pickle.load(fh)
    assert res.tables["b"].equals(whole.tables["b"])  # through part 2, the whole page
