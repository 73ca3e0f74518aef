"""KB L3 #3: nn.Sequential MLP, 17 Linear+ReLU layers 8192 -> 1024 x 16 -> 8192 on 1024 rows: many small GEMMs."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 1024
INPUT_SIZE = 8192
HIDDEN_SIZES = [1024] * 16
OUTPUT_SIZE = 8192


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
