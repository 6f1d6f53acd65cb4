import torch
import torch.nn as nn


class Layer(nn.Module):
    expansion = 2

    def __init__(self, in_features, out_features):
        super(Layer, self).__init__()
        self.fc = nn.Linear(in_features, out_features * Layer.expansion)
        self.register_buffer("shift", torch.randn(out_features * Layer.expansion))

    def forward(self, x):
        return torch.relu(self.fc(x) + self.shift)


class Model(nn.Module):
    """Layers made by a helper method of Model, held in a ModuleList; a buffer; a default constructor argument."""

    def __init__(self, in_features, widths, out_features=24):
        super(Model, self).__init__()
        self.in_features = in_features
        self.layers = nn.ModuleList([self._make_layer(w) for w in widths])
        self.head = nn.Linear(self.in_features, out_features)

    def _make_layer(self, width):
        layer = Layer(self.in_features, width)
        self.in_features = width * Layer.expansion
        return layer

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


batch_size = 16
in_features = 40


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, [24, 16]]
