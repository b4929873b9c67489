#include "moe/shard.h"

#include <charconv>

namespace moe {

std::optional<Shard> parseShard(const std::string& text, std::string& problem) {
    const size_t slash = text.find('/');
    int index = -1, count = 0;
    bool ok = slash != std::string::npos;
    if (ok) {
        const char* begin = text.data();
        const auto [end_i, ec_i] = std::from_chars(begin, begin + slash, index);
        const auto [end_n, ec_n] = std::from_chars(begin + slash + 1, begin + text.size(), count);
        ok = ec_i == std::errc() && end_i == begin + slash && ec_n == std::errc() &&
             end_n == begin + text.size();
    }
    if (!ok || count < 1 || count > kMaxShards || index < 0 || index >= count) {
        problem = "needs I/N with 0 <= I < N <= " + std::to_string(kMaxShards) +
                  " (e.g. 3/8, or $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT), got '" + text +
                  "'";
        return std::nullopt;
    }
    return Shard{index, count};
}

} // namespace moe
