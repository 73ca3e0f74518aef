# A malformed KernelBench problem for tests/robustness/run.sh: the extractor must refuse it clearly.
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x + 1
def get_inputs():
    return 7
def get_init_inputs():
    return []
