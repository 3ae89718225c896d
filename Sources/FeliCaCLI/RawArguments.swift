#if canImport(Glibc)
import Glibc
#endif

/// The process's arguments as the system gave them: bytes, checked to be UTF-8.
///
/// `CommandLine.arguments` decodes each argument with replacement, so a path holding a
/// byte that is not UTF-8 (`caf\xE9.json`, Latin-1) would reach the system changed: a file
/// written under another name, an input "not found", a database made in a new directory.
/// Every path in this program travels as a `String`, so such an argument is refused with
/// its bytes shown, never changed.
public enum RawArguments {
    /// The arguments after the program's name, or the error naming the first that is not
    /// UTF-8.
    public static func current() -> Result<[String], UsageError> {
        let argv = CommandLine.unsafeArgv
        var raw: [[UInt8]] = []
        for k in 1..<Int(CommandLine.argc) {
            guard let p = argv[k] else { continue }
            raw.append(Array(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))))
        }
        return decode(raw)
    }

    /// `raw` as strings, or the error naming the first argument that is not UTF-8.
    public static func decode(_ raw: [[UInt8]]) -> Result<[String], UsageError> {
        var out: [String] = []
        for (k, bytes) in raw.enumerated() {
            guard let s = utf8(bytes) else {
                return .failure(UsageError("argument \(k + 1) ('\(shown(bytes))') is not valid UTF-8, and would reach the system changed: rename the file to UTF-8 (convmv -f latin1 -t utf8 <file>) or give a path that is"))
            }
            out.append(s)
        }
        return .success(out)
    }

    /// An environment variable holding a path, checked the same way: nil when unset, an
    /// error when its value is not UTF-8.
    public static func environment(_ name: String) throws(CLIError) -> String? {
        guard let p = getenv(name) else { return nil }
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p)))
        guard let s = utf8(bytes) else {
            throw CLIError("the environment variable \(name) ('\(shown(bytes))') is not valid UTF-8, and would reach the system changed", exitCode: ExitCode.usage)
        }
        return s
    }

    /// `bytes` as a string when they are UTF-8 (and hold no NUL).
    static func utf8(_ bytes: [UInt8]) -> String? {
        let s = String(decoding: bytes, as: UTF8.self)
        return s.utf8.elementsEqual(bytes) ? s : nil
    }

    /// `bytes` for a message: UTF-8 as it is, every other byte as `\xNN`.
    public static func shown(_ bytes: [UInt8]) -> String {
        var out = ""
        var i = 0
        outer: while i < bytes.count {
            for n in [1, 2, 3, 4] where i + n <= bytes.count {
                if let s = utf8(Array(bytes[i..<(i + n)])) {
                    out += s
                    i += n
                    continue outer
                }
            }
            let hex = Array("0123456789ABCDEF")
            out += "\\x" + String(hex[Int(bytes[i] >> 4)]) + String(hex[Int(bytes[i] & 15)])
            i += 1
        }
        return out
    }
}
