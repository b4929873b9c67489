#include "moe/atomic_file.h"

#include "moe/limits.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace moe {

namespace {

namespace fs = std::filesystem;

std::string errnoText(int error) {
    return std::strerror(error);
}

std::string directoryOf(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

/// Writes all of `text` to `fd`; false with errno set when a write fails (ENOSPC on a full
/// disk; a write of 0 bytes counts as ENOSPC).
bool writeAll(int fd, std::string_view text) {
    std::size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            errno = ENOSPC;
        if (n <= 0)
            return false;
        written += static_cast<std::size_t>(n);
    }
    return true;
}

std::string writeInPlace(const std::string& path, std::string_view text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return "cannot open '" + path + "': " + errnoText(errno);
    if (!writeAll(fd, text)) {
        const std::string reason = "cannot write '" + path + "': " + errnoText(errno);
        ::close(fd);
        return reason;
    }
    if (::close(fd) != 0)
        return "cannot close '" + path + "': " + errnoText(errno);
    return {};
}

} // namespace

std::string writeFileAtomically(const std::string& path, std::string_view text) {
    // Replace the file a symlink points at, not the link.
    fs::path target = path;
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
        std::error_code ec;
        target = fs::canonical(path, ec);
        if (ec)
            return "cannot resolve '" + path + "': " + ec.message();
    }
    struct stat existing {};
    const bool exists = ::stat(target.c_str(), &existing) == 0;
    if (exists && S_ISDIR(existing.st_mode))
        return "cannot write '" + path + "': " + errnoText(EISDIR);
    // A device or a pipe (/dev/stdout, /dev/full, a FIFO) holds no file to lose and cannot be
    // replaced by a rename: write to it directly, checking every step.
    if (exists && !S_ISREG(existing.st_mode))
        return writeInPlace(path, text);
    std::string temp = target.string() + ".tmp-XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0)
        return "cannot create a temporary file beside '" + path + "': " + errnoText(errno);
    // Never leaves the temporary file behind; the original has not been touched yet.
    auto fail = [&](const std::string& what) {
        const std::string reason = what + ": " + errnoText(errno);
        ::close(fd);
        ::unlink(temp.c_str());
        return reason;
    };
    // mkstemp creates 0600; keep an existing file's permissions, else the usual 0644.
    const mode_t mode = exists ? existing.st_mode & 07777 : 0644;
    if (::fchmod(fd, mode) != 0)
        return fail("cannot set permissions of '" + temp + "'");
    if (!writeAll(fd, text))
        return fail("cannot write '" + temp + "'");
    if (::fsync(fd) != 0)
        return fail("cannot flush '" + temp + "' to disk");
    const int closed = ::close(fd);
    if (closed != 0) {
        const std::string reason = "cannot close '" + temp + "': " + errnoText(errno);
        ::unlink(temp.c_str());
        return reason;
    }
    if (::rename(temp.c_str(), target.c_str()) != 0) {
        const std::string reason = "cannot replace '" + path + "': " + errnoText(errno);
        ::unlink(temp.c_str());
        return reason;
    }
    // Make the rename itself durable; failing here cannot lose data, so it is not an error.
    const std::string directory = directoryOf(target.string());
    const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
    if (dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
    }
    return {};
}

std::string readFileBounded(const std::string& path, std::string& text) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errnoText(errno);
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        return errnoText(error);
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        return S_ISDIR(info.st_mode) ? errnoText(EISDIR) : "not a regular file";
    }
    const std::string too_large = "the file is larger than the supported maximum of " +
                                  std::to_string(limits::kMaxInputFileBytes / (1024 * 1024)) +
                                  " MB";
    if (info.st_size > limits::kMaxInputFileBytes) {
        ::close(fd);
        return too_large;
    }
    text.clear();
    char buffer[65536];
    while (true) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            const int error = errno;
            ::close(fd);
            return errnoText(error);
        }
        if (got == 0)
            break;
        text.append(buffer, static_cast<std::size_t>(got));
        if (text.size() > static_cast<std::size_t>(limits::kMaxInputFileBytes)) {
            ::close(fd);
            text.clear();
            return too_large;
        }
    }
    ::close(fd);
    return {};
}

} // namespace moe
