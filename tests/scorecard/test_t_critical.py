"""The one t multiplier (``scorecard._stats.t_critical``): a scalar, an array or a Series of degrees of freedom."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from skillbench.scorecard import t_critical


def test_scalars_are_floats_with_the_textbook_values() -> None:
    assert t_critical(1) == pytest.approx(12.7062047)
    assert t_critical(9) == pytest.approx(2.2621572)
    assert t_critical(np.inf) == pytest.approx(1.9599640)  # the normal quantile
    assert t_critical(9, 0.90) == pytest.approx(1.8331129)
    assert math.isnan(t_critical(0)) and isinstance(t_critical(9), float)


def test_arrays_and_series_keep_their_shape() -> None:
    out = t_critical(np.array([0.0, 1.0, np.inf]))
    assert isinstance(out, np.ndarray) and np.isnan(out[0]) and out[1:] == pytest.approx([12.7062047, 1.9599640])
    series = t_critical(pd.Series([9.0, 0.5], index=["a", "b"]))
    assert list(series.index) == ["a", "b"] and series["a"] == pytest.approx(2.2621572) and np.isnan(series["b"])
