#include "moe/text_file.h"

#include <cerrno>
#include <cstdio>
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

std::string parentDirectory(const fs::path& path) {
    const fs::path parent = path.parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

} // namespace

std::string readTextFile(const std::string& path, std::string& text) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file)
        return errnoText(errno);
    text.clear();
    char buffer[65536];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0)
        text.append(buffer, got);
    // A directory opens fine on Linux and only fails on read (EISDIR).
    const int error = std::ferror(file) ? errno : 0;
    std::fclose(file);
    return error ? errnoText(error) : std::string();
}

std::string writeTextFileAtomically(const std::string& path, const std::string& text) {
    // Replace the file a symlink points at, not the link.
    fs::path target = path;
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
        std::error_code ec;
        target = fs::canonical(path, ec);
        if (ec)
            return "cannot resolve '" + path + "': " + ec.message();
    }
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
    struct stat existing {};
    const mode_t mode = ::stat(target.c_str(), &existing) == 0 ? existing.st_mode & 07777 : 0644;
    if (::fchmod(fd, mode) != 0)
        return fail("cannot set permissions of '" + temp + "'");
    std::size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail("cannot write '" + temp + "'");
        written += static_cast<std::size_t>(n);
    }
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
    const std::string directory = parentDirectory(target);
    const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
    if (dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
    }
    return {};
}

} // namespace moe
