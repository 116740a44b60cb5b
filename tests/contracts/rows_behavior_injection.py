"""behavior_injection (#48): GRPO's pieces on transformers causal LMs: log-probs, rollouts, the objective."""

import numpy as np
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


# --- GRPO and the rollout helpers on stock transformers classes (#48): not only the package's tiny Llama ---
GRPO_LMS = ("llama", "qwen2", "gpt2")


def _word_tokenizer():
    """A word-level tokenizer whose ids line up with the fixtures' configs (pad 0, bos 1, eos 2, 96 ids)."""
    from contract_fixtures import VOCAB

    from neurips25.behavior_injection import build_tokenizer

    tok = build_tokenizer([f"w{i}" for i in range(VOCAB - 4)])
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id, len(tok)) == (0, 1, 2, VOCAB)
    return tok


def _even_first_word(tok):
    def reward(query, text):  # a planted binary reward: about half of a random model's rollouts pass
        words = text.split()
        return float(bool(words) and tok.convert_tokens_to_ids(words[0]) % 2 == 0)

    return reward


def _grpo_step_raises_objective(name):
    def check(tmp_path):
        from neurips25.behavior_injection import (
            GRPO,
            completion_logprobs,
            group_advantages,
            grpo_objective,
            sample_rollouts,
            score_rollouts,
        )

        tok, model = _word_tokenizer(), causal_lm(name)
        prompts, reward = ["w1 w2 w3", "w4 w5"], _even_first_word(tok)
        # the rollouts GRPO.step will sample (same seed, same weights), scored and turned into advantages here
        torch.manual_seed(5)
        ro = sample_rollouts(model, tok, prompts, n=8, max_new_tokens=6)
        r, _ = score_rollouts(ro, prompts, reward)
        assert 0 < r.mean() < 1, "planted reward left no informative group"
        adv = group_advantages(r).reshape(-1)
        with torch.no_grad():
            old = completion_logprobs(model, ro.prompt_ids, ro.prompt_mask, ro.completion_ids, ro.completion_mask)
        trainer = GRPO(model, tok, group_size=8, lr=1e-3, max_new_tokens=6)
        torch.manual_seed(5)
        stats = trainer.step(prompts, reward)
        assert np.allclose(stats["alpha"], r.mean(1)), "GRPO.step sampled other rollouts than the same seed gives"
        with torch.no_grad():
            new = completion_logprobs(model, ro.prompt_ids, ro.prompt_mask, ro.completion_ids, ro.completion_mask)
            before = float(grpo_objective(old, old, adv, ro.completion_mask))
            after = float(grpo_objective(new, old, adv, ro.completion_mask))
        # one ascent step on the clipped objective raises it on the rollouts it was computed from (a sign
        # error, a negative clip norm or a dropped advantage lowers or keeps it)
        assert after > before + 1e-4, f"{name}: objective {before:.6f} -> {after:.6f}"

    return check


def _identity_on_class(name):
    def check(tmp_path):
        from neurips25.behavior_injection import influence_identity_error, sample_groups

        tok, model = _word_tokenizer(), causal_lm(name)
        torch.manual_seed(2)
        # sampled by the float32 model (as the reproduction does); the identity is exact for any fixed rollouts,
        # checked on a float64 copy
        groups = sample_groups(model, tok, ["w1 w2 w3", "w7", "w9 w9"], _even_first_word(tok), n=8,
                               max_new_tokens=5)
        informative = [g for g in groups if 0 < g.alpha < 1]
        assert informative, "planted reward left no informative group"
        model = model.double()
        for g in informative:
            err = influence_identity_error(model, g)["rel_error"]
            # 1e-6: Llama-family RMSNorm / RoPE run in float32 inside a float64 model (the reproduction's bound)
            assert err < 1e-6, f"{name}: GRPO gradient vs sqrt(a(1-a))(g+ - g-) rel. error {err:.2e}"

    return check


def _greedy_cache_on_class(name):
    def check(tmp_path):
        from neurips25.behavior_injection import sample_rollouts

        tok, model = _word_tokenizer(), causal_lm(name)
        prompts = ["w1 w2 w3", "w4"]  # different lengths: left padding in the batch
        a = sample_rollouts(model, tok, prompts, n=1, max_new_tokens=6, greedy=True, use_cache=True)
        b = sample_rollouts(model, tok, prompts, n=1, max_new_tokens=6, greedy=True, use_cache=False)
        assert torch.equal(a.completion_ids, b.completion_ids) and a.texts == b.texts
        for i, p in enumerate(prompts):  # oracle: each prompt alone, unpadded
            alone = sample_rollouts(model, tok, [p], n=1, max_new_tokens=6, greedy=True)
            assert alone.texts[0] == a.texts[i], f"{name}: padded batch vs alone differ for prompt {i}"

    return check


for _name in GRPO_LMS:
    row(C, "transformers", f"GRPO.step on {_name}: one step raises the clipped objective on the rollouts it "
        "sampled (same seed reproduces them)")(_grpo_step_raises_objective(_name))
    row(C, "transformers", f"influence identity on {_name} (float64): GRPO group gradient = "
        "sqrt(alpha(1-alpha))(g+ - g-) on the model's own rollouts, planted binary reward")(_identity_on_class(_name))
    row(C, "transformers", f"sample_rollouts greedy on {_name}: KV cache = no cache = each prompt alone")(
        _greedy_cache_on_class(_name))


def _qwen2_style(padded_rows=8):
    """A Qwen2-style set-up: a tokenizer with no bos and no pad (eos pads), and a stock Qwen2 whose vocabulary is
    padded ``padded_rows`` beyond the tokenizer, with those rows favoured so a sampler would draw them."""
    import transformers as tf
    from contract_fixtures import _TEXT, VOCAB
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["<|endoftext|>", "<unk>", *[f"w{i}" for i in range(VOCAB - 2)]])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = tf.PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|endoftext|>", unk_token="<unk>")
    tok.padding_side = "left"
    torch.manual_seed(0)
    model = tf.Qwen2ForCausalLM(tf.Qwen2Config(**dict(_TEXT, vocab_size=VOCAB + padded_rows))).eval()
    bias = torch.cat([torch.zeros(VOCAB), torch.full((padded_rows,), 6.0)])
    model.lm_head.register_forward_hook(lambda m, a, out: out + bias)
    return tok, model


@row(C, "transformers", "sample_rollouts on a Qwen2-style tokenizer (no bos, no pad) and a vocabulary padded "
     "beyond it: prompts without bos, no id past len(tokenizer) sampled, text = trained tokens (#59)")
def _qwen2_style_rollouts(tmp_path):
    from neurips25.behavior_injection import sample_rollouts

    tok, model = _qwen2_style()
    assert tok.bos_token_id is None and tok.pad_token_id is None
    torch.manual_seed(0)
    # before #59: "Could not infer dtype of NoneType" (bos None), then "full(): ... NoneType" (pad None)
    ro = sample_rollouts(model, tok, ["w1 w2 w3", "w4"], n=4, max_new_tokens=5)
    plain = tok(["w1 w2 w3", "w4"], add_special_tokens=False)["input_ids"]
    assert [ro.prompt_ids[i][ro.prompt_mask[i] == 1].tolist() for i in (0, 4)] == plain
    assert int(ro.completion_ids.max()) < len(tok)  # the padded rows, favoured, are never drawn
    for i, text in enumerate(ro.texts):
        kept = ro.completion_ids[i][ro.completion_mask[i] == 1].tolist()
        assert text.split() == [t for t in tok.convert_ids_to_tokens(kept) if t not in tok.all_special_tokens]
