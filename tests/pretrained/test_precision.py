"""pretrained.precision: 'auto' picks bfloat16 only where the probe times it faster than float32; the choice, its
reason and evidence are kept once per process and reach result.json's provenance (issue #64)."""

import pytest

torch = pytest.importorskip("torch")

from neurips25.pretrained import precision  # noqa: E402
from neurips25.repro import store  # noqa: E402


@pytest.fixture
def fresh(monkeypatch):
    """A process that has not decided yet (the cache emptied for this test only)."""
    monkeypatch.setattr(precision, "_cache", {})
    return monkeypatch


def _cpu(monkeypatch, capability, matmul, linear):
    """Pretend to be a CPU: torch's capability and the two probes' bfloat16 / float32 time ratios."""
    calls = {"matmul": 0, "linear": 0}

    def mm(*a, **k):
        calls["matmul"] += 1
        return matmul

    def lin(*a, **k):
        calls["linear"] += 1
        return linear

    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    monkeypatch.setattr(precision, "probe_matmul_speed", mm)
    monkeypatch.setattr(precision, "probe_autocast_linear_speed", lin)
    return calls


def test_emulated_bf16_gives_float32_without_the_second_probe(fresh):
    """An AVX2 host (issue #64: 46x slower product): float32, and the Linear probe is not even run."""
    calls = _cpu(fresh, "AVX2", 46.0, 13.0)
    assert precision.choose_cpu_dtype("auto") == torch.float32
    assert precision.cpu_autocast_bf16("auto") is False
    rec = precision.precision_record()
    assert rec["dtype"] == "float32" and rec["bf16"] is False and rec["cpu_capability"] == "AVX2"
    assert rec["matmul_time_ratio"] == 46.0 and rec["linear_time_ratio"] is None
    assert "46.00x" in rec["reason"] and "AVX2" in rec["reason"]
    assert calls == {"matmul": 1, "linear": 0}


def test_native_bf16_gives_bfloat16(fresh):
    calls = _cpu(fresh, "AVX512", 0.25, 0.45)
    assert precision.choose_cpu_dtype("auto") == torch.bfloat16
    assert precision.cpu_autocast_bf16("auto") is True
    rec = precision.precision_record()
    assert rec["bf16"] and rec["time_ratio"] == 0.45 and "autocast Linear fwd+bwd 0.45x" in rec["reason"]
    assert calls == {"matmul": 1, "linear": 1}


def test_fast_product_but_slow_autocast_training_gives_float32(fresh):
    """Plain AVX512 without bf16 units can run the product fast enough but not the autocast step: both must pay."""
    _cpu(fresh, "AVX512", 0.7, 1.6)
    assert precision.choose_cpu_dtype("auto") == torch.float32
    assert precision.precision_record()["time_ratio"] == 1.6


def test_threshold_is_inclusive_and_decided_once(fresh):
    calls = _cpu(fresh, "AVX512", precision.SPEEDUP_REQUIRED, precision.SPEEDUP_REQUIRED)
    for _ in range(3):
        assert precision.choose_cpu_dtype("auto") == torch.bfloat16
    assert calls == {"matmul": 1, "linear": 1}  # cached for the process


def test_explicit_choices_do_not_probe(fresh):
    calls = _cpu(fresh, "AVX2", 46.0, 13.0)
    assert precision.choose_cpu_dtype("bfloat16") == torch.bfloat16
    assert precision.choose_cpu_dtype(torch.float32) == torch.float32
    assert precision.cpu_autocast_bf16(True) is True
    assert calls == {"matmul": 0, "linear": 0} and precision.provenance_facts() is None


def test_bad_requests_name_the_argument():
    with pytest.raises(ValueError, match="`requested` must be one of auto, bfloat16, float32"):
        precision.choose_cpu_dtype("float16")
    with pytest.raises(ValueError, match="`requested` must be one of"):
        precision.choose_cpu_dtype(torch.float16)
    with pytest.raises(ValueError, match="`bf16` must be True, False or 'auto'"):
        precision.cpu_autocast_bf16("yes")


def test_the_choice_reaches_result_json_provenance(fresh):
    _cpu(fresh, "AVX2", 46.0, 13.0)
    assert "process" not in store.provenance() or "pretrained.precision" not in store.provenance()["process"]
    precision.choose_cpu_dtype("auto")
    facts = store.provenance()["process"]["pretrained.precision"]["precision_auto"]
    assert facts["dtype"] == "float32" and facts["cpu_capability"] == "AVX2" and facts["matmul_time_ratio"] == 46.0


def test_a_failing_provenance_hook_is_skipped(monkeypatch):
    import sys
    import types

    bad = types.ModuleType("neurips25._broken_for_test")
    bad.provenance_facts = lambda: 1 / 0
    monkeypatch.setitem(sys.modules, bad.__name__, bad)
    assert "_broken_for_test" not in store.process_facts()


def test_the_real_probe_times_both_dtypes():
    """The probes run here (small sizes): finite positive ratios; the product's is below 1 only with bf16 units."""
    mm = precision.probe_matmul_speed(size=64, reps=2)
    lin = precision.probe_autocast_linear_speed(rows=32, width=64, reps=2)
    assert 0 < mm < 1e4 and 0 < lin < 1e4
    detail = {}
    ratio = precision.probe_bf16_speed(detail=detail)
    assert ratio == pytest.approx(max(v for v in detail.values() if v is not None), rel=1e-3)


def test_probe_alternates_the_precisions_and_keeps_each_minimum(monkeypatch):
    """A burst of load that covers several consecutive rounds hits both precisions, not one: with a fake clock
    where fp32 takes 1.0 and bf16 0.5 and rounds 1-3 are 10x slower, the ratio stays 0.5 (a blocked timer that
    ran all fp32 rounds inside the burst and bf16 outside would read it through the burst's order instead)."""
    clock = {"t": 0.0, "round": 0}
    order = []

    def make(name, cost):
        def run():
            slow = 10.0 if 1 <= clock["round"] <= 3 else 1.0
            clock["t"] += cost * slow
            order.append(name)
            if name == "b":
                clock["round"] += 1
        return run

    monkeypatch.setattr(precision.time, "perf_counter", lambda: clock["t"])
    ta, tb = precision._best_of_pair(make("a", 1.0), make("b", 0.5), 6)
    assert order == ["a", "b"] * 6
    assert (ta, tb) == (1.0, 0.5)
