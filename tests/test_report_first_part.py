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

import pytest

from evalstats.report import _render
from evalstats.report._kinds import prepare
from evalstats.report._results import PendingTables, first_part

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
PARAMS = {"n_resamples": 200, "seed": 3}


@pytest.fixture(scope="module")
def parts():
    if not SAMPLE.exists():
        pytest.skip("data/sample is absent")
    prepared = prepare("evaluation", SAMPLE, **PARAMS)
    got = []
    whole = prepared.compute(["report"], on_first_part=got.append)
    assert len(got) == 1, "the report page has one first part"
    return got[0], whole


def _dump(obj, path: Path) -> None:
    # As the renderer writes it: whole or not at all (a waiting reader may look any time).
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def test_the_first_part_holds_the_pages_own_numbers(parts):
    first, whole = parts
    assert {"headline", "consensus", "missing_bounds", "design_coverage"} <= set(first.tables)
    assert set(first.tables) < set(whole.tables), "the rest of the page is not in the first part"
    for name, table in first.tables.items():
        # Computed before the rest, never changed by it: what the kernel shows first is
        # what results.json publishes.
        assert table.equals(whole.tables[name]), name


def test_a_first_part_waits_for_the_rest_on_every_kind_of_lookup(parts, tmp_path):
    first, whole = parts
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
    first, whole = parts
    assert "primary_test" in first.unavailable and "primary_test" not in first.tables
    part = first_part(first, tmp_path / "never-written.pickle")
    assert part.tables.get("primary_test") is None
    assert "primary_test" not in part.tables
    assert part.unavailable["primary_test"] == whole.unavailable["primary_test"]
    with pytest.raises(KeyError):
        part.tables["primary_test"]


def test_the_first_parts_json_view_equals_the_whole_pages(parts, tmp_path):
    first, whole = parts
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
    first, _ = parts
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
