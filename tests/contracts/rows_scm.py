"""scm (#47): the Streaming Content Monitor as a transformers ``generate`` stopping criterion."""

import torch
from contract_fixtures import CAUSAL_LMS, assert_close, causal_lm, token_ids
from contract_table import row

C, ISSUE = "scm", 47


def _monitor(name):
    from neurips25.scm import StreamingContentMonitor

    torch.manual_seed(3)
    return StreamingContentMonitor(causal_lm(name)).eval()


def _offline(monitor, seq, prompt_len):
    """Oracle: the monitor's token probabilities over the whole generated sequence, one forward pass."""
    with torch.no_grad():
        return monitor(seq).token_logits.softmax(-1)[:, prompt_len:, 1].squeeze(0)


def _generate_scores(name, do_sample=False, use_cache=True):
    def check(tmp_path):
        from neurips25.scm import DelayKPolicy, SCMStoppingCriteria

        lm, monitor, ids = causal_lm(name), _monitor(name), token_ids(batch=1, length=6)
        crit = SCMStoppingCriteria(monitor, DelayKPolicy(k=50, threshold=0.99), ids.shape[1])
        torch.manual_seed(0)
        out = lm.generate(ids, max_new_tokens=5, min_new_tokens=5, do_sample=do_sample, use_cache=use_cache,
                          stopping_criteria=[crit], pad_token_id=0)
        new = out.shape[1] - ids.shape[1]
        # one score per generated token, each equal to the monitor's offline score at that position
        assert len(crit.session.probs) == new, f"{len(crit.session.probs)} scores for {new} tokens"
        assert_close(torch.tensor(crit.session.probs), _offline(monitor, out, ids.shape[1]), atol=1e-5,
                     what="streamed vs offline scores")

    return check


for _name in CAUSAL_LMS:
    row(C, "transformers", f"generate greedy with KV cache on {_name}: one score per token, equal to offline")(
        _generate_scores(_name))
row(C, "transformers", "generate sampled with KV cache (llama): one score per token, equal to offline")(
    _generate_scores("llama", do_sample=True))
row(C, "transformers", "generate greedy without KV cache (llama): one score per token, equal to offline")(
    _generate_scores("llama", use_cache=False))


@row(C, "transformers", "batch of 3: one bool per row, each row's scores equal offline")
def _batch(tmp_path):
    from neurips25.scm import DelayKPolicy, SCMStoppingCriteria

    lm, monitor, ids = causal_lm("llama"), _monitor("llama"), token_ids(batch=3, length=6)
    crit = SCMStoppingCriteria(monitor, DelayKPolicy(k=50, threshold=0.99), ids.shape[1])
    out = lm.generate(ids, max_new_tokens=4, min_new_tokens=4, do_sample=False, stopping_criteria=[crit],
                      pad_token_id=0)
    assert crit.stopped_rows.shape == (3,) and not crit.stopped_rows.any()
    offline = _offline(monitor, out, ids.shape[1])
    for b in range(3):
        assert_close(torch.tensor(crit.sessions[b].probs), offline[b], atol=1e-5, what=f"row {b} scores")


@row(C, "transformers", "one criterion reused for a second generate scores the second answer")
def _reuse(tmp_path):
    from neurips25.scm import DelayKPolicy, SCMStoppingCriteria

    lm, monitor, ids = causal_lm("llama"), _monitor("llama"), token_ids(batch=1, length=6)
    crit = SCMStoppingCriteria(monitor, DelayKPolicy(k=50, threshold=0.99), ids.shape[1])
    lm.generate(ids, max_new_tokens=4, min_new_tokens=4, do_sample=False, stopping_criteria=[crit], pad_token_id=0)
    ids2 = token_ids(batch=1, length=6, seed=9)
    out = lm.generate(ids2, max_new_tokens=4, min_new_tokens=4, do_sample=False, stopping_criteria=[crit],
                      pad_token_id=0)
    assert_close(torch.tensor(crit.session.probs), _offline(monitor, out, ids2.shape[1]), atol=1e-5,
                 what="scores of the second generate")


def _shared(use_cache):
    def check(tmp_path):
        from neurips25.scm import DelayKPolicy, SCMStoppingCriteria, StreamingContentMonitor, truncate_layers

        lm, ids = causal_lm("llama"), token_ids(batch=1, length=6)
        torch.manual_seed(3)
        monitor = StreamingContentMonitor(truncate_layers(causal_lm("llama"), 1)).eval()
        with SCMStoppingCriteria(monitor, DelayKPolicy(k=50, threshold=0.99), ids.shape[1], generator=lm) as crit:
            out = lm.generate(ids, max_new_tokens=5, min_new_tokens=5, do_sample=False, use_cache=use_cache,
                              stopping_criteria=[crit], pad_token_id=0)
        # the tap scores a token once the generator has run it: every generated token but the last
        n = out.shape[1] - ids.shape[1] - 1
        assert len(crit.session.probs) == n, f"{len(crit.session.probs)} scores for {n} tokens run"
        assert_close(torch.tensor(crit.session.probs), _offline(monitor, out, ids.shape[1])[:n], atol=1e-5,
                     what="tapped vs offline scores")

    return check


row(C, "transformers", "shared-backbone tap with KV cache (llama): one score per token run, equal to offline")(
    _shared(True))
row(C, "transformers", "shared-backbone tap without KV cache (llama): one score per token run")(_shared(False))
