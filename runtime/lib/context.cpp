// Contexts: binding the runtime to a GPU and its CUDA context.
#include "handles.h"

using namespace flashfuse;

namespace {

flashfuse_status queryDevice(flashfuse_context &c) {
  const DriverApi &api = *c.api;
  struct Query {
    int attribute;
    int *out;
  } queries[] = {
      {cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &c.ccMajor},
      {cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &c.ccMinor},
      {cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &c.smCount},
      {cu::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &c.maxThreadsPerBlock},
      {cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &c.maxSmemDefault},
      {cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &c.maxSmemOptin},
      {cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &c.maxGrid[0]},
      {cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &c.maxGrid[1]},
      {cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &c.maxGrid[2]},
  };
  for (const Query &q : queries) {
    cu::CUresult r = api.cuDeviceGetAttribute(q.out, q.attribute, c.device);
    if (r != cu::CUDA_SUCCESS)
      return checkCu(api, r,
                     concat("querying attribute ", q.attribute,
                            " of CUDA device ", c.ordinal));
  }
  return FLASHFUSE_SUCCESS;
}

// Finds which ordinal a CUdevice handle is (they are equal on every driver
// we know of, but the API does not promise it).
int ordinalOf(const DriverApi &api, cu::CUdevice device) {
  int count = 0;
  if (api.cuDeviceGetCount(&count) != cu::CUDA_SUCCESS)
    return static_cast<int>(device);
  for (int i = 0; i < count; ++i) {
    cu::CUdevice d = 0;
    if (api.cuDeviceGet(&d, i) == cu::CUDA_SUCCESS && d == device)
      return i;
  }
  return static_cast<int>(device);
}

flashfuse_status createContext(int32_t device, flashfuse_context **out) {
  if (!out)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "output is NULL");
  if (device < -1)
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("device ordinal ", device, " is negative"));
  const DriverApi *api = nullptr;
  if (auto s = loadDriver(&api); s != FLASHFUSE_SUCCESS)
    return s;
  auto c = std::make_unique<flashfuse_context>();
  c->api = api;

  int count = 0;
  if (auto s = checkCu(*api, api->cuDeviceGetCount(&count),
                       "counting CUDA devices");
      s != FLASHFUSE_SUCCESS)
    return s;
  if (count == 0)
    return fail(FLASHFUSE_ERROR_NO_DEVICE, "no CUDA device is visible");

  // Prefer the caller's current context: PyTorch (and any CUDA runtime
  // program) works in the device's primary context, and kernels must be
  // loaded into the context that owns the streams they are launched on.
  cu::CUcontext current = nullptr;
  if (auto s = checkCu(*api, api->cuCtxGetCurrent(&current),
                       "querying the current CUDA context");
      s != FLASHFUSE_SUCCESS)
    return s;
  if (current) {
    cu::CUdevice currentDevice = 0;
    if (auto s = checkCu(*api, api->cuCtxGetDevice(&currentDevice),
                         "querying the current context's device");
        s != FLASHFUSE_SUCCESS)
      return s;
    int currentOrdinal = ordinalOf(*api, currentDevice);
    if (device == -1 || device == currentOrdinal) {
      c->ctx = current;
      c->device = currentDevice;
      c->ordinal = currentOrdinal;
    }
  }
  if (!c->ctx) {
    int ordinal = device == -1 ? 0 : device;
    if (ordinal >= count)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                  concat("CUDA device ", ordinal, " does not exist (", count,
                         " visible)"));
    if (auto s = checkCu(*api, api->cuDeviceGet(&c->device, ordinal),
                         concat("getting CUDA device ", ordinal));
        s != FLASHFUSE_SUCCESS)
      return s;
    if (auto s = checkCu(*api, api->cuDevicePrimaryCtxRetain(&c->ctx, c->device),
                         concat("retaining the primary context of device ",
                                ordinal));
        s != FLASHFUSE_SUCCESS)
      return s;
    c->ordinal = ordinal;
    c->ownsPrimary = true;
  }
  if (auto s = queryDevice(*c); s != FLASHFUSE_SUCCESS) {
    if (c->ownsPrimary)
      api->cuDevicePrimaryCtxRelease(c->device);
    return s;
  }
  *out = c.release();
  return FLASHFUSE_SUCCESS;
}

} // namespace

extern "C" {

flashfuse_status flashfuse_context_create(int32_t device,
                                          flashfuse_context **out) {
  return guarded([&] { return createContext(device, out); });
}

void flashfuse_context_destroy(flashfuse_context *c) {
  if (!c)
    return;
  {
    ScopedContext scope(*c);
    if (scope.enter() == FLASHFUSE_SUCCESS) {
      for (auto &entry : c->artifacts) {
        if (entry.second->module)
          c->api->cuModuleUnload(entry.second->module);
        for (auto &list : entry.second->listBuffers)
          c->api->cuMemFree(list.second);
      }
      c->splitArrivals.release(*c->api);
    }
  }
  if (c->ownsPrimary)
    c->api->cuDevicePrimaryCtxRelease(c->device);
  delete c;
}

flashfuse_status flashfuse_context_device(const flashfuse_context *c,
                                          int32_t *device, int32_t *cc_major,
                                          int32_t *cc_minor,
                                          int32_t *sm_count) {
  return guarded([&] {
    if (!c)
      return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT, "context is NULL");
    if (device)
      *device = c->ordinal;
    if (cc_major)
      *cc_major = c->ccMajor;
    if (cc_minor)
      *cc_minor = c->ccMinor;
    if (sm_count)
      *sm_count = c->smCount;
    return FLASHFUSE_SUCCESS;
  });
}

} // extern "C"
