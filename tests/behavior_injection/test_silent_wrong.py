"""Silent wrong answers the review (#48) found through the public API; each test failed before its fix."""

import numpy as np
import pytest

from neurips25.behavior_injection import GRPO, BehaviorInjector, MiniIGSM, ReasoningDAG, parse_solution
from neurips25.behavior_injection.tasks import solve_step


@pytest.mark.parametrize("bad", [-1, -0.5, float("nan"), float("inf"), "1", True])
def test_grpo_refuses_a_bad_max_grad_norm(tok, bad):
    from neurips25.behavior_injection import tiny_llama

    model = tiny_llama(len(tok), d_model=16, n_layers=1, n_heads=2, max_len=64, tokenizer=tok)
    # a negative norm made clip_grad_norm_ flip the gradient: GRPO then minimised the reward
    with pytest.raises(ValueError, match="max_grad_norm"):
        GRPO(model, tok, max_grad_norm=bad)


def test_grpo_accepts_numpy_and_none_max_grad_norm(tok):
    from neurips25.behavior_injection import tiny_llama

    model = tiny_llama(len(tok), d_model=16, n_layers=1, n_heads=2, max_len=64, tokenizer=tok)
    assert GRPO(model, tok, max_grad_norm=np.float32(0.5)).max_grad_norm == 0.5
    assert GRPO(model, tok, max_grad_norm=None).max_grad_norm is None


def _mod7(n=200):
    return MiniIGSM(n_ops=(1, 2), mod=7, distractors=(0, 1), seed=3).samples(n)


def test_parse_solution_default_reads_the_values_the_reference_states():
    # before: the default modulus 23 recomputed the mod-7 values and wrote e.g. "S = P + R = 6 + 7 = 13 ; ANS 6"
    for p in _mod7():
        dag, order = parse_solution(p.question, p.completion)
        assert [solve_step(dag, n) for n in order] == [solve_step(p.dag, n) for n in p.order]
        assert dag.value[dag.query] == p.answer


def test_inject_qa_keeps_every_chain_right_on_mod7_data():
    inj = BehaviorInjector(seed=0)
    fn = inj.as_map_fn(parse_solution)
    for p in _mod7():
        out = fn({"prompt": p.question, "completion": p.completion})["completion"]
        for step in out.split(";")[:-1]:
            words = step.split()
            if "=" in words and words[0] in p.dag.value and words[0] not in ("try",):
                assert int(words[-1]) == p.dag.value[words[0]], out  # every stated value is the true one
        assert out.split()[-2:] == ["ANS", str(p.answer)]


def test_inject_qa_refuses_an_extractor_that_contradicts_the_reference():
    inj = BehaviorInjector(seed=0)
    bad = [p for p in _mod7() if parse_solution(p.question, p.completion, mod=23)[0].value[p.dag.query] != p.answer
           or any(parse_solution(p.question, p.completion, mod=23)[0].value[n] != p.dag.value[n] for n in p.order)]
    assert len(bad) > 100  # the review's 147 of 200
    with pytest.raises(ValueError, match="dag_extractor"):
        inj.inject_qa(bad[0].question, bad[0].completion, lambda q, a: parse_solution(q, a, mod=23))


def _dag(parents, op, value, mod=None):
    return ReasoningDAG(tuple(parents), parents, op, value, query=tuple(parents)[-1], mod=mod)


@pytest.mark.parametrize("ps", [("a",), ("a", "b", "a")])
def test_dag_enforces_two_parents_per_inner_node(ps):
    parents = {"a": (), "b": (), "c": ps}
    with pytest.raises(ValueError, match="exactly 2 parents"):
        _dag(parents, {"c": "+"}, {"a": 1, "b": 1, "c": 2})


def test_dag_with_a_modulus_checks_its_values():
    parents = {"a": (), "b": (), "c": ("a", "b")}
    with pytest.raises(ValueError, match="value"):
        _dag(parents, {"c": "+"}, {"a": 1, "b": 1, "c": 5}, mod=7)
    assert _dag(parents, {"c": "+"}, {"a": 4, "b": 5, "c": 2}, mod=7).value["c"] == 2


def test_completion_logprobs_float64_left_padded_is_finite_on_qwen2():
    # before: a left-padded row had query positions that see no key; in float64 their softmax was NaN and
    # reached the completion tokens (0 * NaN), so the influence analysis on a float64 Qwen2 returned NaN
    import torch
    import transformers as tf

    from neurips25.behavior_injection import completion_logprobs

    torch.manual_seed(0)
    cfg = tf.Qwen2Config(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32)
    cfg._attn_implementation = "eager"
    model = tf.Qwen2ForCausalLM(cfg).double().eval()
    prompts = torch.tensor([[0, 0, 5, 6], [7, 8, 9, 10]])
    pmask = (torch.arange(4)[None] >= torch.tensor([[2], [0]])).long()
    comp = torch.tensor([[11, 12, 13], [14, 15, 0]])
    cmask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    with torch.no_grad():
        lp = completion_logprobs(model, prompts, pmask, comp, cmask)
        alone = completion_logprobs(model, prompts[:1, 2:], pmask[:1, 2:], comp[:1], cmask[:1])
    assert torch.isfinite(lp).all()
    assert torch.allclose(lp[0], alone[0], atol=1e-10)


def test_reward_fn_failing_everywhere_is_an_error(tok):
    # before: a TRL-style reward(completions, **kw) raised per query, was turned into warnings, and every reward
    # became 0: training went on without any signal
    from neurips25.behavior_injection import sample_rollouts, score_rollouts, tiny_llama

    model = tiny_llama(len(tok), d_model=16, n_layers=1, n_heads=2, max_len=160, tokenizer=tok)
    qs = MiniIGSM(n_ops=2, mod=11, distractors=1, seed=0).samples(2)
    ro = sample_rollouts(model, tok, [q.question for q in qs], 2, 3)

    def trl_style(completions, **kwargs):
        return [0.0 for _ in completions]

    with pytest.raises(RuntimeError, match="raised on every query"):
        score_rollouts(ro, qs, trl_style)


def test_as_map_fn_batched_and_leading_space():
    # before: Dataset.map(fn, batched=True) raised "`completion` must be a str, got list"
    ps = _mod7(6)
    fn = BehaviorInjector(seed=0).as_map_fn(parse_solution, leading_space=True)
    out = fn({"prompt": [p.question for p in ps], "completion": [p.completion for p in ps]})["completion"]
    assert len(out) == 6 and all(o.startswith(" ") and o.split()[-1] == str(p.answer) for o, p in zip(out, ps))
