// Whole-file reads with a size bound, and writes through a temporary file, fsync and rename.
#include "io/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <system_error>

namespace octet {
namespace {

static_assert(sizeof(size_t) >= 8, "ReadFile's 16 GiB bound assumes a 64-bit size_t");

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

// Closes a descriptor on scope exit unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now and reports close()'s errno (0 on success); buffered write errors can surface here.
  int Close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

std::string SizeText(uint64_t bytes) {
  return fmt::format("{} bytes ({:.1f} GiB)", bytes, static_cast<double>(bytes) / double(uint64_t{1} << 30));
}

// A name no other writer of this process or another is using right now (O_EXCL settles any clash).
std::string TemporaryName(const std::filesystem::path& target) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t n = counter.fetch_add(1, std::memory_order_relaxed);
  const auto ticks = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::string leaf = fmt::format(".{}.tmp-{}-{}-{:x}", target.filename().string(), ::getpid(), n,
                                       ticks & 0xffffffffu);
  return (target.parent_path() / leaf).string();
}

// Best effort: makes the rename durable. Some filesystems refuse fsync on a directory; the new file is in place
// either way, so a failure here is not reported.
void SyncDirectory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("failed to write file '{}': writing the temporary file failed after {} of {} bytes: {}", path,
                     done, bytes.size(), ErrnoText(errno));
    }
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

Result<std::string> ReadFile(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return NotFound("failed to read file '{}': {}", path, ErrnoText(err));
    return IoError("failed to read file '{}': cannot open: {}", path, ErrnoText(err));
  }
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return IoError("failed to read file '{}': cannot stat: {}", path, ErrnoText(errno));
  if (S_ISDIR(st.st_mode)) return InvalidArgument("failed to read file '{}': it is a directory", path);

  // Read to the end rather than trusting st_size: streams report 0, and a file may change while it is read. The
  // buffer never grows past kMaxReadFileBytes + 1, which is enough to tell that a file is too large.
  constexpr size_t kChunk = size_t{1} << 20;
  constexpr size_t kLimit = static_cast<size_t>(kMaxReadFileBytes);
  size_t initial = kChunk;
  if (S_ISREG(st.st_mode)) {
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > kMaxReadFileBytes) {
      return InvalidArgument("failed to read file '{}': size must be at most {}, got {}", path,
                             SizeText(kMaxReadFileBytes), SizeText(size));
    }
    initial = static_cast<size_t>(size) + 1;  // + 1: the read that sees the end needs room
  }
  std::string data(initial, '\0');
  size_t used = 0;
  for (;;) {
    if (used == data.size()) {
      if (used > kLimit) {
        return InvalidArgument("failed to read file '{}': size must be at most {}, got more", path,
                               SizeText(kMaxReadFileBytes));
      }
      data.resize(std::min(used + std::max(used, kChunk), kLimit + 1));
    }
    const ssize_t n = ::read(fd, data.data() + used, data.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("failed to read file '{}': read failed after {} bytes: {}", path, used, ErrnoText(errno));
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  data.resize(used);
  return data;
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  const std::filesystem::path target(path);
  if (path.empty() || !target.has_filename()) {
    return InvalidArgument("failed to write file '{}': the path must name a file, not a folder", path);
  }
  // Open a fresh temporary beside the target (same filesystem, so the rename is atomic). Mode 0666 lets the umask
  // decide the permissions, as for any newly created file.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = TemporaryName(target);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST && errno != EINTR) break;
  }
  if (fd < 0) {
    return IoError("failed to write file '{}': cannot create a temporary file in its folder: {}", path,
                   ErrnoText(errno));
  }
  FdCloser closer(fd);
  auto fail = [&](Status status) {
    if (closer.get() >= 0) closer.Close();
    ::unlink(tmp.c_str());
    return status;
  };

  if (Status s = WriteAll(fd, bytes, path); !s.ok()) return fail(std::move(s));
  if (::fsync(fd) != 0) {
    return fail(IoError("failed to write file '{}': fsync of the temporary file failed: {}", path, ErrnoText(errno)));
  }
  if (const int err = closer.Close(); err != 0) {
    return fail(IoError("failed to write file '{}': closing the temporary file failed: {}", path, ErrnoText(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return fail(IoError("failed to write file '{}': cannot rename the temporary file over it: {}", path,
                        ErrnoText(errno)));
  }
  SyncDirectory(target.parent_path());
  return OkStatus();
}

}  // namespace octet
