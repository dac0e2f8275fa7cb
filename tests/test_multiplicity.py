"""Holm's adjustment (statsmodels' multipletests) against the procedure's definition, its NaN
handling, and the primary-aware table helper."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from evalstats.plan import parse_plan
from evalstats.stats.ranking import holm, holm_table


@pytest.mark.parametrize("m", [1, 2, 5, 17, 200])
def test_holm_matches_statsmodels(m):
    rng = np.random.default_rng(m)
    p = np.concatenate([rng.uniform(0, 0.1, m // 2), rng.uniform(0, 1, m - m // 2)])
    p[: m // 3] = np.round(p[: m // 3], 2)  # ties
    rng.shuffle(p)
    want = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm(p), want, rtol=0, atol=1e-15)
    rejected = multipletests(p, alpha=0.05, method="holm")[0]
    np.testing.assert_array_equal(holm(p) <= 0.05, rejected)


def _holm_by_definition(p: np.ndarray) -> np.ndarray:
    # Holm (1979) written out: the i-th smallest p-value, multiplied by m - i + 1, made
    # monotone by the running maximum, capped at 1 (an oracle independent of statsmodels).
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    out, running = np.empty(m), 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        out[i] = min(1.0, running)
    return out


@pytest.mark.parametrize("m", [1, 3, 17])
def test_holm_matches_the_definition_ignoring_nan(m):
    rng = np.random.default_rng(100 + m)
    p = np.round(rng.uniform(0, 0.2, m), 3)
    with_nan = np.insert(p, [0, m // 2], np.nan)
    out = holm(with_nan)
    assert np.isnan(out[0]) and np.isnan(out[m // 2 + 1])
    np.testing.assert_allclose(out[~np.isnan(with_nan)], _holm_by_definition(p), rtol=1e-15)


def test_holm_edge_values():
    assert holm([]).size == 0
    np.testing.assert_array_equal(holm([0.0, 1.0, 0.5]), [0.0, 1.0, 1.0])
    # NaN: not a test; the family is the other two
    out = holm([0.02, np.nan, 0.04])
    np.testing.assert_allclose(out[[0, 2]], multipletests([0.02, 0.04], method="holm")[1])
    assert np.isnan(out[1])
    assert np.isnan(holm([np.nan])).all()
    with pytest.raises(ValueError, match=r"pvalues\[1\] = 1.5"):
        holm([0.1, 1.5])
    with pytest.raises(ValueError, match="one-dimensional"):
        holm([[0.1, 0.2]])


def table_of_tests() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rubric": ["with-without"] * 3 + ["blind-pair"] * 3,
            "judge": ["a:x", "b:y", "consensus:unanimous"] * 2,
            "net_win_p": [0.012, 0.004, 0.03, 0.02, 0.5, np.nan],
        }
    )


def test_table_primary_unadjusted_others_holm():
    t = table_of_tests()
    out = holm_table(t, primary={"rubric": "with-without", "judge": "a:x"})
    assert out["primary"].tolist() == [True, False, False, False, False, False]
    assert out.loc[0, "p_holm"] == 0.012
    others = t["net_win_p"].to_numpy()[[1, 2, 3, 4]]
    np.testing.assert_allclose(
        out["p_holm"].to_numpy()[[1, 2, 3, 4]], multipletests(others, method="holm")[1]
    )
    assert np.isnan(out.loc[5, "p_holm"])
    # the input is not changed
    assert "p_holm" not in t.columns
    # no primary: every test is in the family
    allrows = holm_table(t)
    assert not allrows["primary"].any()
    np.testing.assert_allclose(
        allrows["p_holm"].to_numpy()[:5], multipletests(t["net_win_p"][:5], method="holm")[1]
    )


def test_table_primary_from_a_plan_or_a_mask():
    t = table_of_tests()
    plan = parse_plan(
        {"primary_rubric": "blind-pair", "consensus": "unanimous", "statistic": "net_win"}
    )
    out = holm_table(t, primary=plan)
    assert out["primary"].tolist() == [False] * 5 + [True]
    mask = np.zeros(6, dtype=bool)
    mask[3] = True
    by_mask = holm_table(t, primary=mask, p="net_win_p")
    assert by_mask.loc[3, "p_holm"] == 0.02 and by_mask["primary"].sum() == 1


def test_table_bad_primary():
    t = table_of_tests()
    with pytest.raises(ValueError, match="selects 0 rows"):
        holm_table(t, primary={"rubric": "with-without", "judge": "c:z"})
    with pytest.raises(ValueError, match="selects 3 rows"):
        holm_table(t, primary={"rubric": "with-without"})
    with pytest.raises(ValueError, match="shape"):
        holm_table(t, primary=[True, False])
    with pytest.raises(ValueError, match="lacks column"):
        holm_table(t, p="p_value")


def test_holm_table_names_its_procedure_and_offers_the_whole_family():
    from statsmodels.stats.multitest import multipletests

    from evalstats.stats.ranking import FIXED_SEQUENCE, WHOLE_FAMILY, holm_table

    tests = pd.DataFrame({"judge": list("abcd"), "net_win_p": [0.20, 0.01, 0.02, 0.30]})
    out = holm_table(tests, primary={"judge": "a"})
    assert (out["procedure"] == FIXED_SEQUENCE).all()
    assert FIXED_SEQUENCE == "fixed-sequence: primary at alpha, Holm over the secondaries"
    family = multipletests(tests["net_win_p"], method="holm")[1]
    np.testing.assert_allclose(out["p_holm_family"], family)
    second = multipletests(tests["net_win_p"][1:], method="holm")[1]
    np.testing.assert_allclose(out["p_holm"][1:], second)
    # the primary did not reject: no secondary may (the gate), whatever its own Holm p
    np.testing.assert_allclose(out["p_fixed_sequence"], [0.20, 0.20, 0.20, 0.30])
    none = holm_table(tests)
    assert (none["procedure"] == WHOLE_FAMILY).all()
    np.testing.assert_allclose(none["p_fixed_sequence"], family)
    np.testing.assert_allclose(none["p_holm"], family)


def test_fixed_sequence_controls_the_family_wise_error_where_p_holm_alone_does_not():
    """Global null, 4 independent tests, 20,000 families: rejecting on p_holm (primary at
    alpha plus Holm over the rest) errs in about 1 - 0.95 * 0.95 = 0.0975; the fixed-sequence
    p-values and the whole-family Holm stay at or below 0.05 (MC SE ~0.0015)."""

    rng = np.random.default_rng(0)
    p = rng.uniform(size=(20_000, 4))
    alpha = 0.05
    # the same rule as holm_table, vectorised over families via a per-row loop-free oracle
    sec = np.sort(p[:, 1:], axis=1)
    m = 3
    holm_sec_reject_any = (sec[:, 0] * m) <= alpha  # Holm rejects something iff the min does
    naive = (p[:, 0] <= alpha) | holm_sec_reject_any
    gated = p[:, 0] <= alpha  # fixed sequence: nothing is rejected unless the primary is
    whole = p.min(axis=1) * 4 <= alpha
    assert naive.mean() > 0.09
    assert gated.mean() < alpha + 0.004 and whole.mean() < alpha + 0.004
    # and holm_table's p_fixed_sequence is that rule, on a few of the families
    for row in p[:50]:
        out = holm_table(pd.DataFrame({"k": range(4), "net_win_p": row}), primary={"k": 0})
        reject = out["p_fixed_sequence"].to_numpy() <= alpha
        assert reject.any() == (row[0] <= alpha)
        np.testing.assert_allclose(out["p_holm"][1:], holm(row[1:]))
