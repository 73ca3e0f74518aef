"""KB L3 #2: nn.Sequential MLP 16384 -> 32768 -> 32768 -> 16384 on 128 rows: three weight-read-bound GEMMs."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
INPUT_SIZE = 16384
HIDDEN_SIZES = [32768, 32768]
OUTPUT_SIZE = 16384


class Model(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        width = input_size
        for hidden in hidden_layer_sizes:
            layers.append(nn.Linear(width, hidden))
            layers.append(nn.ReLU())
            width = hidden
        layers.append(nn.Linear(width, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.rand(BATCH, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZES, OUTPUT_SIZE]
