# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FLASHFUSE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
# .c: the C API test (test/CAPI), whose RUN lines run its built program.
config.suffixes = [".mlir", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.flashfuse_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "models", "lit-tools"]

config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(("%flashfuse_src_root", config.flashfuse_src_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.flashfuse_tools_dir, config.llvm_tools_dir]
tools = ["flashfuse-opt", "flashfuse-compile", "flashfuse-numerics", "flashfuse-capi-test",
         "mlir-runner", "mlir-opt"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# GPU codegen tests need ptxas from the CUDA toolkit.
if os.path.exists(os.path.join(config.cuda_root, "bin", "ptxas")):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", os.path.join(config.cuda_root, "bin", "ptxas")))
    # CUDA_HOME stays unset in tests on purpose: the kernels must not need
    # libdevice, which the PTX serialiser links only when it finds a CUDA
    # root, so an accidental __nv_* call fails here instead of on a user's
    # machine. flashfuse-compile's default ptxas is /usr/local/cuda/bin/ptxas.


def find_cuobjdump():
    """cuobjdump disassembles cubins to SASS, through the nvdisasm beside it
    or on PATH. The CUDA image CI runs on has neither; scripts/setup.sh
    installs PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm, which
    put them under the `nvidia` namespace package of that python3."""
    import shutil
    import subprocess

    candidates = [os.environ.get("FLASHFUSE_CUOBJDUMP", ""),
                  shutil.which("cuobjdump") or "",
                  os.path.join(config.cuda_root, "bin", "cuobjdump")]
    try:
        where = subprocess.run(
            ["python3", "-c",
             "import importlib.util as u; s = u.find_spec('nvidia'); "
             "print(chr(10).join(s.submodule_search_locations) if s else '')"],
            capture_output=True, text=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        where = []
    for root in where:
        for cuda in ("cu13", "cu12"):
            candidates.append(os.path.join(root, cuda, "bin", "cuobjdump"))
    def usable(path):
        nvdisasm = os.path.join(os.path.dirname(path), "nvdisasm")
        return (os.access(path, os.X_OK) and
                (os.access(nvdisasm, os.X_OK) or shutil.which("nvdisasm")))

    return next((c for c in candidates if c and usable(c)), None)


cuobjdump = find_cuobjdump()
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
    # Per-kernel HMMA/HGMMA counts of a cubin's SASS.
    config.substitutions.append(
        ("%sass-mma-counts",
         "python3 %s %s" % (os.path.join(config.test_source_root, "lit-tools",
                                          "sass-mma-counts"), cuobjdump)))
