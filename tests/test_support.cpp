#include "test_support.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace moe::test {

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::vector<std::string> sampleFiles() {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(MOE_SAMPLES_DIR)) {
        if (entry.is_regular_file() && entry.path().extension() == ".yaml")
            files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string samplePath(const std::string& name) {
    return std::string(MOE_SAMPLES_DIR) + "/" + name;
}

} // namespace moe::test
