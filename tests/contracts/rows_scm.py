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


def _eos_batch():
    """Tiny Llama whose EOS is row 1's second free token (no other row emits it), a batch of 3, and an
    always-harmful monitor on its first layer."""
    from neurips25.scm import StreamingContentMonitor, truncate_layers

    lm, ids = causal_lm("llama"), token_ids(batch=3, length=6, seed=5)
    with torch.no_grad():
        free = lm.generate(ids, max_new_tokens=4, min_new_tokens=4, do_sample=False, pad_token_id=0)[:, 6:]
    eos = int(free[1, 1])
    assert eos != int(free[1, 0]) and not (free[[0, 2]] == eos).any()
    lm.generation_config.eos_token_id = eos
    torch.manual_seed(3)
    monitor = StreamingContentMonitor(truncate_layers(causal_lm("llama"), 1)).eval()
    with torch.no_grad():
        monitor.token_head.bias.copy_(torch.tensor([0.0, 20.0]))
    return lm, ids, monitor


def _eos_row(share):
    def check(tmp_path):
        from neurips25.scm import DelayKPolicy

        lm, ids, monitor = _eos_batch()
        with monitor.guard(lm, DelayKPolicy(3, 0.5), ids.shape[1], share=share) as crit:
            lm.generate(ids, max_new_tokens=6, do_sample=False, stopping_criteria=[crit], pad_token_id=0)
        # row 1 generated [x, EOS]: one score, not flagged (before #59: scored on padding, "stopped at 3")
        assert len(crit.sessions[1].probs) == 1 and crit.sessions[1].ended
        assert crit.stopped_rows.tolist() == [True, False, True]

    return check


def _cut_without_eos(share):
    def check(tmp_path):
        import numpy as np

        from neurips25.scm import DelayKPolicy, StreamingContentMonitor, truncate_layers

        lm, ids, n = causal_lm("llama"), token_ids(batch=4, length=6, seed=5), 8
        lm.generation_config.eos_token_id = None
        torch.manual_seed(3)
        monitor = StreamingContentMonitor(truncate_layers(causal_lm("llama"), 1)).eval()
        with torch.no_grad():
            monitor.token_head.weight.mul_(30.0)
            free = lm.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0)
            p = monitor(free).token_logits.softmax(-1)[:, 6:, 1].numpy()
        # a policy under which some rows stop early and some never
        pol = next(DelayKPolicy(k, float(np.clip(t, 1e-3, 1 - 1e-3))) for t in np.quantile(p, np.linspace(.3, .95, 14))
                   for k in (1, 2, 3) if 0 < sum(0 < DelayKPolicy(k, float(np.clip(t, 1e-3, 1 - 1e-3))).first_stop(r)
                                                  < n - 2 for r in p) < 4)
        stops = [pol.first_stop(r) for r in p]
        with monitor.guard(lm, pol, 6, share=share) as crit:
            out = lm.generate(ids, max_new_tokens=n, do_sample=False, stopping_criteria=[crit], pad_token_id=0)
        lag = 1 if share else 0
        for b, s in enumerate(stops):  # before #59 every flagged row ran on (no EOS id: generate never padded)
            if 0 < s < n - 2:
                assert bool((out[b, 6 + s + lag:] == 0).all()), f"row {b} kept generating after its stop at {s}"

    return check


def _half_generator(dtype):
    def check(tmp_path):
        import copy

        from neurips25.scm import DelayKPolicy, StreamingContentMonitor, truncate_layers

        lm, ids = causal_lm("llama"), token_ids(batch=2, length=6)
        torch.manual_seed(3)
        heads = StreamingContentMonitor(truncate_layers(causal_lm("llama"), 1)).eval()  # float32 heads
        gen = copy.deepcopy(lm).to(dtype)
        live = heads.with_backbone(truncate_layers(copy.deepcopy(gen), 1))
        for share in (False, True):  # before #59: "mat1 and mat2 must have the same dtype" in both modes
            with live.guard(gen, DelayKPolicy(50, 0.99), 6, share=share) as crit:
                out = gen.generate(ids, max_new_tokens=4, min_new_tokens=4, do_sample=False,
                                   stopping_criteria=[crit], pad_token_id=0)
            with torch.no_grad():
                ref = live(out).token_logits.softmax(-1)[:, 6:, 1]
            for b, sess in enumerate(crit.sessions):
                assert_close(torch.tensor(sess.probs), ref[b, :len(sess.probs)], atol=1e-2,
                             what=f"{dtype} generator, share={share}, row {b}")

    return check


for _share in (False, True):
    _mode = "shared tap" if _share else "own backbone"
    row(C, "transformers", f"guard ({_mode}) on a batch where a row ends by EOS: not scored on the padding after "
        "it, not flagged (#59)")(_eos_row(_share))
    row(C, "transformers", f"guard ({_mode}) with no EOS id in the generation config: a flagged row is padded "
        "from its stop (#59)")(_cut_without_eos(_share))
for _dt in (torch.bfloat16, torch.float16):
    row(C, "transformers", f"float32 heads on a {str(_dt).split('.')[-1]} generator: forward, both guard modes, "
        "scores equal to offline (#59)")(_half_generator(_dt))
