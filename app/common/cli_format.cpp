#include "cli_format.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace moe::cmdline {

namespace {

bool isHelpOrVersion(const CLI::App& app, const CLI::Option* o) {
    return o == app.get_help_ptr() || o == app.get_help_all_ptr() || o->get_name() == "--version" ||
           o->get_name() == "--help-all";
}

bool hidden(const CLI::Option* o) {
    return o->get_group().empty();
}

bool repeatable(const CLI::Option* o) {
    return o->get_expected_max() > 1;
}

/// "FILE", "A.yaml B.yaml" (option_text overrides the name for the reader).
std::string positionalName(const CLI::Option* o) {
    return o->get_option_text().empty() ? o->get_name() : o->get_option_text();
}

std::string positionalUsage(const CLI::Option* o) {
    std::string text = positionalName(o);
    if (repeatable(o) && o->get_option_text().empty())
        text += "...";
    return o->get_required() ? text : "[" + text + "]";
}

/// "--set key=value", "-o OUT.yaml": the short name when there is one.
std::string optionUsage(const CLI::Option* o) {
    std::string text =
        o->get_snames().empty() ? "--" + o->get_lnames().front() : "-" + o->get_snames().front();
    if (o->get_type_size_max() > 0 && o->get_expected_max() > 0)
        text += " " + o->get_type_name();
    if (repeatable(o))
        text += " ...";
    return o->get_required() ? text : "[" + text + "]";
}

/// "-o, --output OUT.yaml" for the option table.
std::string optionLabel(const CLI::Option* o) {
    std::string text;
    for (const std::string& s : o->get_snames())
        text += (text.empty() ? "-" : ", -") + s;
    for (const std::string& l : o->get_lnames())
        text += (text.empty() ? "--" : ", --") + l;
    if (o->get_type_size_max() > 0 && o->get_expected_max() > 0)
        text += " " + o->get_type_name();
    return text;
}

std::vector<const CLI::Option*> visibleOptions(const CLI::App& app, bool positional) {
    return app.get_options([&](const CLI::Option* o) {
        return !hidden(o) && o->get_positional() == positional &&
               (positional || o != app.get_help_all_ptr());
    });
}

std::vector<std::string> commandNames(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* a = &app; a != nullptr; a = a->get_parent())
        names.push_back(a->get_name());
    std::reverse(names.begin(), names.end());
    return names;
}

using Rows = std::vector<std::pair<std::string, std::string>>;

/// The label column's width for these rows (at most 28: longer labels get their own line).
size_t labelWidth(const Rows& a, const Rows& b = {}) {
    size_t width = 0;
    for (const Rows* rows : {&a, &b})
        for (const auto& [label, text] : *rows)
            width = std::max(width, label.size());
    return std::clamp<size_t>(width + 2, 16, 28);
}

/// The two-column table of arguments or options.
std::string table(const Rows& rows, size_t width) {
    std::string out;
    for (const auto& [label, text] : rows) {
        std::string description = text;
        const std::string body = wrap(description, static_cast<int>(width) + 2);
        std::string first = "  " + label;
        if (label.size() + 2 > width) {
            out += first + "\n" + body;
            continue;
        }
        first.append(width + 2 - first.size(), ' ');
        out += first + body.substr(std::min(body.size(), width + 2));
    }
    return out;
}

std::string programHelp(const CLI::App& app) {
    std::ostringstream o;
    o << app.get_name() << " — " << app.get_description() << "\n\nUsage: " << app.get_name()
      << " <command> [options]\n\nCommands:\n";
    for (const CLI::App* c : leafCommands(app))
        o << "  " << synopsis(*c) << "\n";
    Rows rows;
    for (const CLI::Option* opt : visibleOptions(app, false))
        rows.emplace_back(optionLabel(opt), opt->get_description());
    o << "\nOptions:\n" << table(rows, labelWidth(rows));
    if (!app.get_footer().empty())
        o << "\n" << wrap(app.get_footer(), 0);
    return o.str();
}

} // namespace

std::string commandPath(const CLI::App& app) {
    std::string path;
    for (const std::string& name : commandNames(app))
        path += (path.empty() ? "" : " ") + name;
    return path;
}

std::string synopsis(const CLI::App& app) {
    std::vector<std::string> names = commandNames(app);
    std::string text;
    for (size_t i = 1; i < names.size(); ++i)
        text += (text.empty() ? "" : " ") + names[i];
    for (const CLI::Option* o : visibleOptions(app, true))
        text += " " + positionalUsage(o);
    for (const CLI::Option* o : visibleOptions(app, false))
        if (!isHelpOrVersion(app, o))
            text += " " + optionUsage(o);
    return text;
}

std::vector<const CLI::App*> leafCommands(const CLI::App& app) {
    std::vector<const CLI::App*> out;
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_group().empty())
            continue; // hidden
        if (sub->get_subcommands({}).empty()) {
            out.push_back(sub);
            continue;
        }
        for (const CLI::App* leaf : leafCommands(*sub))
            out.push_back(leaf);
    }
    return out;
}

std::string helpText(const CLI::App& app) {
    if (app.get_parent() == nullptr)
        return programHelp(app);
    std::ostringstream o;
    const std::vector<const CLI::App*> leaves = leafCommands(app);
    if (leaves.empty()) {
        o << "Usage: " << commandNames(app).front() << " " << synopsis(app) << "\n";
    } else {
        o << "Usage:\n";
        for (const CLI::App* leaf : leaves)
            o << "  " << commandNames(app).front() << " " << synopsis(*leaf) << "\n";
    }
    o << "\n" << wrap(app.get_description(), 0);
    Rows arguments, options;
    for (const CLI::Option* opt : visibleOptions(app, true))
        arguments.emplace_back(positionalName(opt), opt->get_description());
    for (const CLI::Option* opt : visibleOptions(app, false))
        options.emplace_back(optionLabel(opt),
                             opt->get_description() + (repeatable(opt) ? " (repeatable)" : ""));
    const size_t width = labelWidth(arguments, options);
    if (!arguments.empty())
        o << "\nArguments:\n" << table(arguments, width);
    if (!options.empty())
        o << "\nOptions:\n" << table(options, width);
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_group().empty())
            continue;
        o << "\n"
          << sub->get_name() << ": " << synopsis(*sub) << "\n"
          << wrap(sub->get_description(), 2);
    }
    if (!app.get_footer().empty())
        o << "\n" << wrap(app.get_footer(), 0);
    return o.str();
}

std::string usageHint(const CLI::App& app) {
    if (app.get_parent() == nullptr)
        return "Usage: " + app.get_name() + " <command> [options]\nRun '" + app.get_name() +
               " --help' for the commands.\n";
    std::string text;
    const std::vector<const CLI::App*> leaves = leafCommands(app);
    const std::string program = commandNames(app).front();
    if (leaves.empty())
        text = "Usage: " + program + " " + synopsis(app) + "\n";
    for (const CLI::App* leaf : leaves)
        text += "Usage: " + program + " " + synopsis(*leaf) + "\n";
    return text + "Run '" + commandPath(app) + " --help' for more.\n";
}

std::string describeParseError(const CLI::ParseError& error) {
    const std::string what = error.what();
    std::smatch m;
    static const std::regex missing(R"(^(\S+): \d+ required .* missing$)");
    static const std::regex at_most(R"(^(\S+): At Most (\d+) required but received (\d+)$)");
    static const std::regex at_least(R"(^(\S+): At least (\d+) required but received (\d+)$)");
    static const std::regex required(R"(^(\S+) is required$)");
    if (std::regex_match(what, m, missing))
        return m[1].str() + " needs a value";
    static const std::regex option_problem(R"(^(--?\S+): (needs .*)$)");
    if (std::regex_match(what, m, at_most))
        return "takes at most " + m[2].str() + " " + m[1].str() + ", got " + m[3].str();
    if (std::regex_match(what, m, at_least))
        return "needs " + m[2].str() + " " + m[1].str() + ", got " + m[3].str();
    if (std::regex_match(what, m, option_problem))
        return m[1].str() + " " + m[2].str();
    if (std::regex_match(what, m, required))
        return "needs " + m[1].str();
    if (what == "A subcommand is required")
        return "which command?";
    return what;
}

std::string leftoverProblem(const CLI::App& app) {
    for (const std::string& arg : app.remaining()) {
        if (arg.size() > 1 && arg[0] == '-')
            return "unknown option '" + arg + "'";
        return "unexpected argument '" + arg + "'";
    }
    return {};
}

const CLI::App& selectedCommand(const CLI::App& app) {
    for (const CLI::App* sub : app.get_subcommands())
        return selectedCommand(*sub);
    return app;
}

CompletionSpec completionSpec(const CLI::App& app) {
    CompletionSpec spec;
    spec.name = app.get_name();
    for (const CLI::Option* o : app.get_options([](const CLI::Option*) { return true; })) {
        if (o->get_positional()) {
            spec.positional = valueKindOf(positionalName(o));
            continue;
        }
        CompletionOption option;
        for (const std::string& s : o->get_snames())
            option.names.push_back("-" + s);
        for (const std::string& l : o->get_lnames())
            option.names.push_back("--" + l);
        if (o->get_type_size_max() > 0 && o->get_expected_max() > 0)
            option.value = valueKindOf(o->get_type_name());
        spec.options.push_back(option);
    }
    for (const CLI::App* sub : app.get_subcommands({}))
        if (!sub->get_group().empty())
            spec.commands.push_back(completionSpec(*sub));
    return spec;
}

CLI::Validator oneOf(std::vector<std::string> choices) {
    return CLI::Validator(
        [choices](std::string& text) -> std::string {
            std::string list;
            for (const std::string& c : choices) {
                if (c == text)
                    return {};
                list += (list.empty() ? "" : ", ") + c;
            }
            return "needs one of " + list + ", got '" + text + "'";
        },
        "", "one of");
}

std::string wrap(const std::string& text, int indent, int width) {
    std::string out;
    std::istringstream lines(text);
    std::string line;
    const std::string pad(static_cast<size_t>(indent), ' ');
    while (std::getline(lines, line)) {
        // A line's own leading spaces (a list item) continue on its wrapped lines.
        const size_t own = line.find_first_not_of(' ');
        if (own == std::string::npos) {
            out += "\n";
            continue;
        }
        const std::string hang = pad + std::string(own, ' ');
        std::istringstream words(line.substr(own));
        std::string word, current = hang;
        bool empty = true;
        while (words >> word) {
            if (!empty && current.size() + 1 + word.size() > static_cast<size_t>(width)) {
                out += current + "\n";
                current = hang + (own > 0 ? "  " : "");
                empty = true;
            }
            current += (empty ? "" : " ") + word;
            empty = false;
        }
        out += current + "\n";
    }
    return out;
}

} // namespace moe::cmdline
