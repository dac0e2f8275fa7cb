"""The result shape's columns written out, so a test pins them against the package's rather
than reading them from it (docs/reference.md: every statistic returns this long tidy frame)."""

TIDY_COLUMNS = (
    "statistic", "estimate", "se", "ci_low", "ci_high", "p_value", "df", "n", "n_tasks", "method",
    "confidence",
)  # fmt: skip
