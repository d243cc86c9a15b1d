//===- elf_check.h - validating a model .so before dlopen -------*- C++ -*-===//
//
// glibc's dlopen trusts an ELF file's headers: a truncated .so whose load
// segments reach past the end of the file is mapped anyway and the loader dies
// of SIGBUS when it touches them. The runtime checks the headers first.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_ELF_CHECK_H
#define DYNRT_ELF_CHECK_H

#include <string>

namespace dynrt {
/// Checks that `path` is a shared object for this machine whose headers and
/// segments lie inside the file. On failure returns false and sets `error` to
/// what is wrong (without the path).
bool checkSharedObject(const std::string &path, std::string &error);

/// Reads the section `name` of the ELF file at `path` (checked first) into
/// `contents` without loading it; an absent section leaves it empty. False,
/// with `error` set, if the section table is corrupted.
bool readSection(const std::string &path, const std::string &name,
                 std::string &contents, std::string &error);
} // namespace dynrt

#endif // DYNRT_ELF_CHECK_H
