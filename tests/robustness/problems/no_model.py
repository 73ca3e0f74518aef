# A malformed KernelBench problem for tests/robustness/run.sh: the extractor must refuse it clearly.
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.randn(8, 8)]
def get_init_inputs():
    return []
