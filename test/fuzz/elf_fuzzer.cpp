//===- elf_fuzzer.cpp - the ELF checks run before dlopen ------------------===//
//
// The checks read a path; the input is written to a memfd and read through
// /proc/self/fd, so the code under test is the code a load runs.
//
//===----------------------------------------------------------------------===//
#include "elf_check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = memfd_create("elf_fuzzer", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0 ||
      pwrite(fd, data, size, 0) != ssize_t(size))
    __builtin_trap();
  std::string path = "/proc/self/fd/" + std::to_string(fd), error, contents;
  if (!dynrt::checkSharedObject(path, error) && error.empty())
    __builtin_trap(); // a refusal must say why
  error.clear();
  if (!dynrt::readSection(path, ".dynoc.cpu", contents, error) && error.empty())
    __builtin_trap();
  return 0;
}
