"""The repair's directory swaps score a broker's directories twice: in numpy for a batch of
candidate swaps (`_outside_band`), in plain Python for each swap after the first taken in one
scoring (`_outside_band_one`). Both must measure the same thing, or a swap taken on the second
would not save what the first promised."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.planner.repair import _outside_band, _outside_band_one

directories = st.integers(min_value=2, max_value=12).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(min_value=0, max_value=1e13), min_size=n, max_size=n),
        st.lists(st.floats(min_value=1e9, max_value=2e13), min_size=n, max_size=n),
        st.lists(st.floats(min_value=0, max_value=2e13), min_size=n, max_size=n),
    )
)


@given(directories, st.floats(min_value=0.0, max_value=0.5))
def test_outside_band_of_one_broker_matches_the_batch(dirs, band):
    usage, cap, limit = dirs
    cap_total = sum(cap)
    batch = _outside_band(np.array([usage]), np.array(cap), np.array(limit), band, cap_total)[0]
    one = _outside_band_one(usage, cap, limit, band, cap_total)
    assert one == pytest.approx(batch, rel=1e-9, abs=1.0)
