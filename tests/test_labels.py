"""Labels table and the labelling sheet: draw -> fill -> read -> labels, de-blinded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalstats.cli import build_parser
from evalstats.errors import DataError, ParameterError
from evalstats.labelsheet import draw_sample, draw_sheet, key_path, merge_labels, read_sheet
from evalstats.records import has_provenance, load_dir, load_labels, write_labels

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    for name in ("tasks.jsonl", "runs.jsonl"):
        shutil.copy(SAMPLE / name, d / name)
    return d


def _answers(data_dir: Path) -> dict[tuple[str, int], dict[str, str]]:
    runs = load_dir(data_dir).runs
    out: dict[tuple[str, int], dict[str, str]] = {}
    for t, r, arm, ans in zip(
        runs["task_id"], runs["replicate"], runs["arm"], runs["answer"], strict=True
    ):
        out.setdefault((t, int(r)), {})[str(arm)] = ans
    return out


def test_round_trip_deblinds_both_orders(data_dir: Path, tmp_path: Path) -> None:
    sheet_path = tmp_path / "sheet.csv"
    sheet = draw_sheet(data_dir, 30, seed=7, path=sheet_path)
    assert len(sheet) == 30
    assert not any("with" in c.lower() for c in sheet.columns)  # no arm names
    answers = _answers(data_dir)
    rng = np.random.default_rng(0)
    intended = rng.choice(["win", "tie", "loss"], size=len(sheet))
    # Fill the sheet as a person would, deciding from the answers' text, not from the key.
    verdicts = []
    shown_with_first = []
    for row, want in zip(sheet.itertuples(), intended, strict=True):
        pair = answers[(row.task_id, int(row.replicate))]
        a_is_with = row.answer_a == pair["with"]
        assert row.answer_b == (pair["without"] if a_is_with else pair["with"])
        shown_with_first.append(a_is_with)
        if want == "tie":
            verdicts.append("tie")
        else:
            with_letter, without_letter = ("A", "B") if a_is_with else ("B", "A")
            verdicts.append(with_letter if want == "win" else without_letter)
    assert 0 < sum(shown_with_first) < len(sheet)  # both orders occur
    filled = pd.read_csv(sheet_path, dtype=str, keep_default_na=False)
    filled["verdict"] = verdicts
    filled["labeler"] = "ann"
    filled.to_csv(sheet_path, index=False)

    labels = read_sheet(sheet_path, data_dir, created_at="2026-01-01T00:00:00Z")
    assert labels["outcome"].tolist() == intended.tolist()
    expected_order = ["with_first" if w else "without_first" for w in shown_with_first]
    assert labels["order"].tolist() == expected_order
    assert set(labels["sample_seed"]) == {7}
    assert has_provenance(labels)

    target = merge_labels(data_dir, labels)
    back = load_labels(target)
    assert back["outcome"].astype(str).tolist() == intended.tolist()
    assert back["order"].astype(str).tolist() == expected_order
    assert has_provenance(back)
    with pytest.raises(DataError, match="already present"):
        merge_labels(data_dir, labels)  # nothing is overwritten


def test_cli_draw_and_read(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    parser = build_parser()
    sheet = tmp_path / "s.csv"
    args = parser.parse_args(["label", str(data_dir), "-n", "5", "--seed", "3", "-o", str(sheet)])
    assert args.func(args) == 0
    filled = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    filled["verdict"] = ["A", "b", "TIE", "", "a"]
    filled.to_csv(sheet, index=False)
    args = parser.parse_args(["label", "--read", str(sheet), str(data_dir), "--labeler", "bo"])
    assert args.func(args) == 0
    assert "4 label(s) added" in capsys.readouterr().out
    labels = load_labels(data_dir / "labels.jsonl")
    assert len(labels) == 4 and set(labels["labeler"]) == {"bo"}
    args = parser.parse_args(["label", str(data_dir), "-n", "5"])
    with pytest.raises(ParameterError, match="--seed"):  # evalstats.cli.main: one line, exit 2
        args.func(args)


def test_sheet_errors_name_line_and_field(data_dir: Path, tmp_path: Path) -> None:
    sheet_path = tmp_path / "sheet.csv"
    draw_sheet(data_dir, 4, seed=1, path=sheet_path)
    filled = pd.read_csv(sheet_path, dtype=str, keep_default_na=False)
    filled["verdict"] = ["A", "B", "maybe", "tie"]
    filled["labeler"] = "x"
    filled.to_csv(sheet_path, index=False)
    with pytest.raises(DataError, match=r"sheet\.csv:4, field 'verdict'"):
        read_sheet(sheet_path, data_dir)
    # An edited key is not a random draw any more.
    key = json.loads(key_path(sheet_path).read_text())
    key["items"][0]["order"] = (
        "without_first" if key["items"][0]["order"] == "with_first" else "with_first"
    )
    key_path(sheet_path).write_text(json.dumps(key))
    with pytest.raises(DataError, match="not a random sample"):
        read_sheet(sheet_path, data_dir)
    # Other data than the sheet was drawn from.
    draw_sheet(data_dir, 4, seed=1, path=sheet_path)
    runs = (data_dir / "runs.jsonl").read_text().splitlines()
    rec = json.loads(runs[0])
    rec["answer"] += " (edited)"
    runs[0] = json.dumps(rec)
    (data_dir / "runs.jsonl").write_text("\n".join(runs) + "\n")
    with pytest.raises(DataError, match="not the ones this sheet was drawn from"):
        read_sheet(sheet_path, data_dir)
    key_path(sheet_path).unlink()
    with pytest.raises(DataError, match="blinding key is missing"):
        read_sheet(sheet_path, data_dir)


@pytest.mark.slow  # simulation study
def test_stratified_allocation_is_proportional_and_uniform() -> None:
    pairs = pd.DataFrame({"task_id": ["a"] * 6 + ["b"] * 3 + ["c"] * 3, "replicate": 0})
    pairs["replicate"] = pairs.groupby("task_id").cumcount() + 1
    counts = draw_sample(pairs, 6, seed=0)["task_id"].value_counts().sort_index()
    assert counts.tolist() == [3, 2, 1] or counts.tolist() == [3, 1, 2]
    # Every pair has the same inclusion probability n / M (over many seeds).
    hits = pd.concat([draw_sample(pairs, 6, seed=s) for s in range(600)])
    freq = hits.groupby(["task_id", "replicate"]).size() / 600
    assert len(freq) == 12
    assert np.allclose(freq.to_numpy(), 0.5, atol=0.08)
    assert draw_sample(pairs, 6, seed=5).equals(draw_sample(pairs, 6, seed=5))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_labels_formats_round_trip(tmp_path: Path, suffix: str) -> None:
    labels = pd.DataFrame(
        {
            "task_id": ["t1", "t1", "t2"],
            "replicate": [1, 1, 2],
            "labeler": ["a", "b", "a"],
            "outcome": ["win", "loss", "tie"],
            "created_at": pd.to_datetime(["2026-01-01T00:00:00Z"] * 3, utc=True),
            "order": [None, "with_first", None],
            "note": [None, "close call", None],
        }
    )
    path = write_labels(labels, tmp_path / f"labels{suffix}")
    back = load_labels(path)
    assert back["outcome"].astype(str).tolist() == ["win", "loss", "tie"]
    assert back["order"].astype(object).isna().tolist() == [True, False, True]
    assert back["note"].tolist()[1] == "close call"
    assert not has_provenance(back)


def test_labels_validation_errors(tmp_path: Path) -> None:
    good = {
        "task_id": "t",
        "replicate": 1,
        "labeler": "a",
        "outcome": "win",
        "created_at": "2026-01-01T00:00:00Z",
    }
    p = tmp_path / "labels.jsonl"
    p.write_text(json.dumps(good) + "\n" + json.dumps({**good, "labeler": "b", "outcome": "meh"}))
    with pytest.raises(DataError, match=r"labels\.jsonl:2, field 'outcome': unknown outcome"):
        load_labels(p)
    p.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(DataError, match=r"labels\.jsonl:2.*duplicate"):
        load_labels(p)
    p.write_text(json.dumps({k: v for k, v in good.items() if k != "labeler"}) + "\n")
    with pytest.raises(DataError, match=r"labels\.jsonl:1, field 'labeler': missing"):
        load_labels(p)
    p.write_text(json.dumps({**good, "replicate": 0}) + "\n")
    with pytest.raises(DataError, match="field 'replicate'"):
        load_labels(p)
    runs = pd.DataFrame({"task_id": ["u"], "replicate": [1]})
    p.write_text(json.dumps(good) + "\n")
    with pytest.raises(DataError, match="has no runs"):
        load_labels(p, runs)


def test_rubric_labels_are_read_from_with_point_of_view(tmp_path):
    # Seed 000's (a)/(b)/(c) need nothing more; seed 001's a_wins/b_wins need the shown order.
    import evalstats

    sim = evalstats.simulate(tmp_path / "s", n_tasks=3, n_replicates=1, seed=0)
    tasks = sorted(evalstats.load_dir(sim.out_dir).runs["task_id"].unique())
    rows = [
        (tasks[0], "(a)", None),
        (tasks[1], "(c)", None),
        (tasks[1], "b_wins", "with_first"),
        (tasks[2], "b_wins", "without_first"),
        (tasks[2], "A_WINS", "with_first"),
    ]
    p = tmp_path / "labels.jsonl"
    with p.open("w") as fh:
        for i, (task, outcome, order) in enumerate(rows):
            rec = {"task_id": task, "replicate": 1, "labeler": f"p{i}", "outcome": outcome}
            rec["created_at"] = "2026-01-01T00:00:00Z"
            if order:
                rec["order"] = order
            fh.write(json.dumps(rec) + "\n")
    labels = load_labels(p)
    assert labels["outcome"].astype(str).tolist() == ["win", "loss", "loss", "win", "win"]
    assert labels["label"].tolist() == ["(a)", "(c)", "b_wins", "b_wins", "A_WINS"]
    with p.open("a") as fh:
        rec = {"task_id": tasks[0], "replicate": 1, "labeler": "q", "outcome": "a_wins"}
        fh.write(json.dumps({**rec, "created_at": "2026-01-01T00:00:00Z"}) + "\n")
    with pytest.raises(DataError, match="needs the shown order") as info:
        load_labels(p)
    assert info.value.line == 6 and info.value.field == "outcome"
