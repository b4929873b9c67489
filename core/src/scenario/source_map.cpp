#include "moe/source_map.h"

namespace moe {

SourceLocation SourceMap::find(const std::string& field) const {
    // Walk up "a.b[2].c" -> "a.b[2]" -> "a.b" -> "a"; entries without a line were created by
    // --set overrides and say nothing about the file.
    std::string key = field;
    while (!key.empty()) {
        const auto it = fields.find(key);
        if (it != fields.end() && it->second.line > 0)
            return it->second;
        const std::size_t cut = key.find_last_of(".[");
        if (cut == std::string::npos)
            break;
        key.resize(cut);
    }
    return {};
}

} // namespace moe
