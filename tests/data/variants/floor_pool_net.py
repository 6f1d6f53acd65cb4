"""DenseNet's pattern (15_DenseNet121's transitions, written small): a stem that halves by ceiling (a 7x7
convolution and a 3x3 max pool, stride 2), then transition layers whose 2x2 average pools halve by floor. The
probe's odd chain (m·2^e + 1) stays odd through the stem's halvings and becomes even at the first floor: every
variant's map before the second pool is even, and a size fitted as half the map before is right on all of them
and wrong on an odd one (tests/test_variants_structure.py)."""
import torch
import torch.nn as nn


def transition(inp, out):
    return nn.Sequential(nn.BatchNorm2d(inp), nn.ReLU(inplace=True), nn.Conv2d(inp, out, 1, bias=False),
                         nn.AvgPool2d(kernel_size=2, stride=2))


class Model(nn.Module):
    def __init__(self, num_classes=10):
        super(Model, self).__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 7, 2, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        self.t1 = transition(8, 8)
        self.t2 = transition(8, 8)
        self.t3 = transition(8, 8)
        self.norm = nn.BatchNorm2d(8)
        self.classifier = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.t3(self.t2(self.t1(self.stem(x))))
        x = torch.relu(self.norm(x))
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1)).view(x.size(0), -1)
        return self.classifier(x)


batch_size = 10
num_classes = 10


def get_inputs():
    return [torch.rand(batch_size, 3, 224, 224)]


def get_init_inputs():
    return [num_classes]
