#pragma once
// A small streaming JSON writer for the CLI's --json output and trace exports. The core stays
// free of Qt, so it cannot use QJsonDocument; this keeps output deterministic (key order as
// written) and locale-independent.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moe {

class JsonWriter {
public:
    explicit JsonWriter(bool pretty = true)
        : pretty_(pretty) {}

    JsonWriter& beginObject();
    JsonWriter& endObject();
    JsonWriter& beginArray();
    JsonWriter& endArray();
    JsonWriter& key(std::string_view name);
    JsonWriter& value(std::string_view text);
    JsonWriter& value(const char* text) { return value(std::string_view(text)); }
    JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
    JsonWriter& value(double number); ///< non-finite numbers become null (JSON has no inf/NaN)
    JsonWriter& value(int64_t number);
    JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
    JsonWriter& value(bool flag);
    JsonWriter& null();

    /// key(name).value(v) in one call.
    template <typename T> JsonWriter& field(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }

    const std::string& str() const { return out_; }

    static std::string escape(std::string_view text);

private:
    void beforeValue();
    void newline();

    std::string out_;
    bool pretty_;
    struct Level {
        bool is_object;
        bool empty;
    };
    std::vector<Level> stack_;
    bool after_key_ = false;
};

} // namespace moe
