"""Shared fixtures of the contract suite, written once: tiny real model classes, dtypes, round trips.

Every model is a stock class of its library (transformers, diffusers) built from a tiny config with random
weights, offline, cached per process; a row that needs a fresh copy deep-copies it. The round-trip helpers are
the ways a user moves a component around: ``save_pretrained``/``from_pretrained``, ``state_dict`` through a file,
``pickle`` / ``copy.deepcopy``, and a ``DataLoader`` with worker processes.
"""

from __future__ import annotations

import copy
import functools
import pickle

import torch

#: dtypes the suite runs: float64 where a component is numeric, bfloat16 where its ecosystem runs it
NUMERIC_DTYPES = (torch.float32, torch.float64)
LOW_PRECISION = torch.bfloat16

#: the decoder-only causal LM classes every transformers component claims (name -> builder below)
CAUSAL_LMS = ("llama", "mistral", "qwen2", "gemma2", "phi3", "gpt2")
#: the VLM classes the narrow-gate toolkit claims
VLMS = ("llava", "chameleon", "qwen2_vl")

VOCAB = 96
_TEXT = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _seeded(seed: int):
    torch.manual_seed(seed)


@functools.cache
def _causal_lm(name: str, attn: str, seed: int):
    import transformers as tf

    _seeded(seed)
    if name == "gpt2":
        cfg = tf.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=128, bos_token_id=1,
                            eos_token_id=2, pad_token_id=0)
        cls = tf.GPT2LMHeadModel
    elif name == "gemma2":
        # softcaps set small enough to matter: an attention function that drops `softcap` moves the logits
        cfg = tf.Gemma2Config(**_TEXT, head_dim=8, attn_logit_softcapping=5.0, final_logit_softcapping=30.0,
                              query_pre_attn_scalar=8, sliding_window=4)
        cls = tf.Gemma2ForCausalLM
    else:
        cfg_cls, cls = {"llama": (tf.LlamaConfig, tf.LlamaForCausalLM),
                        "mistral": (tf.MistralConfig, tf.MistralForCausalLM),
                        "qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM),
                        "phi3": (tf.Phi3Config, tf.Phi3ForCausalLM)}[name]
        cfg = cfg_cls(**_TEXT)
    cfg._attn_implementation = attn
    model = cls(cfg).eval()
    if name == "gemma2":
        # large q/k weights so the softcap (tanh) is far from identity: the row then sees a dropped softcap
        with torch.no_grad():
            for layer in model.model.layers:
                layer.self_attn.q_proj.weight.mul_(8.0)
                layer.self_attn.k_proj.weight.mul_(8.0)
    return model


def causal_lm(name: str, attn: str = "eager", seed: int = 0):
    """A fresh copy of a tiny random ``<Name>ForCausalLM`` (eager attention unless ``attn`` says otherwise)."""
    return copy.deepcopy(_causal_lm(name, attn, seed))


@functools.cache
def _vlm(name: str, seed: int):
    import transformers as tf

    _seeded(seed)
    if name == "llava":
        text = tf.LlamaConfig(**_TEXT)
        vision = tf.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                                     image_size=16, patch_size=8, projection_dim=32)
        cfg = tf.LlavaConfig(vision_config=vision, text_config=text, image_token_index=VOCAB - 1,
                             vision_feature_layer=-1, image_seq_length=4)
        model = tf.LlavaForConditionalGeneration(cfg)
    elif name == "chameleon":
        cfg = tf.ChameleonConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                                 vq_config=dict(embed_dim=8, num_embeddings=16, base_channels=32,
                                                channel_multiplier=[1, 1], num_res_blocks=1, resolution=16,
                                                latent_channels=8, attn_resolutions=[]),
                                 vocabulary_map={"<image>": VOCAB - 1}, image_token_id=VOCAB - 1)
        model = tf.ChameleonForConditionalGeneration(cfg)
    elif name == "qwen2_vl":
        cfg = tf.Qwen2VLConfig(text_config=dict(**{k: v for k, v in _TEXT.items() if k != "pad_token_id"},
                                                rope_scaling={"type": "mrope", "mrope_section": [1, 1, 2]}),
                               vision_config=dict(depth=1, embed_dim=16, hidden_size=32, num_heads=2, patch_size=2,
                                                  spatial_merge_size=1, temporal_patch_size=1, in_channels=3),
                               image_token_id=VOCAB - 1, video_token_id=VOCAB - 2, vision_start_token_id=VOCAB - 3,
                               vision_end_token_id=VOCAB - 4)
        model = tf.Qwen2VLForConditionalGeneration(cfg)
    else:
        raise KeyError(name)
    model.config._attn_implementation = "eager"
    for sub in ("text_config", "vision_config"):
        c = getattr(model.config, sub, None)
        if c is not None:
            c._attn_implementation = "eager"
    return model.eval()


def vlm(name: str, seed: int = 0):
    """A fresh copy of a tiny random VLM of the named stock class (Llava, Chameleon, Qwen2-VL)."""
    return copy.deepcopy(_vlm(name, seed))


def token_ids(batch: int = 2, length: int = 10, seed: int = 1, low: int = 3, high: int = VOCAB - 8) -> torch.Tensor:
    """Random text ids that avoid the special and image tokens of every tiny model here."""
    return torch.randint(low, high, (batch, length), generator=torch.Generator().manual_seed(seed))


@functools.cache
def _flux(seed: int):
    from diffusers import FluxTransformer2DModel

    _seeded(seed)
    return FluxTransformer2DModel(patch_size=1, in_channels=4, num_layers=1, num_single_layers=1,
                                  attention_head_dim=8, num_attention_heads=2, joint_attention_dim=16,
                                  pooled_projection_dim=8, guidance_embeds=False, axes_dims_rope=(2, 2, 4)).eval()


def flux_transformer(seed: int = 0):
    """A fresh copy of a tiny random diffusers ``FluxTransformer2DModel`` (one double, one single block)."""
    return copy.deepcopy(_flux(seed))


# ---------------------------------------------------------------- round trips
def pickle_round_trip(obj):
    """``pickle.loads(pickle.dumps(obj))``: what multiprocessing, joblib and DataLoader workers do."""
    return pickle.loads(pickle.dumps(obj))


def state_dict_round_trip(module: torch.nn.Module, fresh: torch.nn.Module, path) -> torch.nn.Module:
    """Save ``module.state_dict()`` to a file and load it into ``fresh`` (strict); returns ``fresh``."""
    torch.save(module.state_dict(), path)
    fresh.load_state_dict(torch.load(path, weights_only=True))
    return fresh


def save_pretrained_round_trip(model, cls, path, **load_kwargs):
    """``model.save_pretrained(path)`` then ``cls.from_pretrained(path)`` (the hub-style round trip)."""
    model.save_pretrained(path)
    return cls.from_pretrained(path, **load_kwargs)


def worker_batches(dataset, num_workers: int = 2, batch_size: int = 4, sampler=None, **kwargs) -> list:
    """All batches of a ``DataLoader`` over ``dataset`` with ``num_workers`` worker processes (fork where
    available, so the rows stay cheap; spawn would also pickle the dataset, which ``pickle_round_trip`` checks)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    if "batch_sampler" not in kwargs:
        kwargs.update(batch_size=batch_size, sampler=sampler)
    loader = torch.utils.data.DataLoader(dataset, num_workers=num_workers,
                                         multiprocessing_context=ctx if num_workers else None, **kwargs)
    return list(loader)


def assert_close(a, b, atol: float = 0.0, rtol: float = 0.0, what: str = "values"):
    """Exact by default; a tolerance is stated at the call site when a round trip is not bit-exact."""
    a = torch.as_tensor(a)
    b = torch.as_tensor(b)
    if a.shape != b.shape:
        raise AssertionError(f"{what}: shapes differ {tuple(a.shape)} vs {tuple(b.shape)}")
    diff = (a.double() - b.double()).abs().max().item() if a.numel() else 0.0
    tol = atol + rtol * b.double().abs().max().item() if b.numel() else atol
    if not diff <= tol:
        raise AssertionError(f"{what}: max |diff| {diff:.3g} > tolerance {tol:.3g}")


def cuda_available() -> bool:
    return torch.cuda.is_available()


# ---------------------------------------------------------------- torch contracts, shared by every torch row
def _floats(out):
    if isinstance(out, torch.Tensor):
        return [out] if out.is_floating_point() else []
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _floats(o)]
    return _floats(getattr(out, "logits", None)) if hasattr(out, "logits") else []


def forward_in_dtype(module, make_inputs, dtype, device="cpu"):
    """Run ``module`` cast to ``dtype`` / ``device`` on inputs made in that dtype; every float output must follow.

    ``make_inputs(dtype, device)`` returns the positional arguments. Returns the outputs.
    """
    module = module.to(device=device, dtype=dtype)
    with torch.no_grad():
        out = module(*make_inputs(dtype, device))
    floats = _floats(out)
    if not floats:
        raise AssertionError("the module returned no floating tensor")
    for t in floats:
        if t.dtype != dtype or t.device.type != torch.device(device).type:
            raise AssertionError(f"output is {t.dtype} on {t.device}; the input was {dtype} on {device}")
        if not torch.isfinite(t.float()).all():
            raise AssertionError(f"non-finite output in {dtype}")
    return out


def compiled_matches_eager(fn, args, atol=1e-5):
    """``torch.compile(fn, backend="aot_eager")`` (Dynamo capture + AOTAutograd, no C++ code generation) runs,
    matches the eager result, and its gradient flows when the inputs require one."""
    import torch._dynamo

    torch._dynamo.reset()
    with torch.no_grad():
        ref = _floats(fn(*args))
    out = _floats(torch.compile(fn, backend="aot_eager")(*args))
    for a, b in zip(out, ref, strict=True):
        assert_close(a, b, atol=atol, what="torch.compile vs eager")
    return out


# ---------------------------------------------------------------- scikit-learn contracts
def sklearn_checks_pass(estimator, expected_failed: dict | None = None):
    """scikit-learn's own estimator checks (what ``parametrize_with_checks`` runs), all in one row.

    ``expected_failed`` maps a check name to the documented reason it cannot apply; every other check must pass
    and every documented exception must really fail (so a stale exception is noticed).
    """
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, expected_failed_checks=expected_failed or {}, on_fail=None)
    failed = {r["check_name"]: str(r["exception"])[:200] for r in results if r["status"] == "failed"}
    if failed:
        raise AssertionError(f"{len(failed)} of {len(results)} sklearn checks failed: {failed}")
    ran = [r for r in results if r["status"] == "passed"]
    if len(ran) < 30:
        raise AssertionError(f"only {len(ran)} sklearn checks passed: {[r['status'] for r in results]}")
    return results
