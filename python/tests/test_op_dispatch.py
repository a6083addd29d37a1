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
