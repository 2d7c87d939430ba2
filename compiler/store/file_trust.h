// Who may write what the caches trust, checked the way OpenSSH's StrictModes checks key
// files: a cache directory, a record in it and a secret file are refused when a user
// other than this one (or root) could have written them.
//
//   - a secret file (the cache secret, the Redis password): a regular file owned by this
//     user and readable by nobody else (mode & 077 == 0);
//   - the disk cache directory: owned by this user, not writable by group or others, and
//     every directory above it owned by this user or root and, if group- or
//     world-writable, sticky (like /tmp, where others cannot rename or remove our
//     entries); a symlink on the path must belong to this user or root;
//   - a record file: owned by this user or root, not writable by group or others.
// Every refusal is PermissionDenied naming the path, its owner and mode, and what was
// expected.
#ifndef GRAPHJIT_COMPILER_STORE_FILE_TRUST_H_
#define GRAPHJIT_COMPILER_STORE_FILE_TRUST_H_

#include <sys/stat.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphjit::compiler {

// `0640`-style text of the permission bits of `mode`.
std::string ModeText(mode_t mode);

// The contents of the secret file `path` (at most `max_bytes`), after checking it as
// above; `what` names it in messages ("cache secret file").
absl::StatusOr<std::string> ReadSecretFile(const std::string& path, const char* what,
                                           size_t max_bytes = 4096);

// Creates `dir` (and missing parents) with mode 0700, then checks it as above.
absl::Status MakePrivateDirectory(const std::string& dir);
absl::Status CheckPrivateDirectory(const std::string& dir);

// `st` of a record file at `path` (fstat of the open file, so the file checked is the
// one read).
absl::Status CheckRecordFile(const std::string& path, const struct stat& st);

// Whole-file I/O on a descriptor, interrupted calls retried: up to `size` bytes read (fewer
// at the end of the file or on an error), and whether all of `bytes` were written (errno
// says why not).
std::string ReadUpTo(int fd, size_t size);
bool WriteAll(int fd, absl::string_view bytes);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_FILE_TRUST_H_
