# A malformed KernelBench problem for tests/robustness/run.sh: the extractor must refuse it clearly.
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    raise RuntimeError("no data today")
def get_init_inputs():
    return []
