import FeliCa
import FeliCaCards
import FeliCaFiles
import FeliCaTrace

#if canImport(Glibc)
import Glibc
#endif

/// The key `--redact` derives pseudonyms with: `FELICA_REDACT_KEY` (32 hex digits) when
/// set, else the file `$XDG_CONFIG_HOME/felica/redact-key` (`~/.config/felica/redact-key`),
/// made on first use from 16 random bytes, 0600. One key gives one pseudonym per card, so
/// the dumps and traces of one person line up; without it nobody can tell which card a
/// pseudonym stands for.
enum RedactionKey {
    static let environmentKey = "FELICA_REDACT_KEY"

    /// The key file's path, nil without `XDG_CONFIG_HOME` or `HOME`.
    static func path(environment: [String: String]) -> String? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/felica/redact-key" }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/felica/redact-key"
    }

    /// Where the card profiles keep card and member numbers, for the redactor.
    static let numberFields = CardNumberField.all.map {
        Redactor.NumberField(system: $0.system, service: $0.service, bytes: $0.bytes, name: $0.name)
    }

    /// A redactor with the key, the file made when missing.
    static func redactor(environment: [String: String] = processEnvironment()) throws -> Redactor {
        if let hex = environment[environmentKey], !hex.isEmpty {
            guard let key = Hex.decode(hex), key.count == 16 else {
                throw CLIError("\(environmentKey) must be 32 hex digits (16 bytes), not '\(hex)'")
            }
            return Redactor(key: key, numberFields: numberFields)
        }
        guard let path = path(environment: environment) else {
            throw CLIError("no place for the redaction key: set HOME, XDG_CONFIG_HOME or \(environmentKey)")
        }
        return Redactor(key: try load(path), numberFields: numberFields)
    }

    /// Reads the key at `path`, or makes it (16 bytes from the kernel's random source).
    static func load(_ path: String) throws -> [UInt8] {
        switch SystemCalls.readText(path) {
        case .success(let text):
            let trimmed = text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
            guard let key = Hex.decode(String(trimmed)), key.count == 16 else {
                throw CLIError("the redaction key \(path) is not 32 hex digits: remove it to make a new one (earlier pseudonyms then change)")
            }
            return key
        case .failure:
            break
        }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex,
           let failed = SystemCalls.makePrivateDirectories(String(path[..<slash])) {
            throw CLIError("cannot create the directory \(failed.path) for the redaction key: \(String(cString: strerror(failed.errno)))")
        }
        let key = random(16)
        let fd = SystemCalls.openPrivate(path, truncate: false, exclusive: true)
        if fd < 0 {
            // Made by a concurrent run meanwhile: use that one.
            if errno == EEXIST { return try load(path) }
            throw CLIError("cannot create the redaction key \(path): \(String(cString: strerror(errno)))")
        }
        let error = FileOutput.writeAll(fd, Array((Hex.encode(key) + "\n").utf8))
        let closed = close(fd) == 0
        guard error == 0, closed else {
            unlink(path)
            throw CLIError("cannot write the redaction key \(path)")
        }
        return key
    }

    /// This process's environment (`environ`) as a dictionary; of a name given twice, the first.
    static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "="), result[String(text[..<equals])] == nil {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// `count` bytes from the system's random source (`SystemRandomNumberGenerator`, the
    /// kernel's `getrandom`).
    static func random(_ count: Int) -> [UInt8] {
        var g = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
    }
}
