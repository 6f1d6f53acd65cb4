"""BatchNorm2d in eval mode (running statistics) on 32 x 64 x 256 x 256: a per-channel affine map, purely memory-bound, 512 MiB each way."""
import torch
import torch.nn as nn

batch_size = 32
num_features = 64
height = 256
width = 256


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        with torch.no_grad():  # trained-looking statistics and affine, not the identity defaults
            self.bn.running_mean.normal_(0.0, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.normal_(1.0, 0.1)
            self.bn.bias.normal_(0.0, 0.1)
        self.eval()  # inference: the running statistics are used (a model runs in the mode it is built in)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, num_features, height, width)]


def get_init_inputs():
    return [num_features]
