#include "cli.h"

#include "cli_commands.h"
#include "cli_format.h"

#include <algorithm>
#include <charconv>
#include <ostream>

namespace moe::cli {

CLI::App* CommandTable::add(CLI::App& parent, const std::string& name,
                            const std::string& description, Runner run) {
    CLI::App* command = parent.add_subcommand(name, description);
    // Left-over arguments are named by cmdline::leftoverProblem, in this project's words.
    command->allow_extras();
    command->footer(""); // the program's footer is the program's
    runners_.emplace_back(command, std::move(run));
    return command;
}

CLI::App* CommandTable::addGroup(CLI::App& parent, const std::string& name,
                                 const std::string& description) {
    CLI::App* group = parent.add_subcommand(name, description);
    group->allow_extras();
    group->footer("");
    return group;
}

const Runner* CommandTable::runnerOf(const CLI::App* command) const {
    for (const auto& [app, runner] : runners_)
        if (app == command)
            return &runner;
    return nullptr;
}

CLI::Option* addScenarioArgument(CLI::App* command, std::string& file) {
    return command->add_option(
        "FILE", file,
        "scenario file ('-' reads standard input); the built-in default when "
        "omitted");
}

CLI::Option* addSetOption(CLI::App* command, std::vector<std::string>& overrides,
                          const std::string& description, const std::string& name) {
    return command
        ->add_option(name, overrides,
                     description.empty() ? "what-if override with the file's own validation, "
                                           "e.g. --set layout.ep=16"
                                         : description)
        ->type_name("key=value")
        ->allow_extra_args(false);
}

CLI::Option* addJsonFlag(CLI::App* command, bool& json, const std::string& what) {
    return command->add_flag("--json", json,
                             what + " as JSON; problems as one JSON document on standard error");
}

CLI::Validator wholeNumber(int64_t min, int64_t max) {
    std::string range = max == std::numeric_limits<int64_t>::max()
                            ? (min == 0 ? ">= 0" : "of at least " + std::to_string(min))
                            : "from " + std::to_string(min) + " to " + std::to_string(max);
    return CLI::Validator(
        [min, max, range](std::string& text) -> std::string {
            int64_t value = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
                return "needs a whole number " + range + ", got '" + text + "'";
            return {};
        },
        "", "whole number");
}

namespace {

constexpr const char* kDescription =
    "plan Mixture-of-Experts training layouts from the command line";
constexpr const char* kFooter =
    "Run 'moe-plan <command> --help' for a command's options. FILE '-' reads standard input; "
    "an output '-' writes to standard output.\n"
    "Exit status: 0 success, 1 bad input (scenario errors), 2 usage error, 130 interrupted.";

struct ProgramOptions {
    bool help_all = false;
    std::string completion;
    std::vector<std::string> help_topic;
};

/// The help of every command after the program's: what the manual page is made of.
std::string allHelp(const CLI::App& app) {
    std::string text = cmdline::helpText(app);
    for (const CLI::App* command : cmdline::leafCommands(app))
        // A heading line ("moe-plan sweep:") that help2man turns into a subsection per command.
        text += "\n" + cmdline::commandPath(*command) + ":\n" + cmdline::helpText(*command);
    return text;
}

const CLI::App* findCommand(const CLI::App& app, const std::vector<std::string>& path) {
    const CLI::App* at = &app;
    for (const std::string& name : path) {
        const CLI::App* next = nullptr;
        for (const CLI::App* sub : at->get_subcommands({}))
            if (sub->get_name() == name && !sub->get_group().empty())
                next = sub;
        if (next == nullptr)
            return nullptr;
        at = next;
    }
    return at;
}

void buildProgram(CLI::App& app, CommandTable& table, ProgramOptions& options) {
    app.footer(kFooter);
    app.set_version_flag("--version", std::string("moe-plan ") + cmdline::version(),
                         "print the version and exit");
    app.set_help_flag("-h,--help", "print this help and exit");
    app.add_flag("--help-all", options.help_all,
                 "print the help of every command (the manual page's text) and exit");
    app.add_option("--completion", options.completion,
                   "print the shell completion script for bash or zsh and exit")
        ->type_name("bash|zsh")
        ->check(cmdline::oneOf({"bash", "zsh"}));
    addScenarioCommands(app, table);
    addSearchCommand(app, table);
    addSweepCommand(app, table);
    addSchemaCommand(app, table);
    addCalibrateCommand(app, table);
    addImportExportCommands(app, table);
    // Runs before parsing (run() below): CLI11 would take a topic that names a command as that
    // command. Defined here for the help, the manual page and the completion.
    CLI::App* help =
        table.add(app, "help", "Prints the help of a command.", [](CommandIo&) { return kExitOk; });
    help->add_option("COMMAND", options.help_topic, "the command, e.g. 'import megatron'");
}

bool wantsJson(const std::vector<std::string>& args) {
    return std::find(args.begin(), args.end(), "--json") != args.end();
}

int usageError(const CLI::App& where, const std::string& problem, bool json, std::ostream& out,
               std::ostream& err) {
    std::string command = cmdline::commandPath(where);
    command = command.size() > 9 ? command.substr(9) : std::string(); // drop "moe-plan "
    CommandIo io(out, err, command, json);
    io.fail(kExitUsage, problem);
    if (!json)
        err << cmdline::usageHint(where);
    return io.finish(kExitUsage);
}

} // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    CLI::App app(kDescription, "moe-plan");
    CommandTable table;
    ProgramOptions options;
    buildProgram(app, table, options);
    const bool json = wantsJson(args);
    if (args.empty()) {
        err << cmdline::helpText(app);
        return kExitUsage;
    }
    if (args[0] == "help" && (args.size() == 1 || args[1].empty() || args[1][0] != '-')) {
        const std::vector<std::string> topic(args.begin() + 1, args.end());
        const CLI::App* c = findCommand(app, topic);
        if (c == nullptr) {
            std::string name;
            for (const std::string& w : topic)
                name += (name.empty() ? "" : " ") + w;
            return usageError(app, "unknown command '" + name + "'", json, out, err);
        }
        out << cmdline::helpText(*c);
        return kExitOk;
    }
    if (args[0].empty() || args[0][0] != '-') {
        if (findCommand(app, {args[0]}) == nullptr)
            return usageError(app, "unknown command '" + args[0] + "'", json, out, err);
    }
    std::vector<const char*> argv = {"moe-plan"};
    for (const std::string& a : args)
        argv.push_back(a.c_str());
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::CallForHelp&) {
        out << cmdline::helpText(cmdline::selectedCommand(app));
        return kExitOk;
    } catch (const CLI::CallForVersion& e) {
        out << e.what() << "\n";
        return kExitOk;
    } catch (const CLI::ParseError& e) {
        // An unknown option's value ends up as a surplus positional: name the option, the cause.
        const CLI::App& at = cmdline::selectedCommand(app);
        const std::string unknown = cmdline::leftoverProblem(at);
        const bool name_option = unknown.rfind("unknown option", 0) == 0;
        return usageError(at, name_option ? unknown : cmdline::describeParseError(e), json, out,
                          err);
    }
    const CLI::App& command = cmdline::selectedCommand(app);
    if (&command != &app && table.runnerOf(&command) == nullptr && !command.remaining().empty()) {
        // A group (import, export): its commands are formats.
        std::string known;
        for (const CLI::App* sub : command.get_subcommands({}))
            known += (known.empty() ? "" : ", ") + sub->get_name();
        return usageError(
            command, "unknown format '" + command.remaining().front() + "' (known: " + known + ")",
            json, out, err);
    }
    for (const CLI::App* at = &command; at != nullptr; at = at->get_parent())
        if (const std::string problem = cmdline::leftoverProblem(*at); !problem.empty())
            return usageError(command, problem, json, out, err);
    if (options.help_all) {
        out << allHelp(app);
        return kExitOk;
    }
    if (!options.completion.empty()) {
        const cmdline::CompletionSpec spec = cmdline::completionSpec(app);
        out << (options.completion == "bash" ? cmdline::bashCompletion(spec)
                                             : cmdline::zshCompletion(spec));
        return kExitOk;
    }
    const Runner* runner = table.runnerOf(&command);
    if (runner == nullptr)
        return usageError(command, &command == &app ? "which command?" : "which format?", json, out,
                          err);
    std::string name = cmdline::commandPath(command).substr(9);
    const CLI::Option* json_flag = command.get_option_no_throw("--json");
    CommandIo io(out, err, name, json_flag != nullptr && json_flag->count() > 0);
    return io.finish((*runner)(io));
}

} // namespace moe::cli
