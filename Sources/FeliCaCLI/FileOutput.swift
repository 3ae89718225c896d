import FeliCa

#if canImport(Glibc)
import Glibc
#endif

/// Writing output files without ever leaving half a file.
public enum FileOutput {
    /// Writes `text` to a temporary file beside `path`, syncs it, then renames it over
    /// `path`: an interruption leaves the old file or the complete new one.
    public static func writeAtomically(_ text: String, to path: String) throws {
        let tmp = path + ".tmp-\(getpid())"
        guard let f = fopen(tmp, "wb") else {
            throw CLIError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, f) }
        let flushed = fflush(f) == 0 && fsync(fileno(f)) == 0
        fclose(f)
        guard written == bytes.count, flushed else {
            unlink(tmp)
            throw CLIError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        guard rename(tmp, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(tmp)
            throw CLIError("cannot replace \(path): \(reason)")
        }
    }
}
