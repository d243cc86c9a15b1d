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

/// Reads `count` entries of a header table at `offset`.
template <typename T>
bool readTable(int fd, uint64_t offset, size_t count, std::vector<T> &out) {
  out.resize(count);
  return readAt(fd, out.data(), count * sizeof(T), off_t(offset));
}

bool fits(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}

/// A file open for reading, closed when it goes out of scope.
struct ReadOnlyFile {
  int fd = -1;
  uint64_t size = 0;
  ~ReadOnlyFile() {
    if (fd >= 0)
      close(fd);
  }
  bool open(const std::string &path, std::string &error) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      error = std::strerror(errno);
      return false;
    }
    size = uint64_t(st.st_size);
    return true;
  }
};
} // namespace

bool checkSharedObject(const std::string &path, std::string &error) {
  ReadOnlyFile file;
  if (!file.open(path, error))
    return false;
  int fd = file.fd;
  uint64_t size = file.size;
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
  std::vector<Elf64_Phdr> ph;
  if (!readTable(fd, eh.e_phoff, eh.e_phnum, ph)) {
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

bool readSection(const std::string &path, const std::string &name,
                 std::string &contents, std::string &error) {
  contents.clear();
  ReadOnlyFile file;
  if (!file.open(path, error))
    return false;
  int fd = file.fd;
  uint64_t size = file.size;
  Elf64_Ehdr eh;
  if (!readAt(fd, &eh, sizeof(eh), 0)) {
    error = "cannot read its ELF header";
    return false;
  }
  if (!eh.e_shoff || eh.e_shnum == 0)
    return true; // no section table: no section
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
      !fits(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr), size)) {
    error = "corrupted: its section table is malformed";
    return false;
  }
  std::vector<Elf64_Shdr> sh;
  if (!readTable(fd, eh.e_shoff, eh.e_shnum, sh)) {
    error = "cannot read its section headers";
    return false;
  }
  const Elf64_Shdr &names = sh[eh.e_shstrndx];
  if (!fits(names.sh_offset, names.sh_size, size) ||
      names.sh_size > (1u << 24)) {
    error = "corrupted: its section names lie outside the file";
    return false;
  }
  std::string table(names.sh_size, '\0');
  if (!readAt(fd, table.data(), table.size(), off_t(names.sh_offset))) {
    error = "cannot read its section names";
    return false;
  }
  for (const Elf64_Shdr &s : sh) {
    if (s.sh_name >= table.size() || table.c_str() + s.sh_name != name)
      continue;
    if (s.sh_type == SHT_NOBITS || !fits(s.sh_offset, s.sh_size, size) ||
        s.sh_size > (1u << 20)) {
      error = "corrupted: section '" + name + "' lies outside the file";
      return false;
    }
    contents.assign(s.sh_size, '\0');
    if (!readAt(fd, contents.data(), contents.size(), off_t(s.sh_offset))) {
      error = "cannot read section '" + name + "'";
      return false;
    }
    contents.resize(std::strlen(contents.c_str())); // a C string in the file
    return true;
  }
  return true;
}

} // namespace dynrt
