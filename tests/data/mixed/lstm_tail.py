"""A 2-layer LSTM (batch_first), then tanh of its last hidden state h_n and its output sequence scaled, small:
one recurrent library call with two of its results used by generated kernels."""
import torch
import torch.nn as nn

batch_size = 2
seq_len = 5
input_size = 6
hidden_size = 8


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=2, batch_first=True)

    def forward(self, x: torch.Tensor):
        out, (h, _) = self.lstm(x)
        return out * 2.0, torch.tanh(h)


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
