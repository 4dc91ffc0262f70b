"""A model's forward pass captured in a CUDA graph, for the PyTorch peer
timings (tests/zoo/gpu_zoo.py --time, tools/gpu_models.py)."""


def graphed(torch, model, x):
    """model(x) warmed up on a side stream, captured once; returns the
    graph's replay (call it, then synchronize, to time one run)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(x)
    return g.replay
