"""Issue #59: rollouts on real tokenizers' conventions (no bos, a chat-marker bos, no pad, a vocabulary padded
beyond the tokenizer) and ``rl_readiness`` on rewards it can and cannot read.

Tiny word-level tokenizers built here and a 2-layer Llama from a stock config; no download.
"""

import numpy as np
import pytest
import torch

from neurips25.behavior_injection import build_tokenizer, rl_readiness, sample_rollouts
from neurips25.behavior_injection.grpo import encode_prompts
from neurips25.behavior_injection.sft import encode_pairs

WORDS = [f"w{i}" for i in range(20)]


def _tokenizer(bos="<s>", add_bos=True, pad="<pad>", eos="<eos>"):
    """A word-level tokenizer with the given special tokens (ids: specials first, then WORDS)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = [t for t in (pad, eos, bos, "<unk>") if t is not None]
    vocab = {w: i for i, w in enumerate(specials + WORDS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    kw = {k: v for k, v in (("pad_token", pad), ("eos_token", eos), ("bos_token", bos)) if v is not None}
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", add_bos_token=add_bos, **kw)
    tok.padding_side = "left"
    return tok


def _llama(vocab, seed=0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(cfg).eval()


def _prompt_rows(ro):
    return [ro.prompt_ids[i][ro.prompt_mask[i] == 1].tolist() for i in range(ro.prompt_ids.shape[0])]


def test_a_tokenizer_without_bos_gets_no_bos():
    # before the fix: "RuntimeError: Could not infer dtype of NoneType" (a Qwen2-style tokenizer has no bos)
    tok = _tokenizer(bos=None)
    assert tok.bos_token_id is None
    ro = sample_rollouts(_llama(len(tok)), tok, ["w1 w2 w3", "w4"], n=2, max_new_tokens=3)
    plain = tok(["w1 w2 w3", "w4"], add_special_tokens=False)["input_ids"]
    assert _prompt_rows(ro) == [plain[0], plain[0], plain[1], plain[1]]


def test_a_chat_marker_bos_the_tokenizer_does_not_add_is_not_prepended():
    # SmolLM2: bos is <|im_start|>, which its tokenizer never adds; prepending it made the model answer
    # <|im_end|> at once (every rollout '')
    tok = _tokenizer(bos="<|im_start|>", add_bos=False)
    assert tok("w1", add_special_tokens=True)["input_ids"] == tok("w1", add_special_tokens=False)["input_ids"]
    ids, mask = encode_prompts(tok, ["w1 w2", "w3"])
    assert [ids[i][mask[i] == 1].tolist() for i in range(2)] == tok(["w1 w2", "w3"],
                                                                       add_special_tokens=False)["input_ids"]
    # and SFT trains on the same prompt prefix the rollouts use
    (pair_ids, n_prompt), = encode_pairs(tok, ["w1 w2"], ["w5"])
    assert pair_ids[:n_prompt] == ids[0][mask[0] == 1].tolist()


def test_a_bos_the_tokenizer_adds_is_prepended_and_build_tokenizer_keeps_its_bos():
    llama_style = _tokenizer(bos="<s>", add_bos=True)
    ids, mask = encode_prompts(llama_style, ["w1 w2"])
    assert ids[0][mask[0] == 1].tolist() == llama_style("w1 w2")["input_ids"]
    assert ids[0][mask[0] == 1].tolist()[0] == llama_style.bos_token_id
    own = build_tokenizer(WORDS)  # the package's tokenizer: <bos> prompt, as every run so far
    ids, mask = encode_prompts(own, ["w1 w2"])
    assert ids[0][mask[0] == 1].tolist() == [own.bos_token_id, *own("w1 w2", add_special_tokens=False)["input_ids"]]
    (pair_ids, n_prompt), = encode_pairs(own, ["w1 w2"], ["w5"])
    assert pair_ids == [own.bos_token_id, *own("w1 w2 w5", add_special_tokens=False)["input_ids"], own.eos_token_id]


def test_a_tokenizer_without_pad_pads_with_eos_and_one_without_either_is_refused_by_name():
    # before the fix: "TypeError: full(): argument 'fill_value' ... NoneType"
    tok = _tokenizer(pad=None)
    ro = sample_rollouts(_llama(len(tok)), tok, ["w1 w2 w3", "w4"], n=2, max_new_tokens=3)
    assert int(ro.prompt_ids[2, 0]) == tok.eos_token_id and int(ro.prompt_mask[2, 0]) == 0
    bare = _tokenizer(pad=None, eos=None)
    with pytest.raises(ValueError, match="pad_token"):
        encode_prompts(bare, ["w1"])


def test_ids_the_tokenizer_cannot_decode_are_never_sampled():
    # real checkpoints pad their vocabulary beyond the tokenizer (Qwen2: 151,936 rows for 151,665 tokens); the
    # decoded text silently dropped such ids while GRPO trained on them
    tok = _tokenizer()
    model = _llama(len(tok) + 8)
    model.lm_head.register_forward_hook(lambda m, a, out: out + torch.cat(
        [torch.zeros(len(tok)), torch.full((8,), 6.0)]))  # the padded rows would win most draws
    torch.manual_seed(0)
    ro = sample_rollouts(model, tok, ["w1 w2", "w3"], n=8, max_new_tokens=5)
    assert int(ro.completion_ids.max()) < len(tok)
    for i, text in enumerate(ro.texts):  # the text the reward reads holds every trained token
        kept = ro.completion_ids[i][ro.completion_mask[i] == 1].tolist()
        words = [t for t in tok.convert_ids_to_tokens(kept) if t not in tok.all_special_tokens]
        assert text.split() == words
    greedy = sample_rollouts(model, tok, ["w1 w2"], n=1, max_new_tokens=4, greedy=True)
    assert int(greedy.completion_ids.max()) < len(tok)


def test_a_tokenizer_with_ids_past_the_model_is_refused_by_name():
    tok = _tokenizer()
    with pytest.raises(ValueError, match="vocabulary"):
        sample_rollouts(_llama(len(tok) - 6), tok, ["w19 w18"], n=2, max_new_tokens=2)


def _reward(values):
    """A reward that returns ``values`` in turn (per call)."""
    it = iter(values * 1000)
    return lambda q, text: next(it)


def test_rl_readiness_refuses_n_below_2_by_name():
    # before the fix n=1 gave informativeness 0.0, silently (one rollout has no spread)
    tok = _tokenizer()
    with pytest.raises(ValueError, match="`n` must be an int >= 2"):
        rl_readiness(_llama(len(tok)), tok, ["w1", "w2"], _reward([1.0]), n=1, max_new_tokens=2)


def test_rl_readiness_on_non_binary_rewards_reads_their_spread():
    # before the fix a constant partial-credit reward 0.5 read as peak informativeness 0.5 and zero-std share 0,
    # while GRPO.step on it sees zero-std share 1 (no signal)
    tok, model = _tokenizer(), _llama(len(_tokenizer()))
    out = rl_readiness(model, tok, ["w1", "w2"], _reward([0.5]), n=4, max_new_tokens=2, with_co_influence=False)
    assert out["informativeness"] == 0.0 and out["frac_reward_zero_std"] == 1.0
    assert np.allclose(out["alpha"], 0.5)
    graded = rl_readiness(model, tok, ["w1", "w2"], _reward([0.0, 0.5, 1.0, 0.5]), n=4, max_new_tokens=2,
                          with_co_influence=False)
    assert np.isclose(graded["informativeness"], np.std([0.0, 0.5, 1.0, 0.5]))  # the group's reward s.d.
    assert graded["frac_reward_zero_std"] == 0.0
    binary = rl_readiness(model, tok, ["w1", "w2"], _reward([0.0, 1.0, 1.0, 1.0]), n=4, max_new_tokens=2,
                          with_co_influence=False)
    assert np.isclose(binary["informativeness"], np.sqrt(0.75 * 0.25))  # = sqrt(alpha (1 - alpha)) when binary
    with pytest.raises(ValueError, match="binary"):
        rl_readiness(model, tok, ["w1", "w2"], _reward([0.0, 0.5, 1.0, 0.5]), n=4, max_new_tokens=2)


def test_float16_training_is_refused_by_name_bfloat16_trains():
    # before the fix GRPO.step on a float16 policy left non-finite weights, silently (AdamW's eps 1e-8 is 0 in
    # float16, so a parameter with a zero gradient gets 0 / 0)
    from neurips25.behavior_injection import GRPO, sft_train

    tok = _tokenizer()
    with pytest.raises(ValueError, match="`policy` has float16 parameters"):
        GRPO(_llama(len(tok)).half(), tok, group_size=4, max_new_tokens=3)
    with pytest.raises(ValueError, match="`model` has float16 parameters"):
        sft_train(_llama(len(tok)).half(), tok, ["w1"], ["w2"], steps=1, batch_size=1)
    model = _llama(len(tok)).to(torch.bfloat16)
    torch.manual_seed(0)
    stats = GRPO(model, tok, group_size=4, max_new_tokens=3).step(["w1 w2", "w3"], _reward([0.0, 1.0]))
    assert np.isfinite(stats["objective"]) and all(torch.isfinite(p).all() for p in model.parameters())
