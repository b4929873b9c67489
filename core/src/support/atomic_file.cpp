#include "moe/atomic_file.h"

#include "moe/limits.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>

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

namespace {

/// Opens `path` for reading if it is a regular file; -1 with the reason in `problem` otherwise.
int openRegularFile(const std::string& path, off_t& size, std::string& problem) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        problem = errnoText(errno);
        return -1;
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        problem = errnoText(errno);
        ::close(fd);
        return -1;
    }
    if (!S_ISREG(info.st_mode)) {
        problem = S_ISDIR(info.st_mode) ? errnoText(EISDIR) : "not a regular file";
        ::close(fd);
        return -1;
    }
    size = info.st_size;
    return fd;
}

/// Hands `fd`'s bytes to `sink` block by block until the end of the file or until `sink`
/// returns a reason to stop; closes `fd`. Returns "" or the reason.
std::string readBlocks(int fd, const std::function<std::string(std::string_view)>& sink) {
    char buffer[65536];
    std::string problem;
    while (problem.empty()) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            problem = errnoText(errno);
        else if (got == 0)
            break;
        else
            problem = sink(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
    ::close(fd);
    return problem;
}

std::string largerThanSupported(int64_t max_bytes = limits::kMaxInputFileBytes) {
    return "larger than the supported maximum of " + std::to_string(max_bytes / (1024 * 1024)) +
           " MB";
}

} // namespace

std::string readFileBounded(const std::string& path, std::string& text, int64_t max_bytes) {
    text.clear();
    off_t size = 0;
    std::string problem;
    const int fd = openRegularFile(path, size, problem);
    if (fd < 0)
        return problem;
    if (size > max_bytes) {
        ::close(fd);
        return "the file is " + largerThanSupported(max_bytes);
    }
    // Reads stop at the bound even if the file grows while it is read.
    problem = readBlocks(fd, [&](std::string_view block) {
        text.append(block);
        return text.size() > static_cast<std::size_t>(max_bytes)
                   ? "the file is " + largerThanSupported(max_bytes)
                   : std::string();
    });
    if (!problem.empty())
        text.clear();
    return problem;
}

std::string readFileLines(const std::string& path,
                          const std::function<void(int, std::string_view)>& on_line) {
    off_t size = 0;
    std::string problem;
    const int fd = openRegularFile(path, size, problem);
    if (fd < 0)
        return problem;
    std::string pending; // the line read so far
    int line = 0;
    problem = readBlocks(fd, [&](std::string_view block) {
        while (!block.empty()) {
            const std::size_t newline = block.find('\n');
            pending.append(block.substr(0, newline));
            if (pending.size() > static_cast<std::size_t>(limits::kMaxInputFileBytes))
                return "line " + std::to_string(line + 1) + " is " + largerThanSupported();
            if (newline == std::string_view::npos)
                break;
            block.remove_prefix(newline + 1);
            on_line(++line, pending);
            pending.clear();
        }
        return std::string();
    });
    if (problem.empty() && !pending.empty())
        on_line(++line, pending);
    return problem;
}

} // namespace moe
