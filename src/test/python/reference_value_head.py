"""The reference's ValueHead (comlrl/models/actor_critic.py), for the value-head interoperability scripts."""
from typing import Optional

import torch
from torch import nn


class ValueHead(nn.Module):
    """Two-layer value head with optional hidden projection (as the reference defines it)."""

    def __init__(self, input_dim: int, hidden_dim: Optional[int] = None) -> None:
        super().__init__()
        if hidden_dim is not None and hidden_dim > 0:
            self.pre_projection = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.Tanh())
            last_dim = hidden_dim
        else:
            self.pre_projection = None
            last_dim = input_dim
        self.value_projection = nn.Linear(last_dim, 1)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
                nn.init.zeros_(module.bias)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if self.pre_projection is not None:
            hidden_states = self.pre_projection(hidden_states)
        return self.value_projection(hidden_states)


def fill_pattern(head: nn.Module) -> None:
    """Element k of the i-th state-dict tensor (row-major) := k / 8 - i: exact in float32 and bfloat16."""
    with torch.no_grad():
        for i, p in enumerate(head.state_dict().values()):
            p.copy_((torch.arange(p.numel(), dtype=torch.float32) / 8 - i).view(p.shape))
