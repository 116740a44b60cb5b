"""behavior_injection (#48): GRPO's pieces on transformers causal LMs: log-probs, rollouts, the objective."""

import torch
from contract_fixtures import CAUSAL_LMS, LOW_PRECISION, assert_close, causal_lm, token_ids
from contract_table import row

C, ISSUE = "behavior_injection", 48


def _logprobs_padding(name):
    def check(tmp_path):
        from neurips25.behavior_injection import completion_logprobs

        model = causal_lm(name)
        # two left-padded prompts of lengths 5 and 3, completions of 4 tokens
        prompts = token_ids(batch=2, length=5, seed=3)
        pmask = torch.ones_like(prompts)
        prompts[1, :2], pmask[1, :2] = 0, 0
        comp = token_ids(batch=2, length=4, seed=4)
        cmask = torch.ones_like(comp)
        with torch.no_grad():
            batch = completion_logprobs(model, prompts, pmask, comp, cmask)
            for i in range(2):  # oracle: each row alone, without padding
                keep = pmask[i].bool()
                alone = completion_logprobs(model, prompts[i:i + 1, keep], pmask[i:i + 1, keep], comp[i:i + 1],
                                            cmask[i:i + 1])
                assert_close(batch[i], alone[0], atol=1e-5, what=f"{name} row {i}: padded batch vs alone")

    return check


for _name in CAUSAL_LMS:
    row(C, "transformers", f"completion_logprobs on {_name}: a left-padded batch equals each row alone")(
        _logprobs_padding(_name))


def _tokenizer_and_model():
    from neurips25.behavior_injection import build_tokenizer, tiny_llama

    tok = build_tokenizer([f"w{i}" for i in range(20)])
    return tok, tiny_llama(len(tok), d_model=16, n_layers=1, n_heads=2, max_len=64, seed=0, tokenizer=tok)


@row(C, "transformers", "sample_rollouts greedy: the same completions with and without the KV cache, batch of 2")
def _rollouts_cache(tmp_path):
    from neurips25.behavior_injection import sample_rollouts

    tok, model = _tokenizer_and_model()
    prompts = ["w1 w2 w3", "w4"]
    a = sample_rollouts(model, tok, prompts, n=1, max_new_tokens=5, greedy=True, use_cache=True)
    b = sample_rollouts(model, tok, prompts, n=1, max_new_tokens=5, greedy=True, use_cache=False)
    assert torch.equal(a.completion_ids, b.completion_ids) and a.texts == b.texts


@row(C, "transformers", "sample_rollouts sampled: n per prompt; the rollouts' log-probs are the sampling "
     "distribution's (temperature 1, no top-k)")
def _rollouts_sampled(tmp_path):
    from neurips25.behavior_injection import completion_logprobs, sample_rollouts

    tok, model = _tokenizer_and_model()
    torch.manual_seed(0)
    r = sample_rollouts(model, tok, ["w1 w2", "w3 w4 w5"], n=3, max_new_tokens=4)
    assert r.completion_ids.shape[0] == 6 and len(r.texts) == 6
    with torch.no_grad():
        lp = completion_logprobs(model, r.prompt_ids, r.prompt_mask, r.completion_ids, r.completion_mask)
    assert torch.isfinite(lp[r.completion_mask.bool()]).all() and (lp <= 0).all()


def _objective_dtype(dtype):
    def check(tmp_path):
        from neurips25.behavior_injection import group_advantages, grpo_objective

        g = torch.Generator().manual_seed(0)
        logp = (-torch.rand(4, 6, generator=g)).to(dtype).requires_grad_(True)
        old = logp.detach() + 0.05
        adv = group_advantages(torch.tensor([[1.0, 0.0], [0.0, 1.0]])).reshape(-1)
        mask = torch.ones(4, 6)
        J = grpo_objective(logp, old, adv, mask, beta=0.1, ref_logp=old)
        assert J.dtype == dtype
        J.backward()
        assert logp.grad.dtype == dtype and torch.isfinite(logp.grad.float()).all()
        ref = grpo_objective(logp.detach().double(), old.double(), adv, mask, beta=0.1, ref_logp=old.double())
        assert_close(J.double(), ref, atol=1e-2 if dtype == LOW_PRECISION else 1e-12, what="objective")

    return check


row(C, "torch", "grpo_objective in float64: float64 value and gradient")(_objective_dtype(torch.float64))
row(C, "torch", "grpo_objective in bfloat16: bfloat16 value and gradient near float64")(
    _objective_dtype(LOW_PRECISION))
