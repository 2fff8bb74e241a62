# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""int8 copies of the backbone's linear layers (``backbone.quantize``): swapped per pass, the LoRA layers left float."""

from __future__ import annotations

import torch

from lightomni_ros.core.reflex.adapters import FLOAT_ROLES
from lightomni_ros.core.reflex.backbone import Int8Weights


class _Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = torch.nn.Linear(64, 64)
        self.lora_A = torch.nn.Linear(64, 4, bias=False)     # what peft names a LoRA layer: never quantized
        self.out = torch.nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.q_proj(x))) + self.lora_A(x).sum(-1, keepdim=True)


def test_int8_copies_are_swapped_in_and_out_and_lora_stays_float() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(_Block(), _Block()).eval()
    x = torch.randn(8, 64)
    with torch.no_grad():
        dense = model(x)
        weights = Int8Weights(model)
        assert len(weights) == 4 and not weights.on      # two plain layers per block; the LoRA ones left out
        assert torch.equal(model(x), dense)              # made, not yet used: the float layers run
        weights.use(True)
        assert type(model[0].q_proj).__module__ == 'torch.ao.nn.quantized.dynamic.modules.linear'
        assert type(model[0].lora_A) is torch.nn.Linear
        quantized = model(x)
        assert not torch.equal(quantized, dense)
        assert torch.nn.functional.cosine_similarity(quantized.flatten(), dense.flatten(), dim=0) > 0.99
        weights.use(False)
        assert torch.equal(model(x), dense) and type(model[1].out) is torch.nn.Linear
    # the reflex heads were trained on the float pass's hidden states; the memory pass keeps its JSON on float weights
    assert FLOAT_ROLES == ('reaction', 'memory')
