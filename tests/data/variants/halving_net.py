"""A MobileNet-like stack of stride-2 convolutions (training-mode BatchNorm, ReLU6), its image sizes literals in
get_inputs() (224 x 224, as KernelBench writes them): the variants keep height == width, and after a few
halvings every variant's maps are even. The probe (problem/variants.py's move_apart) must keep height and width
apart and odd through the halvings, or sizes and strides fit halves of the map before, and the kernel is wrong on
inputs that are not square (tests/test_variants_structure.py)."""
import torch
import torch.nn as nn


def block(inp, out, stride):
    hidden = inp * 2
    return nn.Sequential(
        nn.Conv2d(inp, hidden, 1, 1, 0, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
        nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, out, 1, 1, 0, bias=False), nn.BatchNorm2d(out),
    )


class Model(nn.Module):
    def __init__(self, num_classes=10):
        super(Model, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(inplace=True),
            block(8, 8, 2), block(8, 16, 2), block(16, 16, 2),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.features(x)
        return self.classifier(x.view(x.size(0), -1))


batch_size = 10
num_classes = 10


def get_inputs():
    return [torch.rand(batch_size, 3, 224, 224)]


def get_init_inputs():
    return [num_classes]
