"""pretrained: the shared CPU precision choice (issue #64). 'auto' is bfloat16 only where this CPU runs it faster
than float32: on a CPU whose bf16 is emulated (capability and probe forced) every 'auto' default gives float32."""

import pytest
from contract_table import row

C = "pretrained"


def _as_cpu(mp, capability, matmul, linear):
    """Force torch's CPU capability and the probe's bfloat16 / float32 time ratios; empty the per-process cache."""
    import torch

    from neurips25.pretrained import precision

    mp.setattr(precision, "_cache", {})
    mp.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    mp.setattr(precision, "probe_matmul_speed", lambda *a, **k: matmul)
    mp.setattr(precision, "probe_autocast_linear_speed", lambda *a, **k: linear)
    return precision


@row(C, "PyTorch CPU", "precision 'auto' on an AVX2 CPU with emulated bf16 (capability + probe forced: matmul 46x, "
                       "autocast Linear 13x slower) -> float32 dtype and no autocast; reason in result.json provenance")
def _auto_slow_bf16(tmp_path):
    import torch

    from neurips25.repro.store import provenance

    with pytest.MonkeyPatch.context() as mp:
        precision = _as_cpu(mp, "AVX2", 46.0, 13.0)
        assert precision.choose_cpu_dtype("auto") == torch.float32
        assert precision.cpu_autocast_bf16("auto") is False
        rec = provenance()["process"]["pretrained.precision"]["precision_auto"]
        assert rec["dtype"] == "float32" and rec["cpu_capability"] == "AVX2" and "46.00x" in rec["reason"]


@row(C, "PyTorch CPU", "precision 'auto' on a CPU with native bf16 (AMX: probe forced to 0.25x / 0.45x) -> bfloat16 "
                       "dtype and autocast; an AVX512 CPU whose autocast step is slow (1.6x) -> float32")
def _auto_fast_bf16(tmp_path):
    import torch

    with pytest.MonkeyPatch.context() as mp:
        precision = _as_cpu(mp, "AVX512", 0.25, 0.45)
        assert precision.choose_cpu_dtype("auto") == torch.bfloat16 and precision.cpu_autocast_bf16("auto") is True
    with pytest.MonkeyPatch.context() as mp:
        precision = _as_cpu(mp, "AVX512", 0.7, 1.6)
        assert precision.choose_cpu_dtype("auto") == torch.float32
