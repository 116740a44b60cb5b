r"""Narrow gate: trace and cut how a VLM moves image information to text (Serra et al., NeurIPS 2025).

"The Narrow Gate: Localized Image-Text Communication in Native Multimodal Models" (arXiv 2412.06646)
compares native multimodal models (Chameleon, Emu3: image tokens share the vocabulary, trained to generate
images) with adapter VLMs (LLaVA-like: a vision encoder projected into a pretrained LLM). In native models
image and text stay apart in the residual stream and the text reads the image almost only through the
end-of-image token [EOI]: knocking out text->[EOI] attention collapses image understanding, and patching
the [EOI] residual steers the answer. Adapter models spread the communication over many image tokens.

This package is the toolkit for any Hugging Face decoder or VLM, plus two toy VLMs trained here:

- positions: :class:`ModalitySpans`, :func:`spans_from_input_ids`, :func:`llava_spans`, :func:`chameleon_spans`
- interventions: :func:`attention_knockout` (a registered HF attention function calling the model's own eager
  attention, eager-patch fallback; growing query sets :class:`From`, :class:`Generated` for ``generate``),
  :func:`patch_residual`, :func:`patch_attention_input`
- recording: :class:`ResidualRecorder`, :func:`attention_weights`
- metrics: :func:`modality_cosine`, :func:`modality_homogeneity`, :func:`cross_modal_attention_share`,
  :func:`neighborhood_overlap`
- experiments: :func:`knockout_sweep`, :func:`eoi_patching`
- toys and data: :class:`ShapesWorld`, :class:`PatchKMeansTokenizer`, :class:`NativeToyVLM`,
  :class:`AdapterToyVLM`, :class:`ToyEval`

Example::

    spans = spans_from_input_ids(ids, image_token_id=range(lo, hi), boi_id=boi, eoi_id=eoi)
    with ResidualRecorder(model) as rec:
        model(input_ids=ids)
    gap = modality_cosine(rec.residuals, spans)["cross"]          # (layers,)
    with attention_knockout(model, queries=spans.text_after_image(), keys=[spans.eoi], layers="all"):
        logits = model(input_ids=ids).logits                       # mask_pre_softmax: an information block
    with attention_knockout(model, queries=spans.after_image(), keys=[spans.eoi], layers="all"):
        out = model.generate(ids, max_new_tokens=20)               # generated tokens knocked out too
"""

from neurips25.narrow_gate.analysis import eoi_patching, knockout_sweep
from neurips25.narrow_gate.data import ShapesWorld, Vocab
from neurips25.narrow_gate.knockout import (
    ATTENTION_NAME,
    From,
    Generated,
    attention_knockout,
    register_knockout_attention,
)
from neurips25.narrow_gate.layers import attention_module, decoder_layers
from neurips25.narrow_gate.metrics import (
    cross_modal_attention_share,
    modality_cosine,
    modality_homogeneity,
    neighborhood_overlap,
)
from neurips25.narrow_gate.patching import patch_attention_input, patch_residual
from neurips25.narrow_gate.positions import ModalitySpans, chameleon_spans, llava_spans, spans_from_input_ids
from neurips25.narrow_gate.recorder import ResidualRecorder, attention_weights
from neurips25.narrow_gate.tasks import ToyEval
from neurips25.narrow_gate.tokenizer import PatchKMeansTokenizer
from neurips25.narrow_gate.toy import AdapterToyConfig, AdapterToyVLM, NativeToyVLM

__all__ = [
    "ATTENTION_NAME", "AdapterToyConfig", "From", "Generated", "AdapterToyVLM",
    "ModalitySpans", "NativeToyVLM", "PatchKMeansTokenizer",
    "ResidualRecorder", "ShapesWorld", "ToyEval", "Vocab", "attention_knockout", "attention_module",
    "attention_weights", "chameleon_spans", "cross_modal_attention_share", "decoder_layers", "eoi_patching",
    "knockout_sweep", "llava_spans", "modality_cosine", "modality_homogeneity", "neighborhood_overlap",
    "patch_attention_input", "patch_residual", "register_knockout_attention", "spans_from_input_ids",
]
