"""Issue 34 items 5 and 6: one source per figure; words that match the data (arm names, the
token column an import used, counts in their unit, a derived rubric's family)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="mpl-"))

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import evalstats
import evalstats.rubrics
from evalstats import plots
from evalstats.report import compute_results
from evalstats.stats import cost_ratios

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


def _frame(data: Path) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evalstats.load_frame(data)


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_cost_figure_draws_the_cost_tables_row_and_its_source():
    """The sample's line was transcript-counted while its band and the table were billed."""
    frame = _frame(SAMPLE)
    cost = cost_ratios(frame)
    row = cost.set_index("statistic").loc["tokens_geomean_ratio"]
    assert row["token_source"] == "billed"
    ax = plots.plot_cost_ratios(frame, cost=cost).axes[0]
    line = [ln for ln in ax.get_lines() if ln.get_label().startswith("geometric mean")]
    assert float(line[0].get_xdata()[0]) == row["estimate"]
    (band,) = [p for p in ax.patches if p.get_label().startswith("CI")]
    xs = band.get_path().transformed(band.get_patch_transform()).vertices[:, 0]
    assert np.isclose(xs.min(), row["ci_low"]) and np.isclose(xs.max(), row["ci_high"])
    title = " ".join(ax.get_title().split())
    assert "Tokens (billed)" in title and "cost table" in title
    # Oracle: the histogram is of the billed per-pair ratios, whose geometric mean is the row's.
    pairs = frame.drop_duplicates(["task_id", "replicate"])
    billed = (pairs["billed_with"] / pairs["billed_without"]).to_numpy(dtype=float)
    assert sps.gmean(billed) == pytest.approx(row["estimate"], rel=1e-9)
    assert sum(p.get_height() for p in ax.containers[0]) == len(pairs)


def test_cost_figure_takes_one_pair_of_arms_row():
    frame = pd.DataFrame(
        {"arm_a": "v2", "arm_b": "none", "tokens_with": [50, 80], "tokens_without": [100, 100]}
    )
    cost = pd.DataFrame(
        {
            "arm_a": ["v1", "v2"],
            "arm_b": ["none", "none"],
            "statistic": "tokens_geomean_ratio",
            "estimate": [0.9, 0.63],
            "ci_low": [0.8, 0.5],
            "ci_high": [1.0, 0.7],
        }
    )
    ax = plots.plot_cost_ratios(frame, cost=cost.iloc[[1]]).axes[0]
    assert "geometric mean 0.63×" in _legend(ax) and "CI [0.50×, 0.70×]" in _legend(ax)
    with pytest.raises(ValueError, match="select one pair"):
        plots.plot_cost_ratios(frame, cost=cost)


def test_unavailable_tokens_count_pairs_not_judgments():
    """Four judgments per pair: the reason counts the 90 pairs, not 360 verdicts."""
    frame = _frame(SAMPLE).drop(columns=["billed_with", "billed_without"])
    frame["tokens_counted_from"] = "answer"
    assert len(frame) > frame[["task_id", "replicate"]].drop_duplicates().shape[0] == 90
    cost = cost_ratios(frame)
    assert cost.attrs["token_source"] == "unavailable"
    assert "90 of 90 pairs lack a transcript" in cost.attrs["token_source_reason"]


def _import_table(tmp_path: Path, runs: pd.DataFrame, *extra: str):
    src = tmp_path / "runs.jsonl"
    src.write_text(runs.to_json(orient="records", lines=True))
    argv = ["import", "table", str(src), "--tasks", str(SAMPLE / "tasks.jsonl"), *extra]
    out = tmp_path / "data"
    cmd = [sys.executable, "-m", "evalstats.cli", *argv, "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    return done, out


@pytest.fixture(scope="module")
def harness_runs() -> pd.DataFrame:
    """The sample's runs as a harness writes them: no transcript, its usage as total_tokens."""
    runs = pd.read_json(SAMPLE / "runs.jsonl", lines=True, dtype=False).head(48)
    runs = runs.drop(columns=["transcript"]).rename(columns={"reported_tokens": "total_tokens"})
    return runs.assign(started_at=runs["started_at"].astype(str))


def test_import_table_names_the_token_column_it_used(tmp_path, harness_runs):
    done, out = _import_table(tmp_path, harness_runs)
    assert done.returncode == 0, done.stderr
    assert "tokens from column 'total_tokens'" in done.stderr
    got = pd.read_json(out / "runs.jsonl", lines=True, dtype=False)
    assert got["reported_tokens"].tolist() == harness_runs["total_tokens"].tolist()


def test_import_table_says_no_token_column_and_how_to_map_one(tmp_path, harness_runs):
    runs = harness_runs.rename(columns={"total_tokens": "usage_tokens_all"})
    done, out = _import_table(tmp_path, runs)
    assert done.returncode == 0, done.stderr
    (line,) = [s for s in done.stderr.splitlines() if "token" in s]
    assert "no billed token column found" in line and "'usage_tokens_all' left unused" in line
    assert "--map reported_tokens=COLUMN" in line
    assert pd.read_json(out / "runs.jsonl", lines=True)["reported_tokens"].isna().all()
    done, out = _import_table(
        tmp_path, runs, "--map", "reported_tokens=usage_tokens_all", "--force"
    )
    assert done.returncode == 0, done.stderr
    assert "token" not in done.stderr  # mapped: nothing to say
    got = pd.read_json(out / "runs.jsonl", lines=True, dtype=False)
    assert got["reported_tokens"].tolist() == runs["usage_tokens_all"].tolist()


def _cli(*argv: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "evalstats.cli", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)


@pytest.mark.parametrize(
    ("seed", "kind"), [("with-without", "three-way"), ("blind-pair", "blind-scores")]
)
def test_rubric_new_keeps_the_seeds_family(tmp_path, seed, kind):
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    assert (
        _cli(
            "rubric", "new", "--from", seed, "--tool-name", "Serena MCP", "-o", str(first)
        ).returncode
        == 0
    )
    made = evalstats.rubrics.load(first)
    assert (made.name, made.family, made.kind) == (f"{seed}-serena-mcp", seed, kind)
    assert evalstats.rubrics.get(seed).family == seed
    # Made from a made one: still the seed's family.
    done = _cli(
        "rubric", "new", "--from", str(first), "--tool-name", "X", "--name", "x", "-o", str(second)
    )
    assert done.returncode == 0, done.stderr
    assert evalstats.rubrics.load(second).family == seed
    # A family must be a seed of the same kind: one line naming file, line and field.
    other = "blind-pair" if seed == "with-without" else "with-without"
    bad = first.read_text().replace(f'family = "{seed}"', f'family = "{other}"')
    (tmp_path / "bad.toml").write_text(bad)
    done = _cli("rubric", "show", str(tmp_path / "bad.toml"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "bad.toml:4" in line and "'family'" in line and "not a seed rubric of kind" in line


@pytest.mark.slow  # computes the sample's report numbers (200 resamples)
def test_a_rubric_made_from_the_seed_is_the_headlines_three_way_rubric(tmp_path):
    """The sample judged with a rubric made by `rubric new --from with-without`: without its
    family the headline rule would fall to the blind-pair seed."""
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    made = data / "rubrics" / "with-without-serena-mcp.r1.toml"
    made.parent.mkdir()
    done = _cli(
        "rubric", "new", "--from", "with-without", "--tool-name", "Serena MCP", "-o", str(made)
    )
    assert done.returncode == 0, done.stderr
    sha = evalstats.rubrics.load(made).sha256
    rows = [json.loads(line) for line in (data / "judgments.jsonl").read_text().splitlines()]
    for r in rows:
        if r["rubric"] == "with-without":
            r.update(rubric="with-without-serena-mcp", prompt_sha256=sha)
    (data / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = compute_results(data, n_resamples=200, seed=0).to_json()
    (choice,) = doc["tables"]["headline_choice"]
    assert choice["rubric"] == "with-without-serena-mcp"
