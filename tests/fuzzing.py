"""Hypothesis settings for the property tests: a small profile by default, the campaign on demand.

The ordinary sessions run each property test with the example count it names;
`nox -s fuzz` sets VTRAIN_FUZZ=1 and runs every one of them (hypothesis marks
them `hypothesis`) with CAMPAIGN_EXAMPLES examples.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ_VARIABLE = "VTRAIN_FUZZ"
CAMPAIGN_EXAMPLES = 10_000


def campaign() -> bool:
    """True inside `nox -s fuzz`."""
    return os.environ.get(FUZZ_VARIABLE) == "1"


def examples(count: int) -> settings:
    """Settings for a property test: `count` examples, or the campaign's count under fuzz."""
    return settings(
        max_examples=CAMPAIGN_EXAMPLES if campaign() else count,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        database=None,
    )
