#include "moe/json_writer.h"

#include "moe/format.h"
#include "moe/text.h"

#include <charconv>
#include <cmath>

namespace moe {

std::string JsonWriter::escape(std::string_view text) {
    return escapeJson(text);
}

void JsonWriter::newline() {
    if (!pretty_)
        return;
    out_ += '\n';
    out_.append(stack_.size() * 2, ' ');
}

void JsonWriter::beforeValue() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!stack_.empty()) {
        if (!stack_.back().empty)
            out_ += ',';
        stack_.back().empty = false;
        newline();
    }
}

JsonWriter& JsonWriter::beginObject() {
    beforeValue();
    out_ += '{';
    stack_.push_back({true, true});
    return *this;
}

JsonWriter& JsonWriter::endObject() {
    const bool was_empty = stack_.back().empty;
    stack_.pop_back();
    if (!was_empty)
        newline();
    out_ += '}';
    return *this;
}

JsonWriter& JsonWriter::beginArray() {
    beforeValue();
    out_ += '[';
    stack_.push_back({false, true});
    return *this;
}

JsonWriter& JsonWriter::endArray() {
    const bool was_empty = stack_.back().empty;
    stack_.pop_back();
    if (!was_empty)
        newline();
    out_ += ']';
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
    beforeValue();
    out_ += escape(name);
    out_ += pretty_ ? ": " : ":";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
    beforeValue();
    out_ += escape(text);
    return *this;
}

JsonWriter& JsonWriter::value(double number) {
    if (!std::isfinite(number))
        return null();
    beforeValue();
    out_ += formatNumber(number);
    return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
    beforeValue();
    out_ += std::to_string(number);
    return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
    beforeValue();
    out_ += flag ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    beforeValue();
    out_ += "null";
    return *this;
}

} // namespace moe
