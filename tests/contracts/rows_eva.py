"""eva: the EVA initialiser on PEFT LoRA models of every causal LM class; save/reload by value."""

import torch
from contract_fixtures import CAUSAL_LMS, assert_close, causal_lm, token_ids
from contract_table import not_applicable, row

C = "eva"


def _eva_model(name, rank=4):
    import peft

    from neurips25.eva import eva_init

    torch.manual_seed(0)
    cfg = peft.LoraConfig(r=rank, lora_alpha=8, target_modules="all-linear", init_lora_weights="eva",
                          eva_config=peft.EvaConfig(rho=2.0))
    model = peft.get_peft_model(causal_lm(name), cfg)
    batches = [{"input_ids": token_ids(batch=4, length=12, seed=s)} for s in range(3)]
    ranks = eva_init(model, batches, progress=False)
    return model.eval(), ranks  # get_peft_model hands back a model in train mode (dropout on)


def _save_reload(name):
    def check(tmp_path):
        import peft

        model, ranks = _eva_model(name)
        ids = token_ids(batch=2, length=10, seed=5)
        with torch.no_grad():
            for n, p in model.named_parameters():  # a trained adapter: B no longer zero
                if "lora_B" in n:
                    p.normal_(0, 0.1, generator=torch.Generator().manual_seed(len(n)))
            ref = model(ids).logits
        assert sum(ranks.values()) > 0 and len(set(ranks.values())) >= 1
        model.save_pretrained(tmp_path)
        again = peft.PeftModel.from_pretrained(causal_lm(name), tmp_path).eval()
        with torch.no_grad():
            out = again(ids).logits
        shapes = {n: tuple(p.shape) for n, p in model.named_parameters() if "lora_" in n}
        assert shapes == {n: tuple(p.shape) for n, p in again.named_parameters() if "lora_" in n}, "ranks differ"
        assert_close(out, ref, what=f"{name} logits after save_pretrained / PeftModel.from_pretrained")

    return check


for _name in CAUSAL_LMS:
    row(C, "peft", f"EVA-initialised LoRA on {_name}: save_pretrained / PeftModel.from_pretrained equal by value")(
        _save_reload(_name))


@row(C, "peft", "EVA initialisation leaves the model's output unchanged (B = 0), llama")
def _unchanged(tmp_path):
    ids = token_ids(batch=2, length=10, seed=5)
    base = causal_lm("llama")
    model, _ = _eva_model("llama")
    with torch.no_grad():
        assert_close(model(ids).logits, base(ids).logits, atol=1e-6, what="logits after EVA init")


not_applicable(C, "torch", "bfloat16 forward / torch.compile",
               "EVA is an initialiser run once before training; the LoRA layers it fills are PEFT's own")
