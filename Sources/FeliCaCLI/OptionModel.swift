import FeliCa
import Synchronization

/// What an option's value may be: the parser checks choices, "did you mean" draws on
/// the names, and completion scripts and the man page describe it.
///
/// A struct of a plain form and a name list rather than an enum with payloads: a global
/// option table holding multi-payload enums keeps its arrays behind tagged pointers,
/// which LeakSanitizer (in the fuzz builds) cannot follow and reports as leaks.
public struct ValueKind: Sendable, Equatable {
    /// The kinds of value.
    public enum Form: Sendable, Equatable {
        /// Free text (a number, a code, a list).
        case text
        /// A path to a file.
        case file
        /// A path to a directory.
        case directory
        /// Exactly one of ``ValueKind/names``.
        case choice
        /// One of ``ValueKind/names``, or a path to a file.
        case nameOrFile
        /// Free text; completion offers ``ValueKind/names``.
        case suggested
    }

    public var form: Form
    /// The allowed, built-in or suggested words; empty for text and paths.
    public var names: [String]

    public static let text = ValueKind(form: .text, names: [])
    public static let file = ValueKind(form: .file, names: [])
    public static let directory = ValueKind(form: .directory, names: [])
    /// Exactly one of `names`.
    public static func choice(_ names: [String]) -> ValueKind { ValueKind(form: .choice, names: names) }
    /// One of these built-in names, or a path to a file.
    public static func nameOrFile(_ names: [String]) -> ValueKind { ValueKind(form: .nameOrFile, names: names) }
    /// Free text; completion offers these common values.
    public static func suggested(_ names: [String]) -> ValueKind { ValueKind(form: .suggested, names: names) }
}

/// An option a command accepts: its names, value, help and allowed values. Declared once
/// per command, it drives parsing, help, usage errors, suggestions, completion scripts
/// and the man page.
public struct OptionSpec: Sendable {
    public var long: String
    public var short: Character?
    /// Placeholder for the value (`<hex>`); nil for a flag.
    public var valueName: String?
    public var help: String
    /// May be given several times (values accumulate).
    public var repeatable: Bool
    public var kind: ValueKind

    public init(_ long: String, short: Character? = nil, value: String? = nil, help: String,
                repeatable: Bool = false, kind: ValueKind = .text) {
        self.long = long
        self.short = short
        self.valueName = value
        self.help = help
        self.repeatable = repeatable
        self.kind = kind
    }

    public static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long, short: short, help: help)
    }

    var isFlag: Bool { valueName == nil }

    /// `-d, --device <device>`, as help lists it.
    var label: String {
        let names = (short.map { "-\($0), " } ?? "") + "--" + long
        return valueName.map { "\(names) <\($0)>" } ?? names
    }

    /// `--device <device>`, as a usage line shows it.
    var usage: String { valueName.map { "--\(long) <\($0)>" } ?? "--\(long)" }
}

/// A value option with the conversion that turns its text into a typed value; a command
/// declares it once and reads it with `ParsedArguments.value(_:)` before it runs.
public struct Option<Value: Sendable>: Sendable {
    public let spec: OptionSpec
    let convert: @Sendable (String) throws(UsageError) -> Value

    public init(_ spec: OptionSpec, _ convert: @escaping @Sendable (String) throws(UsageError) -> Value) {
        precondition(!spec.isFlag, "an Option takes a value; use OptionSpec.flag for flags")
        self.spec = spec
        self.convert = convert
    }
}

extension Option where Value == String {
    /// An option whose value is used as given.
    public init(_ spec: OptionSpec) { self.init(spec) { $0 } }
}

extension Option where Value == Int {
    /// A whole number in `range`.
    public static func int(_ spec: OptionSpec, in range: ClosedRange<Int>) -> Option<Int> {
        Option(spec) { s throws(UsageError) in
            guard let v = Int(s), range.contains(v) else {
                throw UsageError("option '--\(spec.long)': \"\(s)\" is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return v
        }
    }
}

extension Option where Value == Duration {
    /// A number of seconds (fractions allowed) in `range`.
    public static func seconds(_ spec: OptionSpec, in range: ClosedRange<Double>) -> Option<Duration> {
        Option(spec) { s throws(UsageError) in
            guard let v = Double(s), range.contains(v) else {
                throw UsageError("option '--\(spec.long)': \"\(s)\" is not a number of seconds from \(plain(range.lowerBound)) to \(plain(range.upperBound))")
            }
            return .milliseconds(Int64((v * 1000).rounded()))
        }
    }

    /// `60` rather than `60.0`.
    private static func plain(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
}

extension Option where Value == SystemCode {
    /// Four hex digits naming a system.
    public static func systemCode(_ spec: OptionSpec) -> Option<SystemCode> {
        Option(spec) { s throws(UsageError) in
            guard let c = SystemCode(hex: s) else {
                throw UsageError("option '--\(spec.long)': \"\(s)\" \(hexProblem(s, "system")) (4 hex digits, e.g. 0003 or fe00)")
            }
            return c
        }
    }
}

/// What is wrong with `s` as a 4-hex-digit code of `kind`: too long or too short when its
/// digits are hex, else not a code at all.
func hexProblem(_ s: String, _ kind: String) -> String {
    let hex = !s.isEmpty && s.allSatisfy { $0.isHexDigit }
    if hex && s.count > 4 { return "is too long for a \(kind) code" }
    if hex && s.count < 4 { return "is too short for a \(kind) code" }
    return "is not a \(kind) code"
}

extension Option where Value == ServiceCode {
    /// Four hex digits naming a service.
    public static func serviceCode(_ spec: OptionSpec) -> Option<ServiceCode> {
        Option(spec) { s throws(UsageError) in
            guard let c = ServiceCode(hex: s) else {
                throw UsageError("option '--\(spec.long)': \"\(s)\" \(hexProblem(s, "service")) (4 hex digits, e.g. 090f)")
            }
            return c
        }
    }
}

/// A positional argument.
public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var optional: Bool
    /// May be given several times (the last argument only).
    public var repeatable: Bool
    public var kind: ValueKind
    public init(_ name: String, help: String, optional: Bool = false, repeatable: Bool = false, kind: ValueKind = .text) {
        self.name = name
        self.help = help
        self.optional = optional
        self.repeatable = repeatable
        self.kind = kind
    }

    /// `<file>`, `[<file>]`, `[<word> ...]`.
    var usage: String {
        let core = "<\(name)>" + (repeatable ? " ..." : "")
        return optional ? "[\(core)]" : core
    }
}

/// What a command is called, says about itself and accepts.
public struct CommandConfiguration: Sendable {
    public var name: String
    public var abstract: String
    public var discussion: String?
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    /// Required options (shown without brackets in the usage line).
    public var required: Set<String>
    public var subcommands: [any CLICommand.Type]

    public init(name: String, abstract: String, discussion: String? = nil, arguments: [ArgumentSpec] = [],
                options: [OptionSpec] = [], required: Set<String> = [], subcommands: [any CLICommand.Type] = []) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.required = required
        self.subcommands = subcommands
    }
}

/// A usage error: wrong options or arguments (exit 64).
public struct UsageError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The options and arguments given to one command, as text; a command turns them into
/// typed values once, in its initialiser.
///
/// A command reads only what it declares: the parser fills in ``declared`` from the
/// command's resolved options (its own and the global ones), and reading an option outside
/// them is a programming error — it stops the program, or is written to ``undeclaredReads``
/// when a test has attached a log — never a silent nil.
public struct ParsedArguments: Sendable {
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []
    /// The long names the command may read; nil when no command was resolved (a hand-made value).
    public var declared: Set<String>?
    /// Where reads of undeclared options go instead of stopping the program (tests).
    public var undeclaredReads: UndeclaredReads?

    public init() {}

    /// Whether the command declares `spec`: an option shared by several commands
    /// (`--wait`) is read only where it is declared.
    public func declares(_ spec: OptionSpec) -> Bool { declared?.contains(spec.long) ?? true }

    /// Checks that the command declares `spec` before its value is read.
    private func reading(_ spec: OptionSpec) -> Bool {
        guard !declares(spec) else { return true }
        guard let undeclaredReads else {
            preconditionFailure("option '--\(spec.long)' is read by a command that does not declare it")
        }
        undeclaredReads.record(spec.long)
        return false
    }

    /// Whether the flag was given.
    public func flag(_ spec: OptionSpec) -> Bool { reading(spec) && flags.contains(spec.long) }

    /// The option's value, converted; nil when it was not given.
    public func value<V>(_ option: Option<V>) throws(UsageError) -> V? {
        guard reading(option.spec), let s = values[option.spec.long]?.last else { return nil }
        return try option.convert(s)
    }

    /// Every value of a repeatable option, converted, in command-line order.
    public func values<V>(_ option: Option<V>) throws(UsageError) -> [V] {
        guard reading(option.spec) else { return [] }
        var out: [V] = []
        for s in values[option.spec.long] ?? [] { out.append(try option.convert(s)) }
        return out
    }

    /// A required option's value (the parser has already refused a command line without it).
    public func required<V>(_ option: Option<V>) throws(UsageError) -> V {
        guard let v = try value(option) else { throw UsageError("missing required option '--\(option.spec.long)'") }
        return v
    }
}

/// Options a command read without declaring them, collected by a test.
public final class UndeclaredReads: Sendable {
    private let names = Mutex<[String]>([])

    public init() {}

    func record(_ name: String) { names.withLock { $0.append(name) } }

    /// The long names read, in order.
    public var all: [String] { names.withLock { $0 } }
}
