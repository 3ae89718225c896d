import FeliCaFiles

#if canImport(Glibc)
import Glibc
#endif

/// Read-only access to the files `felica doctor` looks at, all under one root directory.
///
/// The root is `/` on a real system; tests point it at a fake tree (`--root DIR`) holding
/// `sys/`, `proc/`, `dev/`, `etc/`, `run/`, `usr/` and `var/`, so every verdict can be
/// produced without hardware. Paths given to the methods are absolute system paths
/// (`/proc/modules`); the root is prefixed here and nowhere else.
public struct HostFiles: Sendable {
    /// The prefix, without a trailing slash ("" for the real system).
    public let root: String

    public init(root: String = "/") {
        var r = root
        while r.hasSuffix("/") { r.removeLast() }
        self.root = r
    }

    /// `path` as seen on this machine.
    public func real(_ path: String) -> String { root + path }

    /// Whole text of a file, or nil when it cannot be read.
    public func read(_ path: String) -> String? {
        let fd = open(real(path), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return SystemCalls.readToEnd(fd).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A one-line sysfs attribute, trimmed.
    public func attribute(_ path: String) -> String? {
        read(path).map { $0.trimmingWhitespace() }
    }

    /// Names in a directory (without `.` and `..`), sorted; nil when it cannot be listed.
    public func list(_ path: String) -> [String]? {
        guard let dir = opendir(real(path)) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Whether listing `path` failed for lack of permission (as opposed to absence).
    public func listIsDenied(_ path: String) -> Bool {
        guard let dir = opendir(real(path)) else { return errno == EACCES || errno == EPERM }
        closedir(dir)
        return false
    }

    /// Target of a symbolic link, as stored (not resolved, not re-rooted).
    public func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink(real(path), &buffer, buffer.count - 1)
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Owner, group and permission bits of a file (following links).
    public func status(_ path: String) -> FileStatus? {
        var s = stat()
        guard stat(real(path), &s) == 0 else { return nil }
        return FileStatus(uid: s.st_uid, gid: s.st_gid, mode: UInt32(s.st_mode))
    }

    public func exists(_ path: String) -> Bool { access(real(path), F_OK) == 0 }

    /// Whether this process may open `path` for reading and writing, as the kernel decides
    /// (ACLs included: udev's `uaccess` grants the seat user access by ACL, which the mode
    /// bits do not show). Only meaningful on the real system; nil under another root.
    public func kernelAllowsReadWrite(_ path: String) -> Bool? {
        guard root.isEmpty else { return nil }
        return access(path, R_OK | W_OK) == 0
    }
}

/// What `stat` says about a file, as far as access goes.
public struct FileStatus: Sendable, Equatable {
    public var uid: UInt32
    public var gid: UInt32
    public var mode: UInt32

    /// `rw-rw-r--` style permission string.
    public var permissions: String {
        let letters: [Character] = ["r", "w", "x"]
        return String((0..<9).map { i in mode & (0o400 >> UInt32(i)) != 0 ? letters[i % 3] : "-" })
    }

    /// Whether `who` may open the file for reading and writing, by the classic owner /
    /// group / other rule (root may always).
    public func allowsReadWrite(by who: Identity) -> Bool {
        if who.uid == 0 { return true }
        let bits: UInt32
        if who.uid == uid {
            bits = (mode >> 6) & 7
        } else if who.gid == gid || who.groups.contains(gid) {
            bits = (mode >> 3) & 7
        } else {
            bits = mode & 7
        }
        return bits & 6 == 6
    }
}

/// The user doctor runs as, from `/proc/self/status` (so a fake tree can set it).
public struct Identity: Sendable, Equatable {
    public var uid: UInt32
    public var gid: UInt32
    public var groups: [UInt32]

    /// Parses the `Uid:`, `Gid:` and `Groups:` lines (effective ids are the second field).
    public init?(status: String) {
        var uid: UInt32?, gid: UInt32?, groups: [UInt32] = []
        for line in status.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let key = fields.first else { continue }
            let numbers = fields.dropFirst().compactMap { UInt32($0) }
            switch key {
            case "Uid:": uid = numbers.count > 1 ? numbers[1] : numbers.first
            case "Gid:": gid = numbers.count > 1 ? numbers[1] : numbers.first
            case "Groups:": groups = numbers
            default: break
            }
        }
        guard let uid, let gid else { return nil }
        self.init(uid: uid, gid: gid, groups: groups)
    }

    public init(uid: UInt32, gid: UInt32, groups: [UInt32]) {
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    /// The process's own ids, when `/proc/self/status` cannot be read.
    public static func current() -> Identity {
        let n = getgroups(0, nil)
        var list = [gid_t](repeating: 0, count: Int(max(n, 0)))
        let got = getgroups(n, &list)
        return Identity(uid: geteuid(), gid: getegid(), groups: Array(list.prefix(Int(max(got, 0)))))
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
