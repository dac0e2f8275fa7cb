"""pair_costs (numpy: one sort, neighbouring rows compared) is the pandas groupby it
replaced: the same rows, order, values, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalstats.errors import DataError
from evalstats.stats.spend import MEASURES, pair_costs

VALUES = [c for pair in MEASURES.values() for c in pair]


def _oracle(frame, cluster="task_id", include_no_answer=True):
    """groupby(task_id, replicate, sort=True): first non-null, max == min, count == size."""
    keys = ["task_id", "replicate"]
    extra = [] if cluster in keys else [cluster]
    work = pd.DataFrame({k: frame[k].to_numpy() for k in dict.fromkeys([*keys, cluster])})
    for c in VALUES:
        work[c] = pd.to_numeric(frame[c]).astype("float64").to_numpy(na_value=np.nan)
        if (work[c] < 0).any():
            raise DataError("negative cost", line=int(np.argmax(work[c] < 0)), field=c)
    work["_no_answer"] = (frame["status"].astype(object) == "no_answer").to_numpy()
    work["_row"] = np.arange(len(frame))
    grouped = work.groupby(keys, sort=True, observed=True)
    for c in [*VALUES, *extra]:
        g = grouped[c]
        if c in extra:
            bad = g.nunique() > 1
        else:
            bad = ((g.max() != g.min()) & g.max().notna()) | (
                (g.count() > 0) & (g.count() < g.size())
            )
        if bad.any():
            key = bad.index[bad.to_numpy()][0]
            row = int(work.set_index(keys).loc[[key], "_row"].iloc[0])
            raise DataError(f"rows of pair {key} disagree on {c}", line=row, field=c)
    pairs = grouped.first().reset_index()
    pairs["_no_answer"] = grouped["_no_answer"].any().to_numpy()
    if not include_no_answer:
        pairs = pairs.loc[~pairs["_no_answer"]].reset_index(drop=True)
    pairs["_cluster_code"] = pd.factorize(pairs[cluster], sort=True)[0]
    return pairs


def _frame(seed=0, n_tasks=30, reps=3, judges=2):
    rng = np.random.default_rng(seed)
    tasks = np.repeat([f"t{i}" for i in rng.permutation(n_tasks)], reps)
    rep = np.tile(np.arange(1, reps + 1), n_tasks)
    tw, to = rng.integers(10, 5000, (2, len(tasks))).astype(float)
    tw[3] = np.nan  # missing for every judge of the pair: NaN
    parts = [
        pd.DataFrame(
            {
                "task_id": tasks,
                "replicate": rep,
                "judge": f"j{j}",
                "status": np.where(rng.random(len(tasks)) < 0.1, "no_answer", "ok"),
                "tokens_with": tw,
                "tokens_without": to,
                "wall_with_s": tw / 7,
                "wall_without_s": to / 7,
                "repo": np.char.add("r", (rep % 2).astype(str)),
            }
        )
        for j in range(judges)
    ]
    return pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=seed)


def _variants():
    f = _frame()
    yield "shuffled, two judges", f, {}
    yield "one judge", _frame(1, judges=1), {}
    yield "int task ids", f.assign(task_id=f["task_id"].str[1:].astype(int) * -3), {}
    cat = pd.Categorical(f["task_id"], categories=sorted(f["task_id"].unique(), reverse=True))
    yield "categorical ids (sorted as values)", f.assign(task_id=cat), {}
    yield (
        "object ids, None status",
        f.assign(task_id=f["task_id"].astype(object), status=f["status"].where(f["judge"] == "j0")),
        {},
    )
    yield "Int64 costs", f.astype({"tokens_with": "Int64"}), {}
    yield "cluster column", f.assign(task_id=f["task_id"] + "-" + f["repo"]), {"cluster": "repo"}


@pytest.mark.parametrize("include_no_answer", [True, False])
def test_pair_costs_is_the_groupby(include_no_answer):
    for name, f, kw in _variants():
        new = pair_costs(f, include_no_answer=include_no_answer, **kw)
        ref = _oracle(f, include_no_answer=include_no_answer, **kw)
        pd.testing.assert_frame_equal(new, ref, check_exact=True, obj=name)
        assert (
            new["_no_answer"].any() and np.isnan(new["tokens_with"]).any() or not include_no_answer
        )


def _error(fn, f, **kw):
    with pytest.raises(DataError) as err:
        fn(f, **kw)
    return str(err.value), err.value.line if hasattr(err.value, "line") else None


def test_pair_costs_errors_are_the_groupbys():
    f = _frame(2)
    row = f.index[f["judge"] == "j1"][5]
    pair = (f["task_id"] == f.loc[row, "task_id"]) & (f["replicate"] == f.loc[row, "replicate"])
    earlier, later = f.index[pair][0], f.index[pair][-1]  # the pair's rows in frame order
    wall = f["wall_with_s"]
    cases = {
        "a cost differs": f.assign(tokens_without=f["tokens_without"].where(f.index != row, 1.0)),
        "the earlier row's cost missing": f.assign(wall_with_s=wall.where(f.index != earlier)),
        "the later row's cost missing": f.assign(wall_with_s=wall.where(f.index != later)),
        "negative after a disagreement": f.assign(
            tokens_with=f["tokens_with"].where(f.index != row, 1.0),
            wall_without_s=f["wall_without_s"].where(f.index != f.index[9], -1.0),
        ),
    }
    for name, bad in cases.items():
        assert _error(pair_costs, bad) == _error(_oracle, bad), name
    bad = f.assign(repo=f["repo"].where(f.index != row, "zz"))
    assert _error(pair_costs, bad, cluster="repo") == _error(_oracle, bad, cluster="repo")
