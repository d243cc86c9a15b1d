//===- elf_check.cpp - validating a model .so before dlopen ---------------===//
#include "elf_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace dynrt {
namespace {
#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
#else
#error "libdynrt: unknown host machine"
#endif

bool readAt(int fd, void *buf, size_t len, off_t at) {
  auto *p = static_cast<char *>(buf);
  while (len) {
    ssize_t n = pread(fd, p, len, at);
    if (n <= 0)
      return false;
    p += n, len -= size_t(n), at += n;
  }
  return true;
}

bool fits(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}
} // namespace

bool checkSharedObject(const std::string &path, std::string &error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    error = std::strerror(errno);
    return false;
  }
  uint64_t size = uint64_t(st.st_size);
  Elf64_Ehdr eh;
  if (size < sizeof(eh) || !readAt(fd, &eh, sizeof(eh), 0) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    error = "not an ELF file";
    return false;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != kMachine) {
    error = "an ELF file for another machine";
    return false;
  }
  if (eh.e_type != ET_DYN) {
    error = "not a shared object";
    return false;
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) ||
      !fits(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr), size)) {
    error = "corrupted: its program headers lie outside the file (truncated?)";
    return false;
  }
  if (eh.e_shoff &&
      !fits(eh.e_shoff, uint64_t(eh.e_shnum) * eh.e_shentsize, size)) {
    error = "corrupted: its section headers lie outside the file (truncated?)";
    return false;
  }
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!readAt(fd, ph.data(), ph.size() * sizeof(Elf64_Phdr),
              off_t(eh.e_phoff))) {
    error = "cannot read its program headers";
    return false;
  }
  for (const Elf64_Phdr &p : ph)
    if ((p.p_type == PT_LOAD || p.p_type == PT_DYNAMIC) &&
        !fits(p.p_offset, p.p_filesz, size)) {
      error = "corrupted: a segment lies outside the file (truncated?)";
      return false;
    }
  return true;
}

} // namespace dynrt
