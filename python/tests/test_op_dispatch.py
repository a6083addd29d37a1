"""ops.run_op: eager calls on plain tensors run an op's Python body
directly; anything that torch's dispatcher would act on (a torch-function
or dispatch mode, a functorch transform, the profiler, a tensor subclass,
torch.compile) takes the registered op (no GPU)."""
import pytest

torch = pytest.importorskip("torch")

from flashfuse import ops  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

pytestmark = pytest.mark.skipif(
    None in ops._DISPATCH_PROBES,
    reason="this torch lacks a probe: every call takes the registered op")


def route(*args):
    """Which of the two run_op calls: 'op' or 'body'."""
    return ops.run_op(lambda *a: "op", lambda *a: "body", *args)


def test_plain_eager_tensors_run_the_body():
    t = torch.zeros(2)
    assert route(t, None, 3, 0.5, t) == "body"
    assert route() == "body"


def test_a_dispatch_mode_takes_the_op():
    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        assert route(torch.zeros(2)) == "op"
    assert route(torch.zeros(2)) == "body"


def test_fake_tensors_take_the_op():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(torch.zeros(2))
        assert route(fake) == "op"


def test_a_torch_function_mode_takes_the_op():
    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        assert route(torch.zeros(2)) == "op"


def test_a_tensor_subclass_takes_the_op():
    class Tagged(torch.Tensor):
        pass

    assert route(torch.zeros(2).as_subclass(Tagged)) == "op"


def test_vmap_takes_the_op():
    seen = []

    def per_row(row):
        seen.append(route(row))
        return row

    torch.func.vmap(per_row)(torch.zeros(3, 2))
    assert seen == ["op"]


def test_the_profiler_takes_the_op():
    with torch.autograd.profiler.profile():
        assert route(torch.zeros(2)) == "op"


def test_compiled_code_takes_the_op():
    seen = []

    def fn(t):
        seen.append(route(t))
        return t + 1

    torch.compile(fn, backend="eager", fullgraph=False)(torch.zeros(2))
    assert seen and set(seen) == {"op"}


def test_forward_launches_reuse_their_arguments(monkeypatch):
    """Two forward calls of one signature: the second launches with its own
    tensors' addresses and seed, every size, stride and option as a fresh
    ForwardArgs gives them (ops._DenseForward); another signature (another
    length) gets its own."""
    import contextlib
    import ctypes
    from flashfuse import _kernels
    from flashfuse import _runtime as rt
    launched, looked_up = [], []

    def record(kernel, args, stream):
        launched.append({name: (getattr(args, name)[:] if hasattr(
            getattr(args, name), "__len__") else getattr(args, name))
            for name, _ in rt.ForwardArgs._fields_})

    def lookup(*a):
        looked_up.append(a)
        return ctypes.c_void_p(7)

    monkeypatch.setattr(rt, "attention_forward", record)
    monkeypatch.setattr(_kernels, "forward_kernel", lookup)
    monkeypatch.setattr(ops, "_capability", lambda index: (9, 0))
    monkeypatch.setattr(ops, "_launch_context",
                        lambda device: (contextlib.nullcontext(), 0))
    monkeypatch.setattr(ops, "_forward_launches", ops._Templates())

    def call(seed, seq=130):
        q = torch.randn(1, 4, seq, 64, dtype=torch.bfloat16)
        k, v = (torch.randn(1, 2, seq, 64, dtype=torch.bfloat16)
                for _ in range(2))
        o, lse = ops._attention_fwd(q, k, v, None, None, 1, 0.125, -1, 7,
                                    0.0, 0.1, seed)
        return {"q": q, "k": k, "v": v, "o": o, "lse": lse}

    first, second = call(5), call(9)
    assert len(looked_up) == 1 and len(ops._forward_launches.entries) == 1
    monkeypatch.setattr(ops, "_forward_launches", ops._Templates())
    call(9)  # the same signature, built afresh
    call(9, seq=131)  # another signature
    assert len(looked_up) == 3
    a1, a2, a3, a4 = launched
    for name, t in second.items():
        assert a2[name] == t.data_ptr() != first[name].data_ptr()
    assert (a1["seed"], a2["seed"], a3["seed"]) == (5, 9, 9)
    pointers = {"q", "k", "v", "o", "lse", "bias", "mask"}
    same = lambda a: {n: x for n, x in a.items() if n not in pointers}
    assert same(a2) == same(a3)
    assert same(a1) == {**same(a2), "seed": 5}
    assert (a2["seq_q"], a2["heads_kv"], a2["window_right"]) == (130, 2, 7)
    assert a4["seq_q"] == a4["seq_k"] == 131
