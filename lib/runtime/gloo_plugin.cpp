//===- gloo_plugin.cpp - dynrt_gloo_communicator_create -------------------===//
//
// libdynrt's gloo communicator lives in a plugin, libdynrt_gloo.so
// (lib/runtime/gloo), which links gloo; libdynrt loads it when the first one
// is made, as it loads NCCL, so an app that never makes one needs neither.
// The plugin is looked for at $DYNRT_GLOO_PLUGIN, then beside the library
// this code is in (libdynrt.so, or the Python binding), then on the
// library path.
//
//===----------------------------------------------------------------------===//
#include "status.h"

#include <dlfcn.h>

#include <string>

using dynrt::makeStatus;

namespace {
using CreateFn = int (*)(const char *, int, int, const char *, const char *,
                         int, dynrt_communicator_t **, char *, size_t);
using FreeFn = void (*)(dynrt_communicator_t *);

struct Plugin {
  CreateFn create = nullptr;
  FreeFn free = nullptr;
  std::string error;
};

std::string besideThisLibrary() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&dynrt_gloo_communicator_create),
              &info) ||
      !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos
             ? ""
             : path.substr(0, slash + 1) + "libdynrt_gloo.so";
}

const Plugin &plugin() {
  static const Plugin p = [] {
    Plugin p;
    std::string tried;
    void *lib = nullptr;
    const char *env = getenv("DYNRT_GLOO_PLUGIN");
    for (std::string path : {std::string(env ? env : ""), besideThisLibrary(),
                             std::string("libdynrt_gloo.so")}) {
      if (path.empty())
        continue;
      lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib)
        break;
      const char *why = dlerror();
      tried +=
          (tried.empty() ? "" : "; ") + path + ": " + (why ? why : "not found");
    }
    if (!lib) {
      p.error = "cannot load the gloo plugin libdynrt_gloo.so (" + tried +
                "): build //lib/runtime/gloo:libdynrt_gloo.so and set "
                "DYNRT_GLOO_PLUGIN or put it beside libdynrt.so; it needs "
                "gloo (Debian's libgloo0)";
      return p;
    }
    p.create =
        reinterpret_cast<CreateFn>(dlsym(lib, "dynrt_gloo_plugin_create"));
    p.free = reinterpret_cast<FreeFn>(dlsym(lib, "dynrt_gloo_plugin_free"));
    if (!p.create || !p.free)
      p.error = "the gloo plugin lacks dynrt_gloo_plugin_create/free: not a "
                "libdynrt_gloo.so of this libdynrt";
    return p;
  }();
  return p;
}
} // namespace

extern "C" dynrt_status_t *
dynrt_gloo_communicator_create(const char *store, int size, int rank,
                               const char *group, const char *hostname,
                               int timeout_ms, dynrt_communicator_t **out) {
  if (!store || !group || !out)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_gloo_communicator_create: null argument");
  *out = nullptr;
  if (size < 1 || rank < 0 || rank >= size)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_gloo_communicator_create: rank " +
                          std::to_string(rank) + " of " + std::to_string(size) +
                          " ranks");
  const Plugin &p = plugin();
  if (!p.error.empty())
    return makeStatus(DYNRT_UNIMPLEMENTED, p.error);
  char error[1024] = "";
  if (p.create(store, size, rank, group, hostname, timeout_ms, out, error,
               sizeof(error)) != 0) {
    bool timedOut = std::string(error).find("imeout") != std::string::npos ||
                    std::string(error).find("imed out") != std::string::npos;
    return makeStatus(timedOut ? DYNRT_DEADLINE_EXCEEDED : DYNRT_INTERNAL,
                      error);
  }
  return nullptr;
}

extern "C" void dynrt_gloo_communicator_free(dynrt_communicator_t *c) {
  if (c && plugin().free)
    plugin().free(c);
}
