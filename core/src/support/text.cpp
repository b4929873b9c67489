#include "moe/text.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace moe {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

/// Decodes one UTF-8 sequence at `text[i]`; returns its code point and advances `i`, or
/// returns nullopt and advances past the one offending byte. Strict: no overlong forms, no
/// surrogates, nothing past U+10FFFF.
std::optional<char32_t> decodeUtf8(std::string_view text, std::size_t& i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
        ++i;
        return lead;
    }
    int length = 0;
    char32_t code = 0;
    char32_t minimum = 0;
    if ((lead & 0xE0) == 0xC0) {
        length = 2;
        code = lead & 0x1F;
        minimum = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3;
        code = lead & 0x0F;
        minimum = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4;
        code = lead & 0x07;
        minimum = 0x10000;
    } else {
        ++i;
        return std::nullopt;
    }
    if (i + static_cast<std::size_t>(length) > text.size()) {
        ++i;
        return std::nullopt;
    }
    for (int k = 1; k < length; ++k) {
        const unsigned char next = byte(i + static_cast<std::size_t>(k));
        if ((next & 0xC0) != 0x80) {
            ++i;
            return std::nullopt;
        }
        code = (code << 6) | (next & 0x3F);
    }
    if (code < minimum || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
        ++i;
        return std::nullopt;
    }
    i += static_cast<std::size_t>(length);
    return code;
}

void appendUtf8(std::string& out, char32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

void appendHex(std::string& out, unsigned value, int digits) {
    static const char* hex = "0123456789ABCDEF";
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
        out += hex[(value >> shift) & 0xF];
}

/// Calls `each(code_point)` for every character of `text`, U+FFFD for each invalid byte.
template <typename Each> void forEachCodePoint(std::string_view text, Each each) {
    std::size_t i = 0;
    while (i < text.size())
        each(decodeUtf8(text, i).value_or(kReplacement));
}

/// Characters that render as nothing or as a plain space.
bool invisible(char32_t c) {
    return c == 0xFEFF || c == 0x00A0 || c == 0x00AD || (c >= 0x200B && c <= 0x200F) ||
           (c >= 0x2028 && c <= 0x202F) || (c >= 0x2060 && c <= 0x2064) || (c >= 0x80 && c < 0xA0);
}

} // namespace

std::string validUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    forEachCodePoint(text, [&](char32_t c) { appendUtf8(out, c); });
    return out;
}

std::string escapeXml(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    forEachCodePoint(text, [&](char32_t c) {
        switch (c) {
        case '&':
            out += "&amp;";
            return;
        case '<':
            out += "&lt;";
            return;
        case '>':
            out += "&gt;";
            return;
        case '"':
            out += "&quot;";
            return;
        case '\'':
            out += "&#39;";
            return;
        default:
            break;
        }
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
            return;
        if (c == 0xFFFE || c == 0xFFFF)
            return;
        appendUtf8(out, c);
    });
    return out;
}

std::string escapeJson(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    forEachCodePoint(text, [&](char32_t c) {
        switch (c) {
        case '"':
            out += "\\\"";
            return;
        case '\\':
            out += "\\\\";
            return;
        case '\n':
            out += "\\n";
            return;
        case '\r':
            out += "\\r";
            return;
        case '\t':
            out += "\\t";
            return;
        default:
            break;
        }
        if (c < 0x20) {
            out += "\\u";
            appendHex(out, static_cast<unsigned>(c), 4);
            return;
        }
        appendUtf8(out, c);
    });
    out += '"';
    return out;
}

std::string escapeCsvField(std::string_view text) {
    std::string field = validUtf8(text);
    // A spreadsheet runs "=..." as a formula; "-3" or "+1e5" stay numbers.
    if (!field.empty() &&
        (field[0] == '=' || field[0] == '+' || field[0] == '-' || field[0] == '@') &&
        !parseFiniteNumber(field))
        field.insert(field.begin(), '\'');
    const bool quote = field.find_first_of(",\"\r\n") != std::string::npos ||
                       (!field.empty() && (field.front() == ' ' || field.back() == ' '));
    if (!quote)
        return field;
    std::string out = "\"";
    for (const char c : field) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string visibleText(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t start = i;
        const std::optional<char32_t> c = decodeUtf8(text, i);
        if (!c) {
            out += "\\x";
            appendHex(out, static_cast<unsigned char>(text[start]), 2);
        } else if (*c == '\t') {
            out += "\\t";
        } else if (*c == '\n') {
            out += "\\n";
        } else if (*c == '\r') {
            out += "\\r";
        } else if (*c < 0x20 || *c == 0x7F) {
            out += "\\x";
            appendHex(out, static_cast<unsigned>(*c), 2);
        } else if (invisible(*c)) {
            out += "<U+";
            appendHex(out, static_cast<unsigned>(*c), 4);
            out += '>';
        } else {
            out.append(text.substr(start, i - start));
        }
    }
    return out;
}

std::optional<double> parseFiniteNumber(std::string_view text) {
    // from_chars takes no leading '+', which YAML and spreadsheets write.
    if (text.size() > 1 && text.front() == '+' && text[1] != '-')
        text.remove_prefix(1);
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

} // namespace moe
