import FeliCa
import FeliCaDevices

#if canImport(Glibc)
import Glibc
#endif

/// The files one command reads and writes, checked before it runs so that an output never
/// lands on an input, nor on another output: `trace export --pcap t.jsonl t.jsonl` and
/// `dump --output f --trace f` are refused before anything is written.
///
/// Two names are the same file when they are the same inode (a symlink or a hard link to
/// it, `./t` for `t`), or, for an output that does not exist yet, the same place once the
/// directories leading to it are resolved.
struct FileRoles {
    /// A file a command names, and what it does with it.
    struct Use {
        /// What it is, as the command line gave it: `--pcap`, `the trace to export (<file>)`.
        var what: String
        var path: String
        var writes: Bool
    }

    private(set) var uses: [Use] = []

    /// A file the command reads; nil is no file.
    mutating func reads(_ path: String?, as what: String) {
        if let path, !path.isEmpty { uses.append(Use(what: what, path: path, writes: false)) }
    }

    /// A file the command writes (or replaces); nil is no file.
    mutating func writes(_ path: String?, as what: String) {
        if let path, !path.isEmpty { uses.append(Use(what: what, path: path, writes: true)) }
    }

    /// The file a device string reads: a card image or a trace; nil for readers and
    /// built-in cards.
    mutating func reads(device: DeviceSpec?) {
        guard let device else { return }
        switch device.kind {
        case .virtual(.image(let path), _): reads(path, as: "the card image --device serves")
        case .replay(let path, _): reads(path, as: "the trace --device replays")
        default: break
        }
    }

    /// The device (`--device`, else `FELICA_DEVICE`) and `--trace`: what every command
    /// that talks to a card reads and writes.
    mutating func add(device: DeviceSpec?, trace: String?) {
        reads(device: device ?? (try? Device.fromEnvironment()) ?? nil)
        writes(trace, as: "--trace")
    }

    /// These uses and more.
    func adding(_ more: (inout FileRoles) -> Void) -> FileRoles {
        var copy = self
        more(&copy)
        return copy
    }

    /// Refuses a command line where a file written is also read or written under another
    /// name.
    func check() throws(UsageError) {
        let identities = uses.map { Self.identity(of: $0.path) }
        for j in uses.indices {
            for i in uses.indices where i < j && (uses[i].writes || uses[j].writes) && identities[i] != nil && identities[i] == identities[j] {
                let (a, b) = (uses[i], uses[j])
                let same = a.path == b.path ? "" : " (the same file)"
                if a.writes && b.writes {
                    throw UsageError("\(a.what) \(a.path) and \(b.what) \(b.path) are the same file: give each its own")
                }
                let (input, output) = a.writes ? (b, a) : (a, b)
                throw UsageError("\(output.what) \(output.path) would overwrite \(input.what), \(input.path)\(same): an output never replaces an input; write it to another file")
            }
        }
    }

    /// What identifies a file: its device and inode when it exists, else its resolved place.
    /// Devices and pipes (`/dev/null`, `/dev/stdout`) have none: writing to one replaces nothing.
    enum Identity: Hashable {
        case inode(UInt64, UInt64)
        case place(String)
    }

    static func identity(of path: String) -> Identity? {
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            return .inode(UInt64(st.st_dev), UInt64(st.st_ino))
        }
        // Not there yet: the resolved directory, and the name in it.
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(directory, nil) else { return .place(path) }
        defer { free(resolved) }
        return .place(String(cString: resolved) + "/" + name)
    }
}
