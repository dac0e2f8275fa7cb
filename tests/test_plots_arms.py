"""The K-arm figures draw from the statistics' own results, with the arms' names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pair_simulation import simulate_pairwise  # K-arm verdicts of known truth, in memory

from evalstats.plots import plot_beats, plot_compare, plot_pareto, plot_rank_sets
from evalstats.stats import compare, pareto, rank

NAMES = {"arm0": "no tool", "arm1": "tool v1", "arm2": "tool v2"}


@pytest.fixture(scope="module")
def results():
    f = simulate_pairwise(np.random.default_rng(1), np.array([0.0, 0.6, 0.3]), n_tasks=12, n_reps=2)
    rng = np.random.default_rng(2)
    runs = pd.DataFrame(
        [
            {"task_id": f"t{t}", "replicate": r, "arm": a, "wall_s": 1.0 + rng.random(),
             "reported_tokens": int(1000 * m * rng.lognormal(0, 0.2))}
            for t in range(12) for r in range(2)
            for a, m in (("arm0", 1.0), ("arm1", 0.8), ("arm2", 1.3))
        ]
    )  # fmt: skip
    sim = rank(f, n_resamples=100, rng=0)
    marg = rank(f, n_resamples=100, rng=0, sets=("marginal",))
    sets = pd.concat([marg.loc[marg.statistic == "rank"], sim.loc[sim.statistic == "rank"]])
    return {
        "compare": compare(f),
        "rank": sim,
        "rank_sets": sets,
        "pareto": pareto(f, runs, reference="arm0", n_resamples=100, rng=0),
    }


def _ticks(ax, axis="y"):
    return [t.get_text() for t in (ax.get_yticklabels() if axis == "y" else ax.get_xticklabels())]


@pytest.mark.parametrize("width", ["page", "column"])
def test_plot_compare_draws_marginal_and_simultaneous_bars(results, width):
    fig = plot_compare(results["compare"], arm_names=NAMES, width=width)
    ax = fig.axes[0]
    assert fig.get_figwidth() == {"page": 7.0, "column": 3.5}[width]
    labels = [t.replace("\n", " ") for t in _ticks(ax)]
    assert labels == ["no tool vs tool v1", "no tool vs tool v2", "tool v1 vs tool v2"]
    net = results["compare"].query("statistic == 'net_win'")
    seg = ax.collections[-1].get_segments()  # the marginal bars, one per pair, top first
    lows = sorted(s[0][0] for s in seg)
    assert lows == pytest.approx(sorted(net["ci_low"]))
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("simultaneous" in t for t in legend) and any("marginal" in t for t in legend)


def test_plot_rank_sets_one_bar_per_arm_and_family(results):
    fig = plot_rank_sets(results["rank_sets"], arm_names=NAMES, width="column")
    ax = fig.axes[0]
    assert sorted(t.replace("\n", " ") for t in _ticks(ax)) == sorted(NAMES.values())
    bars = [c for c in ax.collections if hasattr(c, "get_segments")]
    assert len(bars) == 2 and all(len(b.get_segments()) == 3 for b in bars)
    sim = results["rank_sets"].query("method == 'simultaneous_stepdown'")
    widths = sorted(s[1][0] - s[0][0] for s in bars[1].get_segments())
    assert widths == pytest.approx(sorted(sim["ci_high"] - sim["ci_low"] + 0.7))


def test_plot_beats_heatmap_is_the_p_beats_matrix(results):
    fig = plot_beats(results["rank"], arm_names=NAMES)
    grid = np.ma.filled(fig.axes[0].images[0].get_array().astype(float), np.nan)
    assert grid.shape == (3, 3) and np.isnan(np.diag(grid)).all()
    off = grid[~np.eye(3, dtype=bool)]
    p = results["rank"].query("statistic == 'p_beats'")["estimate"]
    assert sorted(off) == pytest.approx(sorted(p))
    assert _ticks(fig.axes[0], "x")[0] != ""


def test_plot_pareto_labels_every_arm_with_its_probability(results):
    fig = plot_pareto(results["pareto"], arm_names=NAMES, width="column")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert len(texts) == 3 and all("P = " in t for t in texts)
    assert any(t.startswith("tool v1") for t in texts)
    assert fig.axes[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="nope"):
        plot_compare(results["compare"], statistic="nope")
