"""narrow_gate (#50): the attention knockout on every model class it claims, and under ``generate``."""

import torch
from contract_fixtures import CAUSAL_LMS, VLMS, VOCAB, assert_close, causal_lm, token_ids, vlm
from contract_table import row

C, ISSUE = "narrow_gate", 50


def _model(name):
    return vlm(name) if name in VLMS else causal_lm(name)


def _inputs(name):
    ids = token_ids(batch=2, length=10)
    if name == "llava":  # four image placeholders (image 16 px, patch 8) after two text tokens, with pixels
        ids[:, 2:6] = VOCAB - 1
        return {"input_ids": ids, "pixel_values": torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))}
    return {"input_ids": ids}


def _empty_knockout(name):
    def check(tmp_path):
        from neurips25.narrow_gate import attention_knockout

        model, inputs = _model(name), _inputs(name)
        with torch.no_grad():
            ref = model(**inputs).logits
            with attention_knockout(model, queries="all", keys=[], layers="all"):
                out = model(**inputs).logits
        # an empty knockout is the model's own eager attention: same logits (float32 rounding only)
        assert_close(out, ref, atol=1e-6, what=f"{name} logits under an empty knockout")

    return check


def _mask_oracle(name):
    def check(tmp_path):
        from neurips25.narrow_gate import attention_knockout

        model, inputs = _model(name), _inputs(name)
        p = 7  # a text key after the image
        mask = torch.ones_like(inputs["input_ids"])
        mask[:, p] = 0
        with torch.no_grad():
            # oracle: the model's own padding mask removes key p for every query, in every layer
            ref = model(**inputs, attention_mask=mask).logits
            with attention_knockout(model, queries="all", keys=[p], layers="all", mode="mask_pre_softmax"):
                out = model(**inputs).logits
        keep = [i for i in range(inputs["input_ids"].shape[1]) if i != p]
        assert_close(out[:, keep], ref[:, keep], atol=1e-4, what=f"{name} knockout of key {p} vs the padding mask")
        assert (out - model(**inputs).logits).abs().max() > 1e-4, "the knockout changed nothing"

    return check


for _name in CAUSAL_LMS + VLMS:
    row(C, "transformers", f"empty knockout leaves {_name} logits unchanged")(_empty_knockout(_name))
    row(C, "transformers", f"knockout of one key equals {_name}'s padding mask")(_mask_oracle(_name))


@row(C, "transformers", "generate (KV cache) under a knockout with queries='all' equals the no-cache greedy loop")
def _generate_all(tmp_path):
    from neurips25.narrow_gate import attention_knockout

    model, ids = causal_lm("llama"), token_ids(batch=1, length=8)
    with torch.no_grad(), attention_knockout(model, queries="all", keys=[3], layers="all", mode="mask_pre_softmax"):
        out = model.generate(ids, max_new_tokens=4, do_sample=False)
        seq = ids
        for _ in range(4):
            nxt = model(seq, use_cache=False).logits[:, -1].argmax(-1, keepdim=True)
            seq = torch.cat([seq, nxt], dim=1)
    assert torch.equal(out, seq)


@row(C, "transformers", "generate under a knockout with a growing query set (From(p): the text after the image) "
     "knocks out the generated tokens too")
def _generate_positional(tmp_path):
    from neurips25.narrow_gate import From, attention_knockout

    model, ids = causal_lm("llama"), token_ids(batch=1, length=8)
    with torch.no_grad():
        with attention_knockout(model, queries=From(4), keys=[3], layers="all", mode="mask_pre_softmax"):
            out = model.generate(ids, max_new_tokens=4, do_sample=False)
        # oracle: knocking out key 3 for queries 4.. = every query after it, generated ones included
        with attention_knockout(model, queries="all", keys=[3], layers="all", mode="mask_pre_softmax"):
            ref = model.generate(ids, max_new_tokens=4, do_sample=False)
    assert torch.equal(out, ref)


@row(C, "transformers", "Generated() over two generate calls in one context: each call knocks out past its own "
     "prompt (#59)")
def _generated_two_calls(tmp_path):
    from neurips25.narrow_gate import Generated, attention_knockout

    model = causal_lm("llama")
    first, second = token_ids(batch=1, length=8, seed=3), token_ids(batch=1, length=12, seed=4)

    def gen(ids):
        out = model.generate(ids, max_new_tokens=4, do_sample=False, output_logits=True,
                             return_dict_in_generate=True, pad_token_id=0)
        return torch.stack(out.logits, 1)

    with torch.no_grad():
        with attention_knockout(model, queries=Generated(), keys=[2, 5], layers="all"):
            ref = gen(second)  # oracle: the second call alone in its own context
        with attention_knockout(model, queries=Generated(), keys=[2, 5], layers="all"):
            gen(first)
            out = gen(second)
    # before #59 the second call was knocked out past the first call's prompt (8), not its own (12)
    assert_close(out, ref, atol=1e-5, what="second generate vs the same call alone")
