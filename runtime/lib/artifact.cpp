// Artifacts: loading a kernel module from an artifact directory, caching it
// per path, and resolving (and configuring) its kernels by name or variant.
#include "handles.h"
#include "launch.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <vector>

using namespace flashfuse;

namespace {

constexpr size_t kJitLogBytes = 1 << 16;

std::string trimLog(const char *log) {
  std::string s(log);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0'))
    s.pop_back();
  return s;
}

flashfuse_status loadCubin(flashfuse_context &c, const std::string &path,
                           cu::CUmodule &module) {
  std::string image;
  if (!readWholeFile(path, image))
    return fail(FLASHFUSE_ERROR_MANIFEST, concat("cannot read cubin ", path));
  return checkCu(*c.api, c.api->cuModuleLoadData(&module, image.data()),
                 concat("loading cubin ", path));
}

// JIT-compiles PTX; the driver's error log is what tells a user why (an
// instruction the GPU lacks, a PTX ISA newer than the driver), so it is put
// into the message.
flashfuse_status loadPtx(flashfuse_context &c, const std::string &path,
                         cu::CUmodule &module) {
  std::string ptx;
  if (!readWholeFile(path, ptx))
    return fail(FLASHFUSE_ERROR_MANIFEST, concat("cannot read PTX ", path));
  std::vector<char> errorLog(kJitLogBytes, '\0');
  std::vector<char> infoLog(kJitLogBytes, '\0');
  int options[] = {cu::CU_JIT_ERROR_LOG_BUFFER,
                   cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   cu::CU_JIT_INFO_LOG_BUFFER,
                   cu::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                   cu::CU_JIT_LOG_VERBOSE};
  // Sizes are passed by value, cast into the pointer-sized option slot, as
  // the driver API specifies for scalar options.
  void *values[] = {errorLog.data(),
                    reinterpret_cast<void *>(static_cast<uintptr_t>(kJitLogBytes)),
                    infoLog.data(),
                    reinterpret_cast<void *>(static_cast<uintptr_t>(kJitLogBytes)),
                    reinterpret_cast<void *>(static_cast<uintptr_t>(0))};
  cu::CUresult r = c.api->cuModuleLoadDataEx(
      &module, ptx.c_str(), sizeof(options) / sizeof(options[0]), options,
      values);
  if (r == cu::CUDA_SUCCESS)
    return FLASHFUSE_SUCCESS;
  std::string log = trimLog(errorLog.data());
  return fail(FLASHFUSE_ERROR_CUDA,
              concat("JIT-compiling PTX ", path, " for sm_", c.ccMajor,
                     c.ccMinor, ": ", describeCuResult(*c.api, r),
                     log.empty() ? std::string() : "\nJIT log:\n" + log));
}

flashfuse_status loadModule(flashfuse_context &c, flashfuse_artifact &a) {
  const Manifest &m = a.manifest.data;
  int deviceArch = c.ccMajor * 10 + c.ccMinor;
  std::string cubinError;
  if (!m.cubin.empty() && m.arch == deviceArch) {
    if (loadCubin(c, m.dir + "/" + m.cubin, a.module) == FLASHFUSE_SUCCESS) {
      a.fromCubin = true;
      return FLASHFUSE_SUCCESS;
    }
    cubinError = lastError();
    if (m.ptx.empty())
      return fail(FLASHFUSE_ERROR_CUDA, cubinError);
  }
  if (m.ptx.empty())
    return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                concat(m.dir, " has only a cubin for sm_", m.arch,
                       " and no PTX, but the GPU is sm_", deviceArch));
  if (auto s = loadPtx(c, m.dir + "/" + m.ptx, a.module);
      s != FLASHFUSE_SUCCESS) {
    if (!cubinError.empty())
      return fail(s, concat(cubinError, "; then ", lastError()));
    return s;
  }
  a.fromCubin = false;
  return FLASHFUSE_SUCCESS;
}

// Copies the artifact's list files (bound params, KERNEL_ABI.md
// "Block-sparse") to the GPU, once: every launch of its kernels reads them
// there. On failure nothing stays allocated.
flashfuse_status uploadLists(flashfuse_context &c, flashfuse_artifact &a) {
  const DriverApi &api = *c.api;
  for (const auto &[file, bytes] : a.manifest.data.listFiles) {
    cu::CUdeviceptr ptr = 0;
    flashfuse_status s = checkCu(
        api, api.cuMemAlloc(&ptr, bytes.size()),
        concat("allocating ", bytes.size(), " bytes for the lists of ",
               a.manifest.data.dir, "/", file));
    if (s == FLASHFUSE_SUCCESS) {
      a.listBuffers.emplace(file, ptr);
      s = checkCu(api, api.cuMemcpyHtoD(ptr, bytes.data(), bytes.size()),
                  concat("copying ", a.manifest.data.dir, "/", file,
                         " to the GPU"));
    }
    if (s != FLASHFUSE_SUCCESS) {
      for (auto &list : a.listBuffers)
        api.cuMemFree(list.second);
      a.listBuffers.clear();
      return s;
    }
  }
  return FLASHFUSE_SUCCESS;
}

flashfuse_status loadArtifact(flashfuse_context &c, const char *dir,
                              flashfuse_artifact **out) {
  if (!dir || !out)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                "artifact directory and output must not be NULL");
  char resolved[PATH_MAX];
  if (!realpath(dir, resolved))
    return fail(FLASHFUSE_ERROR_MANIFEST,
                concat("artifact directory ", dir, " does not exist"));
  std::string key(resolved);

  std::lock_guard<std::mutex> lock(c.mutex);
  if (auto it = c.artifacts.find(key); it != c.artifacts.end()) {
    *out = it->second.get();
    return FLASHFUSE_SUCCESS;
  }
  auto a = std::make_unique<flashfuse_artifact>();
  a->context = &c;
  if (auto s = readManifest(key, a->manifest.data); s != FLASHFUSE_SUCCESS)
    return s;
  ScopedContext scope(c);
  if (auto s = scope.enter(); s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = loadModule(c, *a); s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = uploadLists(c, *a); s != FLASHFUSE_SUCCESS) {
    c.api->cuModuleUnload(a->module);
    return s;
  }
  *out = a.get();
  c.artifacts.emplace(key, std::move(a));
  return FLASHFUSE_SUCCESS;
}

// Resolves a function and makes it launchable with the manifest's block
// size and dynamic shared memory, explaining any limit the GPU imposes.
flashfuse_status configureKernel(flashfuse_context &c, flashfuse_artifact &a,
                                 const KernelSpec &spec, cu::CUfunction &fn) {
  const DriverApi &api = *c.api;
  if (auto s = checkCu(api, api.cuModuleGetFunction(&fn, a.module,
                                                    spec.name.c_str()),
                       concat("finding kernel '", spec.name, "' in ",
                              a.manifest.data.dir));
      s != FLASHFUSE_SUCCESS)
    return s;
  int maxThreads = 0, staticSmem = 0;
  if (auto s = checkCu(api,
                       api.cuFuncGetAttribute(
                           &maxThreads, cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn),
                       concat("querying kernel '", spec.name, "'"));
      s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = checkCu(api,
                       api.cuFuncGetAttribute(
                           &staticSmem, cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn),
                       concat("querying kernel '", spec.name, "'"));
      s != FLASHFUSE_SUCCESS)
    return s;
  if (spec.threads > maxThreads)
    return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                concat("kernel '", spec.name, "' wants ", spec.threads,
                       " threads per block but, with its register use, this "
                       "GPU allows at most ",
                       maxThreads));
  long long total = static_cast<long long>(spec.smem) + staticSmem;
  if (total > c.maxSmemDefault) {
    // Beyond 48 KiB a kernel must opt in, and only up to the device's limit.
    if (total > c.maxSmemOptin)
      return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                  concat("kernel '", spec.name, "' needs ", spec.smem,
                         " bytes of dynamic shared memory (+", staticSmem,
                         " static) but this GPU (sm_", c.ccMajor, c.ccMinor,
                         ") allows at most ", c.maxSmemOptin,
                         " per block; compile for this GPU's target"));
    if (auto s = checkCu(api,
                         api.cuFuncSetAttribute(
                             fn, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             spec.smem),
                         concat("allowing kernel '", spec.name, "' ",
                                spec.smem, " bytes of dynamic shared memory"));
        s != FLASHFUSE_SUCCESS)
      return s;
  }
  return FLASHFUSE_SUCCESS;
}

// Occupancy of a configured kernel (after the shared-memory opt-in above,
// which it depends on).
flashfuse_status queryBlocksPerSm(flashfuse_context &c, const KernelSpec &spec,
                                  cu::CUfunction fn, int &blocks) {
  if (auto s = checkCu(*c.api,
                       c.api->cuOccupancyMaxActiveBlocksPerMultiprocessor(
                           &blocks, fn, spec.threads,
                           static_cast<size_t>(spec.smem)),
                       concat("querying the occupancy of kernel '", spec.name,
                              "'"));
      s != FLASHFUSE_SUCCESS)
    return s;
  if (blocks < 1)
    return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                concat("kernel '", spec.name, "' cannot run on this GPU: ",
                       "not one block of ", spec.threads, " threads and ",
                       spec.smem, " bytes of shared memory fits an SM"));
  return FLASHFUSE_SUCCESS;
}

// clusterCapacity (handles.h) of a decode kernel that merges in clusters;
// left 0 (no cluster merge) where the driver cannot say.
void queryClusterCapacity(flashfuse_context &c, const KernelSpec &spec,
                          flashfuse_kernel &k) {
  if (spec.clusterMerge < 2 || !c.api->cuLaunchKernelEx ||
      !c.api->cuOccupancyMaxActiveClusters)
    return;
  int most = std::min<int>(spec.clusterMerge,
                           static_cast<int>(k.clusterCapacity.size()) - 1);
  for (int n = 2; n <= most; ++n) {
    // One cluster's grid: the driver counts how many run at once.
    const unsigned grid[3] = {static_cast<unsigned>(n), 1, 1};
    cu::CUlaunchAttribute cluster;
    cu::CUlaunchConfig config = clusterLaunchConfig(
        spec, grid, static_cast<unsigned>(n), nullptr, cluster);
    int clusters = 0;
    if (c.api->cuOccupancyMaxActiveClusters(&clusters, k.function, &config) ==
        cu::CUDA_SUCCESS)
      k.clusterCapacity[n] = clusters;
  }
}

flashfuse_status getKernel(flashfuse_artifact &a, int index,
                           flashfuse_kernel **out) {
  flashfuse_context &c = *a.context;
  const KernelSpec &spec = a.manifest.data.kernels[index];
  std::lock_guard<std::mutex> lock(c.mutex);
  if (auto it = a.kernels.find(spec.name); it != a.kernels.end()) {
    *out = it->second.get();
    return FLASHFUSE_SUCCESS;
  }
  ScopedContext scope(c);
  if (auto s = scope.enter(); s != FLASHFUSE_SUCCESS)
    return s;
  auto k = std::make_unique<flashfuse_kernel>();
  k->artifact = &a;
  k->spec = &spec;
  if (auto s = configureKernel(c, a, spec, k->function); s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = queryBlocksPerSm(c, spec, k->function, k->blocksPerSm);
      s != FLASHFUSE_SUCCESS)
    return s;
  queryClusterCapacity(c, spec, *k);
  *out = k.get();
  a.kernels.emplace(spec.name, std::move(k));
  return FLASHFUSE_SUCCESS;
}

} // namespace

extern "C" {

flashfuse_status flashfuse_artifact_load(flashfuse_context *c,
                                         const char *dir,
                                         flashfuse_artifact **out) {
  return guarded([&] {
    if (!c)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "context is NULL");
    return loadArtifact(*c, dir, out);
  });
}

const flashfuse_manifest *
flashfuse_artifact_manifest(const flashfuse_artifact *a) {
  return a ? &a->manifest : nullptr;
}

int32_t flashfuse_artifact_uses_cubin(const flashfuse_artifact *a) {
  return a && a->fromCubin ? 1 : 0;
}

flashfuse_status flashfuse_artifact_kernel(flashfuse_artifact *a,
                                           const char *name,
                                           flashfuse_kernel **out) {
  return guarded([&] {
    if (!a || !name || !out)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "NULL argument");
    int index = findKernel(a->manifest.data, std::string(name));
    if (index < 0) {
      std::string names;
      for (const KernelSpec &k : a->manifest.data.kernels)
        names += " " + k.name;
      return fail(FLASHFUSE_ERROR_NOT_FOUND,
                  concat("no kernel named '", name, "' in ",
                         a->manifest.data.dir, "; it has:", names));
    }
    return getKernel(*a, index, out);
  });
}

flashfuse_status flashfuse_artifact_find_kernel(flashfuse_artifact *a,
                                                const flashfuse_variant *v,
                                                flashfuse_kernel **out) {
  return guarded([&] {
    if (!a || !v || !out)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "NULL argument");
    int32_t index = -1;
    if (auto s = findOrExplain(a->manifest.data, *v, index);
        s != FLASHFUSE_SUCCESS)
      return s;
    return getKernel(*a, index, out);
  });
}

flashfuse_status flashfuse_kernel_get_info(const flashfuse_kernel *k,
                                           flashfuse_kernel_info *out) {
  return guarded([&] {
    if (!k || !out)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "NULL argument");
    fillKernelInfo(*k->spec, *out);
    return FLASHFUSE_SUCCESS;
  });
}

} // extern "C"
