"""What keeps ``evalstats report`` fast, checked against the slow way it replaced.

* The cluster bootstrap of many groups (the coverage study stacks a thousand simulated
  evaluations) is one vectorised pass; it must give exactly the numbers of bootstrapping
  each group on its own, in order, from the same generator.
* A frozen figure renders in one draw per format.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from evalstats.stats import _rate_core as winrates  # the array core of the win rates
from evalstats.stats.resample import bootstrap_distribution, interval_from_distribution


def _per_group(wins, ties, denom, gid, n_groups, *, method, n_resamples, confidence, rng):
    """The loop the vectorised pass replaced: one bootstrap per group, public functions."""
    q = len(winrates.RATE_NAMES)
    low = np.full((n_groups, q), np.nan)
    high = np.full_like(low, np.nan)
    stats = np.stack([wins, ties, denom], axis=1).astype(np.float64)
    for g in range(n_groups):
        cs = stats[gid == g]
        if cs.shape[0] < 2:
            continue
        rates = winrates._rates_from_sums
        theta_b = bootstrap_distribution(cs, rates, n_resamples, rng)
        jack = rates(cs.sum(axis=0) - cs) if method == "bca" else None
        lo, hi = interval_from_distribution(
            theta_b, rates(cs.sum(axis=0)), confidence, method, jack
        )
        low[g] = np.clip(lo, winrates._RANGE_LOW, winrates._RANGE_HIGH)
        high[g] = np.clip(hi, winrates._RANGE_LOW, winrates._RANGE_HIGH)
    return low, high


def _clusters(sizes, seed):
    """Cluster statistics (wins, ties, verdicts) of groups with the given cluster counts."""
    rng = np.random.default_rng(seed)
    gid = np.repeat(np.arange(len(sizes)), sizes)
    rng.shuffle(gid)  # groups interleaved, as a frame's rows are
    denom = rng.integers(1, 7, gid.size)
    wins = rng.binomial(denom, 0.45)
    ties = rng.binomial(denom - wins, 0.4)
    return wins, ties, denom, gid


@pytest.mark.parametrize("method", ["bca", "percentile", "basic"])
@pytest.mark.parametrize(
    "sizes",
    [
        [15] * 40,  # the coverage study: many groups of one size, one stream
        [5, 1, 7, 7, 3, 1, 12, 2],  # mixed sizes, single-cluster groups skipped
        [1, 1],  # nothing to resample
    ],
)
def test_vectorised_bootstrap_equals_one_bootstrap_per_group(sizes, method):
    wins, ties, denom, gid = _clusters(sizes, seed=len(sizes))
    kw = dict(n_resamples=333, confidence=0.9)
    got = winrates._bootstrap_intervals(
        wins, ties, denom, gid, len(sizes), methods=(method,), rng=np.random.default_rng(7), **kw
    )[method]
    ref = _per_group(
        wins, ties, denom, gid, len(sizes), method=method, rng=np.random.default_rng(7), **kw
    )
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a, b)  # bit for bit: the published numbers stay
    if any(s >= 2 for s in sizes):
        assert np.isfinite(got[0][np.asarray(sizes) >= 2]).all()


def test_vectorised_bootstrap_batches_keep_the_stream(monkeypatch):
    """A tiny memory budget forces one group per batch: the numbers do not move."""
    wins, ties, denom, gid = _clusters([9] * 12 + [4] * 5, seed=3)
    kw = dict(n_resamples=101, confidence=0.95)
    ref = _per_group(wins, ties, denom, gid, 17, method="bca", rng=np.random.default_rng(1), **kw)
    monkeypatch.setattr(winrates, "_BATCH_BYTES", 1)
    got = winrates._bootstrap_intervals(
        wins, ties, denom, gid, 17, methods=("bca",), rng=np.random.default_rng(1), **kw
    )["bca"]
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("sizes", [[15] * 30, [5, 1, 7, 7, 3, 1, 12, 2]])
def test_several_bootstrap_methods_share_one_distribution(sizes):
    """The coverage study's bootstrap rows: every method from the same resamples (one
    draw, one sort) equals that method computed alone from the same generator state."""
    wins, ties, denom, gid = _clusters(sizes, seed=11)
    kw = dict(n_resamples=257, confidence=0.95)
    methods = ("bca", "percentile", "basic")
    together = winrates._bootstrap_intervals(
        wins, ties, denom, gid, len(sizes), methods=methods, rng=np.random.default_rng(3), **kw
    )
    for method in methods:
        alone = winrates._bootstrap_intervals(
            wins,
            ties,
            denom,
            gid,
            len(sizes),
            methods=(method,),
            rng=np.random.default_rng(3),
            **kw,
        )[method]
        for a, b in zip(together[method], alone, strict=True):
            np.testing.assert_array_equal(a, b)


def test_coverage_table_bootstrap_rows_use_common_resamples():
    """The shared path of :func:`coverage_table` gives what ``win_rates`` gives for the
    first bootstrap method (the same stream) and valid intervals for the others."""
    from evalstats._tidy import wide
    from evalstats.stats.coverage import coverage_table, simulated_frame, truth_of
    from evalstats.stats.winrates import win_rates

    probs = (0.45, 0.25, 0.30)
    frame = simulated_frame(60, 8, 3, probs, 0.3, np.random.default_rng(5))
    table = coverage_table(
        frame,
        truth_of(probs),
        methods=("cr2_wilson", "bca", "percentile"),
        n_resamples=199,
        rng=np.random.default_rng(9),
    )
    res = wide(  # one row per simulated evaluation
        win_rates(frame, by="eval", method="bca", n_resamples=199, rng=np.random.default_rng(9))
    )
    truth = truth_of(probs)
    names = ["win_rate", "tie_rate", "loss_rate", "net_win", "score"]
    expect = [
        float(((res[f"{n}_ci_low"] <= t) & (t <= res[f"{n}_ci_high"])).mean())
        for n, t in zip(names, truth, strict=True)
    ]
    assert table.loc["bca"].tolist() == expect
    # the closed-form rows (from the array core, without the net-win p) are win_rates' too
    cr2 = wide(win_rates(frame, by="eval", method="cr2_wilson"))
    assert table.loc["cr2_wilson"].tolist() == [
        float(((cr2[f"{n}_ci_low"] <= t) & (t <= cr2[f"{n}_ci_high"])).mean())
        for n, t in zip(names, truth, strict=True)
    ]
    assert ((table.loc["percentile"] > 0.5) & (table.loc["percentile"] <= 1)).all()


def test_a_frozen_figure_renders_in_one_draw_per_format(monkeypatch):
    from matplotlib.figure import Figure

    from evalstats import plots
    from evalstats.stats.power import power_curve

    fig = plots.plot_power_curve(power_curve([0.2, 0.3], [10, 20, 40], icc=0.3))
    bbox = plots.layout_figure(fig)
    frozen = fig.get_layout_engine()
    before = plots.render_figure(fig, formats=("png", "svg", "pdf"), bbox=bbox)
    draws = []
    real_draw = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, r: draws.append(r) or real_draw(self, r))
    out = plots.render_figure(fig, formats=("png", "svg", "pdf"), bbox=bbox)
    assert len(draws) == 3  # savefig's extra "layout" draw is skipped for a frozen figure
    assert out == before  # the same bytes each time
    # What matplotlib's own two-draw save gives, pixel for pixel.
    import io

    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context(plots._style.STYLE):
        fig.savefig(buf, format="png", dpi=300, bbox_inches=bbox, facecolor="white")
    assert matplotlib.image.imread(io.BytesIO(out["png"])).tobytes() == (
        matplotlib.image.imread(io.BytesIO(buf.getvalue())).tobytes()
    )
    assert fig.get_layout_engine() is frozen  # still frozen for the next rendering
    assert out["pdf"].startswith(b"%PDF") and b"/FontFile2" in out["pdf"]  # TrueType


def test_the_kernel_renders_its_own_files_when_the_renderer_is_behind(tmp_path):
    """Queued figures are rendered by the renderer's process; past the limit the kernel
    writes them itself (write_figure_files), so no backlog is left after the last cell."""
    from matplotlib.figure import Figure

    from evalstats import plots
    from evalstats.report import _figures

    queue, out = tmp_path / "queue", tmp_path / "out"
    queue.mkdir()
    fig = Figure(figsize=(3, 2), layout="constrained")
    fig.subplots().plot([1, 3, 2])
    bbox = plots.layout_figure(fig)
    figures = out / "figures"
    assert _figures.enqueue(queue, "a", fig, bbox, figures, limit=2)
    assert _figures.enqueue(queue, "b", fig, bbox, figures, limit=2)
    assert not _figures.enqueue(queue, "c", fig, bbox, figures, limit=2)  # render here
    written = _figures.write_figure_files(fig, bbox, "c", figures)
    assert [p.suffix for p in written] == [".png", ".pdf"]
    first, second = sorted(queue.glob("*.pickle"))
    assert [p.name for p in _figures.render_queued(first)] == ["a.png", "a.pdf"]
    assert _figures.render_queued(first) == []  # already taken: nothing to do
    # What the kernel runs after the last cell renders the rest (here: b).
    assert [p.name for p in _figures.drain(queue)] == ["b.png", "b.pdf"]
    assert not list(queue.iterdir())  # no item, claimed or not, is left
    names = sorted(p.name for p in (out / "figures").iterdir())
    assert names == ["a.pdf", "a.png", "b.pdf", "b.png", "c.pdf", "c.png"]
    for p in (out / "figures").iterdir():
        assert p.stat().st_mode & 0o777 == 0o644
    pdf = (out / "figures" / "a.pdf").read_bytes()
    assert b"/FontFile2" in pdf and b"/Subtype /Type3" not in pdf  # TrueType, no Type 3
    # The queued copy renders the same file as the kernel's own rendering.
    assert (out / "figures" / "a.png").read_bytes() == (out / "figures" / "c.png").read_bytes()


def test_a_queued_figure_is_rendered_once_by_whichever_process_claims_it(tmp_path, monkeypatch):
    """The kernel's drain and the renderer's loop may reach the same item: the one that
    renames it first renders it, the other skips it (no error, no second file)."""
    from matplotlib.figure import Figure

    from evalstats import plots
    from evalstats.report import _figures

    queue, figures = tmp_path / "queue", tmp_path / "out" / "figures"
    queue.mkdir()
    fig = Figure(figsize=(2, 1.5), layout="constrained")
    fig.subplots().plot([1, 2])
    bbox = plots.layout_figure(fig)
    assert _figures.enqueue(queue, "a", fig, bbox, figures)
    (item,) = queue.glob("*.pickle")
    real_rename = os.rename
    taken = []

    def other_process_wins(src, dst):  # the other process renamed it a moment earlier
        real_rename(src, str(dst) + ".other")
        taken.append(dst)
        raise FileNotFoundError(src)

    monkeypatch.setattr(_figures.os, "rename", other_process_wins)
    assert _figures.render_queued(item) == []
    assert taken and not figures.exists()
    monkeypatch.setenv(_figures.QUEUE_VAR, str(queue))
    assert _figures.drain() == []  # nothing left to claim
    monkeypatch.delenv(_figures.QUEUE_VAR)
    assert _figures.drain() == []  # no queue: nothing to do
