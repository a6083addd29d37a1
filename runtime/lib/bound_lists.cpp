#include "bound_lists.h"

#include "error.h"
#include "launch.h"

#include <charconv>
#include <set>

namespace flashfuse {

namespace {

bool parseLong(const std::string &text, long long lo, long long hi,
               long long &out, int base = 10) {
  long long v = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo ||
      v > hi)
    return false;
  out = v;
  return true;
}

const ParamSpec *findParam(const KernelSpec &k, const std::string &name) {
  for (const ParamSpec &p : k.params)
    if (p.name == name)
      return &p;
  return nullptr;
}


} // namespace

std::string parseBoundLine(const std::vector<std::string> &t, BoundParam &out) {
  const char *expected = "expected 'bound NAME VALUE' or 'bound NAME file FILE "
                         "offset BYTES i32 COUNT crc32 HEX'";
  out = BoundParam{};
  if (t.size() == 3) {
    out.name = t[1];
    if (!parseLong(t[2], -(1LL << 62), 1LL << 62, out.value))
      return concat("bad value '", t[2], "' for bound '", t[1],
                    "' (expected an integer)");
    return "";
  }
  if (t.size() != 10 || t[2] != "file" || t[4] != "offset" || t[8] != "crc32")
    return expected;
  out.name = t[1];
  out.buffer = true;
  out.file = t[3];
  // A plain name: the lists lie in the artifact directory, nowhere else.
  if (out.file.empty() || out.file.find('/') != std::string::npos ||
      out.file == "." || out.file == "..")
    return concat("bound '", t[1], "': file '", out.file,
                  "' must be a file name in the artifact directory");
  if (!parseLong(t[5], 0, 1LL << 40, out.offset) || out.offset % 16 != 0)
    return concat("bound '", t[1], "': bad offset '", t[5],
                  "' (a multiple of 16 bytes: the kernels copy 16 at a time)");
  if (t[6] != "i32")
    return concat("bound '", t[1], "': dtype '", t[6],
                  "' is not supported (the lists are i32)");
  if (!parseLong(t[7], 1, 1LL << 36, out.count))
    return concat("bound '", t[1], "': bad element count '", t[7], "'");
  long long crc = 0;
  if (t[9].size() != 8 || !parseLong(t[9], 0, 0xffffffffLL, crc, 16))
    return concat("bound '", t[1], "': bad crc32 '", t[9],
                  "' (expected 8 hex digits)");
  out.crc32 = static_cast<uint32_t>(crc);
  return "";
}

std::string parseBoundForLine(const std::vector<std::string> &t,
                              std::vector<BoundSize> &out) {
  if (t.size() < 3 || t.size() % 2 != 1)
    return "expected 'bound_for NAME VALUE [NAME VALUE ...]'";
  for (size_t i = 1; i < t.size(); i += 2) {
    BoundSize s;
    s.name = t[i];
    if (!parseLong(t[i + 1], -kMaxI32 - 1, kMaxI32, s.value))
      return concat("bad value '", t[i + 1], "' for '", t[i],
                    "' in bound_for (expected an i32)");
    for (const BoundSize &seen : out)
      if (seen.name == s.name)
        return concat("'", s.name, "' given twice in bound_for");
    out.push_back(s);
  }
  return "";
}

std::string boundProblem(const KernelSpec &k) {
  if (k.bound.empty() != k.boundFor.empty())
    return "'bound' and 'bound_for' come together (the sizes are what the "
           "bound values hold for)";
  std::set<std::string> names;
  for (const BoundParam &b : k.bound) {
    if (!names.insert(b.name).second)
      return concat("param '", b.name, "' is bound twice");
    const ParamSpec *p = findParam(k, b.name);
    if (!p)
      return concat("bound '", b.name, "' is not one of its params");
    // A buffer binds a memref, or an i64 that takes its device address (a
    // tile order); a value binds an i32 or i64.
    bool fits = b.buffer ? p->type == FLASHFUSE_PARAM_MEMREF ||
                               p->type == FLASHFUSE_PARAM_I64
                         : p->type == FLASHFUSE_PARAM_I32 ||
                               p->type == FLASHFUSE_PARAM_I64;
    if (!fits)
      return concat("bound '", b.name, "' is ",
                    b.buffer ? "a buffer" : "a value",
                    " but the param is not a ",
                    b.buffer ? "memref or i64" : "i32 or i64");
    if (p->type == FLASHFUSE_PARAM_I32 &&
        (b.value < -kMaxI32 - 1 || b.value > kMaxI32))
      return concat("bound '", b.name, "' = ", b.value, " does not fit in i32");
  }
  for (const BoundSize &s : k.boundFor) {
    const ParamSpec *p = findParam(k, s.name);
    if (!p || p->type != FLASHFUSE_PARAM_I32)
      return concat("bound_for '", s.name, "' is not an i32 param");
    if (names.count(s.name))
      return concat("bound_for '", s.name, "' is itself bound");
  }
  for (const char *length : {"seq_q", "seq_k"}) {
    bool found = k.boundFor.empty();
    for (const BoundSize &s : k.boundFor)
      found = found || s.name == length;
    if (!found)
      return concat("bound_for lacks '", length, "'");
  }
  return "";
}

uint32_t crc32(const unsigned char *data, size_t size) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

flashfuse_status readBoundLists(Manifest &m, const std::string &source) {
  for (const KernelSpec &k : m.kernels)
    for (const BoundParam &b : k.bound) {
      if (!b.buffer)
        continue;
      auto bad = [&](const std::string &what) {
        return fail(FLASHFUSE_ERROR_MANIFEST,
                    concat(source, ": kernel '", k.name, "': bound '", b.name,
                           "': ", what));
      };
      std::string path = m.dir + "/" + b.file;
      auto it = m.listFiles.find(b.file);
      if (it == m.listFiles.end()) {
        std::string bytes;
        if (!readWholeFile(path, bytes))
          return bad(concat("cannot read its list file ", path,
                            " (flashfuse-compile writes it next to "
                            "manifest.txt; copy the whole artifact directory)"));
        it = m.listFiles.emplace(b.file, std::move(bytes)).first;
      }
      const std::string &bytes = it->second;
      long long end = b.offset + 4 * b.count;
      if (end > static_cast<long long>(bytes.size()))
        return bad(concat(path, " holds ", bytes.size(),
                          " bytes, but the list is bytes [", b.offset, ", ",
                          end, ") (a truncated file?)"));
      uint32_t crc = crc32(
          reinterpret_cast<const unsigned char *>(bytes.data()) + b.offset,
          static_cast<size_t>(4 * b.count));
      if (crc != b.crc32)
        return bad(concat("the bytes [", b.offset, ", ", end, ") of ", path,
                          " do not match the manifest's crc32 (", hexAddress(crc),
                          " read); the file is corrupt or from another "
                          "compile"));
    }
  return FLASHFUSE_SUCCESS;
}

flashfuse_status withBoundArgs(const KernelSpec &k, const flashfuse_arg *args,
                               int numArgs,
                               const std::map<std::string, cu::CUdeviceptr> &fileBase,
                               std::vector<flashfuse_arg> &out) {
  out.assign(args, args + (numArgs > 0 && args ? numArgs : 0));
  if (k.bound.empty())
    return FLASHFUSE_SUCCESS;
  auto bad = [&](const std::string &what) {
    return fail(FLASHFUSE_ERROR_INVALID_ARGUMENT,
                concat("launching '", k.name, "': ", what));
  };
  std::string given, missing;
  for (const BoundParam &b : k.bound)
    (findArg(out.data(), static_cast<int>(out.size()), b.name) ? given
                                                                  : missing) += " " + b.name;
  // The caller's own lists: the artifact's are not used, nor checked
  // against the launch sizes (KERNEL_ABI.md "Block-sparse").
  if (missing.empty())
    return FLASHFUSE_SUCCESS;
  if (!given.empty())
    return bad(concat("the artifact binds its block-sparse list params as a "
                      "set: pass all of them or none; given:",
                      given, "; not given:", missing));
  for (const BoundSize &s : k.boundFor) {
    const flashfuse_arg *a =
        findArg(out.data(), static_cast<int>(out.size()), s.name);
    if (!a || a->type != FLASHFUSE_PARAM_I32)
      return bad(concat("the artifact's lists hold for ", s.name, " = ",
                        s.value, "; pass it as an i32 argument"));
    if (a->i != s.value) {
      std::string sizes;
      for (const BoundSize &each : k.boundFor)
        sizes += concat(sizes.empty() ? "" : ", ", each.name, " = ",
                        each.value);
      return bad(concat(s.name, " = ", a->i, ", but the block-sparse lists "
                        "the artifact carries were derived for ", sizes,
                        "; compile the model for these sizes, or pass lists "
                        "of your own"));
    }
  }
  for (const BoundParam &b : k.bound) {
    flashfuse_arg a{};
    a.name = b.name.c_str();
    if (b.buffer) {
      auto base = fileBase.find(b.file);
      if (base == fileBase.end())
        return fail(FLASHFUSE_ERROR_INTERNAL,
                    concat("launching '", k.name, "': list file ", b.file,
                           " is not on the GPU"));
      cu::CUdeviceptr address = base->second + b.offset;
      const ParamSpec *p = findParam(k, b.name);
      if (p && p->type == FLASHFUSE_PARAM_I64) {
        a.type = FLASHFUSE_PARAM_I64;
        a.i = static_cast<long long>(address);
      } else {
        a.type = FLASHFUSE_PARAM_MEMREF;
        a.ptr = reinterpret_cast<const void *>(static_cast<uintptr_t>(address));
        a.numel = b.count;
      }
    } else {
      const ParamSpec *p = findParam(k, b.name);
      a.type = p ? p->type : FLASHFUSE_PARAM_I64;
      a.i = b.value;
    }
    out.push_back(a);
  }
  return FLASHFUSE_SUCCESS;
}

} // namespace flashfuse
