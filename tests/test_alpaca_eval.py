"""AlpacaEval adapter: the published leaderboard reproduced, and any annotations file read.

The published rows (``../shared/data/alpaca_eval/leaderboard_rows.json``) are
compared at the precision they are published to: 16-17 significant digits, so
every rate must agree to a relative 1e-12 (the only differences allowed are
floating-point summation order, ~1e-16) and every count exactly.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import special
from sklearn.metrics import cohen_kappa_score

import evalstats
from evalstats.adapters import alpaca_eval
from evalstats.errors import DataError
from evalstats.frames import VERDICT_COLUMNS
from evalstats.records import EvalstatsWarning
from evalstats.report._case_study import (  # private: the case study's own tables, small frames
    judge_agreement_by_model,
    leaderboard_row,
)
from evalstats.stats import models, proportion_ci

SHARED = Path(__file__).resolve().parents[2] / "shared"
ALPACA = SHARED / "data" / "alpaca_eval"
FILES = ("claude-2.1.annotations.jsonl.gz", "alpaca-7b.annotations.jsonl.gz")
# leaderboard_rows.json's README: this published row has no annotations in shared/.
NO_ANNOTATIONS = ("claude-2.1", "alpaca_eval_gpt4_turbo_fn")
REL_TOL = 1e-12
FLOAT_COLUMNS = ("win_rate", "standard_error", "discrete_win_rate")
COUNT_COLUMNS = ("n_wins", "n_wins_base", "n_draws", "n_total", "avg_length")


def _require_shared() -> None:
    if not ALPACA.exists():
        pytest.skip(
            f"{ALPACA} not found: ../shared (public AlpacaEval reference data) is not beside "
            "this clone of the repo"
        )


def _published_params():
    path = ALPACA / "leaderboard_rows.json"
    if not path.exists():
        return [pytest.param(None, id="shared-absent")]
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return [pytest.param(r, id=f"{r['model']}|{r['annotator']}") for r in rows]


def _raw_records() -> pd.DataFrame:
    """The shared annotation records read with the json module (pandas' reader rounds)."""
    rows = []
    for name in FILES:
        with gzip.open(ALPACA / name, "rt", encoding="utf-8") as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def real_frame() -> pd.DataFrame:
    _require_shared()
    return alpaca_eval.load([ALPACA / f for f in FILES])


@pytest.fixture(scope="module")
def real_board(real_frame) -> pd.DataFrame:
    return leaderboard_row(real_frame)


# --------------------------------------------------------------------------- published rows


@pytest.mark.parametrize("published", _published_params())
def test_published_leaderboard_row_reproduced(published, real_board):
    _require_shared()
    key = (published["model"], published["annotator"])
    mine = real_board.loc[(real_board["model"] == key[0]) & (real_board["annotator"] == key[1])]
    if mine.empty:
        assert key == NO_ANNOTATIONS, f"published row {key} has no annotations"
        pytest.skip(
            f"{key}: AlpacaEval published this row but its annotations are not in "
            "shared/data/alpaca_eval (documented in shared/data/README.md)"
        )
    assert len(mine) == 1
    row = mine.iloc[0]
    for col in FLOAT_COLUMNS:
        expected = float(published[col])
        assert math.isclose(row[col], expected, rel_tol=REL_TOL, abs_tol=0.0), (
            f"{key} {col}: {row[col]!r} != published {published[col]}"
        )
    for col in COUNT_COLUMNS:
        assert int(row[col]) == int(float(published[col])), (key, col)


def test_only_the_documented_row_lacks_annotations(real_board):
    rows = json.loads((ALPACA / "leaderboard_rows.json").read_text(encoding="utf-8"))["rows"]
    published = {(r["model"], r["annotator"]) for r in rows}
    mine = set(zip(real_board["model"], real_board["annotator"], strict=True))
    assert published - mine == {NO_ANNOTATIONS}
    assert mine <= published  # every annotated (model, annotator) is published
    assert len(mine) == 4


def test_real_frame_shape_and_schema(real_frame):
    assert list(real_frame.columns) == [*VERDICT_COLUMNS, *alpaca_eval.EXTRA_COLUMNS]
    assert len(real_frame) == 4 * 805
    assert (real_frame["status"] == "ok").all()
    assert (real_frame["replicate"] == 1).all()
    assert set(real_frame["rubric"].astype(str)) == {"alpaca_eval"}
    assert real_frame["order"].isna().all()
    # Price and time are kept; the judge's raw output is kept verbatim.
    raw = _raw_records()
    merged = real_frame.merge(
        raw.rename(columns={"instruction_id": "task_id", "annotator": "judge_name"}),
        left_on=["task_id", "model", real_frame["judge"].astype(str)],
        right_on=["task_id", "generator_2", "judge_name"],
        validate="1:1",
    )
    assert len(merged) == len(real_frame)
    np.testing.assert_array_equal(merged["judge_usd"], merged["price_per_example"])
    np.testing.assert_array_equal(merged["judge_time_s"], merged["time_per_example"])
    np.testing.assert_array_equal(merged["preference_x"], merged["preference_y"])
    assert (merged["raw"].fillna("") == merged["raw_completion"].fillna("")).all()


def test_real_agreement_matches_an_independent_crosstab(real_frame):
    agr = judge_agreement_by_model(real_frame, n_resamples=300, rng=0).wide()
    raw = _raw_records()
    raw["o"] = np.where(raw["preference"] > 1.5, 2, np.where(raw["preference"] == 1.5, 1, 0))
    for _, row in agr.iterrows():
        sub = raw.loc[raw["generator_2"] == row["model"]]
        wide = sub.pivot(index="instruction_id", columns="annotator", values="o")
        a, b = wide[row["judge_a"]], wide[row["judge_b"]]
        table = pd.crosstab(a, b).reindex(index=[0, 1, 2], columns=[0, 1, 2], fill_value=0)
        assert row["confusion"] == table.to_numpy().tolist()
        assert row["n"] == 805
        assert row["kappa"] == pytest.approx(cohen_kappa_score(a, b), rel=1e-12)


def test_real_leaderboard_equals_plain_pandas_definition(real_frame, real_board):
    # AlpacaEval's own definition on the raw records, independent of evalstats.
    raw = _raw_records()
    for (model, annotator), g in raw.groupby(["generator_2", "annotator"]):
        row = real_board.loc[
            (real_board["model"] == model) & (real_board["annotator"] == annotator)
        ].iloc[0]
        p = g["preference"] - 1
        assert row["win_rate"] == pytest.approx(p.mean() * 100, rel=1e-13)
        assert row["standard_error"] == pytest.approx(p.sem() * 100, rel=1e-12)


# --------------------------------------------------------------------------- synthetic files


def _oracle(prefs: pd.Series) -> dict[str, float]:
    """AlpacaEval's metrics (alpaca_eval.metrics.helpers) re-implemented with pandas."""
    s = pd.Series(prefs, dtype=float).replace({0.0: 1.5})
    valid = s.between(1.0, 2.0)
    p = s[valid] - 1
    discrete = s[valid].replace({1.5: 0.0}).round().replace({0.0: 1.5}) - 1
    return {
        "win_rate": p.mean() * 100,
        "standard_error": p.sem() * 100,
        "n_wins": int((p > 0.5).sum()),
        "n_wins_base": int((p < 0.5).sum()),
        "n_draws": int((s == 1.5).sum()),
        "n_total": int(valid.sum()),
        "discrete_win_rate": discrete.mean() * 100,
    }


def _synthetic(seed: int = 0, n: int = 60) -> list[dict]:
    """Two models x three annotators on the same instructions; the third is continuous."""
    rng = np.random.default_rng(seed)
    records = []
    for model, shift in (("model-alpha", 0.3), ("model-beta", -0.4)):
        quality = rng.normal(shift, 1.0, n)
        len_base = rng.integers(200, 3000, n)
        len_model = np.maximum(1, (len_base * np.exp(0.6 * quality)).astype(int))
        for judge in ("judge-one", "judge-two", "judge-weighted"):
            noisy = quality + rng.normal(0.0, 0.6, n)
            if judge == "judge-weighted":
                prefs = 1.0 + special.expit(2.0 * noisy)
                prefs[3] = 1.5  # an exact draw
            else:
                prefs = np.where(noisy > 0.4, 2.0, np.where(noisy > -0.1, 1.5, 1.0))
            for i in range(n):
                records.append(
                    {
                        "instruction_id": f"inst{i:03d}",
                        "dataset": "synthetic",
                        "generator_1": "baseline-zero",
                        "generator_2": model,
                        "annotator": judge,
                        "preference": float(prefs[i]),
                        "price_per_example": 0.001 * (i % 7),
                        "time_per_example": 0.5 + 0.01 * i,
                        "len_output_1": int(len_base[i]),
                        "len_output_2": int(len_model[i]),
                        "raw_completion": f"verdict {prefs[i]:.3f}",
                    }
                )
    return records


def _write_json_array(path: Path, records: list[dict], *, gz: bool = False) -> Path:
    text = json.dumps(records, indent=2)
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _write_jsonl(path: Path, records: list[dict], *, gz: bool = False) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in records)
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_every_format_gives_the_same_frame(tmp_path):
    records = _synthetic()
    half = len(records) // 2
    frames = [
        alpaca_eval.load(_write_json_array(tmp_path / "annotations.json", records)),
        alpaca_eval.load(_write_json_array(tmp_path / "a.json.gz", records, gz=True)),
        alpaca_eval.load(_write_jsonl(tmp_path / "a.jsonl", records)),
        alpaca_eval.load(str(_write_jsonl(tmp_path / "a.jsonl.gz", records, gz=True))),
        alpaca_eval.load(
            [
                _write_jsonl(tmp_path / "first.ndjson", records[:half]),
                _write_json_array(tmp_path / "second.json", records[half:]),
            ]
        ),
    ]
    drop = ["judgment_id"]  # names the file and line, which differ by format
    for f in frames[1:]:
        pd.testing.assert_frame_equal(f.drop(columns=drop), frames[0].drop(columns=drop))
    assert len(frames[0]) == len(records)
    first = str(tmp_path / "annotations.json")
    assert frames[0]["judgment_id"].str.startswith(f"{first}:").all()
    # Pretty-printed array: each record is named by the line its object opens on.
    assert f"{first}:2" in set(frames[0]["judgment_id"])


def test_synthetic_leaderboard_matches_alpaca_eval_definition(tmp_path):
    records = _synthetic(seed=3)
    frame = alpaca_eval.load(_write_jsonl(tmp_path / "a.jsonl.gz", records, gz=True))
    board = leaderboard_row(frame)
    raw = pd.DataFrame(records)
    assert len(board) == 6  # 2 models x 3 annotators
    for (model, annotator), g in raw.groupby(["generator_2", "annotator"]):
        row = board.loc[(board["model"] == model) & (board["annotator"] == annotator)].iloc[0]
        expected = _oracle(g["preference"])
        for col, value in expected.items():
            assert row[col] == pytest.approx(value, rel=1e-12, abs=1e-12), (model, annotator, col)
        assert row["avg_length"] == int(g["len_output_2"].mean())
        assert row["baseline"] == "baseline-zero"
        # The CI is the t interval around the win rate with the CR1 (= sem) SE.
        assert row["win_rate_ci_low"] < row["win_rate"] < row["win_rate_ci_high"]


def test_three_judges_agreement(tmp_path):
    records = _synthetic(seed=5)
    frame = alpaca_eval.load(_write_json_array(tmp_path / "annotations.json", records))
    one = frame.loc[frame["model"] == "model-alpha"]
    agr = evalstats.judge_agreement(one, rubric="alpaca_eval", n_resamples=200, rng=0).wide()
    assert len(agr) == 4  # three pairs + the all-judges row
    assert agr["judge_a"].iloc[-1] == "all judges"
    assert agr["n"].iloc[-1] == 60
    raw = pd.DataFrame(records)
    raw = raw.loc[raw["generator_2"] == "model-alpha"]
    raw["o"] = np.where(raw["preference"] > 1.5, 2, np.where(raw["preference"] == 1.5, 1, 0))
    wide = raw.pivot(index="instruction_id", columns="annotator", values="o")
    for _, row in agr.iloc[:3].iterrows():
        ref = cohen_kappa_score(wide[row["judge_a"]], wide[row["judge_b"]])
        assert row["kappa"] == pytest.approx(ref, rel=1e-12)
        assert row["n"] == 60
    both = judge_agreement_by_model(frame, n_resamples=200, rng=0).wide()
    assert both.groupby("model").size().to_dict() == {"model-alpha": 4, "model-beta": 4}
    pd.testing.assert_series_equal(
        both.loc[both["model"] == "model-alpha", "kappa"].reset_index(drop=True), agr["kappa"]
    )
    # consensus and win rates accept the frame as they accept a verdict frame.
    cons = evalstats.consensus(one, "majority", rubric="alpaca_eval")
    assert len(cons) == 60
    wr = evalstats.win_rates(frame, by=["model", "judge"])
    assert wr.diagnostics["n"].tolist() == [60] * 6


def test_invalid_preferences_are_kept_and_not_counted(tmp_path):
    base = {
        "dataset": "d",
        "generator_1": "gpt-base",
        "generator_2": "other-model",
        "annotator": "some_judge",
        "price_per_example": 0.01,
        "time_per_example": 1.0,
        "len_output_1": 10,
        "len_output_2": 12,
    }
    prefs = [2.0, 1.0, 1.5, None, "two", 2.5, 0, 1.7, 1.2, 2.0]
    records = [dict(base, instruction_id=f"i{k}", preference=p) for k, p in enumerate(prefs)]
    del records[0]["preference"]  # a record without the field at all
    records[0]["raw_completion"] = {"content": "structured output"}
    frame = alpaca_eval.load(_write_jsonl(tmp_path / "a.jsonl", records))
    by_task = frame.set_index("task_id")
    status = by_task["status"].astype(str)
    assert status.to_dict() == {
        "i0": "invalid",
        "i1": "ok",
        "i2": "ok",
        "i3": "invalid",
        "i4": "invalid",
        "i5": "invalid",
        "i6": "ok",
        "i7": "ok",
        "i8": "ok",
        "i9": "ok",
    }
    assert by_task.loc["i0", "parse_error"] == "missing preference"
    assert "not a number" in by_task.loc["i4", "parse_error"]
    assert "outside [1, 2]" in by_task.loc["i5", "parse_error"]
    assert by_task.loc["i6", "outcome"] == "tie"  # legacy 0 = draw
    assert by_task.loc["i7", "outcome"] == "win" and by_task.loc["i8", "outcome"] == "loss"
    assert by_task["outcome"].isna().sum() == 4
    assert json.loads(by_task.loc["i0", "raw"]) == {"content": "structured output"}
    board = leaderboard_row(frame).iloc[0]
    numeric = [1.0, 1.5, 0, 1.7, 1.2, 2.0]  # the valid ones, as AlpacaEval keeps them
    expected = _oracle(pd.Series(numeric))
    for col, value in expected.items():
        assert board[col] == pytest.approx(value, rel=1e-12), col
    assert board["n_invalid"] == 4 and board["n_total"] == 6


def test_instruction_text_and_outputs_when_ids_and_lengths_are_absent(tmp_path):
    records = [
        {
            "instruction": "Say hi.",
            "output_1": "Hello there!",
            "output_2": "Hi",
            "generator_1": "b",
            "generator_2": "m",
            "annotator": "j",
            "preference": 1.0,
        }
    ]
    frame = alpaca_eval.load(_write_json_array(tmp_path / "annotations.json", records))
    assert frame["task_id"].item() == hashlib.sha1(b"Say hi.").hexdigest()[:12]
    assert frame["len_without"].item() == 12 and frame["len_with"].item() == 2
    assert np.isnan(frame["judge_usd"].item()) and pd.isna(frame["dataset"].item())


def test_repeated_instruction_becomes_a_replicate_with_a_warning(tmp_path):
    records = _synthetic(seed=1, n=10)
    records = [r for r in records if r["generator_2"] == "model-alpha"]
    repeat = dict(records[2], preference=2.0)
    path = _write_jsonl(tmp_path / "a.jsonl", [*records, repeat])
    with pytest.warns(EvalstatsWarning, match=r"a\.jsonl:31: instruction 'inst002'"):
        frame = alpaca_eval.load(path)
    again = frame.loc[(frame["task_id"] == "inst002") & (frame["judge"] == "judge-one")]
    assert sorted(again["replicate"]) == [1, 2]
    row = leaderboard_row(frame).set_index("annotator").loc["judge-one"]
    assert row["n_total"] == 11 and row["n_tasks"] == 10
    # No warning without repeats.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alpaca_eval.load(_write_jsonl(tmp_path / "b.jsonl", records))


# --------------------------------------------------------------------------- errors


def _record(**kw) -> dict:
    rec = {
        "instruction_id": "abc",
        "generator_1": "b",
        "generator_2": "m",
        "annotator": "j",
        "preference": 2.0,
        "price_per_example": 0.1,
        "time_per_example": 1.0,
        "len_output_1": 3,
        "len_output_2": 4,
    }
    rec.update(kw)
    return rec


@pytest.mark.parametrize(
    ("bad", "field", "match"),
    [
        ({"generator_2": None}, "generator_2", "missing required field"),
        ({"annotator": 3}, "annotator", "expected a string"),
        ({"instruction_id": ""}, "instruction_id", "must not be empty"),
        ({"price_per_example": -1}, "price_per_example", "non-negative"),
        ({"time_per_example": "fast"}, "time_per_example", "expected a number"),
        ({"len_output_2": 2.5}, "len_output_2", "expected an integer"),
        ({"dataset": 5}, "dataset", "expected a string"),
    ],
)
def test_bad_field_names_file_line_and_field(tmp_path, bad, field, match):
    records = [_record(instruction_id=f"i{k}") for k in range(3)]
    records[1] = {**records[1], **bad}
    path = _write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(DataError, match=match) as info:
        alpaca_eval.load(path)
    assert info.value.line == 2 and info.value.field == field
    assert info.value.path == str(path)
    assert f"bad.jsonl:2, field {field!r}" in str(info.value)


def test_bad_record_in_a_json_array_names_its_line(tmp_path):
    records = [_record(instruction_id=f"i{k}") for k in range(4)]
    records[2]["generator_1"] = None
    path = _write_json_array(tmp_path / "annotations.json", records)
    starts = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line == "  {"]
    with pytest.raises(DataError, match="generator_1") as info:
        alpaca_eval.load(path)
    assert info.value.line == starts[2]


def test_unreadable_inputs(tmp_path):
    with pytest.raises(DataError, match="unsupported file type"):
        alpaca_eval.load(tmp_path / "a.csv")
    with pytest.raises(DataError, match="file not found"):
        alpaca_eval.load(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_record()) + "\n{not json\n")
    with pytest.raises(DataError, match="malformed JSON") as info:
        alpaca_eval.load(bad)
    assert info.value.line == 2
    arr = tmp_path / "bad.json"
    arr.write_text('[\n  {"instruction_id": "a"},\n  {oops}\n]')
    with pytest.raises(DataError, match="malformed JSON") as info:
        alpaca_eval.load(arr)
    assert info.value.line == 3
    notobj = tmp_path / "list.jsonl"
    notobj.write_text("[1, 2]\n")
    with pytest.raises(DataError, match="expected a JSON object"):
        alpaca_eval.load(notobj)
    fake_gz = tmp_path / "a.jsonl.gz"
    fake_gz.write_text("plain text")
    with pytest.raises(DataError, match="unreadable"):
        alpaca_eval.load(fake_gz)
    with pytest.raises(ValueError, match="no annotation files"):
        alpaca_eval.load([])
    with pytest.raises(DataError, match="lacks column"):
        leaderboard_row(pd.DataFrame({"model": ["m"]}))


# --------------------------------------------------------------------------- length bias


@pytest.mark.parametrize("seed", range(6))
def test_logistic_fit_matches_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n = 200 + 50 * seed
    x = rng.normal(500.0, 800.0, n)  # character differences: large units
    y = (rng.uniform(size=n) < special.expit(-1.0 + 0.002 * x)).astype(int)
    fit = models.logistic_fit(x, y, confidence=0.9)
    ref = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
    assert fit.converged
    assert (fit.intercept, fit.slope) == pytest.approx(tuple(ref.params), rel=1e-7)
    assert (fit.intercept_se, fit.slope_se) == pytest.approx(tuple(ref.bse), rel=1e-6)
    assert fit.p_value == pytest.approx(ref.pvalues[1], rel=1e-5, abs=1e-300)
    lo, hi = ref.conf_int(alpha=0.1)[1]
    assert (fit.ci_low, fit.ci_high) == pytest.approx((lo, hi), rel=1e-6)
    assert fit.n == n and fit.n_events == int(y.sum())
    assert fit.to_frame()["slope"].item() == fit.slope


def test_logistic_fit_degenerate_inputs():
    sep = models.logistic_fit([1, 2, 3, 4, 5, 6], [0, 0, 0, 1, 1, 1])
    assert not sep.converged and math.isnan(sep.slope)
    const = models.logistic_fit([1, 2, 3], [0, 0, 0])
    assert not const.converged and math.isnan(const.slope)
    with pytest.raises(ValueError, match="0 or 1"):
        models.logistic_fit([1, 2], [0, 2])
    with pytest.raises(ValueError, match="differ"):
        models.logistic_fit([1, 2, 3], [0, 1])


@pytest.mark.parametrize("measure", ["log_ratio", "diff"])
def test_length_bias_bins_and_slope(tmp_path, measure):
    records = _synthetic(seed=2, n=80)
    frame = alpaca_eval.load(_write_jsonl(tmp_path / "a.jsonl", records))
    lb = models.length_bias(frame, bins=4, x=measure)
    assert set(lb["x"]) == {measure}
    raw = pd.DataFrame(records)
    raw["x"] = (
        np.log(raw["len_output_2"] / raw["len_output_1"])
        if measure == "log_ratio"
        else raw["len_output_2"] - raw["len_output_1"]
    )
    raw["win"] = (raw["preference"] > 1.5).astype(int)
    for (model, judge), g in raw.groupby(["generator_2", "annotator"]):
        part = lb.loc[(lb["model"] == model) & (lb["judge"] == judge)]
        edges = np.quantile(g["x"], [0, 0.25, 0.5, 0.75, 1.0])
        binned = pd.cut(g["x"], edges, include_lowest=True, labels=False)
        counts = g.groupby(binned)["win"].agg(["size", "sum"])
        np.testing.assert_array_equal(part["n"], counts["size"])
        np.testing.assert_array_equal(part["wins"], counts["sum"])
        ci = proportion_ci(counts["sum"], counts["size"])
        np.testing.assert_allclose(part["ci_low"], ci.ci_low, rtol=1e-12)
        np.testing.assert_allclose(part["ci_high"], ci.ci_high, rtol=1e-12)
        ref = sm.Logit(g["win"].to_numpy(), sm.add_constant(g["x"].to_numpy())).fit(disp=0)
        assert part["slope"].iloc[0] == pytest.approx(ref.params[1], rel=1e-6)
        assert part["slope_se"].iloc[0] == pytest.approx(ref.bse[1], rel=1e-6)
        assert part["n_group"].iloc[0] == len(g)
    # Fixed edges are shared by all groups; verdicts outside them are not binned.
    fixed = models.length_bias(frame, bins=[-1.0, 0.0, 1.0], x="log_ratio")
    assert fixed["bin"].max() == 2 and (fixed["x_low"].unique() == [-1.0, 0.0]).all()


def test_length_bias_on_real_data_shows_judges_prefer_longer_answers(real_frame):
    lb = models.length_bias(real_frame, bins=5)
    slopes = lb.drop_duplicates(["model", "judge"])
    assert len(slopes) == 4
    assert (slopes["n_group"] == 805).all()
    assert (slopes["slope_ci_low"] > 0).all()  # longer relative to the baseline -> more wins


def test_length_bias_validation(tmp_path):
    frame = alpaca_eval.load(_write_jsonl(tmp_path / "a.jsonl", _synthetic(n=10)))
    with pytest.raises(ValueError, match="x must be"):
        models.length_bias(frame, x="ratio")
    with pytest.raises(ValueError, match="bins"):
        models.length_bias(frame, bins=[1.0, 0.0])
    with pytest.raises(ValueError, match="bins"):
        models.length_bias(frame, bins=0)


def test_edge_groups_and_empty_files(tmp_path):
    records = [
        _record(instruction_id="a", annotator="j", preference=None),
        _record(instruction_id="a", annotator="k", preference=2.0),
        _record(instruction_id="c", annotator="k", preference=1.0),
    ]
    board = leaderboard_row(alpaca_eval.load(_write_jsonl(tmp_path / "a.jsonl", records)))
    only_invalid = board.set_index("annotator").loc["j"]
    assert only_invalid["n_total"] == 0 and only_invalid["n_invalid"] == 1
    assert np.isnan(only_invalid["win_rate"])
    two = board.set_index("annotator").loc["k"]
    assert two["win_rate"] == 50.0 and two["standard_error"] == 50.0
    # Two tasks: the t interval overshoots and is clipped to the rate's range.
    assert (two["win_rate_ci_low"], two["win_rate_ci_high"]) == (0.0, 100.0)
    empty = alpaca_eval.load(_write_json_array(tmp_path / "empty.json", []))
    assert empty.empty and list(empty.columns) == [*VERDICT_COLUMNS, *alpaca_eval.EXTRA_COLUMNS]
    with pytest.raises(ValueError, match="no annotations"):
        leaderboard_row(empty)
