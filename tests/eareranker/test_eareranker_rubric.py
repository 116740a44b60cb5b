"""AdequacyRubric: weighted score and bins against hand-computed values; bad edges and weights rejected."""

import numpy as np
import pytest

from neurips25.eareranker import AdequacyRubric


def test_hand_computed_bins():
    r = AdequacyRubric()
    got = r.to_bin([0, 19.99, 20, 39.9, 40, 59.99, 60, 74.99, 75, 89.9, 90, 100]).tolist()
    assert got == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert r.n_bins == 6 and r.bin_names[0] == "inadequate" and r.bin_names[-1] == "excellent"


def test_weighted_score_and_normalised_weights():
    r = AdequacyRubric(weights=(2, 1, 1, 0))  # normalised to (0.5, 0.25, 0.25, 0)
    assert r.score([80, 40, 0, 100]) == pytest.approx(0.5 * 80 + 0.25 * 40)
    np.testing.assert_allclose(r.score([[100] * 4, [0] * 4]), [100, 0])


def test_custom_edges_and_numpy_scalars():
    r = AdequacyRubric(bin_edges=(0, 50, 100))
    assert r.to_bin(np.float32(49.9)) == 0 and r.to_bin(np.int64(50)) == 1 and r.n_bins == 2


@pytest.mark.parametrize("edges, msg", [((0, 40, 20, 100), "strictly increasing"), ((0, 20, 20, 100), "strictly"),
                                        ((5, 50, 100), "start at 0"), ((0, 100), "at least 3")])
def test_bad_edges(edges, msg):
    with pytest.raises(ValueError, match=msg):
        AdequacyRubric(bin_edges=edges)


def test_bad_weights_and_scores():
    with pytest.raises(ValueError, match="`weights` must be 4"):
        AdequacyRubric(weights=(1, 1, 1))
    with pytest.raises(ValueError, match="`weights`"):
        AdequacyRubric(weights=(1, -1, 1, 1))
    r = AdequacyRubric()
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        r.to_bin(101)
    with pytest.raises(ValueError, match="dim_scores"):
        r.score([[1, 2, 3]])
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        r.score([np.nan, 1, 2, 3])
