"""Views of run groups: the seed-sensitivity sentences."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.present.groups import sensitivity_sentences
from analysis.stats.groups import SeedSensitivity


@pytest.mark.parametrize(
    ("unstable", "share"), [(0, "0%"), (1, "<1%"), (500, "50%"), (999, ">99%"), (1000, "100%")]
)
def test_the_share_of_unstable_queries_is_never_rounded_to_none_or_all(unstable, share):
    flags = np.zeros(1000, dtype=bool)
    flags[:unstable] = True
    result = SeedSensitivity(np.zeros((2, 2)), 0.0, 4, 0, flags)
    last = sensitivity_sentences(result, "mrr")[-1]
    assert (
        last == f"{unstable:,} of 1,000 queries ({share}) change winner (A, B or tie) with "
        "the seed pair."
    )
