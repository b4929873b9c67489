#pragma once
// Splitting a batch of work (a sweep's points, a search's structures) over the tasks of a
// cluster job: task `index` of `count` takes items index, index + count, index + 2*count, ...
// Round-robin rather than contiguous blocks, so every task gets a similar mix of cheap and
// expensive items (a grid's last axis varies fastest; a search enumerates small degrees first).
// Deterministic: the same items and shard always give the same subset, and the shards of one
// count partition the items.

#include <cstdint>
#include <optional>
#include <string>

namespace moe {

struct Shard {
    int index = 0; ///< 0 .. count-1
    int count = 1;
    bool contains(int64_t item) const { return item % count == index; }
    /// How many of `items` (0 .. items-1) this shard takes.
    int64_t size(int64_t items) const {
        return items > index ? (items - index + count - 1) / count : 0;
    }
};

/// The most tasks a job is split into.
constexpr int kMaxShards = 1'000'000;

/// Parses "I/N" with 0 <= I < N <= kMaxShards ("3/8", what $SLURM_ARRAY_TASK_ID/
/// $SLURM_ARRAY_TASK_COUNT expands to). nullopt with `problem` set when malformed.
std::optional<Shard> parseShard(const std::string& text, std::string& problem);

} // namespace moe
