// Params an artifact binds (docs/KERNEL_ABI.md "Block-sparse": the lists
// flashfuse-compile derived from a mask_mod at compile time): their
// manifest lines, their files, and filling them into a launch.
#ifndef FLASHFUSE_RUNTIME_BOUND_LISTS_H
#define FLASHFUSE_RUNTIME_BOUND_LISTS_H

#include "cuda_driver_types.h"
#include "manifest.h"

#include <map>
#include <string>
#include <vector>

namespace flashfuse {

// Parses `bound NAME VALUE` or `bound NAME file FILE offset BYTES i32 COUNT
// crc32 HEX`; "" or what is wrong with it.
std::string parseBoundLine(const std::vector<std::string> &tokens,
                           BoundParam &out);

// Parses `bound_for NAME VALUE ...`; "" or what is wrong with it.
std::string parseBoundForLine(const std::vector<std::string> &tokens,
                              std::vector<BoundSize> &out);

// What is wrong with a kernel's bound and bound_for entries (each names a
// param of its type, once; bound_for comes with bound, names i32 params
// and has seq_q and seq_k), or "".
std::string boundProblem(const KernelSpec &kernel);

// Reads the files the manifest's buffers lie in (from m.dir) into
// m.listFiles, checking that each buffer is in its file and its CRC-32;
// `source` names the manifest in messages.
flashfuse_status readBoundLists(Manifest &m, const std::string &source);

// The CRC-32 (IEEE 802.3, zlib's) of `size` bytes.
uint32_t crc32(const unsigned char *data, size_t size);

// The arguments of a launch of `kernel`: `args` alone when the kernel binds
// nothing or the caller passes every bound param (its own lists win), or
// `args` plus the bound values when it passes none of them, after checking
// the launch's bound_for sizes. A caller passing some but not all is an
// error. `fileBase` holds the device address of each list file.
flashfuse_status withBoundArgs(const KernelSpec &kernel,
                               const flashfuse_arg *args, int numArgs,
                               const std::map<std::string, cu::CUdeviceptr> &fileBase,
                               std::vector<flashfuse_arg> &out);

} // namespace flashfuse

#endif // FLASHFUSE_RUNTIME_BOUND_LISTS_H
