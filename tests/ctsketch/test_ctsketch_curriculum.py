"""fit_curriculum: one network through growing trees; checkpoints per stage; bad stages."""

import pytest
import torch
from torch import nn

from neurips25.ctsketch import CurriculumStage, ProgramTree, fit_curriculum, load_digits_split, make_tuples, sum_tree


def _stages(x, y, ns, epochs=1, seed=0):
    out = []
    for n in ns:
        index, sums = make_tuples(y, n, 64, seed=seed + n)
        out.append(CurriculumStage(sum_tree(n, seed=0), x, sums, index, epochs))
    return out


def test_one_network_is_trained_through_every_stage():
    # the SAME module is updated in every stage (a fresh network per stage would be no curriculum)
    x, y, _, _ = load_digits_split(200, seed=0)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))
    seen = []

    def after(i, learner, hist):
        assert learner.perception is net
        seen.append((i, learner.tree.n_inputs, [p.detach().clone() for p in net.parameters()]))

    hists = fit_curriculum(net, _stages(x, y, (2, 8, 32)), batch_size=16, seed=0, callback=after)
    assert [h["steps"] for h in hists] == [4, 4, 4]
    assert [s[1] for s in seen] == [2, 8, 32]
    for (_, _, a), (_, _, b) in zip(seen, seen[1:]):
        assert any(not torch.equal(pa, pb) for pa, pb in zip(a, b))  # every stage moved the weights


def test_curriculum_resumes_from_stage_checkpoints(tmp_path):
    x, y, _, _ = load_digits_split(200, seed=0)

    def net():
        torch.manual_seed(1)
        return nn.Linear(64, 10)

    ref = net()
    fit_curriculum(ref, _stages(x, y, (2, 4), epochs=2), seed=3)
    first = net()
    fit_curriculum(first, _stages(x, y, (2, 4), epochs=2)[:1], seed=3, checkpoint_dir=tmp_path)
    resumed = net()  # stage 0 is restored from its checkpoint, stage 1 trains
    hists = fit_curriculum(resumed, _stages(x, y, (2, 4), epochs=2), seed=3, checkpoint_dir=tmp_path)
    assert hists[0]["resumed_from"] == 2 and hists[1]["resumed_from"] == 0
    assert torch.equal(ref.weight, resumed.weight)


def test_bad_stages():
    x = torch.randn(4, 2, 3)
    with pytest.raises(TypeError, match="`tree` must be a ProgramTree"):
        CurriculumStage(object(), x, torch.zeros(4))
    with pytest.raises(ValueError, match="`epochs` must be a positive int"):
        CurriculumStage(sum_tree(2, seed=0), x, torch.zeros(4), epochs=0)
    with pytest.raises(ValueError, match="non-empty sequence"):
        fit_curriculum(nn.Linear(3, 10), [])
    other = ProgramTree(lambda a, b: a + b, 2, 5, vectorized=True, seed=0)
    stages = [CurriculumStage(sum_tree(2, seed=0), x, torch.zeros(4)), CurriculumStage(other, x, torch.zeros(4))]
    with pytest.raises(ValueError, match="same input domain size; got \\[10, 5\\]"):
        fit_curriculum(nn.Linear(3, 10), stages)
