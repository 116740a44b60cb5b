import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from neurips25.behavior_injection import MiniIGSM, build_tokenizer, tiny_llama  # noqa: E402


@pytest.fixture(scope="session")
def task():
    return MiniIGSM(n_ops=(2, 3), mod=11, distractors=(1, 1), seed=0)


@pytest.fixture(scope="session")
def tok(task):
    return build_tokenizer(task.vocabulary())


@pytest.fixture()
def model64(tok):
    """A tiny float64 Llama (random weights): exact gradient identities hold to float64 precision."""
    torch.manual_seed(0)
    return tiny_llama(len(tok), d_model=32, n_layers=2, n_heads=2, max_len=160, seed=0, tokenizer=tok).double()


@pytest.fixture()
def rng():
    return np.random.default_rng(0)
