#include "moe/scenario_text.h"

#include "moe/atomic_file.h"
#include "moe/edits.h"
#include "moe/scenario_io.h"
#include "moe/text.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <optional>

namespace moe {

namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string_view s) {
    const std::size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos)
        return {};
    const std::size_t e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

std::size_t lineStart(const std::string& t, std::size_t pos) {
    const std::size_t nl = pos == 0 ? std::string::npos : t.rfind('\n', pos - 1);
    return nl == std::string::npos ? 0 : nl + 1;
}

std::size_t lineEnd(const std::string& t, std::size_t pos) {
    const std::size_t nl = t.find('\n', pos);
    return nl == std::string::npos ? t.size() : nl;
}

/// Indentation of the line at `start`, or -1 for a blank or comment-only line.
int contentIndent(const std::string& t, std::size_t start) {
    std::size_t i = start;
    while (i < t.size() && t[i] == ' ')
        ++i;
    if (i >= t.size() || t[i] == '\n' || t[i] == '\r' || t[i] == '#')
        return -1;
    return static_cast<int>(i - start);
}

/// End of a plain scalar that starts at `pos`: the line's end, before a " #" comment and
/// trailing blanks.
std::size_t plainEnd(const std::string& t, std::size_t pos) {
    std::size_t end = lineEnd(t, pos);
    for (std::size_t i = pos; i < end; ++i) {
        if (t[i] == '#' && i > pos && (t[i - 1] == ' ' || t[i - 1] == '\t')) {
            end = i;
            break;
        }
    }
    while (end > pos && (t[end - 1] == ' ' || t[end - 1] == '\t' || t[end - 1] == '\r'))
        --end;
    return end;
}

/// End of the quoted scalar or flow collection that starts at `pos`; npos when unterminated.
std::size_t delimitedEnd(const std::string& t, std::size_t pos) {
    int depth = 0;
    for (std::size_t i = pos; i < t.size(); ++i) {
        const char c = t[i];
        if (c == '"') {
            for (++i; i < t.size() && t[i] != '"'; ++i)
                if (t[i] == '\\')
                    ++i;
            if (i >= t.size())
                return std::string::npos;
            if (depth == 0)
                return i + 1;
        } else if (c == '\'') {
            for (++i; i < t.size(); ++i) {
                if (t[i] == '\'' && i + 1 < t.size() && t[i + 1] == '\'')
                    ++i;
                else if (t[i] == '\'')
                    break;
            }
            if (i >= t.size())
                return std::string::npos;
            if (depth == 0)
                return i + 1;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if (c == ']' || c == '}') {
            if (--depth == 0)
                return i + 1;
        } else if (c == '#' && i > 0 && (t[i - 1] == ' ' || t[i - 1] == '\n')) {
            i = lineEnd(t, i);
        }
    }
    return std::string::npos;
}

/// End of the block that holds lines indented more than `indent`, starting after the line at
/// `from`: the end of its last content line (comments and blank lines after it stay outside).
std::size_t blockEnd(const std::string& t, std::size_t from, int indent) {
    std::size_t last_content_end = lineEnd(t, from);
    std::size_t start = last_content_end + 1;
    while (start < t.size()) {
        const int in = contentIndent(t, start);
        if (in >= 0 && in <= indent)
            break;
        const std::size_t end = lineEnd(t, start);
        if (in >= 0)
            last_content_end = end;
        start = end + 1;
    }
    return std::min(last_content_end, t.size());
}

/// The value as flow YAML text, or nullopt when it is not valid YAML.
std::optional<std::string> flowText(const YAML::Node& value) {
    YAML::Emitter out;
    out.SetSeqFormat(YAML::Flow);
    out.SetMapFormat(YAML::Flow);
    out << value;
    if (!out.good())
        return std::nullopt;
    return std::string(out.c_str());
}

using Steps = std::vector<std::pair<std::string, std::optional<std::size_t>>>;

class Editor {
public:
    explicit Editor(std::string text)
        : text_(std::move(text)) {}

    std::string text_;
    Diagnostics diagnostics;

    void apply(const std::string& assignment) {
        const std::size_t equals = assignment.find('=');
        const std::optional<FieldPath> parsed =
            equals == std::string::npos ? std::nullopt
                                        : parseFieldPath(trimmed(assignment.substr(0, equals)));
        if (!parsed) {
            fail("", "malformed assignment '" + visibleText(assignment) +
                         "': expected field=value, e.g. layout.ep=16");
            return;
        }
        const std::string path = trimmed(assignment.substr(0, equals));
        YAML::Node value;
        YAML::Node root;
        try {
            value = YAML::Load(assignment.substr(equals + 1));
        } catch (const YAML::Exception& e) {
            fail(path, "the value of '" + path + "' is not valid YAML: " + e.msg);
            return;
        }
        try {
            root = YAML::Load(text_);
        } catch (const YAML::Exception& e) {
            fail(path, "the file is not valid YAML: " + e.msg);
            return;
        }
        const std::optional<std::string> written = flowText(value);
        if (!written) {
            fail(path, "the value of '" + path + "' cannot be written");
            return;
        }
        set(path, parsed->steps, root, value, *written);
    }

private:
    void fail(const std::string& field, std::string message) {
        Diagnostic d;
        d.file = "--set";
        d.field = field;
        d.message = std::move(message);
        diagnostics.push_back(std::move(d));
    }

    void set(const std::string& path, const Steps& steps, const YAML::Node& root,
             const YAML::Node& value, const std::string& written) {
        YAML::Node node = root;
        YAML::Node key_node; // the key whose value `node` is (undefined for the root)
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const auto& [key, index] = steps[i];
            if (node.IsDefined() && !node.IsNull() && !node.IsMap()) {
                fail(path, "cannot set '" + path + "': '" + key +
                               "' is under a value that is "
                               "not a map");
                return;
            }
            bool found = false;
            if (node.IsMap()) {
                for (auto it = node.begin(); it != node.end(); ++it) {
                    if (it->first.IsScalar() && it->first.Scalar() == key) {
                        key_node = it->first;
                        node = it->second;
                        found = true;
                        break;
                    }
                }
            }
            if (!found) {
                insert(path, steps, i, node, key_node, written);
                return;
            }
            if (index) {
                if (!node.IsSequence() || *index >= node.size()) {
                    fail(path, "cannot set '" + path + "': '" + key + "' has no item [" +
                                   std::to_string(*index) + "]");
                    return;
                }
                node = node[*index];
                key_node = YAML::Node();
            }
        }
        replace(path, node, key_node, value, written);
    }

    void replace(const std::string& path, const YAML::Node& node, const YAML::Node& key_node,
                 const YAML::Node& value, const std::string& written) {
        // An unchanged value keeps its spelling ("1.0e12" stays, even if we would write "1e12").
        if (node.IsScalar() && value.IsScalar() && node.Scalar() == value.Scalar() &&
            node.Tag() == value.Tag())
            return;
        std::size_t begin = 0, end = 0;
        const bool flow_or_scalar = node.IsScalar() || ((node.IsSequence() || node.IsMap()) &&
                                                        node.Style() == YAML::EmitterStyle::Flow);
        if (node.IsDefined() && !node.IsNull() && flow_or_scalar) {
            begin = static_cast<std::size_t>(node.Mark().pos);
            const char c = begin < text_.size() ? text_[begin] : '\0';
            if (node.IsScalar() && (c == '|' || c == '>')) {
                fail(path, "cannot set '" + path + "': its value is a block scalar");
                return;
            }
            end = (node.IsScalar() && c != '"' && c != '\'') ? plainEnd(text_, begin)
                                                             : delimitedEnd(text_, begin);
            if (end == std::string::npos || end <= begin) {
                fail(path, "cannot set '" + path + "': its value could not be located");
                return;
            }
            text_.replace(begin, end - begin, written);
            return;
        }
        // An empty value or a block collection: the new value goes right after "key:".
        if (!key_node.IsDefined() || key_node.Mark().pos < 0) {
            fail(path, "cannot set '" + path + "': its key could not be located");
            return;
        }
        const std::size_t key_pos = static_cast<std::size_t>(key_node.Mark().pos);
        const std::size_t colon = text_.find(':', key_pos);
        const std::size_t key_line_end = lineEnd(text_, key_pos);
        if (colon == std::string::npos || colon > key_line_end) {
            fail(path, "cannot set '" + path + "': its key could not be located");
            return;
        }
        begin = colon + 1;
        end = node.IsDefined() && !node.IsNull() ? blockEnd(text_, key_pos, key_node.Mark().column)
                                                 : plainEnd(text_, begin);
        if (end < begin)
            end = begin;
        text_.replace(begin, end - begin, " " + written);
    }

    /// Inserts steps[from..] = written under `parent` (a block map, or the empty value of
    /// `parent_key`).
    void insert(const std::string& path, const Steps& steps, std::size_t from,
                const YAML::Node& parent, const YAML::Node& parent_key,
                const std::string& written) {
        for (std::size_t i = from; i < steps.size(); ++i) {
            if (steps[i].second) {
                fail(path, "cannot set '" + path + "': '" + steps[i].first + "' does not exist");
                return;
            }
        }
        int indent = 0;
        std::size_t at = text_.size();
        const bool top_level = !parent_key.IsDefined();
        if (parent.IsMap() && parent.size() > 0) {
            if (parent.Style() == YAML::EmitterStyle::Flow) {
                fail(path, "cannot add '" + path + "' inside a flow-style map; edit it by hand");
                return;
            }
            const YAML::Mark first = parent.begin()->first.Mark();
            indent = first.column;
            at = indent == 0 ? text_.size()
                             : blockEnd(text_, static_cast<std::size_t>(first.pos), indent - 1);
            if (indent == 0) {
                // At the end of the file, after its last content line.
                std::size_t end = text_.size();
                while (end > 0) {
                    const std::size_t start = lineStart(text_, end - 1);
                    if (contentIndent(text_, start) >= 0)
                        break;
                    end = start;
                }
                at = end == 0 ? 0 : lineEnd(text_, end - 1);
            }
        } else if (!top_level && (!parent.IsDefined() || parent.IsNull())) {
            const YAML::Mark key = parent_key.Mark();
            indent = key.column + 2;
            at = lineEnd(text_, static_cast<std::size_t>(key.pos));
            // "layout: ~" or "layout: null" would stay null: drop the written empty value.
            const std::size_t colon = text_.find(':', static_cast<std::size_t>(key.pos));
            if (colon != std::string::npos && colon < at) {
                const std::size_t end = plainEnd(text_, colon + 1);
                if (end > colon + 1) {
                    text_.erase(colon + 1, end - colon - 1);
                    at = lineEnd(text_, static_cast<std::size_t>(key.pos));
                }
            }
        } else if (!top_level || (parent.IsDefined() && !parent.IsNull())) {
            fail(path, "cannot add '" + path + "': its parent is not a map");
            return;
        }
        std::string lines;
        for (std::size_t i = from; i < steps.size(); ++i) {
            const int level = indent + 2 * static_cast<int>(i - from);
            lines += '\n';
            lines.append(static_cast<std::size_t>(level), ' ');
            lines += steps[i].first + ":";
            if (i + 1 == steps.size())
                lines += " " + written;
        }
        // A new top-level section gets a blank line before it, like the others.
        if (indent == 0 && steps.size() - from > 1 && at > 0)
            lines.insert(0, "\n");
        if (at == 0) {
            lines.erase(0, lines.find_first_not_of('\n'));
            lines += '\n';
        }
        text_.insert(at, lines);
        if (at > 0 && at == text_.size() - lines.size())
            text_ += '\n';
    }
};

/// The value of `field` as an assignment's YAML: text fields as a quoted YAML string.
std::string assignmentValue(const FieldInfo& field, const std::string& value) {
    return field.kind == FieldKind::text ? escapeJson(value) : value;
}

} // namespace

ScenarioTextEdit editScenarioText(const std::string& text,
                                  const std::vector<std::string>& assignments) {
    Editor editor(text);
    for (const std::string& assignment : assignments)
        editor.apply(assignment);
    return {std::move(editor.text_), std::move(editor.diagnostics)};
}

std::string rebaseRelativePath(const std::string& path, const std::string& from_dir,
                               const std::string& to_dir) {
    if (path.empty() || fs::path(path).is_absolute())
        return path;
    std::error_code ec;
    const fs::path from = fs::weakly_canonical(fs::absolute(from_dir, ec), ec);
    const fs::path to = fs::weakly_canonical(fs::absolute(to_dir, ec), ec);
    if (ec || from == to)
        return path;
    const fs::path target = (from / path).lexically_normal();
    const fs::path relative = target.lexically_relative(to);
    return relative.empty() ? target.string() : relative.generic_string();
}

ScenarioTextResult scenarioTextFor(const Scenario& target, const ScenarioSource& origin,
                                   const std::string& to_dir) {
    Scenario wanted = target;
    wanted.routing.histogram_csv =
        rebaseRelativePath(target.routing.histogram_csv, origin.base_dir, to_dir);
    if (origin.text.empty())
        return {toYaml(wanted), false};
    std::string text = origin.text;
    // A relative histogram path must name the same file from the new folder before the text can
    // be loaded there.
    const LoadResult first = loadScenarioText(text, "<origin>", origin.base_dir);
    if (first.ok() && !first.scenario->routing.histogram_csv.empty()) {
        const std::string moved =
            rebaseRelativePath(first.scenario->routing.histogram_csv, origin.base_dir, to_dir);
        if (moved != first.scenario->routing.histogram_csv) {
            ScenarioTextEdit edit =
                editScenarioText(text, {"routing.histogram_csv=" + escapeJson(moved)});
            if (!edit.ok())
                return {toYaml(wanted), false};
            text = std::move(edit.text);
        }
    }
    // One changed field at a time, in file order: fields that follow others (a GPU preset's
    // figures, a derived dp) settle once the field they follow is written.
    const std::vector<FieldInfo>& fields = scenarioFields();
    for (std::size_t round = 0; round <= fields.size(); ++round) {
        const LoadResult loaded = loadScenarioText(text, "<save>", to_dir);
        if (!loaded.ok())
            break;
        if (*loaded.scenario == wanted)
            return {text, true};
        const FieldInfo* changed = nullptr;
        std::optional<std::string> value;
        for (const FieldInfo& field : fields) {
            value = getScenarioField(wanted, field.path);
            if (value && value != getScenarioField(*loaded.scenario, field.path)) {
                changed = &field;
                break;
            }
        }
        if (!changed)
            break;
        ScenarioTextEdit edit =
            editScenarioText(text, {changed->path + "=" + assignmentValue(*changed, *value)});
        if (!edit.ok() || edit.text == text)
            break;
        text = std::move(edit.text);
    }
    return {toYaml(wanted), false};
}

std::string saveScenarioText(const Scenario& target, const ScenarioSource& origin,
                             const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    const std::string dir = parent.empty() ? std::string(".") : parent.string();
    return writeFileAtomically(path, scenarioTextFor(target, origin, dir).text);
}

} // namespace moe
