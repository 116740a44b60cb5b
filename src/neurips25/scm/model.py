"""The Streaming Content Monitor: a causal backbone with a token head and a response head.

- token head ``g(h_t)``: 2-way logits at every position (dropout before it); because the backbone is causal,
  ``g`` at response token ``t`` sees only the prompt and the response up to ``t``, so it is the streaming judge;
- response head ``f(h_last)``: 2-way logits at the last non-pad token, no bias (official code).

Trained with ``alpha CE_token + (1 - alpha) CE_response + gamma L_logic`` (:mod:`neurips25.scm.losses`).
The backbone may be frozen (heads only, hidden states cacheable), fine-tuned, or adapted with LoRA (PEFT).
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import os
import warnings
from pathlib import Path

import torch
from torch import nn

from neurips25.scm.backbone import call_backbone, hidden_size_of
from neurips25.scm.losses import REDUCTIONS, scm_loss


@dataclasses.dataclass
class SCMOutput:
    """``loss`` (None without labels), ``token_logits`` (batch, seq, 2), ``response_logits`` (batch, 2)."""

    loss: torch.Tensor | None
    token_logits: torch.Tensor
    response_logits: torch.Tensor
    parts: dict | None = None


def _check_unit(name, v, lo_open=False):
    if not isinstance(v, numbers.Real) or not (0.0 <= float(v) <= 1.0) or (lo_open and float(v) == 0.0):
        raise ValueError(f"`{name}` must be in [0, 1]; got {v!r}")


def last_index(attention_mask: torch.Tensor) -> torch.Tensor:
    """Index of the last non-pad position per row (right padding)."""
    return (attention_mask.long().cumsum(1).argmax(1)).long()


class StreamingContentMonitor(nn.Module):
    """Dual-head harm monitor of Li et al. (NeurIPS 2025) on any causal backbone that returns hidden states.

    Parameters
    ----------
    backbone : nn.Module or None
        Causal LM (a transformers ``PreTrainedModel`` or :func:`~neurips25.scm.tiny_decoder`). ``None`` builds
        heads only, to train on cached hidden states (then ``hidden_size`` is required).
    hidden_size : int, optional
        Width of the hidden states; read from ``backbone.config.hidden_size`` by default.
    alpha : float in [0, 1]
        Weight of the token cross-entropy; ``1 - alpha`` weighs the response cross-entropy.
    gamma : float >= 0
        Weight of the logic-consistency term.
    logic_reduce : {"max", "mean", "min"}
        Pooling of token probabilities inside the logic term.
    dropout : float in [0, 1)
        Dropout before the token head (0.1 in the official code).
    freeze_backbone : bool
        Freeze the backbone's weights (the quick-scale setting: heads on frozen SmolLM2).
    lora_r : int
        ``> 0`` wraps the backbone with PEFT LoRA of this rank on ``q_proj, v_proj`` (the rest frozen).

    Examples
    --------
    >>> from neurips25.scm import StreamingContentMonitor, tiny_decoder
    >>> mon = StreamingContentMonitor(tiny_decoder(50, hidden_size=16, n_heads=2))
    >>> out = mon(torch.tensor([[1, 2, 3]]))
    >>> tuple(out.token_logits.shape), tuple(out.response_logits.shape)
    ((1, 3, 2), (1, 2))
    """

    def __init__(self, backbone: nn.Module | None = None, hidden_size: int | None = None, alpha: float = 0.5,
                 gamma: float = 1.0, logic_reduce: str = "max", dropout: float = 0.1,
                 freeze_backbone: bool = True, lora_r: int = 0):
        super().__init__()
        _check_unit("alpha", alpha)
        if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 <= float(gamma) < float("inf"):
            raise ValueError(f"`gamma` must be >= 0; got {gamma!r}")
        if logic_reduce not in REDUCTIONS:
            raise ValueError(f"`logic_reduce` must be one of {REDUCTIONS}; got {logic_reduce!r}")
        if not isinstance(dropout, numbers.Real) or not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1); got {dropout!r}")
        if not isinstance(lora_r, numbers.Integral) or lora_r < 0:
            raise ValueError(f"`lora_r` must be a non-negative integer; got {lora_r!r}")
        if backbone is not None and not isinstance(backbone, nn.Module):
            raise TypeError(f"`backbone` must be a torch nn.Module or None; got {type(backbone).__name__}")
        if hidden_size is None:
            if backbone is None:
                raise ValueError("`hidden_size` is required when `backbone` is None (heads-only monitor)")
            hidden_size = hidden_size_of(backbone)
        if not isinstance(hidden_size, numbers.Integral) or hidden_size < 1:
            raise ValueError(f"`hidden_size` must be a positive integer; got {hidden_size!r}")
        self.config = dict(hidden_size=int(hidden_size), alpha=float(alpha), gamma=float(gamma),
                           logic_reduce=logic_reduce, dropout=float(dropout),
                           freeze_backbone=bool(freeze_backbone), lora_r=int(lora_r))
        if backbone is not None:
            if freeze_backbone or lora_r:
                backbone.requires_grad_(False)
            if lora_r:
                backbone = _add_lora(backbone, int(lora_r))
        self.backbone = backbone
        self.dropout = nn.Dropout(float(dropout))
        self.token_head = nn.Linear(int(hidden_size), 2)
        self.response_head = nn.Linear(int(hidden_size), 2, bias=False)

    # -- the paper's two heads ------------------------------------------------------------------------
    def heads(self, hidden: torch.Tensor, attention_mask: torch.Tensor | None = None):
        """Token logits (batch, seq, 2) at every position and response logits (batch, 2) at the last valid one."""
        if not isinstance(hidden, torch.Tensor) or hidden.ndim != 3 or hidden.shape[-1] != self.config["hidden_size"]:
            got = tuple(hidden.shape) if isinstance(hidden, torch.Tensor) else type(hidden).__name__
            raise ValueError(f"`hidden_states` must have shape (batch, seq, {self.config['hidden_size']}); got {got}")
        hidden = hidden.to(self.token_head.weight.dtype)  # float32 heads on a bf16 / fp16 backbone read upcast states
        token_logits = self.token_head(self.dropout(hidden))
        if attention_mask is None:
            last = torch.full((hidden.shape[0],), hidden.shape[1] - 1, dtype=torch.long, device=hidden.device)
        else:
            last = last_index(attention_mask)
        h_last = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
        return token_logits, self.response_head(h_last)

    def encode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Final hidden states (batch, seq, hidden) of the backbone."""
        if self.backbone is None:
            raise ValueError("this monitor has no backbone; pass `hidden_states=` instead of `input_ids`")
        _check_ids("input_ids", input_ids)
        if attention_mask is not None and attention_mask.shape != input_ids.shape:
            raise ValueError(f"`attention_mask` must have the shape of `input_ids` {tuple(input_ids.shape)}; "
                             f"got {tuple(attention_mask.shape)}")
        h, _ = call_backbone(self.backbone, input_ids, attention_mask)
        return h

    def forward(self, input_ids: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                token_labels: torch.Tensor | None = None, response_labels: torch.Tensor | None = None,
                hidden_states: torch.Tensor | None = None, response_mask: torch.Tensor | None = None) -> SCMOutput:
        """Score sequences (from ``input_ids`` or cached ``hidden_states``); loss when labels are given.

        ``token_labels`` (batch, seq) hold 0 / 1 / -100 (ignored); ``response_mask`` (batch, seq) marks the
        response tokens pooled by the logic term (default: positions with ``token_labels != -100``).
        """
        if hidden_states is None:
            if input_ids is None:
                raise ValueError("pass `input_ids` or `hidden_states`")
            hidden_states = self.encode(input_ids, attention_mask)
        tok, resp = self.heads(hidden_states, attention_mask)
        B, T = tok.shape[:2]
        if token_labels is not None:
            if not isinstance(token_labels, torch.Tensor) or token_labels.shape != (B, T):
                got = tuple(token_labels.shape) if isinstance(token_labels, torch.Tensor) else type(token_labels)
                raise ValueError(f"`token_labels` must align with the input: shape ({B}, {T}); got {got}")
            bad = (token_labels != -100) & (token_labels != 0) & (token_labels != 1)
            if bad.any():
                raise ValueError("`token_labels` must hold 0, 1 or -100 (ignored)")
        if response_labels is not None and (not isinstance(response_labels, torch.Tensor)
                                            or response_labels.shape != (B,)):
            raise ValueError(f"`response_labels` must have shape ({B},)")
        if token_labels is None and response_labels is None:
            return SCMOutput(None, tok, resp)
        if response_mask is None:
            response_mask = (token_labels != -100) if token_labels is not None else (
                attention_mask if attention_mask is not None else torch.ones(B, T))
        loss, parts = scm_loss(tok, resp, token_labels, response_labels, response_mask, self.config["alpha"],
                               self.config["gamma"], self.config["logic_reduce"])
        return SCMOutput(loss, tok, resp, parts)

    # -- streaming ------------------------------------------------------------------------------------
    def start(self, prompt_ids, policy=None):
        """A :class:`~neurips25.scm.StreamSession` primed with the prompt (KV cache); feed it with ``step``."""
        from neurips25.scm.stream import StreamSession

        return StreamSession(self, prompt_ids, policy)

    def with_backbone(self, backbone: nn.Module) -> StreamingContentMonitor:
        """A copy of this monitor's heads on ``backbone`` (frozen), e.g. heads trained on cached hidden states
        attached to the model they were read from, for streaming or ``generate``."""
        if not isinstance(backbone, nn.Module):
            raise TypeError(f"`backbone` must be a torch nn.Module; got {type(backbone).__name__}")
        size = hidden_size_of(backbone)
        if size != self.config["hidden_size"]:
            raise ValueError(f"`backbone` has hidden size {size}; this monitor's heads expect "
                             f"{self.config['hidden_size']}")
        mon = type(self)(backbone, **dict(self.config, freeze_backbone=True, lora_r=0))
        mon.token_head.load_state_dict(self.token_head.state_dict())
        mon.response_head.load_state_dict(self.response_head.state_dict())
        return mon.to(next(self.token_head.parameters()).device).eval()

    def guard(self, generator: nn.Module, policy, prompt_length: int, share: bool | None = None,
              pad_token_id: int | None = None):
        """A stopping criterion for ``generator.generate`` that cuts answers this monitor flags (the default way
        to attach a monitor).

        ``share=None`` (default) reads the generator's own hidden states when this monitor's backbone is the
        generator's first ``n`` layers (the shared-layers mode: about 1.0x the plain decoding time, the stop one
        token later) and runs the monitor's own backbone otherwise (a LoRA or fine-tuned backbone: ``1 + n/L``
        of a decoding step per token); ``share=True`` requires sharing (ValueError if the weights differ),
        ``share=False`` forces the own backbone. ``crit.tap is not None`` tells which mode was chosen.

        >>> crit = monitor.guard(lm, DelayKPolicy(3, 0.7), ids.shape[1])  # doctest: +SKIP
        >>> out = lm.generate(ids, stopping_criteria=[crit], max_new_tokens=64); crit.close()  # doctest: +SKIP
        """
        from neurips25.scm.stream import SCMStoppingCriteria, shares_layers

        if share not in (None, True, False):
            raise ValueError(f"`share` must be None (auto), True or False; got {share!r}")
        use = shares_layers(self, generator) if share is None else share
        gen_cfg = getattr(generator, "generation_config", None)
        eos = getattr(gen_cfg, "eos_token_id", None)
        if gen_cfg is not None and eos is None and getattr(gen_cfg, "pad_token_id", None) is None:
            warnings.warn("the generator's generation_config has neither eos_token_id nor pad_token_id: generate "
                          "cuts a flagged row by padding it, so pass pad_token_id= to generate (or set "
                          "generator.generation_config.pad_token_id)", stacklevel=2)
        return SCMStoppingCriteria(self, policy, prompt_length, generator=generator if use else None,
                                   pad_token_id=pad_token_id, eos_token_id=[] if eos is None else eos)

    # -- persistence (safetensors + JSON, never pickle) -----------------------------------------------
    def trainable_state(self) -> dict[str, torch.Tensor]:
        """Heads plus every backbone parameter that is trainable (LoRA adapters, unfrozen weights)."""
        keep = {n: p for n, p in self.named_parameters() if p.requires_grad or not n.startswith("backbone.")}
        return {n: p.detach().contiguous().clone() for n, p in keep.items()}

    def save_pretrained(self, path: str | os.PathLike) -> Path:
        """Write ``config.json`` and ``monitor.safetensors`` (heads + trainable backbone weights) to ``path``."""
        from safetensors.torch import save_file

        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        (p / "config.json").write_text(json.dumps(self.config, indent=1))
        save_file(self.trainable_state(), str(p / "monitor.safetensors"))
        return p

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike, backbone: nn.Module | None = None) -> StreamingContentMonitor:
        """Rebuild a monitor saved by :meth:`save_pretrained` on ``backbone`` (the same architecture)."""
        from safetensors.torch import load_file

        p = Path(path)
        if not (p / "config.json").is_file() or not (p / "monitor.safetensors").is_file():
            raise FileNotFoundError(f"`path` must hold config.json and monitor.safetensors; got {str(p)!r}")
        cfg = json.loads((p / "config.json").read_text())
        if backbone is not None and hidden_size_of(backbone) != cfg.get("hidden_size"):
            raise ValueError(f"`backbone` has hidden size {hidden_size_of(backbone)}; the saved monitor's heads "
                             f"expect {cfg.get('hidden_size')}")
        mon = cls(backbone, **cfg)
        state = load_file(str(p / "monitor.safetensors"))
        if backbone is None:
            own = sorted(k for k in state if k.startswith("backbone."))
            if own or cfg.get("lora_r"):
                kind = "LoRA adapters" if cfg.get("lora_r") else "fine-tuned backbone weights"
                raise ValueError(f"`backbone` is None but the saved monitor holds {kind} ({len(own)} tensors, e.g. "
                                 f"{own[:1]}) that its heads were trained on; pass the backbone it was trained on "
                                 "(the same architecture and base weights) to load them")
        missing, unexpected = mon.load_state_dict(state, strict=False)
        want = set(mon.trainable_state())
        if unexpected or want & set(missing):
            raise ValueError(f"saved monitor does not fit this backbone: missing {sorted(want & set(missing))}, "
                             f"unexpected {sorted(unexpected)}")
        return mon.eval()


def _check_ids(name, ids):
    if not isinstance(ids, torch.Tensor) or ids.ndim != 2 or ids.dtype not in (torch.int64, torch.int32):
        got = f"{tuple(ids.shape)} {ids.dtype}" if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise ValueError(f"`{name}` must be an integer tensor of shape (batch, seq); got {got}")
    if ids.shape[1] == 0:
        raise ValueError(f"`{name}` is empty (sequence length 0)")


def _add_lora(backbone, r):
    from neurips25.extras import require

    peft = require("peft", "lm")
    cfg = peft.LoraConfig(r=r, lora_alpha=2 * r, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    return peft.get_peft_model(backbone, cfg)
