#include "prepared_launch.h"

namespace flashfuse {

namespace {

constexpr int kPlaceholderShift = 40;

} // namespace

const void *placeholderAddress(int buffer) {
  return reinterpret_cast<const void *>(
      (static_cast<uintptr_t>(buffer) + 1) << kPlaceholderShift);
}

flashfuse_status PreparedLaunch::prepare(flashfuse_kernel &kernel,
                                         const flashfuse_arg *args,
                                         int numArgs, unsigned clusterX) {
  const KernelSpec &spec = *kernel.spec;
  auto refuse = [&](const std::string &why) {
    return fail(FLASHFUSE_ERROR_UNSUPPORTED,
                concat("kernel '", spec.name, "' cannot be prepared: ", why));
  };
  if (!spec.bound.empty())
    return refuse("the artifact binds some of its params");
  for (const ParamSpec &p : spec.params)
    if (p.type == FLASHFUSE_PARAM_TENSORMAP)
      return refuse("it takes a tensor map");
  std::vector<ParamSlot> slots;
  if (auto s = bindParams(spec, args, numArgs, /*strict=*/false, slots);
      s != FLASHFUSE_SUCCESS)
    return s;
  if (auto s = gridSize(spec, args, numArgs, *kernel.artifact->context, grid_);
      s != FLASHFUSE_SUCCESS)
    return s;
  // What launchBound would refuse at every launch, refused once here.
  if (clusterX > 1 && !kernel.artifact->context->api->cuLaunchKernelEx)
    return refuse(concat("it is launched in clusters of ", clusterX,
                         " blocks, which needs cuLaunchKernelEx, and this "
                         "CUDA driver does not have it"));
  if (clusterX > 1 && grid_[0] % clusterX != 0)
    return fail(FLASHFUSE_ERROR_INTERNAL,
                concat("preparing kernel '", spec.name, "': clusters of ",
                       clusterX, " blocks do not divide grid.x = ", grid_[0]));
  // A memref param takes five slots, its allocated and aligned pointers
  // first (bindParams); every other param one.
  std::vector<Relocation> relocations;
  size_t slot = 0;
  for (const ParamSpec &p : spec.params) {
    if (p.type != FLASHFUSE_PARAM_MEMREF) {
      ++slot;
      continue;
    }
    auto address = reinterpret_cast<uintptr_t>(slots[slot].ptr);
    auto buffer = static_cast<int64_t>(address >> kPlaceholderShift) - 1;
    if (buffer < 0 || buffer >= kMaxPreparedBuffers)
      return fail(FLASHFUSE_ERROR_INTERNAL,
                  concat("preparing kernel '", spec.name, "': buffer '",
                         p.name, "' at ", hexAddress(address),
                         " is not in a placeholder buffer"));
    auto base = reinterpret_cast<uintptr_t>(
        placeholderAddress(static_cast<int>(buffer)));
    int64_t offset = static_cast<int64_t>(address - base);
    for (size_t field : {slot, slot + 1})
      relocations.push_back({field, static_cast<int>(buffer), offset});
    slot += 5;
  }
  kernel_ = &kernel;
  clusterX_ = clusterX > 1 ? clusterX : 1;
  slots_ = std::move(slots);
  relocations_ = std::move(relocations);
  return FLASHFUSE_SUCCESS;
}

flashfuse_status PreparedLaunch::launch(const void *const *addresses,
                                        void *stream) const {
  // A copy per launch: a plan may be launched from several threads at once.
  std::vector<ParamSlot> slots = slots_;
  for (const Relocation &r : relocations_)
    slots[r.slot].ptr = static_cast<const char *>(addresses[r.buffer]) +
                        r.offset;
  std::vector<void *> params(slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    params[i] = &slots[i];
  return launchBound(*kernel_, grid_, params.data(), stream, clusterX_);
}

} // namespace flashfuse
