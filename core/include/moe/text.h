#pragma once
// Text shared by every reader and writer: one escape function per output format, so a user's
// string (a scenario name with '&', '<script>', a quote or bytes that are not UTF-8) reaches SVG,
// HTML, JSON and CSV files only as text, never as markup or broken syntax; and the form of user
// text that messages quote, with invisible characters made visible.

#include <optional>
#include <string>
#include <string_view>

namespace moe {

/// `text` as valid UTF-8: every byte that does not start a well-formed UTF-8 sequence (overlong
/// forms, surrogates and code points past U+10FFFF included) becomes U+FFFD.
std::string validUtf8(std::string_view text);

/// Text for XML and HTML, both in element content and in attribute values ("..." or '...'):
/// & < > " ' as entities, control characters other than tab and line ends dropped (XML 1.0
/// forbids them), and the result valid UTF-8.
std::string escapeXml(std::string_view text);

/// A JSON string literal with its quotes: " \ and control characters escaped, valid UTF-8.
std::string escapeJson(std::string_view text);

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote, a line end or leading or
/// trailing spaces, with inner quotes doubled; a field a spreadsheet would run as a formula
/// (starting with = + - @ followed by a non-digit) gets a leading apostrophe. Valid UTF-8.
std::string escapeCsvField(std::string_view text);

/// `text` with every character a reader could not see written as an escape: control
/// characters as \t, \n, \r or \xNN, the byte-order mark, zero-width and non-breaking spaces as
/// <U+FEFF>, bytes that are not UTF-8 as \xNN. For quoting user text in messages.
std::string visibleText(std::string_view text);

/// A finite number in plain or exponent notation ("8", "-0.5", "+1e3"); nullopt for anything
/// else (text, "inf", "nan", trailing characters, overflow).
std::optional<double> parseFiniteNumber(std::string_view text);

} // namespace moe
