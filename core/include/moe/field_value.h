#pragma once
// The kinds and typed values of scenario fields (schema.h), apart from the table itself so that
// the table's private accessors (core/src/scenario/field_access.h) need not include it.

#include "moe/scenario.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace moe {

enum class FieldKind {
    integer, ///< whole number
    number,  ///< real number
    text,    ///< free text (choices, if any, are suggestions: layout.order)
    choice,  ///< one of `choices`
    list,    ///< a YAML list in flow style (cluster.rack_nodes, layout.expert_placement)
};

/// A field's value, typed: whole numbers, unsigned whole numbers (routing.seed), real numbers,
/// text (also the name of a choice and a rank order), and the two lists of the format.
using FieldValue = std::variant<int64_t, uint64_t, double, std::string, std::vector<int>,
                                std::vector<ExpertPlacement>>;

} // namespace moe
