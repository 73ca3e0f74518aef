# A malformed KernelBench problem (tests/robustness/run.sh): forward has a syntax error.
import torch
class Model(torch.nn.Module):
    def forward(self, x)
        return x * 2
def get_inputs():
    return [torch.randn(8, 8)]
def get_init_inputs():
    return []
