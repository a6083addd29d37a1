# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FLASHFUSE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.flashfuse_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "models"]

config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(("%flashfuse_src_root", config.flashfuse_src_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.flashfuse_tools_dir, config.llvm_tools_dir]
tools = ["flashfuse-opt", "flashfuse-compile", "flashfuse-numerics", "mlir-runner", "mlir-opt"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# GPU codegen tests need ptxas from the CUDA toolkit.
if os.path.exists(os.path.join(config.cuda_root, "bin", "ptxas")):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", os.path.join(config.cuda_root, "bin", "ptxas")))
    # CUDA_HOME stays unset in tests on purpose: the kernels must not need
    # libdevice, which the PTX serialiser links only when it finds a CUDA
    # root, so an accidental __nv_* call fails here instead of on a user's
    # machine. flashfuse-compile's default ptxas is /usr/local/cuda/bin/ptxas.
