#include "compiler/store/file_trust.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphjit::compiler {
namespace {

namespace fs = std::filesystem;

bool TrustedOwner(uid_t uid) { return uid == ::geteuid() || uid == 0; }

std::string Owner(const struct stat& st) {
  return absl::StrCat("owner uid ", st.st_uid, ", mode ", ModeText(st.st_mode));
}

absl::Status Refuse(absl::string_view what, const std::string& path, const struct stat& st,
                    absl::string_view expected) {
  return absl::PermissionDeniedError(absl::StrCat(what, " ", path, " (", Owner(st), ") ", expected,
                                                  "; refused, as OpenSSH refuses "
                                                  "key files others can write"));
}

// Every directory on the way to `path` (lexically absolute), then `path` itself.
std::vector<fs::path> Prefixes(const fs::path& path) {
  std::vector<fs::path> out;
  fs::path prefix;
  for (const fs::path& part : path) {
    prefix /= part;
    out.push_back(prefix);
  }
  return out;
}

// The ancestors of `dir` (not `dir`): trusted owners; writable by others only if sticky;
// symlinks only of trusted owners.
absl::Status CheckAncestors(const fs::path& dir) {
  std::vector<fs::path> prefixes = Prefixes(dir);
  prefixes.pop_back();
  for (const fs::path& p : prefixes) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot check ", p.string(), ": ", std::strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) {
      if (!TrustedOwner(st.st_uid)) {
        return Refuse("symlink", p.string(), st, "on the cache's path belongs to another user");
      }
      continue;
    }
    if (!TrustedOwner(st.st_uid)) {
      return Refuse("directory", p.string(), st,
                    "above the cache belongs to another user (expected this user or root)");
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
      return Refuse("directory", p.string(), st,
                    "above the cache is writable by group or others and not sticky");
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string ModeText(mode_t mode) {
  return absl::StrFormat("%04o", static_cast<unsigned>(mode & 07777));
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path, const char* what,
                                           size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", path, " cannot be read: ", std::strerror(errno)));
  }
  struct stat st;
  absl::Status status;
  if (::fstat(fd, &st) != 0) {
    status = absl::InvalidArgumentError(absl::StrCat("cannot stat ", what, " ", path));
  } else if (!S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat(what, " ", path, " is not a regular file"));
  } else if (st.st_uid != ::geteuid()) {
    status = Refuse(what, path, st,
                    "is not owned by this user (uid " + std::to_string(::geteuid()) + ")");
  } else if ((st.st_mode & 077) != 0) {
    status = Refuse(what, path, st, "is readable or writable by group or others (chmod 600 it)");
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    status = absl::InvalidArgumentError(
        absl::StrCat(what, " ", path, " has ", st.st_size, " bytes, more than ", max_bytes));
  }
  std::string bytes;
  if (status.ok()) bytes = ReadUpTo(fd, static_cast<size_t>(st.st_size));
  ::close(fd);
  if (!status.ok()) return status;
  return bytes;
}

std::string ReadUpTo(int fd, size_t size) {
  std::string bytes(size, '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

bool WriteAll(int fd, absl::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

absl::Status MakePrivateDirectory(const std::string& dir) {
  const fs::path abs = fs::absolute(fs::path(dir)).lexically_normal();
  for (const fs::path& p : Prefixes(abs)) {
    if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(absl::StrCat("cache directory ", dir,
                                                      " cannot be created (", p.string(),
                                                      "): ", std::strerror(errno)));
    }
  }
  return CheckPrivateDirectory(dir);
}

absl::Status CheckPrivateDirectory(const std::string& dir) {
  const fs::path abs = fs::absolute(fs::path(dir)).lexically_normal();
  if (absl::Status s = CheckAncestors(abs); !s.ok()) return s;
  struct stat lst;
  if (::lstat(abs.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode) && !TrustedOwner(lst.st_uid)) {
    return Refuse("symlink", abs.string(), lst, "(the cache directory) belongs to another user");
  }
  // The directory a symlink leads to, and the path to it, must pass the same checks.
  std::error_code ec;
  const fs::path real = fs::canonical(abs, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cache directory ", dir, " cannot be resolved: ", ec.message()));
  }
  if (real != abs) {
    if (absl::Status s = CheckAncestors(real); !s.ok()) return s;
  }
  struct stat st;
  if (::stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::PermissionDeniedError(
        absl::StrCat("cache directory ", dir, " is not a directory"));
  }
  if (st.st_uid != ::geteuid()) {
    return Refuse("cache directory", dir, st,
                  absl::StrCat("is not owned by this user (uid ", ::geteuid(), ")"));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Refuse("cache directory", dir, st,
                  "is writable by group or others (expected 0700; chmod go-w it)");
  }
  return absl::OkStatus();
}

absl::Status CheckRecordFile(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) {
    return absl::PermissionDeniedError(absl::StrCat("record ", path, " is not a regular file"));
  }
  if (!TrustedOwner(st.st_uid)) {
    return Refuse("record", path, st, "belongs to another user");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Refuse("record", path, st, "is writable by group or others");
  }
  return absl::OkStatus();
}

}  // namespace graphjit::compiler
